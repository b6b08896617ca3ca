//! Signed policy bundles: a `[policy] sources` entry with `bundle = …`.
//!
//! A bundle is a `.tar.gz` (at a path or an `https://` URL; loopback
//! `http://` too, for tests) or a directory, holding `rules/*.toml`,
//! `manifest.toml` and `manifest.toml.minisig`. It is verified as a whole:
//! the manifest lists every file of `rules/` with its SHA-256 (and
//! `revision`, a name for this version; `serial`, a number each release
//! raises; `expires`, an RFC 3339 time), and its minisign signature is
//! checked against the source's `public_key`. A file listed and missing,
//! a file in `rules/` not listed, or a file whose bytes are not the listed
//! ones refuses the bundle, so deleting one rules file (or adding one) is
//! as detectable as editing it. Nothing outside `rules/` but the manifest
//! and its signature is read, and nothing in it unless listed. A bundle
//! without a signed manifest that lists its files (how bundles were signed
//! before: an archive's bytes, or each file alone) is refused, saying how
//! to make one: security over compatibility.
//!
//! OPA's bundle semantics: each source has a fetcher thread
//! ([`spawn`]) that checks it every `interval` (a URL with `If-None-Match`
//! on the last ETag, so an unchanged bundle costs a 304), verifies it,
//! reads the archive (bounded sizes, unpacked too), compiles every file,
//! and only then activates it: written to `<state>/policy/<name>/`
//! (`rules/`, `manifest.toml`, `bundle.json` with its ETag and the
//! manifest's hash) by renaming a complete copy into place, and the daemon
//! reloads every layer. A bundle that fails to download, verify or compile
//! changes nothing: the last good one stays active (and, persisted,
//! survives a restart without network); `status`, `doctor` and the log say
//! why. Nor can policy be rolled back: a bundle past its `expires`, or
//! whose `serial` is below the active bundle's (or equal, with other
//! contents, or absent where the active one has one) is refused the same
//! way (`admissible`).
//!
//! minisign rather than bare ed25519: the same Ed25519 signatures, plus a
//! key id that catches a bundle signed with the wrong key, a standard
//! file format and a CLI (`minisign -Sm manifest.toml`) teams already
//! have, and a verifying crate without C (`minisign-verify`).

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::hex;

/// The directory of a bundle's rules files.
pub const RULES_DIR: &str = "rules";

/// The file at a bundle's root listing every file of it with its SHA-256.
const MANIFEST_FILE: &str = "manifest.toml";

/// The manifest's minisign signature (`minisign -Sm manifest.toml`): the
/// one signature a bundle has, covering it as a whole.
const SIGNATURE_FILE: &str = "manifest.toml.minisig";

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
/// The most an archive may unpack to: it is read before its manifest's
/// signature is checked, so a small archive that inflates without end
/// must not cost more than this.
const MAX_UNPACKED_BYTES: u64 = 64 << 20;
/// How long one download may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(60);

/// What an activated bundle recorded (`bundle.json`).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
struct Activated {
    /// The server's ETag (URL sources), for `If-None-Match`.
    etag: Option<String>,
    /// SHA-256 of the bundle's `manifest.toml`, hex: it names every
    /// file's bytes, so the same manifest is the same bundle.
    sha256: String,
    /// The manifest's revision.
    revision: Option<String>,
    /// The manifest's `serial`: a bundle with a lower one is refused.
    #[serde(default)]
    serial: Option<u64>,
    /// The manifest's `expires` (RFC 3339).
    #[serde(default)]
    expires: Option<String>,
    /// When it was activated (RFC 3339).
    activated_at: String,
    /// Whether it was verified as a whole, by its signed manifest: false
    /// in a record of an older version, whose bundle is then fetched in
    /// full (no `If-None-Match`) and verified again, so that a bundle
    /// still signed the old way is reported, not taken as unchanged.
    #[serde(default)]
    whole: bool,
}

impl Activated {
    /// The ETag to send as `If-None-Match`: only for a bundle verified
    /// as a whole.
    fn if_none_match(&self) -> Option<&str> {
        self.etag.as_deref().filter(|_| self.whole)
    }
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
    /// See [`Activated::sha256`].
    sha256: String,
    /// The manifest's `revision`.
    revision: Option<String>,
    /// The manifest's `serial`.
    serial: Option<u64>,
    /// The manifest's `expires`, checked to be RFC 3339.
    expires: Option<String>,
    etag: Option<String>,
}

/// `manifest.toml`: what a bundle holds, signed as a whole by
/// [`SIGNATURE_FILE`]. Unknown keys are refused rather than ignored: a
/// promise this daemon cannot keep (e.g. an expiry a later version reads)
/// must not pass unnoticed.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    /// A name for this version, shown in `status`.
    revision: Option<String>,
    /// The bundle's number, raised by each release: a daemon refuses one
    /// lower than (or equal to, with other contents) the active bundle's,
    /// so an older signed bundle cannot be replayed.
    serial: Option<u64>,
    /// When the bundle stops being acceptable (RFC 3339): a daemon
    /// refuses it after, so a stale bundle cannot be served forever.
    expires: Option<String>,
    /// Every file of `rules/` (`rules/<name>.toml`) and the lower-case hex
    /// SHA-256 of its bytes. `None` in a manifest of before whole-bundle
    /// signing.
    files: Option<BTreeMap<String, String>>,
}

/// A bundle as found, before it is verified: its manifest and signature
/// (`None`: absent) and everything in `rules/`, by name. `read` gives a
/// listed file's bytes: nothing unlisted is read.
struct Found<'a> {
    manifest: Option<Vec<u8>>,
    signature: Option<Vec<u8>>,
    rules: BTreeSet<String>,
    read: ReadListed<'a>,
}

/// Reads one file of a bundle, by its name in the bundle.
type ReadListed<'a> = Box<dyn FnMut(&str) -> Result<Vec<u8>, String> + 'a>;

/// What to do about a bundle made before whole-bundle signing (or
/// without a manifest at all).
const MAKE_A_MANIFEST: &str = "a bundle is verified as a whole: make a manifest.toml listing every rules file with its SHA-256 (`hookd rules manifest DIR > DIR/manifest.toml`), sign it (`minisign -Sm manifest.toml`) and publish both with rules/ (docs/team-policy.md, \"Signed bundles\"); bundles signed as an archive alone or file by file are refused";

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
                status.serial = previous.serial;
                status.expires = previous.expires.clone();
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
            admissible(previous.as_ref(), &contents, std::time::SystemTime::now())?;
            compile(&contents)?;
            activate(&active, &contents)?;
            Ok(Checked::Activated)
        }
    });
    let now = read_activated(&active);
    bundles.update(name, |status| {
        if let Some(now) = &now {
            status.sha256 = Some(now.sha256.clone());
            status.activated_at = Some(now.activated_at.clone());
            status.revision = now.revision.clone();
            status.serial = now.serial;
            status.expires = now.expires.clone();
        }
        status.error = result.as_ref().err().cloned();
    });
    result
}

/// Whether `contents` may replace the active bundle (`previous`): not
/// past its `expires`, and not a rollback — a `serial` below the active
/// one's, the same `serial` with other contents, or none where the active
/// bundle has one. A refusal keeps the last good bundle and says why.
fn admissible(
    previous: Option<&Activated>,
    contents: &Contents,
    now: std::time::SystemTime,
) -> Result<(), String> {
    const KEPT: &str = "not activated, the last good bundle stays active";
    if let Some(expires) = &contents.expires {
        let at = crate::time::parse_rfc3339(expires).ok_or_else(|| {
            format!("{MANIFEST_FILE}: `expires` = `{expires}` is not an RFC 3339 time")
        })?;
        if at <= now {
            return Err(format!(
                "{MANIFEST_FILE}: expired at {expires} (a stale or replayed bundle); {KEPT}"
            ));
        }
    }
    let Some(active) = previous.and_then(|p| p.serial) else {
        return Ok(());
    };
    match contents.serial {
        None => Err(format!(
            "{MANIFEST_FILE} has no `serial` and the active bundle's is {active}: a rollback to an unnumbered bundle is refused; {KEPT}"
        )),
        Some(serial) if serial < active => Err(format!(
            "{MANIFEST_FILE}: serial {serial} is older than the active bundle's {active} (a rollback or a replay); {KEPT}"
        )),
        Some(serial) if serial == active => Err(format!(
            "{MANIFEST_FILE}: serial {serial} is the active bundle's, with other contents: a new bundle needs a higher serial; {KEPT}"
        )),
        Some(_) => Ok(()),
    }
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
            if let Some(etag) = previous.and_then(Activated::if_none_match) {
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
            let mut contents = unpack(&archive)
                .and_then(|found| verify_whole(&key, found))
                .map_err(|e| format!("{url}: {e}"))?;
            contents.etag = etag;
            Ok(Some(contents))
        }
        BundleLocation::Path(dir) if dir.is_dir() => read_dir_bundle(dir)
            .and_then(|found| verify_whole(&key, found))
            .map(Some)
            .map_err(|e| format!("{}: {e}", dir.display())),
        BundleLocation::Path(path) => {
            let archive = read_limited(path, MAX_ARCHIVE_BYTES)?;
            unpack(&archive)
                .and_then(|found| verify_whole(&key, found))
                .map(Some)
                .map_err(|e| format!("{}: {e}", path.display()))
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

/// Checks `found` against its signed manifest: the signature, then that
/// `rules/` holds exactly the listed files, then each file's SHA-256.
fn verify_whole(key: &minisign_verify::PublicKey, found: Found) -> Result<Contents, String> {
    let Found {
        manifest,
        signature,
        rules,
        mut read,
    } = found;
    let manifest = manifest.ok_or_else(|| format!("no {MANIFEST_FILE}: {MAKE_A_MANIFEST}"))?;
    let signature = signature.ok_or_else(|| format!("no {SIGNATURE_FILE}: {MAKE_A_MANIFEST}"))?;
    verify(key, &manifest, &signature)?;
    let text = std::str::from_utf8(&manifest).map_err(|_| format!("{MANIFEST_FILE}: not UTF-8"))?;
    let parsed: Manifest =
        toml::from_str(text).map_err(|e| format!("{MANIFEST_FILE}: {}", e.message()))?;
    if let Some(expires) = &parsed.expires {
        if crate::time::parse_rfc3339(expires).is_none() {
            return Err(format!(
                "{MANIFEST_FILE}: `expires` = `{expires}` is not an RFC 3339 time (2027-01-31T00:00:00Z)"
            ));
        }
    }
    let listed = parsed
        .files
        .ok_or_else(|| format!("{MANIFEST_FILE} has no [files]: {MAKE_A_MANIFEST}"))?;
    if listed.is_empty() {
        return Err(format!("{MANIFEST_FILE}: [files] lists no rules file"));
    }
    for (name, digest) in &listed {
        if !listable(name) {
            return Err(format!(
                "{MANIFEST_FILE}: [files] may list only rules/<name>.toml, not `{name}`"
            ));
        }
        if digest.len() != 64 || !digest.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!(
                "{MANIFEST_FILE}: `{name}` = `{digest}` is not a SHA-256 (64 hex digits, as sha256sum prints)"
            ));
        }
    }
    let missing: Vec<&str> = listed
        .keys()
        .filter(|name| !rules.contains(*name))
        .map(String::as_str)
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "{}: listed in {MANIFEST_FILE} but not in the bundle (removed after it was signed?); not activated",
            missing.join(", ")
        ));
    }
    let unlisted: Vec<&str> = rules
        .iter()
        .filter(|name| !listed.contains_key(*name))
        .map(String::as_str)
        .collect();
    if !unlisted.is_empty() {
        return Err(format!(
            "{}: in the bundle but not listed in {MANIFEST_FILE} (added after it was signed?); not activated",
            unlisted.join(", ")
        ));
    }
    let mut files = BTreeMap::new();
    for (name, digest) in &listed {
        let bytes = read(name)?;
        if hex::encode(&Sha256::digest(&bytes)) != digest.to_ascii_lowercase() {
            return Err(format!(
                "{name}: its SHA-256 is not the one {MANIFEST_FILE} lists (changed after it was signed?); not activated"
            ));
        }
        let text = String::from_utf8(bytes).map_err(|_| format!("{name}: not UTF-8"))?;
        files.insert(name.clone(), text);
    }
    files.insert(MANIFEST_FILE.to_string(), text.to_string());
    Ok(Contents {
        files,
        sha256: hex::encode(&Sha256::digest(&manifest)),
        revision: parsed.revision,
        serial: parsed.serial,
        expires: parsed.expires,
        etag: None,
    })
}

/// Checks the manifest's signature.
fn verify(
    key: &minisign_verify::PublicKey,
    manifest: &[u8],
    signature: &[u8],
) -> Result<(), String> {
    let text = std::str::from_utf8(signature)
        .map_err(|_| format!("{SIGNATURE_FILE}: not a minisign signature (not text)"))?;
    let signature = minisign_verify::Signature::decode(text)
        .map_err(|e| format!("{SIGNATURE_FILE}: not a minisign signature ({e})"))?;
    key.verify(manifest, &signature, false).map_err(|e| {
        format!("{MANIFEST_FILE}: the signature does not verify with the configured public_key ({e}); not activated")
    })
}

/// Whether a manifest may list `name`: `rules/<file>.toml` (no deeper, no
/// dot files).
fn listable(name: &str) -> bool {
    name.strip_prefix("rules/").is_some_and(|file| {
        file.ends_with(".toml") && !file.starts_with('.') && !file.contains('/')
    })
}

/// A `.tar.gz`'s bundle: its manifest, signature and `rules/` entries (of
/// any type; only regular files can match a listing). Anything else in it
/// is skipped unread.
fn unpack(archive: &[u8]) -> Result<Found<'static>, String> {
    let gz = Unpacked {
        inner: flate2::read::GzDecoder::new(archive),
        left: MAX_UNPACKED_BYTES,
    };
    let mut tar = tar::Archive::new(gz);
    let entries = tar
        .entries()
        .map_err(|e| format!("the archive is not a .tar.gz: {e}"))?;
    let (mut manifest, mut signature) = (None, None);
    let mut rules: BTreeMap<String, Option<Vec<u8>>> = BTreeMap::new();
    for entry in entries {
        let entry = entry.map_err(|e| format!("the archive is corrupt: {e}"))?;
        let path = entry
            .path()
            .map_err(|e| format!("the archive is corrupt: {e}"))?
            .to_string_lossy()
            .into_owned();
        let name = path
            .strip_prefix("./")
            .unwrap_or(&path)
            .trim_end_matches('/');
        let is_file = entry.header().entry_type().is_file();
        let slot = match name {
            MANIFEST_FILE if is_file => &mut manifest,
            SIGNATURE_FILE if is_file => &mut signature,
            _ if name.starts_with("rules/") => {
                if rules.len() >= MAX_FILES {
                    return Err(format!(
                        "more than {MAX_FILES} files in the bundle's rules/"
                    ));
                }
                rules.entry(name.to_string()).or_default()
            }
            _ => continue,
        };
        if is_file {
            let name = name.to_string();
            let mut bytes = Vec::new();
            entry
                .take(MAX_FILE_BYTES + 1)
                .read_to_end(&mut bytes)
                .map_err(|e| format!("{name} in the archive: {e}"))?;
            if bytes.len() as u64 > MAX_FILE_BYTES {
                return Err(format!("{name}: larger than {MAX_FILE_BYTES} bytes"));
            }
            *slot = Some(bytes);
        }
    }
    Ok(Found {
        manifest,
        signature,
        rules: rules.keys().cloned().collect(),
        read: Box::new(move |name: &str| {
            rules
                .get_mut(name)
                .and_then(Option::take)
                .ok_or_else(|| format!("{name}: not a regular file in the archive"))
        }),
    })
}

/// A decompressing reader that fails past [`MAX_UNPACKED_BYTES`].
struct Unpacked<R> {
    inner: R,
    left: u64,
}

impl<R: Read> Read for Unpacked<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.left = self.left.checked_sub(n as u64).ok_or_else(|| {
            std::io::Error::other(format!(
                "it unpacks to more than {MAX_UNPACKED_BYTES} bytes"
            ))
        })?;
        Ok(n)
    }
}

/// A directory's bundle: its manifest and signature, and the names in
/// `rules/`; a listed file is read when it is verified.
fn read_dir_bundle(dir: &Path) -> Result<Found<'_>, String> {
    let optional = |name: &str, max: u64| {
        let path = dir.join(name);
        match path.exists() {
            true => read_limited(&path, max).map(Some),
            false => Ok(None),
        }
    };
    let manifest = optional(MANIFEST_FILE, MAX_FILE_BYTES)?;
    let signature = optional(SIGNATURE_FILE, MAX_SIGNATURE_BYTES)?;
    let rules_dir = dir.join(RULES_DIR);
    let mut rules = BTreeSet::new();
    if rules_dir.exists() {
        let entries =
            std::fs::read_dir(&rules_dir).map_err(|e| format!("{}: {e}", rules_dir.display()))?;
        for entry in entries {
            let entry = entry.map_err(|e| format!("{}: {e}", rules_dir.display()))?;
            if rules.len() >= MAX_FILES {
                return Err(format!("more than {MAX_FILES} files in rules/"));
            }
            rules.insert(format!("rules/{}", entry.file_name().to_string_lossy()));
        }
    }
    Ok(Found {
        manifest,
        signature,
        rules,
        read: Box::new(move |name: &str| {
            let path = dir.join(name);
            match path.is_file() {
                true => read_limited(&path, MAX_FILE_BYTES),
                false => Err(format!("{name}: not a regular file")),
            }
        }),
    })
}

/// The `manifest.toml` of the bundle in `dir` (`hookd rules manifest`):
/// every file of `dir/rules/` with its SHA-256, and `revision`. Refuses
/// what a bundle may not hold, as the daemon would.
pub fn manifest_for(
    dir: &Path,
    revision: Option<&str>,
    serial: Option<u64>,
    expires: Option<&str>,
) -> Result<String, String> {
    if let Some(expires) = expires {
        if crate::time::parse_rfc3339(expires).is_none() {
            return Err(format!(
                "--expires `{expires}` is not an RFC 3339 time (2027-01-31T00:00:00Z)"
            ));
        }
    }
    let rules_dir = dir.join(RULES_DIR);
    let entries =
        std::fs::read_dir(&rules_dir).map_err(|e| format!("{}: {e}", rules_dir.display()))?;
    let mut names = BTreeSet::new();
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", rules_dir.display()))?;
        let name = format!("rules/{}", entry.file_name().to_string_lossy());
        if !listable(&name) || !entry.path().is_file() {
            return Err(format!(
                "{}: a bundle's rules/ holds only <name>.toml files (the daemon would refuse this one as unlisted); move it out",
                dir.join(&name).display()
            ));
        }
        names.insert(name);
    }
    if names.is_empty() {
        return Err(format!("{}: no rules/*.toml", dir.display()));
    }
    // A JSON string is a TOML basic string: the same escapes.
    let quoted = |text: &str| serde_json::Value::from(text).to_string();
    let mut text = String::new();
    if let Some(revision) = revision {
        text.push_str(&format!("revision = {}\n", quoted(revision)));
    }
    if let Some(serial) = serial {
        text.push_str(&format!("serial = {serial}\n"));
    }
    if let Some(expires) = expires {
        text.push_str(&format!("expires = {}\n", quoted(expires)));
    }
    if !text.is_empty() {
        text.push('\n');
    }
    text.push_str("[files]\n");
    for name in names {
        let bytes = read_limited(&dir.join(&name), MAX_FILE_BYTES)?;
        text.push_str(&format!(
            "{} = \"{}\"\n",
            quoted(&name),
            hex::encode(&Sha256::digest(&bytes))
        ));
    }
    Ok(text)
}

/// Compiles every rules file of a verified bundle (nothing is activated
/// unless all do).
fn compile(contents: &Contents) -> Result<(), String> {
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
    Ok(())
}

/// Writes `contents` as the active bundle: a complete copy beside it,
/// renamed into place.
fn activate(active: &Path, contents: &Contents) -> Result<(), String> {
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
        revision: contents.revision.clone(),
        serial: contents.serial,
        expires: contents.expires.clone(),
        activated_at: crate::time::rfc3339(std::time::SystemTime::now()),
        whole: true,
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

    /// A manifest listing `rules` (name, text) with their digests.
    fn manifest(rules: &[(&str, &str)]) -> String {
        let mut text = "revision = \"1\"\n[files]\n".to_string();
        for (name, rule) in rules {
            text.push_str(&format!(
                "{name:?} = {:?}\n",
                hex::encode(&Sha256::digest(rule.as_bytes()))
            ));
        }
        text
    }

    /// A `.tar.gz` of `files` (name, bytes).
    fn archive(files: &[(&str, &[u8])]) -> Vec<u8> {
        let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        let mut tar = tar::Builder::new(gz);
        for (name, bytes) in files {
            let mut header = tar::Header::new_gnu();
            header.set_size(bytes.len() as u64);
            header.set_mode(0o644);
            header.set_cksum();
            tar.append_data(&mut header, name, *bytes).unwrap();
        }
        tar.into_inner().unwrap().finish().unwrap()
    }

    const RULE: &str = "[[rule]]\nid = \"no-curl\"\naction = \"deny\"\ntool = \"Bash(curl *)\"\n";

    #[test]
    fn a_directory_bundle_is_verified_by_its_manifest_and_activates_once() {
        let keys = minisign::KeyPair::generate_unencrypted_keypair().unwrap();
        let root = tempfile::tempdir().unwrap();
        let bundle = root.path().join("bundle");
        let state = root.path().join("state");
        std::fs::create_dir_all(bundle.join("rules")).unwrap();
        let file = bundle.join("rules/net.toml");
        std::fs::write(&file, RULE).unwrap();
        let listing = manifest(&[("rules/net.toml", RULE)]);
        std::fs::write(bundle.join(MANIFEST_FILE), &listing).unwrap();
        std::fs::write(bundle.join(SIGNATURE_FILE), sign(&keys, listing.as_bytes())).unwrap();
        std::fs::write(bundle.join("README.md"), "outside rules/: never read").unwrap();
        let source =
            BundleSource::new(bundle.to_str().unwrap(), Some(&keys.pk.to_base64()), None).unwrap();
        let bundles = Bundles::default();
        assert_eq!(
            check("team", &source, &state, &bundles),
            Ok(Checked::Activated)
        );
        let active = active_dir(&state, "team").join("rules/net.toml");
        assert_eq!(std::fs::read_to_string(&active).unwrap(), RULE);
        assert_eq!(bundles.status("team").revision.as_deref(), Some("1"));
        assert_eq!(
            check("team", &source, &state, &bundles),
            Ok(Checked::Unchanged)
        );

        // An edit without a new manifest is refused; the active copy stays.
        std::fs::write(&file, RULE.replace("deny", "allow")).unwrap();
        let err = check("team", &source, &state, &bundles).unwrap_err();
        assert!(err.contains("rules/net.toml: its SHA-256 is not"), "{err}");
        assert_eq!(std::fs::read_to_string(&active).unwrap(), RULE);
        assert_eq!(bundles.status("team").error, Some(err));
    }

    #[test]
    fn an_older_or_expired_bundle_is_refused_and_the_last_good_one_stays() {
        let keys = minisign::KeyPair::generate_unencrypted_keypair().unwrap();
        let root = tempfile::tempdir().unwrap();
        let bundle = root.path().join("bundle");
        let state = root.path().join("state");
        std::fs::create_dir_all(bundle.join("rules")).unwrap();
        let source =
            BundleSource::new(bundle.to_str().unwrap(), Some(&keys.pk.to_base64()), None).unwrap();
        let bundles = Bundles::default();
        // Publishes `rule` with `head` (serial, expires) above [files].
        let publish = |rule: &str, head: &str| {
            std::fs::write(bundle.join("rules/net.toml"), rule).unwrap();
            let listing = format!("{head}\n{}", manifest(&[("rules/net.toml", rule)]));
            std::fs::write(bundle.join(MANIFEST_FILE), &listing).unwrap();
            std::fs::write(bundle.join(SIGNATURE_FILE), sign(&keys, listing.as_bytes())).unwrap();
        };
        let active = active_dir(&state, "team").join("rules/net.toml");
        let v2 = RULE.replace("curl", "wget");
        publish(&v2, "serial = 2\nexpires = \"2999-01-01T00:00:00Z\"");
        assert_eq!(
            check("team", &source, &state, &bundles),
            Ok(Checked::Activated)
        );
        assert_eq!(bundles.status("team").serial, Some(2));
        assert_eq!(
            bundles.status("team").expires.as_deref(),
            Some("2999-01-01T00:00:00Z")
        );

        // An older signed bundle replayed: refused, v2 stays, status says why.
        publish(RULE, "serial = 1");
        let err = check("team", &source, &state, &bundles).unwrap_err();
        assert!(
            err.contains("serial 1 is older than the active bundle's 2"),
            "{err}"
        );
        assert_eq!(std::fs::read_to_string(&active).unwrap(), v2);
        assert_eq!(bundles.status("team").error, Some(err));
        assert_eq!(bundles.status("team").serial, Some(2));
        // The same serial with other contents, or none at all: refused.
        publish(RULE, "serial = 2");
        let err = check("team", &source, &state, &bundles).unwrap_err();
        assert!(err.contains("needs a higher serial"), "{err}");
        publish(RULE, "");
        let err = check("team", &source, &state, &bundles).unwrap_err();
        assert!(err.contains("has no `serial`"), "{err}");
        // Expired: refused however new.
        publish(RULE, "serial = 9\nexpires = \"2020-01-01T00:00:00Z\"");
        let err = check("team", &source, &state, &bundles).unwrap_err();
        assert!(err.contains("expired at 2020-01-01T00:00:00Z"), "{err}");
        assert_eq!(std::fs::read_to_string(&active).unwrap(), v2);
        // Not a time: said so.
        publish(RULE, "serial = 9\nexpires = \"next tuesday\"");
        let err = check("team", &source, &state, &bundles).unwrap_err();
        assert!(err.contains("not an RFC 3339 time"), "{err}");
        // A newer one activates and clears the error.
        publish(RULE, "serial = 3");
        assert_eq!(
            check("team", &source, &state, &bundles),
            Ok(Checked::Activated)
        );
        assert_eq!(std::fs::read_to_string(&active).unwrap(), RULE);
        assert_eq!(bundles.status("team").serial, Some(3));
        assert_eq!(bundles.status("team").error, None);
    }

    #[test]
    fn a_bundle_without_a_signed_listing_is_refused_saying_what_to_do() {
        let keys = minisign::KeyPair::generate_unencrypted_keypair().unwrap();
        let key = minisign_verify::PublicKey::from_base64(&keys.pk.to_base64()).unwrap();
        let refused = |manifest: &str, signed: bool| {
            let signature = sign(&keys, manifest.as_bytes());
            let mut files = vec![
                (MANIFEST_FILE, manifest.as_bytes()),
                ("rules/net.toml", RULE.as_bytes()),
            ];
            if signed {
                files.push((SIGNATURE_FILE, signature.as_bytes()));
            }
            match unpack(&archive(&files)).and_then(|found| verify_whole(&key, found)) {
                Ok(_) => panic!("{manifest} was accepted"),
                Err(e) => e,
            }
        };
        // Before whole-bundle signing: a manifest naming only a revision,
        // or none signed.
        let err = refused("revision = \"1\"\n", true);
        assert!(
            err.contains("has no [files]") && err.contains("minisign -Sm manifest.toml"),
            "{err}"
        );
        let err = refused(&manifest(&[("rules/net.toml", RULE)]), false);
        assert!(
            err.starts_with("no manifest.toml.minisig: a bundle is verified as a whole"),
            "{err}"
        );
        // A listing this daemon cannot keep.
        let err = refused(&manifest(&[("../etc/passwd.toml", RULE)]), true);
        assert!(
            err.contains("may list only rules/<name>.toml, not `../etc/passwd.toml`"),
            "{err}"
        );
        let err = refused("[files]\n\"rules/net.toml\" = \"abc\"\n", true);
        assert!(err.contains("is not a SHA-256"), "{err}");
        let err = refused(
            &format!("not_before = 1\n{}", manifest(&[("rules/net.toml", RULE)])),
            true,
        );
        assert!(
            err.contains("manifest.toml: unknown field `not_before`"),
            "{err}"
        );
    }

    #[test]
    fn a_bundle_activated_by_an_older_version_is_fetched_again_in_full() {
        let older: Activated = serde_json::from_str(
            r#"{"etag": "\"7\"", "sha256": "00", "revision": null, "activated_at": "2026-11-01T00:00:00Z"}"#,
        )
        .unwrap();
        assert_eq!(older.if_none_match(), None);
        let verified = Activated {
            whole: true,
            ..older
        };
        assert_eq!(verified.if_none_match(), Some("\"7\""));
    }

    #[test]
    fn an_archive_that_unpacks_past_its_bound_is_refused_before_its_end() {
        let zeros = vec![0u8; MAX_UNPACKED_BYTES as usize + 1];
        let bomb = archive(&[("padding", &zeros)]);
        assert!((bomb.len() as u64) < MAX_ARCHIVE_BYTES);
        let err = unpack(&bomb).err().unwrap();
        assert!(err.contains("unpacks to more than"), "{err}");
    }

    #[test]
    fn a_signed_bundle_that_does_not_compile_is_not_activated() {
        let keys = minisign::KeyPair::generate_unencrypted_keypair().unwrap();
        let root = tempfile::tempdir().unwrap();
        let text = "[[rule]]\nid = \"x\"\naction = \"nope\"\n";
        let listing = manifest(&[("rules/bad.toml", text)]);
        let signature = sign(&keys, listing.as_bytes());
        let archive = archive(&[
            ("rules/bad.toml", text.as_bytes()),
            (MANIFEST_FILE, listing.as_bytes()),
            (SIGNATURE_FILE, signature.as_bytes()),
        ]);
        let path = root.path().join("team.tar.gz");
        std::fs::write(&path, &archive).unwrap();
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
        assert!(listable("rules/a.toml"));
        assert!(!listable("rules/../../etc/passwd.toml") && !listable("rules/sub/a.toml"));
        assert!(!listable("../a.toml") && !listable("rules/.hidden.toml"));
        assert!(!listable("manifest.toml") && !listable("./rules/a.toml"));
    }
}
