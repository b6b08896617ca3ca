//! Settings text in, settings text out: splicing hookd's handlers into an
//! agent's settings file and out again, and reading back what is there
//! ([`inspect`]). Pure: no file IO (see the module above for the edges).

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::agent::claude::{FailClosed, HookEventKind};
use crate::agent::Agent;

use super::jsontext::{self, Element, Node, Out, Style};
use super::timings::*;
use super::{FORWARDER_NAME, MARKER_ARG};

/// What to register.
#[derive(Debug, Clone, PartialEq)]
pub struct InstallOptions {
    /// The agent whose file it is: its event names, handler shape and
    /// timeouts, and the forwarder's `--agent`.
    pub agent: Agent,
    /// The forwarder's absolute path, or its bare name in a file shared
    /// with a project (see [`super::forwarder_for`]).
    pub forwarder: PathBuf,
    /// The events, in the order they are added.
    pub events: Vec<HookEventKind>,
    /// What to block when the daemon cannot answer: the events this scope
    /// covers get the forwarder's `--fail-closed[=all]` and Claude Code's
    /// `"onFailure":"block"`; the others neither.
    pub fail_closed: FailClosed,
    /// Also register `hookd statusline` (this `hookd`, or `hookd` on PATH
    /// in a project's shared file) as Claude Code's `statusLine`, unless
    /// the file already has one.
    pub statusline: Option<PathBuf>,
    /// How Claude Code reaches the daemon (Codex and Gemini: always the
    /// forwarder).
    pub transport: Transport,
}

/// How Claude Code's hooks reach the daemon (`--transport`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Transport {
    /// `hook-forwarder`, spawned per hook, over the Unix socket.
    #[default]
    Command,
    /// Claude Code's `type: "http"` handlers, posting to the daemon's HTTP
    /// listener at `base_url` (`http://127.0.0.1:7878`), for every event
    /// that can have one ([`http_capable`]); the forwarder for the others.
    Http {
        /// The listener's URL, without a path.
        base_url: String,
    },
}

/// The daemon's route for Claude Code's `http` hooks.
pub const HTTP_HOOK_PATH: &str = "/hook/claude-code";

/// The environment variable Claude Code reads the bearer token from for an
/// `http` handler's `Authorization` header (through `allowedEnvVars`: the
/// token itself is never written into a settings file).
pub const HTTP_TOKEN_ENV: &str = "HOOKD_HTTP_TOKEN";

/// The header that marks the `http` handlers `hookd install` wrote (the
/// http counterpart of [`MARKER_ARG`]; the daemon ignores it).
pub const HTTP_MARKER_HEADER: &str = "X-Hookd-Installed-By";

/// Whether Claude Code 2.1.330 can run an `http` handler for `kind` with
/// everything hookd answers: not SessionStart and Setup (Claude Code skips
/// http handlers there), nor TeammateIdle and TaskCompleted, whose "keep
/// working" is an exit 2 with no JSON equivalent
/// (tests/e2e/FINDINGS-http-hooks.md).
pub fn http_capable(kind: HookEventKind) -> bool {
    use HookEventKind::*;
    !matches!(kind, SessionStart | Setup | TeammateIdle | TaskCompleted)
}

/// What `--statusline` did to a settings file's `statusLine`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StatuslineChange {
    /// hookd's status line was added.
    Added,
    /// hookd's status line was there already.
    Kept,
    /// The file has a status line of its own; it was left alone.
    SkippedOthers,
    /// Uninstall: hookd's status line was removed.
    Removed,
}

/// The `statusLine` command for `hookd` at `hookd`.
pub fn statusline_command(hookd: &Path) -> String {
    let path = hookd.display().to_string();
    let quoted = if path
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"/._-+".contains(&b))
    {
        path
    } else {
        format!("'{}'", path.replace('\'', "'\\''"))
    };
    format!("{quoted} {STATUSLINE_ARG}")
}

/// The subcommand a status line of hookd's runs.
const STATUSLINE_ARG: &str = "statusline";

/// Whether a `statusLine` value is hookd's: a command whose program is
/// named `hookd` and whose only argument is `statusline`.
fn is_our_statusline(value: &Value) -> bool {
    let Some(command) = value.get("command").and_then(Value::as_str) else {
        return false;
    };
    let Some(program) = command.strip_suffix(&format!(" {STATUSLINE_ARG}")) else {
        return false;
    };
    let program = program.trim().trim_matches('\'');
    value.get("type").and_then(Value::as_str) == Some("command")
        && Path::new(program).file_name().is_some_and(|n| n == "hookd")
}

/// `text` with hookd's `statusLine` added at the end of the top level,
/// unless there is a `statusLine` already.
pub fn statusline_install_text(
    text: &str,
    hookd: &Path,
) -> Result<(String, StatuslineChange), SettingsError> {
    let root = parse_settings(text)?;
    if let Some(existing) = root.get("statusLine") {
        let change = if is_our_statusline(&node_value(text, &existing.value)) {
            StatuslineChange::Kept
        } else {
            StatuslineChange::SkippedOthers
        };
        return Ok((text.to_string(), change));
    }
    let value = Out::Object(vec![
        ("type".into(), Out::Str("command".into())),
        ("command".into(), Out::Str(statusline_command(hookd))),
        ("padding".into(), Out::Int(0)),
    ]);
    let edit = jsontext::append(
        text,
        &root,
        &[Element::Member("statusLine".into(), value)],
        &Style::detect(text),
    );
    Ok((jsontext::apply(text, vec![edit]), StatuslineChange::Added))
}

/// The JSON value `node` spans in `text` (validated when parsed).
fn node_value(text: &str, node: &Node) -> Value {
    let span = node.span();
    serde_json::from_str(&text[span.start..span.end]).unwrap_or(Value::Null)
}

/// `text` without hookd's `statusLine` (another one is left alone).
pub fn statusline_uninstall_text(text: &str) -> Result<(String, bool), SettingsError> {
    if text.trim().is_empty() {
        return Ok((text.to_string(), false));
    }
    let root = parse_settings(text)?;
    let Node::Object { members, .. } = &root else {
        return Ok((text.to_string(), false));
    };
    let marks: Vec<bool> = members
        .iter()
        .map(|m| m.key == "statusLine" && is_our_statusline(&node_value(text, &m.value)))
        .collect();
    if !marks.iter().any(|m| *m) {
        return Ok((text.to_string(), false));
    }
    Ok((jsontext::apply(text, jsontext::remove(&root, &marks)), true))
}

/// The handler registered for `kind`, keys in the order written. Claude
/// Code: `type, command, args, timeout[, async][, onFailure]`. Codex:
/// `type, command, timeout` (seconds). Gemini: `type, name, command,
/// timeout` (milliseconds). Codex and Gemini get a command line (see
/// [`command_line`]).
pub fn handler(kind: HookEventKind, options: &InstallOptions) -> Out {
    let t = timing_for(options.agent, kind);
    let blocks = options.fail_closed.blocks(kind) && options.agent.is_decision_point(kind);
    let mut args = Vec::new();
    if options.agent != Agent::ClaudeCode {
        args.push("--agent".to_string());
        args.push(options.agent.as_str().to_string());
    }
    args.push("--timeout".into());
    args.push(t.forwarder_s.to_string());
    if blocks {
        args.push(fail_closed_arg(options.fail_closed));
    }
    args.push(MARKER_ARG.into());
    let forwarder = options.forwarder.to_string_lossy().into_owned();
    match options.agent {
        Agent::ClaudeCode => {
            if let Transport::Http { base_url } = &options.transport {
                if http_capable(kind) {
                    let scope = match blocks {
                        true => options.fail_closed,
                        false => FailClosed::Off,
                    };
                    return http_handler(kind, base_url, scope);
                }
            }
        }
        Agent::Codex | Agent::Copilot => {
            return Out::Object(vec![
                ("type".into(), Out::Str("command".into())),
                ("command".into(), Out::Str(command_line(&forwarder, &args))),
                ("timeout".into(), Out::Int(t.agent_s.into())),
            ])
        }
        Agent::Gemini => {
            return Out::Object(vec![
                ("type".into(), Out::Str("command".into())),
                ("name".into(), Out::Str("hookd".into())),
                ("command".into(), Out::Str(command_line(&forwarder, &args))),
                ("timeout".into(), Out::Int(u64::from(t.agent_s) * 1000)),
            ])
        }
        // Their plugin is a file of its own (`install::plugin`), never a
        // settings entry; a settings-file install for them writes what
        // Codex's would.
        Agent::OpenCode | Agent::Pi => {}
    }
    let args = args.into_iter().map(Out::Str).collect();
    let mut fields = vec![
        ("type".to_string(), Out::Str("command".into())),
        (
            "command".to_string(),
            Out::Str(options.forwarder.to_string_lossy().into_owned()),
        ),
        ("args".to_string(), Out::Array(args)),
        ("timeout".to_string(), Out::Int(t.agent_s.into())),
    ];
    if t.async_hook {
        fields.push(("async".into(), Out::Bool(true)));
    }
    // Claude Code ignores onFailure for async hooks. Only the events the
    // scope covers get it: a forwarder that cannot even start must not
    // block what the forwarder itself would let through (prompts, under
    // `tools`).
    if blocks && !t.async_hook {
        fields.push(("onFailure".into(), Out::Str("block".into())));
    }
    Out::Object(fields)
}

/// Claude Code's `http` handler for `kind`: `type, url, headers,
/// allowedEnvVars, timeout[, onFailure]`. The URL carries the forwarder's
/// deadline (`?timeout=`), so the daemon answers before Claude Code gives
/// up, as it does before a forwarder does, and, where `scope` blocks the
/// event, the forwarder's `--fail-closed` (`&fail_closed=`).
fn http_handler(kind: HookEventKind, base_url: &str, scope: FailClosed) -> Out {
    let t = timing_for(Agent::ClaudeCode, kind);
    let blocks = scope.blocks(kind);
    let mut url = format!(
        "{}{HTTP_HOOK_PATH}?timeout={}",
        base_url.trim_end_matches('/'),
        t.forwarder_s
    );
    // The forwarder's `--fail-closed`: the daemon's own fallbacks for this
    // hook (an input it cannot read) block too.
    if blocks {
        url.push_str("&fail_closed=");
        url.push_str(scope.as_str());
    }
    let mut fields = vec![
        ("type".to_string(), Out::Str("http".into())),
        ("url".to_string(), Out::Str(url)),
        (
            "headers".to_string(),
            Out::Object(vec![
                (
                    "Authorization".into(),
                    Out::Str(format!("Bearer ${HTTP_TOKEN_ENV}")),
                ),
                (HTTP_MARKER_HEADER.into(), Out::Str("hookd".into())),
            ]),
        ),
        (
            "allowedEnvVars".to_string(),
            Out::Array(vec![Out::Str(HTTP_TOKEN_ENV.into())]),
        ),
        ("timeout".to_string(), Out::Int(t.agent_s.into())),
    ];
    // A refused connection, a non-2xx answer or a timeout blocks only
    // with onFailure (FINDINGS-http-hooks.md), as a forwarder that cannot
    // reach the daemon blocks only with --fail-closed.
    if blocks {
        fields.push(("onFailure".into(), Out::Str("block".into())));
    }
    Out::Object(fields)
}

/// The forwarder's flag for `scope`: `--fail-closed` (tools, the
/// forwarder's default scope) or `--fail-closed=all`.
pub fn fail_closed_arg(scope: FailClosed) -> String {
    match scope {
        FailClosed::All => "--fail-closed=all".into(),
        _ => "--fail-closed".into(),
    }
}

/// A command line that runs `program` with `args` under `sh -c`, as
/// Codex and Gemini run a hook's `command`: each word single-quoted when it
/// holds anything a shell would read (`'` as `'\''`).
pub fn command_line(program: &str, args: &[String]) -> String {
    std::iter::once(program)
        .chain(args.iter().map(String::as_str))
        .map(|word| {
            let plain = !word.is_empty()
                && word
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b));
            if plain {
                word.to_string()
            } else {
                format!("'{}'", word.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The words of a command line as `sh` splits them, for the forms
/// [`command_line`] writes and plain hand-written ones: blanks separate
/// words, single and double quotes group, a backslash escapes outside
/// single quotes. Anything fancier (`$`, globs) is kept as written.
pub fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    word.push(c);
                }
            }
            '"' => {
                in_word = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => word.extend(chars.next()),
                        c => word.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.extend(chars.next());
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// The matcher group holding one handler: no matcher (every tool) for
/// Claude Code; `"*"` for Codex and Gemini (see the module doc).
fn group(kind: HookEventKind, options: &InstallOptions) -> Out {
    let hooks = ("hooks".into(), Out::Array(vec![handler(kind, options)]));
    match options.agent {
        Agent::ClaudeCode => Out::Object(vec![hooks]),
        Agent::Codex | Agent::Gemini | Agent::Copilot | Agent::OpenCode | Agent::Pi => {
            Out::Object(vec![("matcher".into(), Out::Str("*".into())), hooks])
        }
    }
}

/// The agent's names of the chosen events (an event the agent does not
/// have is skipped).
pub(super) fn event_names(options: &InstallOptions) -> Vec<(HookEventKind, &'static str)> {
    options
        .events
        .iter()
        .filter_map(|k| Some((*k, event_name(options.agent, *k)?)))
        .collect()
}

fn hooks_object(options: &InstallOptions) -> Out {
    Out::Object(
        event_names(options)
            .into_iter()
            .map(|(k, name)| (name.to_string(), Out::Array(vec![group(k, options)])))
            .collect(),
    )
}

/// `{"hooks": {…}}` for every chosen event, pretty-printed with two spaces
/// and a final newline: what `--print` shows and what a new file holds.
pub fn hooks_block(options: &InstallOptions) -> String {
    let mut out = String::new();
    Out::Object(vec![("hooks".into(), hooks_object(options))]).pretty(
        "",
        &Style {
            unit: "  ".into(),
            newline: "\n",
        },
        &mut out,
    );
    out.push('\n');
    out
}

/// Why a settings text cannot be edited. Positions are 1-based; the caller
/// prefixes the file name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    /// Not valid JSON.
    #[error("{line}:{column}: not valid JSON: {message}; Claude Code settings must be plain JSON (no comments, no trailing commas)")]
    Syntax {
        /// Line.
        line: usize,
        /// Column.
        column: usize,
        /// What serde_json found.
        message: String,
    },
    /// Valid JSON, but not the shape of a settings file.
    #[error("{line}:{column}: {message}")]
    Shape {
        /// Line.
        line: usize,
        /// Column.
        column: usize,
        /// What is wrong and where.
        message: String,
    },
}

fn shape_error(text: &str, pos: usize, message: String) -> SettingsError {
    let (line, column) = jsontext::line_col(text, pos);
    SettingsError::Shape {
        line,
        column,
        message,
    }
}

/// Parses a settings text and checks the parts hookd edits: the top level
/// is an object, `hooks` (if present) an object, each event in it an array;
/// no duplicate keys there (Claude Code would silently use the last one).
fn parse_settings(text: &str) -> Result<Node, SettingsError> {
    let root = jsontext::parse(text).map_err(|e| SettingsError::Syntax {
        line: e.line,
        column: e.column,
        message: e.message,
    })?;
    let Node::Object { members, .. } = &root else {
        return Err(shape_error(
            text,
            root.span().start,
            "the settings file must hold a JSON object".into(),
        ));
    };
    check_unique_keys(text, members, "the top level")?;
    if let Some(hooks) = root.get("hooks") {
        let Node::Object { members, .. } = &hooks.value else {
            return Err(shape_error(
                text,
                hooks.value.span().start,
                "`hooks` must be an object (event name → array of matcher groups)".into(),
            ));
        };
        check_unique_keys(text, members, "`hooks`")?;
        for event in members {
            if !matches!(event.value, Node::Array { .. }) {
                return Err(shape_error(
                    text,
                    event.value.span().start,
                    format!(
                        "`hooks.{}` must be an array of matcher groups ({{\"matcher\":…, \"hooks\":[…]}})",
                        event.key
                    ),
                ));
            }
        }
    }
    Ok(root)
}

fn check_unique_keys(
    text: &str,
    members: &[jsontext::Member],
    within: &str,
) -> Result<(), SettingsError> {
    for (i, m) in members.iter().enumerate() {
        if members[..i].iter().any(|o| o.key == m.key) {
            return Err(shape_error(
                text,
                m.key_span.start,
                format!(
                    "duplicate key `{}` in {within}; Claude Code would use only the last one: merge them",
                    m.key
                ),
            ));
        }
    }
    Ok(())
}

/// A handler's program and arguments: exec form (`command` and `args`), or
/// shell form (the words of the `command` line).
fn command_words(handler: &Value) -> Option<(String, Vec<String>)> {
    let command = handler["command"].as_str()?;
    match handler["args"].as_array() {
        Some(args) => Some((
            command.to_string(),
            args.iter()
                .map(|a| a.as_str().map_or_else(|| a.to_string(), str::to_string))
                .collect(),
        )),
        None => {
            let mut words = shell_words(command).into_iter();
            Some((words.next()?, words.collect()))
        }
    }
}

/// Whether a handler runs the forwarder: exec form (`command` is its path),
/// or shell form (the command line's first word is).
fn runs_forwarder(handler: &Value) -> bool {
    handler["type"] == "command"
        && command_words(handler)
            .is_some_and(|(c, _)| Path::new(&c).file_name() == Some(FORWARDER_NAME.as_ref()))
}

/// Whether `handler` is one `hookd install` wrote: a forwarder with
/// [`MARKER_ARG`], or an `http` handler posting to [`HTTP_HOOK_PATH`] with
/// [`HTTP_MARKER_HEADER`].
pub fn is_installed_handler(handler: &Value) -> bool {
    (runs_forwarder(handler)
        && command_words(handler).is_some_and(|(_, args)| args.iter().any(|a| a == MARKER_ARG)))
        || is_installed_http_handler(handler)
}

/// Whether `handler` is an `http` handler `hookd install` wrote.
pub fn is_installed_http_handler(handler: &Value) -> bool {
    handler["type"] == "http"
        && handler["headers"][HTTP_MARKER_HEADER] == "hookd"
        && handler["url"]
            .as_str()
            .is_some_and(|url| url.contains(HTTP_HOOK_PATH))
}

/// The [`Registration`] of one of hookd's `http` handlers. Claude Code's
/// `onFailure` is its failure scope: `"block"` blocks when the daemon
/// cannot answer (connection refused, non-2xx, no answer in time); the
/// URL's `fail_closed` is the daemon's, as a forwarder's `--fail-closed`.
fn http_registration(text: &str, h: &Located) -> Registration {
    let url = h.handler["url"].as_str().unwrap_or_default().to_string();
    let in_url = |name: &str| {
        url.split_once('?').and_then(|(_, query)| {
            query
                .split('&')
                .find_map(|p| p.strip_prefix(name)?.strip_prefix('='))
        })
    };
    let timeout_in_url = in_url("timeout").and_then(|t| t.parse().ok());
    let scope_in_url = in_url("fail_closed").and_then(FailClosed::from_scope);
    let headers = h.handler["headers"]
        .as_object()
        .map(|headers| {
            headers
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                .collect()
        })
        .unwrap_or_default();
    let allowed_env_vars = h.handler["allowedEnvVars"]
        .as_array()
        .map(|vars| {
            vars.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let on_failure_block = h.handler["onFailure"] == "block";
    Registration {
        event: h.event.key.clone(),
        line: h.line(text),
        command: url.clone(),
        args: Vec::new(),
        timeout: h.handler["timeout"].as_f64(),
        forwarder_timeout: timeout_in_url,
        matcher: h.matcher(text),
        installed: true,
        async_hook: h.handler["async"] == true,
        shell_command: None,
        shell: None,
        condition: h.handler["if"].as_str().map(str::to_string),
        // The daemon's fallbacks block what the URL's scope says; a handler
        // written before it had one is taken at its `onFailure`.
        fail_closed: match (scope_in_url, on_failure_block) {
            (Some(scope), _) => scope,
            (None, true) => FailClosed::All,
            (None, false) => FailClosed::Off,
        },
        on_failure_block,
        http: Some(HttpHandler {
            url,
            headers,
            allowed_env_vars,
        }),
    }
}

/// Every handler in the `hooks` object, with where it sits.
struct Located<'n> {
    event: &'n jsontext::Member,
    event_index: usize,
    group: &'n Node,
    group_index: usize,
    handler: Value,
    handler_index: usize,
}

impl Located<'_> {
    /// The line the handler starts on.
    fn line(&self, text: &str) -> usize {
        let start = self
            .group
            .get("hooks")
            .expect("located under hooks")
            .value
            .items()[self.handler_index]
            .span()
            .start;
        jsontext::line_col(text, start).0
    }

    /// The handler's group's `matcher`, if any.
    fn matcher(&self, text: &str) -> Option<String> {
        let span = self.group.span();
        let group: Value = serde_json::from_str(&text[span.start..span.end]).unwrap_or(Value::Null);
        group["matcher"].as_str().map(str::to_string)
    }
}

fn handlers<'n>(text: &str, root: &'n Node) -> Vec<Located<'n>> {
    let mut found = Vec::new();
    let Some(Node::Object { members, .. }) = root.get("hooks").map(|m| &m.value) else {
        return found;
    };
    for (event_index, event) in members.iter().enumerate() {
        for (group_index, group) in event.value.items().iter().enumerate() {
            let Some(list) = group.get("hooks") else {
                continue;
            };
            for (handler_index, node) in list.value.items().iter().enumerate() {
                let span = node.span();
                let handler = serde_json::from_str(&text[span.start..span.end])
                    .expect("validated JSON re-parses");
                found.push(Located {
                    event,
                    event_index,
                    group,
                    group_index,
                    handler,
                    handler_index,
                });
            }
        }
    }
    found
}

/// Whether the text already holds exactly what [`install_text`] would
/// write: one group per chosen event holding the expected handler, as
/// [`group`] writes it (key order and layout aside), and no other hookd
/// handler.
fn already_installed(text: &str, root: &Node, options: &InstallOptions) -> bool {
    let names = event_names(options);
    let only: Vec<&str> = names.iter().map(|(_, n)| *n).collect();
    let ours: Vec<Located> = handlers(text, root)
        .into_iter()
        .filter(|h| touches(h, Some(&only)))
        .collect();
    if ours.len() != names.len() {
        return false;
    }
    names.iter().all(|(kind, name)| {
        let want = group(*kind, options).to_value();
        ours.iter().any(|h| {
            let span = h.group.span();
            h.event.key == *name
                && serde_json::from_str::<Value>(&text[span.start..span.end]).ok()
                    == Some(want.clone())
        })
    })
}

/// Whether `h` is a handler `hookd install` wrote for one of the events
/// named `only` (any event when `None`).
fn touches(h: &Located, only: Option<&[&str]>) -> bool {
    is_installed_handler(&h.handler)
        && only.is_none_or(|names| names.iter().any(|n| *n == h.event.key))
}

/// Removes the handlers `hookd install` wrote (for the events named in
/// `only`, or all); returns the new text and how many handlers went. A
/// matcher group left without handlers goes, then an event left without
/// groups, then `hooks` left without events.
fn remove_installed(text: &str, root: &Node, only: Option<&[&str]>) -> (String, usize) {
    let located = handlers(text, root);
    let ours = |e: usize, g: usize, h: usize| {
        located.iter().any(|l| {
            l.event_index == e && l.group_index == g && l.handler_index == h && touches(l, only)
        })
    };
    let removed = located.iter().filter(|l| touches(l, only)).count();
    if removed == 0 {
        return (text.to_string(), 0);
    }
    let hooks = &root.get("hooks").expect("handlers live under hooks").value;
    let Node::Object {
        members: events, ..
    } = hooks
    else {
        unreachable!("checked by parse_settings")
    };
    let mut inner_edits = Vec::new();
    let mut event_gone = vec![false; events.len()];
    for (e, event) in events.iter().enumerate() {
        let groups = event.value.items();
        let mut group_gone = vec![false; groups.len()];
        let mut group_edits = Vec::new();
        for (g, group) in groups.iter().enumerate() {
            let Some(list) = group.get("hooks") else {
                continue;
            };
            let marks: Vec<bool> = (0..list.value.items().len())
                .map(|h| ours(e, g, h))
                .collect();
            if !marks.is_empty() && marks.iter().all(|m| *m) {
                group_gone[g] = true;
            } else if marks.iter().any(|m| *m) {
                group_edits.extend(jsontext::remove(&list.value, &marks));
            }
        }
        if !groups.is_empty() && group_gone.iter().all(|g| *g) {
            event_gone[e] = true;
        } else {
            inner_edits.extend(group_edits);
            if group_gone.iter().any(|g| *g) {
                inner_edits.extend(jsontext::remove(&event.value, &group_gone));
            }
        }
    }
    let edits = if event_gone.iter().all(|g| *g) {
        let Node::Object { members, .. } = root else {
            unreachable!("checked by parse_settings")
        };
        let marks: Vec<bool> = members.iter().map(|m| m.key == "hooks").collect();
        jsontext::remove(root, &marks)
    } else {
        if event_gone.iter().any(|g| *g) {
            inner_edits.extend(jsontext::remove(hooks, &event_gone));
        }
        inner_edits
    };
    (jsontext::apply(text, edits), removed)
}

/// Appends one group per chosen event: to the event's array when it
/// exists, else as a new event at the end of `hooks` (a new `hooks` at the
/// end of the top level when there is none).
fn append_installed(text: &str, root: &Node, options: &InstallOptions) -> String {
    let style = Style::detect(text);
    let mut edits = Vec::new();
    match root.get("hooks") {
        None => edits.push(jsontext::append(
            text,
            root,
            &[Element::Member("hooks".into(), hooks_object(options))],
            &style,
        )),
        Some(hooks) => {
            let mut new_events = Vec::new();
            for (kind, name) in event_names(options) {
                match hooks.value.get(name) {
                    Some(event) => edits.push(jsontext::append(
                        text,
                        &event.value,
                        &[Element::Item(group(kind, options))],
                        &style,
                    )),
                    None => new_events.push(Element::Member(
                        name.into(),
                        Out::Array(vec![group(kind, options)]),
                    )),
                }
            }
            if !new_events.is_empty() {
                edits.push(jsontext::append(text, &hooks.value, &new_events, &style));
            }
        }
    }
    jsontext::apply(text, edits)
}

/// The settings text with the forwarder registered as `options` says.
/// `before` is the current text (`None` or blank: no file yet). Running it
/// on its own output changes nothing. hookd's entries for the chosen events
/// are replaced (another forwarder path, `--fail-closed`); its entries for
/// other events are left alone ([`uninstall_text`] removes them all).
pub fn install_text(
    before: Option<&str>,
    options: &InstallOptions,
) -> Result<String, SettingsError> {
    let Some(text) = before.filter(|t| !t.trim().is_empty()) else {
        return Ok(hooks_block(options));
    };
    // `--statusline` alone registers no hooks.
    if options.events.is_empty() {
        parse_settings(text)?;
        return Ok(text.to_string());
    }
    let root = parse_settings(text)?;
    if already_installed(text, &root, options) {
        return Ok(text.to_string());
    }
    let names: Vec<&str> = event_names(options).into_iter().map(|(_, n)| n).collect();
    let (cleared, _) = remove_installed(text, &root, Some(&names));
    let root = parse_settings(&cleared)?;
    Ok(append_installed(&cleared, &root, options))
}

/// [`install_text`], then `options.statusline` when asked for; and
/// whether the hooks changed the text (the status line aside).
pub(super) fn install_all(
    before: Option<&str>,
    options: &InstallOptions,
) -> Result<(String, bool, Option<StatuslineChange>), SettingsError> {
    let text = install_text(before, options)?;
    let hooks_changed = before != Some(text.as_str());
    match &options.statusline {
        None => Ok((text, hooks_changed, None)),
        Some(hookd) => statusline_install_text(&text, hookd)
            .map(|(text, change)| (text, hooks_changed, Some(change))),
    }
}

/// The settings text without the handlers `hookd install` wrote, and how
/// many were removed.
pub fn uninstall_text(before: &str) -> Result<(String, usize), SettingsError> {
    if before.trim().is_empty() {
        return Ok((before.to_string(), 0));
    }
    let root = parse_settings(before)?;
    let (text, removed) = remove_installed(before, &root, None);
    let (text, statusline) = statusline_uninstall_text(&text)?;
    Ok((text, removed + statusline as usize))
}

/// One handler that runs the forwarder, found in a settings file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Registration {
    /// The event it is registered for.
    pub event: String,
    /// The line of the handler.
    pub line: usize,
    /// The forwarder path (the first word of a shell-form command).
    pub command: String,
    /// Its arguments (the other words of a shell-form command).
    pub args: Vec<String>,
    /// Claude Code's `timeout` as written (seconds, if the user did not
    /// mistake it for milliseconds).
    pub timeout: Option<f64>,
    /// The forwarder's `--timeout`, from the args.
    pub forwarder_timeout: Option<f64>,
    /// The group's matcher, if any.
    pub matcher: Option<String>,
    /// Written by `hookd install` (carries [`MARKER_ARG`]).
    pub installed: bool,
    /// Registered with `"async": true`.
    #[serde(rename = "async")]
    pub async_hook: bool,
    /// The whole `command` string when the handler has no `args`: Claude
    /// Code then runs it through a shell (`command` and `args` above are
    /// its words).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shell_command: Option<String>,
    /// The handler's `shell` (`bash`, `powershell`), as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shell: Option<String>,
    /// The handler's `if` (a permission rule), as written.
    #[serde(rename = "if", skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    /// What the forwarder blocks when the daemon cannot answer, read from
    /// its args as the forwarder reads them (an argument error keeps any
    /// `--fail-closed`, see [`crate::forwarder::fail_closed_in`]).
    pub fail_closed: FailClosed,
    /// `"onFailure": "block"`: Claude Code blocks a guarded event when the
    /// hook itself fails (cannot start, times out, crashes).
    pub on_failure_block: bool,
    /// One of hookd's `http` handlers (`--transport http`): what Claude
    /// Code posts with. Then `command` is the URL, `args` are empty and
    /// `forwarder_timeout` is the URL's `timeout`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub http: Option<HttpHandler>,
}

/// What an `http` handler posts to, and with what.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HttpHandler {
    /// `url`.
    pub url: String,
    /// `headers`, as written (`$VAR` unexpanded).
    pub headers: Vec<(String, String)>,
    /// `allowedEnvVars`: the variables Claude Code expands in `headers`.
    pub allowed_env_vars: Vec<String>,
}

impl HttpHandler {
    /// The headers as Claude Code sends them: `$VAR` and `${VAR}` of an
    /// allowed variable replaced by its value in `env` (empty when unset),
    /// any other `$` left as written.
    pub fn expanded_headers(&self, env: impl Fn(&str) -> Option<String>) -> Vec<(String, String)> {
        self.headers
            .iter()
            .map(|(name, value)| {
                let mut value = value.clone();
                for var in &self.allowed_env_vars {
                    let with = env(var).unwrap_or_default();
                    value = value
                        .replace(&format!("${{{var}}}"), &with)
                        .replace(&format!("${var}"), &with);
                }
                (name.clone(), value)
            })
            .collect()
    }

    /// The allowed variables `headers` use that `env` does not set.
    pub fn unset_vars(&self, env: impl Fn(&str) -> Option<String>) -> Vec<&str> {
        self.allowed_env_vars
            .iter()
            .filter(|var| {
                self.headers.iter().any(|(_, v)| {
                    v.contains(&format!("${var}")) || v.contains(&format!("${{{var}}}"))
                })
            })
            .filter(|var| env(var).is_none_or(|v| v.is_empty()))
            .map(String::as_str)
            .collect()
    }
}

impl Registration {
    /// Whether this registration's event is blocked when the daemon is
    /// down, by the forwarder's fallback.
    pub fn fails_closed(&self) -> bool {
        self.fail_closed
            .blocks(HookEventKind::from_name(&self.event))
    }

    /// Whether Claude Code runs `self` and `other` as one handler when
    /// both are registered for the same event: it de-duplicates an event's
    /// handlers by `shell + command + args + if`, across settings files
    /// and matcher groups (reference §3; checked against the real CLI in
    /// `tests/e2e_duplicates.rs`). `timeout`, `matcher` and the rest do not
    /// count.
    pub fn runs_as_one_with(&self, other: &Registration) -> bool {
        self.differences(other).is_empty()
    }

    /// How `self` and `other` differ in what Claude Code de-duplicates by,
    /// for people (empty when they run as one).
    pub fn differences(&self, other: &Registration) -> Vec<String> {
        let mut found = Vec::new();
        match (&self.shell_command, &other.shell_command) {
            (Some(a), Some(b)) if a != b => {
                found.push(format!("command `{a}` vs `{b}`"));
            }
            (Some(_), Some(_)) => {}
            (None, None) => {
                if self.command != other.command {
                    found.push(format!("command {} vs {}", self.command, other.command));
                }
                if self.args != other.args {
                    found.push(format!(
                        "args `{}` vs `{}`",
                        self.args.join(" "),
                        other.args.join(" ")
                    ));
                }
            }
            (a, _) => found.push(format!(
                "{} vs {}",
                if a.is_some() {
                    "shell form"
                } else {
                    "exec form"
                },
                if a.is_some() {
                    "exec form"
                } else {
                    "shell form"
                },
            )),
        }
        if self.shell != other.shell {
            found.push(format!(
                "shell {} vs {}",
                self.shell.as_deref().unwrap_or("(none)"),
                other.shell.as_deref().unwrap_or("(none)")
            ));
        }
        if self.condition != other.condition {
            found.push(format!(
                "`if` {} vs {}",
                self.condition.as_deref().unwrap_or("(none)"),
                other.condition.as_deref().unwrap_or("(none)")
            ));
        }
        found
    }
}

/// The fail-closed scope a forwarder run with `args` applies.
fn forwarder_scope(args: &[String]) -> FailClosed {
    let args: Vec<std::ffi::OsString> = args.iter().map(Into::into).collect();
    match crate::forwarder::parse_args(&args) {
        Ok(crate::forwarder::Command::Forward(options)) => options.fail_closed,
        Ok(crate::forwarder::Command::Print(_)) => FailClosed::Off,
        Err(_) => crate::forwarder::fail_closed_in(&args),
    }
}

/// What [`inspect`] found in a settings file.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Inspection {
    /// Every forwarder handler and hookd `http` handler, in file order.
    pub registrations: Vec<Registration>,
    /// `"disableAllHooks": true`: Claude Code runs no hook from any file.
    pub disable_all_hooks: bool,
}

/// Finds every forwarder registration, and every `http` handler of
/// hookd's, in a settings text (for `hookd doctor`).
pub fn inspect(text: &str) -> Result<Inspection, SettingsError> {
    if text.trim().is_empty() {
        return Ok(Inspection::default());
    }
    let root = parse_settings(text)?;
    let disable_all_hooks = root.get("disableAllHooks").is_some_and(|m| {
        let span = m.value.span();
        &text[span.start..span.end] == "true"
    });
    let mut registrations = Vec::new();
    for h in handlers(text, &root) {
        if is_installed_http_handler(&h.handler) {
            registrations.push(http_registration(text, &h));
            continue;
        }
        if !runs_forwarder(&h.handler) {
            continue;
        }
        let command = h.handler["command"].as_str().unwrap_or_default();
        let shell_command = (!h.handler["args"].is_array()).then(|| command.to_string());
        let (command, args) = command_words(&h.handler).unwrap_or_default();
        let forwarder_timeout =
            args.iter()
                .enumerate()
                .find_map(|(i, a)| match a.strip_prefix("--timeout") {
                    Some("") => args.get(i + 1).and_then(|v| v.parse().ok()),
                    Some(rest) => rest.strip_prefix('=').and_then(|v| v.parse().ok()),
                    None => None,
                });
        let fail_closed = forwarder_scope(&args);
        registrations.push(Registration {
            event: h.event.key.clone(),
            line: h.line(text),
            installed: is_installed_handler(&h.handler),
            command,
            args,
            timeout: h.handler["timeout"].as_f64(),
            forwarder_timeout,
            matcher: h.matcher(text),
            async_hook: h.handler["async"] == true,
            shell_command,
            shell: h.handler["shell"].as_str().map(str::to_string),
            condition: h.handler["if"].as_str().map(str::to_string),
            fail_closed,
            on_failure_block: h.handler["onFailure"] == "block",
            http: None,
        });
    }
    Ok(Inspection {
        registrations,
        disable_all_hooks,
    })
}
