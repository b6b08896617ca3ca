//! Test support: the real Prometheus server (Debian's `prometheus`
//! package, which `scripts/test` installs) scraping one target, and its
//! HTTP query API.
//!
//! A test module takes it with `use crate::support::prometheus;` (it
//! uses `support/http.rs`). The server runs on a temp
//! config and storage directory and a free loopback port, is ended by its
//! pid (SIGTERM, then SIGKILL) and waited for; the directory is removed on
//! drop.
#![allow(dead_code)]

use super::process;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use super::http;

/// How long Prometheus may take to become ready.
const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// The `prometheus` binary, when installed.
pub fn binary() -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("prometheus"))
            .find(|path| path.is_file())
    })
}

/// A running Prometheus scraping one target.
pub struct Prometheus {
    dir: tempfile::TempDir,
    child: Child,
    /// `127.0.0.1:<port>` of its web/API listener.
    pub addr: String,
}

/// A port nobody listens on now (the kernel's pick, released at once).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Prometheus {
    /// Starts `prometheus` scraping `http://<target>/metrics` every 200 ms
    /// with `Authorization: Bearer <token>` (read from a file, the form
    /// Debian's 2.42 supports), and waits until it is ready.
    pub fn scrape(target: &str, token: &str) -> Prometheus {
        let binary = binary().expect(
            "the `prometheus` binary (Debian package `prometheus`; scripts/test installs it)",
        );
        let dir = tempfile::tempdir().unwrap();
        let token_file = dir.path().join("token");
        std::fs::write(&token_file, token).unwrap();
        let config = dir.path().join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 200ms\n  scrape_timeout: 200ms\n\
                 scrape_configs:\n  - job_name: hookd\n    authorization:\n      \
                 type: Bearer\n      credentials_file: {}\n    static_configs:\n      \
                 - targets: ['{target}']\n",
                token_file.display()
            ),
        )
        .unwrap();
        let addr = format!("127.0.0.1:{}", free_port());
        let log = std::fs::File::create(dir.path().join("prometheus.log")).unwrap();
        let mut command = Command::new(binary);
        let child = process::private_home(&mut command, dir.path())
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address={addr}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("starting prometheus");
        let prometheus = Prometheus { dir, child, addr };
        process::poll_reporting("prometheus to be ready", READY_TIMEOUT, || {
            let ready = std::panic::catch_unwind(|| http::get(&prometheus.addr, "/-/ready", &[]));
            if ready.is_ok_and(|r| r.status == 200) {
                return Ok(());
            }
            Err(prometheus.log())
        });
        prometheus
    }

    /// Its log so far (stderr).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("prometheus.log")).unwrap_or_default()
    }

    /// The result vector of an instant query `promql` (`/api/v1/query`).
    pub fn query(&self, promql: &str) -> Vec<Value> {
        let encoded: String = promql
            .bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                    (b as char).to_string()
                }
                _ => format!("%{b:02X}"),
            })
            .collect();
        let response = http::get(&self.addr, &format!("/api/v1/query?query={encoded}"), &[]);
        assert_eq!(response.status, 200, "query {promql}: {}", response.body);
        let body: Value = serde_json::from_str(&response.body).unwrap();
        assert_eq!(body["status"], "success", "query {promql}: {body}");
        body["data"]["result"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// Queries `promql` until `accept` takes its result, or panics after
    /// `limit` with the last result and the scrape target's health.
    pub fn wait_for(
        &self,
        promql: &str,
        limit: Duration,
        accept: impl Fn(&[Value]) -> bool,
    ) -> Vec<Value> {
        let result = process::poll_last(
            limit,
            Duration::from_millis(100),
            || self.query(promql),
            |r| accept(r),
        );
        if !accept(&result) {
            let targets = http::get(&self.addr, "/api/v1/targets", &[]).body;
            panic!("{promql}: {result:?} after {limit:?}; targets: {targets}");
        }
        result
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        if process::wait_with_deadline(&mut self.child, Duration::from_secs(10)).is_some() {
            return;
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
