//! hookd: an out-of-process hook daemon for Claude Code and the Claude Agent SDK.

pub mod rules;
