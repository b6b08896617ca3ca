//! The HTTP listener (`[http]`): off by default, bearer token on every
//! route but the one-time links, Host/Origin checks, body cap, start-up
//! refusals, and that slow HTTP clients never delay a hook. Real daemon,
//! real sockets.

use crate::support::daemon;
use crate::support::http;

use std::io::Write;
use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use daemon::{fixture, Daemon, DaemonOptions};

/// A daemon listening for HTTP on a free loopback port, with `extra`
/// appended to its `[http]` section; returns it and the address.
fn daemon_with_http(extra: &str) -> (Daemon, String) {
    let daemon = Daemon::start_with(DaemonOptions {
        config: Some(format!("[http]\nlisten = \"127.0.0.1:0\"\n{extra}\n")),
        ..DaemonOptions::default()
    });
    let listen = daemon.status()["http"]["listen"]
        .as_str()
        .expect("status.http.listen")
        .to_string();
    (daemon, listen)
}

fn token_file(daemon: &Daemon) -> PathBuf {
    daemon.dir.path().join("config/hookd/http-token")
}

fn token(daemon: &Daemon) -> String {
    std::fs::read_to_string(token_file(daemon))
        .unwrap()
        .trim()
        .to_string()
}

#[test]
fn the_listener_is_off_by_default() {
    let daemon = Daemon::start();
    assert!(daemon.status()["http"].is_null());
    assert!(!token_file(&daemon).exists(), "no token without a listener");
    let out = Command::new(daemon::hookd_bin())
        .args(["status", "--socket"])
        .arg(&daemon.socket)
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("http: off"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn routes_need_the_bearer_token_and_a_rotation_applies_at_once() {
    let (daemon, addr) = daemon_with_http("");
    let file = token_file(&daemon);
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the token file is private");
    let first = token(&daemon);

    let none = http::get(&addr, "/status", &[]);
    assert_eq!(none.status, 401, "{}", none.body);
    assert!(none.body.contains("hookd http token"), "{}", none.body);
    let wrong = http::get(&addr, "/status", &[("Authorization", "Bearer nope")]);
    assert_eq!(wrong.status, 401);
    let bearer = format!("Bearer {first}");
    let ok = http::get(&addr, "/status", &[("Authorization", &bearer)]);
    assert_eq!(ok.status, 200, "{}", ok.body);
    let status: serde_json::Value = serde_json::from_str(&ok.body).unwrap();
    assert_eq!(status["http"]["listen"], addr.as_str());

    // `hookd http token` prints the same token; `--rotate` replaces it and
    // the running daemon refuses the old one from the next request on.
    let printed = Command::new(daemon::hookd_bin())
        .args(["http", "token"])
        .env("XDG_CONFIG_HOME", daemon.dir.path().join("config"))
        .output()
        .unwrap();
    assert!(printed.status.success());
    assert_eq!(String::from_utf8_lossy(&printed.stdout).trim(), first);
    let rotated = Command::new(daemon::hookd_bin())
        .args(["http", "token", "--rotate", "--json"])
        .env("XDG_CONFIG_HOME", daemon.dir.path().join("config"))
        .output()
        .unwrap();
    assert!(rotated.status.success());
    let report: serde_json::Value = serde_json::from_slice(&rotated.stdout).unwrap();
    let second = report["token"].as_str().unwrap().to_string();
    assert_ne!(second, first);
    assert_eq!(report["rotated"], true);
    assert_eq!(
        http::get(&addr, "/status", &[("Authorization", &bearer)]).status,
        401
    );
    let bearer = format!("Bearer {second}");
    assert_eq!(
        http::get(&addr, "/status", &[("Authorization", &bearer)]).status,
        200
    );
}

#[test]
fn a_foreign_host_or_origin_and_an_oversized_body_are_refused() {
    let (daemon, addr) = daemon_with_http("max_body_bytes = 1000");
    let bearer = format!("Bearer {}", token(&daemon));
    // DNS rebinding: a page of evil.example resolving to 127.0.0.1.
    let rebound = http::get(
        &addr,
        "/status",
        &[("Host", "evil.example:80"), ("Authorization", &bearer)],
    );
    assert_eq!(rebound.status, 403);
    assert!(rebound.body.contains("evil.example"), "{}", rebound.body);
    let port = addr.rsplit(':').next().unwrap();
    let localhost = format!("localhost:{port}");
    let by_name = http::get(
        &addr,
        "/status",
        &[("Host", &localhost), ("Authorization", &bearer)],
    );
    assert_eq!(by_name.status, 200, "{}", by_name.body);

    let foreign = http::post_form(
        &addr,
        "/status",
        &[
            ("Origin", "https://evil.example"),
            ("Authorization", &bearer),
        ],
        "x=1",
    );
    assert_eq!(foreign.status, 403);
    assert!(
        foreign.body.contains("https://evil.example"),
        "{}",
        foreign.body
    );

    let big = "x".repeat(2000);
    let oversized = http::post_form(&addr, "/status", &[("Authorization", &bearer)], &big);
    assert_eq!(oversized.status, 413, "{}", oversized.body);
    assert!(
        oversized.body.contains("max_body_bytes"),
        "{}",
        oversized.body
    );
}

/// `hookd serve` with `config`, expected to refuse to start: its stderr.
fn refused_start(config: &str, prepare: impl FnOnce(&std::path::Path)) -> String {
    let dir = tempfile::tempdir().unwrap();
    prepare(dir.path());
    let config_path = dir.path().join("config.toml");
    std::fs::write(&config_path, config).unwrap();
    let out = Command::new(daemon::hookd_bin())
        .arg("serve")
        .arg("--socket")
        .arg(dir.path().join("hookd.sock"))
        .arg("--log")
        .arg(dir.path().join("events.jsonl"))
        .arg("--config")
        .arg(&config_path)
        .env("XDG_CONFIG_HOME", dir.path().join("config"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "hookd serve should refuse to start"
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_non_loopback_address_needs_allow_remote() {
    let stderr = refused_start("[http]\nlisten = \"0.0.0.0:0\"\n", |_| {});
    assert!(stderr.contains("`http.listen`"), "{stderr}");
    assert!(stderr.contains("allow_remote = true"), "{stderr}");
}

#[test]
fn a_token_file_others_can_read_is_refused_at_start() {
    let stderr = refused_start("[http]\nlisten = \"127.0.0.1:0\"\n", |dir| {
        let file = dir.join("config/hookd/http-token");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, "shared-token\n").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    });
    assert!(stderr.contains("mode 0644"), "{stderr}");
    assert!(stderr.contains("chmod 600"), "{stderr}");
}

/// Clients that take every HTTP connection slot and trickle their request
/// heads a byte at a time: hooks are answered all the while, the excess
/// connections are refused at accept, and the listener serves again once
/// the head timeout has cut the slow ones.
#[test]
fn slow_http_clients_never_delay_hooks() {
    let (daemon, addr) = daemon_with_http("max_connections = 4");
    let mut slow: Vec<TcpStream> = (0..12)
        .map(|_| {
            let mut stream = TcpStream::connect(&addr).unwrap();
            stream.write_all(b"GET /status HTTP/1.1\r\n").unwrap();
            stream
        })
        .collect();
    let pre_tool_use = fixture("PreToolUse.json");
    for round in 0..10 {
        for stream in &mut slow {
            let _ = stream.write_all(b"X");
        }
        let out = daemon.forward(&pre_tool_use, &[]);
        assert!(
            out.status.success(),
            "hook {round} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(daemon.counter("decisions"), 10);
    assert!(
        daemon.counter("fallbacks") == 0,
        "no hook fell back: {}",
        daemon.status()
    );
    let refused = daemon.status()["http"]["refused_connections"]
        .as_u64()
        .unwrap();
    assert!(
        refused >= 8,
        "the connections past the cap were refused: {refused}"
    );
    // The head timeout frees the slots.
    let bearer = format!("Bearer {}", token(&daemon));
    daemon::poll_until(
        "the listener serving again",
        Duration::from_secs(30),
        || {
            let served = std::panic::catch_unwind(|| {
                http::get(&addr, "/status", &[("Authorization", &bearer)]).status
            });
            served.is_ok_and(|s| s == 200)
        },
    );
    drop(slow);
}
