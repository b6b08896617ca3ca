//! hookd's pure core: what an event is, how the rules judge it, what a
//! decision says, and what a person remembers as a grant.
//!
//! - [`event`]: one hook, its agent's input resolved once into typed fields;
//! - [`rules`]: the rules files, their layers and the judgement itself;
//! - [`decision`]: a judgement and its answer, as logged;
//! - [`grant`]: turning an answered `ask` into a rule;
//! - [`redact`]: secrets out of everything that is written down;
//! - [`time`]: timestamps as the log writes them.
//!
//! No tokio, no tracing, no sockets: Cargo.toml lists what this crate may
//! use, and a judgement is a pure function of the event and the rules.

pub use hookd_protocol as protocol;
pub use hookd_protocol::{agent, hex};

pub use hookd_protocol::decision;
pub mod event;
pub mod grant;
pub mod redact;
pub mod rules;
pub mod time;
