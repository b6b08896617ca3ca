//! Providers: where an agent-SDK run's model calls go and how they are
//! paid for, from `[providers.NAME]` tables in the daemon's config file.
//!
//! ```toml
//! [providers.work]
//! kind = "anthropic"                 # the Anthropic API, with an API key
//! api_key_env = "WORK_ANTHROPIC_KEY" # or api_key_file = "/path/to/key"
//! model = "claude-sonnet-4-5"        # optional default model
//! thinking = "medium"                # optional: none, low, medium, high, xhigh, max
//!
//! [providers.max]
//! kind = "claude-max"                # this machine's Claude Code login; no key
//!
//! [providers.gateway]
//! kind = "custom"                    # any Anthropic-compatible endpoint
//! base_url = "https://llm.example.com/anthropic"
//! api_key_file = "/run/secrets/gateway"
//! auth = "bearer"                    # "x-api-key" (default) or "bearer"
//!
//! [providers.or]
//! kind = "openrouter"                # also "zai", "minimax": preset base URLs
//! api_key_env = "OPENROUTER_API_KEY"
//!
//! [providers.oai]
//! kind = "openai"                    # the OpenAI Responses API: Pi runs
//! api_key_env = "OPENAI_API_KEY"
//! model = "gpt-5"
//!
//! [providers.local]
//! kind = "custom"
//! base_url = "http://127.0.0.1:8080/v1"
//! api_key_file = "/run/secrets/local"
//! api = "openai-completions"         # which API the endpoint speaks
//! price = { input = 3.0, output = 15.0 } # USD per million tokens (Pi runs)
//! ```
//!
//! Each provider speaks one API ([`Api`]): the Anthropic Messages API
//! (both runtimes; by default the Claude Agent SDK) or another (Pi only).
//!
//! A provider becomes the adapter child's **environment** (the SDK's own
//! `env` option replaces the environment instead of merging, so hookd builds
//! the whole environment itself and the SDK inherits it) plus a few SDK
//! options (model, thinking). Keys never appear in frames, options or logs:
//! they go from the key's source straight into the child's environment.
//!
//! Checked twice: the shape when the config is loaded (unknown kind, missing
//! key, bad URL: errors name the field, `[providers.x].base_url: …`), and the
//! key's availability right before a run is spawned (the variable is set, the
//! file is readable), since both can change while the daemon runs.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::path::PathBuf;

use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::protocol::adapter::Runtime;

/// What kind of endpoint and credentials a provider uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderKind {
    /// The Anthropic API with an API key.
    Anthropic,
    /// This machine's Claude Code login (a Claude subscription); no key.
    ClaudeMax,
    /// Any Anthropic-compatible endpoint: `base_url` and a key.
    Custom,
    /// OpenRouter's Anthropic-compatible endpoint.
    Openrouter,
    /// Z.ai's Anthropic-compatible endpoint.
    Zai,
    /// MiniMax's Anthropic-compatible endpoint.
    Minimax,
    /// OpenAI's Responses API (Pi runs only).
    Openai,
    /// Google's Gemini API (Pi runs only).
    Gemini,
}

/// The model API a provider speaks, in Pi's spelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// Anthropic's Messages API: both runtimes.
    AnthropicMessages,
    /// OpenAI's Responses API.
    OpenaiResponses,
    /// OpenAI's Chat Completions API (and the many endpoints that copy it).
    OpenaiCompletions,
    /// Google's Gemini API.
    GoogleGenerativeAi,
}

impl Api {
    const ALL: [(&'static str, Api); 4] = [
        ("anthropic-messages", Api::AnthropicMessages),
        ("openai-responses", Api::OpenaiResponses),
        ("openai-completions", Api::OpenaiCompletions),
        ("google-generative-ai", Api::GoogleGenerativeAi),
    ];

    /// The config spelling (Pi's own name for it).
    pub fn as_str(self) -> &'static str {
        Api::ALL
            .iter()
            .find(|(_, a)| *a == self)
            .map_or("?", |(name, _)| name)
    }

    /// The runtime that hosts a run on this API unless told otherwise:
    /// the Claude Agent SDK for Anthropic's, Pi for the others.
    pub fn default_runtime(self) -> Runtime {
        match self {
            Api::AnthropicMessages => Runtime::ClaudeSdk,
            _ => Runtime::Pi,
        }
    }

    /// Pi's built-in provider whose model table knows this API's models
    /// (their limits and prices).
    fn pi_builtin(self) -> &'static str {
        match self {
            Api::AnthropicMessages => "anthropic",
            Api::OpenaiResponses | Api::OpenaiCompletions => "openai",
            Api::GoogleGenerativeAi => "google",
        }
    }
}

impl fmt::Display for Api {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a model costs, in US dollars per million tokens (Pi prices a run's
/// usage with it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// Input tokens.
    pub input: f64,
    /// Output tokens.
    pub output: f64,
    /// Input tokens read from the cache.
    #[serde(default)]
    pub cache_read: f64,
    /// Input tokens written to the cache.
    #[serde(default)]
    pub cache_write: f64,
}

impl ProviderKind {
    const ALL: [(&'static str, ProviderKind); 8] = [
        ("anthropic", ProviderKind::Anthropic),
        ("claude-max", ProviderKind::ClaudeMax),
        ("custom", ProviderKind::Custom),
        ("openrouter", ProviderKind::Openrouter),
        ("zai", ProviderKind::Zai),
        ("minimax", ProviderKind::Minimax),
        ("openai", ProviderKind::Openai),
        ("gemini", ProviderKind::Gemini),
    ];

    /// The config spelling.
    pub fn as_str(self) -> &'static str {
        ProviderKind::ALL
            .iter()
            .find(|(_, k)| *k == self)
            .map_or("?", |(name, _)| name)
    }

    /// The endpoint hosted providers come with (`base_url` may override it).
    pub fn preset_base_url(self) -> Option<&'static str> {
        match self {
            ProviderKind::Openrouter => Some("https://openrouter.ai/api"),
            ProviderKind::Zai => Some("https://api.z.ai/api/anthropic"),
            ProviderKind::Minimax => Some("https://api.minimax.io/anthropic"),
            ProviderKind::Openai => Some("https://api.openai.com/v1"),
            ProviderKind::Gemini => Some("https://generativelanguage.googleapis.com/v1beta"),
            _ => None,
        }
    }

    /// The API this kind speaks (`custom` chooses with `api`).
    fn api(self) -> Api {
        match self {
            ProviderKind::Openai => Api::OpenaiResponses,
            ProviderKind::Gemini => Api::GoogleGenerativeAi,
            _ => Api::AnthropicMessages,
        }
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a provider's key comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// An environment variable of the daemon.
    Env(String),
    /// A file (its contents, trimmed).
    File(PathBuf),
}

/// How the key is sent: Claude Code reads `ANTHROPIC_API_KEY` (the
/// `x-api-key` header) or `ANTHROPIC_AUTH_TOKEN` (`Authorization: Bearer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Auth {
    /// `ANTHROPIC_API_KEY`.
    ApiKey,
    /// `ANTHROPIC_AUTH_TOKEN`, with `ANTHROPIC_API_KEY` set empty so no
    /// other credential is tried.
    Bearer,
}

/// One `[providers.NAME]` table, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct Provider {
    /// The table's name.
    pub name: String,
    /// See [`ProviderKind`].
    pub kind: ProviderKind,
    /// The key's source; `None` only for `claude-max`.
    pub key: Option<KeySource>,
    /// The endpoint; `None` means Anthropic's own.
    pub base_url: Option<String>,
    /// How the key is sent.
    pub auth: Auth,
    /// Default model for runs that name none.
    pub model: Option<String>,
    /// Default thinking level: `none`, or an SDK effort level.
    pub thinking: Option<String>,
    /// The API it speaks.
    pub api: Api,
    /// What its models cost (Pi runs; the SDK prices Anthropic's itself).
    pub price: Option<Price>,
}

/// The variable that carries a provider's key into the Pi adapter.
pub const PI_KEY_ENV: &str = "HOOKD_PROVIDER_API_KEY";

/// The levels `thinking` accepts: `none` turns thinking off, the others are
/// the SDK's effort levels (with adaptive thinking).
pub const THINKING_LEVELS: [&str; 6] = ["none", "low", "medium", "high", "xhigh", "max"];

/// Variables that choose Claude Code's endpoint or credentials. A provider
/// with a key replaces all of them, so nothing of the daemon's own
/// environment can redirect or re-bill its runs.
fn is_credential_var(name: &OsStr) -> bool {
    let name = name.to_string_lossy();
    name.starts_with("ANTHROPIC_")
        || matches!(
            name.as_ref(),
            "CLAUDE_CODE_OAUTH_TOKEN" | "CLAUDE_CODE_USE_BEDROCK" | "CLAUDE_CODE_USE_VERTEX"
        )
}

/// The raw table, before validation.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProvider {
    kind: String,
    api_key_env: Option<String>,
    api_key_file: Option<PathBuf>,
    base_url: Option<String>,
    auth: Option<String>,
    model: Option<String>,
    thinking: Option<String>,
    api: Option<String>,
    price: Option<Price>,
}

impl Provider {
    /// Validates `[providers.NAME]`; errors name the field.
    pub fn parse(name: &str, table: &toml::Value) -> Result<Provider, String> {
        let at = |field: &str| format!("[providers.{name}].{field}");
        let raw: RawProvider = serde_path_to_error::deserialize(table.clone()).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner().to_string();
            if path == "." {
                format!("[providers.{name}]: {inner}")
            } else {
                format!("{}: {inner}", at(&path))
            }
        })?;
        let kind = ProviderKind::ALL
            .iter()
            .find(|(k, _)| *k == raw.kind)
            .map(|(_, kind)| *kind)
            .ok_or_else(|| {
                let known: Vec<&str> = ProviderKind::ALL.iter().map(|(k, _)| *k).collect();
                format!(
                    "{}: unknown kind `{}`; expected one of {}",
                    at("kind"),
                    raw.kind,
                    known.join(", ")
                )
            })?;
        let key = match (raw.api_key_env, raw.api_key_file) {
            (Some(_), Some(_)) => {
                return Err(format!(
                    "[providers.{name}]: give api_key_env or api_key_file, not both"
                ))
            }
            (Some(var), None) if var.is_empty() || var.contains('=') => {
                return Err(format!(
                    "{}: `{var}` is not an environment variable name",
                    at("api_key_env")
                ))
            }
            (Some(var), None) => Some(KeySource::Env(var)),
            (None, Some(path)) => Some(KeySource::File(expand_home(path))),
            (None, None) => None,
        };
        match (kind, &key) {
            (ProviderKind::ClaudeMax, Some(_)) => {
                return Err(format!(
                    "[providers.{name}]: kind \"claude-max\" uses this machine's Claude Code login \
                     and takes no key; remove api_key_env/api_key_file (or use kind \"anthropic\")"
                ))
            }
            (ProviderKind::ClaudeMax, None) => {}
            (_, None) => {
                return Err(format!(
                    "[providers.{name}]: kind \"{kind}\" needs a key: set api_key_env (a variable \
                     of hookd's environment) or api_key_file"
                ))
            }
            _ => {}
        }
        let base_url = match (&raw.base_url, kind) {
            (Some(_), ProviderKind::Anthropic | ProviderKind::ClaudeMax) => {
                return Err(format!(
                "{}: kind \"{kind}\" talks to Anthropic; use kind \"custom\" for another endpoint",
                at("base_url")
            ))
            }
            (Some(url), _) => {
                check_url(url).map_err(|why| format!("{}: `{url}` {why}", at("base_url")))?;
                Some(url.trim_end_matches('/').to_string())
            }
            (None, ProviderKind::Custom) => {
                return Err(format!(
                    "{}: kind \"custom\" needs the endpoint's base URL",
                    at("base_url")
                ))
            }
            (None, _) => kind.preset_base_url().map(str::to_string),
        };
        let auth = match (raw.auth.as_deref(), kind) {
            (None, ProviderKind::Anthropic | ProviderKind::ClaudeMax | ProviderKind::Custom) => {
                Auth::ApiKey
            }
            (None, _) => Auth::Bearer,
            (Some(value), ProviderKind::Custom) => match value {
                "x-api-key" => Auth::ApiKey,
                "bearer" => Auth::Bearer,
                other => {
                    return Err(format!(
                        "{}: `{other}`; expected \"x-api-key\" or \"bearer\"",
                        at("auth")
                    ))
                }
            },
            (Some(_), _) => {
                return Err(format!(
                    "{}: only kind \"custom\" chooses how its key is sent",
                    at("auth")
                ))
            }
        };
        if let Some(level) = &raw.thinking {
            if !THINKING_LEVELS.contains(&level.as_str()) {
                return Err(format!(
                    "{}: `{level}`; expected one of {}",
                    at("thinking"),
                    THINKING_LEVELS.join(", ")
                ));
            }
        }
        if raw.model.as_deref() == Some("") {
            return Err(format!("{}: empty model name", at("model")));
        }
        let api = match (raw.api.as_deref(), kind) {
            (None, kind) => kind.api(),
            (Some(name), ProviderKind::Custom) => Api::ALL
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, api)| *api)
                .ok_or_else(|| {
                    let known: Vec<&str> = Api::ALL.iter().map(|(n, _)| *n).collect();
                    format!(
                        "{}: unknown API `{name}`; expected one of {}",
                        at("api"),
                        known.join(", ")
                    )
                })?,
            (Some(_), kind) => {
                return Err(format!(
                    "{}: kind \"{kind}\" speaks {}; only kind \"custom\" chooses its API",
                    at("api"),
                    kind.api()
                ))
            }
        };
        if let Some(price) = &raw.price {
            let prices = [
                price.input,
                price.output,
                price.cache_read,
                price.cache_write,
            ];
            if prices.iter().any(|p| !(p.is_finite() && *p >= 0.0)) {
                return Err(format!(
                    "{}: prices are US dollars per million tokens, each a number >= 0",
                    at("price")
                ));
            }
        }
        Ok(Provider {
            name: name.to_string(),
            kind,
            key,
            base_url,
            auth,
            model: raw.model,
            thinking: raw.thinking,
            api,
            price: raw.price,
        })
    }

    /// The key, read now from its source; errors name the field and say
    /// what to do. Never logged.
    fn read_key(&self, daemon_env: &[(OsString, OsString)]) -> Result<Option<String>, String> {
        let name = &self.name;
        match &self.key {
            None => Ok(None),
            Some(KeySource::Env(var)) => {
                let value = daemon_env
                    .iter()
                    .find(|(k, _)| k == var.as_str())
                    .map(|(_, v)| v.to_string_lossy().trim().to_string())
                    .unwrap_or_default();
                if value.is_empty() {
                    return Err(format!(
                        "[providers.{name}].api_key_env: {var} is not set in hookd's environment \
                         (set it where hookd serve is started, e.g. `systemctl --user set-environment`)"
                    ));
                }
                Ok(Some(value))
            }
            Some(KeySource::File(path)) => {
                let text = std::fs::read_to_string(path).map_err(|e| {
                    format!(
                        "[providers.{name}].api_key_file: cannot read {}: {e}",
                        path.display()
                    )
                })?;
                let key = text.trim();
                if key.is_empty() {
                    return Err(format!(
                        "[providers.{name}].api_key_file: {} is empty",
                        path.display()
                    ));
                }
                Ok(Some(key.to_string()))
            }
        }
    }

    /// The key, read now from its source in the daemon's own environment
    /// (for the daemon's own model calls, [`crate::model`]). Never logged.
    pub fn key_now(&self) -> Result<Option<String>, String> {
        let env: Vec<(OsString, OsString)> = std::env::vars_os().collect();
        self.read_key(&env)
    }

    /// The adapter child's whole environment for a run of this provider,
    /// from the daemon's environment; checks the key on the way.
    pub fn environment(
        &self,
        daemon_env: &[(OsString, OsString)],
    ) -> Result<Vec<(OsString, OsString)>, String> {
        if self.kind == ProviderKind::ClaudeMax {
            // The login is only used when no key variable is set; one that is
            // would silently bill the run to an API account instead.
            for var in ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"] {
                if daemon_env.iter().any(|(k, v)| k == var && !v.is_empty()) {
                    return Err(format!(
                        "[providers.{}]: kind \"claude-max\" uses this machine's Claude Code login, \
                         but {var} is set in hookd's environment and would override it; unset it \
                         where hookd serve is started, or use a provider of kind \"anthropic\"",
                        self.name
                    ));
                }
            }
            return Ok(daemon_env.to_vec());
        }
        let key = self.read_key(daemon_env)?.unwrap_or_default();
        let mut env: Vec<(OsString, OsString)> = daemon_env
            .iter()
            .filter(|(k, _)| !is_credential_var(k))
            .cloned()
            .collect();
        if let Some(url) = &self.base_url {
            env.push(("ANTHROPIC_BASE_URL".into(), url.into()));
        }
        match self.auth {
            Auth::ApiKey => env.push(("ANTHROPIC_API_KEY".into(), key.into())),
            Auth::Bearer => {
                env.push(("ANTHROPIC_AUTH_TOKEN".into(), key.into()));
                env.push(("ANTHROPIC_API_KEY".into(), OsString::new()));
            }
        }
        Ok(env)
    }

    /// The Pi adapter's environment for a run of this provider: the
    /// daemon's, without its Anthropic credentials, with the key in
    /// [`PI_KEY_ENV`] (which the adapter reads and removes before any tool
    /// runs); checks the key on the way.
    pub fn pi_environment(
        &self,
        daemon_env: &[(OsString, OsString)],
    ) -> Result<Vec<(OsString, OsString)>, String> {
        if self.kind == ProviderKind::ClaudeMax {
            return Err(format!(
                "[providers.{}]: kind \"claude-max\" is this machine's Claude Code login, which \
                 only the claude-sdk runtime can use",
                self.name
            ));
        }
        let key = self.read_key(daemon_env)?.unwrap_or_default();
        let mut env: Vec<(OsString, OsString)> = daemon_env
            .iter()
            .filter(|(k, _)| !is_credential_var(k) && k != PI_KEY_ENV)
            .cloned()
            .collect();
        env.push((PI_KEY_ENV.into(), key.into()));
        Ok(env)
    }

    /// The Pi adapter's `provider` option: the name, the API, the endpoint,
    /// where Pi looks its models up, and the price, if set. No key.
    pub fn pi_provider(&self) -> Value {
        let base_url = self.base_url.clone().unwrap_or_else(|| match self.api {
            Api::AnthropicMessages => "https://api.anthropic.com".into(),
            _ => String::new(),
        });
        let mut provider = json!({
            "name": self.name,
            "api": self.api.as_str(),
            "baseUrl": base_url,
            "builtin": self.api.pi_builtin(),
        });
        if let Some(price) = self.price {
            provider["price"] = json!({
                "input": price.input,
                "output": price.output,
                "cacheRead": price.cache_read,
                "cacheWrite": price.cache_write,
            });
        }
        provider
    }

    /// Pi's thinking level for this provider's `thinking` (Pi has no `max`:
    /// its highest is `xhigh`).
    pub fn pi_thinking(&self) -> Option<&'static str> {
        Some(match self.thinking.as_deref()? {
            "none" => "off",
            "low" => "low",
            "medium" => "medium",
            "high" => "high",
            _ => "xhigh",
        })
    }

    /// SDK options this provider sets (a run's own options win).
    pub fn sdk_options(&self) -> Map<String, Value> {
        let mut options = Map::new();
        if let Some(model) = &self.model {
            options.insert("model".into(), model.clone().into());
        }
        match self.thinking.as_deref() {
            None => {}
            Some("none") => {
                options.insert("thinking".into(), json!({"type": "disabled"}));
            }
            Some(level) => {
                options.insert("thinking".into(), json!({"type": "adaptive"}));
                options.insert("effort".into(), level.into());
            }
        }
        options
    }
}

/// Parses every `[providers.*]` table.
pub fn parse_all(tables: &BTreeMap<String, toml::Value>) -> Result<Vec<Provider>, String> {
    tables
        .iter()
        .map(|(name, table)| Provider::parse(name, table))
        .collect()
}

fn expand_home(path: PathBuf) -> PathBuf {
    match path.strip_prefix("~") {
        Ok(rest) => match std::env::var_os("HOME") {
            Some(home) => PathBuf::from(home).join(rest),
            None => path,
        },
        Err(_) => path,
    }
}

/// An http(s) URL with a host and nothing a shell or header would choke on.
/// (No URL crate for one check; Claude Code reports the finer errors.)
fn check_url(url: &str) -> Result<(), &'static str> {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
        .ok_or("is not an http:// or https:// URL")?;
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("contains whitespace");
    }
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
    let name = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host.split(':').next().unwrap_or_default(),
    };
    if name.is_empty() {
        return Err("has no host");
    }
    if let Some((_, port)) = host.rsplit_once(':').filter(|_| !host.ends_with(']')) {
        if !port.is_empty() && port.parse::<u16>().is_err() {
            return Err("has a bad port");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Provider, String> {
        let table: toml::Value = toml::from_str(text).unwrap();
        Provider::parse("p", &table)
    }

    fn env(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect()
    }

    fn get<'a>(env: &'a [(OsString, OsString)], name: &str) -> Option<&'a str> {
        env.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.to_str().unwrap())
    }

    #[test]
    fn presets_and_defaults() {
        let p = parse("kind = \"openrouter\"\napi_key_env = \"OR\"\nmodel = \"m\"").unwrap();
        assert_eq!(p.base_url.as_deref(), Some("https://openrouter.ai/api"));
        assert_eq!(p.auth, Auth::Bearer);
        let p = parse("kind = \"zai\"\napi_key_env = \"Z\"\nbase_url = \"https://open.example.cn/api/anthropic/\"").unwrap();
        assert_eq!(
            p.base_url.as_deref(),
            Some("https://open.example.cn/api/anthropic")
        );
        let p = parse("kind = \"anthropic\"\napi_key_file = \"/k\"").unwrap();
        assert_eq!((p.base_url, p.auth), (None, Auth::ApiKey));
        let p = parse("kind = \"claude-max\"").unwrap();
        assert_eq!(p.key, None);
    }

    #[test]
    fn errors_name_the_field() {
        let cases = [
            ("kind = \"bedrock\"", "[providers.p].kind: unknown kind `bedrock`"),
            ("kind = \"anthropic\"", "needs a key"),
            ("kind = \"anthropic\"\napi_key_env = \"A\"\napi_key_file = \"/f\"", "not both"),
            ("kind = \"claude-max\"\napi_key_env = \"A\"", "takes no key"),
            ("kind = \"custom\"\napi_key_env = \"A\"", "[providers.p].base_url: kind \"custom\" needs"),
            ("kind = \"custom\"\napi_key_env = \"A\"\nbase_url = \"ftp://x\"", "[providers.p].base_url: `ftp://x` is not an http"),
            ("kind = \"custom\"\napi_key_env = \"A\"\nbase_url = \"https://\"", "has no host"),
            ("kind = \"custom\"\napi_key_env = \"A\"\nbase_url = \"http://h:99999\"", "bad port"),
            ("kind = \"custom\"\napi_key_env = \"A\"\nbase_url = \"https://h\"\nauth = \"basic\"", "[providers.p].auth"),
            ("kind = \"anthropic\"\napi_key_env = \"A\"\nbase_url = \"https://h\"", "[providers.p].base_url"),
            ("kind = \"anthropic\"\napi_key_env = \"A\"\nthinking = \"lots\"", "[providers.p].thinking"),
            ("kind = \"anthropic\"\napi_key_env = \"A\"\nbase_ur = \"https://h\"", "[providers.p].base_ur: unknown field `base_ur`"),
            ("kind = \"anthropic\"\napi_key_env = 3", "[providers.p].api_key_env: invalid type"),
        ];
        for (text, expected) in cases {
            let err = parse(text).unwrap_err();
            assert!(err.contains(expected), "{text}\n→ {err}");
        }
    }

    #[test]
    fn key_providers_replace_every_credential_variable() {
        let daemon = env(&[
            ("PATH", "/bin"),
            ("ANTHROPIC_API_KEY", "daemon-key"),
            ("ANTHROPIC_BASE_URL", "http://elsewhere"),
            ("CLAUDE_CODE_OAUTH_TOKEN", "tok"),
            ("OR_KEY", " or-secret \n"),
        ]);
        let p = parse("kind = \"openrouter\"\napi_key_env = \"OR_KEY\"").unwrap();
        let child = p.environment(&daemon).unwrap();
        assert_eq!(get(&child, "PATH"), Some("/bin"));
        assert_eq!(get(&child, "ANTHROPIC_AUTH_TOKEN"), Some("or-secret"));
        assert_eq!(get(&child, "ANTHROPIC_API_KEY"), Some(""));
        assert_eq!(
            get(&child, "ANTHROPIC_BASE_URL"),
            Some("https://openrouter.ai/api")
        );
        assert_eq!(get(&child, "CLAUDE_CODE_OAUTH_TOKEN"), None);
        assert_eq!(
            child
                .iter()
                .filter(|(k, _)| k == "ANTHROPIC_API_KEY")
                .count(),
            1
        );

        let p = parse("kind = \"anthropic\"\napi_key_env = \"MISSING\"").unwrap();
        let err = p.environment(&daemon).unwrap_err();
        assert!(
            err.contains("[providers.p].api_key_env: MISSING is not set"),
            "{err}"
        );

        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("key");
        std::fs::write(&file, "file-secret\n").unwrap();
        let p = parse(&format!("kind = \"anthropic\"\napi_key_file = {:?}", file)).unwrap();
        let child = p.environment(&daemon).unwrap();
        assert_eq!(get(&child, "ANTHROPIC_API_KEY"), Some("file-secret"));
        assert_eq!(get(&child, "ANTHROPIC_BASE_URL"), None);
        let p = parse("kind = \"anthropic\"\napi_key_file = \"/nonexistent/key\"").unwrap();
        let err = p.environment(&daemon).unwrap_err();
        assert!(
            err.contains("[providers.p].api_key_file: cannot read /nonexistent/key"),
            "{err}"
        );
    }

    #[test]
    fn claude_max_refuses_a_key_that_would_override_the_login() {
        let p = parse("kind = \"claude-max\"").unwrap();
        let err = p
            .environment(&env(&[("ANTHROPIC_API_KEY", "k")]))
            .unwrap_err();
        assert!(err.contains("ANTHROPIC_API_KEY is set"), "{err}");
        let err = p
            .environment(&env(&[("ANTHROPIC_AUTH_TOKEN", "k")]))
            .unwrap_err();
        assert!(err.contains("ANTHROPIC_AUTH_TOKEN"), "{err}");
        let ok = p.environment(&env(&[("HOME", "/h"), ("ANTHROPIC_API_KEY", "")]));
        assert!(ok.is_ok());
    }

    #[test]
    fn providers_say_which_api_they_speak_and_so_which_runtime() {
        let p = parse("kind = \"anthropic\"\napi_key_env = \"A\"").unwrap();
        assert_eq!(p.api.default_runtime(), Runtime::ClaudeSdk);
        let p = parse("kind = \"openai\"\napi_key_env = \"O\"\nmodel = \"gpt-5\"").unwrap();
        assert_eq!(
            (p.api, p.api.default_runtime()),
            (Api::OpenaiResponses, Runtime::Pi)
        );
        assert_eq!(p.base_url.as_deref(), Some("https://api.openai.com/v1"));
        let p = parse(
            "kind = \"custom\"\napi_key_env = \"K\"\nbase_url = \"http://127.0.0.1:9/v1\"\n\
             api = \"openai-completions\"\nprice = { input = 3, output = 15 }",
        )
        .unwrap();
        assert_eq!(p.api, Api::OpenaiCompletions);
        assert_eq!(
            p.pi_provider(),
            json!({"name": "p", "api": "openai-completions", "baseUrl": "http://127.0.0.1:9/v1",
                   "builtin": "openai",
                   "price": {"input": 3.0, "output": 15.0, "cacheRead": 0.0, "cacheWrite": 0.0}})
        );
        let child = p
            .pi_environment(&env(&[("K", "secret"), ("ANTHROPIC_API_KEY", "daemon")]))
            .unwrap();
        assert_eq!(get(&child, PI_KEY_ENV), Some("secret"));
        assert_eq!(get(&child, "ANTHROPIC_API_KEY"), None);
        let max = parse("kind = \"claude-max\"").unwrap();
        assert!(max
            .pi_environment(&[])
            .unwrap_err()
            .contains("only the claude-sdk runtime"));
        for (text, expected) in [
            (
                "kind = \"openai\"\napi_key_env = \"O\"\napi = \"openai-completions\"",
                "[providers.p].api: kind \"openai\" speaks openai-responses",
            ),
            (
                "kind = \"custom\"\napi_key_env = \"K\"\nbase_url = \"http://h\"\napi = \"soap\"",
                "[providers.p].api: unknown API `soap`",
            ),
            (
                "kind = \"openai\"\napi_key_env = \"O\"\nprice = { input = -1, output = 1 }",
                "[providers.p].price",
            ),
            (
                "kind = \"openai\"\napi_key_env = \"O\"\nprice = { input = 1 }",
                "[providers.p].price",
            ),
        ] {
            let err = parse(text).unwrap_err();
            assert!(err.contains(expected), "{text}\n→ {err}");
        }
    }

    #[test]
    fn thinking_becomes_sdk_options() {
        let p = parse("kind = \"claude-max\"\nthinking = \"none\"\nmodel = \"opus\"").unwrap();
        assert_eq!(
            Value::Object(p.sdk_options()),
            json!({"model": "opus", "thinking": {"type": "disabled"}})
        );
        let p = parse("kind = \"claude-max\"\nthinking = \"high\"").unwrap();
        assert_eq!(
            Value::Object(p.sdk_options()),
            json!({"thinking": {"type": "adaptive"}, "effort": "high"})
        );
    }
}
