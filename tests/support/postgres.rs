//! A throw-away PostgreSQL cluster for a test: `initdb` into a temp dir,
//! then the `postgres` server itself as this test's child, listening on a
//! Unix socket in that dir only (no TCP port), ended by pid (SIGINT: a
//! fast shutdown) when dropped, nothing left behind.
//!
//! The binaries: `pg_config --bindir`, else `/usr/lib/postgresql/*/bin`
//! (Debian's `postgresql`, which scripts/test installs when missing).
//! PostgreSQL refuses to run as root: as root (these machines, CI boxes)
//! `initdb` and `postgres` run as the `postgres` user (Debian's package
//! creates it) through `setpriv`, which execs, so the child's pid is the
//! server's. The cluster trusts every local connection (the tests choose
//! roles by name; the database's grants and row-level security still hold).

#![allow(dead_code)]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use super::process;

/// The superuser `initdb` creates, and the database the tests use.
pub const ADMIN: &str = "hookd_admin";
/// The database.
pub const DB: &str = "hookd";

/// One running cluster.
pub struct Postgres {
    dir: tempfile::TempDir,
    bindir: PathBuf,
    server: Option<Child>,
    /// The port (the Unix socket's name; TCP's once [`Postgres::enable_tls`]).
    port: u16,
    /// `-c` settings past the defaults ([`Postgres::enable_tls`]'s).
    settings: Vec<String>,
}

/// Where the binaries are, if installed.
fn bindir(home: &Path) -> Option<PathBuf> {
    let mut pg_config = Command::new("pg_config");
    process::private_home(&mut pg_config, home);
    let from_pg_config = pg_config
        .arg("--bindir")
        .stderr(Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    if let Some(dir) = from_pg_config.filter(|d| d.join("initdb").is_file()) {
        return Some(dir);
    }
    let mut found: Vec<PathBuf> = fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
        .filter(|d| d.join("initdb").is_file())
        .collect();
    found.sort();
    found.pop()
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

impl Postgres {
    /// A new cluster with database [`DB`], or `None` (the test skipped, or
    /// on CI failed) where PostgreSQL is not installed.
    pub fn start(test: &str) -> Option<Postgres> {
        let dir = tempfile::Builder::new()
            .prefix("hookd-pg")
            .tempdir()
            .unwrap();
        let Some(bindir) = bindir(&dir.path().join("home")) else {
            process::skip_or_fail(
                test,
                "needs PostgreSQL (Debian: apt-get install postgresql)",
            );
            return None;
        };
        // The server's user must reach its data and socket directories.
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
        for sub in ["data", "socket", "home"] {
            fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        if is_root() {
            let mut chown = Command::new("chown");
            process::private_home(&mut chown, &dir.path().join("home"));
            let status = chown
                .args(["-R", "postgres:postgres"])
                .arg(dir.path().join("data"))
                .arg(dir.path().join("socket"))
                .status()
                .unwrap();
            assert!(status.success(), "chown to the postgres user");
        }
        let pg = Postgres {
            dir,
            bindir,
            server: None,
            port: 5432,
            settings: Vec::new(),
        };
        let out = pg
            .as_server_user("initdb")
            .args([
                "--auth=trust",
                "--encoding=UTF8",
                "--no-sync",
                "-U",
                ADMIN,
                "-D",
            ])
            .arg(pg.data())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "initdb: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut pg = pg;
        pg.start_server();
        pg.psql(ADMIN, "postgres", &format!("CREATE DATABASE {DB}"));
        Some(pg)
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// The directory of the server's socket (libpq's `host`).
    pub fn socket_dir(&self) -> PathBuf {
        self.dir.path().join("socket")
    }

    /// A program of the cluster's, as the server's user.
    fn as_server_user(&self, program: &str) -> Command {
        let path = self.bindir.join(program);
        let mut command = if is_root() {
            let mut c = Command::new("setpriv");
            c.args([
                "--reuid=postgres",
                "--regid=postgres",
                "--clear-groups",
                "--",
            ])
            .arg(path);
            c
        } else {
            Command::new(path)
        };
        process::private_home(&mut command, &self.home());
        // Its own directory, which the server's user may enter.
        command.current_dir(self.dir.path());
        command
    }

    /// Starts the server (again, after [`Postgres::stop`]) and waits until
    /// it answers.
    pub fn start_server(&mut self) {
        assert!(self.server.is_none(), "the server runs already");
        let log = fs::File::create(self.dir.path().join("home/postgres.log")).unwrap();
        let child = self
            .as_server_user("postgres")
            .arg("-D")
            .arg(self.data())
            .args(["-c", "listen_addresses=", "-c"])
            .arg(format!(
                "unix_socket_directories={}",
                self.socket_dir().display()
            ))
            .args(["-c", "fsync=off", "-c"])
            // 400, or more for a benchmark's hundreds of connections.
            .arg(format!(
                "max_connections={}",
                std::env::var("HOOKD_PG_MAX_CONNECTIONS").unwrap_or_else(|_| "400".into())
            ))
            .args(self.settings.iter().flat_map(|s| ["-c", s]))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        self.server = Some(child);
        // Dropped on a panic here, `self` stops the server.
        let (bindir, socket, home) = (self.bindir.clone(), self.socket_dir(), self.home());
        let (port, log) = (self.port, home.join("postgres.log"));
        process::poll_reporting(
            "postgres accepting connections",
            Duration::from_secs(60),
            || {
                let out = psql_at(&bindir, &socket, port, &home, ADMIN, "postgres", "SELECT 1");
                if out.status.success() {
                    Ok(())
                } else {
                    Err(fs::read_to_string(&log).unwrap_or_default())
                }
            },
        );
    }

    /// Stops the server by pid (SIGINT, a fast shutdown) and waits for it.
    pub fn stop(&mut self) {
        let Some(mut child) = self.server.take() else {
            return;
        };
        let _ = Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status();
        if process::wait_with_deadline(&mut child, Duration::from_secs(30)).is_none() {
            process::kill_process_tree(&mut child);
        }
    }

    /// Whether the server runs.
    pub fn running(&self) -> bool {
        self.server.is_some()
    }

    /// The server's log so far.
    pub fn server_log(&self) -> String {
        fs::read_to_string(self.dir.path().join("home/postgres.log")).unwrap_or_default()
    }

    /// A libpq `key=value` connection string for `user` on [`DB`].
    pub fn conninfo(&self, user: &str) -> String {
        format!(
            "host={} port={} user={user} dbname={DB}",
            self.socket_dir().display(),
            self.port
        )
    }

    /// The port: the Unix socket's, and TCP's on 127.0.0.1 once
    /// [`Postgres::enable_tls`] ran.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Restarts the server with TLS on 127.0.0.1 (a free port): `cert` and
    /// `key` its certificate and key, `ca` the roots it checks client
    /// certificates against, `hba` the whole of pg_hba.conf (keep a
    /// `local` line: the helpers connect over the Unix socket).
    pub fn enable_tls(&mut self, cert: &Path, key: &Path, ca: &Path, hba: &str) {
        self.stop();
        let data = self.data();
        for (from, to) in [(cert, "server.crt"), (key, "server.key"), (ca, "root.crt")] {
            fs::copy(from, data.join(to)).unwrap();
        }
        fs::set_permissions(data.join("server.key"), fs::Permissions::from_mode(0o600)).unwrap();
        fs::write(data.join("pg_hba.conf"), hba).unwrap();
        if is_root() {
            let mut chown = Command::new("chown");
            process::private_home(&mut chown, &self.home());
            let status = chown
                .args(["postgres:postgres", "server.crt", "server.key", "root.crt"])
                .current_dir(&data)
                .status()
                .unwrap();
            assert!(status.success(), "chown to the postgres user");
        }
        self.port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        self.settings = vec![
            "ssl=on".into(),
            "ssl_cert_file=server.crt".into(),
            "ssl_key_file=server.key".into(),
            "ssl_ca_file=root.crt".into(),
            "listen_addresses=127.0.0.1".into(),
            format!("port={}", self.port),
        ];
        self.start_server();
    }

    /// Runs `sql` with psql as `user` on `db`.
    pub fn try_psql(&self, user: &str, db: &str, sql: &str) -> Output {
        psql_at(
            &self.bindir,
            &self.socket_dir(),
            self.port,
            &self.home(),
            user,
            db,
            sql,
        )
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// [`Postgres::try_psql`], asserting success; returns stdout, trimmed.
    pub fn psql(&self, user: &str, db: &str, sql: &str) -> String {
        let out = self.try_psql(user, db, sql);
        assert!(
            out.status.success(),
            "psql as {user}: {sql}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// `sql` on [`DB`] as the superuser.
    pub fn admin(&self, sql: &str) -> String {
        self.psql(ADMIN, DB, sql)
    }

    /// The temp dir (for a test's own files).
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `hookd team init --machine-role laptop_1`, connecting with
    /// `database` (the owner's: [`Postgres::conninfo`] of [`ADMIN`], or a
    /// TLS connection string), from a config file and a private home of
    /// its own; panics with its stderr if it fails. Returns that config
    /// file (the owner's, for later `hookd team` commands).
    pub fn team_init_laptop(&self, database: &str) -> PathBuf {
        let config = self.path().join("admin.toml");
        fs::write(&config, format!("[team]\ndatabase = \"{database}\"\n")).unwrap();
        let mut command = Command::new(super::daemon::hookd_bin());
        super::process::private_home(&mut command, &self.path().join("init"));
        let out = command
            .args(["team", "init", "--machine-role", "laptop_1", "--config"])
            .arg(&config)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        config
    }
}

/// psql from `bindir` on the server at `socket`.
fn psql_at(
    bindir: &Path,
    socket: &Path,
    port: u16,
    home: &Path,
    user: &str,
    db: &str,
    sql: &str,
) -> Output {
    let mut command = Command::new(bindir.join("psql"));
    process::private_home(&mut command, home);
    command
        .arg("-h")
        .arg(socket)
        .arg("-p")
        .arg(port.to_string())
        .args([
            "-U",
            user,
            "-d",
            db,
            "-X",
            "-q",
            "-A",
            "-t",
            "-v",
            "ON_ERROR_STOP=1",
            "-c",
            sql,
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

impl Drop for Postgres {
    fn drop(&mut self) {
        self.stop();
    }
}
