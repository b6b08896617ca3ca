//! Agent SDK runs end to end: the real SDK from npm (`adapter/`) driven by
//! the daemon's run supervisor against a mock model API. Its own crate
//! (issue #22): the SDK's runs are heavy node processes, and a change to
//! them relinks this binary alone.

#[path = "../support/mod.rs"]
mod support;

mod adapter;
