//! Where the adapters live: embedded in this binary and installed, with
//! the Agent SDK and the Pi coding agent its lock file pins (`adapter.mjs`
//! runs the one, `pi.mjs` the other), into the data directory
//! (`$XDG_DATA_HOME/hookd/adapter/<version>/`), so an installed hookd needs
//! no source tree. `hookd adapter install` installs it; the daemon runs it
//! from there unless `--adapter-dir` / `HOOKD_ADAPTER_DIR` name another
//! directory (the tests use the source tree's `adapter/`).
//!
//! Installing is atomic: the files are written and `npm ci` run in a
//! temporary directory beside the target, which is then renamed into place.
//! A directory named by the version is therefore complete or absent, and an
//! installed version is never touched again.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context};
use serde::Serialize;

/// `adapter/adapter.mjs`, as built.
pub const ADAPTER_MJS: &str = include_str!("../adapter/adapter.mjs");
/// `adapter/pi.mjs`, as built: the Pi runtime's adapter.
pub const PI_MJS: &str = include_str!("../adapter/pi.mjs");
/// `adapter/package.json`, as built.
pub const PACKAGE_JSON: &str = include_str!("../adapter/package.json");
/// `adapter/package-lock.json`, as built: pins the Agent SDK and Pi.
pub const PACKAGE_LOCK: &str = include_str!("../adapter/package-lock.json");

/// The files of an adapter directory, and their embedded contents.
const FILES: [(&str, &str); 4] = [
    ("adapter.mjs", ADAPTER_MJS),
    ("pi.mjs", PI_MJS),
    ("package.json", PACKAGE_JSON),
    ("package-lock.json", PACKAGE_LOCK),
];

/// The files whose presence says the pinned packages are installed.
const PACKAGES: [&str; 2] = [
    "node_modules/@anthropic-ai/claude-agent-sdk/package.json",
    "node_modules/@mariozechner/pi-coding-agent/package.json",
];

/// The embedded adapter's version: hookd's version and a digest of the
/// embedded files, so a build whose adapter changed installs anew.
pub fn version() -> String {
    // FNV-1a: stable across builds and platforms, which std's hasher is not.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for (_, contents) in FILES {
        for byte in contents.bytes().chain([0]) {
            hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{}-{:08x}", env!("CARGO_PKG_VERSION"), hash as u32)
}

/// `$XDG_DATA_HOME/hookd/adapter`, else `~/.local/share/hookd/adapter`.
pub fn data_dir() -> anyhow::Result<PathBuf> {
    let var = |key: &str| std::env::var_os(key).filter(|v| !v.is_empty());
    match (var("XDG_DATA_HOME"), var("HOME")) {
        (Some(data), _) => Ok(PathBuf::from(data).join("hookd/adapter")),
        (None, Some(home)) => Ok(PathBuf::from(home).join(".local/share/hookd/adapter")),
        (None, None) => bail!(
            "neither XDG_DATA_HOME nor HOME is set: cannot locate the agent-SDK adapter; \
             set one, or name its directory with --adapter-dir / HOOKD_ADAPTER_DIR"
        ),
    }
}

/// Where this build's adapter is installed: `data_dir()/<version>`.
pub fn default_dir() -> anyhow::Result<PathBuf> {
    Ok(data_dir()?.join(version()))
}

/// What is in an adapter directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Status {
    /// The directory.
    pub dir: PathBuf,
    /// The embedded adapter's version ([`version`]).
    pub version: String,
    /// Both adapters and their pinned packages are there.
    pub installed: bool,
    /// The files are the embedded ones (false for another build's adapter,
    /// e.g. a source tree's that has changed since).
    pub embedded: bool,
    /// `node` on PATH, if any.
    pub node: Option<PathBuf>,
}

/// The state of the adapter in `dir`.
pub fn status(dir: &Path) -> Status {
    let installed = FILES.iter().all(|(name, _)| dir.join(name).is_file())
        && PACKAGES.iter().all(|package| dir.join(package).is_file());
    let embedded = FILES.iter().all(|(name, contents)| {
        std::fs::read_to_string(dir.join(name)).is_ok_and(|text| text == *contents)
    });
    Status {
        dir: dir.to_path_buf(),
        version: version(),
        installed,
        embedded,
        node: find_on_path("node"),
    }
}

/// What [`install`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Installed {
    /// It was installed now.
    Installed,
    /// It was there already; nothing was done.
    AlreadyInstalled,
}

/// Installs the embedded adapter and its pinned SDK into `dir` (`npm ci`
/// with the embedded lock file; npm's own output, on stderr, shows the
/// progress), unless it is there already.
pub fn install(dir: &Path) -> anyhow::Result<Installed> {
    let current = status(dir);
    if current.installed && current.embedded {
        return Ok(Installed::AlreadyInstalled);
    }
    if dir.exists() {
        bail!(
            "{} exists but does not hold this hookd's adapter ({}): remove it and run \
             `hookd adapter install` again",
            dir.display(),
            if current.installed {
                "its files differ from the embedded ones"
            } else {
                "its SDK is not installed"
            }
        );
    }
    let npm = find_on_path("npm").context(
        "npm is not on PATH: the agent-SDK adapter is installed with `npm ci`; install \
         Node.js >= 18 (which includes npm) and run `hookd adapter install` again",
    )?;
    let parent = dir
        .parent()
        .with_context(|| format!("{} has no parent directory", dir.display()))?;
    std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    let staging = Staging::create(parent)?;
    for (name, contents) in FILES {
        let path = staging.0.join(name);
        std::fs::write(&path, contents).with_context(|| format!("writing {}", path.display()))?;
    }
    let status = Command::new(&npm)
        .args(["ci", "--no-audit", "--no-fund", "--prefer-offline"])
        .current_dir(&staging.0)
        .stdin(Stdio::null())
        // npm's progress and errors go to hookd's stderr; its stdout too,
        // so that a `--json` on ours stays parseable.
        .stdout(std::io::stderr())
        .stderr(Stdio::inherit())
        .status()
        .with_context(|| format!("running {}", npm.display()))?;
    if !status.success() {
        bail!(
            "`npm ci` failed ({status}) installing the agent-SDK adapter (its output is above); \
             nothing was installed in {}",
            dir.display()
        );
    }
    if let Err(e) = std::fs::rename(&staging.0, dir) {
        // Another `hookd adapter install` may have won the race.
        let now = self::status(dir);
        if now.installed && now.embedded {
            return Ok(Installed::AlreadyInstalled);
        }
        return Err(e).with_context(|| format!("moving the adapter into {}", dir.display()));
    }
    Ok(Installed::Installed)
}

/// A temporary directory beside the target, removed unless renamed away.
struct Staging(PathBuf);

impl Staging {
    fn create(parent: &Path) -> anyhow::Result<Staging> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path = parent.join(format!(".installing-{}-{nanos}", std::process::id()));
        std::fs::create_dir(&path).with_context(|| format!("creating {}", path.display()))?;
        Ok(Staging(path))
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        // After the rename there is nothing left here to remove.
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `program` in `PATH`, if it is there.
fn find_on_path(program: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(program))
        .find(|path| {
            path.metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_names_hookds_version_and_the_embedded_files() {
        let v = version();
        assert!(
            v.starts_with(concat!(env!("CARGO_PKG_VERSION"), "-")),
            "{v}"
        );
        assert_eq!(v.len(), env!("CARGO_PKG_VERSION").len() + 9);
        assert_eq!(v, version(), "stable");
    }

    #[test]
    fn a_directory_is_installed_when_its_files_and_sdk_are_there() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!status(dir.path()).installed);
        for (name, contents) in FILES {
            std::fs::write(dir.path().join(name), contents).unwrap();
        }
        for (i, package) in PACKAGES.iter().enumerate() {
            assert!(!status(dir.path()).installed, "{i} of the packages");
            let package = dir.path().join(package);
            std::fs::create_dir_all(package.parent().unwrap()).unwrap();
            std::fs::write(&package, "{}").unwrap();
        }
        let now = status(dir.path());
        assert!(now.installed && now.embedded, "{now:?}");
        assert_eq!(install(dir.path()).unwrap(), Installed::AlreadyInstalled);
        std::fs::write(dir.path().join("adapter.mjs"), "// changed").unwrap();
        assert!(!status(dir.path()).embedded);
        let error = install(dir.path()).unwrap_err().to_string();
        assert!(error.contains("remove it"), "{error}");
    }
}
