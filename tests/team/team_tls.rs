//! TLS to the team database as libpq does it, against a real PostgreSQL
//! with `ssl = on`: a CA, a server certificate for `db.hookd.test` and a
//! client certificate made per test with the `openssl` CLI; TCP on
//! 127.0.0.1 where pg_hba.conf has `hostssl` lines only, so the server
//! itself refuses plain TCP. The connections are hookd-team's own (the
//! library the daemon and every `hookd team` command connect through);
//! the last test runs a real daemon over `verify-full`.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use hookd_team::TeamConfig;

use crate::support::daemon::{bash, hookd_bin, rule_toml, Daemon, DaemonOptions};
use crate::support::postgres::{Postgres, ADMIN, DB};
use crate::support::process::{poll_for, private_home};

/// The name in the server's certificate (reached as `hostaddr=127.0.0.1`:
/// no DNS involved).
const HOST: &str = "db.hookd.test";

/// The role `cert` authentication admits with a client certificate only.
const CERT_ROLE: &str = "laptop_cert";

/// The role that logs in with a password (SCRAM-SHA-256).
const SCRAM_ROLE: &str = "laptop_scram";

/// `openssl` with `args` (split at spaces: no value here has one) in `dir`.
fn openssl(dir: &Path, args: &str) {
    let mut command = Command::new("openssl");
    private_home(&mut command, &dir.join("openssl"));
    let out = command
        .args(args.split_whitespace())
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "openssl {args}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

const EC: &str = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";

/// A CA: `<name>.crt`, `<name>.key`.
fn ca(dir: &Path, name: &str) {
    openssl(
        dir,
        &format!(
            "req -x509 {EC} -days 2 -keyout {name}.key -out {name}.crt -subj /CN={name} \
             -addext basicConstraints=critical,CA:TRUE \
             -addext keyUsage=critical,keyCertSign,cRLSign"
        ),
    );
}

/// A certificate `<name>.crt` (key `<name>.key`, 0600) for `cn`, signed by
/// `ca`, with the extensions `ext`.
fn issue(dir: &Path, ca: &str, name: &str, cn: &str, ext: &str) {
    std::fs::write(dir.join(format!("{name}.ext")), ext).unwrap();
    openssl(
        dir,
        &format!("req -new {EC} -keyout {name}.key -out {name}.csr -subj /CN={cn}"),
    );
    openssl(
        dir,
        &format!(
            "x509 -req -in {name}.csr -CA {ca}.crt -CAkey {ca}.key -CAcreateserial \
             -days 2 -out {name}.crt -extfile {name}.ext"
        ),
    );
    let key = dir.join(format!("{name}.key"));
    std::fs::set_permissions(key, std::fs::Permissions::from_mode(0o600)).unwrap();
}

/// A cluster with TLS on 127.0.0.1 and the certificates in `certs`
/// (`ca`, `other-ca`, `server`, `client`).
struct TlsCluster {
    pg: Postgres,
    certs: PathBuf,
}

impl TlsCluster {
    fn start(test: &str) -> Option<TlsCluster> {
        let mut pg = Postgres::start(test)?;
        let certs = pg.path().join("certs");
        std::fs::create_dir_all(&certs).unwrap();
        ca(&certs, "ca");
        ca(&certs, "other-ca");
        issue(
            &certs,
            "ca",
            "server",
            HOST,
            &format!(
                "subjectAltName=DNS:{HOST}\nbasicConstraints=critical,CA:FALSE\n\
                 keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n"
            ),
        );
        issue(
            &certs,
            "ca",
            "client",
            CERT_ROLE,
            "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n\
             extendedKeyUsage=clientAuth\n",
        );
        pg.enable_tls(
            &certs.join("server.crt"),
            &certs.join("server.key"),
            &certs.join("ca.crt"),
            &format!(
                "local all all trust\n\
                 hostssl all {CERT_ROLE} 127.0.0.1/32 cert\n\
                 hostssl all {SCRAM_ROLE} 127.0.0.1/32 scram-sha-256\n\
                 hostssl all all 127.0.0.1/32 trust\n"
            ),
        );
        pg.admin(&format!("CREATE ROLE {CERT_ROLE} LOGIN"));
        pg.admin(&format!("CREATE ROLE {SCRAM_ROLE} LOGIN PASSWORD 'sesame'"));
        Some(TlsCluster { pg, certs })
    }

    fn cert(&self, name: &str) -> String {
        self.certs.join(name).display().to_string()
    }

    /// A `key=value` string for `user` over TCP, `host` the name checked.
    fn tcp(&self, user: &str, host: &str, tls: &str) -> String {
        format!(
            "host={host} hostaddr=127.0.0.1 port={} user={user} dbname={DB} {tls}",
            self.pg.port()
        )
    }

    /// A fresh empty HOME (libpq's default files are looked for in it).
    fn home(&self, name: &str) -> PathBuf {
        let home = self.pg.path().join("homes").join(name);
        std::fs::create_dir_all(home.join(".postgresql")).unwrap();
        home
    }
}

/// Connects as the daemon and the commands do, with `env` the whole
/// environment; `Ok(ssl)`: the backend's own `pg_stat_ssl.ssl`.
fn connect(database: &str, env: &[(&str, &str)]) -> Result<bool, String> {
    let team = TeamConfig {
        database: Some(database.to_string()),
        machine: Some("m".into()),
        ..Default::default()
    };
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let lookup = move |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    let target = team.resolve_with(&lookup).map_err(|e| e.to_string())?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let client = hookd_team::connect::connect(&target)
            .await
            .map_err(|e| e.to_string())?;
        let row = client
            .query_one(
                "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
                &[],
            )
            .await
            .map_err(|e| e.to_string())?;
        Ok(row.get::<_, bool>(0))
    })
}

#[track_caller]
fn refused(result: Result<bool, String>, says: &[&str]) -> String {
    let e = result.expect_err("refused");
    for part in says {
        assert!(e.contains(part), "`{part}` not in: {e}");
    }
    e
}

#[test]
fn each_sslmode_does_what_libpq_does_against_a_hostssl_only_server() {
    let Some(c) = TlsCluster::start("each_sslmode_does_what_libpq_does") else {
        return;
    };
    let home = c.home("empty");
    let home_s = home.display().to_string();
    let env = [("HOME", home_s.as_str()), ("USER", "u")];
    let ca = c.cert("ca.crt");
    let other = c.cert("other-ca.crt");

    // require: encrypted, whatever the certificate (no root file).
    assert_eq!(
        connect(&c.tcp(ADMIN, HOST, "sslmode=require"), &env),
        Ok(true)
    );
    // prefer (libpq's default) and allow: the server refuses plain TCP, so TLS.
    assert_eq!(connect(&c.tcp(ADMIN, HOST, ""), &env), Ok(true));
    assert_eq!(
        connect(&c.tcp(ADMIN, HOST, "sslmode=allow"), &env),
        Ok(true)
    );
    // disable: the server's own refusal.
    refused(
        connect(&c.tcp(ADMIN, HOST, "sslmode=disable"), &env),
        &["no pg_hba.conf entry", "no encryption"],
    );

    // verify-full: the right CA and host name.
    let full = format!("sslmode=verify-full sslrootcert={ca}");
    assert_eq!(connect(&c.tcp(ADMIN, HOST, &full), &env), Ok(true));
    // Another CA: refused, naming the problem, the mode and the file.
    refused(
        connect(
            &c.tcp(
                ADMIN,
                HOST,
                &format!("sslmode=verify-full sslrootcert={other}"),
            ),
            &env,
        ),
        &["sslmode=verify-full", "not trusted", &other],
    );
    // Another host name: refused by verify-full, accepted by verify-ca.
    refused(
        connect(&c.tcp(ADMIN, "other.hookd.test", &full), &env),
        &["not valid for the host name `other.hookd.test`", HOST],
    );
    assert_eq!(
        connect(
            &c.tcp(
                ADMIN,
                "other.hookd.test",
                &format!("sslmode=verify-ca sslrootcert={ca}")
            ),
            &env
        ),
        Ok(true)
    );
    // The same from the environment, in a URL-less string.
    let from_env = [
        ("HOME", home_s.as_str()),
        ("USER", "u"),
        ("PGSSLMODE", "verify-full"),
        ("PGSSLROOTCERT", ca.as_str()),
    ];
    assert_eq!(connect(&c.tcp(ADMIN, HOST, ""), &from_env), Ok(true));
    // A URL's query carries them as well.
    let url = format!(
        "postgresql://{ADMIN}@127.0.0.1:{}/{DB}?sslmode=verify-full&sslrootcert={ca}",
        c.pg.port()
    );
    refused(
        connect(&url, &env),
        &["not valid for the host name `127.0.0.1`", HOST],
    );

    // verify-full with no root certificate anywhere: says where it looked.
    refused(
        connect(&c.tcp(ADMIN, HOST, "sslmode=verify-full"), &env),
        &[
            "no root certificate",
            &format!("{home_s}/.postgresql/root.crt"),
        ],
    );
    // Named files that are missing or not PEM.
    refused(
        connect(
            &c.tcp(
                ADMIN,
                HOST,
                "sslmode=require sslrootcert=/nonexistent/ca.crt",
            ),
            &env,
        ),
        &["sslrootcert /nonexistent/ca.crt (from [team] database): no such file"],
    );
    let not_pem = c.pg.path().join("not-pem.crt");
    std::fs::write(&not_pem, "hello\n").unwrap();
    refused(
        connect(
            &c.tcp(
                ADMIN,
                HOST,
                &format!("sslmode=verify-ca sslrootcert={}", not_pem.display()),
            ),
            &env,
        ),
        &["holds no PEM certificate", &not_pem.display().to_string()],
    );

    // libpq's default ~/.postgresql/root.crt: when it exists, require
    // checks the chain too (another CA's: refused), and verify-full needs
    // no sslrootcert.
    let with_root = c.home("with-root");
    let with_root_s = with_root.display().to_string();
    let env = [("HOME", with_root_s.as_str()), ("USER", "u")];
    std::fs::copy(&other, with_root.join(".postgresql/root.crt")).unwrap();
    refused(
        connect(&c.tcp(ADMIN, HOST, "sslmode=require"), &env),
        &["sslmode=require", "not trusted", "libpq's default"],
    );
    // prefer: a failed handshake falls back to plain text (libpq's
    // prefer), which this server refuses.
    refused(
        connect(&c.tcp(ADMIN, HOST, "sslmode=prefer"), &env),
        &["no pg_hba.conf entry", "no encryption"],
    );
    std::fs::copy(&ca, with_root.join(".postgresql/root.crt")).unwrap();
    assert_eq!(
        connect(&c.tcp(ADMIN, HOST, "sslmode=verify-full"), &env),
        Ok(true)
    );
}

#[test]
fn a_client_certificate_authenticates_under_cert_auth() {
    let Some(c) = TlsCluster::start("a_client_certificate_authenticates") else {
        return;
    };
    let home = c.home("client");
    let home_s = home.display().to_string();
    let env = [("HOME", home_s.as_str()), ("USER", "u")];
    let (ca, cert, key) = (c.cert("ca.crt"), c.cert("client.crt"), c.cert("client.key"));
    let mode = format!("sslmode=verify-full sslrootcert={ca}");

    // Without a certificate `cert` authentication refuses the role.
    refused(
        connect(&c.tcp(CERT_ROLE, HOST, &mode), &env),
        &["connection requires a valid client certificate"],
    );
    // Named in the string.
    assert_eq!(
        connect(
            &c.tcp(
                CERT_ROLE,
                HOST,
                &format!("{mode} sslcert={cert} sslkey={key}")
            ),
            &env
        ),
        Ok(true)
    );
    // From PGSSLCERT and PGSSLKEY.
    let from_env = [
        ("HOME", home_s.as_str()),
        ("USER", "u"),
        ("PGSSLCERT", cert.as_str()),
        ("PGSSLKEY", key.as_str()),
    ];
    assert_eq!(connect(&c.tcp(CERT_ROLE, HOST, &mode), &from_env), Ok(true));
    // libpq's default ~/.postgresql/postgresql.crt and postgresql.key.
    let dot = home.join(".postgresql");
    std::fs::copy(&cert, dot.join("postgresql.crt")).unwrap();
    std::fs::copy(&key, dot.join("postgresql.key")).unwrap();
    std::fs::set_permissions(
        dot.join("postgresql.key"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    assert_eq!(connect(&c.tcp(CERT_ROLE, HOST, &mode), &env), Ok(true));
    // A key others may read is refused before connecting (libpq's rule).
    std::fs::set_permissions(
        dot.join("postgresql.key"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    refused(
        connect(&c.tcp(CERT_ROLE, HOST, &mode), &env),
        &["postgresql.key", "group or world access"],
    );
    // A password over TLS: SCRAM bound to the TLS channel
    // (SCRAM-SHA-256-PLUS, tls-server-end-point of the server's ECDSA
    // SHA-256 certificate): the server checks the binding, so a wrong hash
    // would fail the login.
    let scram = |password: &str| {
        c.tcp(
            SCRAM_ROLE,
            HOST,
            &format!("{mode} password={password} channel_binding=require"),
        )
    };
    let bare = c.home("scram");
    let bare = bare.display().to_string();
    let env = [("HOME", bare.as_str()), ("USER", "u")];
    assert_eq!(connect(&scram("sesame"), &env), Ok(true));
    refused(
        connect(&scram("wrong"), &env),
        &["password authentication failed"],
    );
    // A certificate named without its key.
    refused(
        connect(
            &c.tcp(
                CERT_ROLE,
                HOST,
                &format!("{mode} sslcert={cert} sslkey=/nonexistent.key"),
            ),
            &env,
        ),
        &["sslkey /nonexistent.key (from [team] database): no such file"],
    );
}

#[test]
fn a_daemon_over_verify_full_ships_its_decisions_and_its_fleet_row() {
    let Some(c) = TlsCluster::start("a_daemon_over_verify_full_ships") else {
        return;
    };
    // The schema and a machine role, by `hookd team init` over TLS.
    let full = format!("sslmode=verify-full sslrootcert={}", c.cert("ca.crt"));
    let admin = c.pg.team_init_laptop(&c.tcp(ADMIN, HOST, &full));

    let daemon = Daemon::start_with(DaemonOptions {
        rules: Some(rule_toml("no-bash", "deny", "Bash")),
        config: Some(format!(
            "[team]\ndatabase = \"{}\"\nmachine = \"laptop-1\"\n",
            c.tcp("laptop_1", HOST, &full)
        )),
        ..Default::default()
    });
    for i in 0..3 {
        let out = daemon.forward(&bash(&format!("echo tls-{i}")), &[]);
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("deny"),
            "{out:?}"
        );
    }
    daemon.wait_decisions(3);
    poll_for(
        "the fleet row and three decisions",
        Duration::from_secs(60),
        || {
            let fleet =
                c.pg.admin("SELECT count(*) FROM hookd.fleet WHERE machine = 'laptop-1'");
            let decisions = c.pg.admin(
                "SELECT count(*) FROM hookd.decisions WHERE machine = 'laptop-1' \
             AND kind = 'decision' AND verdict = 'deny'",
            );
            (fleet == "1" && decisions == "3").then_some(())
        },
    );
    // Every connection of the machine's role is encrypted, as the server
    // sees it.
    let sessions = c.pg.admin(
        "SELECT count(*) || ' ' || bool_and(s.ssl) FROM pg_stat_ssl s \
         JOIN pg_stat_activity a USING (pid) WHERE a.usename = 'laptop_1'",
    );
    let (count, all_ssl) = sessions.split_once(' ').unwrap();
    assert!(count.parse::<u32>().unwrap() >= 1, "{sessions}");
    assert_eq!(all_ssl, "true", "{sessions}");
    let status = daemon.status();
    assert_eq!(status["team"]["connected"], true, "{status}");

    // `hookd team verify` over the same TLS: the database matches the log.
    let mut verify = Command::new(hookd_bin());
    private_home(&mut verify, &daemon.dir.path().join("verify-home"));
    let out = verify
        .args(["team", "verify", "--config"])
        .arg(daemon.dir.path().join("config.toml"))
        .arg("--log")
        .arg(daemon.dir.path().join("events.jsonl"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("ok: the database matches the log"),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // `hookd team status` says the connection is encrypted.
    let mut status = Command::new(hookd_bin());
    private_home(&mut status, &c.pg.path().join("status"));
    let out = status
        .args(["team", "status", "--config"])
        .arg(&admin)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines()
            .any(|l| l.starts_with("tls        TLSv1.") && l.ends_with("(sslmode=verify-full)")),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Another CA: the command says why and fails; a daemon keeps serving
    // its hooks and says why in its status.
    let other = format!("sslmode=verify-full sslrootcert={}", c.cert("other-ca.crt"));
    let wrong = c.pg.path().join("wrong-ca.toml");
    std::fs::write(
        &wrong,
        format!("[team]\ndatabase = \"{}\"\n", c.tcp(ADMIN, HOST, &other)),
    )
    .unwrap();
    let mut status = Command::new(hookd_bin());
    private_home(&mut status, &c.pg.path().join("status"));
    let out = status
        .args(["team", "status", "--config"])
        .arg(&wrong)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("sslmode=verify-full: the server's certificate is not trusted")
            && stderr.contains(&c.cert("other-ca.crt")),
        "{stderr}"
    );
    let refused = Daemon::start_with(DaemonOptions {
        rules: Some(rule_toml("no-bash", "deny", "Bash")),
        config: Some(format!(
            "[team]\ndatabase = \"{}\"\nmachine = \"laptop-2\"\n",
            c.tcp("laptop_1", HOST, &other)
        )),
        ..Default::default()
    });
    let out = refused.forward(&bash("echo still-judged"), &[]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("deny"),
        "{out:?}"
    );
    let team = poll_for("the TLS failure in status", Duration::from_secs(30), || {
        let team = refused.status()["team"].clone();
        (team["failures"].as_u64()? >= 1).then_some(team)
    });
    assert_eq!(team["connected"], false, "{team}");
    assert!(
        team["last_error"]
            .as_str()
            .unwrap()
            .contains("the server's certificate is not trusted"),
        "{team}"
    );
}
