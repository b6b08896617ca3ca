//! `hookd approve --plain --team`: line mode lists the team asks open in
//! the database beside the local pending items and answers both with the
//! same lines. Alice's box runs a daemon of its own (a local ask); the
//! machine `laptop` escalates an ask to the team; alice answers both from
//! one line-mode approver, through pipes. A machine's role trying the
//! same is refused by the database, and the refusal is printed plainly.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::support::daemon::{
    bash, forward_in_background, hookd_bin, permission_decision, Daemon, DaemonOptions,
};
use crate::support::plain::Plain;
use crate::support::postgres::Postgres;
use crate::support::process::{self, poll_until};
use crate::team_approvals::{approver, daemon, reason};
use crate::team_approvals_rls::cluster;
use crate::team_init::config;

/// `hookd approve --plain --team` on `socket` with `config`'s `[team]`,
/// once it has printed its usage line.
fn plain_approver(pg: &Postgres, socket: &Path, config: &Path) -> Plain {
    plain_approver_with_env(pg, socket, config, &[])
}

/// [`plain_approver`] with `env` set too.
pub fn plain_approver_with_env(
    pg: &Postgres,
    socket: &Path,
    config: &Path,
    env: &[(&str, &str)],
) -> Plain {
    let mut command = Command::new(hookd_bin());
    process::private_home(&mut command, &pg.path().join("client"));
    command
        .args(["approve", "--plain", "--socket"])
        .arg(socket)
        .args(["--team", "--config"])
        .arg(config)
        .env_remove("PGHOST")
        .env_remove("PGUSER")
        .env_remove("PGSERVICE")
        .envs(env.iter().copied());
    let plain = Plain::spawn(&mut command);
    plain.expect("hookd approve: answer with `y|n|s|a|N ID [reason]`");
    plain
}

/// The short id of a `team ask SHORT  …` or `pending SHORT  …` line.
fn short_id(line: &str, prefix: &str) -> String {
    line.strip_prefix(prefix)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("not a `{prefix}` line: {line}"))
        .to_string()
}

#[test]
fn plain_mode_answers_team_asks_beside_local_ones_and_a_machine_role_is_refused() {
    let Some(pg) = cluster("plain_mode_answers_team_asks") else {
        return;
    };
    let laptop = daemon(&pg, 1, "");
    // Alice's own box: a daemon whose rule asks about `npm test` locally.
    let own = Daemon::start_with(DaemonOptions {
        rules: Some(
            "[[rule]]\nid = \"npm\"\naction = \"ask\"\ntool = \"Bash(npm test *)\"\n\
             reason = \"npm runs package scripts\"\n"
                .to_string(),
        ),
        ..Default::default()
    });
    let alice = approver(&pg, "alice");
    let mut plain = plain_approver(&pg, &own.socket, &alice);
    poll_until(
        "alice's approver subscribed",
        Duration::from_secs(15),
        || own.counter("subscribers") >= 1,
    );
    // The machine's own role, on a box with no daemon: it sees its ask,
    // but the database refuses its answer.
    let machine_config = config(&pg, "laptop-approver", "laptop", "laptop");
    let mut machine = plain_approver(&pg, &pg.path().join("laptop-box.sock"), &machine_config);
    machine.expect("hookd is down at");

    let team_ask = forward_in_background(
        &laptop.socket,
        &bash("git push origin main"),
        &["--timeout", "30"],
    );
    let local_ask = forward_in_background(&own.socket, &bash("npm test -- --watch"), &[]);

    // Both printed whole, each once: the local item and the team ask.
    let lines = plain.expect_lines("answer with `y ");
    let said = lines.join("\n");
    let team_line = lines
        .iter()
        .find(|l| l.starts_with("team ask "))
        .unwrap_or_else(|| panic!("{said}"));
    let team = short_id(team_line, "team ask ");
    assert!(
        team_line.contains("  claude-code on laptop  rule push  "),
        "{said}"
    );
    assert!(team_line.contains("allows 0/1"), "{said}");
    assert!(said.contains("  Bash: git push origin main"), "{said}");
    assert!(said.contains("  reason: pushing needs the team"), "{said}");
    let local_line = if said.contains("\npending ") || said.starts_with("pending ") {
        lines
            .iter()
            .find(|l| l.starts_with("pending "))
            .unwrap()
            .clone()
    } else {
        plain.expect("pending ")
    };
    let local = short_id(&local_line, "pending ");
    assert_ne!(local, team);

    // The machine's role: refused by the database, said on one line, and
    // the ask still waits.
    machine.expect(&format!("team ask {team}"));
    machine.say(&format!("y {team}"));
    let refused = machine.expect("error: team ask");
    assert!(
        refused.contains(&format!(
            "error: team ask {team}: the database refused the answer"
        )) && refused.contains("permission denied for table answers"),
        "{refused}"
    );
    assert!(!team_ask.is_finished(), "a machine's answer was taken");

    // Lines that name nothing or take what a team ask cannot.
    plain.say(&format!("s {team}"));
    plain.expect(&format!(
        "error: team ask {team} takes y (allow) or n (deny, with a reason) only"
    ));
    plain.say(&format!("y {team} because"));
    plain.expect(&format!(
        "error: only n takes a reason; `y {team}` was not sent"
    ));
    plain.say("y zzzzz");
    let nothing = plain.expect("error: nothing pending is called `zzzzz`");
    assert!(
        nothing.contains(&format!("pending now: {local}; team asks open: {team}")),
        "{nothing}"
    );

    // The same keys answer both: the team's through the database.
    plain.say(&format!("y {team}"));
    plain.expect(&format!("ok: team ask {team}: allow (decided)"));
    let out = team_ask.join().unwrap();
    assert_eq!(permission_decision(&out), "allow", "{}", laptop.stderr());
    plain.expect(&format!("team ask {team}: no longer open"));
    machine.expect(&format!("team ask {team}: no longer open"));
    plain.say(&format!("y {local}"));
    plain.expect(&format!("ok: allow {local}"));
    let out = local_ask.join().unwrap();
    assert_eq!(permission_decision(&out), "allow", "{}", own.stderr());

    // n with a reason: the agent gets it, with the approver's name.
    let team_ask = forward_in_background(
        &laptop.socket,
        &bash("git push --force origin main"),
        &["--timeout", "30"],
    );
    let line = plain.expect("team ask ");
    let team = short_id(&line, "team ask ");
    plain.expect("  Bash: git push --force origin main");
    plain.say(&format!("n {team} not on a Friday"));
    plain.expect(&format!("ok: team ask {team}: deny (decided)"));
    let out = team_ask.join().unwrap();
    assert_eq!(permission_decision(&out), "deny", "{}", laptop.stderr());
    assert!(reason(&out).contains("not on a Friday"), "{}", reason(&out));
    assert!(reason(&out).contains("alice"), "{}", reason(&out));
    assert_eq!(laptop.status()["team"]["team_answers"], 2);
}

/// The team database going away: line mode says so once, goes on reading
/// and answering lines meanwhile, and says when it answers again.
#[test]
fn plain_mode_says_once_that_the_team_database_is_away_and_when_it_is_back() {
    let Some(mut pg) = cluster("plain_mode_team_database_away") else {
        return;
    };
    let alice = approver(&pg, "alice");
    let mut plain = plain_approver(&pg, &pg.path().join("alice-box.sock"), &alice);
    plain.expect("hookd is down at");
    plain.say("y zzzzz");
    plain.expect(
        "error: nothing pending is called `zzzzz` (nothing is pending); no team ask is open",
    );

    pg.stop();
    let said = plain.expect("team: ");
    assert!(
        said.contains("team database") || said.contains("connecting to"),
        "{said}"
    );
    // Several failed reads (one a second) later, still one line, and
    // lines are read and answered all the while.
    std::thread::sleep(Duration::from_secs(3));
    plain.say("y zzzzz");
    let lines = plain.expect_lines("error: nothing pending is called `zzzzz`");
    assert!(
        !lines.iter().any(|l| l.starts_with("team: ")),
        "said once per streak: {lines:?}"
    );

    pg.start_server();
    plain.expect("team: the team database answers again");
}
