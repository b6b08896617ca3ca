//! The rule engine (issue #3): a pure function from a Claude Code hook input to
//! a verdict, driven by a TOML rules file.
//!
//! No IO beyond reading a file path it is given, no tokio, no logging: the
//! daemon owns reloading, caching and logging, and calls [`RuleSet::evaluate`]
//! (or [`Layers::evaluate`]) with the raw hook input.
//!
//! # Layout
//!
//! - `mod.rs` — public API: [`RuleSet`], [`Layers`], [`Query`], [`Evaluation`].
//! - `file.rs` — TOML → compiled rules, every error with `file:line:column`.
//! - `tool.rs` — Claude Code's permission-rule syntax for `tool`.
//! - `shell.rs` — splitting Bash commands into the simple commands that run.
//! - `path.rs` — gitignore-style path patterns and lexical path resolution.
//! - `cond.rs` — `when` conditions.
//! - `eval.rs` — candidate lookup and matching; `explain.rs` — explanations.
//! - `check.rs`, `fixtures.rs` — `hookd rules check` and `hookd rules test`.
//! - `profile.rs`, `profiles/*.toml` — the embedded profiles (minimal,
//!   standard, strict); standard is the defaults ([`DEFAULTS_TOML`]).
//! - `bench.rs` — scoring a policy against corpora (`hookd rules bench`).
//!
//! # The rules file
//!
//! ```toml
//! [[rule]]
//! id = "no-force-push-main"          # required, unique in the file
//! action = "deny"                    # allow | deny | ask | context
//! tool = "Bash(git push *)"          # optional; a string or a list (any may match)
//! event = "PreToolUse"               # optional; a name, a list, or "*"
//! reason = "Force-pushing main rewrites shared history."
//! when = [                           # optional; all must hold
//!   { field = "$command.args", regex = '^(--force|-f)$' },
//!   { field = "$command.args", equals = ["main", "master"] },
//! ]
//!
//! [[rule]]
//! id = "tests-ok"
//! action = "allow"
//! tool = ["Bash(cargo test *)", "Bash(npm test)"]
//!
//! [[rule]]
//! id = "subagent-note"
//! action = "context"                 # adds `reason` as additionalContext, decides nothing
//! event = "SubagentStart"
//! reason = "Subagents must not push."
//!
//! [trust]                            # user file only
//! projects = ["~/src/mine", "/work/team/**"]
//! ```
//!
//! Keys: `id` (string, required), `action` (required), `tool`, `event`,
//! `agent`, `reason`, `when`, `repeat`, `max_blocks`, and the session-fact
//! gates `limit`, `budget`, `after`, `within` (see [`facts`]). Anything else is an error, as
//! are wrong types, duplicate ids, invalid regexes and globs, and unknown
//! action or event names. A `tool` naming no Claude Code tool (nor `mcp__…`)
//! is a warning: it can never match.
//!
//! - **`tool`** uses Claude Code's permission-rule syntax; see the table in
//!   `tool.rs` (`Bash`, `Bash(npm test)`, `Bash(git push:*)`,
//!   `Bash(git push *)`, `Read(./.env*)`, `Edit(src/**)`, `Read(~/.ssh)`,
//!   `Read(//etc/**)`, `WebFetch(domain:example.com)`, `Agent(Explore)`,
//!   `Tool(param:value)`, `mcp__server__tool`, `mcp__server__*`,
//!   `mcp__server`). Path forms are described in `path.rs`: `/x`, `./x` and
//!   `x` are all relative to the **project root** (the event's project dir,
//!   else its `cwd`), `~/x` to home, `//x` to the filesystem root. A rule
//!   without `tool` applies to any event in its `event` list, tool or not.
//! - **`event`** defaults to `["PreToolUse", "PermissionRequest"]`: the two
//!   events whose answer is a permission decision, both carrying `tool_name`
//!   and `tool_input`, so a rule written for "this tool call" judges the call
//!   whichever of the two hooks asks (PermissionRequest does not fire in every
//!   mode; PreToolUse does). Name PostToolUse and others explicitly; `"*"`
//!   means every event, including ones this build does not know. Other
//!   agents' events are named by the kind they map onto (Gemini's
//!   `BeforeTool` is `PreToolUse`, Codex's `PreToolUse` is itself; see
//!   [`crate::agent`]); `"*"` also matches the events no kind maps.
//! - **`agent`** (`claude-code`, `codex` or `gemini`) restricts the rule to
//!   the hooks of that agent (an Agent SDK run's are `claude-code`'s).
//!   Without it a rule judges every agent's hooks: each dialect maps its
//!   tools onto Claude Code's (Gemini's `run_shell_command` is `Bash`,
//!   Codex's `apply_patch` is an `Edit` or `Write` of each file it touches).
//! - **`when`**: see `cond.rs` — `field` (dotted input path, or `$command`,
//!   `$command.args`, `$pipeline`, `$path`) with `equals`, `glob`, `regex`,
//!   `contains`, `path`, `exists`, and `not` / `any` / `all`.
//! - **`reason`** is shown to the model and user with a deny/ask/allow; for
//!   `context` it is the additional context, and is required.
//! - **`repeat`** (bool) and **`max_blocks`** (a number ≥ 1), on deny and ask
//!   rules for Stop and SubagentStop: how often the rule blocks in one stop
//!   chain (see below). Not both.
//!
//! # Stop chains
//!
//! A blocked Stop makes Claude Code go on working, and its next Stop says
//! `stop_hook_active: true`: the Stops that follow one another that way are
//! one *stop chain* (per subagent for SubagentStop). A rule that blocked
//! every one of them would keep the session going until Claude Code's own
//! cap (9 blocks in a row), at the cost of a model turn each. So by default
//! a deny or ask rule blocks **once per chain**: on a Stop or SubagentStop
//! with `stop_hook_active: true` it does not match. `max_blocks = N` lets it
//! block N times in a row (the daemon counts the chain's blocks and passes
//! the count in as [`Query::stop_blocks`]; it resets when a Stop is not
//! blocked or a new prompt arrives); `repeat = true` blocks every time.
//! `rules check` notes Stop deny/ask rules that say neither, and `rules
//! explain` says when a rule held back for this reason.
//!
//! # Bash commands
//!
//! A Bash input is split into simple commands (`shell.rs`): `&&`, `||`, `;`,
//! `&`, `|`, newlines, `$( )`, backticks, `<( )`, subshells, groups,
//! `sh -c '…'` and `eval`. Deny, ask and context rules match if they match
//! **any** command, also with leading `NAME=value` assignments and wrappers
//! (`sudo`, `doas`, `env`, `nice`, `ionice`, `timeout`, `stdbuf`, `nohup`,
//! `time`, `command`, `builtin`, `exec`, `xargs`, `setsid`, `unbuffer`,
//! `busybox`, `toybox`, `chronic`, `caffeinate`)
//! stripped and with `/bin/rm` read as `rm`. An allow verdict needs **every**
//! command to be matched, as written, by some allow rule: `Bash(ls *)` does not
//! allow `ls && rm -rf x`. A command that cannot be read (unbalanced quotes or
//! parentheses, `case` statements, very deep nesting) is judged conservatively:
//! it is also re-read with quotes ignored, deny/ask rules that match any piece
//! of either reading match, and allow rules never match unless they allow every
//! Bash command (`Bash`, `Bash(*)`, or no `tool`).
//!
//! Evaluation is linear in the input: the splitter reads each byte a bounded
//! number of times, conditions are matched once per field (per command, per
//! pipeline) for all rules together, and a rule skips commands of other
//! programs without reading them. A command **too large to analyse** (over
//! 1 MiB, over 4,096 simple commands, behind over 16 wrappers, or with
//! `sh -c`/`eval` strings adding up to over 4 times its length) is not split
//! but judged the same conservative way: a deny or ask rule matches if the
//! command names its program as a word (or the rule names none), its
//! per-command conditions taken to hold, and its reason says the command was
//! too large; allow rules match only if they allow every Bash command.
//!
//! # Verdicts
//!
//! Every matching rule is considered. **deny > ask > allow**; `context` rules
//! never decide but their `reason`s are returned as additional context (an
//! evaluation where only context rules matched has action
//! [`Action::Context`]). No match: no opinion (`action: None`), and Claude
//! Code's own permission flow continues. [`Evaluation::rule_ids`] lists every
//! rule of the winning action, in file order, and `generation` the rule set
//! generation ([`RuleSet::with_generation`]) the decision was made under.
//!
//! # Layers
//!
//! The user file (`$XDG_CONFIG_HOME/hookd/rules.toml`, or `--rules`) is the
//! user layer; with no user file the embedded defaults ([`RuleSet::defaults`])
//! take its place, and a user file replaces the defaults entirely. A project
//! may add `<project>/.claude/hookd.toml` ([`project_rules_path`]), loaded with
//! [`RuleSet::load_project`]. [`Layers`] evaluates both together:
//!
//! - precedence is unchanged by layers: a deny from either layer beats an
//!   allow from either;
//! - the project layer's deny and ask rules always apply (a project can
//!   only tighten);
//! - its allow and context rules apply only if the user file trusts that
//!   project: `[trust] projects` lists absolute or `~/` directories, exactly,
//!   or with a trailing `/**` for every project below a directory. Untrusted
//!   ones are reported by `explain` as ignored;
//! - a project file may not contain `[trust]` (an error);
//! - rule ids from the project layer are reported as `project:<id>`, and the
//!   evaluation carries the project layer's generation as
//!   `project_generation`.
//!
//! Below the user layer come the **policy layers** (`[policy] sources` in
//! the daemon's config: a team checkout, a signed bundle, …), composed
//! with [`RuleSet::with_policy`] into the user set, so one snapshot, one
//! generation and one [`Revision`] cover them all. Each is a
//! [`PolicyLayer`] of one or more files ([`RuleSet::parse_policy`]: no
//! `[trust]`), its rule ids reported as `<name>:<id>`. Precedence, from
//! the lowest layer up:
//!
//! | layer | rank | its deny | its ask | its allow |
//! |---|---|---|---|---|
//! | policy source 1, 2, … (config order) | 0, 1, … | always applies | loosened by an allow of a higher layer covering the whole input, unless `enforced` | applies unless another layer denies or asks |
//! | user (file or defaults) and project | highest | always applies | always applies | applies unless another layer denies or asks (project: if trusted) |
//!
//! So a deny anywhere denies; a user can tighten any policy (its deny or
//! ask beats a policy allow); a user allow loosens a policy source's ask
//! ([`Evaluation::overridden`] lists the asks it loosened) but not an
//! enforced one's ([`Evaluation::enforced_by`] names it, and the daemon's
//! session grants do not loosen it either). Within one layer, and between
//! the user and project layers, deny > ask > allow as before.
//!
//! # Using it from the daemon
//!
//! ```no_run
//! use hookd_core::rules::{project_rules_path, Layers, Query, RuleSet};
//! use std::{path::Path, sync::Arc};
//!
//! # let (user_file, generation) = (Path::new("rules.toml"), 1);
//! // At start and on every reload: a new generation, or keep the old one.
//! let user = match RuleSet::load(user_file) {
//!     Ok(set) => set,
//!     Err(e) if e.is_not_found() => RuleSet::defaults(),
//!     Err(e) => panic!("{e}"), // refuse: every error, file:line:col each
//! };
//! let user = Arc::new(user.with_generation(generation));
//!
//! // Per event: the project dir is CLAUDE_PROJECT_DIR, else the input's cwd.
//! # let input = serde_json::json!({"hook_event_name": "PreToolUse"});
//! # let (project, home) = (Path::new("/p"), Path::new("/home/me"));
//! let mut layers = Layers::new(user.clone());
//! let project_file = project_rules_path(project); // cache by project dir
//! if let Ok(p) = RuleSet::load_project(&project_file) {
//!     layers = layers.with_project(project, Arc::new(p.with_generation(generation)));
//! }
//! let q = Query::new(&input).project_dir(project).home(home);
//! let verdict = layers.evaluate(&q); // action None = no opinion
//! ```
//!
//! Permissive mode is the daemon's: evaluate, log, answer no opinion.

mod bench;
mod check;
mod check_names;
mod cond;
mod diag;
mod eval;
mod explain;
pub mod facts;
mod file;
mod fixtures;
mod inputs;
pub mod judge;
mod judge_keys;
mod path;
mod profile;
pub mod revision;
mod rule;
mod shell;
#[cfg(test)]
mod shell_vs_bash;
pub mod signal;
mod tool;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_escalate;
#[cfg(test)]
mod tests_judge;
#[cfg(test)]
mod tests_policy;
#[cfg(test)]
mod tests_standard;

pub use bench::{
    bench, hook_inputs, judge as judge_hook, BenchReport, CategoryScore, Corpus, Expect, Judged,
    Wrong,
};
pub use check::{check, check_as, check_source, CheckReport};
pub use check_names::{check_names, judges_without_provider};
pub use diag::{Diagnostic, RulesError, Severity};
pub use explain::{Check, ExplainedCommand, Explanation, RuleReport};
pub use fixtures::{run_fixtures, run_fixtures_layers, FixtureReport, FixtureResult};
pub use inputs::{combine, evaluate};
pub use profile::{Profile, MINIMAL_TOML, STANDARD_TOML, STRICT_TOML};
pub use revision::Revision;
pub use rule::{Action, Escalation, EVENTS, TOOL_EVENTS};
pub use tool::KNOWN_TOOLS;

use crate::agent::Agent;
use crate::decision::{Answer, Verdict};
use eval::{Index, LayerRef};
use file::{compile, Layer};
use rule::Rule;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The embedded default rules, verbatim (what `hookd rules defaults`
/// prints): the standard profile ([`Profile::Standard`]).
pub const DEFAULTS_TOML: &str = profile::STANDARD_TOML;

/// The name the embedded defaults go by in messages and explanations.
pub const DEFAULTS_ORIGIN: &str = "<embedded defaults>";

/// Where a project's rules file lives, relative to the project directory.
pub const PROJECT_RULES_FILE: &str = ".claude/hookd.toml";

/// The project layer's file for a project directory (the event's
/// `CLAUDE_PROJECT_DIR`, else its `cwd`).
pub fn project_rules_path(project_dir: &Path) -> PathBuf {
    project_dir.join(PROJECT_RULES_FILE)
}

/// Which layer a rules file is read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LayerKind {
    /// The user file or the embedded defaults; may trust projects.
    User,
    /// A project's `.claude/hookd.toml`; may not trust anything.
    Project,
    /// A file of a `[policy] sources` layer; may not trust anything.
    Policy,
}

impl LayerKind {
    /// `user` or `project`: the layer's label in a [`Revision`] and in a
    /// decision's provenance.
    pub fn label(self) -> &'static str {
        match self {
            LayerKind::User => "user",
            LayerKind::Project => "project",
            LayerKind::Policy => "policy",
        }
    }
}

/// One compiled, immutable rule set. A reload builds a new one; the caller
/// numbers it with [`RuleSet::with_generation`]. Regexes, globs and lookup
/// tables are built once here, so evaluation only matches.
#[derive(Debug, Clone)]
pub struct RuleSet {
    rules: Vec<Rule>,
    index: Index,
    sets: cond::CondSets,
    trust: Vec<String>,
    warnings: Vec<Diagnostic>,
    generation: u64,
    origin: PathBuf,
    kind: LayerKind,
    /// SHA-256 of the text's canonical form (see [`Revision`]).
    content_hash: [u8; 32],
    /// This set's revision as the only layer of its kind, or, with
    /// policy layers, of them and this set together.
    revision: Revision,
    /// The `[policy] sources` layers this (user) set is composed over, in
    /// precedence order (lowest first): see "Layers" above.
    policy: Arc<[PolicyLayer]>,
}

/// One `[policy] sources` layer: the files of one source (a directory's
/// `*.toml` in name order, a file, a bundle's `rules/*.toml`), compiled as
/// [`LayerKind::Policy`], under one name.
#[derive(Debug, Clone)]
pub struct PolicyLayer {
    /// The source's name: its rule ids are reported as `<name>:<id>`.
    pub name: String,
    /// A later layer (the user's, a grant) cannot loosen this layer's ask
    /// or deny.
    pub enforced: bool,
    /// Its files, in name order.
    pub files: Vec<RuleSet>,
}

impl PolicyLayer {
    /// The label the layer's files carry in a [`Revision`]: the name, and
    /// whether it is enforced (the same rules enforced mean more).
    pub fn revision_label(&self) -> String {
        if self.enforced {
            format!("{} (enforced)", self.name)
        } else {
            self.name.clone()
        }
    }
}

impl RuleSet {
    /// The embedded defaults ([`DEFAULTS_TOML`], the standard profile),
    /// generation 0.
    pub fn defaults() -> RuleSet {
        Profile::Standard.rules()
    }

    /// A rule set with no rules (every evaluation is "no opinion").
    pub fn empty() -> RuleSet {
        RuleSet::compile("", Path::new("<empty>"), LayerKind::User).expect("empty rules compile")
    }

    /// Parse and compile a user rules file's text; `origin` is the path used
    /// in messages. Every error is reported, each at its `file:line:column`.
    pub fn parse(src: &str, origin: &Path) -> Result<RuleSet, RulesError> {
        RuleSet::compile(src, origin, LayerKind::User)
    }

    /// Parse a project layer's text (`.claude/hookd.toml`): `[trust]` is an
    /// error there, and allow/context rules draw a warning.
    pub fn parse_project(src: &str, origin: &Path) -> Result<RuleSet, RulesError> {
        RuleSet::compile(src, origin, LayerKind::Project)
    }

    /// Parse a policy source's file: `[trust]` is an error there.
    pub fn parse_policy(src: &str, origin: &Path) -> Result<RuleSet, RulesError> {
        RuleSet::compile(src, origin, LayerKind::Policy)
    }

    /// This (user) set composed over `layers` (lowest precedence first):
    /// evaluations of it judge them all together, and its revision becomes
    /// theirs and its own ([`revision::of_layers`], each file under its
    /// layer's [`PolicyLayer::revision_label`], then `user`).
    pub fn with_policy(mut self, layers: Vec<PolicyLayer>) -> RuleSet {
        let labels: Vec<String> = layers.iter().map(PolicyLayer::revision_label).collect();
        let files = layers
            .iter()
            .zip(&labels)
            .flat_map(|(layer, label)| layer.files.iter().map(move |file| (label.as_str(), file)));
        self.revision = revision::of_layers(files.chain([(self.kind.label(), &self)]));
        self.policy = layers.into();
        self
    }

    /// The policy layers this set is composed over (see [`RuleSet::with_policy`]).
    pub fn policy(&self) -> &[PolicyLayer] {
        &self.policy
    }

    /// Read and parse a user rules file. A missing file is an error for which
    /// [`RulesError::is_not_found`] is true.
    pub fn load(path: &Path) -> Result<RuleSet, RulesError> {
        let src = std::fs::read_to_string(path).map_err(|e| RulesError::io(path, &e))?;
        RuleSet::parse(&src, path)
    }

    /// Read and parse a project layer file.
    pub fn load_project(path: &Path) -> Result<RuleSet, RulesError> {
        let src = std::fs::read_to_string(path).map_err(|e| RulesError::io(path, &e))?;
        RuleSet::parse_project(&src, path)
    }

    fn compile(src: &str, origin: &Path, kind: LayerKind) -> Result<RuleSet, RulesError> {
        let layer = match kind {
            LayerKind::User => Layer::User,
            LayerKind::Project => Layer::Project,
            LayerKind::Policy => Layer::Policy,
        };
        let c = compile(src, origin, layer)?;
        let mut rules = c.rules;
        let index = Index::build(&mut rules);
        let mut conds: Vec<&mut cond::Cond> = rules
            .iter_mut()
            .flat_map(|r| r.when.iter_mut().chain(r.per_command.iter_mut()))
            .collect();
        let mut sets = cond::CondSets::build(&mut conds);
        for rule in &mut rules {
            rule.needs = sets.needs(&rule.per_command);
            rule.per_view_only = !rule.needs.is_empty()
                && rule.when.is_empty()
                && rule.programs.iter().all(Option::is_none)
                && rule
                    .tools
                    .iter()
                    .all(|p| matches!(p, tool::ToolPattern::Command(_)));
        }
        sets.index_needs(
            rules
                .iter()
                .enumerate()
                .filter(|(_, r)| r.per_view_only)
                .map(|(i, r)| (i as u32, &*r.needs, r.events)),
        );
        let content_hash = revision::content_hash(src, kind);
        let mut set = RuleSet {
            rules,
            index,
            sets,
            trust: c.trust,
            warnings: c.warnings,
            generation: 0,
            origin: origin.to_path_buf(),
            kind,
            content_hash,
            revision: Revision::from_written(""),
            policy: Arc::new([]),
        };
        set.revision = revision::of_layers([(kind.label(), &set)]);
        Ok(set)
    }

    /// Number this rule set. The daemon keeps one counter and bumps it on
    /// every successful load, so a generation names one set of rules.
    pub fn with_generation(mut self, generation: u64) -> RuleSet {
        self.generation = generation;
        self
    }

    /// The generation set by [`RuleSet::with_generation`] (0 by default).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Number of rules.
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    /// True when there are no rules.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The file this set was read from ([`DEFAULTS_ORIGIN`] for the defaults).
    pub fn origin(&self) -> &Path {
        &self.origin
    }

    /// User or project layer.
    pub fn kind(&self) -> LayerKind {
        self.kind
    }

    /// SHA-256 of the canonical form of this set's text and kind: the same
    /// rules, however written and wherever read, have the same hash (see
    /// [`Revision`]). Computed once, when the set is read.
    pub fn content_hash(&self) -> [u8; 32] {
        self.content_hash
    }

    /// The policy revision of this set as the only layer of its kind
    /// ([`revision::of_layers`] with its [`LayerKind::label`]): what
    /// `status` shows for the user rules, and `hookd rules revision`
    /// prints. Computed once, when the set is read.
    pub fn revision(&self) -> &Revision {
        &self.revision
    }

    /// Warnings found while loading (the set loaded anyway).
    pub fn warnings(&self) -> &[Diagnostic] {
        &self.warnings
    }

    /// Rule `id` of this set (as written in the file, without a layer
    /// prefix): where it is and what it says.
    pub fn rule(&self, id: &str) -> Option<RuleInfo<'_>> {
        self.rules.iter().find(|r| r.id == id).map(|r| RuleInfo {
            id: &r.id,
            action: r.action,
            line: r.line,
            reason: r.reason.as_deref(),
        })
    }

    /// Whether this is the embedded defaults ([`RuleSet::defaults`]).
    pub fn is_defaults(&self) -> bool {
        self.origin == Path::new(DEFAULTS_ORIGIN)
    }

    /// Rule ids in file order.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.rules.iter().map(|r| r.id.as_str())
    }

    /// The `[trust] projects` entries as written.
    pub fn trusted_projects(&self) -> &[String] {
        &self.trust
    }

    /// Whether this (user) rule set trusts the project at `project_dir`, so
    /// that project's allow and context rules apply. `home` expands `~/`.
    pub fn trusts(&self, project_dir: &Path, home: Option<&Path>) -> bool {
        let Some(dir) = path::normalize_dir(Some(project_dir)) else {
            return false;
        };
        let home = path::normalize_dir(home);
        self.trust.iter().any(|entry| {
            let (base, below) = match entry.strip_suffix("/**") {
                Some(b) => (b, true),
                None => (entry.as_str(), false),
            };
            let abs = if base == "~" {
                home.clone()
            } else if let Some(rest) = base.strip_prefix("~/") {
                home.as_ref()
                    .map(|h| path::normalize(&format!("{h}/{rest}")))
            } else {
                Some(path::normalize(base))
            };
            let Some(abs) = abs else { return false };
            if below {
                path::relative_to(&dir, &abs).is_some()
            } else {
                dir == abs
            }
        })
    }

    /// Judge a hook input with this rule set and its policy layers.
    pub fn evaluate(&self, q: &Query<'_>) -> Evaluation {
        eval::evaluate(&self.as_layers(), q)
    }

    /// Why [`RuleSet::evaluate`] gives what it gives.
    pub fn explain(&self, q: &Query<'_>) -> Explanation {
        explain::explain(&self.as_layers(), q)
    }

    /// This set (tag 0, so its generation is the evaluation's) and its
    /// policy layers' files, which rank below it.
    fn as_layers(&self) -> Vec<LayerRef<'_>> {
        let top = u8::try_from(self.policy.len()).unwrap_or(u8::MAX);
        let mut refs = vec![LayerRef {
            set: self,
            tag: 0,
            trusted: true,
            name: self.kind.label(),
            rank: top,
            enforced: false,
        }];
        for (rank, layer) in self.policy.iter().enumerate() {
            for file in &layer.files {
                refs.push(LayerRef {
                    set: file,
                    tag: 0,
                    trusted: true,
                    name: &layer.name,
                    rank: rank as u8,
                    enforced: layer.enforced,
                });
            }
        }
        for (tag, r) in refs.iter_mut().enumerate() {
            r.tag = u16::try_from(tag).expect("the policy loader caps the number of files");
        }
        refs
    }
}

/// One rule of a [`RuleSet`], as [`RuleSet::rule`] finds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleInfo<'a> {
    /// Its id.
    pub id: &'a str,
    /// What it does.
    pub action: Action,
    /// The line of its `[[rule]]` header.
    pub line: usize,
    /// Its `reason`.
    pub reason: Option<&'a str>,
}

/// The user layer and, for events in a project that has one, the project
/// layer. Cheap to build per event from cached `Arc`s.
#[derive(Debug, Clone)]
pub struct Layers {
    /// The user file, or the defaults.
    pub user: Arc<RuleSet>,
    /// The project's `.claude/hookd.toml`, if it has one.
    pub project: Option<ProjectLayer>,
}

/// A project layer: the rules and the project directory they belong to (the
/// directory the trust check is made against).
#[derive(Debug, Clone)]
pub struct ProjectLayer {
    /// The project directory (not the file).
    pub dir: PathBuf,
    /// Rules read with [`RuleSet::load_project`].
    pub rules: Arc<RuleSet>,
}

impl Layers {
    /// Only the user layer.
    pub fn new(user: Arc<RuleSet>) -> Layers {
        Layers {
            user,
            project: None,
        }
    }

    /// Add the project layer for `dir`.
    pub fn with_project(mut self, dir: impl Into<PathBuf>, rules: Arc<RuleSet>) -> Layers {
        self.project = Some(ProjectLayer {
            dir: dir.into(),
            rules,
        });
        self
    }

    /// Whether the user layer trusts the project layer's directory.
    pub fn project_trusted(&self, home: Option<&Path>) -> bool {
        self.project
            .as_ref()
            .is_some_and(|p| self.user.trusts(&p.dir, home))
    }

    fn refs(&self, home: Option<&Path>) -> Vec<LayerRef<'_>> {
        let mut v = self.user.as_layers();
        if let Some(p) = &self.project {
            v.push(LayerRef {
                set: &p.rules,
                tag: v.len() as u16,
                trusted: self.user.trusts(&p.dir, home),
                name: LayerKind::Project.label(),
                rank: v[0].rank,
                enforced: false,
            });
        }
        v
    }

    /// Judge a hook input with both layers.
    pub fn evaluate(&self, q: &Query<'_>) -> Evaluation {
        eval::evaluate(&self.refs(q.home), q)
    }

    /// Why [`Layers::evaluate`] gives what it gives.
    pub fn explain(&self, q: &Query<'_>) -> Explanation {
        explain::explain(&self.refs(q.home), q)
    }
}

/// What a rule set judges: the raw Claude Code hook input and where it runs.
#[derive(Debug, Clone, Copy)]
pub struct Query<'a> {
    /// `hook_event_name`, e.g. `PreToolUse`; unknown names only match rules
    /// with `event = "*"`.
    pub event: &'a str,
    /// The agent that fired the hook: rules with `agent = "…"` match only
    /// its hooks.
    pub agent: Agent,
    /// The raw hook input object (`tool_name`, `tool_input`, `cwd`, …).
    pub input: &'a serde_json::Value,
    /// `CLAUDE_PROJECT_DIR` if known; otherwise the input's `cwd` is the
    /// project root for path patterns.
    pub project_dir: Option<&'a Path>,
    /// The user's home directory, for `~/` patterns and `$HOME` in commands.
    pub home: Option<&'a Path>,
    /// How many times in a row the stop chain this Stop or SubagentStop
    /// belongs to was blocked already (the session's Stops, or one
    /// subagent's SubagentStops), as the daemon counted; 0 when unknown.
    /// Read only when the input says `stop_hook_active: true`, where at
    /// least 1 is assumed: see "Stop chains" above.
    pub stop_blocks: u32,
    /// The session facts the daemon gathered (see [`facts`]): read by rules
    /// with `limit`, `budget` or `after`; `None` is the same as empty facts.
    pub facts: Option<&'a facts::SessionFacts>,
    /// The model's answers to the judge rules that match this input, as the
    /// daemon gathered them (see [`judge`]); a matching judge rule with no
    /// answer falls back to its `on_error`.
    pub judgements: &'a [judge::JudgeVerdict],
    /// The project's known signal values (see [`signal`]); `None`: none known.
    pub signals: Option<&'a signal::Signals>,
}

impl<'a> Query<'a> {
    /// A query for `input`, taking the event from its `hook_event_name`.
    pub fn new(input: &'a serde_json::Value) -> Query<'a> {
        Query {
            event: crate::agent::claude::InputFields::of(input)
                .event_name
                .unwrap_or(""),
            agent: Agent::ClaudeCode,
            input,
            project_dir: None,
            home: None,
            stop_blocks: 0,
            facts: None,
            judgements: &[],
            signals: None,
        }
    }

    /// Set the agent that fired the hook.
    pub fn agent(mut self, agent: Agent) -> Query<'a> {
        self.agent = agent;
        self
    }

    /// Set the project directory.
    pub fn project_dir(mut self, dir: &'a Path) -> Query<'a> {
        self.project_dir = Some(dir);
        self
    }

    /// Set the home directory.
    pub fn home(mut self, home: &'a Path) -> Query<'a> {
        self.home = Some(home);
        self
    }

    /// Set [`Query::facts`].
    pub fn facts(mut self, facts: &'a facts::SessionFacts) -> Query<'a> {
        self.facts = Some(facts);
        self
    }

    /// Set [`Query::stop_blocks`].
    pub fn stop_blocks(mut self, blocks: u32) -> Query<'a> {
        self.stop_blocks = blocks;
        self
    }

    /// Set [`Query::judgements`].
    pub fn judgements(mut self, answers: &'a [judge::JudgeVerdict]) -> Query<'a> {
        self.judgements = answers;
        self
    }

    /// Set [`Query::signals`].
    pub fn signals(mut self, signals: &'a signal::Signals) -> Query<'a> {
        self.signals = Some(signals);
        self
    }
}

/// The verdict for one hook input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Evaluation {
    /// `None`: no rule decided (no opinion). `Some(Context)`: only context
    /// rules matched; nothing is decided, `additional_context` has the text.
    pub action: Option<Action>,
    /// The deciding rules (every matched rule of the winning action; for a
    /// Bash allow, every allow rule that covered a command), in file order,
    /// user layer first; project rules as `project:<id>`.
    pub rule_ids: Vec<String>,
    /// The deciding rules' distinct reasons joined into one text
    /// (`"; "`, or a space after one ending in `.`), if any.
    pub reason: Option<String>,
    /// The `reason` of every matched context rule, whatever the verdict.
    pub additional_context: Vec<String>,
    /// The ids of those context rules.
    pub context_rule_ids: Vec<String>,
    /// The user layer's generation.
    pub generation: u64,
    /// The project layer's generation, when one took part.
    pub project_generation: Option<u64>,
    /// The enforced policy source that denied or asked, if one did: no
    /// later layer, and no session grant, may loosen this verdict.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enforced_by: Option<String>,
    /// Ask rules that a later layer's allow loosened (see "Layers").
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub overridden: Vec<String>,
    /// Limited rules that matched this call, whether or not their limit
    /// was passed: the daemon counts the call for each (see [`facts`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub limited: Vec<facts::LimitedHit>,
    /// Rules with `limit`, `budget` or `after` that applied, each with
    /// the fact that let it (`id: tainted by WebFetch … at …`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gated: Vec<String>,
    /// Every judge rule (`action = "judge"`) that matched this input,
    /// answered or not: the questions the daemon asks a model before it
    /// evaluates again with the answers (see [`judge`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub judges: Vec<judge::JudgeHit>,
    /// An `ask` whose deciding rules say `escalate = "team"`: its question
    /// also goes to the team's approvers, needing this many to allow it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub escalate: Option<Escalation>,
}

impl Evaluation {
    /// The answer this evaluation gives: the one mapping from rule actions
    /// to verdicts, shared by the daemon and `hookd replay`. Context rules
    /// add `additionalContext` whatever the verdict.
    pub fn answer(&self) -> Answer {
        let verdict = match self.action {
            Some(Action::Allow) => Verdict::Allow,
            Some(Action::Deny) => Verdict::Deny,
            Some(Action::Ask) => Verdict::Ask,
            Some(Action::Context) | None => Verdict::NoOpinion,
        };
        Answer {
            verdict,
            reason: self.reason.clone(),
            updated_input: None,
            additional_context: (!self.additional_context.is_empty())
                .then(|| self.additional_context.join("\n")),
        }
    }

    /// This evaluation for an observe-only event that takes context
    /// (see [`crate::agent::Agent::is_judged`]): its context rules alone.
    /// A verdict there would be logged and never honored.
    pub fn context_only(self) -> Evaluation {
        Evaluation {
            action: (!self.additional_context.is_empty()).then_some(Action::Context),
            rule_ids: Vec::new(),
            reason: None,
            enforced_by: None,
            overridden: Vec::new(),
            gated: Vec::new(),
            judges: Vec::new(),
            ..self
        }
    }

    /// True when a rule allowed, denied or asked.
    pub fn is_decision(&self) -> bool {
        matches!(
            self.action,
            Some(Action::Allow | Action::Deny | Action::Ask)
        )
    }
}
