//! `[signals.NAME]`: commands whose output rules read as `$signal.NAME`
//! (see `hookd_core::rules::signal`).
//!
//! ```toml
//! [signals.branch]
//! command = ["git", "branch", "--show-current"]   # argv, no shell
//! ttl = "30s"       # how long a value holds (default 30s)
//! timeout = "2s"    # the command's limit (default 2s)
//! ```
//!
//! This module holds the configuration; the values reach the rules as
//! `Query::signals` and the decision line's `signals`.

use serde::Deserialize;

/// One `[signals.NAME]` table.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignalConfig {
    /// The argv, run in the session's project directory; no shell unless
    /// the argv names one.
    pub command: Vec<String>,
    /// How long a value holds, as `"30s"`.
    #[serde(default)]
    pub ttl: Option<String>,
    /// The command's time limit, as `"2s"`.
    #[serde(default)]
    pub timeout: Option<String>,
}

impl SignalConfig {
    /// Check a table: a non-empty argv and readable durations.
    pub fn validate(&self) -> Result<(), String> {
        if self.command.first().is_none_or(|p| p.is_empty()) {
            return Err(
                "`command` must name a program, as [\"git\", \"branch\", \"--show-current\"]"
                    .into(),
            );
        }
        for (key, v) in [("ttl", &self.ttl), ("timeout", &self.timeout)] {
            if let Some(v) = v {
                if duration_ms(v).is_none() {
                    return Err(format!(
                        "`{key}`: {v:?} is not a duration such as \"30s\" or \"500ms\""
                    ));
                }
            }
        }
        Ok(())
    }
}

/// `"3s"`, `"500ms"`, `"1m"` in milliseconds.
fn duration_ms(s: &str) -> Option<u64> {
    let s = s.trim();
    let (n, mult) = if let Some(n) = s.strip_suffix("ms") {
        (n, 1)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1_000)
    } else if let Some(n) = s.strip_suffix('m') {
        (n, 60_000)
    } else {
        return None;
    };
    n.trim()
        .parse::<u64>()
        .ok()?
        .checked_mul(mult)
        .filter(|&ms| ms > 0)
}

#[cfg(test)]
mod tests {
    use crate::config::Config;
    use std::path::Path;

    #[test]
    fn signals_are_read_and_checked_with_their_place() {
        let ok = "[signals.branch]\ncommand = [\"git\", \"branch\", \"--show-current\"]\nttl = \"30s\"\n";
        let c = Config::parse(ok, Path::new("c.toml")).unwrap();
        assert_eq!(c.signals["branch"].command[0], "git");
        let empty = "[signals.branch]\ncommand = []\n";
        let e = Config::parse(empty, Path::new("c.toml"))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("c.toml:1:") && e.contains("signals.branch") && e.contains("`command`"),
            "{e}"
        );
        let bad = "[signals.ci]\ncommand = [\"true\"]\ntimeout = \"soon\"\n";
        let e = Config::parse(bad, Path::new("c.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("`timeout`"), "{e}");
        let unknown = "[signals.ci]\ncommand = [\"true\"]\nshell = true\n";
        assert!(Config::parse(unknown, Path::new("c.toml")).is_err());
    }
}
