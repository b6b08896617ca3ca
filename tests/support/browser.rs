//! Test support: headless Chromium driven over the DevTools protocol
//! (WebSocket, `tungstenite`): navigate, wait for the load, read the
//! page's text, click an element with real mouse events, screenshot.
//!
//! A test module takes it with `use crate::support::browser;`. Chromium
//! runs on a temp profile and is ended by its pid (SIGTERM, then SIGKILL)
//! and waited for when the [`Browser`] drops.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::process;

use serde_json::{json, Value};
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

/// The Chromium binary, if one is installed.
pub fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|name| {
            std::env::var_os("PATH")?
                .to_str()?
                .split(':')
                .map(|dir| Path::new(dir).join(name))
                .find(|p| p.is_file())
        })
}

/// A headless Chromium with one page attached. Fields drop in order: the
/// connection, then the process (ended by pid), then its profile.
pub struct Browser {
    socket: WebSocket<MaybeTlsStream<TcpStream>>,
    process: Process,
    profile: tempfile::TempDir,
    next_id: u64,
    /// Events received while waiting for replies, oldest first.
    events: Vec<Value>,
}

impl Browser {
    /// Starts Chromium (`binary`) on a temp profile, a phone-sized viewport.
    pub fn start(binary: &Path) -> Browser {
        let profile = tempfile::Builder::new()
            .prefix("hookd-chromium")
            .tempdir()
            .unwrap();
        let mut command = Command::new(binary);
        // Chromium (and the dconf and NSS it loads) keep files in the home
        // directory whatever --user-data-dir says: give it one of its own.
        process::private_home(&mut command, profile.path());
        let child = command
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-dev-shm-usage",
                "--remote-debugging-port=0",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn chromium");
        let mut process = Process(child);
        let port = devtools_port(&mut process, profile.path());
        let page_url = wait_for_page_target(port);
        let (socket, _) = tungstenite::connect(page_url.as_str()).expect("devtools websocket");
        if let MaybeTlsStream::Plain(stream) = socket.get_ref() {
            stream
                .set_read_timeout(Some(Duration::from_secs(30)))
                .unwrap();
        }
        let mut browser = Browser {
            socket,
            process,
            profile,
            next_id: 0,
            events: Vec::new(),
        };
        browser.call("Page.enable", json!({}));
        browser.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": 412, "height": 860, "deviceScaleFactor": 1, "mobile": true}),
        );
        browser
    }

    /// Sends a DevTools command and returns its `result`.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let message = json!({"id": id, "method": method, "params": params});
        self.socket
            .send(Message::text(message.to_string()))
            .expect("devtools send");
        loop {
            let reply = self.read();
            if reply["id"] == id {
                if let Some(error) = reply.get("error") {
                    panic!("{method} failed: {error}");
                }
                return reply["result"].clone();
            }
            if reply.get("method").is_some() {
                self.events.push(reply);
            }
        }
    }

    fn read(&mut self) -> Value {
        loop {
            match self.socket.read().expect("devtools read") {
                Message::Text(text) => return serde_json::from_str(&text).unwrap(),
                Message::Close(_) => panic!("devtools closed the connection"),
                _ => continue,
            }
        }
    }

    /// Waits for event `method` (or finds it among those already received).
    pub fn wait_event(&mut self, method: &str) -> Value {
        if let Some(i) = self.events.iter().position(|e| e["method"] == method) {
            return self.events.remove(i);
        }
        loop {
            let event = self.read();
            if event["method"] == method {
                return event;
            }
            if event.get("method").is_some() {
                self.events.push(event);
            }
        }
    }

    /// Opens `url` and waits for its load event.
    pub fn navigate(&mut self, url: &str) {
        self.events.clear();
        self.call("Page.navigate", json!({"url": url}));
        self.wait_event("Page.loadEventFired");
    }

    /// Evaluates `expression` in the page and returns its value.
    pub fn eval(&mut self, expression: &str) -> Value {
        let result = self.call(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true}),
        );
        if let Some(exception) = result.get("exceptionDetails") {
            panic!("{expression}: {exception}");
        }
        result["result"]["value"].clone()
    }

    /// The page's visible text.
    pub fn text(&mut self) -> String {
        self.eval("document.body.innerText")
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// Clicks the element `selector` names with real mouse events at its
    /// centre, as a finger would; then waits for the page it leads to.
    pub fn click_and_wait_load(&mut self, selector: &str) {
        self.click(selector);
        self.wait_event("Page.loadEventFired");
    }

    /// Clicks the element `selector` names with real mouse events at its
    /// centre (for a button whose script answers in place: no new page).
    pub fn click(&mut self, selector: &str) {
        let centre = self.eval(&format!(
            "(() => {{ const e = document.querySelector({sel}); if (!e) return null; \
             e.scrollIntoView({{block: 'center'}}); const r = e.getBoundingClientRect(); \
             return [r.x + r.width / 2, r.y + r.height / 2]; }})()",
            sel = Value::String(selector.to_string())
        ));
        let (x, y) = match centre.as_array().map(|a| (a[0].as_f64(), a[1].as_f64())) {
            Some((Some(x), Some(y))) => (x, y),
            _ => panic!("no element {selector} on the page: {}", self.text()),
        };
        self.events.clear();
        for kind in ["mouseMoved", "mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
            );
        }
    }

    /// Saves a PNG screenshot of the page to `path`.
    pub fn screenshot(&mut self, path: &Path) {
        let shot = self.call("Page.captureScreenshot", json!({"format": "png"}));
        let png = decode_base64(shot["data"].as_str().expect("screenshot data"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, png).unwrap();
    }
}

/// The Chromium process: ended by its pid (SIGTERM, then SIGKILL) and
/// waited for on drop, also when starting the browser panics half-way.
struct Process(Child);

impl Drop for Process {
    fn drop(&mut self) {
        let pid = self.0.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        if process::wait_with_deadline(&mut self.0, Duration::from_secs(5)).is_some() {
            return;
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The port Chromium wrote to `DevToolsActivePort` in `profile`.
fn devtools_port(process: &mut Process, profile: &Path) -> u16 {
    let file = profile.join("DevToolsActivePort");
    process::poll_for(
        "chromium's DevToolsActivePort",
        Duration::from_secs(30),
        || {
            let text = std::fs::read_to_string(&file).unwrap_or_default();
            if let Some(port) = text.lines().next().and_then(|l| l.parse().ok()) {
                return Some(port);
            }
            if let Ok(Some(status)) = process.0.try_wait() {
                panic!("chromium exited early: {status}");
            }
            None
        },
    )
}

/// The WebSocket URL of Chromium's first page (from `/json/list`).
fn wait_for_page_target(port: u16) -> String {
    process::poll_for(
        "chromium to list a page target",
        Duration::from_secs(30),
        || page_target(port),
    )
}

fn page_target(port: u16) -> Option<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        stream,
        "GET /json/list HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    // Read up to the length the head declares: DevTools' server may keep
    // the connection open whatever the request says.
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    let body = loop {
        let n = stream.read(&mut buf).ok()?;
        if n == 0 {
            return None;
        }
        raw.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&raw).into_owned();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head
                .lines()
                .find_map(|l| {
                    let (name, value) = l.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length")
                        .then(|| value.trim().parse::<usize>().ok())?
                })
                .unwrap_or(0);
            if body.len() >= length {
                break body.to_string();
            }
        }
    };
    let body = body.as_str();
    let targets: Value = serde_json::from_str(body).ok()?;
    targets.as_array()?.iter().find(|t| t["type"] == "page")?["webSocketDebuggerUrl"]
        .as_str()
        .map(str::to_string)
}

/// Standard base64 (what DevTools sends screenshots in).
fn decode_base64(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    };
    let digits: Vec<u8> = text
        .bytes()
        .filter(|c| !c.is_ascii_whitespace() && *c != b'=')
        .map(value)
        .collect();
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    for chunk in digits.chunks(4) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, d)| n | (u32::from(*d) << (18 - 6 * i)));
        for i in 0..chunk.len().saturating_sub(1) {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    out
}
