//! Atomic file replacement (a temp file in the same directory, fsynced,
//! renamed over the old one with its mode and owner), shared by `install`,
//! `service` and the daemon's grants file.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

use anyhow::{bail, Context};

/// Refuses a read-only file or directory with a message that says what to
/// do. Mode bits are checked as well as access(2), so the refusal holds for
/// root too: a file with no write bit is a statement.
pub fn check_writable(file: &Path, dir: &Path) -> anyhow::Result<()> {
    use nix::unistd::{access, AccessFlags};
    if let Ok(meta) = fs::metadata(file) {
        if meta.mode() & 0o222 == 0 || access(file, AccessFlags::W_OK).is_err() {
            bail!(
                "{} is read-only (mode {:o}); make it writable (`chmod u+w {}`) and run again, \
                 or merge the block from `hookd install --print` by hand",
                file.display(),
                meta.mode() & 0o7777,
                file.display()
            );
        }
    }
    let meta = fs::metadata(dir).with_context(|| format!("inspecting {}", dir.display()))?;
    if meta.mode() & 0o222 == 0 || access(dir, AccessFlags::W_OK).is_err() {
        bail!(
            "cannot write in {} (mode {:o}): the settings file is replaced atomically through \
             a temp file in its directory; make the directory writable (`chmod u+w {}`) or merge \
             the block from `hookd install --print` by hand",
            dir.display(),
            meta.mode() & 0o7777,
            dir.display()
        );
    }
    Ok(())
}

/// Replaces `path` atomically: a temp file in the same directory, fsynced,
/// given the old file's mode and owner (`like`), renamed over it. A new file
/// gets the default mode (0666 less the umask).
pub fn write_atomic(path: &Path, bytes: &[u8], like: Option<&fs::Metadata>) -> anyhow::Result<()> {
    write_atomic_mode(path, bytes, like, 0o666)
}

/// [`write_atomic`], a new file (no `like`) created with `mode` (before the
/// umask) from its first byte: a private file is never readable by others,
/// not even between its write and a `chmod`.
pub fn write_atomic_mode(
    path: &Path,
    bytes: &[u8],
    like: Option<&fs::Metadata>,
    mode: u32,
) -> anyhow::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut name = std::ffi::OsString::from(".");
    name.push(path.file_name().unwrap_or_default());
    name.push(format!(".hookd-tmp.{}", std::process::id()));
    let temp = dir.join(name);
    let result = (|| -> io::Result<()> {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            // Private until it has the old file's mode.
            .mode(if like.is_some() { 0o600 } else { mode })
            .open(&temp)?;
        file.write_all(bytes)?;
        if let Some(meta) = like {
            // Keep the owner when root edits someone's file; an ordinary
            // user cannot change it and needs not.
            let _ = std::os::unix::fs::fchown(&file, Some(meta.uid()), Some(meta.gid()));
            file.set_permissions(fs::Permissions::from_mode(meta.mode() & 0o7777))?;
        }
        file.sync_all()?;
        fs::rename(&temp, path)?;
        if let Ok(d) = fs::File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result.with_context(|| format!("writing {} (through {})", path.display(), temp.display()))
}
