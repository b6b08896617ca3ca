//! Everything hookd knows about Claude Code's hook JSON, and nothing else.
//!
//! - [`kind`]: the 33 events of Claude Code 2.1.330 and what each can do
//!   (its events table, [`EVENTS`]);
//! - [`input`]: the hook input (stdin), typed, never failing;
//! - [`output`]: a decision → the exact stdout / stderr / exit code;
//! - [`sdk`]: that output → what an Agent SDK callback returns (the
//!   adapter relays it as it is);
//! - [`probe`]: the synthetic inputs of `hookd doctor --probe` and their answer.
//!
//! Architecture invariant: no other module builds or reads Claude Code's
//! output JSON. The forwarder's fail-closed fallback calls [`output::fallback`]
//! instead of writing its own JSON.

#[cfg(feature = "frames")]
pub mod input;
pub mod kind;
pub mod output;
pub mod probe;
#[cfg(feature = "frames")]
pub mod sdk;

#[cfg(feature = "frames")]
pub use input::{input_summary, suggested_rules, HookInput, InputFields};
pub use kind::{FailClosed, HookEventKind, EVENTS};
pub use output::{fallback, render, HookOutput};
