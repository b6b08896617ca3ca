//! hookd: an out-of-process hook daemon for Claude Code and the Claude Agent SDK.

pub mod adapter;
pub mod agent;
pub mod approve;
pub mod cli;
pub mod client;
pub mod config;
pub mod daemon;
pub mod decision;
pub mod doctor;
pub mod event;
pub mod forwarder;
pub mod grant;
pub mod http;
pub mod install;
pub mod outbound;
pub mod paths;
pub mod protocol;
pub mod providers;
pub mod redact;
pub mod replay;
pub mod rules;
pub mod run_client;
pub mod service;
pub mod statusline;
pub mod tail;
pub mod time;
