//! What every side of the protocol shares, with or without the typed
//! frames: the version, the size cap, the error codes.

use std::fmt;

/// The protocol version this build speaks.
pub const VERSION: u32 = 1;

/// Default cap on one frame, in bytes (PostToolUse responses can exceed 1 MiB).
pub const DEFAULT_MAX_FRAME: usize = 8 * 1024 * 1024;

/// Stable error codes. New codes may be added in a minor revision; peers
/// must treat an unknown code like `internal`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "frames",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
pub enum ErrorCode {
    /// The line is not valid JSON (or not UTF-8).
    InvalidJson,
    /// Valid JSON, but not a valid frame (unknown `type`, missing field…).
    InvalidFrame,
    /// The frame exceeds the size cap.
    FrameTooLarge,
    /// The peer's protocol version is not supported.
    UnsupportedVersion,
    /// A valid frame that is not allowed at this point of the conversation.
    UnexpectedFrame,
    /// The peer runs as another user.
    PermissionDenied,
    /// The daemon is stopping.
    ShuttingDown,
    /// A well-formed request that cannot be carried out as asked (e.g. a
    /// verdict the event does not support).
    InvalidRequest,
    /// No such pending event.
    NotFound,
    /// The event was already decided; the message says by whom.
    AlreadyDecided,
    /// Something the request needs is missing on this machine (Node.js, the
    /// adapter's dependencies); the message says how to install it.
    Unavailable,
    /// A bug or an unforeseen failure in the daemon; also what a code this
    /// build does not know reads as (PROTOCOL.md §3).
    #[cfg_attr(feature = "frames", serde(other))]
    Internal,
}

impl ErrorCode {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidJson => "invalid_json",
            ErrorCode::InvalidFrame => "invalid_frame",
            ErrorCode::FrameTooLarge => "frame_too_large",
            ErrorCode::UnsupportedVersion => "unsupported_version",
            ErrorCode::UnexpectedFrame => "unexpected_frame",
            ErrorCode::PermissionDenied => "permission_denied",
            ErrorCode::ShuttingDown => "shutting_down",
            ErrorCode::Internal => "internal",
            ErrorCode::InvalidRequest => "invalid_request",
            ErrorCode::NotFound => "not_found",
            ErrorCode::AlreadyDecided => "already_decided",
            ErrorCode::Unavailable => "unavailable",
        }
    }
}

impl ErrorCode {
    /// The code spelled `text` on the wire; a code this build does not
    /// know reads as [`ErrorCode::Internal`] (PROTOCOL.md §3).
    pub fn from_wire(text: &str) -> ErrorCode {
        const ALL: [ErrorCode; 12] = [
            ErrorCode::InvalidJson,
            ErrorCode::InvalidFrame,
            ErrorCode::FrameTooLarge,
            ErrorCode::UnsupportedVersion,
            ErrorCode::UnexpectedFrame,
            ErrorCode::PermissionDenied,
            ErrorCode::ShuttingDown,
            ErrorCode::Internal,
            ErrorCode::InvalidRequest,
            ErrorCode::NotFound,
            ErrorCode::AlreadyDecided,
            ErrorCode::Unavailable,
        ];
        ALL.into_iter()
            .find(|code| code.as_str() == text)
            .unwrap_or(ErrorCode::Internal)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a line could not be read as a frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    /// `invalid_json` or `invalid_frame`.
    pub code: ErrorCode,
    /// What was wrong, with the position serde reported.
    pub message: String,
}
