//! Signed policy bundles in the real daemon: a `.tar.gz` served over
//! loopback HTTP (a std `TcpListener` thread, counting requests and 304s),
//! its manifest signed in the test with a minisign key made for it.
//! Activation, the 304 on the ETag, a bad signature and a corrupt archive
//! refused with the last good bundle kept, and a restart with the server
//! down starting from the persisted last good bundle. Then, for both forms
//! (a directory and a `.tar.gz`), a bundle verified as a whole: a file
//! removed, added or changed after the manifest was signed, and a bundle
//! without a signed manifest, are each refused.

use crate::support::daemon;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use daemon::{bash, permission_decision, rule_toml, Daemon, DaemonOptions};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// What the test server serves, and what it saw.
#[derive(Default)]
struct Served {
    archive: Vec<u8>,
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

    fn set(&self, archive: Vec<u8>) {
        let mut served = self.served.lock().unwrap();
        served.etag = format!("\"{}\"", archive.len() + served.etag.len());
        served.archive = archive;
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

/// A bundle's files, by name (`manifest.toml`, `rules/x.toml`, …).
type Files = Vec<(String, Vec<u8>)>;

/// A `.tar.gz` of `files`.
fn archive(files: &Files) -> Vec<u8> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    for (name, bytes) in files {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        tar.append_data(&mut header, name, bytes.as_slice())
            .unwrap();
    }
    tar.into_inner().unwrap().finish().unwrap()
}

/// A bundle as a publisher makes it: `rules` (name, text), a
/// `manifest.toml` listing each with its SHA-256 (and `revision`), and
/// `manifest.toml.minisig`, the manifest signed with `keys`.
fn signed_bundle(keys: &minisign::KeyPair, revision: &str, rules: &[(&str, String)]) -> Files {
    let mut manifest = format!("revision = {revision:?}\n\n[files]\n");
    for (name, text) in rules {
        let digest: String = Sha256::digest(text.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        manifest.push_str(&format!("{name:?} = {digest:?}\n"));
    }
    let mut files: Files = rules
        .iter()
        .map(|(name, text)| (name.to_string(), text.clone().into_bytes()))
        .collect();
    files.push((
        "manifest.toml.minisig".into(),
        sign(keys, manifest.as_bytes()).into_bytes(),
    ));
    files.push(("manifest.toml".into(), manifest.into_bytes()));
    files
}

/// `files` without `name`, or with `name`'s bytes given by `change`.
fn edited(files: &Files, name: &str, change: impl Fn(&[u8]) -> Option<Vec<u8>>) -> Files {
    files
        .iter()
        .filter_map(|(n, bytes)| match n == name {
            true => change(bytes).map(|bytes| (n.clone(), bytes)),
            false => Some((n.clone(), bytes.clone())),
        })
        .collect()
}

/// `files` and one more.
fn with(files: &Files, name: &str, text: &str) -> Files {
    let mut files = files.clone();
    files.push((name.to_string(), text.as_bytes().to_vec()));
    files
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

fn daemon(bundle: &str, keys: &minisign::KeyPair, state: &Path) -> Daemon {
    Daemon::start_with(DaemonOptions {
        rules: Some(String::new()),
        config: Some(format!(
            "[policy]\nsources = [{{ bundle = {bundle:?}, name = \"team\", enforced = true, public_key = {:?}, interval = 1 }}]\n",
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
    let good = archive(&with(
        &signed_bundle(
            &keys,
            "2026.11.1",
            &[(
                "rules/10-net.toml",
                rule_toml("no-curl", "deny", "Bash(curl *)"),
            )],
        ),
        "README.md",
        "not in rules/: ignored",
    ));
    server.set(good);
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
    daemon::poll_reporting("a 304", Duration::from_secs(10), || {
        let counts = server.counts();
        if counts.1 > 0 {
            return Ok(());
        }
        Err(format!("{counts:?}"))
    });
    assert_eq!(
        d.status()["rules"]["generation"],
        generation,
        "a 304 reloads nothing"
    );

    // Signed with another key: refused, the last good one stays.
    let loosened = archive(&signed_bundle(
        &other_keys,
        "2026.11.2",
        &[(
            "rules/10-net.toml",
            rule_toml("curl-ok", "allow", "Bash(curl *)"),
        )],
    ));
    server.set(loosened);
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
    server.set(b"this is not a gzip stream".to_vec());
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

/// The two forms a bundle at a path takes.
#[derive(Clone, Copy)]
enum Form {
    Directory,
    Archive,
}

/// Makes `at` hold `files` in `form`: a directory edited in place (as a
/// checkout is), or a `.tar.gz` renamed into place.
fn publish(form: Form, at: &Path, files: &Files) {
    match form {
        Form::Directory => {
            std::fs::create_dir_all(at.join("rules")).unwrap();
            for entry in std::fs::read_dir(at.join("rules")).unwrap() {
                let path = entry.unwrap().path();
                let name = format!("rules/{}", path.file_name().unwrap().to_string_lossy());
                if !files.iter().any(|(n, _)| *n == name) {
                    std::fs::remove_file(path).unwrap();
                }
            }
            for name in ["manifest.toml", "manifest.toml.minisig"] {
                if !files.iter().any(|(n, _)| n == name) {
                    let _ = std::fs::remove_file(at.join(name));
                }
            }
            for (name, bytes) in files {
                std::fs::write(at.join(name), bytes).unwrap();
            }
        }
        Form::Archive => {
            let staged = at.with_extension("staged");
            std::fs::write(&staged, archive(files)).unwrap();
            std::fs::rename(staged, at).unwrap();
        }
    }
}

/// A bundle at a path, in `form`: a file removed, added or changed after
/// its manifest was signed is refused (the error in `status`), and the
/// last good bundle keeps judging; so is a bundle without a signed
/// manifest.
fn a_bundle_is_verified_as_a_whole(form: Form) {
    let keys = minisign::KeyPair::generate_unencrypted_keypair().unwrap();
    let root = tempfile::tempdir().unwrap();
    let at = root.path().join(match form {
        Form::Directory => "team",
        Form::Archive => "team.tar.gz",
    });
    let good = signed_bundle(
        &keys,
        "2026.11.1",
        &[
            (
                "rules/10-curl.toml",
                rule_toml("no-curl", "deny", "Bash(curl *)"),
            ),
            (
                "rules/20-wget.toml",
                rule_toml("no-wget", "deny", "Bash(wget *)"),
            ),
        ],
    );
    publish(form, &at, &good);
    let d = daemon(at.to_str().unwrap(), &keys, &root.path().join("state"));
    d.wait_for_status("the good bundle is activated", |s| {
        s["rules"]["layers"][0]["rules"] == 2 && bundle_status(s)["error"].is_null()
    });
    let both_denied = |after: &str| {
        for command in ["curl example.com", "wget example.com"] {
            assert_eq!(
                permission_decision(&d.forward(&bash(command), &[])),
                "deny",
                "{command} after {after}"
            );
        }
    };
    both_denied("activation");

    let refused = |what: &str, bundle: Files, says: &[&str]| {
        publish(form, &at, &good);
        d.wait_for_status("the good bundle again", |s| {
            bundle_status(s)["error"].is_null()
        });
        publish(form, &at, &bundle);
        d.wait_for_status(what, |s| {
            bundle_status(s)["error"]
                .as_str()
                .is_some_and(|e| says.iter().all(|part| e.contains(part)))
        });
        both_denied(what);
    };
    refused(
        "a removed file refuses the bundle",
        edited(&good, "rules/20-wget.toml", |_| None),
        &[
            "rules/20-wget.toml",
            "listed in manifest.toml but not in the bundle",
        ],
    );
    refused(
        "an unlisted file refuses the bundle",
        with(
            &good,
            "rules/30-shell.toml",
            &rule_toml("shell-ok", "allow", "Bash"),
        ),
        &["rules/30-shell.toml", "not listed in manifest.toml"],
    );
    refused(
        "a changed byte refuses the bundle",
        edited(&good, "rules/10-curl.toml", |bytes| {
            Some(
                String::from_utf8_lossy(bytes)
                    .replace("curl *", "curL *")
                    .into_bytes(),
            )
        }),
        &["rules/10-curl.toml", "SHA-256"],
    );
    refused(
        "a manifest signed by another key refuses the bundle",
        edited(&good, "manifest.toml.minisig", |_| {
            let other = minisign::KeyPair::generate_unencrypted_keypair().unwrap();
            let manifest = &good.iter().find(|(n, _)| n == "manifest.toml").unwrap().1;
            Some(sign(&other, manifest).into_bytes())
        }),
        &["manifest.toml", "does not verify"],
    );
    // A bundle of before whole-bundle signing: no manifest listing its
    // files, and no signature over one.
    refused(
        "a bundle without a signed manifest is refused, saying what to do",
        edited(&good, "manifest.toml.minisig", |_| None),
        &["no manifest.toml.minisig", "minisign -Sm manifest.toml"],
    );
}

#[test]
fn a_directory_bundle_is_verified_as_a_whole() {
    a_bundle_is_verified_as_a_whole(Form::Directory);
}

#[test]
fn an_archive_bundle_is_verified_as_a_whole() {
    a_bundle_is_verified_as_a_whole(Form::Archive);
}

#[test]
fn hookd_rules_manifest_makes_the_manifest_the_daemon_verifies() {
    let keys = minisign::KeyPair::generate_unencrypted_keypair().unwrap();
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("team");
    std::fs::create_dir_all(dir.join("rules")).unwrap();
    std::fs::write(
        dir.join("rules/10-curl.toml"),
        rule_toml("no-curl", "deny", "Bash(curl *)"),
    )
    .unwrap();
    let manifest = |dir: &Path| {
        std::process::Command::new(daemon::hookd_bin())
            .args(["rules", "manifest", "--revision", "2026.11.3"])
            .arg(dir)
            .output()
            .unwrap()
    };

    // What the daemon would refuse as unlisted is refused here too.
    std::fs::write(dir.join("rules/notes.md"), "not a rules file").unwrap();
    let out = manifest(&dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("rules/notes.md: a bundle's rules/ holds only <name>.toml files"),
        "{stderr}"
    );
    std::fs::remove_file(dir.join("rules/notes.md")).unwrap();

    let out = manifest(&dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::write(dir.join("manifest.toml"), &out.stdout).unwrap();
    std::fs::write(dir.join("manifest.toml.minisig"), sign(&keys, &out.stdout)).unwrap();
    let d = daemon(dir.to_str().unwrap(), &keys, &root.path().join("state"));
    let s = d.wait_for_status("the bundle is activated", |s| {
        s["rules"]["layers"][0]["rules"] == 1
    });
    assert_eq!(bundle_status(&s)["revision"], "2026.11.3", "{s:#}");
    assert_eq!(
        permission_decision(&d.forward(&bash("curl example.com"), &[])),
        "deny"
    );
}
