//! End to end with the real agent CLIs (Claude Code, Codex, Gemini, from
//! `tests/e2e/` and `tests/agents/`, npm folders: hence this crate's name)
//! against mock model APIs, with hooks installed and judged by the real
//! daemon; `hookd approve` in a real tmux. One crate (issue #22): the tests
//! of the nine former files now share one binary, which runs two of them at
//! a time as each former binary did (libtest's default on this 2-core
//! machine), so the load on the CLIs is what it was.

#[path = "../support/mod.rs"]
mod support;

mod e2e_agents;
mod e2e_agents_hookd;
mod e2e_approve;
mod e2e_claude;
mod e2e_coverage;
mod e2e_duplicates;
mod e2e_facts;
mod e2e_harness;
mod e2e_http_hooks;
mod e2e_install;
mod e2e_judge;
mod e2e_narrator;
mod e2e_plugins;
mod e2e_race;
