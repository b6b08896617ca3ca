//! The npm lock files `scripts/test` installs from with `npm ci`: every
//! dependency a locked package names, optional ones included, has its own
//! entry in the lock. `npm ci` refuses a lock that lacks one ("Missing: …
//! from lock file"), even for another platform's optional binary, and a
//! `node_modules` made by `npm install` never shows it: only a fresh
//! machine does. This catches it before CI does.

use std::path::Path;

use serde_json::Value;

/// The lock files `scripts/test` runs `npm ci` on.
const LOCKS: &[&str] = &[
    "tests/e2e/package-lock.json",
    "tests/agents/package-lock.json",
    "adapter/package-lock.json",
];

/// Where npm would find `name` for the package at `path` (`""` is the
/// root, `node_modules/a/node_modules/b` a nested one): in its own
/// `node_modules`, then in each enclosing package's, up to the root's.
fn resolves(packages: &serde_json::Map<String, Value>, path: &str, name: &str) -> bool {
    let mut base = path.to_string();
    loop {
        let candidate = if base.is_empty() {
            format!("node_modules/{name}")
        } else {
            format!("{base}/node_modules/{name}")
        };
        if packages.contains_key(&candidate) {
            return true;
        }
        if base.is_empty() {
            return false;
        }
        base = match base.rfind("/node_modules/") {
            Some(at) => base[..at].to_string(),
            None => String::new(),
        };
    }
}

/// Each `(package, dependency)` of `lock` that has no entry of its own.
fn missing(lock: &Value) -> Vec<String> {
    let packages = lock["packages"]
        .as_object()
        .expect("a lockfileVersion 3 `packages` map");
    let mut missing = Vec::new();
    for (path, package) in packages {
        if package.get("link").and_then(Value::as_bool) == Some(true) {
            continue;
        }
        for field in ["dependencies", "optionalDependencies"] {
            let Some(names) = package.get(field).and_then(Value::as_object) else {
                continue;
            };
            for name in names.keys() {
                let peer_optional = package
                    .get("peerDependenciesMeta")
                    .and_then(|meta| meta.get(name))
                    .is_some();
                if !peer_optional && !resolves(packages, path, name) {
                    let owner = if path.is_empty() {
                        "the root"
                    } else {
                        path.as_str()
                    };
                    missing.push(format!("{owner} → {name} ({field})"));
                }
            }
        }
    }
    missing
}

#[test]
fn every_dependency_a_lock_names_has_an_entry_npm_ci_can_install() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut problems = Vec::new();
    for lock in LOCKS {
        let text =
            std::fs::read_to_string(root.join(lock)).unwrap_or_else(|e| panic!("{lock}: {e}"));
        let parsed: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{lock}: {e}"));
        problems.extend(missing(&parsed).into_iter().map(|m| format!("{lock}: {m}")));
    }
    assert!(
        problems.is_empty(),
        "`npm ci` would refuse these locks (\"Missing: … from lock file\"); add the entries \
         (another platform's optional package needs only version, os, cpu and optional):\n{}",
        problems.join("\n")
    );
}

#[test]
fn an_optional_dependency_without_an_entry_is_reported_and_a_nested_one_resolves() {
    let lock = serde_json::json!({"packages": {
        "": {"dependencies": {"tool": "1.0.0"}},
        "node_modules/tool": {"version": "1.0.0",
            "dependencies": {"shared": "^2"},
            "optionalDependencies": {"tool-linux-x64": "1.0.0", "tool-darwin-arm64": "1.0.0"}},
        "node_modules/tool/node_modules/shared": {"version": "2.0.0"},
        "node_modules/tool-linux-x64": {"version": "1.0.0", "optional": true}
    }});
    assert_eq!(
        missing(&lock),
        ["node_modules/tool → tool-darwin-arm64 (optionalDependencies)"]
    );
}
