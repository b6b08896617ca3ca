//! Signed policy bundles: a `[policy] sources` entry with `bundle = …`.
//!
//! A bundle is a `.tar.gz` (at a path or an `https://` URL; loopback
//! `http://` too, for tests) or a directory, holding `rules/*.toml` and an
//! optional `manifest.toml` (`revision = "…"`, a name for this version).
//! It is verified with minisign against the source's `public_key` before
//! it is activated: an archive by the signature `<bundle>.minisig` over
//! its bytes; a directory by one signature beside each file
//! (`rules/x.toml.minisig`).

use std::path::{Path, PathBuf};
use std::time::Duration;

/// The directory of a bundle's rules files.
pub const RULES_DIR: &str = "rules";

/// How often a bundle is fetched by default.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(300);

/// A bundle source as configured.
#[derive(Debug, Clone, PartialEq)]
pub struct BundleSource {
    /// Where it is fetched from.
    pub location: BundleLocation,
    /// The minisign public key (its base64 line, `RW…`).
    pub public_key: String,
    /// How often it is fetched.
    pub interval: Duration,
}

/// Where a bundle is.
#[derive(Debug, Clone, PartialEq)]
pub enum BundleLocation {
    /// An `https://` (or loopback `http://`) URL of a `.tar.gz`.
    Url(String),
    /// A `.tar.gz` or a directory on this machine.
    Path(PathBuf),
}

impl BundleSource {
    /// Validates a bundle entry of `[policy] sources`.
    pub fn new(
        bundle: &str,
        public_key: Option<&str>,
        interval: Option<u64>,
    ) -> Result<BundleSource, String> {
        let location = if let Some(rest) = bundle.strip_prefix("http://") {
            let host = rest.split(['/', ':']).next().unwrap_or("");
            if !matches!(host, "127.0.0.1" | "localhost" | "[::1]") {
                return Err(format!(
                    "bundle `{bundle}`: plain http is only allowed to this machine (127.0.0.1, localhost); use https://"
                ));
            }
            BundleLocation::Url(bundle.to_string())
        } else if bundle.starts_with("https://") {
            BundleLocation::Url(bundle.to_string())
        } else if bundle.contains("://") {
            return Err(format!("bundle `{bundle}`: give an https:// URL or a path"));
        } else {
            BundleLocation::Path(super::expand_home(bundle))
        };
        let public_key = public_key
            .ok_or("a bundle needs `public_key` (the minisign public key, `RW…`), which its signature is checked against")?
            .trim()
            .to_string();
        minisign_verify::PublicKey::from_base64(&public_key)
            .map_err(|e| format!("`public_key` is not a minisign public key ({e}); give the base64 line of minisign.pub (`RW…`)"))?;
        let interval = match interval {
            None => DEFAULT_INTERVAL,
            Some(0) => return Err("`interval` must be at least 1 second".into()),
            Some(s) => Duration::from_secs(s),
        };
        Ok(BundleSource {
            location,
            public_key,
            interval,
        })
    }

    /// The last component of its location, for a default name.
    pub fn location_name(&self) -> Option<String> {
        match &self.location {
            BundleLocation::Url(url) => url
                .split(['?', '#'])
                .next()?
                .trim_end_matches('/')
                .rsplit('/')
                .next()
                .map(String::from),
            BundleLocation::Path(path) => {
                path.file_name().map(|n| n.to_string_lossy().into_owned())
            }
        }
    }
}

/// Where source `name`'s active bundle lives under the state directory.
pub fn active_dir(state_dir: &Path, name: &str) -> PathBuf {
    state_dir.join("policy").join(name)
}

impl std::fmt::Display for BundleLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BundleLocation::Url(url) => f.write_str(url),
            BundleLocation::Path(path) => write!(f, "{}", path.display()),
        }
    }
}

/// The bundle sources' state, for `status` and `doctor`: written by their
/// fetchers, read by `status`.
#[derive(Debug, Default)]
pub struct Bundles {
    states: std::sync::Mutex<std::collections::HashMap<String, crate::protocol::BundleStatus>>,
}

impl Bundles {
    /// Source `name`'s state (empty before its first check).
    pub fn status(&self, name: &str) -> crate::protocol::BundleStatus {
        self.lock().get(name).cloned().unwrap_or_default()
    }

    /// Changes source `name`'s state.
    pub fn update(&self, name: &str, change: impl FnOnce(&mut crate::protocol::BundleStatus)) {
        change(self.lock().entry(name.to_string()).or_default());
    }

    fn lock(
        &self,
    ) -> std::sync::MutexGuard<'_, std::collections::HashMap<String, crate::protocol::BundleStatus>>
    {
        self.states.lock().unwrap_or_else(|e| e.into_inner())
    }
}
