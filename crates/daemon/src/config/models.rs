//! `[judge]` and `[narrator]`: the daemon's own questions to a model
//! (see `crate::judge` and `crate::narrator`).

use std::time::Duration;

use serde::Deserialize;

use crate::model::Prices;

/// `[judge]` in config.toml.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct JudgeConfig {
    /// The provider of judge rules that name none.
    pub provider: Option<String>,
    /// The model of judge rules that name none (before the provider's).
    pub model: Option<String>,
    /// How long an answer is reused, as `"10m"`.
    pub cache_ttl: String,
    /// Model calls per UTC day.
    pub max_calls_per_day: u64,
    /// Dollars per UTC day.
    pub max_cost_usd_per_day: f64,
    /// Prices, for the cost.
    pub prices: Prices,
    /// How many of the session's recent events the model sees.
    pub recent_events: usize,
}

impl Default for JudgeConfig {
    fn default() -> JudgeConfig {
        JudgeConfig {
            provider: None,
            model: None,
            cache_ttl: "10m".into(),
            max_calls_per_day: 1000,
            max_cost_usd_per_day: 1.0,
            prices: Prices::default(),
            recent_events: 8,
        }
    }
}

impl JudgeConfig {
    /// Checks the table against the config's providers.
    pub fn validate(
        &self,
        providers: &std::collections::BTreeMap<String, crate::providers::Provider>,
    ) -> Result<(), (&'static str, String)> {
        if crate::rules::facts::parse_duration(&self.cache_ttl).is_err() {
            return Err((
                "cache_ttl",
                format!("{:?} is not a duration such as \"10m\"", self.cache_ttl),
            ));
        }
        if let Some(p) = &self.provider {
            if !providers.contains_key(p) {
                return Err((
                    "provider",
                    format!("`{p}` is not a [providers] entry of this file"),
                ));
            }
        }
        if self.max_cost_usd_per_day.is_nan() || self.max_cost_usd_per_day < 0.0 {
            return Err(("max_cost_usd_per_day", "must be 0 or more".into()));
        }
        Ok(())
    }

    /// `cache_ttl`.
    pub fn ttl(&self) -> Duration {
        Duration::from_secs(crate::rules::facts::parse_duration(&self.cache_ttl).unwrap_or(600))
    }
}

/// `[narrator]` in config.toml.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NarratorConfig {
    /// On or off (off by default).
    pub enabled: bool,
    /// The provider asked (a `[providers]` entry).
    pub provider: Option<String>,
    /// The model (else the provider's, else Haiku).
    pub model: Option<String>,
    /// Events gathered before a narration is asked (an ask waiting asks at once).
    pub min_events: usize,
    /// Events in one question at most (older ones are dropped).
    pub max_events: usize,
    /// Time between two narrations of one session, as `"20s"`.
    pub min_interval: String,
    /// Replaces the built-in system prompt.
    pub system_prompt: Option<String>,
    /// Model calls per UTC day.
    pub max_calls_per_day: u64,
    /// Dollars per UTC day.
    pub max_cost_usd_per_day: f64,
    /// Prices, for the cost.
    pub prices: Prices,
    /// A call's time limit, as `"10s"`.
    pub timeout: String,
}

impl Default for NarratorConfig {
    fn default() -> NarratorConfig {
        NarratorConfig {
            enabled: false,
            provider: None,
            model: None,
            min_events: 3,
            max_events: 20,
            min_interval: "20s".into(),
            system_prompt: None,
            max_calls_per_day: 500,
            max_cost_usd_per_day: 0.5,
            prices: Prices::default(),
            timeout: "10s".into(),
        }
    }
}

impl NarratorConfig {
    /// Whether it narrates.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Checks the table against the config's providers.
    pub fn validate(
        &self,
        providers: &std::collections::BTreeMap<String, crate::providers::Provider>,
    ) -> Result<(), (&'static str, String)> {
        for (key, v) in [
            ("min_interval", &self.min_interval),
            ("timeout", &self.timeout),
        ] {
            if crate::rules::facts::parse_duration(v).is_err() {
                return Err((key, format!("{v:?} is not a duration such as \"20s\"")));
            }
        }
        if self.min_events == 0 || self.max_events < self.min_events {
            return Err((
                "max_events",
                format!(
                    "min_events ({}) must be at least 1 and max_events ({}) at least min_events",
                    self.min_events, self.max_events
                ),
            ));
        }
        match &self.provider {
            Some(p) if !providers.contains_key(p) => Err((
                "provider",
                format!("`{p}` is not a [providers] entry of this file"),
            )),
            None if self.enabled => Err((
                "provider",
                "the narrator needs a provider (a [providers] entry with a key)".into(),
            )),
            _ => Ok(()),
        }
    }
}
