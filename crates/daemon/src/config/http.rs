//! `[http]` and `[notify]`: the HTTP listener's and the pushes' settings
//! (the face itself is `crate::http`). Pure data and its checks, read with
//! the rest of `config.toml`.

use std::net::SocketAddr;
use std::path::PathBuf;

use serde::Deserialize;

/// Request bodies larger than this are refused (413) unless
/// `[http] max_body_bytes` says otherwise.
pub const DEFAULT_MAX_BODY_BYTES: usize = 1024 * 1024;

/// HTTP connections open at once before new ones are closed at accept.
pub const DEFAULT_MAX_CONNECTIONS: usize = 64;

/// `[http]`.
///
/// ```toml
/// [http]
/// listen = "127.0.0.1:7878"   # off when absent (or `hookd serve --http ADDR`)
/// allow_remote = false        # needed for a non-loopback address (a tailnet's)
/// public_url = "http://box.tailnet.ts.net:7878"  # base of links; default http://<listen>
/// max_body_bytes = 1048576
/// max_connections = 64
/// token_file = "…"            # default: http-token beside config.toml
/// ```
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpConfig {
    /// The address to listen on; `None`: no listener.
    pub listen: Option<SocketAddr>,
    /// Whether a non-loopback `listen` is allowed.
    #[serde(default)]
    pub allow_remote: bool,
    /// The base URL links are built on (a tailnet name, say), when it is
    /// not `http://<listen>`.
    pub public_url: Option<String>,
    /// The request body cap in bytes.
    pub max_body_bytes: Option<usize>,
    /// The connection cap.
    pub max_connections: Option<usize>,
    /// The bearer token's file.
    pub token_file: Option<PathBuf>,
}

/// A `public_url` split into what the listener checks requests against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicUrl {
    /// `http` or `https`.
    pub scheme: String,
    /// `host` or `host:port`, lowercased, as a Host header carries it.
    pub authority: String,
    /// The URL without a trailing slash: links are `{base}/a/{token}`.
    pub base: String,
}

impl PublicUrl {
    /// Parses `url` (`http://host[:port][/prefix]`); the error says what is
    /// wrong with it.
    pub fn parse(url: &str) -> Result<PublicUrl, String> {
        let (scheme, rest) = url
            .split_once("://")
            .ok_or_else(|| format!("`{url}` is not a URL: write it as http://host:port"))?;
        let scheme = scheme.to_ascii_lowercase();
        if scheme != "http" && scheme != "https" {
            return Err(format!("`{url}`: the scheme must be http or https"));
        }
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        if authority.is_empty()
            || authority.contains('@')
            || authority.contains(char::is_whitespace)
        {
            return Err(format!(
                "`{url}` has no valid host: write it as {scheme}://host:port"
            ));
        }
        Ok(PublicUrl {
            scheme,
            authority: authority.to_ascii_lowercase(),
            base: url.trim_end_matches('/').to_string(),
        })
    }
}

impl HttpConfig {
    /// The body cap.
    pub fn max_body_bytes(&self) -> usize {
        self.max_body_bytes.unwrap_or(DEFAULT_MAX_BODY_BYTES)
    }

    /// The connection cap.
    pub fn max_connections(&self) -> usize {
        self.max_connections
            .unwrap_or(DEFAULT_MAX_CONNECTIONS)
            .max(1)
    }

    /// Checks the section as a whole (what serde cannot): a non-loopback
    /// `listen` without `allow_remote`, a malformed `public_url`. Errors
    /// name the key and say what to do.
    pub fn check(&self) -> Result<(), String> {
        if let Some(listen) = self.listen {
            if !listen.ip().is_loopback() && !self.allow_remote {
                return Err(format!(
                    "`http.listen`: {listen} is not a loopback address; anyone who can reach it \
                     could open approval links. Set `allow_remote = true` in [http] if that is \
                     meant (a tailnet address, say), or listen on 127.0.0.1"
                ));
            }
        }
        if let Some(url) = &self.public_url {
            PublicUrl::parse(url).map_err(|e| format!("`http.public_url`: {e}"))?;
        }
        if self.max_body_bytes == Some(0) {
            return Err("`http.max_body_bytes` must be more than 0".into());
        }
        Ok(())
    }

    /// The base URL of links: `public_url`, else `http://<listen>`.
    pub fn public_url(&self) -> Option<PublicUrl> {
        match (&self.public_url, self.listen) {
            (Some(url), _) => PublicUrl::parse(url).ok(),
            (None, Some(listen)) => PublicUrl::parse(&format!("http://{listen}")).ok(),
            (None, None) => None,
        }
    }
}

/// `[notify]`: where a push goes when an event waits for a person.
///
/// ```toml
/// [[notify.ntfy]]
/// url = "https://ntfy.sh/my-hookd-topic"   # the topic URL
/// token_env = "NTFY_TOKEN"                # or token_file = "…"; never inline
///
/// [[notify.webhook]]
/// url = "https://hooks.slack.com/services/…"
/// slack = true                            # add Slack's `text`
/// ```
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NotifyConfig {
    /// ntfy topics.
    #[serde(default)]
    pub ntfy: Vec<NtfyTarget>,
    /// Webhooks receiving a JSON document.
    #[serde(default)]
    pub webhook: Vec<WebhookTarget>,
}

/// `[[notify.ntfy]]`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NtfyTarget {
    /// The topic URL (`https://ntfy.sh/TOPIC`).
    pub url: String,
    /// An environment variable holding an access token.
    pub token_env: Option<String>,
    /// A file holding an access token.
    pub token_file: Option<PathBuf>,
}

/// `[[notify.webhook]]`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebhookTarget {
    /// Where the JSON document is POSTed.
    pub url: String,
    /// Add a Slack-compatible `text` field.
    #[serde(default)]
    pub slack: bool,
}

impl NotifyConfig {
    /// How many targets.
    pub fn targets(&self) -> usize {
        self.ntfy.len() + self.webhook.len()
    }

    /// Checks every target's URL (`https://`, or `http://` to a loopback
    /// host) and token source; errors name the key.
    pub fn check(&self) -> Result<(), String> {
        for (i, target) in self.ntfy.iter().enumerate() {
            let key = format!("notify.ntfy[{i}]");
            check_push_url(&target.url).map_err(|e| format!("`{key}.url`: {e}"))?;
            let (_, topic) = ntfy_server_and_topic(&target.url).ok_or_else(|| {
                format!(
                    "`{key}.url`: `{}` names no topic: write it as https://ntfy.sh/TOPIC",
                    target.url
                )
            })?;
            if topic.is_empty() {
                return Err(format!("`{key}.url`: the topic is empty"));
            }
            if target.token_env.is_some() && target.token_file.is_some() {
                return Err(format!(
                    "`{key}`: give `token_env` or `token_file`, not both"
                ));
            }
        }
        for (i, target) in self.webhook.iter().enumerate() {
            check_push_url(&target.url).map_err(|e| format!("`notify.webhook[{i}].url`: {e}"))?;
        }
        Ok(())
    }
}

/// `https://…`, or `http://` to a loopback host (tests, a local relay).
fn check_push_url(url: &str) -> Result<(), String> {
    let parsed = PublicUrl::parse(url)?;
    if parsed.scheme == "https" {
        return Ok(());
    }
    let host = parsed
        .authority
        .rsplit_once(':')
        .filter(|(_, port)| port.chars().all(|c| c.is_ascii_digit()))
        .map_or(parsed.authority.as_str(), |(host, _)| host);
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let loopback = host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    if loopback {
        Ok(())
    } else {
        Err(format!(
            "`{url}`: pushes leave this machine, so use https:// (plain http:// only to a loopback address)"
        ))
    }
}

/// `https://ntfy.sh/topic` → (`https://ntfy.sh`, `topic`): ntfy's JSON
/// publishing POSTs to the server's root with the topic in the body.
pub fn ntfy_server_and_topic(url: &str) -> Option<(String, String)> {
    let trimmed = url.trim_end_matches('/');
    let (scheme, rest) = trimmed.split_once("://")?;
    let (authority_and_path, topic) = rest.rsplit_once('/')?;
    Some((
        format!("{scheme}://{authority_and_path}"),
        topic.to_string(),
    ))
}

/// The checks of `[http]` and `[notify]` that need no IO: a reload of
/// config.toml is refused when they fail, as start-up is.
pub fn check(config: &crate::config::Config) -> anyhow::Result<()> {
    let notify = &config.notify;
    notify
        .check()
        .map_err(|e| anyhow::anyhow!("[notify] {e}"))?;
    match config.http.listen {
        Some(_) => config
            .http
            .check()
            .map_err(|e| anyhow::anyhow!("[http] {e}")),
        None if notify.targets() > 0 => anyhow::bail!(
            "[notify] has targets but [http] has no `listen`: pushes carry links to the HTTP \
             listener; set `listen` in [http] (or `hookd serve --http ADDR`)"
        ),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(text: &str) -> HttpConfig {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn a_remote_address_needs_allow_remote() {
        let remote = config("listen = \"100.64.1.2:7878\"");
        let error = remote.check().unwrap_err();
        assert!(error.contains("allow_remote = true"), "{error}");
        let allowed = config("listen = \"100.64.1.2:7878\"\nallow_remote = true");
        assert_eq!(allowed.check(), Ok(()));
        assert_eq!(config("listen = \"127.0.0.1:7878\"").check(), Ok(()));
        assert_eq!(config("listen = \"[::1]:7878\"").check(), Ok(()));
    }

    #[test]
    fn public_url_defaults_to_the_listen_address() {
        let local = config("listen = \"127.0.0.1:7878\"");
        assert_eq!(local.public_url().unwrap().base, "http://127.0.0.1:7878");
        let tailnet = config(
            "listen = \"100.64.1.2:7878\"\nallow_remote = true\npublic_url = \"http://Box.tail.ts.net:7878/\"",
        );
        let url = tailnet.public_url().unwrap();
        assert_eq!(url.base, "http://Box.tail.ts.net:7878");
        assert_eq!(url.authority, "box.tail.ts.net:7878");
    }

    #[test]
    fn a_bad_public_url_is_named() {
        let bad = config("listen = \"127.0.0.1:1\"\npublic_url = \"box:7878\"");
        assert!(bad.check().unwrap_err().contains("`http.public_url`"));
        let ftp = config("public_url = \"ftp://box\"");
        assert!(ftp.check().unwrap_err().contains("http or https"));
    }

    #[test]
    fn push_targets_need_https_off_this_machine() {
        let notify = |text: &str| toml::from_str::<NotifyConfig>(text).unwrap();
        let plain = notify("[[webhook]]\nurl = \"http://example.com/hook\"");
        assert!(plain.check().unwrap_err().contains("use https://"));
        let local = notify(
            "[[webhook]]\nurl = \"http://127.0.0.1:9/hook\"\n[[ntfy]]\nurl = \"https://ntfy.sh/t\"",
        );
        assert_eq!(local.check(), Ok(()));
        assert_eq!(local.targets(), 2);
        let no_topic = notify("[[ntfy]]\nurl = \"https://ntfy.sh\"");
        assert!(no_topic.check().unwrap_err().contains("notify.ntfy[0].url"));
        assert_eq!(
            ntfy_server_and_topic("https://ntfy.sh/hookd-me/"),
            Some(("https://ntfy.sh".into(), "hookd-me".into()))
        );
    }

    #[test]
    fn unknown_keys_are_refused() {
        assert!(toml::from_str::<HttpConfig>("listen_on = \"127.0.0.1:1\"").is_err());
    }
}
