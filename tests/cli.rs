//! The `hookd` command line as a user meets it: bad flag values get a clear
//! error and exit 2, and every command exits quietly when its reader goes
//! away (`hookd … | head -1`).

#[path = "support/daemon.rs"]
mod daemon;

use std::process::{Command, Stdio};

/// `hookd tail --since` with a value that is not an id, a time or an age:
/// exit 2, the flag and the value named, no panic.
#[test]
fn tail_since_refuses_bad_values_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("events.jsonl");
    std::fs::write(&log, "").unwrap();
    for bad in [
        "2026-02-31T00:00:00Z",
        "2026-11-22T02:49:5é",
        "2026-11-22T02:49:54éééééééé",
        "999999999d",
        "99999999999999999999d",
        "yesterday",
    ] {
        let out = Command::new(daemon::hookd_bin())
            .args(["tail", "--log"])
            .arg(&log)
            .args(["--since", bad])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {stderr}");
        assert!(
            stderr.contains("--since") && stderr.contains(bad),
            "{bad:?}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{bad:?}: {stderr}");
    }
    // A good value still works.
    let out = Command::new(daemon::hookd_bin())
        .args(["tail", "--log"])
        .arg(&log)
        .args(["--since", "2026-11-22T10:00:00+02:00"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}
