//! `hookd rules defaults|check|explain|test`, and how their reports read to
//! a person: the rules module returns data (`CheckReport`,
//! `FixtureReport`, `Explanation`, each also `Serialize` for `--json`),
//! and their text form lives here, with the rest of the CLI's output, so the
//! core never decides how a report looks.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;

use super::output::{print_json, Stdout};
use super::Outcome;
use crate::agent::{Agent, Harness};
use crate::daemon::RulesSource;
use crate::protocol::log::LogRecord;
use crate::rules::{check_as, LayerKind};
use clap::Subcommand;

use super::args::{rules_source, AgentName};

/// `hookd rules manifest DIR [--revision R] [--serial N] [--expires T]`:
/// the `manifest.toml` of the policy bundle in `DIR`, for its publisher to
/// sign.
pub fn manifest(
    dir: &Path,
    revision: Option<&str>,
    serial: Option<u64>,
    expires: Option<&str>,
) -> anyhow::Result<Outcome> {
    let text = crate::policy::bundle::manifest_for(dir, revision, serial, expires)
        .map_err(anyhow::Error::msg)?;
    write!(Stdout, "{text}")?;
    Ok(Outcome::Success)
}

/// `hookd rules check [FILE] [--project]`: every problem of a rules file
/// (the user's by default); exit 1 when it would be refused.
pub fn check(file: Option<PathBuf>, project: bool, json: bool) -> anyhow::Result<Outcome> {
    // Without FILE: the user file and every policy source's files.
    let policy_files = match (&file, project) {
        (None, false) => crate::local::files_for_cli()?,
        _ => Vec::new(),
    };
    if !policy_files.is_empty() {
        // Each file reported; `--json` prints the reports as an array.
        let reports = crate::policy::check_reports(
            crate::paths::default_rules_path().filter(|p| p.exists()),
            &policy_files,
        );
        if json {
            crate::cli::output::print_json(&reports)?;
        } else {
            for report in &reports {
                writeln!(Stdout, "{report}")?;
            }
        }
        return Ok(Outcome::problems_unless(reports.iter().all(|r| r.is_ok())));
    }
    let path = match file.or_else(crate::paths::default_rules_path) {
        Some(path) => path,
        None => anyhow::bail!("no FILE given and neither XDG_CONFIG_HOME nor HOME is set"),
    };
    let kind = if project {
        LayerKind::Project
    } else {
        LayerKind::User
    };
    // A file that cannot be read is an operational error (exit 2), not a
    // rules file with problems (exit 1).
    std::fs::File::open(&path).with_context(|| format!("reading {}", path.display()))?;
    let mut report = check_as(&path, kind);
    names_against_config(&path, &mut report)?;
    if json {
        print_json(&report)?;
    } else {
        writeln!(Stdout, "{report}")?;
    }
    Ok(Outcome::problems_unless(report.is_ok()))
}

/// Judge providers and `$signal.NAME` fields of the file at `path` against
/// the default config's `[providers]` and `[signals]` (the daemon's names).
fn names_against_config(path: &Path, report: &mut crate::rules::CheckReport) -> anyhow::Result<()> {
    let config = match crate::paths::default_config_path().filter(|p| p.exists()) {
        Some(p) => crate::config::Config::load(&p)?,
        None => crate::config::Config::default(),
    };
    let Ok(src) = std::fs::read_to_string(path) else {
        return Ok(());
    };
    let providers: Vec<&str> = config.providers.keys().map(String::as_str).collect();
    let signals: Vec<&str> = config.signals.keys().map(String::as_str).collect();
    let mut found = crate::rules::check_names(&src, path, &providers, &signals);
    if config.judge.provider.is_none() {
        found.extend(crate::rules::judges_without_provider(&src, path));
    }
    for d in found {
        match d.severity {
            crate::rules::Severity::Error => report.errors.push(d),
            _ => report.warnings.push(d),
        }
    }
    Ok(())
}

/// `hookd rules explain EVENT`: why a hook input (or a logged event line)
/// gets its verdict under `rules`. `agent` overrides the one a log line
/// names; Claude Code's otherwise. The daemon at `socket` is asked what it
/// enforces: the generation shown is its own when it enforces these very
/// rules (none otherwise), and a note on stderr says when it does not.
pub fn explain(
    event: &Path,
    agent: Option<Agent>,
    rules: RulesSource,
    socket: &Path,
    json: bool,
) -> anyhow::Result<Outcome> {
    let text =
        std::fs::read_to_string(event).with_context(|| format!("reading {}", event.display()))?;
    let mut input: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", event.display()))?;
    // An event line from the log carries the hook input inside it, and its
    // agent.
    let mut logged_agent = None;
    if let Ok(LogRecord::Event(logged)) = LogRecord::parse(text.trim_end().as_bytes()) {
        if logged.input.is_object() {
            logged_agent =
                serde_json::from_value::<Harness>(serde_json::Value::String(logged.harness))
                    .ok()
                    .map(Harness::agent);
            input = logged.input;
        }
    }
    let agent = agent.or(logged_agent).unwrap_or(Agent::ClaudeCode);
    let daemon = super::revision::DaemonRules::ask(socket);
    let user = crate::approve::explain::as_daemon_has_them(
        crate::local::composed_for_cli(&rules)?,
        &daemon,
    );
    let revision = user.revision().clone();
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let explanations =
        crate::approve::explain::explain_with(&input, agent, Arc::new(user), home.as_deref());
    let name = crate::agent::claude::InputFields::of(&input)
        .event_name
        .unwrap_or("");
    let event_name = crate::approve::explain::judged_event(agent, &input);
    if json {
        match explanations.as_slice() {
            [one] => print_json(one)?,
            all => print_json(&all)?,
        }
    } else {
        if agent != Agent::ClaudeCode {
            writeln!(Stdout, "agent: {agent} ({name} judged as {event_name})")?;
        }
        for (i, explanation) in explanations.iter().enumerate() {
            if explanations.len() > 1 {
                writeln!(Stdout, "input {} of {}:", i + 1, explanations.len())?;
            }
            write!(Stdout, "{explanation}")?;
        }
    }
    if let Some(note) = daemon.note(&revision) {
        eprintln!("{note}");
    }
    Ok(Outcome::Success)
}

/// `hookd rules test DIR`: the fixtures in `dir` under `rules`; exit 1 when
/// one fails.
pub fn test(dir: &Path, rules: RulesSource, json: bool) -> anyhow::Result<Outcome> {
    std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
    let rules = crate::local::composed_for_cli(&rules)?;
    let report = crate::rules::run_fixtures(dir, &rules);
    if json {
        print_json(&report)?;
    } else {
        writeln!(Stdout, "{report:#}")?;
    }
    Ok(Outcome::problems_unless(report.is_ok()))
}

// `[policy]` in the help is config.toml's table, not a link (clap prints
// the doc comments as they are).
#[allow(rustdoc::broken_intra_doc_links)]
#[derive(Subcommand)]
pub enum Command {
    /// Validate a rules file: exit 0, or non-zero listing every error as file:line:column.
    /// Without FILE, also every file of the config's [policy] sources.
    Check {
        /// The file [default: $XDG_CONFIG_HOME/hookd/rules.toml, and the policy sources' files].
        file: Option<PathBuf>,
        /// Check it as a project layer (.claude/hookd.toml).
        #[arg(long)]
        project: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show the verdict for a hook input, every rule that matched and why,
    /// and the rules that nearly matched.
    Explain {
        /// A hook input (JSON), or an event line from the log.
        event: PathBuf,
        /// The agent whose hook input it is [default: an event line's
        /// harness, else claude-code].
        #[arg(long, value_enum, value_name = "AGENT")]
        agent: Option<AgentName>,
        /// The rules [default: the daemon's rules file, else the defaults].
        #[arg(long, value_name = "FILE")]
        rules: Option<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Run rule fixtures (NAME.json = {event, home?, project_dir?, expect:
    /// {verdict, rule?}}).
    ///
    /// Each fixture is a file NAME.json: `event` is the hook input as the
    /// agent sends it; `home` (optional) is the home directory `~` stands
    /// for in the rules: without it `~` patterns (`Read(~/.ssh)`) never
    /// match, so fixtures do not depend on the machine; `project_dir`
    /// (optional) is the project root, CLAUDE_PROJECT_DIR [default: the
    /// event's cwd]; `expect.verdict` is allow, deny, ask, context or none;
    /// `expect.rule` (optional) a rule id among the deciding rules, or the
    /// list of them; `description` (optional) is shown when it fails.
    Test {
        /// The fixtures directory.
        dir: PathBuf,
        /// The rules [default: the daemon's rules file, else the defaults].
        #[arg(long, value_name = "FILE")]
        rules: Option<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Propose rules from what a person kept allowing or denying by hand
    /// (the event log's client decisions), as a diff of the rules file;
    /// nothing is written without --write.
    Suggest(super::suggest::Args),
    /// Print an embedded profile's rules [default: standard, the rules used
    /// when there is no rules file].
    Defaults {
        /// minimal, standard or strict.
        #[arg(long, value_name = "PROFILE", value_parser = super::profile::parse_profile)]
        profile: Option<crate::rules::Profile>,
    },
    /// Write an embedded profile as a commented rules file to edit.
    Init {
        /// minimal, standard or strict.
        #[arg(long, value_name = "PROFILE", value_parser = super::profile::parse_profile, default_value = "standard")]
        profile: crate::rules::Profile,
        /// The file [default: $XDG_CONFIG_HOME/hookd/rules.toml].
        file: Option<PathBuf>,
        /// Replace an existing file.
        #[arg(long)]
        force: bool,
    },
    /// Score a policy against corpora of hook inputs with known verdicts:
    /// per category caught and missed, the false positives, a score.
    Bench(super::profile::BenchArgs),
    /// Print the manifest.toml of a policy bundle: every file of DIR/rules/
    /// with its SHA-256, to sign with `minisign -Sm manifest.toml`.
    Manifest {
        /// The bundle's directory (holding rules/).
        dir: PathBuf,
        /// A name for this version, shown in `hookd status`.
        #[arg(long)]
        revision: Option<String>,
        /// The bundle's number: raise it with each release; daemons refuse
        /// a bundle with a lower one than they have active (no rollback).
        #[arg(long)]
        serial: Option<u64>,
        /// When the bundle stops being accepted (RFC 3339, e.g.
        /// 2027-01-31T00:00:00Z).
        #[arg(long)]
        expires: Option<String>,
    },
    /// Print the policy revision of a rules file: a hash of its rules, the
    /// same for the same rules on any machine, as `status` shows and every
    /// decision records.
    Revision {
        /// The file [default: the daemon's rules file, else the defaults].
        file: Option<PathBuf>,
        /// Read it as a project layer (.claude/hookd.toml).
        #[arg(long)]
        project: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// `hookd rules …`.
pub fn run(command: Command) -> anyhow::Result<Outcome> {
    match command {
        Command::Suggest(args) => super::suggest::run(args),
        Command::Defaults { profile } => super::profile::defaults(profile),
        Command::Init {
            profile,
            file,
            force,
        } => super::profile::init(profile, file, force),
        Command::Bench(args) => super::profile::run_bench(args),
        Command::Manifest {
            dir,
            revision,
            serial,
            expires,
        } => manifest(&dir, revision.as_deref(), serial, expires.as_deref()),
        Command::Revision {
            file,
            project,
            json,
        } => super::revision::run(
            &rules_source(file),
            if project {
                LayerKind::Project
            } else {
                LayerKind::User
            },
            &crate::paths::socket_path(),
            json,
        ),
        Command::Check {
            file,
            project,
            json,
        } => check(file, project, json),
        Command::Explain {
            event,
            agent,
            rules,
            json,
        } => explain(
            &event,
            agent.map(crate::agent::Agent::from),
            rules_source(rules),
            &crate::paths::socket_path(),
            json,
        ),
        Command::Test { dir, rules, json } => test(&dir, rules_source(rules), json),
    }
}
