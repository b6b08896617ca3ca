//! Claude Code's permission-rule syntax for the `tool` field.
//!
//! | form                          | matches                                                  |
//! |-------------------------------|----------------------------------------------------------|
//! | `Bash`, `Bash(*)`             | every Bash command                                       |
//! | `Bash(npm test)`              | exactly that command                                     |
//! | `Bash(git push *)`            | `git push` alone or followed by a space and anything     |
//! | `Bash(git push:*)`            | the same (Claude Code's legacy prefix form)              |
//! | `Bash(ls*)`, `Bash(git * main)` | `*` is any text, spaces included                       |
//! | `Read(./.env*)`, `Edit(src/**)` | a path pattern (see `path.rs`)                          |
//! | `WebFetch(domain:example.com)` | URL host `example.com`; `domain:*.example.com` for subdomains |
//! | `Agent(Explore)`, `Task(…)`   | `tool_input.subagent_type` (`*` wildcard)                |
//! | `Skill(name)`                 | `tool_input.skill` (`*` wildcard)                        |
//! | `Tool(param:value)`           | top-level `tool_input.param` equal to value (`*` wildcard); for Bash only the Bash input fields (`command`, `timeout`, `description`, `run_in_background`, `dangerouslyDisableSandbox`) are taken as params, so `Bash(npm:*)` stays a prefix |
//! | `mcp__server__tool`           | that MCP tool                                            |
//! | `mcp__server`, `mcp__server__*` | every tool of that MCP server                         |
//! | `mcp__*`                      | every MCP tool                                           |
//!
//! Commands are compared after word splitting and unquoting, with words joined
//! by one space (`git  push "origin"` reads as `git push origin`); patterns are
//! normalised the same way, and a quoted or backslashed `*` in a pattern is a
//! literal star.
//!
//! `Read(path)` also judges Grep, Glob and LS, and `Edit(path)` also judges
//! Write, MultiEdit and NotebookEdit, as in Claude Code; `Write(path)`,
//! `Glob(path)` and so on judge only their own tool. A bare name matches only
//! that tool. `Task` and `Agent` are the same tool (Claude Code renamed it).

use super::path::PathPattern;
use super::shell::REDIRECTIONS;

/// Tool names Claude Code 2.1.330 uses; a `tool` naming anything else (and not
/// `mcp__…`) can never match, which `check` reports as a warning.
pub const KNOWN_TOOLS: &[&str] = &[
    "Bash",
    "Read",
    "Edit",
    "Write",
    "MultiEdit",
    "NotebookEdit",
    "Glob",
    "Grep",
    "LS",
    "WebFetch",
    "WebSearch",
    "Task",
    "Agent",
    "TodoWrite",
    "ExitPlanMode",
    "BashOutput",
    "KillShell",
    "Skill",
    "SlashCommand",
];

/// Tools judged by `Read(path)` rules.
const READ_TOOLS: &[&str] = &["Read", "Glob", "Grep", "LS"];
/// Tools judged by `Edit(path)` rules.
const EDIT_TOOLS: &[&str] = &["Edit", "Write", "MultiEdit", "NotebookEdit"];
/// Input fields of the Bash tool, for `Bash(param:value)`.
const BASH_PARAMS: &[&str] = &[
    "command",
    "timeout",
    "description",
    "run_in_background",
    "dangerouslyDisableSandbox",
];

/// The input field holding the path a tool touches.
pub(crate) fn path_field(tool: &str) -> Option<&'static str> {
    match tool {
        "Read" | "Edit" | "Write" | "MultiEdit" => Some("file_path"),
        "NotebookEdit" => Some("notebook_path"),
        "Glob" | "Grep" | "LS" => Some("path"),
        _ => None,
    }
}

/// One parsed `tool` pattern.
#[derive(Debug, Clone)]
pub(crate) enum ToolPattern {
    /// Every use of these tools (a bare name). Never `Bash`: that is
    /// `Command(CommandPattern::Any)` so it is judged per command.
    Tool(Vec<String>),
    /// `Bash(...)` command pattern.
    Command(CommandPattern),
    /// A path pattern for these tools; `id` indexes the rule set's path patterns.
    Path {
        tools: &'static [&'static str],
        pattern: PathPattern,
        id: usize,
    },
    /// `WebFetch(domain:…)`.
    Domain(DomainPattern),
    /// A top-level `tool_input` field compared with a `*` wildcard.
    Param {
        tools: Vec<String>,
        field: String,
        value: Wildcard,
    },
    /// `mcp__server__*`, `mcp__server`, `mcp__*`: tool names starting with this.
    McpPrefix(String),
    /// A tool name or specifier hookd cannot interpret: matches nothing.
    Never,
}

/// The result of parsing one `tool` string.
pub(crate) struct Parsed {
    pub pattern: ToolPattern,
    /// Set when the pattern can never match (unknown tool name).
    pub warning: Option<String>,
}

/// Parse a `tool` string. Errors are messages without location.
pub(crate) fn parse(src: &str) -> Result<Parsed, String> {
    let s = src.trim();
    if s.is_empty() {
        return Err("empty tool pattern".to_string());
    }
    let (name, spec) = match s.find('(') {
        Some(open) => {
            let Some(inner) = s[open + 1..].strip_suffix(')') else {
                return Err(format!("`{s}`: missing `)` at the end"));
            };
            (&s[..open], Some(inner))
        }
        None => (s, None),
    };
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '*')
    {
        return Err(format!(
            "`{s}`: expected a tool name such as `Bash`, `Read(./.env)` or `mcp__server__tool`"
        ));
    }
    if let Some(rest) = name.strip_prefix("mcp__") {
        return parse_mcp(s, name, rest, spec);
    }
    if name.contains('*') {
        return Err(format!(
            "`{s}`: `*` in a tool name is only understood as `mcp__server__*`"
        ));
    }
    let known = KNOWN_TOOLS.contains(&name);
    let unknown_warning = || {
        Some(format!(
            "tool `{name}` is not a Claude Code tool name (nor `mcp__…`), so this pattern can never match"
        ))
    };
    let names = |n: &str| -> Vec<String> {
        match n {
            "Task" | "Agent" => vec!["Agent".to_string(), "Task".to_string()],
            n => vec![n.to_string()],
        }
    };
    let spec = spec.map(str::trim);
    let Some(spec) = spec.filter(|sp| *sp != "*") else {
        if spec == Some("") {
            return Err(format!(
                "`{s}`: empty `()`; write `{name}` to match every use"
            ));
        }
        let pattern = if name == "Bash" {
            ToolPattern::Command(CommandPattern::Any)
        } else {
            ToolPattern::Tool(names(name))
        };
        return Ok(Parsed {
            pattern,
            warning: if known { None } else { unknown_warning() },
        });
    };
    if spec.is_empty() {
        return Err(format!(
            "`{s}`: empty `()`; write `{name}` to match every use"
        ));
    }
    // `param:value`, Claude Code's parameter form.
    if let Some((param, value)) = param_form(spec) {
        let is_param = match name {
            "Bash" => BASH_PARAMS.contains(&param),
            "WebFetch" => param != "domain",
            _ => path_field(name).is_none() || !looks_like_path(spec),
        };
        if is_param {
            return Ok(Parsed {
                pattern: ToolPattern::Param {
                    tools: names(name),
                    field: param.to_string(),
                    value: Wildcard::parse(value),
                },
                warning: if known { None } else { unknown_warning() },
            });
        }
    }
    let pattern = match name {
        "Bash" => ToolPattern::Command(CommandPattern::parse(spec)?),
        "Read" | "Edit" | "Write" | "MultiEdit" | "NotebookEdit" | "Glob" | "Grep" | "LS" => {
            let tools: &'static [&'static str] = match name {
                "Read" => READ_TOOLS,
                "Edit" => EDIT_TOOLS,
                other => KNOWN_TOOLS
                    .iter()
                    .position(|t| *t == other)
                    .map(|i| &KNOWN_TOOLS[i..i + 1])
                    .unwrap_or(&[]),
            };
            let pattern = PathPattern::parse(spec).map_err(|e| format!("`{s}`: {e}"))?;
            ToolPattern::Path {
                tools,
                pattern,
                id: usize::MAX,
            }
        }
        "WebFetch" => {
            let Some(domain) = spec.strip_prefix("domain:") else {
                return Err(format!(
                    "`{s}`: WebFetch takes `domain:example.com` (or `param:value`)"
                ));
            };
            ToolPattern::Domain(DomainPattern::parse(domain).map_err(|e| format!("`{s}`: {e}"))?)
        }
        "Agent" | "Task" => ToolPattern::Param {
            tools: names(name),
            field: "subagent_type".to_string(),
            value: Wildcard::parse(spec),
        },
        "Skill" => ToolPattern::Param {
            tools: names(name),
            field: "skill".to_string(),
            value: Wildcard::parse(spec),
        },
        _ if known => {
            return Err(format!(
                "`{s}`: hookd does not know what `{name}(…)` compares; use `{name}(param:value)` or a `when` condition"
            ))
        }
        _ => {
            return Ok(Parsed {
                pattern: ToolPattern::Never,
                warning: unknown_warning(),
            })
        }
    };
    Ok(Parsed {
        pattern,
        warning: None,
    })
}

fn parse_mcp(s: &str, name: &str, rest: &str, spec: Option<&str>) -> Result<Parsed, String> {
    if let Some(spec) = spec {
        let Some((param, value)) = param_form(spec.trim()) else {
            return Err(format!(
                "`{s}`: MCP tools take no specifier other than `param:value`"
            ));
        };
        if name.contains('*') || rest.split("__").count() < 2 {
            return Err(format!("`{s}`: `param:value` needs a full MCP tool name"));
        }
        return Ok(Parsed {
            pattern: ToolPattern::Param {
                tools: vec![name.to_string()],
                field: param.to_string(),
                value: Wildcard::parse(value),
            },
            warning: None,
        });
    }
    if rest == "*" {
        return Ok(Parsed {
            pattern: ToolPattern::McpPrefix("mcp__".to_string()),
            warning: None,
        });
    }
    let pattern = match rest.split_once("__") {
        None if !rest.is_empty() && !rest.contains('*') => {
            ToolPattern::McpPrefix(format!("mcp__{rest}__"))
        }
        Some((server, "*")) if !server.is_empty() && !server.contains('*') => {
            ToolPattern::McpPrefix(format!("mcp__{server}__"))
        }
        Some((server, tool)) if !server.is_empty() && !tool.is_empty() && !name.contains('*') => {
            ToolPattern::Tool(vec![name.to_string()])
        }
        _ => {
            return Err(format!(
                "`{s}`: expected `mcp__server`, `mcp__server__tool` or `mcp__server__*`"
            ))
        }
    };
    Ok(Parsed {
        pattern,
        warning: None,
    })
}

/// `ident:value` with a plain identifier before the colon.
fn param_form(spec: &str) -> Option<(&str, &str)> {
    let (param, value) = spec.split_once(':')?;
    let ident = !param.is_empty()
        && !param.starts_with(|c: char| c.is_ascii_digit())
        && param.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    ident.then_some((param, value))
}

/// A path tool specifier that is a path even though it has a colon.
fn looks_like_path(spec: &str) -> bool {
    let (param, _) = spec.split_once(':').unwrap_or((spec, ""));
    !matches!(
        param,
        "file_path"
            | "notebook_path"
            | "path"
            | "pattern"
            | "glob"
            | "offset"
            | "limit"
            | "old_string"
            | "new_string"
            | "replace_all"
            | "content"
            | "type"
            | "output_mode"
            | "cell_id"
            | "cell_type"
            | "edit_mode"
            | "new_source"
            | "pages"
    )
}

/// A glob with only `*` (any text, including spaces and `/`) for command and
/// parameter patterns; cheap to match and never needs a regex.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Wildcard {
    /// Literal pieces between stars; `parts.len() == stars + 1`.
    parts: Vec<String>,
}

impl Wildcard {
    /// Parse with `*` as the wildcard and `\*` as a literal star.
    pub fn parse(src: &str) -> Wildcard {
        let mut parts = vec![String::new()];
        let mut chars = src.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' if chars.peek() == Some(&'*') => {
                    chars.next();
                    parts.last_mut().unwrap().push('*');
                }
                '*' => parts.push(String::new()),
                c => parts.last_mut().unwrap().push(c),
            }
        }
        Wildcard { parts }
    }

    fn from_parts(parts: Vec<String>) -> Wildcard {
        Wildcard { parts }
    }

    /// Whether the whole of `text` matches.
    pub fn is_match(&self, text: &str) -> bool {
        let parts = &self.parts;
        if parts.len() == 1 {
            return text == parts[0];
        }
        let (first, last) = (&parts[0], &parts[parts.len() - 1]);
        if text.len() < first.len() + last.len()
            || !text.starts_with(first.as_str())
            || !text.ends_with(last.as_str())
        {
            return false;
        }
        let mut rest = &text[first.len()..text.len() - last.len()];
        for mid in &parts[1..parts.len() - 1] {
            match rest.find(mid.as_str()) {
                Some(i) => rest = &rest[i + mid.len()..],
                None => return false,
            }
        }
        true
    }

    /// The literal text before the first `*`.
    pub fn literal_prefix(&self) -> &str {
        &self.parts[0]
    }
}

/// What a `Bash(...)` pattern compares against one command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CommandPattern {
    /// `Bash`, `Bash(*)`: any command, even one that could not be read.
    Any,
    /// `Bash(npm test)`.
    Exact(String),
    /// Anything with a `*`; `bare` is set for a trailing ` *`, which also
    /// matches the command with nothing after it (`git push *` ⇒ `git push`).
    Wildcard {
        glob: Wildcard,
        bare: Option<String>,
    },
}

impl CommandPattern {
    /// Parse the text inside `Bash(...)`.
    pub fn parse(spec: &str) -> Result<CommandPattern, String> {
        // Legacy `prefix:*` is the same as `prefix *`.
        let spec = match spec.strip_suffix(":*") {
            Some(prefix) if !prefix.ends_with('\\') => {
                if prefix.trim().is_empty() {
                    return Ok(CommandPattern::Any);
                }
                format!("{prefix} *")
            }
            _ => spec.to_string(),
        };
        let words = pattern_words(&spec)?;
        if words.is_empty() {
            return Err("empty command pattern".to_string());
        }
        // Join words with single spaces, keeping track of wildcard stars.
        let mut parts = vec![String::new()];
        for (i, w) in words.iter().enumerate() {
            if i > 0 {
                parts.last_mut().unwrap().push(' ');
            }
            for piece in w {
                match piece {
                    Piece::Char(c) => parts.last_mut().unwrap().push(*c),
                    Piece::Star => parts.push(String::new()),
                }
            }
        }
        if parts.len() == 1 {
            return Ok(CommandPattern::Exact(parts.pop().unwrap()));
        }
        if parts.iter().all(String::is_empty) {
            return Ok(CommandPattern::Any);
        }
        let bare = (parts.len() >= 2
            && parts[parts.len() - 1].is_empty()
            && parts[parts.len() - 2].ends_with(' ')
            && words.last().is_some_and(|w| w == &[Piece::Star]))
        .then(|| {
            let mut b = parts[..parts.len() - 1].join("*");
            b.pop();
            b
        });
        Ok(CommandPattern::Wildcard {
            glob: Wildcard::from_parts(parts),
            bare,
        })
    }

    /// Whether the command text (one view of one segment) matches.
    pub fn is_match(&self, text: &str) -> bool {
        match self {
            CommandPattern::Any => true,
            CommandPattern::Exact(e) => text == e,
            CommandPattern::Wildcard { glob, bare } => {
                bare.as_deref() == Some(text) || glob.is_match(text)
            }
        }
    }

    /// The program word every match starts with, if the pattern fixes it;
    /// used to index patterns by program.
    pub fn program(&self) -> Option<&str> {
        let (text, whole) = match self {
            CommandPattern::Any => return None,
            CommandPattern::Exact(e) => (e.as_str(), true),
            CommandPattern::Wildcard { glob, .. } => (glob.literal_prefix(), false),
        };
        match text.split_once(' ') {
            Some((first, _)) => Some(first),
            None if whole => Some(text),
            // `ls*`: the star is inside the first word.
            None => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Char(char),
    Star,
}

/// Split a pattern into words like the shell reader does (quotes removed,
/// blanks collapsed, redirection operators as words of their own, so
/// `Bash(make 2>&1)` reads like the command `make 2>&1`), keeping unquoted `*`
/// as wildcards.
fn pattern_words(spec: &str) -> Result<Vec<Vec<Piece>>, String> {
    let mut words: Vec<Vec<Piece>> = Vec::new();
    let mut cur: Option<Vec<Piece>> = None;
    let mut chars = spec.chars();
    while let Some(c) = chars.next() {
        if c == '<' || c == '>' || (c == '&' && chars.as_str().starts_with('>')) {
            // The fd digits just before the operator belong to it.
            let fd: Vec<Piece> = match cur.take() {
                Some(w)
                    if w.iter()
                        .all(|p| matches!(p, Piece::Char(d) if d.is_ascii_digit())) =>
                {
                    w
                }
                Some(w) => {
                    words.push(w);
                    Vec::new()
                }
                None => Vec::new(),
            };
            let rest = format!("{c}{}", chars.as_str());
            let op = REDIRECTIONS
                .iter()
                .find(|op| rest.starts_with(*op))
                .copied()
                .unwrap_or("<");
            for _ in 1..op.chars().count() {
                chars.next();
            }
            let mut w = fd;
            w.extend(op.chars().map(Piece::Char));
            words.push(w);
            continue;
        }
        match c {
            ' ' | '\t' | '\n' => {
                if let Some(w) = cur.take() {
                    words.push(w);
                }
            }
            '\'' => {
                let w = cur.get_or_insert_with(Vec::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => w.push(Piece::Char(c)),
                        None => return Err(format!("unterminated `'` in `{spec}`")),
                    }
                }
            }
            '"' => {
                let w = cur.get_or_insert_with(Vec::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(n @ ('"' | '\\' | '$' | '`')) => w.push(Piece::Char(n)),
                            Some(n) => {
                                w.push(Piece::Char('\\'));
                                w.push(Piece::Char(n));
                            }
                            None => return Err(format!("unterminated `\"` in `{spec}`")),
                        },
                        Some(c) => w.push(Piece::Char(c)),
                        None => return Err(format!("unterminated `\"` in `{spec}`")),
                    }
                }
            }
            '\\' => {
                let w = cur.get_or_insert_with(Vec::new);
                if let Some(n) = chars.next() {
                    w.push(Piece::Char(n));
                }
            }
            '*' => cur.get_or_insert_with(Vec::new).push(Piece::Star),
            c => cur.get_or_insert_with(Vec::new).push(Piece::Char(c)),
        }
    }
    if let Some(w) = cur.take() {
        words.push(w);
    }
    Ok(words)
}

/// `WebFetch(domain:…)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DomainPattern {
    /// Lowercase host without a trailing dot.
    host: String,
    /// `*.host`: any subdomain of `host` (not `host` itself).
    subdomains: bool,
}

/// The outcome of comparing a URL with a domain pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tri {
    Yes,
    No,
    /// The URL could not be read: deny/ask rules treat it as a match.
    Unsure,
}

impl DomainPattern {
    fn parse(src: &str) -> Result<DomainPattern, String> {
        let s = src.trim().trim_end_matches('.').to_ascii_lowercase();
        let (host, subdomains) = match s.strip_prefix("*.") {
            Some(h) => (h.to_string(), true),
            None => (s, false),
        };
        if host.is_empty()
            || !host.chars().all(|c| {
                c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | ':' | '[' | ']')
            })
        {
            return Err(format!("`{src}` is not a domain name"));
        }
        Ok(DomainPattern { host, subdomains })
    }

    /// Compare with a URL's host.
    #[cfg(test)]
    pub fn check(&self, url: &str) -> Tri {
        self.check_host(url_host(url))
    }

    /// Compare with a host from [`url_host`]; `None` (no readable URL) is
    /// [`Tri::Unsure`].
    pub fn check_host(&self, host: Option<&str>) -> Tri {
        let Some(host) = host else {
            return Tri::Unsure;
        };
        let host = host.trim_end_matches('.');
        let hit = if self.subdomains {
            host.len() > self.host.len() + 1
                && host.as_bytes()[host.len() - self.host.len()..]
                    .eq_ignore_ascii_case(self.host.as_bytes())
                && host.as_bytes()[host.len() - self.host.len() - 1] == b'.'
        } else {
            host.eq_ignore_ascii_case(&self.host)
        };
        if hit {
            Tri::Yes
        } else {
            Tri::No
        }
    }
}

/// The host of an absolute URL (`scheme://[user@]host[:port]/…`).
pub(crate) fn url_host(url: &str) -> Option<&str> {
    let (_, rest) = url.trim().split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let host_port = authority.rsplit('@').next()?;
    let host = if let Some(v6) = host_port.strip_prefix('[') {
        &host_port[..v6.find(']')? + 2]
    } else {
        host_port.split(':').next()?
    };
    (!host.is_empty()).then_some(host)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(spec: &str) -> CommandPattern {
        match parse(&format!("Bash({spec})")).unwrap().pattern {
            ToolPattern::Command(c) => c,
            other => panic!("{spec}: {other:?}"),
        }
    }

    #[test]
    fn command_patterns() {
        // (pattern, command text, matches)
        let table: &[(&str, &str, bool)] = &[
            ("npm test", "npm test", true),
            ("npm test", "npm test --watch", false),
            ("npm  \"test\"", "npm test", true),
            ("git push:*", "git push", true),
            ("git push:*", "git push origin main", true),
            ("git push:*", "git pushy", false),
            ("git push *", "git push", true),
            ("git push *", "git push --force", true),
            ("git push *", "git pushy", false),
            ("ls*", "lsof", true),
            ("ls*", "ls", true),
            ("ls *", "lsof", false),
            ("git * main", "git push origin main", true),
            ("git * main", "git push origin main2", false),
            ("* --version", "node --version", true),
            ("*", "anything at all", true),
            (":*", "anything", true),
            ("rm -rf \\*", "rm -rf *", true),
            ("rm -rf \\*", "rm -rf x", false),
            ("rm -rf '*'", "rm -rf *", true),
            ("echo a*b*c", "echo aXbYc", true),
            ("echo a*b*c", "echo acb", false),
            ("make 2>&1", "make 2>& 1", true),
            ("echo hi>out.txt", "echo hi > out.txt", true),
            ("echo hi > *", "echo hi > out.txt", true),
            ("cmd &> /dev/null", "cmd &> /dev/null", true),
        ];
        for &(p, text, want) in table {
            assert_eq!(cmd(p).is_match(text), want, "Bash({p}) vs {text:?}");
        }
        assert_eq!(cmd("git push *").program(), Some("git"));
        assert_eq!(cmd("npm").program(), Some("npm"));
        assert_eq!(cmd("ls*").program(), None);
        assert_eq!(cmd("* x").program(), None);
        assert_eq!(cmd("*"), CommandPattern::Any);
        assert_eq!(
            parse("Bash").unwrap().pattern.as_command(),
            Some(&CommandPattern::Any)
        );
    }

    #[test]
    fn tool_forms() {
        let ok = [
            "Bash",
            "Bash(git push:*)",
            "Read(./.env*)",
            "Edit(src/**)",
            "Write(//tmp/x)",
            "WebFetch(domain:example.com)",
            "WebFetch(domain:*.example.com)",
            "mcp__github__create_issue",
            "mcp__github__*",
            "mcp__github",
            "mcp__*",
            "Agent(Explore)",
            "Task(general-purpose)",
            "Agent(model:opus)",
            "Bash(run_in_background:true)",
            "Skill(pdf)",
            "mcp__github__create_issue(repo:secret-*)",
        ];
        for s in ok {
            let p = parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
            assert!(p.warning.is_none(), "{s}: {:?}", p.warning);
        }
        for bad in [
            "",
            "Bash(",
            "Bash()",
            "Read()",
            "Ba sh",
            "WebFetch(example.com)",
            "Read(~bob/x)",
            "Bash(echo 'x)",
            "mcp__",
            "mcp____x",
            "mcp__a*__b",
            "mcp__github(x)",
            "TodoWrite(x)",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} should be an error");
        }
        for warn in ["Bsh", "Raed(x)", "FooTool"] {
            assert!(parse(warn).unwrap().warning.is_some(), "{warn} should warn");
        }
        assert!(matches!(
            parse("Bash(npm:*)").unwrap().pattern,
            ToolPattern::Command(_)
        ));
        assert!(matches!(
            parse("Bash(timeout:5)").unwrap().pattern,
            ToolPattern::Param { .. }
        ));
    }

    #[test]
    fn domains() {
        let table: &[(&str, &str, Tri)] = &[
            ("example.com", "https://example.com/x", Tri::Yes),
            ("example.com", "https://EXAMPLE.com./x", Tri::Yes),
            (
                "example.com",
                "https://user:pw@example.com:8443/x?q",
                Tri::Yes,
            ),
            ("example.com", "https://www.example.com/", Tri::No),
            ("example.com", "https://example.com.evil.io/", Tri::No),
            ("*.example.com", "https://www.example.com/", Tri::Yes),
            ("*.example.com", "https://example.com/", Tri::No),
            ("*.example.com", "https://badexample.com/", Tri::No),
            ("example.com", "not a url", Tri::Unsure),
        ];
        for &(d, url, want) in table {
            assert_eq!(
                DomainPattern::parse(d).unwrap().check(url),
                want,
                "{d} vs {url}"
            );
        }
    }

    #[test]
    fn wildcards() {
        let w = Wildcard::parse("opus*");
        assert!(w.is_match("opus-4"));
        assert!(!w.is_match("sonnet"));
        assert!(Wildcard::parse("a\\*").is_match("a*"));
        assert!(Wildcard::parse("*").is_match(""));
        assert!(!Wildcard::parse("ab*ba").is_match("aba"));
    }

    impl ToolPattern {
        fn as_command(&self) -> Option<&CommandPattern> {
            match self {
                ToolPattern::Command(c) => Some(c),
                _ => None,
            }
        }
    }
}
