//! The layering invariants of ARCHITECTURE.md, checked on the sources (as
//! rust-analyzer's `tidy.rs` does): each rule reads every crate's code lines (`CRATE_SOURCES`)
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
        "crates/daemon/src/providers.rs",
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
        "crates/daemon/src/runs/options.rs",
        "an MCP server configuration's `type` (`stdio`, `sse`, `http`) in a `run` request's \
         options: the Agent SDK's option, passed through, not a frame",
    ),
    (
        "agent-output",
        "crates/core/src/rules/file.rs",
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
    for dir in CRATE_SOURCES {
        walk(&root.join(dir), &mut files);
    }
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

/// Where each crate of the workspace keeps its sources.
const CRATE_SOURCES: &[&str] = &[
    "src",
    "protocol/src",
    "crates/core/src",
    "crates/daemon/src",
    "crates/forwarder/src",
    "crates/team/src",
];

const RULES: &[Rule] = &[
    Rule {
        name: "nothing-below-the-cli-prints",
        covers: |path| {
            ["protocol/src/", "crates/core/src/", "crates/daemon/src/", "crates/team/src/"]
                .iter()
                .any(|dir| path.starts_with(dir))
        },
        forbidden: &[
            "print!",
            "println!",
            "eprint!",
            "eprintln!",
            "std::io::stdout",
            "std::io::stderr",
        ],
        permitted: &[],
        why: "the protocol, the core and the daemon return data (`CheckReport`, `FixtureReport`, \
              `Explanation` and their `Display`); where it is printed, and whether in colour, \
              is the command line's, so the daemon, the approver and the tests reuse them \
              without a terminal (Cargo keeps tokio and tracing out of these crates; this \
              rule keeps std's printing out)",
    },
    Rule {
        name: "cli-prints-through-stdout",
        covers: |path| path.starts_with("src/cli/"),
        forbidden: &["println!(", "print!("],
        permitted: &["eprintln!(", "eprint!("],
        why: "a command prints through `cli::output::Stdout` (`writeln!(Stdout, …)?`): std's `println!` panics when the reader went \
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
        covers: |path| !path.starts_with("protocol/src/"),
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
        covers: |path| !path.starts_with("protocol/src/"),
        forbidden: &["[\"type\"]", ".get(\"type\")"],
        permitted: &[],
        why: "a frame or a log line is read through the protocol's types (`Reply`, whose \
              unknown `type` is `Reply::Unknown`; `log::LogRecord` and `log::LogKind`): a \
              reader that matches the `type` string by hand misses the frames added later and \
              drifts from PROTOCOL.md unseen (an agent's own JSON is its dialect's, in \
              protocol/src/agent/)",
    },
    Rule {
        name: "agent-output",
        covers: |path| !path.starts_with("protocol/src/agent/"),
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
        why: "an agent's output JSON is spelled in its dialect module only (protocol/src/agent/), where \
              the golden tests pin it: a second spelling elsewhere goes stale when the agent \
              changes its protocol",
    },
    Rule {
        name: "agent-input",
        covers: |path| !path.starts_with("protocol/src/agent/"),
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
        why: "an agent's hook input is read by key in its dialect module only (protocol/src/agent/): \
              `Event::new` types it once, and the rest reads `Event::input`, \
              `Event::fields()` or `agent::claude::InputFields::of` (a rule's `when` \
              names fields as data, not here); a key spelled elsewhere goes stale when \
              the agent renames it, and the next agents' inputs need one reader to change",
    },
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
    }
    found
}

#[test]
fn the_layers_hold() {
    let sources = sources();
    assert!(
        sources
            .iter()
            .any(|s| s.path == "crates/forwarder/src/lib.rs"),
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
            "crates/core/src/rules/mod.rs",
            "    println!(\"{report}\");",
            "nothing-below-the-cli-prints",
        ),
        (
            "crates/daemon/src/policy/mod.rs",
            "    writeln!(std::io::stdout(), \"{report}\")?;",
            "nothing-below-the-cli-prints",
        ),
        (
            "protocol/src/log.rs",
            "    eprintln!(\"bad line\");",
            "nothing-below-the-cli-prints",
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
            "protocol/src/status.rs",
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
            "crates/core/src/event.rs",
            "    let call = tool_call_key(tool, &event.raw[\"tool_input\"]);",
            "agent-input",
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
        ("src/cli/status.rs", "    eprintln!(\"x\");"),
        ("protocol/src/frames.rs", "#[serde(tag = \"type\")]"),
        (
            "protocol/src/log.rs",
            "let kind = line.get(\"type\").and_then(Value::as_str);",
        ),
        (
            "protocol/src/agent/claude/input.rs",
            "if update.get(\"type\").and_then(Value::as_str) != Some(\"addRules\") {",
        ),
        (
            "protocol/src/agent/claude/output.rs",
            "\"hookSpecificOutput\"",
        ),
        (
            "crates/core/src/rules/check.rs",
            "impl fmt::Display for CheckReport {",
        ),
        (
            "protocol/src/agent/claude/input.rs",
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
    for dir in ["src", "protocol/src", "crates", "bin", "tests", "benches"] {
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
        "support/plain.rs",
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

/// The edges of one crate's module graph: for each top-level module of
/// the crate at `dir` (its `lib.rs`'s `mod`s), the other top-level modules
/// its code names as `crate::NAME` or `use crate::{NAME…}`. Test modules and
/// comments do not count; a re-exported crate (`pub use hookd_core::rules`)
/// is not a module of this crate, and Cargo already orders the crates.
fn module_graph(
    dir: &str,
    sources: &[Source],
) -> std::collections::BTreeMap<String, std::collections::BTreeSet<String>> {
    use std::collections::{BTreeMap, BTreeSet};
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let lib = std::fs::read_to_string(root.join("lib.rs")).unwrap();
    let modules: BTreeSet<String> = code_lines(&lib)
        .into_iter()
        .filter_map(|(_, line)| {
            let line = line.trim().trim_start_matches("pub ");
            let name = line.strip_prefix("mod ")?.strip_suffix(';')?;
            Some(name.to_string())
        })
        .collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = modules
        .iter()
        .map(|m| (m.clone(), BTreeSet::new()))
        .collect();
    for source in sources {
        let Some(rel) = source.path.strip_prefix(&format!("{dir}/")) else {
            continue;
        };
        let from = rel.split('/').next().unwrap().trim_end_matches(".rs");
        if !modules.contains(from) {
            continue;
        }
        // In a top-level module's own file, `super::` is the crate root.
        let top_level =
            !rel.contains('/') || rel.matches('/').count() == 1 && rel.ends_with("/mod.rs");
        for (_, line) in &source.lines {
            let roots = line
                .match_indices("crate::")
                .map(|(at, _)| at + "crate::".len())
                .chain(
                    line.match_indices("super::")
                        .filter(|_| top_level)
                        .map(|(at, _)| at + "super::".len()),
                );
            for at in roots.collect::<Vec<_>>() {
                let rest = &line[at..];
                let names: Vec<&str> = match rest.strip_prefix('{') {
                    Some(list) => list
                        .split([',', '}'])
                        .map(|n| n.trim().split("::").next().unwrap_or(""))
                        .collect(),
                    None => vec![rest
                        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                        .next()
                        .unwrap_or("")],
                };
                for to in names {
                    if to != from && modules.contains(to) {
                        graph.get_mut(from).unwrap().insert(to.to_string());
                    }
                }
            }
        }
    }
    graph
}

/// A cycle of `graph`, as the modules on it (first = last), if it has one.
fn find_cycle(
    graph: &std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut std::collections::BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_string());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = std::collections::BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

/// Inside each crate the modules form a DAG (Cargo orders the crates
/// themselves): a cycle is named with its path.
#[test]
fn no_crate_has_a_module_cycle() {
    let sources = sources();
    for dir in CRATE_SOURCES {
        let graph = module_graph(dir, &sources);
        if let Some(cycle) = find_cycle(&graph) {
            panic!(
                "{dir}: the modules {} import each other in a cycle; break it by moving \
                 what both need down, or by handing the higher one in from above",
                cycle.join(" -> ")
            );
        }
    }
}

/// The cycle check finds a cycle when there is one, and names it.
#[test]
fn the_cycle_check_finds_an_injected_cycle() {
    let graph = module_graph("crates/core/src", &sources());
    assert!(graph["grant"].contains("rules"), "{graph:?}");
    assert_eq!(find_cycle(&graph), None);
    let mut injected = graph.clone();
    injected
        .get_mut("rules")
        .unwrap()
        .insert("grant".to_string());
    let cycle = find_cycle(&injected).expect("rules -> grant -> rules is a cycle");
    assert_eq!(cycle.first(), cycle.last());
    assert!(cycle.contains(&"grant".to_string()) && cycle.contains(&"rules".to_string()));
}

/// Each crate's own dependency list is its layer: the forwarder is std,
/// the protocol crate and libc; the protocol crate without features is std
/// and serde_json (no derive); the core has no runtime, no logging and no
/// network. `cargo build -p hookd-forwarder` builds exactly this.
#[test]
fn each_crate_depends_only_on_its_layer() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let deps = |manifest: &str| -> Vec<(String, toml::Value)> {
        let text = std::fs::read_to_string(root.join(manifest)).unwrap();
        let doc: toml::Table = text.parse().unwrap();
        doc.get("dependencies")
            .and_then(toml::Value::as_table)
            .map(|t| t.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default()
    };
    let names = |deps: &[(String, toml::Value)]| -> Vec<String> {
        deps.iter().map(|(name, _)| name.clone()).collect()
    };
    let optional = |v: &toml::Value| v.get("optional").and_then(toml::Value::as_bool) == Some(true);

    let forwarder = deps("crates/forwarder/Cargo.toml");
    assert_eq!(names(&forwarder), ["hookd-protocol", "libc"]);
    let (_, protocol) = &forwarder[0];
    assert_eq!(
        protocol.get("features"),
        None,
        "the forwarder takes the protocol crate without its serde-derived frames"
    );

    let protocol = deps("protocol/Cargo.toml");
    let always: Vec<String> = protocol
        .iter()
        .filter(|(_, v)| !optional(v))
        .map(|(name, _)| name.clone())
        .collect();
    assert_eq!(always, ["libc", "serde", "serde_json"]);
    let text = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let workspace: toml::Table = text.parse().unwrap();
    let serde = &workspace["workspace"]["dependencies"]["serde"];
    assert_eq!(
        serde.get("default-features").and_then(toml::Value::as_bool),
        Some(false),
        "serde without features: its derive is the protocol's `frames` feature"
    );
    assert!(!serde["features"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f.as_str() == Some("derive")));

    // The daemon serves a socket and writes a log: no web framework, no
    // terminal, no command line (the faces and the CLI are the root's).
    let daemon = names(&deps("crates/daemon/Cargo.toml"));
    for forbidden in [
        "axum",
        "hyper",
        "hyper-util",
        "clap",
        "ratatui",
        "crossterm",
        "anstream",
        "anstyle",
    ] {
        assert!(
            !daemon.iter().any(|name| name == forbidden),
            "crates/daemon/Cargo.toml depends on {forbidden}"
        );
    }

    for forbidden in [
        "tokio",
        "tokio-util",
        "tracing",
        "nix",
        "axum",
        "hyper",
        "ureq",
        "notify",
        "clap",
    ] {
        for manifest in ["crates/core/Cargo.toml", "protocol/Cargo.toml"] {
            let deps = deps(manifest);
            let found = deps
                .iter()
                .find(|(name, v)| name == forbidden && !optional(v));
            assert!(found.is_none(), "{manifest} depends on {forbidden}");
        }
    }
}

/// One module style: a module with submodules is `x/mod.rs`, never `x.rs`
/// beside `x/` (a reader looks in one place for a module's root).
#[test]
fn one_module_style() {
    fn walk(dir: &Path, found: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if path.with_extension("rs").is_file() {
                    found.push(format!(
                        "{} beside {}",
                        path.with_extension("rs").display(),
                        path.display()
                    ));
                }
                walk(&path, found);
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    for dir in CRATE_SOURCES.iter().chain(&["tests"]) {
        walk(&root.join(dir), &mut found);
    }
    assert!(
        found.is_empty(),
        "turn each into x/mod.rs (`git mv x.rs x/mod.rs`):\n{}",
        found.join("\n")
    );
}
