//! The test harnesses every test crate shares, each module once: a test
//! crate declares `#[path = "../support/mod.rs"] mod support;` in its
//! `main.rs` (`tests/faults.rs`: `#[path = "support/mod.rs"]`), and a test
//! module takes what it needs with `use crate::support::daemon;`. Each crate
//! uses a different subset; every module allows its own dead code.

pub mod agent_cli;
pub mod agents;
pub mod browser;
pub mod claude;
pub mod daemon;
pub mod http;
pub mod otlp;
pub mod plain;
pub mod plugin_agents;
pub mod postgres;
pub mod process;
pub mod prometheus;
pub mod receiver;
pub mod records;
pub mod tmux;
