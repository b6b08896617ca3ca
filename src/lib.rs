//! hookd: an out-of-process hook daemon for Claude Code and the Claude Agent SDK.

pub use hookd_core::{decision, event, grant, redact, rules, time};
pub use hookd_daemon as daemon;
pub use hookd_daemon::{client, config, outbound, policy, providers};
pub use hookd_forwarder as forwarder;
pub use hookd_protocol as protocol;
pub use hookd_protocol::{agent, hex, paths};

pub mod adapter;
pub mod approve;
pub mod cli;
pub mod doctor;
pub mod http;
pub mod install;
pub mod local;
pub mod otlp;
pub mod replay;
pub mod run_client;
pub mod run_record;
pub mod serve;
pub mod service;
pub mod statusline;
pub mod style;
pub mod suggest;
pub mod tail;
pub mod team_dashboard;
