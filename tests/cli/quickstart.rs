//! The README's "See it deny" block, run as it is written: the commands are
//! read out of README.md, so the quick start cannot drift from what works.
//!
//! The block runs in a temp directory whose `target/release/` holds the
//! binaries this test build made, with a `cargo` first on `PATH` that
//! accepts only `cargo build --release` (the build itself is what every
//! other test already did) — everything else is the README's text, run by
//! `sh -eu` with a temp `HOME`, `TMPDIR` and XDG dirs.

use crate::support::daemon;

use std::os::unix::fs::{symlink, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// The heading whose first `sh` block is the quick start.
const HEADING: &str = "### See it deny";

/// The first ```` ```sh ```` block after `heading` in `markdown`.
fn sh_block_after(markdown: &str, heading: &str) -> Option<String> {
    let after = markdown.split_once(&format!("\n{heading}\n"))?.1;
    let body = after.split_once("\n```sh\n")?.1;
    Some(body.split_once("\n```\n")?.0.to_string() + "\n")
}

/// A `cargo` that stands in for the real one: `build --release` is done
/// (the test build made the binaries), anything else is an error.
const CARGO_SHIM: &str = r#"#!/bin/sh
if [ "$*" = "build --release" ]; then exit 0; fi
echo "the quick start's cargo was called as: cargo $*" >&2
exit 1
"#;

/// Sends SIGTERM to a process group when dropped (the test's end, or its
/// panic): nothing the quick start started outlives the test.
struct ProcessGroup(u32);

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        let pgid = libc::pid_t::try_from(self.0).expect("a pid");
        // SAFETY: kill(2) takes no pointers; a group already gone is ESRCH.
        unsafe { libc::kill(-pgid, libc::SIGTERM) };
    }
}

#[test]
fn the_readmes_quick_start_denies_rm_rf_home() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let block = sh_block_after(&readme, HEADING)
        .unwrap_or_else(|| panic!("README.md has no ```sh block after `{HEADING}`"));

    let root = tempfile::tempdir().unwrap();
    let clone = root.path().join("clone");
    let release = clone.join("target/release");
    std::fs::create_dir_all(&release).unwrap();
    symlink(daemon::hookd_bin(), release.join("hookd")).unwrap();
    symlink(daemon::forwarder_bin(), release.join("hook-forwarder")).unwrap();
    let shims = root.path().join("shims");
    std::fs::create_dir_all(&shims).unwrap();
    let cargo = shims.join("cargo");
    std::fs::write(&cargo, CARGO_SHIM).unwrap();
    std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).unwrap();
    let home = root.path().join("home");
    let tmp = root.path().join("tmp");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&tmp).unwrap();
    let path = std::env::join_paths(std::iter::once(shims.clone()).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .unwrap();

    let out_file = root.path().join("stdout");
    let err_file = root.path().join("stderr");
    // Its own process group, so that the daemon it starts in the
    // background is ended with it if the block fails half-way.
    let mut child = Command::new("sh")
        .args(["-eu", "-c", &block])
        .process_group(0)
        .current_dir(&clone)
        .env_clear()
        .env("PATH", path)
        .env("HOME", &home)
        .env("TMPDIR", &tmp)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_STATE_HOME", home.join(".local/state"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_file).unwrap())
        .stderr(std::fs::File::create(&err_file).unwrap())
        .spawn()
        .unwrap();
    let _group = ProcessGroup(child.id());
    let mut status = None;
    daemon::poll_until("the quick start to finish", Duration::from_secs(60), || {
        status = child.try_wait().unwrap();
        status.is_some()
    });
    let stdout = std::fs::read_to_string(&out_file).unwrap();
    let stderr = std::fs::read_to_string(&err_file).unwrap();
    let report = format!("{block}\n--- stdout:\n{stdout}\n--- stderr:\n{stderr}");
    assert!(
        status.unwrap().success(),
        "the quick start failed:\n{report}"
    );

    // The forwarder's answer: the deny the README shows.
    let answer: serde_json::Value = stdout
        .lines()
        .find(|l| l.starts_with('{'))
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("no JSON answer:\n{report}"));
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecision"], "deny",
        "{report}"
    );
    let shown = readme
        .split_once(&format!("\n{HEADING}\n"))
        .and_then(|(_, after)| after.split_once("\n```json\n"))
        .and_then(|(_, body)| body.split_once("\n```\n"))
        .map(|(json, _)| json.trim())
        .unwrap_or_else(|| panic!("README.md shows no answer after `{HEADING}`"));
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(shown).unwrap(),
        answer,
        "the README shows another answer than the forwarder gave"
    );
    // `hookd status` answered, and the daemon was stopped by the block.
    assert!(
        stdout.contains("last decision: deny PreToolUse rm -rf ~"),
        "no status:\n{report}"
    );
    let socket = tmp
        .read_dir()
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
        .join("hookd.sock");
    daemon::poll_until("the demo's daemon to stop", Duration::from_secs(10), || {
        std::os::unix::net::UnixStream::connect(&socket).is_err()
    });
}
