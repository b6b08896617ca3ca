//! The bearer token every route but the one-time links needs: 32 random
//! bytes, URL-safe base64, in a 0600 file (`http-token` beside
//! `config.toml`, or `[http] token_file`).
//!
//! The daemon reads the file for every request that needs it, so
//! `hookd http token --rotate` takes effect at the next request without a
//! restart or a watcher (a few microseconds per request, and requests are
//! rare: a phone, a scraper).

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The token file's name in the config directory.
pub const TOKEN_FILE: &str = "http-token";

/// Why the token file cannot be used. Each message names the file and
/// says what to do.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// The file is readable or writable by others, or not ours.
    #[error("{path}: {problem}; run `chmod 600 {path}` (or `hookd http token --rotate` to replace it)", path = .path.display())]
    Unsafe {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// The file holds no token.
    #[error("{path}: holds no token; run `hookd http token --rotate` to write a new one", path = .path.display())]
    Empty {
        /// The file.
        path: PathBuf,
    },
    /// Reading or writing failed.
    #[error("{path}: {source}", path = .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// No random bytes.
    #[error("no randomness from the operating system: {0}")]
    Random(String),
}

/// `$XDG_CONFIG_HOME/hookd/http-token` (or under `~/.config`).
pub fn default_path() -> Option<PathBuf> {
    crate::paths::default_config_path().and_then(|c| c.parent().map(|d| d.join(TOKEN_FILE)))
}

/// `n` random bytes as URL-safe base64 without padding.
pub fn random_token(n: usize) -> Result<String, TokenError> {
    let mut bytes = vec![0u8; n];
    getrandom::fill(&mut bytes).map_err(|e| TokenError::Random(e.to_string()))?;
    Ok(url_safe_base64(&bytes))
}

/// RFC 4648 §5 base64 ("URL and filename safe"), unpadded.
fn url_safe_base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::with_capacity(bytes.len() * 4 / 3 + 2);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

/// Reads the token in `path`, refusing a file others may read or write.
pub fn read(path: &Path) -> Result<String, TokenError> {
    let io = |source| TokenError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    let mode = meta.permissions().mode() & 0o777;
    let problem = if mode & 0o077 != 0 {
        Some(format!(
            "mode {mode:04o} lets others read or change the token"
        ))
    } else if meta.uid() != crate::paths::current_uid() {
        Some(format!("owned by uid {}, not by you", meta.uid()))
    } else {
        None
    };
    if let Some(problem) = problem {
        return Err(TokenError::Unsafe {
            path: path.to_path_buf(),
            problem,
        });
    }
    let text = std::io::read_to_string(file).map_err(io)?;
    let token = text.trim();
    if token.is_empty() {
        return Err(TokenError::Empty {
            path: path.to_path_buf(),
        });
    }
    Ok(token.to_string())
}

/// The token in `path`, written first if there is none.
pub fn ensure(path: &Path) -> Result<String, TokenError> {
    match read(path) {
        Err(TokenError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            match write(path, false) {
                Ok(token) => Ok(token),
                // Another process created it first: theirs is the token.
                Err(TokenError::Io { source, .. })
                    if source.kind() == std::io::ErrorKind::AlreadyExists =>
                {
                    read(path)
                }
                Err(e) => Err(e),
            }
        }
        other => other,
    }
}

/// Writes a new token to `path`, replacing the old one.
pub fn rotate(path: &Path) -> Result<String, TokenError> {
    write(path, true)
}

/// Writes a fresh token to a temporary 0600 file beside `path`, then puts
/// it in place at once: renamed over the old one (`replace`), or linked,
/// which fails if a token appeared meanwhile. A reader never sees a
/// half-written or a world-readable token.
fn write(path: &Path, replace: bool) -> Result<String, TokenError> {
    let io = |source| TokenError::Io {
        path: path.to_path_buf(),
        source,
    };
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    if let Some(dir) = dir {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(io)?;
    }
    let token = random_token(32)?;
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let temp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let written = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&temp)?;
        file.write_all(format!("{token}\n").as_bytes())?;
        file.sync_all()?;
        if replace {
            std::fs::rename(&temp, path)
        } else {
            std::fs::hard_link(&temp, path)
        }
    })();
    let _ = std::fs::remove_file(&temp);
    written.map_err(io)?;
    Ok(token)
}

/// Whether `given` is `expected`, in time that does not depend on where
/// they differ (the length is not secret: every token has the same).
pub fn matches(given: &[u8], expected: &[u8]) -> bool {
    given.len() == expected.len()
        && given
            .iter()
            .zip(expected)
            .fold(0u8, |diff, (a, b)| diff | (a ^ b))
            == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_is_url_safe_and_unpadded() {
        assert_eq!(url_safe_base64(b""), "");
        assert_eq!(url_safe_base64(b"f"), "Zg");
        assert_eq!(url_safe_base64(b"fo"), "Zm8");
        assert_eq!(url_safe_base64(b"foo"), "Zm9v");
        assert_eq!(url_safe_base64(&[0xfb, 0xff]), "-_8");
        assert_eq!(random_token(32).unwrap().len(), 43);
    }

    #[test]
    fn ensure_creates_a_private_file_once_and_rotate_replaces_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/http-token");
        let first = ensure(&path).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(ensure(&path).unwrap(), first);
        let rotated = rotate(&path).unwrap();
        assert_ne!(rotated, first);
        assert_eq!(read(&path).unwrap(), rotated);
        // No temporary file is left behind.
        assert_eq!(
            std::fs::read_dir(path.parent().unwrap()).unwrap().count(),
            1
        );
    }

    #[test]
    fn a_readable_token_file_is_refused_with_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("http-token");
        std::fs::write(&path, "secret\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let error = read(&path).unwrap_err().to_string();
        assert!(error.contains("mode 0644"), "{error}");
        assert!(
            error.contains(&format!("chmod 600 {}", path.display())),
            "{error}"
        );
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(read(&path).unwrap(), "secret");
    }

    #[test]
    fn comparison() {
        assert!(matches(b"abc", b"abc"));
        assert!(!matches(b"abd", b"abc"));
        assert!(!matches(b"ab", b"abc"));
    }
}
