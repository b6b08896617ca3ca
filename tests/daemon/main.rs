//! The daemon through its socket: the real `hookd serve` (and, in
//! `inprocess`, `daemon::serve` in the test process) judging hooks, its
//! pending table, log, audit chain, grants, rules and config reloads, the
//! other agents' hooks, policy bundles and the forwarder in front of it. One
//! crate for the daemon's layer, so a change to it relinks one binary, not
//! a dozen (issue #22). Each test starts its own daemon on a temp socket, so
//! they run in parallel like the tests of one file did.

#[path = "../support/mod.rs"]
mod support;

mod agents_daemon;
mod audit;
mod config_reload;
mod coverage;
mod daemon;
mod facts_daemon;
mod forwarder;
mod grants;
mod inprocess;
mod judge_daemon;
mod log;
mod narrator_daemon;
mod pending;
mod policy;
mod policy_bundle;
mod rules_daemon;
mod signals_daemon;
