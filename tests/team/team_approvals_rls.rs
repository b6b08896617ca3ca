//! Migration 0100 (team approvals) against a real PostgreSQL, as each role
//! sees it: row-level security on `hookd.asks` and `hookd.answers`, and
//! the two-person rule worked out by the database's trigger.

use std::process::Output;

use crate::support::postgres::{Postgres, ADMIN, DB};
use crate::team_init::{config, hookd, text};

const A: &str = "11111111-1111-1111-1111-111111111111";
const B: &str = "22222222-2222-2222-2222-222222222222";
const C: &str = "33333333-3333-3333-3333-333333333333";

/// A cluster with the schema applied and the login roles `laptop`, `desk`
/// (machines) and `alice`, `bob` (approvers).
pub(crate) fn cluster(test: &str) -> Option<Postgres> {
    let pg = Postgres::start(test)?;
    let admin = config(&pg, "admin", ADMIN, "admin-box");
    let out = hookd(
        &pg,
        &[
            "team",
            "init",
            "--machine-role",
            "laptop",
            "--machine-role",
            "desk",
            "--approver-role",
            "alice",
            "--approver-role",
            "bob",
        ],
        &admin,
    );
    assert!(out.status.success(), "{}", text(&out));
    Some(pg)
}

/// The database's error for `sql` as `who`, which must be refused.
fn refused(pg: &Postgres, who: &str, sql: &str) -> String {
    let out: Output = pg.try_psql(who, DB, sql);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        !out.status.success(),
        "{who} may: {sql} ({})",
        String::from_utf8_lossy(&out.stdout)
    );
    stderr
}

fn ask(id: &str, machine: &str, approvals: u32) -> String {
    format!(
        "INSERT INTO hookd.asks (id, machine, short_id, deadline, agent, event, rule_ids, approvals_required) \
         VALUES ('{id}', '{machine}', 'bcdfg', now() + interval '1 min', 'claude-code', \
         '{{\"tool\":\"Bash\"}}', '{{push}}', {approvals})"
    )
}

fn answer(id: &str, verdict: &str) -> String {
    format!(
        "INSERT INTO hookd.answers (ask, verdict, reason) VALUES ('{id}', '{verdict}', 'because')"
    )
}

#[test]
fn each_role_does_only_its_part_and_the_database_counts_two_different_approvers() {
    let Some(pg) = cluster("each_role_does_only_its_part") else {
        return;
    };
    let q = |who: &str, sql: &str| pg.psql(who, DB, sql);

    // A machine publishes its own asks; one published as another machine's
    // role is refused (the row's db_role is the connected role).
    q("laptop", &ask(A, "laptop", 2));
    let e = refused(
        &pg,
        "laptop",
        &format!(
            "INSERT INTO hookd.asks (id, machine, db_role, short_id, deadline, agent, event) \
             VALUES ('{B}', 'desk', 'desk', 'x', now(), 'a', '{{}}')"
        ),
    );
    assert!(e.contains("row-level security"), "{e}");
    q("desk", &ask(B, "desk", 1));
    assert_eq!(q("laptop", "SELECT count(*) FROM hookd.asks"), "1");
    assert_eq!(q("alice", "SELECT count(*) FROM hookd.asks"), "2");

    // A machine never answers: not another's ask, not even its own.
    for id in [A, B] {
        let e = refused(&pg, "laptop", &answer(id, "allow"));
        assert!(e.contains("permission denied for table answers"), "{e}");
    }
    let e = refused(
        &pg,
        "laptop",
        &format!("UPDATE hookd.asks SET verdict = 'allow' WHERE id = '{A}'"),
    );
    assert!(e.contains("permission denied"), "{e}");
    // An approver answers as itself only, and never writes the verdict.
    let e = refused(
        &pg,
        "alice",
        &format!(
            "INSERT INTO hookd.answers (ask, approver, verdict) VALUES ('{A}', 'bob', 'allow')"
        ),
    );
    assert!(e.contains("row-level security"), "{e}");
    refused(
        &pg,
        "alice",
        &format!("UPDATE hookd.asks SET verdict = 'allow' WHERE id = '{A}'"),
    );

    // The two-person rule: one allow of two leaves it open; the same
    // approver again is refused; a second approver decides it.
    let verdict = |who: &str, id: &str| {
        q(
            who,
            &format!(
                "SELECT coalesce(verdict, 'open') || ' ' || coalesce(array_to_string(decided_by, ','), '') \
                 FROM hookd.asks WHERE id = '{id}'"
            ),
        )
    };
    q("alice", &answer(A, "allow"));
    assert_eq!(verdict("laptop", A), "open");
    let e = refused(&pg, "alice", &answer(A, "allow"));
    assert!(e.contains("duplicate key"), "{e}");
    assert_eq!(verdict("laptop", A), "open");
    q("bob", &answer(A, "allow"));
    assert_eq!(verdict("laptop", A), "allow alice,bob");
    // Decided: it takes no more answers.
    let e = refused(&pg, "bob", &answer(A, "deny"));
    assert!(e.contains("row-level security"), "{e}");

    // Any deny denies at once, with its reason.
    q(
        "bob",
        &format!("INSERT INTO hookd.answers (ask, verdict, reason) VALUES ('{B}', 'deny', 'not on a Friday')"),
    );
    assert_eq!(
        q(
            "desk",
            &format!("SELECT verdict || ': ' || decided_reason FROM hookd.asks WHERE id = '{B}'")
        ),
        "deny: not on a Friday"
    );
    // A machine reads the answers to its own asks only.
    assert_eq!(q("desk", "SELECT count(*) FROM hookd.answers"), "1");
    assert_eq!(q("laptop", "SELECT count(*) FROM hookd.answers"), "2");

    // An ask the machine closed (answered locally first) takes no answer;
    // a machine may close only its own.
    q("laptop", &ask(C, "laptop", 1));
    assert_eq!(
        q(
            "desk",
            &format!("UPDATE hookd.asks SET closed = 'client:tui' WHERE id = '{C}' RETURNING id")
        ),
        "",
        "another machine's ask is invisible to update"
    );
    q(
        "laptop",
        &format!("UPDATE hookd.asks SET closed = 'client:tui' WHERE id = '{C}'"),
    );
    let e = refused(&pg, "alice", &answer(C, "allow"));
    assert!(e.contains("row-level security"), "{e}");
    // A past deadline takes no answer either.
    q(
        ADMIN,
        &format!("UPDATE hookd.asks SET closed = NULL, deadline = now() - interval '1 s' WHERE id = '{C}'"),
    );
    refused(&pg, "alice", &answer(C, "allow"));
}

/// Two approvers answering the same ask at the same instant: both answers
/// count and the two-person rule decides (migration 0102; 0100's trigger
/// deadlocked here, its lock conflicting with each insert's foreign key).
#[test]
fn two_approvers_answering_at_once_both_count() {
    let Some(pg) = cluster("two_approvers_answering_at_once") else {
        return;
    };
    let target = |role: &str| {
        hookd_team::TeamConfig {
            database: Some(pg.conninfo(role)),
            machine: Some(role.to_string()),
            ..Default::default()
        }
        .resolve()
        .unwrap()
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let laptop = hookd_team::connect::connect(&target("laptop"))
            .await
            .unwrap();
        let alice = hookd_team::connect::connect(&target("alice"))
            .await
            .unwrap();
        let bob = hookd_team::connect::connect(&target("bob")).await.unwrap();
        let ids: Vec<String> = (0..20)
            .map(|i| format!("44444444-4444-4444-4444-{i:012}"))
            .collect();
        for (i, id) in ids.iter().enumerate() {
            let ask = hookd_team::approvals::Ask {
                id: id.clone(),
                machine: "laptop".into(),
                short_id: format!("b{i:04}"),
                remaining: std::time::Duration::from_secs(60),
                agent: "claude-code".into(),
                event: serde_json::json!({"tool": "Bash"}),
                rule_ids: vec!["push".into()],
                reason: None,
                narration: None,
                approvals_required: 2,
            };
            hookd_team::approvals::publish(&laptop, &ask).await.unwrap();
            let (a, b) = tokio::join!(
                hookd_team::approvals::answer(&alice, id, true, None),
                hookd_team::approvals::answer(&bob, id, true, None),
            );
            assert!(a.is_ok() && b.is_ok(), "ask {i}: {a:?} / {b:?}");
        }
        let outcomes = hookd_team::approvals::outcomes(&laptop, &ids)
            .await
            .unwrap();
        assert_eq!(outcomes.len(), ids.len(), "{outcomes:?}");
        for o in outcomes {
            assert!(o.allow, "{o:?}");
            let mut by = o.decided_by.clone();
            by.sort();
            assert_eq!(by, ["alice", "bob"], "{o:?}");
        }
    });
}
