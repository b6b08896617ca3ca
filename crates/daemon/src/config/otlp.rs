//! `[otlp]` in config.toml: where and how to export (see the module doc of
//! `hookd::otlp` and docs/audit.md, "OpenTelemetry"). Pure: a header's secret is
//! read from its variable or file when the exporter starts
//! ([`OtlpConfig::resolve_headers`]), never written in the config itself.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Deserializer};

/// `[otlp]`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OtlpConfig {
    /// The collector's base URL (`http://127.0.0.1:4318`): logs go to
    /// `{endpoint}/v1/logs`, spans to `{endpoint}/v1/traces`, as with
    /// `OTEL_EXPORTER_OTLP_ENDPOINT`.
    pub endpoint: Endpoint,
    /// The encoding of the requests.
    #[serde(default)]
    pub protocol: Protocol,
    /// Request headers (an API key, a tenant), each read from an
    /// environment variable or a file.
    #[serde(default)]
    pub headers: BTreeMap<HeaderName, SecretSource>,
    /// The resource's `service.name`.
    #[serde(default = "default_service_name")]
    pub service_name: String,
    /// More resource attributes (`deployment.environment.name = "prod"`).
    #[serde(default)]
    pub resource: BTreeMap<String, AttributeValue>,
    /// Seconds a record may wait for its batch to fill before it is sent.
    #[serde(default = "default_interval", deserialize_with = "seconds")]
    pub interval: Duration,
    /// Records per request, at most.
    #[serde(default = "default_max_batch")]
    pub max_batch: usize,
    /// Undecided events remembered to pair with their decisions as spans,
    /// at most (an older one's decision is exported without a span). A
    /// collector down drops nothing: the exporter reads the log from its
    /// cursor and stops reading meanwhile.
    #[serde(default = "default_max_queue")]
    pub max_queue: usize,
    /// Seconds one request may take, connecting included.
    #[serde(default = "default_timeout", deserialize_with = "seconds")]
    pub timeout: Duration,
}

fn default_service_name() -> String {
    "hookd".to_string()
}

fn default_interval() -> Duration {
    Duration::from_secs(1)
}

fn default_max_batch() -> usize {
    512
}

fn default_max_queue() -> usize {
    4096
}

fn default_timeout() -> Duration {
    Duration::from_secs(10)
}

fn seconds<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    let secs = f64::deserialize(d)?;
    if !(secs.is_finite() && secs > 0.0 && secs <= 3600.0) {
        return Err(serde::de::Error::custom(
            "expected a number of seconds, more than 0 and at most 3600",
        ));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// How requests are encoded (OTLP/HTTP).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
pub enum Protocol {
    /// Protobuf, `application/x-protobuf` (the default of the OTLP spec).
    #[default]
    #[serde(rename = "http/protobuf")]
    HttpProtobuf,
    /// Protobuf's JSON mapping, `application/json`.
    #[serde(rename = "http/json")]
    HttpJson,
}

impl Protocol {
    /// The spelling of the config and of `OTEL_EXPORTER_OTLP_PROTOCOL`.
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::HttpProtobuf => "http/protobuf",
            Protocol::HttpJson => "http/json",
        }
    }

    /// The request's `Content-Type`.
    pub fn content_type(self) -> &'static str {
        match self {
            Protocol::HttpProtobuf => "application/x-protobuf",
            Protocol::HttpJson => "application/json",
        }
    }
}

/// A collector URL: `https://`, or `http://` to a loopback address (a
/// collector on this machine); without a trailing `/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint(String);

impl Endpoint {
    /// Reads `url`, or says what is wrong with it.
    pub fn parse(url: &str) -> Result<Endpoint, String> {
        let url = url.trim_end_matches('/');
        let (scheme, rest) = url.split_once("://").ok_or(
            "expected a URL such as \"http://127.0.0.1:4318\" or \"https://otlp.example.com\"",
        )?;
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        let host = match authority.strip_prefix('[') {
            Some(v6) => v6.split(']').next().unwrap_or_default(),
            None => authority
                .rsplit_once(':')
                .map_or(authority, |(host, _)| host),
        };
        if host.is_empty() {
            return Err("the URL has no host".into());
        }
        match scheme {
            "https" => {}
            "http" if is_loopback(host) => {}
            "http" => {
                return Err(format!(
                    "plain http is only for a collector on this machine (localhost, 127.0.0.1, [::1]); \
                     use https:// for {host}"
                ))
            }
            _ => return Err(format!("`{scheme}://` is not http:// or https://")),
        }
        if rest.contains(['?', '#']) {
            return Err("the URL must not have a query or a fragment".into());
        }
        Ok(Endpoint(url.to_string()))
    }

    /// The URL of one signal's requests: `{endpoint}/v1/{signal}`.
    pub fn signal(&self, signal: &str) -> String {
        format!("{}/v1/{signal}", self.0)
    }

    /// The URL as configured (without its trailing `/`).
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

fn is_loopback(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

impl<'de> Deserialize<'de> for Endpoint {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Endpoint, D::Error> {
        let url = String::deserialize(d)?;
        Endpoint::parse(&url).map_err(serde::de::Error::custom)
    }
}

/// An HTTP header name, checked (RFC 9110 token characters).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct HeaderName(String);

impl HeaderName {
    /// The name as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl<'de> Deserialize<'de> for HeaderName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<HeaderName, D::Error> {
        let name = String::deserialize(d)?;
        let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
        if name.is_empty() || !name.chars().all(token) {
            return Err(serde::de::Error::custom(
                "not an HTTP header name (letters, digits and !#$%&'*+-.^_`|~ only)",
            ));
        }
        Ok(HeaderName(name))
    }
}

/// Where a header's value is read from: never the config file itself, which
/// is often shared, committed or world-readable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretSource {
    /// `{ env = "NAME" }`: an environment variable of the daemon.
    Env(String),
    /// `{ file = "PATH" }`: a file's contents, without the final newline.
    File(PathBuf),
}

impl<'de> Deserialize<'de> for SecretSource {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<SecretSource, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields, rename_all = "snake_case")]
        enum Table {
            Env(String),
            File(PathBuf),
        }
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            // Read to tell a string from a table only: never printed.
            #[allow(dead_code)]
            Inline(String),
            Table(Table),
        }
        // The message never repeats the value: it is likely a secret.
        match Raw::deserialize(d) {
            Ok(Raw::Inline(_)) => Err(serde::de::Error::custom(
                "a header's value is not written in the config: use { env = \"VARIABLE\" } \
                 or { file = \"/path/to/secret\" }",
            )),
            Ok(Raw::Table(Table::Env(name))) => Ok(SecretSource::Env(name)),
            Ok(Raw::Table(Table::File(path))) => Ok(SecretSource::File(path)),
            Err(_) => Err(serde::de::Error::custom(
                "expected { env = \"VARIABLE\" } or { file = \"/path/to/secret\" }",
            )),
        }
    }
}

/// A resource attribute's value.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum AttributeValue {
    /// A string.
    String(String),
    /// A boolean.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A float.
    Double(f64),
}

impl OtlpConfig {
    /// The headers with their values read, or an error naming the header
    /// and its variable or file. `env` reads one environment variable.
    pub fn resolve_headers(
        &self,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Vec<(String, String)>, String> {
        self.headers
            .iter()
            .map(|(name, source)| {
                let name = name.as_str();
                let value = match source {
                    SecretSource::Env(var) => env(var).ok_or_else(|| {
                        format!("[otlp] headers.{name}: the environment variable {var} is not set")
                    })?,
                    SecretSource::File(path) => std::fs::read_to_string(path)
                        .map_err(|e| {
                            format!("[otlp] headers.{name}: reading {}: {e}", path.display())
                        })?
                        .trim_end_matches(['\n', '\r'])
                        .to_string(),
                };
                if value.is_empty() || value.chars().any(|c| c.is_control()) {
                    return Err(format!(
                        "[otlp] headers.{name}: the value from {} is empty or has control \
                         characters (a header value is one line)",
                        source.describe()
                    ));
                }
                Ok((name.to_string(), value))
            })
            .collect()
    }
}

impl SecretSource {
    fn describe(&self) -> String {
        match self {
            SecretSource::Env(var) => format!("${var}"),
            SecretSource::File(path) => path.display().to_string(),
        }
    }
}
