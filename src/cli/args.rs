//! Argument types and parsers that several commands share: clap rejects a
//! typo and completions know the values.

use std::path::PathBuf;

use clap::builder::TypedValueParser as _;

use crate::agent::claude::FailClosed;

/// The scope of `--fail-closed[=SCOPE]` (see [`FailClosed`]).
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum FailScope {
    /// PreToolUse and PermissionRequest (the SDK's canUseTool).
    Tools,
    /// Every guarded event: tools, prompts (UserPromptSubmit), compaction, …
    All,
}

/// The scope asked for, `Off` without the flag.
pub fn fail_closed(scope: Option<FailScope>) -> FailClosed {
    match scope {
        None => FailClosed::Off,
        Some(FailScope::Tools) => FailClosed::Tools,
        Some(FailScope::All) => FailClosed::All,
    }
}

/// `--scope user|project|local|managed`.
pub fn scope_parser() -> impl clap::builder::TypedValueParser<Value = crate::install::Scope> {
    use crate::install::Scope;
    let scopes = Scope::ALL.into_iter().chain([Scope::Managed]);
    clap::builder::PossibleValuesParser::new(scopes.map(|s| s.as_str()))
        .try_map(|text| text.parse::<crate::install::Scope>())
}

/// An event name of any agent hookd judges (Claude Code's, Codex's,
/// Gemini's): what `--events` and `tail --kind` take. Which agent has the
/// event is checked later, where the agent is known.
pub fn event_name_parser() -> clap::builder::PossibleValuesParser {
    let mut names: Vec<&'static str> = crate::agent::claude::HookEventKind::ALL
        .iter()
        .map(|kind| kind.as_str())
        .chain(crate::agent::codex::EVENTS.iter().map(|e| e.name))
        .chain(crate::agent::gemini::EVENTS.iter().map(|e| e.name))
        .collect();
    names.sort_unstable();
    names.dedup();
    clap::builder::PossibleValuesParser::new(names)
}

/// `--log FILE`, else the default event log path.
pub fn log_path(explicit: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    explicit
        .or_else(crate::paths::default_log_path)
        .ok_or_else(|| anyhow::anyhow!("no --log given and neither XDG_STATE_HOME nor HOME is set"))
}
