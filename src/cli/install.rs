//! `hookd install` and `hookd uninstall`: hookd's hooks in an agent's
//! settings (`crate::install` splices the file; this is the command: which
//! agents and files, the options, what is printed).

// The arguments' doc comments are clap's help text, written for a terminal
// (`<project>/.claude/settings.json`, `[http] listen`), not rustdoc's
// Markdown.
#![allow(rustdoc::invalid_html_tags, rustdoc::broken_intra_doc_links)]

use std::io::Write as _;
use std::path::PathBuf;

use anyhow::Context;
use clap::Parser;

use super::args::{event_name_parser, fail_closed, scope_parser, FailScope};
use super::output::{print_json, Stdout};
use crate::agent::Agent;

/// Which settings file, shared by install and uninstall.
#[derive(Parser)]
pub struct SettingsTarget {
    /// The agent whose hooks file it is: claude-code, codex ($CODEX_HOME/hooks.json,
    /// default ~/.codex/hooks.json; project: <project>/.codex/hooks.json),
    /// gemini (~/.gemini/settings.json; project: <project>/.gemini/settings.json),
    /// copilot (~/.copilot/hooks/hookd.json; project: <project>/.github/hooks/hookd.json),
    /// or all (every one of them found on PATH).
    #[arg(long, value_enum, value_name = "AGENT", default_value = "claude-code")]
    pub agent: AgentChoice,
    /// user (~/.claude/settings.json, or $CLAUDE_CONFIG_DIR/settings.json),
    /// project (<project>/.claude/settings.json), local
    /// (<project>/.claude/settings.local.json) or managed (hookd's own file in
    /// Claude Code's managed settings, /etc/claude-code/managed-settings.d/50-hookd.json,
    /// or $HOOKD_MANAGED_SETTINGS_DIR; as root: every user) [default: user].
    #[arg(long, value_name = "SCOPE", conflicts_with = "settings", value_parser = scope_parser())]
    pub scope: Option<crate::install::Scope>,
    /// This settings file instead of a scope's.
    #[arg(long, value_name = "FILE")]
    pub settings: Option<PathBuf>,
    /// The project for --scope project|local [default: the current directory].
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Print the change as a unified diff; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print the outcome as JSON.
    #[arg(long)]
    pub json: bool,
}

impl SettingsTarget {
    /// The agents this command applies to, and those `all` skipped because
    /// their command is not on PATH.
    pub fn agents(&self) -> anyhow::Result<(Vec<Agent>, Vec<Agent>)> {
        match self.agent.one() {
            Some(agent) => Ok((vec![agent], Vec::new())),
            None => {
                if self.settings.is_some() {
                    anyhow::bail!("--agent all writes each agent's own file; --settings names one file: give one --agent");
                }
                Ok(Agent::ALL.into_iter().partition(|a| {
                    crate::install::find_on_path(crate::install::agent_program(*a)).is_some()
                }))
            }
        }
    }

    pub fn path(&self, agent: Agent) -> anyhow::Result<PathBuf> {
        if let Some(path) = &self.settings {
            return Ok(std::path::absolute(path)?);
        }
        let project = std::path::absolute(self.project.clone().unwrap_or_else(|| ".".into()))?;
        crate::install::agent_settings_path(
            agent,
            self.scope.unwrap_or(crate::install::Scope::User),
            &project,
        )
    }

    pub fn report(&self, outcome: &crate::install::Outcome) -> anyhow::Result<()> {
        if self.json {
            print_json(outcome)?;
            return Ok(());
        }
        if self.dry_run {
            write!(Stdout, "{}", outcome.diff)?;
        }
        writeln!(Stdout, "{}", outcome.summary())?;
        Ok(())
    }
}

/// `--agent` of install and uninstall: one agent, or every one found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AgentChoice {
    /// Claude Code (and Agent SDK runs): its settings.json.
    ClaudeCode,
    /// OpenAI Codex CLI: its hooks.json.
    Codex,
    /// Google Gemini CLI: its settings.json.
    Gemini,
    /// OpenCode: hookd's plugin, .opencode/plugin/hookd.js (user:
    /// ~/.config/opencode/plugin/hookd.js).
    Opencode,
    /// The Pi coding agent: hookd's extension, .pi/extensions/hookd.js (user:
    /// ~/.pi/agent/extensions/hookd.js, or $PI_CODING_AGENT_DIR/extensions).
    Pi,
    /// GitHub Copilot CLI: a hooks file of its own, hookd.json.
    Copilot,
    /// Every agent whose command (claude, codex, gemini, copilot, opencode, pi) is on PATH.
    All,
}

impl AgentChoice {
    pub fn one(self) -> Option<Agent> {
        match self {
            AgentChoice::ClaudeCode => Some(Agent::ClaudeCode),
            AgentChoice::Codex => Some(Agent::Codex),
            AgentChoice::Gemini => Some(Agent::Gemini),
            AgentChoice::Opencode => Some(Agent::OpenCode),
            AgentChoice::Pi => Some(Agent::Pi),
            AgentChoice::Copilot => Some(Agent::Copilot),
            AgentChoice::All => None,
        }
    }
}

#[derive(Parser)]
pub struct InstallArgs {
    #[command(flatten)]
    pub target: SettingsTarget,
    /// Events to register, comma-separated, in the agent's own names
    /// [default: Claude Code: every event but WorktreeCreate, whose hook
    /// must create the worktree itself; Codex: every event but Interrupt;
    /// Gemini: every event but BeforeModel, AfterModel and
    /// BeforeToolSelection].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = event_name_parser())]
    pub events: Option<Vec<String>>,
    /// When the daemon cannot answer, block instead of no opinion: tool
    /// calls (PreToolUse, PermissionRequest; bare --fail-closed), or every
    /// guarded event, prompts included (=all). Those events get
    /// --fail-closed[=all] and "onFailure":"block".
    #[arg(long, value_name = "SCOPE", num_args = 0..=1, require_equals = true, default_missing_value = "tools")]
    pub fail_closed: Option<FailScope>,
    /// Print the "hooks" block for a hand-managed settings file; touch no file.
    #[arg(long)]
    pub print: bool,
    /// The hook-forwarder to register [default: the one next to this hookd;
    /// --scope project: `hook-forwarder`, found on each user's PATH, as the
    /// shared file must work on every machine].
    #[arg(long, value_name = "PATH")]
    pub forwarder: Option<PathBuf>,
    /// Also register `hookd statusline` as Claude Code's statusLine (a
    /// statusLine already there is left alone).
    #[arg(long)]
    pub statusline: bool,
    /// How Claude Code reaches the daemon: `command` (hook-forwarder) or
    /// `http` ("type": "http" handlers posting to the daemon's [http]
    /// listener, with the bearer token from $HOOKD_HTTP_TOKEN; the
    /// forwarder for SessionStart, Setup, TeammateIdle and TaskCompleted).
    #[arg(long, value_name = "T", default_value = "command", value_parser = ["command", "http"])]
    pub transport: String,
    /// The daemon's HTTP listener, for --transport http.
    #[arg(long, value_name = "URL", default_value = "http://127.0.0.1:7878")]
    pub http_url: String,
}

pub fn install(args: InstallArgs) -> anyhow::Result<()> {
    let (agents, skipped) = args.target.agents()?;
    if agents.len() != 1 && args.events.is_some() {
        anyhow::bail!("--events names one agent's events: give one --agent with it");
    }
    let (plugins, agents): (Vec<Agent>, Vec<Agent>) = agents
        .into_iter()
        .partition(|a| crate::install::plugin::is_plugin_agent(*a));
    if !plugins.is_empty() {
        if args.events.is_some() {
            anyhow::bail!(
                "--events: the {} plugin relays its own events; leave --events out",
                plugins[0]
            );
        }
        install_plugins(&args, &plugins)?;
        if agents.is_empty() {
            return Ok(());
        }
    }
    let forwarder = crate::install::forwarder_for(args.target.scope, args.forwarder.as_deref())?;
    // The status line is Claude Code's setting; other agents have none. A
    // project's shared file names `hookd` on PATH, as it does the forwarder.
    let statusline = match (args.statusline, args.target.scope) {
        (false, _) => None,
        (true, Some(crate::install::Scope::Project)) => {
            Some(crate::install::shared_program("hookd")?)
        }
        (true, _) => Some(std::env::current_exe().context("finding this hookd for --statusline")?),
    };
    if statusline.is_some() && !agents.contains(&Agent::ClaudeCode) {
        anyhow::bail!("--statusline is Claude Code's setting: install it with --agent claude-code");
    }
    let transport = match args.transport.as_str() {
        "http" => {
            if !agents.contains(&Agent::ClaudeCode) {
                anyhow::bail!(
                    "--transport http is Claude Code's: install it with --agent claude-code"
                );
            }
            let base_url = args.http_url.trim_end_matches('/').to_string();
            if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
                anyhow::bail!(
                    "--http-url {base_url}: give the listener's URL, e.g. http://127.0.0.1:7878"
                );
            }
            crate::install::Transport::Http { base_url }
        }
        _ => crate::install::Transport::Command,
    };
    let mut options = Vec::new();
    for agent in &agents {
        options.push(crate::install::InstallOptions {
            agent: *agent,
            forwarder: forwarder.clone(),
            events: match &args.events {
                Some(list) => crate::install::parse_events_for(*agent, &list.join(","))
                    .map_err(anyhow::Error::msg)?,
                None => crate::install::default_events_for(*agent),
            },
            fail_closed: fail_closed(args.fail_closed),
            statusline: statusline.clone().filter(|_| *agent == Agent::ClaudeCode),
            transport: transport.clone(),
        });
    }
    if args.print {
        for options in &options {
            if options.agent != Agent::ClaudeCode || agents.len() > 1 {
                writeln!(Stdout, "// {}", options.agent)?;
            }
            write!(Stdout, "{}", crate::install::hooks_block(options))?;
        }
        return Ok(());
    }
    report_skipped(&skipped, args.target.json)?;
    if agents.is_empty() {
        anyhow::bail!(
            "--agent all: none of claude, codex, gemini, copilot, opencode, pi is on PATH; name one with --agent"
        );
    }
    let mut written = false;
    for options in &options {
        let path = args.target.path(options.agent)?;
        let outcome = match args.target.scope {
            Some(crate::install::Scope::Managed) => {
                crate::install::managed::install(options, args.target.dry_run)?
            }
            _ => crate::install::install(&path, options, args.target.dry_run)?,
        };
        args.target.report(&outcome)?;
        written |= outcome.written;
        if !args.target.json && !args.target.dry_run {
            if let Some(note) = crate::install::after_install_note(options.agent) {
                writeln!(Stdout, "{note}")?;
            }
            if let crate::install::Transport::Http { base_url } = &options.transport {
                writeln!(
                    Stdout,
                    "Claude Code sends the bearer token from ${env}: export it where Claude Code \
                     starts (shell profile: `export {env}=\"$(hookd http token)\"`), and turn \
                     the listener on ([http] listen in config.toml) at {base_url}.",
                    env = crate::install::HTTP_TOKEN_ENV
                )?;
            }
        }
    }
    if written && !args.target.json {
        writeln!(Stdout, "`hookd doctor` checks the whole setup.")?;
    }
    Ok(())
}

pub fn uninstall(target: &SettingsTarget) -> anyhow::Result<()> {
    let (agents, skipped) = target.agents()?;
    report_skipped(&skipped, target.json)?;
    for agent in agents {
        let path = target.path(agent)?;
        if crate::install::plugin::is_plugin_agent(agent) {
            let outcome = crate::install::plugin::uninstall(&path, agent, target.dry_run)?;
            report_plugin(target, &outcome)?;
            continue;
        }
        let outcome = match target.scope {
            Some(crate::install::Scope::Managed) => {
                crate::install::managed::uninstall(target.dry_run)?
            }
            _ => crate::install::uninstall(&path, target.dry_run)?,
        };
        target.report(&outcome)?;
    }
    Ok(())
}

/// Writes the plugin file of each plugin agent (OpenCode, Pi).
fn install_plugins(args: &InstallArgs, plugins: &[Agent]) -> anyhow::Result<()> {
    if args.statusline || args.transport != "command" {
        anyhow::bail!(
            "--statusline and --transport are Claude Code's: install them with --agent claude-code"
        );
    }
    let fail_closed = args.fail_closed.is_some();
    for agent in plugins {
        let deadline_ms = agent.events()[0].default_timeout_ms;
        let text = crate::install::plugin::plugin_text(*agent, fail_closed, deadline_ms);
        if args.print {
            write!(Stdout, "{text}")?;
            continue;
        }
        let path = args.target.path(*agent)?;
        let outcome = crate::install::plugin::install(&path, *agent, &text, args.target.dry_run)?;
        report_plugin(&args.target, &outcome)?;
        if !args.target.json && !args.target.dry_run {
            if let Some(note) = crate::install::after_install_note(*agent) {
                writeln!(Stdout, "{note}")?;
            }
        }
    }
    Ok(())
}

fn report_plugin(
    target: &SettingsTarget,
    outcome: &crate::install::plugin::PluginOutcome,
) -> anyhow::Result<()> {
    if target.json {
        return print_json(outcome);
    }
    if target.dry_run {
        write!(Stdout, "{}", outcome.diff)?;
    }
    writeln!(Stdout, "{}", outcome.summary())?;
    Ok(())
}

/// Says which agents `--agent all` left out (on stderr: stdout may be JSON).
fn report_skipped(skipped: &[Agent], json: bool) -> anyhow::Result<()> {
    for agent in skipped {
        let program = crate::install::agent_program(*agent);
        if json {
            eprintln!("skipped {agent}: `{program}` is not on PATH");
        } else {
            writeln!(Stdout, "skipped {agent}: `{program}` is not on PATH")?;
        }
    }
    Ok(())
}
