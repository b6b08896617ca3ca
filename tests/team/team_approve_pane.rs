//! The Team pane of `hookd approve --team` in a real terminal (tmux): an
//! approver on another box sees the machine's escalated ask and answers
//! it with a key; the machine's waiting forwarder gets the answer.

use std::ffi::OsStr;
use std::time::Duration;

use crate::support::daemon::{bash, forward_in_background, hookd_bin, permission_decision};
use crate::support::tmux::Tmux;
use crate::team_approvals::{approver, daemon, reason};
use crate::team_approvals_rls::cluster;
use crate::team_init::config;

const WAIT: Duration = Duration::from_secs(20);

/// `hookd approve --team` in tmux, with `config`'s `[team]`, on a box
/// that runs no daemon of its own (the local panes say so; the Team pane
/// works all the same).
fn approver_in_tmux(socket: &std::path::Path, config: &std::path::Path) -> Tmux {
    let env: [(&str, &OsStr); 0] = [];
    let tmux = Tmux::start(
        &hookd_bin(),
        [
            OsStr::new("approve"),
            OsStr::new("--socket"),
            socket.as_os_str(),
            OsStr::new("--team"),
            OsStr::new("--config"),
            config.as_os_str(),
        ],
        &env,
    );
    tmux.wait_for("no team ask is open", WAIT);
    tmux
}

#[test]
fn the_team_pane_shows_an_escalated_ask_and_y_or_n_answers_it() {
    let Some(pg) = cluster("the_team_pane_shows_an_escalated_ask") else {
        return;
    };
    let d = daemon(&pg, 1, "");
    let alice = approver(&pg, "alice");
    let tmux = approver_in_tmux(&pg.path().join("alice-box.sock"), &alice);
    // The machine's own role sees its ask but the database refuses its answer.
    let laptop = config(&pg, "laptop-approver", "laptop", "laptop");
    let machine = approver_in_tmux(&pg.path().join("laptop-box.sock"), &laptop);

    let fwd = forward_in_background(
        &d.socket,
        &bash("git push origin main"),
        &["--timeout", "30"],
    );
    let screen = tmux.wait_until(WAIT, "the whole team ask", |s| {
        s.contains("Team asks (1)")
            && s.contains("claude-code on laptop  rule push")
            && s.contains("allows 0/1")
            && s.contains("reason: pushing needs the team")
            && s.contains("Bash: git push origin main")
    });
    assert!(screen.contains("s left"), "{screen}");
    machine.wait_for("Bash: git push origin main", WAIT);
    machine.send_keys(&["Tab", "y"]);
    machine.wait_for("permission denied for table answers", WAIT);
    assert!(!fwd.is_finished(), "a machine's answer was taken");
    tmux.send_keys(&["Tab"]);
    tmux.wait_for("team ask: y allow", WAIT);
    tmux.send_keys(&["y"]);
    let out = fwd.join().unwrap();
    assert_eq!(permission_decision(&out), "allow", "{}", d.stderr());
    tmux.wait_for("allow (decided)", WAIT);
    tmux.wait_for("no team ask is open", WAIT);

    // n asks for a reason; the agent gets it, with the approver's name.
    let fwd = forward_in_background(
        &d.socket,
        &bash("git push --force origin main"),
        &["--timeout", "30"],
    );
    tmux.wait_for("Bash: git push --force origin main", WAIT);
    tmux.send_keys(&["n"]);
    tmux.wait_for("deny team ask", WAIT);
    tmux.send_keys(&["C-u"]);
    tmux.type_text("not on a Friday");
    tmux.send_keys(&["Enter"]);
    let out = fwd.join().unwrap();
    assert_eq!(permission_decision(&out), "deny", "{}", d.stderr());
    assert!(reason(&out).contains("not on a Friday"), "{}", reason(&out));
    assert!(reason(&out).contains("alice"), "{}", reason(&out));
    tmux.wait_for("deny (decided)", WAIT);
    assert_eq!(d.status()["team"]["team_answers"], 2);
}
