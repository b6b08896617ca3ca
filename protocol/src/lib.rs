//! hookd's wire formats: the only crate that knows a frame's shape or an
//! agent's hook JSON.
//!
//! Protocol v1 is one JSON object per `\n`-terminated UTF-8 line; every
//! object has `type`. The normative text is `protocol/PROTOCOL.md`; golden
//! vectors in `protocol/vectors/` are parsed and round-tripped by the test
//! suite.
//!
//! Always built (std + serde_json, no derive: what the forwarder uses):
//! - [`forwarder`]: the blocking encode/decode of the forwarder's one frame;
//! - [`json`]: reading hook inputs serde_json refuses by default (lone
//!   surrogates, deep nesting);
//! - [`agent`]: each agent's dialect — its events, its tool names, the
//!   output it honours — and [`agent::Harness`];
//! - [`decision`]: verdicts, answers and decisions, as every frame and log
//!   line carries them;
//! - [`paths`]: where the socket and the files are, and when a directory is
//!   safe to hold the socket;
//! - [`wire`]: the version, the frame size cap and the error codes;
//! - [`hex`].
//!
//! With the `frames` feature (serde's derive):
//! - [`Request`], [`Reply`] and the pushed frames ([`frames`]);
//! - [`handshake`]: the `hello` / `welcome` opening of a long-lived
//!   connection, without IO (every client opens through it);
//! - [`log`]: the event log's lines ([`log::LogRecord`]), which every reader
//!   of the log uses, and [`chain`], their hash chain;
//! - [`adapter`]: the messages between the daemon and an agent-SDK adapter
//!   child (over the child's stdin/stdout);
//! - [`approval`]: pending items, short ids, grants (the human loop);
//! - [`status`]: the `status` reply.
//!
//! With `codec`: [`codec`], the async framing with a size cap (tokio-util).
//!
//! The docs link what the features add: built without `codec` (the
//! forwarder's build: `cargo doc -p hookd-protocol` alone) those links
//! cannot resolve, and are let be there. The workspace's docs, which CI
//! builds with `-D warnings`, have every feature and check every link.
#![cfg_attr(not(feature = "codec"), allow(rustdoc::broken_intra_doc_links))]

pub mod agent;
pub mod decision;
pub mod forwarder;
pub mod hex;
pub mod json;
pub mod paths;
pub mod wire;

pub use wire::{DecodeError, ErrorCode, DEFAULT_MAX_FRAME, VERSION};

#[cfg(feature = "frames")]
pub mod adapter;
#[cfg(feature = "frames")]
pub mod approval;
#[cfg(feature = "frames")]
pub mod chain;
#[cfg(feature = "codec")]
pub mod codec;
#[cfg(feature = "frames")]
pub mod coverage;
#[cfg(feature = "frames")]
pub mod facts;
#[cfg(feature = "frames")]
pub mod frames;
#[cfg(feature = "frames")]
pub mod handshake;
#[cfg(feature = "frames")]
pub mod json_write;
#[cfg(feature = "frames")]
pub mod log;
#[cfg(feature = "frames")]
pub mod narration;
#[cfg(feature = "frames")]
pub mod recording;
#[cfg(feature = "frames")]
pub mod status;

#[cfg(feature = "frames")]
pub use frames::*;
