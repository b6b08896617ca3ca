//! `[http]`: the optional HTTP listener (see [`super`]). Pure data and its
//! checks, read with the rest of `config.toml`.

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
#[derive(Debug, Clone, Default, Deserialize)]
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
    fn unknown_keys_are_refused() {
        assert!(toml::from_str::<HttpConfig>("listen_on = \"127.0.0.1:1\"").is_err());
    }
}
