//! TLS to the team database, as libpq does it: `sslmode`, `sslrootcert`,
//! `sslcert` and `sslkey` from the `[team] database` string, the service
//! file or `PGSSLMODE`, `PGSSLROOTCERT`, `PGSSLCERT`, `PGSSLKEY`, with
//! libpq's defaults (`prefer`; `~/.postgresql/root.crt`,
//! `postgresql.crt`, `postgresql.key`).
//!
//! | sslmode       | TLS                                  | the server's certificate |
//! |---------------|--------------------------------------|--------------------------|
//! | `disable`     | never                                | —                        |
//! | `allow`       | plain first; TLS if the server refused plain | as `require`     |
//! | `prefer`      | TLS first; plain if the server has none or the handshake failed | as `require` |
//! | `require`     | always                               | its chain, when a root certificate file exists (libpq's rule); else none |
//! | `verify-ca`   | always                               | its chain                |
//! | `verify-full` | always                               | its chain and the host name (its subject alternative names) |
//!
//! Unix-socket connections never use TLS (as with libpq), whatever the mode.
//! `sslrootcert=system` trusts the platform's usual roots (Mozilla's, from
//! webpki-roots: the ones hookd's HTTPS senders link already) and, as libpq
//! 16 has it, defaults to `verify-full` and refuses a weaker mode.
//!
//! Stricter than libpq in one respect: a file named explicitly (in the
//! string, the service file or a variable) must exist; only libpq's
//! default paths may be absent. The files are read at each connection, so
//! renewed certificates are picked up on the next reconnect.
//!
//! Not supported (refused by name): `sslcrl`, `sslcrldir`, `sslpassword`
//! (an encrypted key), `sslcertmode`, `sslsni`, `ssl_min_protocol_version`,
//! `ssl_max_protocol_version`, `sslcompression`. Over TLS a password
//! login (SCRAM) is bound to the channel (SCRAM-SHA-256-PLUS,
//! `tls-server-end-point`) as libpq does; `channel_binding=require` works.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

/// libpq's `sslmode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SslMode {
    /// Never TLS.
    Disable,
    /// Plain first, TLS if the server refuses plain.
    Allow,
    /// TLS first, plain where the server has none (libpq's default).
    #[default]
    Prefer,
    /// TLS always; the chain checked when a root certificate file exists.
    Require,
    /// TLS, the chain checked.
    VerifyCa,
    /// TLS, the chain and the host name checked.
    VerifyFull,
}

impl SslMode {
    /// Parses libpq's spelling.
    pub fn parse(value: &str) -> Option<SslMode> {
        Some(match value {
            "disable" => SslMode::Disable,
            "allow" => SslMode::Allow,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            _ => return None,
        })
    }

    /// libpq's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Allow => "allow",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }

    /// Whether the server's certificate must be checked (verify-ca,
    /// verify-full).
    pub fn verifies(self) -> bool {
        matches!(self, SslMode::VerifyCa | SslMode::VerifyFull)
    }
}

impl fmt::Display for SslMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a TLS setting came from (named in errors).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The `[team] database` string.
    Database,
    /// The service file's section.
    Service,
    /// An environment variable.
    Env(&'static str),
    /// libpq's default.
    Default,
}

impl Source {
    /// Whether the setting was given (a default file may be absent).
    pub fn explicit(&self) -> bool {
        !matches!(self, Source::Default)
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Database => f.write_str("from [team] database"),
            Source::Service => f.write_str("from the service file"),
            Source::Env(var) => write!(f, "from {var}"),
            Source::Default => f.write_str("libpq's default"),
        }
    }
}

/// A certificate or key file setting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileSetting {
    /// `sslrootcert`, `sslcert` or `sslkey`.
    pub key: &'static str,
    /// The file.
    pub path: PathBuf,
    /// Where the setting came from.
    pub source: Source,
}

impl fmt::Display for FileSetting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} ({})", self.key, self.path.display(), self.source)
    }
}

/// The root certificates the server's chain is checked against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RootCert {
    /// A PEM file of CA certificates.
    File(FileSetting),
    /// `sslrootcert=system`.
    System,
}

/// The TLS half of a connection's settings, resolved.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TlsSettings {
    /// `sslmode`.
    pub mode: SslMode,
    /// `sslrootcert` (`None`: no HOME for the default).
    pub rootcert: Option<RootCert>,
    /// `sslcert`, the client certificate.
    pub cert: Option<FileSetting>,
    /// `sslkey`, its private key.
    pub key: Option<FileSetting>,
}

/// The TLS parameters hookd reads, with their variables.
pub(crate) const KEYS: [(&str, &str); 4] = [
    ("sslmode", "PGSSLMODE"),
    ("sslrootcert", "PGSSLROOTCERT"),
    ("sslcert", "PGSSLCERT"),
    ("sslkey", "PGSSLKEY"),
];

/// Parameters starting with `ssl` that the database client itself reads.
const CLIENT_KEYS: [&str; 1] = ["sslnegotiation"];

/// Splits a `[team] database` string into the string the client parses
/// and the TLS parameters hookd reads itself. A `ssl…` parameter neither
/// reads is refused by name.
pub(crate) fn split_database(db: &str) -> Result<(String, BTreeMap<String, String>), String> {
    let mut tls = BTreeMap::new();
    let mut take = |key: &str, value: String| -> Result<bool, String> {
        if KEYS.iter().any(|(k, _)| *k == key) {
            tls.insert(key.to_string(), value);
            return Ok(true);
        }
        let unsupported =
            (key.starts_with("ssl") && !CLIENT_KEYS.contains(&key)) || key == "requiressl";
        if unsupported {
            return Err(format!(
                "`{key}` is not supported by hookd's team plane \
                 (it reads sslmode, sslrootcert, sslcert and sslkey)"
            ));
        }
        Ok(false)
    };
    if db.starts_with("postgres://") || db.starts_with("postgresql://") {
        let Some((base, query)) = db.split_once('?') else {
            return Ok((db.to_string(), tls));
        };
        let mut kept = Vec::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            if !take(&percent_decode(key)?, percent_decode(value)?)? {
                kept.push(pair);
            }
        }
        let rest = if kept.is_empty() {
            base.to_string()
        } else {
            format!("{base}?{}", kept.join("&"))
        };
        return Ok((rest, tls));
    }
    let mut kept = Vec::new();
    for (key, value) in parse_conninfo(db)? {
        if !take(&key, value.clone())? {
            kept.push(format!(
                "{key}='{}'",
                value.replace('\\', "\\\\").replace('\'', "\\'")
            ));
        }
    }
    Ok((kept.join(" "), tls))
}

fn percent_decode(s: &str) -> Result<String, String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("a bad %-escape in `{s}`"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| format!("`{s}` is not UTF-8 once decoded"))
}

/// libpq's `key=value` string: values bare or single-quoted, `\` escaping.
fn parse_conninfo(s: &str) -> Result<Vec<(String, String)>, String> {
    let mut pairs = Vec::new();
    let mut chars = s.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.peek().is_none() {
            return Ok(pairs);
        }
        let mut key = String::new();
        while let Some(c) = chars.next_if(|c| *c != '=' && !c.is_whitespace()) {
            key.push(c);
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.next() != Some('=') {
            return Err(format!("`{key}` has no `=value`"));
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let mut value = String::new();
        if chars.next_if_eq(&'\'').is_some() {
            loop {
                match chars.next() {
                    None => return Err(format!("`{key}`'s quoted value is not closed")),
                    Some('\'') => break,
                    Some('\\') => value.extend(chars.next()),
                    Some(c) => value.push(c),
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                if c == '\\' {
                    value.extend(chars.next());
                } else {
                    value.push(c);
                }
            }
        }
        pairs.push((key, value));
    }
}

/// Resolves the TLS settings as libpq does: the database string, then the
/// service file's section, then the environment, then the defaults.
pub(crate) fn resolve(
    from_database: &BTreeMap<String, String>,
    from_service: &BTreeMap<String, String>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<TlsSettings, String> {
    let lookup = |key: &str, var: &'static str| -> Option<(String, Source)> {
        from_database
            .get(key)
            .map(|v| (v.clone(), Source::Database))
            .or_else(|| from_service.get(key).map(|v| (v.clone(), Source::Service)))
            .or_else(|| env(var).map(|v| (v, Source::Env(var))))
            .filter(|(v, _)| !v.is_empty())
    };
    let home = env("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
    let file = |key: &'static str, var: &'static str, default: &str| -> Option<FileSetting> {
        match lookup(key, var) {
            Some((path, source)) => Some(FileSetting {
                key,
                path: expand_home(&path, home.as_deref()),
                source,
            }),
            None => home.as_ref().map(|home| FileSetting {
                key,
                path: home.join(".postgresql").join(default),
                source: Source::Default,
            }),
        }
    };
    let rootcert = match lookup("sslrootcert", "PGSSLROOTCERT") {
        Some((value, _)) if value == "system" => Some(RootCert::System),
        _ => file("sslrootcert", "PGSSLROOTCERT", "root.crt").map(RootCert::File),
    };
    let mode = match lookup("sslmode", "PGSSLMODE") {
        Some((value, source)) => SslMode::parse(&value).ok_or_else(|| {
            format!(
                "sslmode `{value}` ({source}): must be disable, allow, prefer, \
                 require, verify-ca or verify-full"
            )
        })?,
        None if rootcert == Some(RootCert::System) => SslMode::VerifyFull,
        None => SslMode::Prefer,
    };
    if rootcert == Some(RootCert::System) && mode != SslMode::VerifyFull {
        // libpq 16's rule: the system's roots vouch for any public name.
        return Err(format!(
            "sslmode `{mode}` may not be used with sslrootcert=system (use verify-full)"
        ));
    }
    Ok(TlsSettings {
        mode,
        rootcert,
        cert: file("sslcert", "PGSSLCERT", "postgresql.crt"),
        key: file("sslkey", "PGSSLKEY", "postgresql.key"),
    })
}

fn expand_home(path: &str, home: Option<&std::path::Path>) -> PathBuf {
    match (path.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => PathBuf::from(path),
    }
}

/// Whether every host is a Unix socket (no TLS there, as with libpq).
fn unix_only(config: &tokio_postgres::Config) -> bool {
    !config.get_hosts().is_empty()
        && config
            .get_hosts()
            .iter()
            .all(|h| !matches!(h, tokio_postgres::config::Host::Tcp(_)))
}

#[cfg(not(target_os = "macos"))]
pub use rustls_tls::Stream;
#[cfg(not(target_os = "macos"))]
mod rustls_tls;

#[cfg(target_os = "macos")]
/// The connection's stream: plain only on macOS for now.
pub type Stream = tokio_postgres::tls::NoTlsStream;

/// Connects with `tls`'s mode (see the module's table).
pub(crate) async fn connect(
    config: &tokio_postgres::Config,
    tls: &TlsSettings,
) -> crate::Result<(
    tokio_postgres::Client,
    tokio_postgres::Connection<tokio_postgres::Socket, Stream>,
)> {
    let mut config = config.clone();
    if tls.mode == SslMode::Disable || unix_only(&config) {
        config.ssl_mode(tokio_postgres::config::SslMode::Disable);
        return plain(&config).await;
    }
    encrypted(config, tls).await
}

#[cfg(not(target_os = "macos"))]
use rustls_tls::connect as encrypted;

/// The TLS modes on macOS.
#[cfg(target_os = "macos")]
async fn encrypted(
    mut config: tokio_postgres::Config,
    tls: &TlsSettings,
) -> crate::Result<(
    tokio_postgres::Client,
    tokio_postgres::Connection<tokio_postgres::Socket, Stream>,
)> {
    // The workspace's `ureq` says why rustls with ring is not built for
    // macOS; the platform's TLS for the database is still to do.
    if matches!(tls.mode, SslMode::Allow | SslMode::Prefer) {
        config.ssl_mode(tokio_postgres::config::SslMode::Disable);
        return plain(&config).await;
    }
    Err(crate::Error::Tls(format!(
        "sslmode={}: TLS to the team database is not built for macOS yet \
         (use a Unix socket, a tunnel, or sslmode=disable|prefer)",
        tls.mode
    )))
}

#[cfg(target_os = "macos")]
async fn plain(
    config: &tokio_postgres::Config,
) -> crate::Result<(
    tokio_postgres::Client,
    tokio_postgres::Connection<tokio_postgres::Socket, Stream>,
)> {
    Ok(config.connect(tokio_postgres::NoTls).await?)
}

#[cfg(not(target_os = "macos"))]
use rustls_tls::plain;

#[cfg(test)]
mod tests {
    use super::*;

    use crate::config::test_env as env;

    #[test]
    fn a_url_keeps_what_the_client_reads_and_gives_the_tls_keys() {
        let (rest, tls) = split_database(
            "postgresql://u@db:5433/hookd?sslmode=verify-full&application_name=x&sslrootcert=%2Ftmp%2Fca%20a.crt",
        )
        .unwrap();
        assert_eq!(rest, "postgresql://u@db:5433/hookd?application_name=x");
        assert_eq!(tls["sslmode"], "verify-full");
        assert_eq!(tls["sslrootcert"], "/tmp/ca a.crt");
        let (rest, tls) = split_database("postgresql://db/hookd?sslmode=require").unwrap();
        assert_eq!(rest, "postgresql://db/hookd");
        assert_eq!(tls.len(), 1);
    }

    #[test]
    fn conninfo_values_are_unquoted() {
        let (rest, tls) =
            split_database("host=db  user = 'a b' sslcert='/x/it\\'s' sslkey=/k\\ y dbname=d")
                .unwrap();
        assert_eq!(rest, "host='db' user='a b' dbname='d'");
        assert_eq!(tls["sslcert"], "/x/it's");
        assert_eq!(tls["sslkey"], "/k y");
        assert!(split_database("host='db")
            .unwrap_err()
            .contains("not closed"));
    }

    #[test]
    fn unsupported_tls_keys_are_named() {
        let e = split_database("host=db sslcrl=/x").unwrap_err();
        assert!(e.contains("`sslcrl` is not supported"), "{e}");
        let e = split_database("postgresql://db/x?sslpassword=p").unwrap_err();
        assert!(e.contains("`sslpassword`"), "{e}");
        assert!(split_database("host=db sslnegotiation=postgres").is_ok());
    }

    #[test]
    fn the_database_then_the_service_then_the_environment_then_the_defaults() {
        let db = BTreeMap::from([("sslmode".to_string(), "verify-ca".to_string())]);
        let service = BTreeMap::from([("sslrootcert".to_string(), "/svc/ca.crt".to_string())]);
        let t = resolve(
            &db,
            &service,
            &env(&[
                ("PGSSLMODE", "disable"),
                ("PGSSLROOTCERT", "/env/ca.crt"),
                ("PGSSLCERT", "~/c.crt"),
                ("HOME", "/home/a"),
            ]),
        )
        .unwrap();
        assert_eq!(t.mode, SslMode::VerifyCa);
        let Some(RootCert::File(root)) = &t.rootcert else {
            panic!("{t:?}")
        };
        assert_eq!(
            root.to_string(),
            "sslrootcert /svc/ca.crt (from the service file)"
        );
        let cert = t.cert.unwrap();
        assert_eq!(cert.path, PathBuf::from("/home/a/c.crt"));
        assert_eq!(cert.source, Source::Env("PGSSLCERT"));
        let key = t.key.unwrap();
        assert_eq!(
            key.path,
            PathBuf::from("/home/a/.postgresql/postgresql.key")
        );
        assert_eq!(key.source, Source::Default);

        let t = resolve(&BTreeMap::new(), &BTreeMap::new(), &env(&[])).unwrap();
        assert_eq!(t, TlsSettings::default());
    }

    #[test]
    fn a_bad_mode_and_system_roots_with_a_weak_mode_are_refused() {
        let e = resolve(
            &BTreeMap::new(),
            &BTreeMap::new(),
            &env(&[("PGSSLMODE", "verify")]),
        )
        .unwrap_err();
        assert!(e.contains("sslmode `verify` (from PGSSLMODE)"), "{e}");
        let system = BTreeMap::from([("sslrootcert".to_string(), "system".to_string())]);
        let t = resolve(&system, &BTreeMap::new(), &env(&[])).unwrap();
        assert_eq!(
            (t.mode, t.rootcert),
            (SslMode::VerifyFull, Some(RootCert::System))
        );
        let e = resolve(&system, &BTreeMap::new(), &env(&[("PGSSLMODE", "require")])).unwrap_err();
        assert!(e.contains("use verify-full"), "{e}");
    }
}
