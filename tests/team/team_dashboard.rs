//! The team dashboard (`hookd team dashboard`) in real headless Chromium:
//! a real PostgreSQL, a real daemon on `laptop` escalating an ask to the
//! team, the dashboard connected as the approver `alice`. The page shows
//! the fleet row and the pending ask (rule, reason, command); a screenshot
//! is kept in `target/test-artifacts/team-dashboard.png`; Approve is
//! clicked with real mouse events and the waiting forwarder prints the
//! allow. The face's guard holds: no token, a foreign Host, a foreign
//! Origin are refused; a machine's role cannot serve it.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::support::browser;
use crate::support::daemon::{bash, forward_in_background, hookd_bin, permission_decision};
use crate::support::http;
use crate::support::postgres::Postgres;
use crate::support::process::{self, poll_for};
use crate::team_approvals::daemon;
use crate::team_approvals_rls::cluster;
use crate::team_init::{config, hookd, text};

/// `hookd team dashboard` as a child, ended by its pid on drop.
pub(crate) struct Dashboard {
    child: Child,
    /// Its stdout, kept open (a closed pipe would end it at its next line).
    _stdout: BufReader<std::process::ChildStdout>,
    /// The address it printed, with the token in its fragment.
    url: String,
    /// `127.0.0.1:PORT`.
    pub(crate) addr: String,
    pub(crate) token: String,
}

impl Dashboard {
    pub(crate) fn start(pg: &Postgres, config: &Path) -> Dashboard {
        Dashboard::start_with_env(pg, config, &[])
    }

    /// [`Dashboard::start`] with `env` added to its environment.
    pub(crate) fn start_with_env(pg: &Postgres, config: &Path, env: &[(&str, &str)]) -> Dashboard {
        let mut command = Command::new(hookd_bin());
        process::private_home(&mut command, &pg.path().join("client"));
        command.envs(env.iter().copied());
        let mut child = command
            .args(["team", "dashboard", "--listen", "127.0.0.1:0", "--config"])
            .arg(config)
            .env_remove("PGHOST")
            .env_remove("PGUSER")
            .env_remove("PGSERVICE")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut first = String::new();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        stdout.read_line(&mut first).unwrap();
        let url = first.trim().to_string();
        let (base, token) = url
            .split_once("/#token=")
            .unwrap_or_else(|| panic!("the dashboard printed no address: {url:?}"));
        Dashboard {
            addr: base.trim_start_matches("http://").to_string(),
            token: token.to_string(),
            url,
            child,
            _stdout: stdout,
        }
    }

    pub(crate) fn bearer(&self) -> String {
        format!("Bearer {}", self.token)
    }

    pub(crate) fn api(&self, path: &str) -> Value {
        let r = http::get(&self.addr, path, &[("Authorization", &self.bearer())]);
        assert_eq!(r.status, 200, "{path}: {}", r.body);
        serde_json::from_str(&r.body).unwrap()
    }
}

impl Drop for Dashboard {
    fn drop(&mut self) {
        process::kill_process_tree(&mut self.child);
    }
}

#[test]
fn approving_a_team_ask_from_the_dashboard_in_chromium() {
    let Some(chromium) = browser::chromium() else {
        process::skip_or_fail(
            "approving_a_team_ask_from_the_dashboard_in_chromium",
            "needs Chromium, and `chromium` is not on PATH (scripts/test installs Debian's `chromium`)",
        );
        return;
    };
    let Some(pg) = cluster("approving_from_the_dashboard") else {
        return;
    };
    let d = daemon(&pg, 1, "");
    let alice = config(&pg, "alice", "alice", "alice-box");

    // A machine's role cannot serve it: the database would show it only
    // its own rows, and refuse its answers.
    let laptop = config(&pg, "laptop", "laptop", "laptop");
    let out = hookd(
        &pg,
        &["team", "dashboard", "--listen", "127.0.0.1:0"],
        &laptop,
    );
    assert!(!out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("not an approver"), "{}", text(&out));

    // One allowed call first, so a decision is shipped for the search.
    let out = d.forward(&bash("ls -la"), &[]);
    assert_eq!(permission_decision(&out), "allow");

    let dash = Dashboard::start(&pg, &alice);
    let waiting = forward_in_background(
        &d.socket,
        &bash("git push origin main"),
        &["--timeout", "60"],
    );
    let asks = poll_for("the ask on the dashboard", Duration::from_secs(20), || {
        let asks = dash.api("/api/asks");
        (asks.as_array().map(Vec::len) == Some(1)).then_some(asks)
    });
    let short = asks[0]["short_id"].as_str().unwrap().to_string();

    // The guard: no token, a foreign Host, a foreign Origin.
    let r = http::get(&dash.addr, "/api/asks", &[]);
    assert_eq!(r.status, 401, "{}", r.body);
    assert!(r.body.contains("Bearer"), "{}", r.body);
    let r = http::get(
        &dash.addr,
        "/api/asks",
        &[
            ("Authorization", &dash.bearer()),
            ("Host", "evil.example:80"),
        ],
    );
    assert_eq!(r.status, 403, "{}", r.body);
    assert!(r.body.contains("DNS rebinding"), "{}", r.body);
    let r = http::request(
        &dash.addr,
        "POST",
        &format!("/api/asks/{short}/answer"),
        &[
            ("Authorization", &dash.bearer()),
            ("Origin", "http://evil.example"),
            ("Content-Type", "application/json"),
        ],
        br#"{"verdict":"allow"}"#,
    );
    assert_eq!(r.status, 403, "{}", r.body);
    assert!(r.body.contains("evil.example"), "{}", r.body);
    // The page itself carries no data, and needs no token.
    let r = http::get(&dash.addr, "/", &[]);
    assert_eq!(r.status, 200);
    assert!(!r.body.contains("git push"), "{}", r.body);
    assert!(
        r.header("content-security-policy")
            .is_some_and(|c| c.contains("default-src 'none'")),
        "{:?}",
        r.headers
    );

    let mut browser = browser::Browser::start(&chromium);
    browser.navigate(&dash.url);
    let page = poll_for("the page's data", Duration::from_secs(20), || {
        let text = browser.text();
        (text.contains("git push origin main") && text.contains("claude-code: covered"))
            .then_some(text)
    });
    // The fleet row: machine, version, the agent seen, the policy revision.
    assert!(page.contains("laptop"), "{page}");
    assert!(page.contains(env!("CARGO_PKG_VERSION")), "{page}");
    let revision = d.status()["rules"]["revision"]
        .as_str()
        .unwrap()
        .to_string();
    // Shown short, in full in its tooltip.
    let short_revision: String = revision.chars().take("sha256:".len() + 12).collect();
    assert!(page.contains(&short_revision), "{revision} not in {page}");
    let title = browser
        .eval("document.querySelector('#fleet tr[data-machine=laptop] td:nth-child(5)').title");
    assert!(
        title.as_str().is_some_and(|t| t.starts_with(&revision)),
        "{title} / {revision}"
    );
    // The ask: the rule, its reason, the exact command; who answers.
    assert!(page.contains("rule push"), "{page}");
    assert!(page.contains("reason: pushing needs the team"), "{page}");
    assert!(page.contains("answering as alice"), "{page}");
    let artifacts = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-artifacts");
    browser.screenshot(&artifacts.join("team-dashboard.png"));
    assert!(!waiting.is_finished(), "opening the page decided nothing");

    browser.click(&format!("#approve-{short}"));
    let out = waiting.join().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(permission_decision(&out), "allow", "{stdout}");
    let said = poll_for("the page says it", Duration::from_secs(20), || {
        let text = browser.text();
        (text.contains("allow (decided)") && text.contains("no team asks open")).then_some(text)
    });
    assert!(said.contains("Bash on laptop: allow (decided)"), "{said}");
    let decided_by = pg.admin("SELECT array_to_string(decided_by, ',') FROM hookd.asks");
    assert_eq!(decided_by, "alice", "the answer is the approver's");

    // The decisions, searched: by rule and verdict, in the API and the page.
    let found = poll_for(
        "the push's decision shipped",
        Duration::from_secs(20),
        || {
            let rows = dash.api("/api/decisions?rule=push&verdict=allow");
            (rows.as_array().map(Vec::len) == Some(1)).then_some(rows)
        },
    );
    assert_eq!(found[0]["machine"], "laptop", "{found}");
    assert_eq!(found[0]["tool"], "Bash", "{found}");
    let none = dash.api("/api/decisions?rule=push&verdict=deny");
    assert_eq!(none, serde_json::json!([]));
    browser.eval(
        "document.querySelector('input[name=rule]').value = 'ls'; \
         document.querySelector('select[name=verdict]').value = 'allow'; true",
    );
    browser.click("#search-button");
    let rows = poll_for("the search's rows", Duration::from_secs(20), || {
        let rows = browser.eval(
            "Array.from(document.querySelectorAll('#decisions tbody tr')).map(r => r.innerText)",
        );
        let rows: Vec<String> = serde_json::from_value(rows).unwrap();
        (rows.len() == 1 && rows[0].contains("ls")).then_some(rows)
    });
    assert!(
        rows[0].contains("allow") && rows[0].contains("laptop"),
        "{rows:?}"
    );
    browser.screenshot(&artifacts.join("team-dashboard-search.png"));
    drop(browser);
}

/// The JSON routes without a browser: a deny with its reason reaches the
/// agent; a second answer, a verdict that is neither, a wrong token and a
/// listen address other machines could reach are refused, each saying why.
#[test]
fn the_dashboards_answer_route_denies_with_a_reason_and_refuses_plainly() {
    let Some(pg) = cluster("the_dashboards_answer_route") else {
        return;
    };
    let d = daemon(&pg, 1, "");
    let bob = config(&pg, "bob", "bob", "bob-box");

    let out = hookd(&pg, &["team", "dashboard", "--listen", "0.0.0.0:0"], &bob);
    assert!(!out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("--allow-remote"), "{}", text(&out));

    let dash = Dashboard::start(&pg, &bob);
    assert_eq!(dash.api("/api/me")["role"], "bob");
    let fleet = dash.api("/api/fleet");
    assert_eq!(fleet[0]["machine"], "laptop", "{fleet}");
    assert_eq!(fleet[0]["version"], env!("CARGO_PKG_VERSION"), "{fleet}");

    let waiting = forward_in_background(
        &d.socket,
        &bash("git push --force origin main"),
        &["--timeout", "60"],
    );
    let id = poll_for("the ask", Duration::from_secs(20), || {
        let asks = dash.api("/api/asks");
        asks[0]["id"].as_str().map(str::to_string)
    });
    let post = |token: &str, body: &str| {
        http::request(
            &dash.addr,
            "POST",
            &format!("/api/asks/{id}/answer"),
            &[
                ("Authorization", &format!("Bearer {token}")),
                ("Origin", &format!("http://{}", dash.addr)),
                ("Content-Type", "application/json"),
            ],
            body.as_bytes(),
        )
    };
    let r = post("not-the-token", r#"{"verdict":"deny"}"#);
    assert_eq!(r.status, 401, "{}", r.body);
    assert!(r.body.contains("wrong bearer token"), "{}", r.body);
    let r = post(&dash.token, r#"{"verdict":"maybe"}"#);
    assert_eq!(r.status, 400, "{}", r.body);
    let error: Value = serde_json::from_str(&r.body).unwrap();
    assert_eq!(
        error["error"],
        "verdict must be \"allow\" or \"deny\", not \"maybe\""
    );
    assert!(!waiting.is_finished(), "a refused answer decided nothing");

    let r = post(
        &dash.token,
        r#"{"verdict":"deny","reason":"not on a Friday"}"#,
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let answered: Value = serde_json::from_str(&r.body).unwrap();
    assert_eq!(answered["verdict"], "deny", "{answered}");
    let out = waiting.join().unwrap();
    assert_eq!(permission_decision(&out), "deny");
    let reason = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        reason.contains("not on a Friday") && reason.contains("bob"),
        "{reason}"
    );

    let r = post(&dash.token, r#"{"verdict":"allow"}"#);
    assert_eq!(r.status, 409, "{}", r.body);
    assert!(r.body.contains("no longer open"), "{}", r.body);
    let r = dash_get_status(&dash, "/api/decisions?limit=0");
    assert_eq!(r, 400);
}

fn dash_get_status(dash: &Dashboard, path: &str) -> u16 {
    http::get(&dash.addr, path, &[("Authorization", &dash.bearer())]).status
}
