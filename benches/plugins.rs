//! What a hook costs OpenCode and Pi through hookd's in-process plugin:
//! per tool call, the plugin's round trip on its one connection, next to a
//! plugin that spawns `hook-forwarder` per call, and next to the agent with
//! no hook at all (an empty handler). The measuring is done inside one
//! Node process (`benches/plugins.mjs`), as the agent pays it; this binary
//! starts the release `hookd serve` on a temporary socket (with the
//! default rules: the bench's `echo` is allowed) and writes the plugin
//! file as `hookd install --agent pi --print` writes it.
//!
//! ```text
//! cargo bench --bench plugins
//! HOOKD_BENCH_ITERS=1000 cargo bench --bench plugins
//! ```
//!
//! Reported, not asserted: machines are noisy. Needs `node` on PATH.

use std::fs::{self, File};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

fn main() {
    if let Err(e) = run() {
        eprintln!("bench plugins: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let hookd = PathBuf::from(env!("CARGO_BIN_EXE_hookd"));
    let forwarder = PathBuf::from(env!("CARGO_BIN_EXE_hook-forwarder"));
    let iters: usize = std::env::var("HOOKD_BENCH_ITERS")
        .ok()
        .map(|v| {
            v.parse()
                .map_err(|_| format!("HOOKD_BENCH_ITERS={v}: not a number"))
        })
        .transpose()?
        .unwrap_or(300);
    let dir = tempfile::Builder::new()
        .prefix("hookd-bench-")
        .tempdir()
        .map_err(|e| e.to_string())?;
    let socket = dir.path().join("hookd.sock");
    let plugin = dir.path().join("hookd-pi.js");
    let print = Command::new(&hookd)
        .args(["install", "--agent", "pi", "--print"])
        .output()
        .map_err(|e| format!("running hookd install --print: {e}"))?;
    if !print.status.success() {
        return Err(String::from_utf8_lossy(&print.stderr).into_owned());
    }
    fs::write(&plugin, &print.stdout).map_err(|e| e.to_string())?;
    let stderr = dir.path().join("hookd.stderr");
    let mut daemon = Command::new(&hookd)
        .arg("serve")
        .arg("--socket")
        .arg(&socket)
        .arg("--log")
        .arg(dir.path().join("events.jsonl"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(File::create(&stderr).map_err(|e| e.to_string())?)
        .spawn()
        .map_err(|e| format!("starting hookd serve: {e}"))?;
    let result = (|| {
        wait_ready(&socket)?;
        measure(&socket, &plugin, &forwarder, iters)
    })();
    let _ = Command::new("kill")
        .args(["-TERM", &daemon.id().to_string()])
        .status();
    let _ = daemon.wait();
    result.map_err(|e| format!("{e}\n{}", fs::read_to_string(&stderr).unwrap_or_default()))
}

fn wait_ready(socket: &Path) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    while UnixStream::connect(socket).is_err() {
        if Instant::now() > deadline {
            return Err("hookd serve did not accept within 10 s".into());
        }
        thread::sleep(Duration::from_millis(5));
    }
    Ok(())
}

fn measure(socket: &Path, plugin: &Path, forwarder: &Path, iters: usize) -> Result<(), String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/plugins.mjs");
    let out = Command::new("node")
        .arg(&script)
        .arg(plugin)
        .arg(forwarder)
        .arg(iters.to_string())
        .env("HOOKD_SOCKET", socket)
        .output()
        .map_err(|e| format!("running node: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "node {}: {}",
            script.display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let report: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|e| format!("reading the report: {e}"))?;
    println!("per tool call, {iters} iterations each (one Node process):");
    for name in ["none", "in-process", "spawn"] {
        let r = &report[name];
        println!(
            "  {name:<11} median {:>8.3} ms   p90 {:>8.3} ms   p99 {:>8.3} ms",
            r["median_ms"].as_f64().unwrap_or(f64::NAN),
            r["p90_ms"].as_f64().unwrap_or(f64::NAN),
            r["p99_ms"].as_f64().unwrap_or(f64::NAN)
        );
    }
    let median = |n: &str| report[n]["median_ms"].as_f64().unwrap_or(f64::NAN);
    println!(
        "  spawn-per-call / in-process: {:.1}x",
        median("spawn") / median("in-process")
    );
    Ok(())
}
