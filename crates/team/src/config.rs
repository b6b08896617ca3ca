//! `[team]` in config.toml, and the connection it resolves to.
//!
//! ```toml
//! [team]
//! database = "postgresql://hookd@db.example.com/hookd?sslmode=disable"  # or "host=/run/postgresql dbname=hookd"
//! service = "hookd"        # or a section of libpq's service file (PGSERVICEFILE, ~/.pg_service.conf)
//! machine = "alice-laptop" # this machine's name in the fleet (default: the host name)
//! role = "alice_laptop"    # the database role to connect as (default: the URL's user, PGUSER, the OS user)
//! ship = true              # ship every log line to hookd.decisions (default true)
//! ship_interval = 1        # seconds the shipper gathers lines once one is written (1 to 3600)
//! ```
//!
//! What `database` leaves unset comes, as with libpq, from the service file
//! section (`service`, else `PGSERVICE`), then from `PGHOST`, `PGPORT`,
//! `PGUSER`, `PGDATABASE`, `PGPASSWORD`, `PGAPPNAME`; then the
//! defaults: the Unix socket in `/var/run/postgresql`, port 5432, the OS user,
//! a database named after the user.
//!
//! TLS as libpq does it — `sslmode`, `sslrootcert`, `sslcert`, `sslkey`,
//! `PGSSLMODE`, `PGSSLROOTCERT`, `PGSSLCERT`, `PGSSLKEY`, the files in
//! `~/.postgresql/` — is [`crate::tls`]'s.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::str::FromStr;

use serde::Deserialize;

use crate::tls::{self, TlsSettings};
use crate::Error;

/// `[team]`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TeamConfig {
    /// A `postgresql://` URL or a libpq `key=value` string; unset: libpq's
    /// environment and service file alone.
    #[serde(default)]
    pub database: Option<String>,
    /// A section of libpq's service file.
    #[serde(default)]
    pub service: Option<String>,
    /// This machine's name in the fleet (default: the host name).
    #[serde(default)]
    pub machine: Option<String>,
    /// The database role to connect as.
    #[serde(default)]
    pub role: Option<String>,
    /// Ship every line of the event log to `hookd.decisions` (default
    /// true; `false` keeps the fleet row only).
    #[serde(default)]
    pub ship: Option<bool>,
    /// Seconds a caught-up shipper waits before looking for new lines
    /// (default 1; larger: fewer, larger transactions for big fleets).
    #[serde(default)]
    pub ship_interval: Option<u64>,
}

/// Where and as whom to connect, resolved.
#[derive(Clone)]
pub struct ConnectTarget {
    /// The client's configuration.
    pub config: tokio_postgres::Config,
    /// This machine's name.
    pub machine: String,
    /// TLS: sslmode and the certificate files.
    pub tls: TlsSettings,
}

impl std::fmt::Debug for ConnectTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the password.
        f.debug_struct("ConnectTarget")
            .field("target", &self.describe())
            .field("machine", &self.machine)
            .finish()
    }
}

impl ConnectTarget {
    /// `user@host:port/dbname`, without a password.
    pub fn describe(&self) -> String {
        let c = &self.config;
        let host = match c.get_hosts().first() {
            Some(tokio_postgres::config::Host::Tcp(h)) => h.clone(),
            Some(tokio_postgres::config::Host::Unix(p)) => p.display().to_string(),
            None => "?".into(),
        };
        let port = c.get_ports().first().copied().unwrap_or(5432);
        format!(
            "{}@{host}:{port}/{}",
            c.get_user().unwrap_or("?"),
            c.get_dbname().unwrap_or("?")
        )
    }
}

/// The parameters the environment may fill, with their variables.
const ENV: &[(&str, &str)] = &[
    ("host", "PGHOST"),
    ("port", "PGPORT"),
    ("user", "PGUSER"),
    ("dbname", "PGDATABASE"),
    ("password", "PGPASSWORD"),
    ("application_name", "PGAPPNAME"),
    ("connect_timeout", "PGCONNECT_TIMEOUT"),
];

impl TeamConfig {
    /// Whether the daemon ships its log (`ship`, default true).
    pub fn ships(&self) -> bool {
        self.ship.unwrap_or(true)
    }

    /// How long a caught-up shipper, woken by a line written, gathers more
    /// before it reads (`ship_interval`, default 1 s).
    pub fn ship_interval(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.ship_interval.unwrap_or(1))
    }

    /// Checks what can be checked without the environment (the daemon's
    /// config parse): the database string parses, its TLS parameters too.
    /// On error: the key at fault and why.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if let Some(db) = &self.database {
            let (rest, from_database) = tls::split_database(db).map_err(|e| ("database", e))?;
            tokio_postgres::Config::from_str(&rest).map_err(|e| {
                (
                    "database",
                    format!("not a postgresql:// URL or a key=value string: {e}"),
                )
            })?;
            if let Some(mode) = from_database.get("sslmode") {
                if tls::SslMode::parse(mode).is_none() {
                    return Err((
                        "database",
                        format!(
                            "sslmode `{mode}`: must be disable, allow, prefer, require, \
                             verify-ca or verify-full"
                        ),
                    ));
                }
            }
        }
        if let Some(machine) = &self.machine {
            if machine.trim().is_empty() || machine.len() > 255 {
                return Err(("machine", "must be 1 to 255 characters".into()));
            }
        }
        if let Some(role) = &self.role {
            if role.trim().is_empty() {
                return Err(("role", "must not be empty".into()));
            }
        }
        if let Some(seconds) = self.ship_interval {
            if !(1..=3600).contains(&seconds) {
                return Err(("ship_interval", "must be 1 to 3600 seconds".into()));
            }
        }
        Ok(())
    }

    /// Resolves the connection from `self`, the process environment and the
    /// service file, as libpq would.
    pub fn resolve(&self) -> crate::Result<ConnectTarget> {
        self.resolve_with(&|name| std::env::var(name).ok())
    }

    /// [`TeamConfig::resolve`] with `env` standing for the environment.
    pub fn resolve_with(
        &self,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> crate::Result<ConnectTarget> {
        self.validate()
            .map_err(|(key, why)| Error::Config(format!("[team] {key}: {why}")))?;
        let (mut config, from_database) = match &self.database {
            Some(db) => {
                let (rest, tls) = tls::split_database(db)
                    .map_err(|e| Error::Config(format!("[team] database: {e}")))?;
                let config = tokio_postgres::Config::from_str(&rest)
                    .map_err(|e| Error::Config(format!("[team] database: {e}")))?;
                (config, tls)
            }
            None => (tokio_postgres::Config::new(), BTreeMap::new()),
        };
        let service = self.service.clone().or_else(|| env("PGSERVICE"));
        let from_service = match &service {
            Some(name) => service_section(name, env)?,
            None => BTreeMap::new(),
        };
        let unset = |key: &str, c: &tokio_postgres::Config| match key {
            "host" => c.get_hosts().is_empty(),
            "port" => c.get_ports().is_empty(),
            "user" => c.get_user().is_none(),
            "dbname" => c.get_dbname().is_none(),
            "password" => c.get_password().is_none(),
            "application_name" => c.get_application_name().is_none(),
            "connect_timeout" => c.get_connect_timeout().is_none(),
            _ => false,
        };
        for (key, var) in ENV {
            if !unset(key, &config) {
                continue;
            }
            let value = from_service.get(*key).cloned().or_else(|| env(var));
            if let Some(value) = value {
                set(&mut config, key, &value)?;
            }
        }
        if let Some(role) = &self.role {
            config.user(role);
        }
        if config.get_hosts().is_empty() {
            config.host_path("/var/run/postgresql");
        }
        if config.get_user().is_none() {
            let user = env("USER").or_else(|| env("LOGNAME")).ok_or_else(|| {
                Error::Config("[team]: no role to connect as: set `role`, PGUSER or USER".into())
            })?;
            config.user(&user);
        }
        if config.get_dbname().is_none() {
            let user = config.get_user().unwrap_or_default().to_string();
            config.dbname(&user);
        }
        if config.get_connect_timeout().is_none() {
            // A daemon's task, never a hook, waits on it: bounded all the same.
            config.connect_timeout(std::time::Duration::from_secs(10));
        }
        if config.get_application_name().is_none() {
            config.application_name("hookd");
        }
        let tls = tls::resolve(&from_database, &from_service, env)
            .map_err(|e| Error::Config(format!("[team]: {e}")))?;
        let machine = match &self.machine {
            Some(m) => m.clone(),
            None => hostname(),
        };
        Ok(ConnectTarget {
            config,
            machine,
            tls,
        })
    }
}

fn set(config: &mut tokio_postgres::Config, key: &str, value: &str) -> crate::Result<()> {
    // The client parses each parameter as in a key=value string.
    let quoted = value.replace('\\', "\\\\").replace('\'', "\\'");
    let parsed = tokio_postgres::Config::from_str(&format!("{key}='{quoted}'"))
        .map_err(|e| Error::Config(format!("[team]: the environment's {key}: {e}")))?;
    match key {
        "host" => {
            for host in parsed.get_hosts() {
                match host {
                    tokio_postgres::config::Host::Tcp(h) => config.host(h),
                    tokio_postgres::config::Host::Unix(p) => config.host_path(p),
                };
            }
        }
        "port" => {
            for port in parsed.get_ports() {
                config.port(*port);
            }
        }
        "user" => {
            config.user(parsed.get_user().unwrap_or_default());
        }
        "dbname" => {
            config.dbname(parsed.get_dbname().unwrap_or_default());
        }
        "password" => {
            config.password(parsed.get_password().unwrap_or_default());
        }
        "application_name" => {
            config.application_name(parsed.get_application_name().unwrap_or_default());
        }
        "connect_timeout" => {
            if let Some(t) = parsed.get_connect_timeout() {
                config.connect_timeout(*t);
            }
        }
        _ => {}
    }
    Ok(())
}

/// The named section of libpq's service file: `PGSERVICEFILE`, else
/// `~/.pg_service.conf`, else `PGSYSCONFDIR/pg_service.conf`.
fn service_section(
    name: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> crate::Result<BTreeMap<String, String>> {
    let mut files: Vec<PathBuf> = Vec::new();
    if let Some(file) = env("PGSERVICEFILE") {
        files.push(file.into());
    } else if let Some(home) = env("HOME") {
        files.push(PathBuf::from(home).join(".pg_service.conf"));
    }
    files.push(
        PathBuf::from(env("PGSYSCONFDIR").unwrap_or_else(|| "/etc/postgresql-common".into()))
            .join("pg_service.conf"),
    );
    for file in &files {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        if let Some(section) = parse_service(&text, name) {
            return Ok(section);
        }
    }
    Err(Error::Config(format!(
        "[team]: service `{name}` is in none of {}",
        files
            .iter()
            .map(|f| f.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    )))
}

/// Reads `[name]`'s `key=value` lines from a service file's text.
pub fn parse_service(text: &str, name: &str) -> Option<BTreeMap<String, String>> {
    let mut found = None;
    let mut current: Option<BTreeMap<String, String>> = None;
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(section) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            if let Some(done) = current.take() {
                found = Some(done);
                break;
            }
            if section == name {
                current = Some(BTreeMap::new());
            }
            continue;
        }
        if let (Some(map), Some((k, v))) = (current.as_mut(), line.split_once('=')) {
            map.insert(k.trim().to_string(), v.trim().to_string());
        }
    }
    found.or(current)
}

/// This machine's host name.
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".into())
}

/// An environment for tests: `vars` looked up by name.
#[cfg(test)]
pub(crate) fn test_env(
    vars: &'static [(&'static str, &'static str)],
) -> impl Fn(&str) -> Option<String> {
    move |k| {
        vars.iter()
            .find(|(n, _)| *n == k)
            .map(|(_, v)| v.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use super::test_env as env;

    #[test]
    fn the_url_wins_and_the_environment_fills_the_rest() {
        // A URL's missing port is 5432 (tokio-postgres fills it in when it
        // parses the URL; libpq would take PGPORT): give the port in the
        // URL, or use a key=value string, which PGPORT does fill.
        let team = TeamConfig {
            database: Some("host=db user=alice dbname=hookd".into()),
            machine: Some("m1".into()),
            ..Default::default()
        };
        let t = team
            .resolve_with(&env(&[
                ("PGUSER", "bob"),
                ("PGPORT", "6543"),
                ("USER", "x"),
            ]))
            .unwrap();
        assert_eq!(t.describe(), "alice@db:6543/hookd");
        assert_eq!(t.machine, "m1");
    }

    #[test]
    fn no_database_uses_the_environment_then_the_defaults() {
        let t = TeamConfig::default()
            .resolve_with(&env(&[("PGHOST", "/tmp/pg"), ("USER", "carol")]))
            .unwrap();
        assert_eq!(t.describe(), "carol@/tmp/pg:5432/carol");
    }

    #[test]
    fn tls_comes_from_the_database_string_or_the_environment() {
        let team = TeamConfig {
            database: Some("host=db sslmode=verify-full sslrootcert=/ca.crt".into()),
            ..Default::default()
        };
        team.validate().unwrap();
        let t = team.resolve_with(&env(&[("USER", "u")])).unwrap();
        assert_eq!(t.tls.mode, tls::SslMode::VerifyFull);
        assert_eq!(t.describe(), "u@db:5432/u");
        let t = TeamConfig::default()
            .resolve_with(&env(&[("PGSSLMODE", "require"), ("USER", "u")]))
            .unwrap();
        assert_eq!(t.tls.mode, tls::SslMode::Require);
        let bad = TeamConfig {
            database: Some("postgresql://db/x?sslmode=on".into()),
            ..Default::default()
        };
        let (key, why) = bad.validate().unwrap_err();
        assert_eq!(key, "database");
        assert!(why.contains("sslmode `on`"), "{why}");
    }

    #[test]
    fn a_service_section_is_read() {
        let text = "# c\n[other]\nhost=x\n[hookd]\nhost = /run/pg\ndbname=team\n";
        let s = parse_service(text, "hookd").unwrap();
        assert_eq!(s["host"], "/run/pg");
        assert_eq!(s["dbname"], "team");
        assert!(parse_service(text, "nope").is_none());
    }

    #[test]
    fn ship_interval_is_bounded() {
        let team = |s| TeamConfig {
            ship_interval: Some(s),
            ..Default::default()
        };
        assert_eq!(team(10).ship_interval().as_secs(), 10);
        assert_eq!(TeamConfig::default().ship_interval().as_secs(), 1);
        let (key, why) = team(0).validate().unwrap_err();
        assert_eq!(key, "ship_interval");
        assert!(why.contains("1 to 3600"), "{why}");
        assert!(team(3601).validate().is_err());
    }

    #[test]
    fn a_bad_database_string_says_so() {
        let team = TeamConfig {
            database: Some("postgresql://[::1".into()),
            ..Default::default()
        };
        assert!(team
            .validate()
            .unwrap_err()
            .1
            .contains("not a postgresql:// URL"));
    }
}
