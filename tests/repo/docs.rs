//! The documentation's links: every relative Markdown link in README.md,
//! the user guide (`docs/*.md`), ARCHITECTURE.md and protocol/PROTOCOL.md
//! names a file that exists, and every `#anchor` into a Markdown file names
//! one of its headings, slugged as GitHub slugs them. Pages move and
//! headings get renamed; this keeps the guide from rotting when they do.
//!
//! A reader, not a Markdown parser: inline links `[text](target)` outside
//! fenced code blocks and code spans. Links with a scheme (`https:`,
//! `mailto:`) are not followed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

/// The Markdown files whose links are checked, relative to the crate root;
/// every `*.md` of `docs/` is added to them.
const PAGES: &[&str] = &["README.md", "ARCHITECTURE.md", "protocol/PROTOCOL.md"];

/// The anchor GitHub gives a heading's text: the text as rendered
/// (a link's text without its target, code without its backticks),
/// lowercased, with everything but letters, digits, `-`, `_` and spaces
/// removed, and spaces made hyphens.
fn slug(heading: &str) -> String {
    rendered(heading)
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// `text` with each inline link `[words](target)` replaced by its words.
fn rendered(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.split_once("](").and_then(|(words, tail)| {
            let close = tail.find(')')?;
            Some((words, &tail[close + 1..]))
        }) {
            Some((words, tail)) if !words.contains('[') => {
                out.push_str(words);
                rest = tail;
            }
            _ => {
                out.push('[');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The lines of `markdown` that are prose: lines inside fenced code blocks
/// (```` ``` ```` or `~~~`, indented under a list item or not) are blanked,
/// so that a `# comment` in a shell block is not a heading and a `[x](y)`
/// in a sample is not a link.
fn prose_lines(markdown: &str) -> Vec<&str> {
    let mut fence: Option<&str> = None;
    markdown
        .lines()
        .map(|line| {
            let trimmed = line.trim_start();
            match fence {
                Some(marker) => {
                    if trimmed.starts_with(marker) {
                        fence = None;
                    }
                    ""
                }
                None => {
                    for marker in ["```", "~~~"] {
                        if trimmed.starts_with(marker) {
                            fence = Some(marker);
                            return "";
                        }
                    }
                    line
                }
            }
        })
        .collect()
}

/// Every anchor of a Markdown file: its ATX headings' slugs, a repeated
/// slug numbered `-1`, `-2`, … as GitHub numbers them.
fn anchors(markdown: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    for line in prose_lines(markdown) {
        let hashes = line.chars().take_while(|&c| c == '#').count();
        let Some(text) = line[hashes..].strip_prefix(' ') else {
            continue;
        };
        if !(1..=6).contains(&hashes) {
            continue;
        }
        let base = slug(text.trim().trim_end_matches('#').trim());
        let count = seen.entry(base.clone()).or_insert(0);
        out.insert(if *count == 0 {
            base.clone()
        } else {
            format!("{base}-{count}")
        });
        *count += 1;
    }
    out
}

/// `line` with its code spans (`` `…` ``) blanked.
fn without_code_spans(line: &str) -> String {
    let mut out = String::new();
    for (i, part) in line.split('`').enumerate() {
        if i % 2 == 0 {
            out.push_str(part);
        }
    }
    out
}

/// (line number, target) of every inline link in `markdown`.
fn links(markdown: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in prose_lines(markdown).into_iter().enumerate() {
        let line = without_code_spans(line);
        let mut rest = line.as_str();
        while let Some(at) = rest.find("](") {
            let tail = &rest[at + 2..];
            let end = tail.find(')').unwrap_or(tail.len());
            // `(target "title")`: the target is the first word.
            let target = tail[..end].split_whitespace().next().unwrap_or("");
            out.push((n + 1, target.to_string()));
            rest = &tail[end..];
        }
    }
    out
}

/// `path` with `.` and `..` resolved lexically (the files need not exist).
fn normalized(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Every broken link of the Markdown files `pages` (relative to `root`),
/// as `page:line: target: what is wrong`.
fn broken_links(root: &Path, pages: &[PathBuf]) -> Vec<String> {
    let mut broken = Vec::new();
    for page in pages {
        let text = std::fs::read_to_string(root.join(page))
            .unwrap_or_else(|e| panic!("{}: {e}", page.display()));
        for (line, target) in links(&text) {
            let has_scheme = target
                .split_once(':')
                .is_some_and(|(scheme, _)| scheme.chars().all(|c| c.is_ascii_alphabetic()));
            if has_scheme || target.is_empty() {
                continue;
            }
            let (file, anchor) = match target.split_once('#') {
                Some((file, anchor)) => (file, Some(anchor)),
                None => (target.as_str(), None),
            };
            let linked = if file.is_empty() {
                page.clone()
            } else {
                normalized(&page.parent().unwrap_or(Path::new("")).join(file))
            };
            let at = format!("{}:{line}: {target}", page.display());
            if !root.join(&linked).exists() {
                broken.push(format!("{at}: no file {}", linked.display()));
                continue;
            }
            let Some(anchor) = anchor else { continue };
            if linked.extension().is_none_or(|ext| ext != "md") {
                continue;
            }
            let headings = anchors(&std::fs::read_to_string(root.join(&linked)).unwrap());
            if !headings.contains(anchor) {
                broken.push(format!(
                    "{at}: {} has no heading whose anchor is #{anchor}",
                    linked.display()
                ));
            }
        }
    }
    broken
}

/// README.md, ARCHITECTURE.md, protocol/PROTOCOL.md and every `docs/*.md`.
fn documentation(root: &Path) -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> = PAGES.iter().map(PathBuf::from).collect();
    let mut guide: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/: the user guide")
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .map(|path| Path::new("docs").join(path.file_name().unwrap()))
        .collect();
    guide.sort();
    pages.extend(guide);
    pages
}

#[test]
fn every_relative_link_and_anchor_in_the_docs_resolves() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let pages = documentation(root);
    assert!(pages.len() > PAGES.len(), "docs/ holds no page: {pages:?}");
    let broken = broken_links(root, &pages);
    assert!(
        broken.is_empty(),
        "{} broken link(s) in the documentation (a page moved or a heading was renamed: \
         point the link at where the text is now):\n{}",
        broken.len(),
        broken.join("\n")
    );
}

#[test]
fn headings_are_slugged_as_github_slugs_them() {
    assert_eq!(
        slug("Registering the forwarder: `hookd install`"),
        "registering-the-forwarder-hookd-install"
    );
    assert_eq!(
        slug("Claude Code's dialog and hookd's clients race"),
        "claude-codes-dialog-and-hookds-clients-race"
    );
    assert_eq!(
        slug("`hookd doctor --probe`: prove the installed path works"),
        "hookd-doctor---probe-prove-the-installed-path-works"
    );
    assert_eq!(slug("7. Socket clients"), "7-socket-clients");
    assert_eq!(
        slug("See [the guide](docs/README.md) now"),
        "see-the-guide-now"
    );
    let twice = anchors("# Notes\n\n```sh\n# not a heading\n```\n\n## Notes\n");
    assert_eq!(
        twice,
        BTreeSet::from(["notes".to_string(), "notes-1".to_string()])
    );
}

#[test]
fn a_broken_file_or_anchor_is_reported_with_its_page_and_line() {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir(root.path().join("docs")).unwrap();
    std::fs::write(
        root.path().join("README.md"),
        "# Top\n\nSee [the rules](docs/rules.md#tool-syntax), [gone](docs/gone.md),\n\
         [up](#top), [missing](#nowhere) and `[code](not/a/link.md)`.\n\n\
         ```md\n[sample](nothing.md)\n```\n",
    )
    .unwrap();
    std::fs::write(
        root.path().join("docs/rules.md"),
        "# Rules\n\n## Tool syntax\n\n[back](../README.md#top), [far](../README.md#bottom)\n",
    )
    .unwrap();
    let pages = [PathBuf::from("README.md"), PathBuf::from("docs/rules.md")];
    assert_eq!(
        broken_links(root.path(), &pages),
        [
            "README.md:3: docs/gone.md: no file docs/gone.md",
            "README.md:4: #nowhere: README.md has no heading whose anchor is #nowhere",
            "docs/rules.md:5: ../README.md#bottom: README.md has no heading whose anchor is #bottom",
        ]
    );
}
