//! `[policy] sources`: rules shared by a team, read from files and
//! directories (and signed bundles, [`bundle`]) and composed under the
//! user's rules as [`PolicyLayer`]s.
//!
//! The composition is the rule engine's ([`crate::rules`], "Layers"):
//! this module is the IO around it, shared by the daemon (start, SIGHUP,
//! the watcher) and the `hookd rules` commands. It walks directories so the
//! pure core does not.
//!
//! ```toml
//! [policy]
//! sources = [
//!   { path = "~/.config/hookd/rules.d" },                     # my own extra files
//!   { path = "/srv/team-policy", name = "team", enforced = true },
//! ]
//! ```
//!
//! - `path`: a directory (its `*.toml`, in name order, not below) or one
//!   file; `~/` is the home directory. A source that is missing or does
//!   not compile is an error naming the file (and `file:line:column`):
//!   at start the daemon refuses to start, on a reload every layer keeps
//!   its last good rules.
//! - `name`: how its rules are named (`team:no-push`) and labelled in the
//!   revision; by default the path's last component. Unique; not `user`,
//!   `project`, `defaults`, `grant` or `client`.
//! - `enforced`: the user's allow rules (and session grants) cannot
//!   loosen this source's asks (see [`crate::rules`]).
//!
//! Sources are listed lowest precedence first: a later source's allow
//! loosens an earlier, non-enforced source's ask.

pub mod bundle;
pub mod store;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer};

use crate::rules::{PolicyLayer, RuleSet};

/// At most this many sources (ranks are small numbers).
pub const MAX_SOURCES: usize = 64;

/// At most this many files over all sources (rule hits name their file
/// with 16 bits).
pub const MAX_FILES: usize = 4096;

/// Names a source may not take: they name other layers or deciders.
/// Names a decision's `layer` already uses (`protocol::log`): a source
/// named so would read as one of them.
const RESERVED_NAMES: &[&str] = &[
    "user", "project", "defaults", "grant", "client", "terminal", "fallback", "none", "unjudged",
];

/// `[policy]`, validated.
#[derive(Debug, Clone, Default)]
pub struct PolicyConfig {
    /// The sources, lowest precedence first.
    pub sources: Vec<Source>,
}

/// One source of `[policy] sources`.
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    /// Its name (`<name>:<id>` in rule ids).
    pub name: String,
    /// Whether later layers may not loosen it.
    pub enforced: bool,
    /// Where its rules are.
    pub location: Location,
}

/// Where a source's rules are.
#[derive(Debug, Clone, PartialEq)]
pub enum Location {
    /// A directory (`*.toml`) or a file.
    Path(PathBuf),
    /// A signed bundle, activated into the state directory.
    Bundle(bundle::BundleSource),
}

/// One source as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSource {
    path: Option<String>,
    bundle: Option<String>,
    name: Option<String>,
    #[serde(default)]
    enforced: bool,
    public_key: Option<String>,
    interval: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPolicy {
    #[serde(default)]
    sources: Vec<RawSource>,
}

impl<'de> Deserialize<'de> for PolicyConfig {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<PolicyConfig, D::Error> {
        let raw = RawPolicy::deserialize(d)?;
        PolicyConfig::validate(raw).map_err(serde::de::Error::custom)
    }
}

impl PolicyConfig {
    fn validate(raw: RawPolicy) -> Result<PolicyConfig, String> {
        if raw.sources.len() > MAX_SOURCES {
            return Err(format!(
                "{} sources: at most {MAX_SOURCES} (merge some directories)",
                raw.sources.len()
            ));
        }
        let mut sources: Vec<Source> = Vec::new();
        for (i, s) in raw.sources.into_iter().enumerate() {
            let at = format!("sources[{i}]");
            let location = match (&s.path, &s.bundle) {
                (Some(path), None) => {
                    if s.public_key.is_some() || s.interval.is_some() {
                        return Err(format!(
                            "{at}: `public_key` and `interval` are for `bundle` sources, not `path`"
                        ));
                    }
                    Location::Path(expand_home(path))
                }
                (None, Some(bundle)) => Location::Bundle(
                    bundle::BundleSource::new(bundle, s.public_key.as_deref(), s.interval)
                        .map_err(|e| format!("{at}: {e}"))?,
                ),
                _ => {
                    return Err(format!(
                        "{at}: give exactly one of `path` (a directory or file of rules) or `bundle` (a signed bundle)"
                    ))
                }
            };
            let name = match s.name {
                Some(name) => name,
                None => default_name(&location).ok_or_else(|| format!("{at}: give it a `name`"))?,
            };
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            {
                return Err(format!(
                    "{at}: name `{name}`: use letters, digits, `-`, `_` and `.` (it prefixes rule ids: `{name}:id`)"
                ));
            }
            if RESERVED_NAMES.contains(&name.as_str()) {
                return Err(format!(
                    "{at}: name `{name}` is taken by another layer; choose another `name`"
                ));
            }
            if sources.iter().any(|other| other.name == name) {
                return Err(format!(
                    "{at}: name `{name}` is used by an earlier source; give each a distinct `name`"
                ));
            }
            sources.push(Source {
                name,
                enforced: s.enforced,
                location,
            });
        }
        Ok(PolicyConfig { sources })
    }

    /// True when there are no sources (the user layer alone).
    pub fn is_empty(&self) -> bool {
        self.sources.is_empty()
    }

    /// Reads every source (blocking). `state_dir` holds activated bundles.
    /// Every problem is reported, each naming its file; any problem refuses
    /// the whole set.
    pub fn load(&self, state_dir: Option<&Path>) -> Result<Vec<PolicyLayer>, PolicyError> {
        let mut layers = Vec::new();
        let mut problems = Vec::new();
        let mut total = 0;
        for source in &self.sources {
            match source.files(state_dir) {
                Ok(paths) => {
                    let mut files = Vec::new();
                    for path in paths {
                        total += 1;
                        let read = std::fs::read_to_string(&path)
                            .map_err(|e| format!("{}: {e}", path.display()))
                            .and_then(|src| {
                                RuleSet::parse_policy(&src, &path)
                                    .map_err(|e| e.to_string().trim_end().to_string())
                            });
                        match read {
                            Ok(rules) => files.push(rules),
                            Err(e) => {
                                problems.push(format!("policy source `{}`: {e}", source.name))
                            }
                        }
                    }
                    layers.push(PolicyLayer {
                        name: source.name.clone(),
                        enforced: source.enforced,
                        files,
                    });
                }
                Err(e) => problems.push(format!("policy source `{}`: {e}", source.name)),
            }
        }
        if total > MAX_FILES {
            problems.push(format!(
                "{total} policy files: at most {MAX_FILES}; merge some"
            ));
        }
        if problems.is_empty() {
            Ok(layers)
        } else {
            Err(PolicyError { problems })
        }
    }

    /// The paths whose changes may change the policy: each source's
    /// directory or file and the files in it (bundles: their activated
    /// copy). Stats: blocking.
    pub fn watched(&self, state_dir: Option<&Path>) -> Vec<PathBuf> {
        let mut paths = Vec::new();
        for source in &self.sources {
            if let Some(root) = source.root(state_dir) {
                paths.push(root);
            }
            paths.extend(source.files(state_dir).unwrap_or_default());
        }
        paths
    }
}

impl Source {
    /// The directory or file its rules are read from (a bundle's
    /// activated `rules/` directory).
    pub fn root(&self, state_dir: Option<&Path>) -> Option<PathBuf> {
        match &self.location {
            Location::Path(path) => Some(path.clone()),
            Location::Bundle(_) => {
                state_dir.map(|dir| bundle::active_dir(dir, &self.name).join(bundle::RULES_DIR))
            }
        }
    }

    /// Its rules files, in name order (blocking). A bundle not activated
    /// yet has none.
    pub fn files(&self, state_dir: Option<&Path>) -> Result<Vec<PathBuf>, String> {
        let Some(root) = self.root(state_dir) else {
            return Err("no state directory for bundles (set XDG_STATE_HOME or HOME)".into());
        };
        match (&self.location, std::fs::metadata(&root)) {
            (_, Ok(meta)) if meta.is_dir() => toml_files(&root),
            (Location::Path(_), Ok(_)) => Ok(vec![root]),
            (Location::Bundle(_), Err(e)) if e.kind() == std::io::ErrorKind::NotFound => {
                Ok(Vec::new())
            }
            (_, Ok(_)) => Err(format!("{}: not a directory", root.display())),
            (_, Err(e)) => Err(format!("{}: {e}", root.display())),
        }
    }
}

/// The `*.toml` files directly in `dir`, in name order.
pub fn toml_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|e| e == "toml") && path.is_file())
        .collect();
    files.sort();
    Ok(files)
}

/// Why a policy was refused: every problem, each naming its file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", problems.join("\n"))]
pub struct PolicyError {
    /// One line each (a rules error may span several).
    pub problems: Vec<String>,
}

/// The reports of `hookd rules check` without FILE when there are
/// policy sources: the user file (when there is one) and every policy
/// file, in that order.
pub fn check_reports(
    user: Option<PathBuf>,
    policy_files: &[PathBuf],
) -> Vec<crate::rules::CheckReport> {
    use crate::rules::{check_as, LayerKind};
    let mut reports = Vec::new();
    reports.extend(user.map(|path| check_as(&path, LayerKind::User)));
    reports.extend(
        policy_files
            .iter()
            .map(|path| check_as(path, LayerKind::Policy)),
    );
    reports
}

/// What `hookd status` prints about the policy layers and the last
/// reload, one line each (none without sources or problems).
pub fn status_lines(rules: &crate::protocol::RulesStatus) -> Vec<String> {
    let mut lines = Vec::new();
    for layer in &rules.layers {
        lines.push(format!(
            "policy layer {}{}: {} rules in {} files from {}",
            layer.name,
            if layer.enforced { " (enforced)" } else { "" },
            layer.rules,
            layer.files.len(),
            layer.source
        ));
        if let Some(bundle) = &layer.bundle {
            match (&bundle.activated_at, &bundle.revision) {
                (Some(at), revision) => lines.push(format!(
                    "  bundle activated {at}{}",
                    revision
                        .as_ref()
                        .map(|r| format!(", revision {r}"))
                        .unwrap_or_default()
                )),
                (None, _) => lines.push("  bundle: none activated yet".to_string()),
            }
            if let Some(error) = &bundle.error {
                lines.push(format!(
                    "  bundle refused, the last good one stays active: {error}"
                ));
            }
        }
    }
    if let Some(error) = &rules.reload_error {
        lines.push(format!(
            "last reload refused, every layer keeps its last good rules:\n  {}",
            error.replace('\n', "\n  ")
        ));
    }
    lines
}

fn expand_home(path: &str) -> PathBuf {
    match path.strip_prefix("~/") {
        Some(rest) => match std::env::var_os("HOME").filter(|h| !h.is_empty()) {
            Some(home) => PathBuf::from(home).join(rest),
            None => PathBuf::from(path),
        },
        None => PathBuf::from(path),
    }
}

/// The last component of a path source (without `.toml`), or of a
/// bundle's location (without `.tar.gz`).
fn default_name(location: &Location) -> Option<String> {
    let text = match location {
        Location::Path(path) => path.file_name()?.to_string_lossy().into_owned(),
        Location::Bundle(b) => b.location_name()?,
    };
    let name = text
        .trim_end_matches(".tar.gz")
        .trim_end_matches(".tgz")
        .trim_end_matches(".toml");
    (!name.is_empty()).then(|| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<PolicyConfig, String> {
        #[derive(Deserialize)]
        struct Top {
            policy: PolicyConfig,
        }
        toml::from_str::<Top>(text)
            .map(|t| t.policy)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn sources_read_with_names_and_clear_errors() {
        let p = parse(
            r#"[policy]
sources = [{ path = "/srv/rules.d" }, { path = "/srv/team-policy", name = "team", enforced = true }]"#,
        )
        .unwrap();
        let names: Vec<(&str, bool)> = p
            .sources
            .iter()
            .map(|s| (s.name.as_str(), s.enforced))
            .collect();
        assert_eq!(names, [("rules.d", false), ("team", true)]);
        for (text, expected) in [
            (r#"sources = [{ name = "x" }]"#, "exactly one of `path`"),
            (
                r#"sources = [{ path = "/a", bundle = "/b" }]"#,
                "exactly one of `path`",
            ),
            (
                r#"sources = [{ path = "/a", name = "user" }]"#,
                "taken by another layer",
            ),
            (
                r#"sources = [{ path = "/a/x" }, { path = "/b/x" }]"#,
                "used by an earlier source",
            ),
            (
                r#"sources = [{ path = "/a", name = "a b" }]"#,
                "use letters",
            ),
            (
                r#"sources = [{ path = "/a", enforce = true }]"#,
                "unknown field `enforce`",
            ),
            (
                r#"sources = [{ path = "/a", interval = 5 }]"#,
                "for `bundle` sources",
            ),
        ] {
            let err = parse(&format!("[policy]\n{text}")).unwrap_err();
            assert!(err.contains(expected), "{text}: {err}");
        }
    }

    #[test]
    fn a_directory_is_its_toml_files_in_name_order_and_a_broken_one_names_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let rule =
            |id: &str| format!("[[rule]]\nid = \"{id}\"\naction = \"deny\"\ntool = \"Bash(x)\"\n");
        std::fs::write(dir.path().join("b.toml"), rule("b")).unwrap();
        std::fs::write(dir.path().join("a.toml"), rule("a")).unwrap();
        std::fs::write(dir.path().join("notes.md"), "not rules").unwrap();
        let p = PolicyConfig {
            sources: vec![Source {
                name: "team".into(),
                enforced: false,
                location: Location::Path(dir.path().to_path_buf()),
            }],
        };
        let layers = p.load(None).unwrap();
        let ids: Vec<String> = layers[0]
            .files
            .iter()
            .flat_map(|f| f.ids().map(String::from).collect::<Vec<_>>())
            .collect();
        assert_eq!(ids, ["a", "b"]);
        std::fs::write(
            dir.path().join("c.toml"),
            "[[rule]]\nid = \"c\"\naction = \"nope\"\n",
        )
        .unwrap();
        let err = p.load(None).unwrap_err().to_string();
        assert!(err.contains("policy source `team`"), "{err}");
        assert!(
            err.contains(&format!("{}:3", dir.path().join("c.toml").display())),
            "{err}"
        );
        let missing = PolicyConfig {
            sources: vec![Source {
                name: "gone".into(),
                enforced: false,
                location: Location::Path(dir.path().join("nowhere")),
            }],
        };
        let err = missing.load(None).unwrap_err().to_string();
        assert!(err.contains("nowhere"), "{err}");
    }
}
