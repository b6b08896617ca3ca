//! Path patterns (`Read(./.env*)`, `Edit(src/**)`, `~/.ssh/**`, `//etc/**`) and
//! lexical path resolution.
//!
//! Patterns are gitignore-style globs with an anchor, as in Claude Code:
//!
//! | pattern      | anchored at                | example                 |
//! |--------------|----------------------------|-------------------------|
//! | `//x`        | filesystem root            | `//etc/passwd`          |
//! | `~/x`, `~`   | the home directory         | `~/.ssh/**`             |
//! | `/x`, `/`    | the project root           | `/src/**/*.rs`          |
//! | `./x`, `x`   | the project root           | `./.env*`, `src/**`     |
//!
//! Claude Code reads `/x` as relative to the settings file and `x` as relative
//! to the current directory; hookd's rules file does not live in the project,
//! so both mean the project root (the event's project dir, else its `cwd`).
//! As in gitignore, a pattern with no `/` except a trailing one (`.env*`,
//! `*.pem`, `./.env*` once `./` is dropped) matches a name at any depth below
//! its anchor. `*` and `?` stay within one path component, `**` crosses them,
//! `[a-z]` and `{a,b}` work as in globset. A trailing `/` is accepted and
//! ignored (there is no IO to tell files from directories).
//!
//! Tool patterns also match everything *below* a matched path
//! (`Read(~/.ssh)` covers `~/.ssh/id_rsa`), the way a gitignored directory
//! ignores its contents. The `path` condition operator matches the path itself
//! only, so `path = "/"` means exactly the project root.
//!
//! Paths from events are made absolute against the event's `cwd` and
//! normalised lexically (`.`, `..`, repeated `/`); symlinks are not resolved
//! because the rule engine does no IO.

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use std::path::Path;

/// Where a pattern is anchored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Anchor {
    Root,
    Home,
    Project,
}

/// A parsed (not yet compiled) path pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PathPattern {
    pub anchor: Anchor,
    /// For `Root` an absolute glob (`/etc/**`); otherwise relative to the
    /// anchor, `""` meaning the anchor directory itself.
    pub glob: String,
}

impl PathPattern {
    /// Parse the text inside `Read(...)` or a `path` condition.
    pub fn parse(src: &str) -> Result<PathPattern, String> {
        let s = src.trim();
        if s.is_empty() {
            return Err("empty path pattern".to_string());
        }
        let (anchor, rest, anchored) = if let Some(r) = s.strip_prefix("//") {
            (Anchor::Root, r, true)
        } else if s == "~" {
            (Anchor::Home, "", true)
        } else if let Some(r) = s.strip_prefix("~/") {
            (Anchor::Home, r, true)
        } else if s.starts_with('~') {
            return Err(format!(
                "`{s}`: only `~` and `~/…` are understood, not another user's home"
            ));
        } else if let Some(r) = s.strip_prefix('/') {
            (Anchor::Project, r, true)
        } else if let Some(r) = s.strip_prefix("./") {
            (Anchor::Project, r, false)
        } else if s == "." {
            (Anchor::Project, "", true)
        } else {
            (Anchor::Project, s, false)
        };
        let rest = rest.trim_end_matches('/');
        let rest = rest.trim_start_matches('/');
        let glob = if !anchored && !rest.is_empty() && !rest.contains('/') {
            // gitignore: a bare name matches at any depth.
            format!("**/{rest}")
        } else {
            rest.to_string()
        };
        let glob = match anchor {
            Anchor::Root => format!("/{glob}"),
            _ => glob,
        };
        // Validate now so errors carry the rule's location.
        build_glob(&glob).map_err(|e| format!("invalid glob `{s}`: {}", glob_error(&e)))?;
        Ok(PathPattern { anchor, glob })
    }
}

fn build_glob(glob: &str) -> Result<Glob, globset::Error> {
    GlobBuilder::new(glob)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
}

/// The message of a globset error without its repeated pattern prefix.
pub(crate) fn glob_error(e: &globset::Error) -> String {
    e.kind().to_string()
}

/// Build a string glob for `when` conditions (`*` stays within a `/`-separated
/// component, `**` crosses, like path patterns).
pub(crate) fn string_glob(glob: &str) -> Result<Glob, String> {
    build_glob(glob).map_err(|e| glob_error(&e))
}

/// Many path patterns compiled into one set per anchor, so matching a path
/// against hundreds of rules is three glob-set lookups. The sets are
/// compiled the first time a path is matched, not when the rules are read
/// (each pattern was validated then): the standard profile's path
/// conditions held 1.7 MiB of compiled glob sets in an idle daemon
/// (docs/performance-history.md, #28).
#[derive(Debug, Clone, Default)]
pub(crate) struct PathSet {
    /// Per anchor: the globs, in set order.
    globs: [Vec<String>; 3],
    sets: std::sync::OnceLock<[GlobSet; 3]>,
    /// Per anchor: glob index in the set → pattern id.
    ids: [Vec<usize>; 3],
    len: usize,
}

fn slot(a: Anchor) -> usize {
    match a {
        Anchor::Root => 0,
        Anchor::Home => 1,
        Anchor::Project => 2,
    }
}

impl PathSet {
    /// Compile `patterns` (already validated by [`PathPattern::parse`]).
    /// With `below`, each pattern also matches everything under what it names.
    pub fn new(patterns: &[PathPattern], below: bool) -> PathSet {
        let mut globs: [Vec<String>; 3] = Default::default();
        let mut ids: [Vec<usize>; 3] = Default::default();
        for (id, p) in patterns.iter().enumerate() {
            let s = slot(p.anchor);
            let mut add = |g: String| {
                // The pattern was validated; its `/**` form is valid too.
                if build_glob(&g).is_ok() {
                    globs[s].push(g);
                    ids[s].push(id);
                }
            };
            add(p.glob.clone());
            if below {
                let under = if p.glob.is_empty() {
                    "**".to_string()
                } else if p.glob.ends_with('/') {
                    format!("{}**", p.glob)
                } else {
                    format!("{}/**", p.glob)
                };
                add(under);
            }
        }
        PathSet {
            globs,
            sets: std::sync::OnceLock::new(),
            ids,
            len: patterns.len(),
        }
    }

    /// The compiled sets, compiled on first use.
    fn sets(&self) -> &[GlobSet; 3] {
        self.sets.get_or_init(|| {
            self.globs.each_ref().map(|globs| {
                let mut b = GlobSetBuilder::new();
                for g in globs {
                    if let Ok(glob) = build_glob(g) {
                        b.add(glob);
                    }
                }
                b.build().unwrap_or_else(|_| GlobSet::empty())
            })
        })
    }

    /// Number of patterns.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Push the ids of patterns matching `p` into `out` (may repeat an id).
    pub fn matches_into(
        &self,
        p: &ResolvedPath<'_>,
        scratch: &mut Vec<usize>,
        out: &mut Vec<usize>,
    ) {
        let candidates = [Some(p.abs), p.home_rel, p.project_rel];
        for (s, cand) in candidates.iter().enumerate() {
            let Some(c) = cand else { continue };
            if self.ids[s].is_empty() {
                continue;
            }
            scratch.clear();
            self.sets()[s].matches_into(c, scratch);
            out.extend(scratch.iter().map(|&i| self.ids[s][i]));
        }
    }

    /// Whether any pattern matches `p`.
    pub fn is_match(&self, p: &ResolvedPath<'_>) -> bool {
        let sets = self.sets();
        sets[0].is_match(p.abs)
            || p.home_rel.is_some_and(|r| sets[1].is_match(r))
            || p.project_rel.is_some_and(|r| sets[2].is_match(r))
    }
}

/// An absolute, normalised path with its forms relative to home and project.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ResolvedPath<'a> {
    pub abs: &'a str,
    pub home_rel: Option<&'a str>,
    pub project_rel: Option<&'a str>,
}

impl<'a> ResolvedPath<'a> {
    /// Relate `abs` (normalised) to `home` and `project` (normalised).
    pub fn new(abs: &'a str, home: Option<&str>, project: Option<&str>) -> Self {
        ResolvedPath {
            abs,
            home_rel: home.and_then(|h| relative_to(abs, h)),
            project_rel: project.and_then(|p| relative_to(abs, p)),
        }
    }
}

/// `abs` relative to `root` (`""` when equal), if it is inside it.
pub(crate) fn relative_to<'a>(abs: &'a str, root: &str) -> Option<&'a str> {
    if root == "/" {
        return Some(abs.trim_start_matches('/'));
    }
    let rest = abs.strip_prefix(root)?;
    if rest.is_empty() {
        Some("")
    } else {
        rest.strip_prefix('/')
    }
}

/// Lexically normalise an absolute path: collapse `//`, drop `.`, apply `..`.
pub(crate) fn normalize(path: &str) -> String {
    if is_normal(path) {
        return path.to_string();
    }
    normalize_parts(path)
}

/// [`normalize`] of a path built for it: kept as it is when already normal
/// (most are: a project directory, an argument joined to the cwd), so
/// resolving costs one allocation.
fn normalize_owned(path: String) -> String {
    if is_normal(&path) {
        path
    } else {
        normalize_parts(&path)
    }
}

/// Whether `normalize` would give `path` back: absolute, no empty, `.` or
/// `..` component, no trailing `/` (but `/` itself).
fn is_normal(path: &str) -> bool {
    match path.as_bytes() {
        [b'/'] => true,
        [b'/', rest @ ..] => rest
            .split(|&b| b == b'/')
            .all(|c| !matches!(c, b"" | b"." | b"..")),
        _ => false,
    }
}

fn normalize_parts(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for c in path.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            c => parts.push(c),
        }
    }
    let mut out = String::with_capacity(path.len());
    for p in &parts {
        out.push('/');
        out.push_str(p);
    }
    if out.is_empty() {
        out.push('/');
    }
    out
}

/// Normalise an optional directory given as a `Path`.
pub(crate) fn normalize_dir(p: Option<&Path>) -> Option<String> {
    let s = p?.to_str()?;
    s.starts_with('/').then(|| normalize(s))
}

/// [`normalize`], borrowing `path` when it is already normal (a hook's cwd,
/// home and project directory nearly always are): no allocation per hook.
pub(crate) fn normalize_borrowed(path: &str) -> std::borrow::Cow<'_, str> {
    if is_normal(path) {
        std::borrow::Cow::Borrowed(path)
    } else {
        std::borrow::Cow::Owned(normalize_parts(path))
    }
}

/// [`normalize_dir`] as [`normalize_borrowed`] does it.
pub(crate) fn normalize_dir_borrowed(p: Option<&Path>) -> Option<std::borrow::Cow<'_, str>> {
    let s = p?.to_str()?;
    s.starts_with('/').then(|| normalize_borrowed(s))
}

/// Where relative values are resolved and what `~` and shell variables mean.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Base<'a> {
    pub cwd: Option<&'a str>,
    pub home: Option<&'a str>,
    pub project: Option<&'a str>,
}

/// Make `value` absolute and normalised. `~` and `~/` expand to home. With
/// `shell`, the value is a shell word: `$HOME`, `${HOME}`, `$PWD`,
/// `$CLAUDE_PROJECT_DIR` at the start expand too, and a final `*` component is
/// dropped (the shell expands `dir/*` to every entry of `dir`, as destructive as
/// naming `dir`). Returns `None` when the value cannot be placed (relative with
/// no cwd, `~` with no home, an unknown variable).
pub(crate) fn resolve(value: &str, base: &Base<'_>, shell: bool) -> Option<String> {
    let mut v = value;
    let expanded;
    if shell {
        let vars: [(&str, Option<&str>); 8] = [
            ("$HOME", base.home),
            ("${HOME}", base.home),
            ("$PWD", base.cwd),
            ("${PWD}", base.cwd),
            ("$CLAUDE_PROJECT_DIR", base.project),
            ("${CLAUDE_PROJECT_DIR}", base.project),
            ("$OLDPWD", None),
            ("${OLDPWD}", None),
        ];
        for (name, dir) in vars {
            if let Some(rest) = v.strip_prefix(name) {
                if rest.is_empty() || rest.starts_with('/') {
                    expanded = format!("{}{rest}", dir?);
                    v = &expanded;
                    break;
                }
            }
        }
        if v.starts_with('$') {
            return None;
        }
        if v == "*" || v == ".*" {
            v = ".";
        } else if let Some(dir) = v.strip_suffix("/*") {
            v = if dir.is_empty() { "/" } else { dir };
        }
    }
    let join = |dir: &str, rest: &str| {
        let mut joined = String::with_capacity(dir.len() + 1 + rest.len());
        joined.push_str(dir);
        joined.push('/');
        joined.push_str(rest);
        joined
    };
    Some(if v == "~" {
        normalize(base.home?)
    } else if let Some(rest) = v.strip_prefix("~/") {
        normalize_owned(join(base.home?, rest))
    } else if v.starts_with('/') {
        normalize(v)
    } else {
        normalize_owned(join(base.cwd?, v))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, below: bool, path: &str) -> bool {
        let p = PathPattern::parse(pattern).unwrap();
        let set = PathSet::new(&[p], below);
        let abs = normalize(path);
        set.is_match(&ResolvedPath::new(
            &abs,
            Some("/home/dev"),
            Some("/home/dev/project"),
        ))
    }

    #[test]
    fn pattern_forms() {
        // (pattern, path, matches with `below`, matches without)
        let table: &[(&str, &str, bool, bool)] = &[
            ("//etc/passwd", "/etc/passwd", true, true),
            ("//etc", "/etc/passwd", true, false),
            ("//", "/", true, true),
            ("//", "/etc", true, false),
            ("~", "/home/dev", true, true),
            ("~", "/home/dev/x", true, false),
            ("~/.ssh", "/home/dev/.ssh/id_rsa", true, false),
            ("~/.ssh/**", "/home/dev/.ssh/id_rsa", true, true),
            ("~/.ssh/**", "/home/devx/.ssh/id_rsa", false, false),
            ("/", "/home/dev/project", true, true),
            ("/", "/home/dev/project/src", true, false),
            ("/", "/home/dev", false, false),
            ("/src/**", "/home/dev/project/src/a/b.rs", true, true),
            ("src/**", "/home/dev/project/src/a.rs", true, true),
            ("src/**", "/home/dev/project/x/src/a.rs", false, false),
            ("./.env*", "/home/dev/project/.env.local", true, true),
            ("./.env*", "/home/dev/project/sub/.env", true, true),
            (".env", "/home/dev/project/a/b/.env", true, true),
            (".env", "/tmp/.env", false, false),
            ("*.pem", "/home/dev/project/certs/k.pem", true, true),
            ("//**/.env", "/tmp/x/.env", true, true),
            ("//**/.env", "/.env", true, true),
            ("src/*.rs", "/home/dev/project/src/a/b.rs", false, false),
            ("secrets/", "/home/dev/project/secrets/k", true, false),
            (".", "/home/dev/project", true, true),
        ];
        for &(pat, path, below, exact) in table {
            assert_eq!(matches(pat, true, path), below, "{pat} ~ {path} (below)");
            assert_eq!(matches(pat, false, path), exact, "{pat} ~ {path} (exact)");
        }
    }

    #[test]
    fn bad_patterns() {
        assert!(PathPattern::parse("").is_err());
        assert!(PathPattern::parse("~bob/x").is_err());
        assert!(PathPattern::parse("src/[").is_err());
    }

    #[test]
    fn resolves_values() {
        let base = Base {
            cwd: Some("/home/dev/project/sub"),
            home: Some("/home/dev"),
            project: Some("/home/dev/project"),
        };
        let table: &[(&str, bool, Option<&str>)] = &[
            ("/a/../b/./c//d", false, Some("/b/c/d")),
            ("x", false, Some("/home/dev/project/sub/x")),
            ("..", false, Some("/home/dev/project")),
            ("~", false, Some("/home/dev")),
            ("~/.ssh/id", false, Some("/home/dev/.ssh/id")),
            ("$HOME", false, Some("/home/dev/project/sub/$HOME")),
            ("$HOME", true, Some("/home/dev")),
            ("${HOME}/", true, Some("/home/dev")),
            ("$CLAUDE_PROJECT_DIR", true, Some("/home/dev/project")),
            ("$PWD/..", true, Some("/home/dev/project")),
            ("$OTHER", true, None),
            ("/*", true, Some("/")),
            ("~/*", true, Some("/home/dev")),
            ("*", true, Some("/home/dev/project/sub")),
            ("../*", true, Some("/home/dev/project")),
        ];
        for &(v, shell, want) in table {
            assert_eq!(
                resolve(v, &base, shell).as_deref(),
                want,
                "{v} shell={shell}"
            );
        }
        assert_eq!(resolve("x", &Base::default(), false), None);
    }

    #[test]
    fn normal_paths_are_kept_as_they_are() {
        let table = [
            ("/", true),
            ("/a", true),
            ("/a/b.c/.hidden/..x/x..", true),
            ("", false),
            ("a/b", false),
            ("/a/", false),
            ("//a", false),
            ("/a//b", false),
            ("/a/./b", false),
            ("/a/../b", false),
            ("/..", false),
            ("/.", false),
        ];
        for (path, normal) in table {
            assert_eq!(is_normal(path), normal, "{path:?}");
            // The fast path gives what the component walk gives.
            assert_eq!(normalize(path), normalize_parts(path), "{path:?}");
            assert_eq!(normalize_owned(path.to_string()), normalize_parts(path));
        }
    }
}
