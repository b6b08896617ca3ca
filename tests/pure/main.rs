//! The pure tests: the library's data-in, data-out parts (the protocol's
//! vectors, the dialects' golden outputs, the rules across agents) without
//! a daemon process. Fast and CPU-bound: one crate, so a change to the core
//! relinks one binary for all of them (issue #22).

#[path = "../support/mod.rs"]
mod support;

mod agents_rules;
mod golden;
mod golden_agents;
mod protocol_vectors;
