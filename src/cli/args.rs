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

/// `--socket`, for every command that talks to the daemon.
#[derive(clap::Args)]
pub struct ClientArgs {
    /// Daemon socket [default: $HOOKD_SOCKET, then $XDG_RUNTIME_DIR/hookd/hookd.sock,
    /// then /tmp/hookd-$UID/hookd.sock].
    #[arg(long, value_name = "PATH", global = true)]
    pub socket: Option<PathBuf>,
}

impl ClientArgs {
    /// The socket: `--socket`, else the default.
    pub fn socket_path(&self) -> PathBuf {
        self.socket
            .clone()
            .unwrap_or_else(crate::paths::socket_path)
    }

    /// A connected, welcomed client of the daemon.
    pub fn connect(&self) -> anyhow::Result<crate::client::Client> {
        Ok(crate::client::Client::connect(
            &self.socket_path(),
            "hookd-cli",
        )?)
    }
}

/// An agent hookd judges (see [`crate::agent::Agent`]), as `--agent` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AgentName {
    /// Claude Code (and Agent SDK runs).
    ClaudeCode,
    /// OpenAI Codex CLI.
    Codex,
    /// Google Gemini CLI.
    Gemini,
    /// OpenCode.
    Opencode,
    /// The Pi coding agent.
    Pi,
    /// GitHub Copilot CLI.
    Copilot,
}

impl From<AgentName> for crate::agent::Agent {
    fn from(name: AgentName) -> crate::agent::Agent {
        match name {
            AgentName::ClaudeCode => crate::agent::Agent::ClaudeCode,
            AgentName::Codex => crate::agent::Agent::Codex,
            AgentName::Gemini => crate::agent::Agent::Gemini,
            AgentName::Opencode => crate::agent::Agent::OpenCode,
            AgentName::Pi => crate::agent::Agent::Pi,
            AgentName::Copilot => crate::agent::Agent::Copilot,
        }
    }
}

/// The rules the daemon would use: `--rules FILE`, else the default path if
/// it exists, else the embedded defaults.
pub fn rules_source(explicit: Option<PathBuf>) -> crate::policy::store::RulesSource {
    match explicit {
        Some(path) => crate::policy::store::RulesSource::File(path),
        None => match crate::paths::default_rules_path().filter(|p| p.exists()) {
            Some(path) => crate::policy::store::RulesSource::File(path),
            None => crate::policy::store::RulesSource::Defaults,
        },
    }
}
