//! The layering invariants of ARCHITECTURE.md, checked on the sources (as
//! rust-analyzer's `tidy.rs` does): each rule reads `src/`'s code lines
//! (comments, the `#[cfg(test)]` module that ends a file, and files that are
//! test modules, `#[cfg(test)] mod NAME;`, are skipped)
//! and names the file, the line and the invariant it breaks, and why the
//! invariant exists. A substring check, not a parser: it misses a
//! violation spelled through an alias, and that is the trade for a test
//! anyone can read and extend.

use std::path::{Path, PathBuf};

/// Files that break a rule today, each with the reason it is allowed for
/// now; the test prints them so they stay visible. A fixed file must leave
/// this list (an entry that matches nothing fails the test).
const ALLOWED: &[(&str, &str, &str)] = &[
    (
        "frame-tags",
        "src/providers.rs",
        "`{\"type\": \"disabled\"}` is the Agent SDK's `thinking` option (a provider's SDK \
         options), not a frame; it could move to the adapter messages in protocol/adapter.rs",
    ),
    (
        "frame-reads",
        "src/install/settings.rs",
        "a settings file's hook handler `type` (`command`, `http`): the agent's configuration, \
         not a frame or a log line",
    ),
    (
        "frame-reads",
        "src/daemon/runs/options.rs",
        "an MCP server configuration's `type` (`stdio`, `sse`, `http`) in a `run` request's \
         options: the Agent SDK's option, passed through, not a frame",
    ),
    (
        "agent-output",
        "src/rules/file.rs",
        "a rules-file error tells the user their `context` reason becomes Claude Code's \
         additionalContext: user-facing text, not output built outside the dialect",
    ),
];

struct Source {
    path: String,
    /// (line number, code) for every line before the file's test module,
    /// comments excluded.
    lines: Vec<(usize, String)>,
}

fn sources() -> Vec<Source> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    walk(&root.join("src"), &mut files);
    walk(&root.join("bin"), &mut files);
    files.sort();
    let texts: Vec<(PathBuf, String)> = files
        .into_iter()
        .map(|file| {
            let text = std::fs::read_to_string(&file).unwrap();
            (file, text)
        })
        .collect();
    let test_only: Vec<PathBuf> = texts
        .iter()
        .flat_map(|(file, text)| test_modules(file, text))
        .collect();
    texts
        .into_iter()
        .filter(|(file, _)| !test_only.contains(file))
        .map(|(file, text)| {
            let lines = code_lines(&text)
                .into_iter()
                .filter(|(_, l)| !l.trim_start().starts_with("//"))
                .map(|(n, l)| (n, l.to_string()))
                .collect();
            Source {
                path: file
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
                lines,
            }
        })
        .collect()
}

/// `text`'s numbered lines up to the `#[cfg(test)]` that opens an inline
/// test module (`mod tests {`); a `#[cfg(test)]` on a declaration
/// (`mod tests;`) or an item does not end the code.
fn code_lines(text: &str) -> Vec<(usize, &str)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut code = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if line.trim() == "#[cfg(test)]" {
            let item = lines[i + 1..]
                .iter()
                .map(|l| l.trim())
                .find(|l| !l.starts_with("#[") && !l.starts_with("//"));
            if item.is_some_and(|l| l.starts_with("mod ") && l.ends_with('{')) {
                break;
            }
        }
        code.push((i + 1, *line));
    }
    code
}

/// The files of the test-only modules `file` declares
/// (`#[cfg(test)] mod NAME;`).
fn test_modules(file: &Path, text: &str) -> Vec<PathBuf> {
    let dir = match file.file_name().and_then(|n| n.to_str()) {
        Some("mod.rs" | "lib.rs" | "main.rs") => file.parent().unwrap().to_path_buf(),
        _ => file.with_extension(""),
    };
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    lines
        .windows(2)
        .filter(|pair| pair[0] == "#[cfg(test)]")
        .filter_map(|pair| pair[1].strip_prefix("mod ")?.strip_suffix(';'))
        .flat_map(|name| {
            [
                dir.join(format!("{name}.rs")),
                dir.join(name).join("mod.rs"),
            ]
        })
        .collect()
}

/// One rule: which files it covers, what a line must not contain, and why.
struct Rule {
    name: &'static str,
    covers: fn(&str) -> bool,
    forbidden: &'static [&'static str],
    /// Spellings that contain a forbidden one but are allowed: blanked out
    /// of a line before the check (`crate::protocol::json` under
    /// `crate::protocol`).
    permitted: &'static [&'static str],
    why: &'static str,
}

/// The core: pure data in, data out.
fn is_core(path: &str) -> bool {
    [
        "src/event.rs",
        "src/decision.rs",
        "src/redact.rs",
        "src/config.rs",
        "src/providers.rs",
        "src/time.rs",
        "src/hex.rs",
        "src/otlp/config.rs",
        "src/otlp/wire.rs",
        "src/otlp/records.rs",
    ]
    .contains(&path)
        || path.starts_with("src/rules/")
        || path.starts_with("src/agent/")
}

/// The forwarder and what it uses; it is built alone, std + serde_json.
fn is_forwarder(path: &str) -> bool {
    [
        "src/forwarder.rs",
        "src/forwarder/sys.rs",
        "src/paths.rs",
        "src/protocol/forwarder.rs",
        "src/protocol/json.rs",
    ]
    .contains(&path)
}

const RULES: &[Rule] = &[
    Rule {
        name: "core-is-pure",
        covers: is_core,
        forbidden: &[
            "tokio::",
            "use tokio",
            "tracing::",
            "use tracing",
            "crate::daemon",
            "crate::cli",
            "crate::client",
            "crate::run_client",
            "crate::protocol",
        ],
        permitted: &["crate::protocol::json", "crate::protocol::log::LogKind"],
        why: "the core (events, decisions, rules, redaction, config, providers, time, the agent \
              dialects, the OTLP mapping) is data in, data out: replay, the CLI's reports and the tests judge \
              exactly as the daemon does, without a runtime or a daemon to stand up; the wire \
              is built on the core (protocol re-exports `Harness` and `Remember`), never the \
              reverse, but for the std-only JSON scanner `protocol::json` and the log line's \
              tag `protocol::log::LogKind` (a fieldless enum: which lines the OTLP mapping \
              maps is the protocol's to say)",
    },
    Rule {
        name: "rules-return-data",
        covers: |path| path.starts_with("src/rules/"),
        forbidden: &[
            "print!",
            "println!",
            "eprint!",
            "eprintln!",
            "std::io::stdout",
            "std::io::stderr",
            "anstyle",
            "anstream",
            "Display for CheckReport",
            "Display for FixtureReport",
            "Display for Explanation",
        ],
        permitted: &[],
        why: "the rules module returns data (`CheckReport`, `FixtureReport`, `Explanation`); how \
              `hookd rules check|test|explain` print it, and in what colour, is the CLI's \
              (src/cli/rules.rs, `Display` included), so the engine can be reused by the daemon, the approver and \
              the tests without dragging a renderer along",
    },
    Rule {
        name: "cli-prints-through-stdout",
        covers: |path| path.starts_with("src/cli/"),
        forbidden: &["println!(", "print!("],
        permitted: &["eprintln!(", "eprint!("],
        why: "a command prints through `cli::output::Stdout` (`writeln!(Stdout, …)?`; bin/hookd.rs \
              shadows `println!` with that): std's `println!` panics when the reader went \
              away (`hookd status | head -1`) and writes colour where `--color`/`NO_COLOR` \
              forbid it",
    },
    Rule {
        name: "replay-judges-offline",
        covers: |path| path == "src/replay.rs",
        forbidden: &["crate::daemon"],
        permitted: &[],
        why: "`hookd replay` judges the log with the core alone (`Evaluation::answer` is the \
              one action → verdict mapping): reaching into the daemon for it makes the offline \
              tool depend on the runtime it is meant to check",
    },
    Rule {
        name: "frame-tags",
        covers: |path| !path.starts_with("src/protocol/"),
        forbidden: &[
            "\"type\":",
            "\"type\" :",
            "\\\"type\\\"",
            "tag = \"type\"",
            "rename = \"type\"",
        ],
        permitted: &[],
        why: "`protocol` is the only place that knows frame shapes: a frame built elsewhere \
              drifts from PROTOCOL.md and the vectors unseen",
    },
    Rule {
        name: "frame-reads",
        covers: |path| !path.starts_with("src/protocol/") && !path.starts_with("src/agent/"),
        forbidden: &["[\"type\"]", ".get(\"type\")"],
        permitted: &[],
        why: "a frame or a log line is read through the protocol's types (`Reply`, whose \
              unknown `type` is `Reply::Unknown`; `log::LogRecord` and `log::LogKind`): a \
              reader that matches the `type` string by hand misses the frames added later and \
              drifts from PROTOCOL.md unseen (an agent's own JSON is its dialect's, in \
              src/agent/)",
    },
    Rule {
        name: "agent-output",
        covers: |path| !path.starts_with("src/agent/"),
        forbidden: &[
            "hookSpecificOutput",
            "permissionDecision",
            "additionalContext",
            "updatedInput",
            "systemMessage",
            "suppressOutput",
            "stopReason",
            "\"behavior\"",
        ],
        permitted: &[],
        why: "an agent's output JSON is spelled in its dialect module only (src/agent/), where \
              the golden tests pin it: a second spelling elsewhere goes stale when the agent \
              changes its protocol",
    },
    Rule {
        name: "agent-input",
        covers: |path| !path.starts_with("src/agent/"),
        forbidden: &[
            "[\"hook_event_name\"]",
            ".get(\"hook_event_name\")",
            "[\"tool_name\"]",
            ".get(\"tool_name\")",
            "[\"tool_input\"]",
            ".get(\"tool_input\")",
            "[\"stop_hook_active\"]",
            ".get(\"stop_hook_active\")",
            "[\"permission_suggestions\"]",
            ".get(\"permission_suggestions\")",
            // Records and frames have a `session_id`, a `cwd` and a
            // `prompt` of their own: these keys are an input's when read
            // of one.
            "input[\"session_id\"]",
            "input.get(\"session_id\")",
            "raw[\"session_id\"]",
            "raw.get(\"session_id\")",
            "input[\"agent_id\"]",
            "input.get(\"agent_id\")",
            "raw[\"agent_id\"]",
            "raw.get(\"agent_id\")",
            "input[\"cwd\"]",
            "input.get(\"cwd\")",
            "raw[\"cwd\"]",
            "raw.get(\"cwd\")",
            "input[\"prompt\"]",
            "input.get(\"prompt\")",
            "raw[\"prompt\"]",
            "raw.get(\"prompt\")",
        ],
        permitted: &[],
        why: "an agent's hook input is read by key in its dialect module only (src/agent/): \
              `Event::new` types it once, and the rest reads `Event::input`, \
              `Event::fields()` or `agent::claude::InputFields::of` (a rule's `when` \
              names fields as data, not here); a key spelled elsewhere goes stale when \
              the agent renames it, and the next agents' inputs need one reader to change",
    },
    Rule {
        name: "forwarder-is-small",
        covers: is_forwarder,
        forbidden: &[
            "tokio",
            "tracing",
            "uuid::",
            "nix::",
            "anyhow",
            "bytes::",
            "futures_util",
            "jiff",
            "regex",
            "crate::daemon",
            "crate::rules",
            "crate::client",
            "crate::config",
        ],
        permitted: &[],
        why: "the forwarder runs once per hook: its start-up is on every tool call's path and \
              it must work when the daemon's dependencies do not, so it uses std, serde_json, \
              libc (the few system calls std lacks) and its own modules only",
    },
];

/// The forwarder's `use` lines may name only these roots.
const FORWARDER_USES: &[&str] = &[
    "use std::",
    "use serde::",
    "use serde_json::",
    "use libc",
    "use crate::paths",
    "use crate::forwarder",
    "use crate::protocol::forwarder",
    "use crate::protocol::json",
    "use crate::protocol::{",
    "use crate::agent::claude",
    // The dispatch to each agent's fallback, env allowlist and universal
    // deny: the forwarder answers in its agent's own form. Only output
    // rendering is reached (std + serde_json); the forwarder benchmark
    // watches its size and start-up.
    "use crate::agent::Agent",
    "use super::",
    "use sys::",
];

/// `pattern` occurs in `line` not as the tail of a longer name
/// (`unix::` does not contain `nix::`).
fn contains_token(line: &str, pattern: &str) -> bool {
    line.match_indices(pattern).any(|(at, _)| {
        let before = line[..at].chars().next_back();
        let starts_word = pattern.starts_with(|c: char| c.is_alphanumeric() || c == '_');
        !starts_word || !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

fn violations(sources: &[Source]) -> Vec<(String, &'static str, String)> {
    let mut found = Vec::new();
    for source in sources {
        for rule in RULES {
            if !(rule.covers)(&source.path) {
                continue;
            }
            for (n, line) in &source.lines {
                let line = rule
                    .permitted
                    .iter()
                    .fold(line.clone(), |line, ok| line.replace(ok, ""));
                if let Some(bad) = rule.forbidden.iter().find(|f| contains_token(&line, f)) {
                    found.push((
                        source.path.clone(),
                        rule.name,
                        format!(
                            "{}:{n}: `{bad}` breaks `{}`: {}\n    {}",
                            source.path,
                            rule.name,
                            rule.why,
                            line.trim()
                        ),
                    ));
                }
            }
        }
        if is_forwarder(&source.path) {
            for (n, line) in &source.lines {
                let line = line.trim_start().trim_start_matches("pub ");
                if line.starts_with("use ") && !FORWARDER_USES.iter().any(|u| line.starts_with(u)) {
                    found.push((
                        source.path.clone(),
                        "forwarder-is-small",
                        format!(
                            "{}:{n}: `{line}` breaks `forwarder-is-small`: the forwarder imports \
                             std, serde, serde_json and its own modules only (see FORWARDER_USES)",
                            source.path
                        ),
                    ));
                }
            }
        }
    }
    found
}

#[test]
fn the_layers_hold() {
    let sources = sources();
    assert!(
        sources.iter().any(|s| s.path == "src/forwarder.rs"),
        "tidy found no sources"
    );
    let found = violations(&sources);
    for (rule, path, why) in ALLOWED {
        println!("tidy allows {path} under `{rule}` for now: {why}");
        assert!(
            found.iter().any(|(p, r, _)| p == path && r == rule),
            "{path} no longer breaks `{rule}`: remove it from ALLOWED"
        );
    }
    let broken: Vec<&str> = found
        .iter()
        .filter(|(path, rule, _)| !ALLOWED.iter().any(|(r, p, _)| p == path && r == rule))
        .map(|(_, _, message)| message.as_str())
        .collect();
    assert!(
        broken.is_empty(),
        "{} layering invariant(s) broken:\n{}",
        broken.len(),
        broken.join("\n")
    );
}

/// Each rule fires on a line that breaks it (the rules cannot silently
/// match nothing), and only in the files it covers.
#[test]
fn each_rule_catches_what_it_forbids() {
    let source = |path: &str, line: &str| Source {
        path: path.into(),
        lines: vec![(7, line.into())],
    };
    let cases = [
        (
            "src/rules/eval.rs",
            "use tokio::sync::Mutex;",
            "core-is-pure",
        ),
        ("src/event.rs", "    tracing::info!(\"x\");", "core-is-pure"),
        (
            "src/redact.rs",
            "use crate::daemon::Shared;",
            "core-is-pure",
        ),
        (
            "src/daemon/hub.rs",
            "json!({\"type\": \"event\"})",
            "frame-tags",
        ),
        (
            "src/tail.rs",
            "out[\"hookSpecificOutput\"] = x;",
            "agent-output",
        ),
        (
            "src/approve/state.rs",
            "        match frame[\"type\"].as_str().unwrap_or(\"\") {",
            "frame-reads",
        ),
        (
            "src/otlp/records.rs",
            "    let kind = json.get(\"type\").and_then(Json::as_str);",
            "frame-reads",
        ),
        (
            "src/event.rs",
            "use crate::protocol::Harness;",
            "core-is-pure",
        ),
        (
            "src/decision.rs",
            "pub remembered: Option<crate::protocol::Remember>,",
            "core-is-pure",
        ),
        (
            "src/rules/check.rs",
            "impl fmt::Display for CheckReport {",
            "rules-return-data",
        ),
        (
            "src/rules/fixtures.rs",
            "let ok = anstyle::AnsiColor::Green.on_default();",
            "rules-return-data",
        ),
        (
            "src/rules/mod.rs",
            "    println!(\"{report}\");",
            "rules-return-data",
        ),
        (
            "src/replay.rs",
            "use crate::daemon::controller::answer_of;",
            "replay-judges-offline",
        ),
        (
            "src/cli/status.rs",
            "    println!(\"log: {}\", status.log.display());",
            "cli-prints-through-stdout",
        ),
        (
            "src/daemon/stops.rs",
            "    let session = input.get(\"session_id\")?.as_str()?;",
            "agent-input",
        ),
        (
            "src/daemon/hook.rs",
            "    let call = tool_call_key(tool, &event.raw[\"tool_input\"]);",
            "agent-input",
        ),
        ("src/forwarder.rs", "use uuid::Uuid;", "forwarder-is-small"),
        (
            "src/paths.rs",
            "use crate::rules::RuleSet;",
            "forwarder-is-small",
        ),
    ];
    for (path, line, rule) in cases {
        let found = violations(&[source(path, line)]);
        assert!(
            found
                .iter()
                .any(|(_, r, m)| *r == rule && m.starts_with(&format!("{path}:7: "))),
            "{path}: `{line}` should break `{rule}`: {found:?}"
        );
    }
    let fine = [
        ("src/daemon/hub.rs", "use tokio::sync::Mutex;"),
        ("src/protocol/mod.rs", "#[serde(tag = \"type\")]"),
        (
            "src/protocol/log.rs",
            "let kind = line.get(\"type\").and_then(Value::as_str);",
        ),
        (
            "src/agent/claude/input.rs",
            "if update.get(\"type\").and_then(Value::as_str) != Some(\"addRules\") {",
        ),
        ("src/agent/claude/output.rs", "\"hookSpecificOutput\""),
        ("src/daemon/mod.rs", "use uuid::Uuid;"),
        ("src/paths.rs", "use std::os::unix::fs::MetadataExt;"),
        (
            "src/event.rs",
            "let name = crate::protocol::json::find_event_name(text);",
        ),
        ("src/cli/rules.rs", "impl fmt::Display for CheckReport {"),
        (
            "src/agent/claude/input.rs",
            "            tool_input: raw.get(\"tool_input\"),",
        ),
        (
            "src/approve/state.rs",
            "    session: record[\"session_id\"].as_str().map(str::to_owned),",
        ),
        ("src/tail.rs", "use crate::daemon::log::Rotation;"),
    ];
    for (path, line) in fine {
        assert!(
            violations(&[source(path, line)]).is_empty(),
            "{path}: `{line}` is allowed there"
        );
    }
}

/// A test module's file is not code: a declaration `#[cfg(test)] mod x;`
/// removes `x.rs`, and only an inline `#[cfg(test)] mod tests {` ends a
/// file's code (a `#[cfg(test)]` on a declaration does not).
#[test]
fn test_modules_are_skipped_and_declarations_are_not_the_end() {
    let text = "mod a;\n#[cfg(test)]\nmod b;\nuse x;\n#[cfg(test)]\nmod tests {\n    use y;\n}\n";
    let lines: Vec<&str> = code_lines(text).into_iter().map(|(_, l)| l).collect();
    assert_eq!(lines, ["mod a;", "#[cfg(test)]", "mod b;", "use x;"]);
    assert_eq!(
        test_modules(Path::new("/r/src/rules/mod.rs"), text),
        [
            PathBuf::from("/r/src/rules/b.rs"),
            PathBuf::from("/r/src/rules/b/mod.rs")
        ]
    );
    assert_eq!(
        test_modules(Path::new("/r/src/daemon.rs"), text)[0],
        PathBuf::from("/r/src/daemon/b.rs")
    );
}

/// The lines of `text` that open an `unsafe` block with no `SAFETY:`
/// comment on them or on the [`SAFETY_WINDOW`] lines above (the comment
/// may sit above the statement the block is part of).
fn unsafe_blocks_without_safety(text: &str) -> Vec<usize> {
    let lines: Vec<&str> = text.lines().collect();
    let opens_block = |line: &str| {
        let code = line.split("//").next().unwrap_or("");
        code.contains("unsafe {") || code.trim_end().ends_with("unsafe")
    };
    (0..lines.len())
        .filter(|&i| opens_block(lines[i]))
        .filter(|&i| {
            !lines[i.saturating_sub(SAFETY_WINDOW)..=i]
                .iter()
                .any(|l| l.contains("SAFETY:"))
        })
        .map(|i| i + 1)
        .collect()
}

/// How far above an `unsafe` block its `SAFETY:` comment may be.
const SAFETY_WINDOW: usize = 6;

/// Every `unsafe` block, in the code and in the tests, says why it is
/// sound in a `// SAFETY:` comment just above it: the reader must not have
/// to work it out, and a change that breaks the reason shows in review.
#[test]
fn every_unsafe_block_says_why_it_is_sound() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() && !path.ends_with("node_modules") {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    for dir in ["src", "bin", "tests", "benches"] {
        walk(&root.join(dir), &mut files);
    }
    files.sort();
    let mut missing = Vec::new();
    // This file's examples of bare blocks are strings, not code.
    files.retain(|f| !f.ends_with("tests/repo/tidy.rs"));
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for line in unsafe_blocks_without_safety(&text) {
            missing.push(format!(
                "{}:{line}: an unsafe block without a `// SAFETY:` comment saying why it is sound",
                file.strip_prefix(root).unwrap().display()
            ));
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
    // The check itself catches a bare block, and accepts a commented one.
    let bare = "let a = 1;\nlet fd = unsafe { borrow(3) };\n";
    assert_eq!(unsafe_blocks_without_safety(bare), [2]);
    let said = "// SAFETY: fd 3 is open.\nlet fd = unsafe { borrow(3) };\n";
    assert_eq!(unsafe_blocks_without_safety(said), Vec::<usize>::new());
}

/// Programs a support harness may start without a home of its own: `kill`
/// (it ends a pid) and the forwarder (std-only: it reads its socket's path
/// from the environment and writes nothing but stdout and stderr).
const NO_HOME_NEEDED: [&str; 2] = ["\"kill\"", "forwarder_bin()"];

/// The `Command::new` calls in `text` (by line) whose command is started
/// (`.spawn()`, `.output()`, `.status()`) without a private home: neither
/// `private_home` nor a `"HOME"` of its own on the way.
fn started_without_a_home(text: &str) -> Vec<usize> {
    let mut found = Vec::new();
    for (at, _) in text.match_indices("Command::new(") {
        let program = &text[at + "Command::new(".len()..];
        if NO_HOME_NEEDED.iter().any(|p| program.starts_with(p)) {
            continue;
        }
        let end = [".spawn()", ".output()", ".status()"]
            .iter()
            .filter_map(|start| text[at..].find(start))
            .min()
            .map_or(text.len(), |end| at + end);
        let setup = &text[at..end];
        if !setup.contains("private_home") && !setup.contains("\"HOME\"") {
            found.push(text[..at].matches('\n').count() + 1);
        }
    }
    found
}

/// Every program the test harnesses (`tests/support/`) start gets a home
/// of its own (`process::private_home`: HOME and the XDG directories in a
/// temp dir), so the suite never writes into the real home — as Chromium
/// did, creating `~/.config/chromium` and `~/.cache/dconf`. `scripts/test`
/// also checks the real home around the whole suite (`scripts/home-guard`).
#[test]
fn support_harnesses_start_programs_with_a_home_of_their_own() {
    let support = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&support)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    files.sort();
    let mut missing = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for line in started_without_a_home(&text) {
            missing.push(format!(
                "tests/support/{}:{line}: a program started with the real HOME; pass its Command through process::private_home",
                file.file_name().unwrap().to_string_lossy()
            ));
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
    // The check itself: a bare spawn is caught, a homed one and kill pass.
    let bare = "let c = Command::new(\"chromium\")\n    .arg(\"x\")\n    .spawn();\n";
    assert_eq!(started_without_a_home(bare), [1]);
    let homed =
        "let mut c = Command::new(\"chromium\");\nprocess::private_home(&mut c, d).spawn();\n";
    assert_eq!(started_without_a_home(homed), Vec::<usize>::new());
    let kill = "Command::new(\"kill\").arg(\"1\").status();\n";
    assert_eq!(started_without_a_home(kill), Vec::<usize>::new());
}

/// Test files that keep a hand-written deadline, how many, and why; any
/// other file, or one more, fails [`tests_wait_through_the_poll_helpers`].
const OWN_DEADLINES: &[(&str, usize, &str)] = &[
    (
        "support/process.rs",
        3,
        "the helpers themselves: poll_reporting, poll_last, wait_with_deadline",
    ),
    (
        "support/agent_cli.rs",
        1,
        "the mock's start: it watches the mock's exit too, and kills it before panicking with \
         its stderr",
    ),
    (
        "end_to_end/e2e_approve.rs",
        1,
        "a blocking channel read (recv_timeout on what is left), not a poll",
    ),
    (
        "daemon/log.rs",
        3,
        "two blocking channel reads bounded together, and a spin (yield_now) that \
         keeps the log writer rotating many times within one of tail's polls",
    ),
];

/// How many hand-written deadlines (`let deadline = …Instant::now()`) `text` has.
fn own_deadlines(text: &str) -> usize {
    text.lines()
        .filter(|l| l.contains("let deadline") && l.contains("Instant::now()"))
        .count()
}

/// A test waits through `poll_until`, `poll_for`, `poll_reporting` or
/// `poll_last` (tests/support/process.rs), never a deadline loop of its
/// own: one helper polls the same way everywhere, and its failure names
/// what it waited for and what it last saw.
#[test]
fn tests_wait_through_the_poll_helpers() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    // tests/*.rs, tests/support/ and each area's tests/<area>/*.rs; the npm
    // folders' node_modules are not ours.
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() && !path.ends_with("node_modules") {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(&tests, &mut files);
    files.sort();
    let mut wrong = Vec::new();
    for file in &files {
        let name = file.strip_prefix(&tests).unwrap().to_string_lossy();
        if name == "repo/tidy.rs" {
            continue; // this test's own examples
        }
        let found = own_deadlines(&std::fs::read_to_string(file).unwrap());
        let allowed = OWN_DEADLINES
            .iter()
            .find(|(f, ..)| *f == name)
            .map_or(0, |(_, n, _)| *n);
        if found != allowed {
            wrong.push(format!(
                "tests/{name}: {found} hand-written deadlines, {allowed} allowed; wait with \
                 process::poll_until/poll_for/poll_reporting/poll_last (or update OWN_DEADLINES \
                 when one is removed)"
            ));
        }
    }
    for (file, _, why) in OWN_DEADLINES {
        eprintln!("own deadlines allowed in tests/{file}: {why}");
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert_eq!(
        own_deadlines("    let deadline = Instant::now() + WAIT;\n    let deadline = 5;\n"),
        1
    );
}
