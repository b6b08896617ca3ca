//! The files a Codex `apply_patch` call touches.
//!
//! Codex's edit tool takes one freeform patch (the hook sees it as
//! `tool_input.command`):
//!
//! ```text
//! *** Begin Patch
//! *** Add File: out.txt
//! +patched by apply_patch
//! *** Update File: hello.txt
//! *** Move to: greeting.txt
//! @@
//! -hello world
//! +hello patched
//! *** Delete File: old.txt
//! *** End Patch
//! ```
//!
//! Only the file headers matter to the rules. They are found on any line,
//! leading and trailing whitespace ignored, as Codex's lenient parser reads
//! them: a header Codex would accept is never missed (a context line that
//! happens to look like one adds a file, which can only make the judgement
//! stricter). An added file's `+` lines are its content.

/// What a patch does to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// `*** Add File:` — a new file.
    Add,
    /// `*** Update File:` — an edit in place.
    Update,
    /// `*** Delete File:`.
    Delete,
    /// The old path of an `*** Update File:` followed by `*** Move to:`.
    MoveFrom,
    /// `*** Move to:` — the new path of a moved file.
    MoveTo,
}

impl Change {
    /// The spelling in the rules' input (`change` field).
    pub fn as_str(self) -> &'static str {
        match self {
            Change::Add => "add",
            Change::Update => "update",
            Change::Delete => "delete",
            Change::MoveFrom => "move_from",
            Change::MoveTo => "move_to",
        }
    }

    /// The Claude Code tool the change is judged as: creating a file is a
    /// `Write`, anything else an `Edit` (and `Edit(path)` rules judge both).
    pub fn claude_tool(self) -> &'static str {
        match self {
            Change::Add | Change::MoveTo => "Write",
            Change::Update | Change::Delete | Change::MoveFrom => "Edit",
        }
    }
}

/// One file a patch touches, with the path as written in the patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// The path as the patch names it (usually relative to the session cwd).
    pub path: String,
    /// What happens to it.
    pub change: Change,
    /// An added file's content (its `+` lines).
    pub content: Option<String>,
}

const ADD: &str = "*** Add File:";
const UPDATE: &str = "*** Update File:";
const DELETE: &str = "*** Delete File:";
const MOVE_TO: &str = "*** Move to:";

/// Every file `patch` touches, in order, each path once per kind of change.
pub fn touched_files(patch: &str) -> Vec<FileChange> {
    let mut files: Vec<FileChange> = Vec::new();
    // The added file whose `+` lines are being read, by index.
    let mut adding: Option<usize> = None;
    for line in patch.lines() {
        let header = line.trim();
        let found = [
            (ADD, Change::Add),
            (UPDATE, Change::Update),
            (DELETE, Change::Delete),
            (MOVE_TO, Change::MoveTo),
        ]
        .into_iter()
        .find_map(|(marker, change)| {
            header
                .strip_prefix(marker)
                .map(|rest| (rest.trim(), change))
        });
        if let Some((path, change)) = found {
            adding = None;
            if path.is_empty() {
                continue;
            }
            if change == Change::MoveTo {
                if let Some(from) = files.last_mut().filter(|f| f.change == Change::Update) {
                    from.change = Change::MoveFrom;
                }
            }
            if change == Change::Add {
                adding = Some(files.len());
            }
            let file = FileChange {
                path: path.to_string(),
                change,
                content: (change == Change::Add).then(String::new),
            };
            if !files
                .iter()
                .any(|f| f.path == file.path && f.change == file.change)
            {
                files.push(file);
            } else if change == Change::Add {
                adding = files
                    .iter()
                    .position(|f| f.path == file.path && f.change == Change::Add);
            }
            continue;
        }
        if header.starts_with("***") {
            adding = None;
            continue;
        }
        if let Some(i) = adding {
            if let (Some(text), Some(content)) = (line.strip_prefix('+'), &mut files[i].content) {
                content.push_str(text);
                content.push('\n');
            }
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(patch: &str) -> Vec<(String, &'static str)> {
        touched_files(patch)
            .into_iter()
            .map(|f| (f.path, f.change.as_str()))
            .collect()
    }

    #[test]
    fn the_sample_patch_adds_one_file_and_updates_another() {
        let patch = "*** Begin Patch\n*** Add File: out.txt\n+patched by apply_patch\n*** Update File: hello.txt\n@@\n-hello world\n+hello patched\n*** End Patch\n";
        let files = touched_files(patch);
        assert_eq!(
            files,
            [
                FileChange {
                    path: "out.txt".into(),
                    change: Change::Add,
                    content: Some("patched by apply_patch\n".into()),
                },
                FileChange {
                    path: "hello.txt".into(),
                    change: Change::Update,
                    content: None,
                },
            ]
        );
    }

    #[test]
    fn moves_and_deletes_name_every_path() {
        let patch = "*** Begin Patch\n*** Update File: a/old.rs\n*** Move to: b/new.rs\n@@\n-x\n+y\n*** Delete File: gone.txt\n*** End Patch";
        assert_eq!(
            summary(patch),
            [
                ("a/old.rs".into(), "move_from"),
                ("b/new.rs".into(), "move_to"),
                ("gone.txt".into(), "delete"),
            ]
        );
    }

    #[test]
    fn headers_are_found_whatever_the_indentation_and_wrapping() {
        let patch = "apply_patch <<'EOF'\n  *** Begin Patch\n  *** Update File:   spaced name.txt  \n@@\n+x\n*** End Patch\nEOF\n";
        assert_eq!(summary(patch), [("spaced name.txt".into(), "update")]);
        // A context line that looks like a header adds a file: stricter, never laxer.
        let patch = "*** Update File: a\n@@\n *** Delete File: b\n";
        assert_eq!(
            summary(patch),
            [("a".into(), "update"), ("b".into(), "delete")]
        );
    }

    #[test]
    fn no_headers_no_files_and_repeats_are_kept_once() {
        assert!(touched_files("").is_empty());
        assert!(touched_files("not a patch").is_empty());
        assert!(touched_files("*** Add File: \n+x\n").is_empty());
        let patch = "*** Update File: a\n@@\n-1\n+2\n*** Update File: a\n@@\n-3\n+4\n";
        assert_eq!(summary(patch), [("a".into(), "update")]);
        // Content after the next header is not the added file's.
        let files = touched_files("*** Add File: n\n+one\n*** End Patch\n+two\n");
        assert_eq!(files[0].content.as_deref(), Some("one\n"));
    }
}
