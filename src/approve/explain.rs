//! `e` on a pending item, and `hookd rules explain`: which rules match a
//! hook input and which nearly did, under a rules source and the input's
//! project layer.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use crate::daemon::{load_rules, RulesSource};
use crate::rules::{project_rules_path, Explanation, Layers, Query, RuleSet};

/// The rules source a daemon's `status` names (`rules.source`): a path, or
/// `defaults`.
pub fn source_named(name: &str) -> RulesSource {
    if name == "defaults" {
        RulesSource::Defaults
    } else {
        RulesSource::File(PathBuf::from(name))
    }
}

/// Explains `input` (a hook input) under `user` rules and the project
/// layer of the input's `cwd`, if it has one, as the daemon judges it.
pub fn explain_with(input: &Value, user: Arc<RuleSet>, home: Option<&Path>) -> Explanation {
    let project_dir = input["cwd"].as_str().map(PathBuf::from);
    let mut layers = Layers::new(user);
    if let Some(dir) = &project_dir {
        if let Ok(project) = RuleSet::load_project(&project_rules_path(dir)) {
            layers = layers.with_project(dir.clone(), Arc::new(project));
        }
    }
    let mut query = Query::new(input);
    query.project_dir = project_dir.as_deref();
    query.home = home;
    layers.explain(&query)
}

/// [`explain_with`] the rules of `source`, as text.
pub fn explain(input: &Value, source: &RulesSource) -> anyhow::Result<String> {
    let user = Arc::new(load_rules(source)?);
    let home = std::env::var_os("HOME").map(PathBuf::from);
    Ok(explain_with(input, user, home.as_deref()).to_string())
}
