//! The embedded policy profiles (issue #27): `minimal`, `standard` and
//! `strict`, each a complete rules file compiled into the binary.
//!
//! - **minimal** — the seven conservative rules hookd shipped first
//!   (`rm -rf /`, force-pushing main, `~/.ssh`, `.env`, `curl | sh`).
//! - **standard** — minimal's rules and the `standard-…` rules written from
//!   MITRE ATT&CK's techniques (credential access, exfiltration,
//!   persistence, privilege escalation, impact, supply chain, defence
//!   evasion) and prompt-injection payloads. It is what a fresh install
//!   enforces: [`crate::rules::DEFAULTS_TOML`] is its text.
//! - **strict** — standard and the `strict-…` rules, which ask about more
//!   (any package install, any push, any read outside the project).
//!
//! `hookd rules init --profile P` writes a profile's text for a person to
//! edit, `hookd rules defaults --profile P` prints it, and `hookd rules
//! explain` names the profile a rule comes from ([`Profile::of_rule`]),
//! whether it judges with the embedded text or a file started from it.

use std::path::Path;
use std::sync::OnceLock;

use super::{LayerKind, RuleSet};

/// The minimal profile's text.
pub const MINIMAL_TOML: &str = include_str!("profiles/minimal.toml");
/// The standard profile's text (the embedded defaults).
pub const STANDARD_TOML: &str = include_str!("profiles/standard.toml");
/// The strict profile's text: standard's, then its own rules.
pub const STRICT_TOML: &str = concat!(
    include_str!("profiles/standard.toml"),
    include_str!("profiles/strict.toml")
);

/// One embedded profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Profile {
    /// Seven rules: the least a fresh install could hold.
    Minimal,
    /// What a fresh install enforces.
    Standard,
    /// Standard, and more asks.
    Strict,
}

impl Profile {
    /// Every profile, smallest first.
    pub const ALL: [Profile; 3] = [Profile::Minimal, Profile::Standard, Profile::Strict];

    /// The profile's name as the command line spells it.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Minimal => "minimal",
            Profile::Standard => "standard",
            Profile::Strict => "strict",
        }
    }

    /// The profile named `name`, or an error listing the names.
    pub fn parse(name: &str) -> Result<Profile, String> {
        Profile::ALL
            .into_iter()
            .find(|p| p.name() == name)
            .ok_or_else(|| {
                format!("unknown profile `{name}`; the profiles are minimal, standard and strict")
            })
    }

    /// The profile's rules file, verbatim.
    pub fn text(self) -> &'static str {
        match self {
            Profile::Minimal => MINIMAL_TOML,
            Profile::Standard => STANDARD_TOML,
            Profile::Strict => STRICT_TOML,
        }
    }

    /// The name the profile's embedded rules go by in messages (the
    /// standard one's is [`super::DEFAULTS_ORIGIN`]: it is the defaults).
    pub fn origin(self) -> &'static str {
        match self {
            Profile::Minimal => "<embedded minimal profile>",
            Profile::Standard => super::DEFAULTS_ORIGIN,
            Profile::Strict => "<embedded strict profile>",
        }
    }

    /// The profile's rules, compiled, generation 0.
    pub fn rules(self) -> RuleSet {
        // Compiled into the binary and tested: failing to parse is a build
        // defect, not a runtime condition.
        RuleSet::compile(self.text(), Path::new(self.origin()), LayerKind::User)
            .expect("embedded profile rules must compile")
    }

    /// The smallest profile that holds a rule with this id (`default-…`
    /// rules are minimal's, and every profile's).
    pub fn of_rule(id: &str) -> Option<Profile> {
        static IDS: OnceLock<Vec<(Profile, Vec<String>)>> = OnceLock::new();
        let ids = IDS.get_or_init(|| {
            Profile::ALL
                .into_iter()
                .map(|p| (p, ids_of(p.text())))
                .collect()
        });
        ids.iter()
            .find(|(_, ids)| ids.iter().any(|i| i == id))
            .map(|(p, _)| *p)
    }
}

impl std::fmt::Display for Profile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The `id = "…"` values of a profile's text, without compiling it.
fn ids_of(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("id = \""))
        .filter_map(|rest| rest.split('"').next())
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_profile_compiles_without_warnings_and_grows() {
        let mut last: Vec<String> = Vec::new();
        for p in Profile::ALL {
            let set = p.rules();
            assert!(
                set.warnings().is_empty(),
                "{p}: {:?}",
                set.warnings()
                    .iter()
                    .map(|w| w.to_string())
                    .collect::<Vec<_>>()
            );
            let ids: Vec<String> = set.ids().map(str::to_string).collect();
            assert_eq!(ids, ids_of(p.text()), "{p}: ids_of reads every rule");
            for id in &last {
                assert!(ids.contains(id), "{p} lacks {id} of the smaller profile");
            }
            last = ids;
        }
    }

    #[test]
    fn every_rule_says_why_in_words() {
        for p in Profile::ALL {
            let set = p.rules();
            for id in set.ids() {
                let reason = set.rule(id).and_then(|r| r.reason).unwrap_or("");
                assert!(
                    reason.len() > 40 && reason.starts_with("hookd "),
                    "{p}: rule {id} needs a reason a person understands: {reason:?}"
                );
            }
        }
    }

    #[test]
    fn names_and_rule_provenance() {
        assert_eq!(Profile::parse("strict"), Ok(Profile::Strict));
        assert!(Profile::parse("lax")
            .unwrap_err()
            .contains("minimal, standard and strict"));
        assert_eq!(
            Profile::of_rule("default-deny-ssh-dir"),
            Some(Profile::Minimal)
        );
        assert_eq!(
            Profile::of_rule("standard-deny-read-credentials"),
            Some(Profile::Standard)
        );
        assert_eq!(
            Profile::of_rule("strict-ask-package-install"),
            Some(Profile::Strict)
        );
        assert_eq!(Profile::of_rule("mine"), None);
        assert!(Profile::Standard.rules().is_defaults());
        assert!(!Profile::Minimal.rules().is_defaults());
    }
}
