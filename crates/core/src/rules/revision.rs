//! Policy revisions: one short name for what a set of rules says, the same
//! on every machine (as OPA stamps every decision with its bundle's
//! revision).
//!
//! A rules file's **content hash** is the SHA-256 of a canonical form of
//! its parsed TOML, not of its bytes: comments, whitespace, key order
//! inside a table, quoting style and the file's path or mtime change
//! nothing; the order of the `[[rule]]`s does (it is the order of
//! `rule_ids` and of joined reasons), the order of `[trust] projects` does
//! not (it is a set). The layer kind (user or project) is part of it: the
//! same text means something else in a project file.
//!
//! The canonical form is JSON-like, written by `canonical` with every
//! table's keys sorted bytewise, arrays in order, strings escaped as JSON
//! does, integers in decimal, floats in Rust's shortest round-trip form and
//! datetimes as TOML writes them. A **revision** combines the content
//! hashes of the layers in effect, in precedence order, each under its
//! label ([`of_layers`]): `sha256:` and the first 32 hex digits
//! (128 bits) of
//! `SHA-256("hookd-policy-v1\n" ‖ for each layer: label "\n" hex(content hash) "\n")`.

use sha2::{Digest, Sha256};

use crate::hex;

use super::{LayerKind, RuleSet};

/// How many hex digits of the SHA-256 a revision keeps (128 bits).
const REVISION_HEX_DIGITS: usize = 32;

pub use hookd_protocol::decision::Revision;

/// The revision of `layers`, given in precedence order, each with its
/// label (`user`, `project`, or a policy source's name): the same layers
/// with the same content give the same revision anywhere.
pub fn of_layers<'a>(layers: impl IntoIterator<Item = (&'a str, &'a RuleSet)>) -> Revision {
    let mut hasher = Sha256::new();
    hasher.update(b"hookd-policy-v1\n");
    for (label, set) in layers {
        hasher.update(label.as_bytes());
        hasher.update(b"\n");
        hasher.update(hex::encode(&set.content_hash()).as_bytes());
        hasher.update(b"\n");
    }
    let digest = hex::encode(&hasher.finalize());
    Revision::from_written(&format!("sha256:{}", &digest[..REVISION_HEX_DIGITS]))
}

/// The content hash of a rules file's text `src` read as `kind` (the text
/// has compiled: it is valid TOML).
pub(crate) fn content_hash(src: &str, kind: LayerKind) -> [u8; 32] {
    let mut doc: toml::Table = src
        .parse()
        .expect("text that compiled as rules is valid TOML");
    // `[trust] projects` is a set: its order says nothing.
    if let Some(toml::Value::Array(projects)) = doc
        .get_mut("trust")
        .and_then(|t| t.as_table_mut())
        .and_then(|t| t.get_mut("projects"))
    {
        projects.sort_by_cached_key(|v| {
            let mut key = Vec::new();
            canonical(v, &mut key);
            key
        });
    }
    let mut text = Vec::with_capacity(src.len());
    text.extend_from_slice(match kind {
        LayerKind::User => b"user\n",
        LayerKind::Project => b"project\n",
        LayerKind::Policy => b"policy\n",
    });
    canonical_table(&doc, &mut text);
    Sha256::digest(&text).into()
}

/// Writes `value`'s canonical form to `out` (see the module's doc).
fn canonical(value: &toml::Value, out: &mut Vec<u8>) {
    match value {
        toml::Value::String(s) => {
            serde_json::to_writer(&mut *out, s).expect("writing to a Vec cannot fail")
        }
        toml::Value::Integer(n) => out.extend_from_slice(n.to_string().as_bytes()),
        toml::Value::Float(x) => out.extend_from_slice(format!("{x:?}").as_bytes()),
        toml::Value::Boolean(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        toml::Value::Datetime(d) => {
            serde_json::to_writer(&mut *out, &d.to_string()).expect("writing to a Vec cannot fail")
        }
        toml::Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                canonical(item, out);
            }
            out.push(b']');
        }
        toml::Value::Table(table) => canonical_table(table, out),
    }
}

fn canonical_table(table: &toml::Table, out: &mut Vec<u8>) {
    let mut keys: Vec<&String> = table.keys().collect();
    keys.sort();
    out.push(b'{');
    for (i, key) in keys.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        serde_json::to_writer(&mut *out, key).expect("writing to a Vec cannot fail");
        out.push(b':');
        canonical(&table[key], out);
    }
    out.push(b'}');
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    const RULES: &str = r#"
# Deny force pushes.
[[rule]]
id = "no-force"
action = "deny"
tool = "Bash(git push *)"
reason = "Force-pushing rewrites history."
when = [{ field = "$command.args", equals = "--force" }]

[[rule]]
id = "tests"
action = "allow"
tool = ["Bash(cargo test *)", "Bash(npm test)"]

[trust]
projects = ["~/src/mine", "/work/team/**"]
"#;

    /// The same rules, written otherwise: other comments, whitespace, key
    /// order, quoting, inline tables as sub-tables, trust in another order.
    const SAME_RULES: &str = r#"
[trust]
projects = [ '/work/team/**', '~/src/mine' ]

[[rule]]
action  = 'deny'
id      = 'no-force'   # the id
reason  = """Force-pushing rewrites history."""
tool    = 'Bash(git push *)'
[[rule.when]]
equals = "--force"
field = "$command.args"

[[rule]]
tool = [
  "Bash(cargo test *)",
  "Bash(npm test)",
]
action = "allow"
id = "tests"
"#;

    fn revision(src: &str, origin: &str) -> Revision {
        RuleSet::parse(src, Path::new(origin))
            .unwrap()
            .revision()
            .clone()
    }

    #[test]
    fn the_same_rules_written_otherwise_in_another_file_have_the_same_revision() {
        let a = revision(RULES, "/home/a/.config/hookd/rules.toml");
        let b = revision(SAME_RULES, "/srv/other/place.toml");
        assert_eq!(a, b);
        let text = a.as_str();
        assert!(text.starts_with("sha256:"), "{text}");
        assert_eq!(text.len(), "sha256:".len() + REVISION_HEX_DIGITS, "{text}");
        assert!(text["sha256:".len()..]
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
    }

    #[test]
    fn any_change_to_a_rule_changes_the_revision() {
        let base = revision(RULES, "r.toml");
        let changes = [
            ("\"deny\"", "\"ask\""),
            ("no-force", "no-force-2"),
            ("rewrites history.", "rewrites history"),
            ("equals = \"--force\"", "equals = \"-f\""),
            ("\"Bash(npm test)\"", "\"Bash(npm test *)\""),
            ("\"/work/team/**\"", "\"/work/teams/**\""),
        ];
        for (from, to) in changes {
            assert!(RULES.contains(from), "{from}");
            let changed = revision(&RULES.replacen(from, to, 1), "r.toml");
            assert_ne!(changed, base, "{from} → {to}");
        }
        // A rule added, and the rules' order swapped (it is the order of
        // rule_ids and reasons).
        let added =
            format!("{RULES}\n[[rule]]\nid = \"x\"\naction = \"deny\"\ntool = \"Bash(x)\"\n");
        assert_ne!(revision(&added, "r.toml"), base);
        let (head, rest) = RULES.split_at(RULES.find("[[rule]]").unwrap());
        let second = rest[1..].find("[[rule]]").unwrap() + 1;
        let trust = rest.find("[trust]").unwrap();
        let swapped = format!(
            "{head}{}{}{}",
            &rest[second..trust],
            &rest[..second],
            &rest[trust..]
        );
        assert_ne!(revision(&swapped, "r.toml"), base);
    }

    #[test]
    fn the_layer_kind_and_labels_are_part_of_the_revision() {
        let user = RuleSet::parse(
            "[[rule]]\nid = \"a\"\naction = \"deny\"\ntool = \"Bash(rm *)\"\n",
            Path::new("a"),
        )
        .unwrap();
        let project = RuleSet::parse_project(
            "[[rule]]\nid = \"a\"\naction = \"deny\"\ntool = \"Bash(rm *)\"\n",
            Path::new("a"),
        )
        .unwrap();
        assert_ne!(user.content_hash(), project.content_hash());
        assert_ne!(of_layers([("user", &user)]), of_layers([("team", &user)]));
        assert_ne!(
            of_layers([("user", &user), ("project", &project)]),
            of_layers([("project", &project), ("user", &user)])
        );
    }

    #[test]
    fn a_revision_reads_back_as_written() {
        let r = revision(RULES, "r.toml");
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(serde_json::from_str::<Revision>(&json).unwrap(), r);
    }
}
