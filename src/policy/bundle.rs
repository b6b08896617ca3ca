//! Signed policy bundles: a `[policy] sources` entry with `bundle = …`.
//!
//! A bundle is a `.tar.gz` (at a path or an `https://` URL; loopback
//! `http://` too, for tests) or a directory, holding `rules/*.toml` and an
//! optional `manifest.toml` (`revision = "…"`, a name for this version).
//! It is verified with minisign against the source's `public_key` before
//! it is activated: an archive by the signature `<bundle>.minisig` over
//! its bytes; a directory by one signature beside each file
//! (`rules/x.toml.minisig`).
//!
//! OPA's bundle semantics: each source has a fetcher thread
//! ([`spawn`]) that checks it every `interval` (a URL with `If-None-Match`
//! on the last ETag, so an unchanged bundle costs a 304), verifies the
//! signature, reads the archive (only `rules/*.toml` and `manifest.toml`,
//! regular files, bounded sizes), compiles every file, and only then
//! activates it: written to `<state>/policy/<name>/` (`rules/`,
//! `manifest.toml`, `bundle.json` with its ETag and hash) by renaming a
//! complete copy into place, and the daemon reloads every layer. A bundle
//! that fails to download, verify or compile changes nothing: the last
//! good one stays active (and, persisted, survives a restart without
//! network); `status`, `doctor` and the log say why.
//!
//! minisign rather than bare ed25519: the same Ed25519 signatures, plus a
//! key id that catches a bundle signed with the wrong key, a standard
//! file format and a CLI (`minisign -Sm bundle.tar.gz`) teams already have,
//! and a verifying crate without C (`minisign-verify`).

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::{Digest, Sha256};

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

/// The archive's and the signature's size limits.
const MAX_ARCHIVE_BYTES: u64 = 32 << 20;
const MAX_SIGNATURE_BYTES: u64 = 64 << 10;
/// The largest rules file, and the most files, a bundle may hold.
const MAX_FILE_BYTES: u64 = 4 << 20;
const MAX_FILES: usize = 1024;
/// How long one download may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(60);

/// What an activated bundle recorded (`bundle.json`).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
struct Activated {
    /// The server's ETag (URL sources), for `If-None-Match`.
    etag: Option<String>,
    /// SHA-256 of the archive (or of a directory's files), hex.
    sha256: String,
    /// The manifest's revision.
    revision: Option<String>,
    /// When it was activated (RFC 3339).
    activated_at: String,
}

/// What one check of a source found.
#[derive(Debug, PartialEq)]
pub enum Checked {
    /// The same bundle as the active one (a 304, or the same bytes).
    Unchanged,
    /// A new bundle was verified and activated.
    Activated,
}

/// A bundle read and verified: its files by name (`rules/x.toml`,
/// `manifest.toml`).
struct Contents {
    files: BTreeMap<String, String>,
    sha256: String,
    etag: Option<String>,
}

/// Checks source `name` once: fetch (unless unchanged), verify, compile,
/// activate. Blocking. An error leaves the active bundle as it was.
pub fn check(
    name: &str,
    source: &BundleSource,
    state_dir: &Path,
    bundles: &Bundles,
) -> Result<Checked, String> {
    let active = active_dir(state_dir, name);
    let previous = read_activated(&active);
    bundles.update(name, |status| {
        if let Some(previous) = &previous {
            status.sha256.get_or_insert_with(|| previous.sha256.clone());
            if status.activated_at.is_none() {
                status.activated_at = Some(previous.activated_at.clone());
                status.revision = previous.revision.clone();
            }
        }
        status.checked_at = Some(crate::time::rfc3339(std::time::SystemTime::now()));
    });
    let result = fetch(source, previous.as_ref()).and_then(|fetched| match fetched {
        None => Ok(Checked::Unchanged),
        Some(contents)
            if previous
                .as_ref()
                .is_some_and(|p| p.sha256 == contents.sha256) =>
        {
            Ok(Checked::Unchanged)
        }
        Some(contents) => {
            let revision = compile(&contents)?;
            activate(&active, &contents, revision.clone())?;
            Ok(Checked::Activated)
        }
    });
    let now = read_activated(&active);
    bundles.update(name, |status| {
        if let Some(now) = &now {
            status.sha256 = Some(now.sha256.clone());
            status.activated_at = Some(now.activated_at.clone());
            status.revision = now.revision.clone();
        }
        status.error = result.as_ref().err().cloned();
    });
    result
}

/// The bundle's contents, or `None` when the server says it has not
/// changed since `previous`.
fn fetch(source: &BundleSource, previous: Option<&Activated>) -> Result<Option<Contents>, String> {
    let key = minisign_verify::PublicKey::from_base64(&source.public_key)
        .map_err(|e| format!("the public key: {e}"))?;
    match &source.location {
        BundleLocation::Url(url) => {
            let agent = crate::outbound::agent(FETCH_TIMEOUT);
            let mut request = agent.get(url.as_str());
            if let Some(etag) = previous.and_then(|p| p.etag.as_deref()) {
                request = request.header("If-None-Match", etag);
            }
            let response = request.call().map_err(|e| format!("fetching {url}: {e}"))?;
            let status = response.status().as_u16();
            if status == 304 {
                return Ok(None);
            }
            if status != 200 {
                return Err(format!("fetching {url}: HTTP {status}"));
            }
            let etag = response
                .headers()
                .get("etag")
                .and_then(|v| v.to_str().ok())
                .map(String::from);
            let archive = read_body(response, MAX_ARCHIVE_BYTES, url)?;
            let signature_url = format!("{url}.minisig");
            let response = agent
                .get(signature_url.as_str())
                .call()
                .map_err(|e| format!("fetching {signature_url}: {e}"))?;
            if response.status().as_u16() != 200 {
                return Err(format!(
                    "fetching {signature_url}: HTTP {}",
                    response.status().as_u16()
                ));
            }
            let signature = read_body(response, MAX_SIGNATURE_BYTES, &signature_url)?;
            verify(&key, &archive, &signature, url)?;
            let mut contents = unpack(&archive)?;
            contents.etag = etag;
            Ok(Some(contents))
        }
        BundleLocation::Path(path) if path.is_dir() => read_dir_bundle(&key, path).map(Some),
        BundleLocation::Path(path) => {
            let archive = read_limited(path, MAX_ARCHIVE_BYTES)?;
            let signature = read_limited(&with_suffix(path, ".minisig"), MAX_SIGNATURE_BYTES)?;
            verify(&key, &archive, &signature, &path.display().to_string())?;
            unpack(&archive).map(Some)
        }
    }
}

fn read_body(
    response: ureq::http::Response<ureq::Body>,
    max: u64,
    what: &str,
) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    response
        .into_body()
        .into_reader()
        .take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("reading {what}: {e}"))?;
    if bytes.len() as u64 > max {
        return Err(format!("{what}: larger than {max} bytes"));
    }
    Ok(bytes)
}

fn read_limited(path: &Path, max: u64) -> Result<Vec<u8>, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut bytes = Vec::new();
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if bytes.len() as u64 > max {
        return Err(format!("{}: larger than {max} bytes", path.display()));
    }
    Ok(bytes)
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(suffix);
    PathBuf::from(name)
}

fn verify(
    key: &minisign_verify::PublicKey,
    bytes: &[u8],
    signature: &[u8],
    what: &str,
) -> Result<(), String> {
    let text = std::str::from_utf8(signature)
        .map_err(|_| format!("{what}.minisig: not a minisign signature (not text)"))?;
    let signature = minisign_verify::Signature::decode(text)
        .map_err(|e| format!("{what}.minisig: not a minisign signature ({e})"))?;
    key.verify(bytes, &signature, false).map_err(|e| {
        format!("{what}: the signature does not verify with the configured public_key ({e}); not activated")
    })
}

/// Whether `name` is a file a bundle may hold: `manifest.toml` or
/// `rules/<file>.toml` (no deeper, no dot files).
fn bundle_member(name: &str) -> bool {
    let name = name.strip_prefix("./").unwrap_or(name);
    name == "manifest.toml"
        || name.strip_prefix("rules/").is_some_and(|file| {
            file.ends_with(".toml") && !file.starts_with('.') && !file.contains('/')
        })
}

/// The bundle files of a `.tar.gz`: anything else in it is ignored.
fn unpack(archive: &[u8]) -> Result<Contents, String> {
    let sha256 = hex(&Sha256::digest(archive));
    let mut files = BTreeMap::new();
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(archive));
    let entries = tar
        .entries()
        .map_err(|e| format!("the archive is not a .tar.gz: {e}"))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("the archive is corrupt: {e}"))?;
        let name = entry
            .path()
            .map_err(|e| format!("the archive is corrupt: {e}"))?
            .to_string_lossy()
            .into_owned();
        if !entry.header().entry_type().is_file() || !bundle_member(&name) {
            continue;
        }
        if files.len() >= MAX_FILES {
            return Err(format!("more than {MAX_FILES} files in the bundle"));
        }
        let mut text = String::new();
        entry
            .take(MAX_FILE_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(|e| format!("{name} in the archive: {e}"))?;
        if text.len() as u64 > MAX_FILE_BYTES {
            return Err(format!("{name}: larger than {MAX_FILE_BYTES} bytes"));
        }
        files.insert(name.trim_start_matches("./").to_string(), text);
    }
    if !files.keys().any(|name| name.starts_with("rules/")) {
        return Err("the bundle has no rules/*.toml".into());
    }
    Ok(Contents {
        files,
        sha256,
        etag: None,
    })
}

/// A directory bundle: every file verified by its own `.minisig`.
fn read_dir_bundle(key: &minisign_verify::PublicKey, dir: &Path) -> Result<Contents, String> {
    let mut paths: Vec<(String, PathBuf)> = super::toml_files(&dir.join(RULES_DIR))?
        .into_iter()
        .map(|path| {
            let name = format!(
                "rules/{}",
                path.file_name().unwrap_or_default().to_string_lossy()
            );
            (name, path)
        })
        .collect();
    let manifest = dir.join("manifest.toml");
    if manifest.is_file() {
        paths.push(("manifest.toml".into(), manifest));
    }
    if paths.is_empty() {
        return Err(format!("{}: no rules/*.toml", dir.display()));
    }
    let mut files = BTreeMap::new();
    let mut hasher = Sha256::new();
    for (name, path) in paths {
        let bytes = read_limited(&path, MAX_FILE_BYTES)?;
        let signature = read_limited(&with_suffix(&path, ".minisig"), MAX_SIGNATURE_BYTES)?;
        verify(key, &bytes, &signature, &path.display().to_string())?;
        hasher.update(name.as_bytes());
        hasher.update([0]);
        hasher.update(&bytes);
        let text =
            String::from_utf8(bytes).map_err(|_| format!("{}: not UTF-8", path.display()))?;
        files.insert(name, text);
    }
    Ok(Contents {
        files,
        sha256: hex(&hasher.finalize()),
        etag: None,
    })
}

/// Compiles every rules file of a verified bundle (nothing is activated
/// unless all do); returns the manifest's revision.
fn compile(contents: &Contents) -> Result<Option<String>, String> {
    let mut problems = Vec::new();
    for (name, text) in &contents.files {
        if name.starts_with("rules/") {
            if let Err(e) = crate::rules::RuleSet::parse_policy(text, Path::new(name)) {
                problems.push(e.to_string().trim_end().to_string());
            }
        }
    }
    if !problems.is_empty() {
        return Err(format!(
            "the bundle's rules do not compile: {}",
            problems.join("; ")
        ));
    }
    #[derive(serde::Deserialize)]
    struct Manifest {
        revision: Option<String>,
    }
    match contents.files.get("manifest.toml") {
        None => Ok(None),
        Some(text) => toml::from_str::<Manifest>(text)
            .map(|m| m.revision)
            .map_err(|e| format!("manifest.toml: {}", e.message())),
    }
}

/// Writes `contents` as the active bundle: a complete copy beside it,
/// renamed into place.
fn activate(active: &Path, contents: &Contents, revision: Option<String>) -> Result<(), String> {
    let parent = active.parent().unwrap_or(Path::new("."));
    let io = |e: std::io::Error, what: &Path| format!("activating into {}: {e}", what.display());
    std::fs::create_dir_all(parent).map_err(|e| io(e, parent))?;
    let name = active.file_name().unwrap_or_default().to_string_lossy();
    let staging = parent.join(format!(".{name}.new.{}", std::process::id()));
    let old = parent.join(format!(".{name}.old.{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(staging.join(RULES_DIR)).map_err(|e| io(e, &staging))?;
    for (file, text) in &contents.files {
        let path = staging.join(file);
        std::fs::write(&path, text).map_err(|e| io(e, &path))?;
    }
    let record = Activated {
        etag: contents.etag.clone(),
        sha256: contents.sha256.clone(),
        revision,
        activated_at: crate::time::rfc3339(std::time::SystemTime::now()),
    };
    let json = serde_json::to_vec_pretty(&record).expect("a record serializes");
    std::fs::write(staging.join(RECORD_FILE), json).map_err(|e| io(e, &staging))?;
    if active.exists() {
        std::fs::rename(active, &old).map_err(|e| io(e, active))?;
    }
    std::fs::rename(&staging, active).map_err(|e| io(e, active))?;
    let _ = std::fs::remove_dir_all(&old);
    Ok(())
}

/// The record of the active bundle.
const RECORD_FILE: &str = "bundle.json";

fn read_activated(active: &Path) -> Option<Activated> {
    let text = std::fs::read(active.join(RECORD_FILE)).ok()?;
    serde_json::from_slice(&text).ok()
}

/// Starts source `name`'s fetcher thread: a check now, then every
/// `interval`, until `stop` is dropped. `activated` is called (on that
/// thread) after each activation; the daemon reloads then.
pub fn spawn(
    name: String,
    source: BundleSource,
    state_dir: PathBuf,
    bundles: std::sync::Arc<Bundles>,
    activated: impl Fn() + Send + 'static,
    stop: std::sync::mpsc::Receiver<()>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name(format!("hookd-bundle-{name}"))
        .spawn(move || loop {
            match check(&name, &source, &state_dir, &bundles) {
                Ok(Checked::Activated) => {
                    tracing::info!(source = %name, "policy bundle verified and activated");
                    activated();
                }
                Ok(Checked::Unchanged) => {
                    tracing::debug!(source = %name, "policy bundle unchanged")
                }
                Err(error) => tracing::error!(
                    source = %name,
                    %error,
                    "policy bundle refused; the last good bundle stays active"
                ),
            }
            match stop.recv_timeout(source.interval) {
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                _ => return,
            }
        })
}

/// Lower-case hex of `bytes`.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sign(keys: &minisign::KeyPair, bytes: &[u8]) -> String {
        minisign::sign(
            Some(&keys.pk),
            &keys.sk,
            std::io::Cursor::new(bytes),
            None,
            None,
        )
        .unwrap()
        .to_string()
    }

    const RULE: &str = "[[rule]]\nid = \"no-curl\"\naction = \"deny\"\ntool = \"Bash(curl *)\"\n";

    #[test]
    fn a_directory_bundle_needs_every_file_signed_and_activates_once() {
        let keys = minisign::KeyPair::generate_unencrypted_keypair().unwrap();
        let root = tempfile::tempdir().unwrap();
        let bundle = root.path().join("bundle");
        let state = root.path().join("state");
        std::fs::create_dir_all(bundle.join("rules")).unwrap();
        let file = bundle.join("rules/net.toml");
        std::fs::write(&file, RULE).unwrap();
        std::fs::write(with_suffix(&file, ".minisig"), sign(&keys, RULE.as_bytes())).unwrap();
        let source =
            BundleSource::new(bundle.to_str().unwrap(), Some(&keys.pk.to_base64()), None).unwrap();
        let bundles = Bundles::default();
        assert_eq!(
            check("team", &source, &state, &bundles),
            Ok(Checked::Activated)
        );
        let active = active_dir(&state, "team").join("rules/net.toml");
        assert_eq!(std::fs::read_to_string(&active).unwrap(), RULE);
        assert_eq!(
            check("team", &source, &state, &bundles),
            Ok(Checked::Unchanged)
        );

        // An edit without a new signature is refused; the active copy stays.
        std::fs::write(&file, RULE.replace("deny", "allow")).unwrap();
        let err = check("team", &source, &state, &bundles).unwrap_err();
        assert!(err.contains("does not verify"), "{err}");
        assert_eq!(std::fs::read_to_string(&active).unwrap(), RULE);
        assert_eq!(bundles.status("team").error, Some(err));
    }

    #[test]
    fn a_signed_bundle_that_does_not_compile_is_not_activated() {
        let keys = minisign::KeyPair::generate_unencrypted_keypair().unwrap();
        let root = tempfile::tempdir().unwrap();
        let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        let mut tar = tar::Builder::new(gz);
        let text = "[[rule]]\nid = \"x\"\naction = \"nope\"\n";
        let mut header = tar::Header::new_gnu();
        header.set_size(text.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        tar.append_data(&mut header, "rules/bad.toml", text.as_bytes())
            .unwrap();
        let archive = tar.into_inner().unwrap().finish().unwrap();
        let path = root.path().join("team.tar.gz");
        std::fs::write(&path, &archive).unwrap();
        std::fs::write(with_suffix(&path, ".minisig"), sign(&keys, &archive)).unwrap();
        let source =
            BundleSource::new(path.to_str().unwrap(), Some(&keys.pk.to_base64()), None).unwrap();
        let err = check("team", &source, root.path(), &Bundles::default()).unwrap_err();
        assert!(
            err.contains("do not compile") && err.contains("rules/bad.toml:3"),
            "{err}"
        );
        assert!(!active_dir(root.path(), "team").exists());
    }

    #[test]
    fn bundle_sources_are_checked_when_configured() {
        let key = minisign::KeyPair::generate_unencrypted_keypair()
            .unwrap()
            .pk
            .to_base64();
        assert!(
            BundleSource::new("http://example.com/b.tar.gz", Some(&key), None)
                .unwrap_err()
                .contains("only allowed to this machine")
        );
        assert!(BundleSource::new("/srv/b.tar.gz", None, None)
            .unwrap_err()
            .contains("needs `public_key`"));
        assert!(BundleSource::new("/srv/b.tar.gz", Some("RWQnope"), None)
            .unwrap_err()
            .contains("not a minisign public key"));
        assert!(BundleSource::new("http://127.0.0.1:8080/b.tar.gz", Some(&key), Some(5)).is_ok());
        assert!(bundle_member("rules/a.toml") && bundle_member("./manifest.toml"));
        assert!(
            !bundle_member("rules/../../etc/passwd.toml") && !bundle_member("rules/sub/a.toml")
        );
        assert!(!bundle_member("../a.toml") && !bundle_member("rules/.hidden.toml"));
    }
}
