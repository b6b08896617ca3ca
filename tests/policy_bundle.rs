//! Signed policy bundles in the real daemon: a `.tar.gz` served over
//! loopback HTTP (a std `TcpListener` thread, counting requests and 304s),
//! signed in the test with a minisign key made for it. Activation, the 304
//! on the ETag, a bad signature and a corrupt archive refused with the last
//! good bundle kept, and a restart with the server down starting from the
//! persisted last good bundle.

#[path = "support/daemon.rs"]
mod daemon;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use daemon::{bash, permission_decision, rule_toml, Daemon, DaemonOptions};
use serde_json::Value;

/// What the test server serves, and what it saw.
#[derive(Default)]
struct Served {
    archive: Vec<u8>,
    signature: String,
    etag: String,
    /// Requests for the archive, and how many got a 304.
    archive_requests: usize,
    not_modified: usize,
}

struct Server {
    addr: std::net::SocketAddr,
    served: Arc<Mutex<Served>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    fn start() -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let served = Arc::new(Mutex::new(Served::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let (s, st) = (served.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            for stream in listener.incoming() {
                if st.load(Ordering::SeqCst) {
                    return;
                }
                if let Ok(stream) = stream {
                    serve(stream, &s);
                }
            }
        });
        Server {
            addr,
            served,
            stop,
            thread: Some(thread),
        }
    }

    fn url(&self) -> String {
        format!("http://{}/team.tar.gz", self.addr)
    }

    fn set(&self, archive: Vec<u8>, signature: String) {
        let mut served = self.served.lock().unwrap();
        served.etag = format!("\"{}\"", archive.len() + served.etag.len());
        served.archive = archive;
        served.signature = signature;
    }

    fn counts(&self) -> (usize, usize) {
        let served = self.served.lock().unwrap();
        (served.archive_requests, served.not_modified)
    }

    fn shut_down(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
        if let Some(thread) = self.thread.take() {
            thread.join().unwrap();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shut_down();
    }
}

fn serve(mut stream: TcpStream, served: &Mutex<Served>) {
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut request = Vec::new();
    let mut buf = [0u8; 1024];
    while !request.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => request.extend_from_slice(&buf[..n]),
        }
    }
    let text = String::from_utf8_lossy(&request).to_string();
    let path = text.split_whitespace().nth(1).unwrap_or("").to_string();
    let if_none_match = text.lines().find_map(|l| {
        l.to_ascii_lowercase()
            .starts_with("if-none-match:")
            .then(|| l[14..].trim().to_string())
    });
    let mut served = served.lock().unwrap();
    let (status, body, etag) = if path == "/team.tar.gz" {
        served.archive_requests += 1;
        if if_none_match.as_deref() == Some(served.etag.as_str()) {
            served.not_modified += 1;
            ("304 Not Modified", Vec::new(), Some(served.etag.clone()))
        } else {
            ("200 OK", served.archive.clone(), Some(served.etag.clone()))
        }
    } else if path == "/team.tar.gz.minisig" {
        ("200 OK", served.signature.clone().into_bytes(), None)
    } else {
        ("404 Not Found", Vec::new(), None)
    };
    drop(served);
    let mut head = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if let Some(etag) = etag {
        head.push_str(&format!("ETag: {etag}\r\n"));
    }
    head.push_str("\r\n");
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(&body);
}

/// A `.tar.gz` of `files` (name, text).
fn archive(files: &[(&str, &str)]) -> Vec<u8> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    for (name, text) in files {
        let mut header = tar::Header::new_gnu();
        header.set_size(text.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        tar.append_data(&mut header, name, text.as_bytes()).unwrap();
    }
    tar.into_inner().unwrap().finish().unwrap()
}

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

fn bundle_status(s: &Value) -> &Value {
    &s["rules"]["layers"][0]["bundle"]
}

fn daemon(server_url: &str, keys: &minisign::KeyPair, state: &Path) -> Daemon {
    Daemon::start_with(DaemonOptions {
        rules: Some(String::new()),
        config: Some(format!(
            "[policy]\nsources = [{{ bundle = {server_url:?}, name = \"team\", enforced = true, public_key = {:?}, interval = 1 }}]\n",
            keys.pk.to_base64()
        )),
        // The state directory (bundles are kept beside the log) outlives
        // one daemon.
        log_path: Some(state.join("events.jsonl").to_str().unwrap().to_string()),
        ..DaemonOptions::default()
    })
}

#[test]
fn a_signed_bundle_is_activated_kept_over_bad_ones_and_survives_a_restart_offline() {
    let keys = minisign::KeyPair::generate_unencrypted_keypair().unwrap();
    let other_keys = minisign::KeyPair::generate_unencrypted_keypair().unwrap();
    let state = tempfile::tempdir().unwrap();
    let mut server = Server::start();
    let good = archive(&[
        ("manifest.toml", "revision = \"2026.11.1\"\n"),
        (
            "rules/10-net.toml",
            &rule_toml("no-curl", "deny", "Bash(curl *)"),
        ),
        ("README.md", "not a rules file: ignored"),
    ]);
    server.set(good.clone(), sign(&keys, &good));
    let mut d = daemon(&server.url(), &keys, state.path());

    // Activation: verified, compiled, and judged with.
    let active = d.wait_for_status("the bundle is activated", |s| {
        bundle_status(s)["activated_at"].is_string()
    });
    assert_eq!(
        bundle_status(&active)["revision"],
        "2026.11.1",
        "{active:#}"
    );
    assert_eq!(bundle_status(&active)["error"], Value::Null);
    let active = d.wait_for_status("the daemon reloads with it", |s| {
        s["rules"]["layers"][0]["rules"] == 1
    });
    assert_eq!(
        permission_decision(&d.forward(&bash("curl example.com"), &[])),
        "deny"
    );
    let generation = active["rules"]["generation"].clone();

    // Unchanged: the next checks send the ETag and get a 304.
    let deadline = Instant::now() + Duration::from_secs(10);
    while server.counts().1 == 0 {
        assert!(Instant::now() < deadline, "no 304: {:?}", server.counts());
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        d.status()["rules"]["generation"],
        generation,
        "a 304 reloads nothing"
    );

    // Signed with another key: refused, the last good one stays.
    let loosened = archive(&[(
        "rules/10-net.toml",
        &rule_toml("curl-ok", "allow", "Bash(curl *)"),
    )]);
    server.set(loosened.clone(), sign(&other_keys, &loosened));
    let refused = d.wait_for_status("a bad signature is reported", |s| {
        bundle_status(s)["error"]
            .as_str()
            .is_some_and(|e| e.contains("signature does not verify"))
    });
    assert_eq!(refused["rules"]["generation"], generation);
    assert_eq!(
        permission_decision(&d.forward(&bash("curl example.com"), &[])),
        "deny"
    );
    assert!(
        d.stderr().contains("the last good bundle stays active"),
        "{}",
        d.stderr()
    );

    // A corrupt archive, correctly signed: refused too.
    let corrupt = b"this is not a gzip stream".to_vec();
    server.set(corrupt.clone(), sign(&keys, &corrupt));
    d.wait_for_status("a corrupt archive is reported", |s| {
        bundle_status(s)["error"]
            .as_str()
            .is_some_and(|e| e.contains("not a .tar.gz") || e.contains("corrupt"))
    });
    assert_eq!(
        permission_decision(&d.forward(&bash("curl example.com"), &[])),
        "deny"
    );
    let out = std::process::Command::new(daemon::hookd_bin())
        .args(["status", "--socket"])
        .arg(&d.socket)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("bundle refused, the last good one stays active"),
        "{text}"
    );

    // A restart with the server gone: the persisted bundle is active at
    // once, and the failed fetch is reported.
    d.stop();
    server.shut_down();
    let d = daemon(&server.url(), &keys, state.path());
    let s = d.status();
    assert_eq!(s["rules"]["layers"][0]["rules"], 1, "{s:#}");
    assert_eq!(
        permission_decision(&d.forward(&bash("curl example.com"), &[])),
        "deny"
    );
    d.wait_for_status("the failed fetch is reported", |s| {
        bundle_status(s)["error"]
            .as_str()
            .is_some_and(|e| e.contains("fetching"))
    });
}
