//! The splitter against bash itself: generated commands are run by a real
//! bash in which no program can run (`PATH` a directory that does not exist, every name an
//! unknown command) and `command_not_found_handle` records each simple
//! command bash would have run, with its words. Every command bash ran
//! must be one the splitter found, with the same program and words: a
//! command the splitter misses, or reads with another program, escapes the
//! rules on that program.
//!
//! Words are generated so that bash's expansion is the identity apart from
//! substitutions, which expand to nothing (their commands print to a file,
//! not to stdout) and are removed from the splitter's words before
//! comparing; the program must match without that removal, as rules see
//! it. Skipped without bash.

use super::shell::{split, without_substitutions};
use std::io::Write as _;
use std::process::{Command, Stdio};

/// How many commands are generated (fixed seed: a failure reproduces).
const CASES: usize = 400;

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// Programs that are neither builtins nor keywords, so bash looks them up.
const PROGRAMS: &[&str] = &["rm", "ls", "git", "npm", "cat", "grep", "curl", "make"];
const ARGS: &[&str] = &["a", "-rf", "x.txt", "--force", "main", "b/c"];

fn word(rng: &mut Rng, depth: usize) -> String {
    let plain = rng.pick(ARGS);
    match rng.below(9) {
        0 => format!("'{plain} q'"),
        1 => format!("\"{plain} d\""),
        2 => format!("$'{plain}'"),
        3 => format!("{plain}\\ e"),
        4 if depth < 2 => format!("$({}){plain}", command(rng, depth + 1)),
        5 if depth < 2 => format!("\"{plain}$({})\"", command(rng, depth + 1)),
        6 if depth < 1 => format!("`{}`{plain}", simple(rng, depth + 1)),
        _ => plain.to_string(),
    }
}

fn program(rng: &mut Rng, depth: usize) -> String {
    let name = rng.pick(PROGRAMS);
    match rng.below(10) {
        0 => format!("$(){name}"),
        1 if depth < 2 => format!("$({}){name}", simple(rng, depth + 1)),
        2 => format!("'{name}'"),
        3 => format!("\\{name}"),
        4 => format!("\"{name}\""),
        5 => format!("V=1 {name}"),
        _ => name.to_string(),
    }
}

fn simple(rng: &mut Rng, depth: usize) -> String {
    let mut text = program(rng, depth);
    for _ in 0..rng.below(3) {
        text.push(' ');
        text.push_str(&word(rng, depth));
    }
    text
}

fn command(rng: &mut Rng, depth: usize) -> String {
    let mut text = match rng.below(6) {
        0 if depth < 2 => format!("( {} )", command(rng, depth + 1)),
        1 if depth < 2 => format!("{{ {}; }}", command(rng, depth + 1)),
        _ => simple(rng, depth),
    };
    for _ in 0..rng.below(3) {
        let op = rng.pick(&[" && ", " || ", "; ", " | ", "\n", " & "]);
        text.push_str(op);
        text.push_str(&simple(rng, depth));
    }
    text
}

/// The simple commands bash runs for `command`, as word lists, once with
/// every command succeeding and once with every command failing (so both
/// sides of `&&` and `||` run in one of them). None when bash refuses the
/// syntax.
fn bash_commands(bash: &std::path::Path, command: &str) -> Option<Vec<Vec<String>>> {
    let mut all = Vec::new();
    for status in [0, 1] {
        let dir = tempfile::tempdir().unwrap();
        let record = dir.path().join("record");
        let script = format!(
            // One write per command (a record line), so commands run
            // at once (pipelines, `&`) do not interleave theirs.
            "command_not_found_handle() {{ local line; printf -v line '%s\\x1f' \"$@\"; printf '%s\\n' \"$line\" >>'{}'; return {status}; }}\n{command}\nwait\n",
            record.display(),
        );
        let mut child = Command::new(bash)
            .args(["--norc", "--noprofile", "-s"])
            .env_clear()
            .env("PATH", "/nonexistent-hookd-test")
            .current_dir(dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .ok()?;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(script.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        if String::from_utf8_lossy(&out.stderr).contains("syntax error") {
            return None;
        }
        let text = std::fs::read(&record).unwrap_or_default();
        for line in text.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            let words: Vec<String> = line
                .split(|b| *b == 0x1f)
                .filter(|w| !w.is_empty())
                .map(|w| String::from_utf8_lossy(w).into_owned())
                .collect();
            if !all.contains(&words) {
                all.push(words);
            }
        }
    }
    Some(all)
}

/// What disagrees for one command: each command bash ran that no segment
/// of the splitter has, with the same program and the same words.
fn disagreements(bash: &std::path::Path, command: &str) -> Option<Vec<String>> {
    let ran = bash_commands(bash, command)?;
    let parsed = split(command);
    let mut missing = Vec::new();
    for words in ran {
        let found = parsed.segments.iter().any(|segment| {
            segment.views.iter().any(|view| {
                let rest: Vec<String> = segment.words[view.start + 1..]
                    .iter()
                    .map(|w| without_substitutions(w).unwrap_or_else(|| w.clone()))
                    .filter(|w| !w.is_empty())
                    .collect();
                view.program() == words[0] && rest == words[1..]
            })
        });
        if !found {
            missing.push(format!(
                "bash ran {words:?}; the splitter read {:?}",
                parsed
                    .segments
                    .iter()
                    .map(|s| (
                        &s.words,
                        s.views.iter().map(|v| v.program()).collect::<Vec<_>>()
                    ))
                    .collect::<Vec<_>>()
            ));
        }
    }
    Some(missing)
}

#[test]
fn the_splitter_finds_every_command_bash_runs() {
    // Found here: bash itself runs with a PATH that finds nothing.
    let Some(bash) = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join("bash"))
            .find(|bash| bash.is_file())
    }) else {
        eprintln!("skipped: no bash on PATH");
        return;
    };
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut failures = Vec::new();
    let mut compared = 0;
    for _ in 0..CASES {
        let command = command(&mut rng, 0);
        if let Some(missing) = disagreements(&bash, &command) {
            compared += 1;
            for m in missing {
                failures.push(format!("{command:?}: {m}"));
            }
        }
    }
    assert!(
        compared > CASES / 2,
        "bash refused most commands: {compared}"
    );
    assert!(
        failures.is_empty(),
        "{} disagreements:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
