//! `hookd team …`: the team plane's database (docs/team.md).

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Subcommand;
use serde::Serialize;

use super::output::{print_json, Stdout};
use super::Outcome;

#[derive(Subcommand)]
pub enum Command {
    /// Apply the schema's migrations (each once; running it again applies
    /// nothing) and the group roles `hookd_machine` and `hookd_approver`
    /// with their grants and row-level security. Run it as the database's
    /// owner. `--machine-role`/`--approver-role` also make login roles
    /// members of them; without, it prints the SQL that would.
    Init {
        /// Make this login role a machine (member of hookd_machine); created
        /// when missing (without a password: set one, or use peer/cert auth).
        #[arg(long, value_name = "ROLE")]
        machine_role: Vec<String>,
        /// Make this login role an approver (member of hookd_approver).
        #[arg(long, value_name = "ROLE")]
        approver_role: Vec<String>,
        /// The configuration file whose `[team]` to use
        /// [default: $XDG_CONFIG_HOME/hookd/config.toml].
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Print JSON: {target, applied, roles}.
        #[arg(long)]
        json: bool,
    },
    /// Connect as this machine and print what the database holds: its
    /// version, the migrations applied and pending, the rows this role sees.
    /// Exit 1 when migrations are pending.
    Status {
        /// The configuration file whose `[team]` to use.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// As an approver: list the team asks still open (machine, agent, rule,
    /// reason, tool and input, allows so far, seconds left).
    Pending {
        /// The configuration file whose `[team]` to use (connecting as an
        /// approver's role).
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Print JSON (with --follow: one object per line and change).
        #[arg(long)]
        json: bool,
        /// Go on: print each change as the database announces it (an ask
        /// opened, allowed, no longer open) until Ctrl-C or SIGTERM.
        #[arg(long)]
        follow: bool,
    },
    /// As an approver: serve the team dashboard, a web page showing the
    /// fleet, the open team asks with Approve/Deny, and the recent
    /// decisions searched by machine, agent, rule and verdict. It reads and
    /// answers as this config's `[team]` role (an approver's); requests need
    /// `hookd http token`'s bearer token, which the printed address carries
    /// in its fragment.
    Dashboard {
        /// The address to listen on (`127.0.0.1:0` picks a port).
        #[arg(long, value_name = "ADDR")]
        listen: std::net::SocketAddr,
        /// Listen on an address other machines can reach (no TLS: a
        /// private network only).
        #[arg(long)]
        allow_remote: bool,
        /// The configuration file whose `[team]` (an approver's role),
        /// `[http] token_file` and `[http] max_connections` to use.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
    /// Check that what the database holds for this machine matches the
    /// local event log's hash chain: every line shipped is there once with
    /// the log's chain hash and record, none is missing after the first
    /// shipped line up to the shipping cursor. Exit 1 on a mismatch,
    /// naming the first bad seq.
    Verify {
        /// The configuration file whose `[team]` to use.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// The event log [default: $XDG_STATE_HOME/hookd/events.jsonl].
        #[arg(long, value_name = "PATH")]
        log: Option<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// As an approver: answer a team ask (by its id or short id). The
    /// database decides whether this role may answer and what the answers
    /// add up to (`approvals_required` different approvers; any deny denies).
    Answer {
        /// The ask's id or short id (`hookd team pending`).
        id: String,
        /// `allow` or `deny`.
        #[arg(value_parser = ["allow", "deny"])]
        verdict: String,
        /// Why: shown to the agent with a deny.
        #[arg(long)]
        reason: Option<String>,
        /// The configuration file whose `[team]` to use.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Print JSON: {id, verdict, allows, approvals_required}.
        #[arg(long)]
        json: bool,
    },
}

/// `hookd team …`.
pub fn run(command: Command) -> anyhow::Result<Outcome> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    match command {
        Command::Init {
            machine_role,
            approver_role,
            config,
            json,
        } => runtime.block_on(init(config.as_deref(), &machine_role, &approver_role, json)),
        Command::Status { config, json } => runtime.block_on(status(config.as_deref(), json)),
        Command::Pending {
            config,
            json,
            follow: true,
        } => runtime.block_on(super::team_follow::follow(config.as_deref(), json)),
        Command::Pending { config, json, .. } => {
            runtime.block_on(super::team_approvals::pending(config.as_deref(), json))
        }
        Command::Answer {
            id,
            verdict,
            reason,
            config,
            json,
        } => runtime.block_on(super::team_approvals::answer(
            config.as_deref(),
            &id,
            verdict == "allow",
            reason.as_deref(),
            json,
        )),
        Command::Dashboard {
            listen,
            allow_remote,
            config,
        } => runtime.block_on(dashboard(config.as_deref(), listen, allow_remote)),
        Command::Verify { config, log, json } => {
            runtime.block_on(verify(config.as_deref(), log, json))
        }
    }
}

/// `hookd team dashboard`: prints the page's address (with the token in
/// its fragment) and serves until interrupted.
async fn dashboard(
    config: Option<&Path>,
    listen: std::net::SocketAddr,
    allow_remote: bool,
) -> anyhow::Result<Outcome> {
    let target = target(config)?;
    let token_file = super::http::token_file(config)?;
    let max_connections = super::http::section(config)?.max_connections();
    let dashboard = crate::team_dashboard::prepare(
        target,
        listen,
        token_file.clone(),
        allow_remote,
        max_connections,
    )
    .await?;
    let token = crate::http::token::read(&token_file)?;
    writeln!(Stdout, "{}", dashboard.url(&token))?;
    writeln!(
        Stdout,
        "team dashboard on http://{} as {} ({}); the address above carries the bearer token \
         (`hookd http token`); Ctrl-C ends it",
        dashboard.addr, dashboard.role, dashboard.database
    )?;
    let shutdown = async {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("a SIGTERM handler");
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    };
    dashboard.serve(shutdown).await?;
    Ok(Outcome::Success)
}

/// `[team]` of `config` (or the default config file), resolved.
pub fn target(config: Option<&Path>) -> anyhow::Result<hookd_team::ConnectTarget> {
    let path = match config {
        Some(path) => path.to_path_buf(),
        None => crate::paths::default_config_path()
            .filter(|p| p.exists())
            .context(
                "no config.toml: `hookd team` needs one with a [team] section (docs/team.md)",
            )?,
    };
    let config = crate::config::Config::load(&path)?;
    let team = config
        .team
        .with_context(|| format!("{} has no [team] section (docs/team.md)", path.display()))?;
    Ok(team.resolve()?)
}

/// `hookd team init --json`.
#[derive(Debug, Serialize)]
struct InitReport {
    target: String,
    applied: Vec<String>,
    roles: Vec<String>,
}

/// A role name as a quoted SQL identifier.
fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// The SQL that makes `role` a login member of `group`.
fn grant_sql(role: &str, group: &str) -> String {
    let literal = role.replace('\'', "''");
    format!(
        "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{literal}') THEN \
         CREATE ROLE {0} LOGIN; END IF; END $$; GRANT {group} TO {0};",
        ident(role)
    )
}

async fn init(
    config: Option<&Path>,
    machines: &[String],
    approvers: &[String],
    json: bool,
) -> anyhow::Result<Outcome> {
    let target = target(config)?;
    let mut client = hookd_team::connect::connect(&target)
        .await
        .with_context(|| format!("connecting to {}", target.describe()))?;
    let applied = hookd_team::migrate::migrate(&mut client).await?;
    let mut roles = Vec::new();
    for (names, group) in [(machines, "hookd_machine"), (approvers, "hookd_approver")] {
        for name in names {
            client
                .batch_execute(&grant_sql(name, group))
                .await
                .with_context(|| format!("making {name} a member of {group}"))?;
            roles.push(format!("{name}: {group}"));
        }
    }
    let applied: Vec<String> = applied
        .iter()
        .map(|m| format!("{:04}_{}", m.version, m.name))
        .collect();
    if json {
        print_json(&InitReport {
            target: target.describe(),
            applied,
            roles,
        })?;
        return Ok(Outcome::Success);
    }
    if applied.is_empty() {
        writeln!(Stdout, "{}: the schema is up to date", target.describe())?;
    } else {
        writeln!(
            Stdout,
            "{}: applied {}",
            target.describe(),
            applied.join(", ")
        )?;
    }
    for role in &roles {
        writeln!(Stdout, "role {role}")?;
    }
    if roles.is_empty() {
        writeln!(
            Stdout,
            "\nEach machine connects as its own login role, a member of hookd_machine;\n\
             each approver as one in hookd_approver. As the database owner:\n\n  {}\n  {}\n\n\
             (or `hookd team init --machine-role NAME --approver-role NAME`)",
            grant_sql("alice_laptop", "hookd_machine"),
            grant_sql("security_lead", "hookd_approver"),
        )?;
    }
    Ok(Outcome::Success)
}

async fn status(config: Option<&Path>, json: bool) -> anyhow::Result<Outcome> {
    let target = target(config)?;
    let client = hookd_team::connect::connect(&target)
        .await
        .with_context(|| format!("connecting to {}", target.describe()))?;
    let status = hookd_team::status::status(&client, &target).await?;
    let ok = status.pending.is_empty();
    if json {
        print_json(&status)?;
        return Ok(Outcome::problems_unless(ok));
    }
    let list = |v: &[u32]| {
        if v.is_empty() {
            "none".to_string()
        } else {
            v.iter()
                .map(|n| format!("{n:04}"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    let count = |n: Option<i64>| n.map_or("-".to_string(), |n| n.to_string());
    writeln!(
        Stdout,
        "database   {} (PostgreSQL {})",
        status.target, status.server_version
    )?;
    writeln!(Stdout, "machine    {}", status.machine)?;
    let tls = &status.tls;
    match (&tls.version, &tls.cipher) {
        (Some(version), Some(cipher)) if tls.in_use => writeln!(
            Stdout,
            "tls        {version} {cipher} (sslmode={})",
            tls.sslmode
        )?,
        _ => writeln!(Stdout, "tls        none (sslmode={})", tls.sslmode)?,
    }
    writeln!(
        Stdout,
        "migrations applied: {}; pending: {}",
        list(&status.applied),
        list(&status.pending)
    )?;
    writeln!(Stdout, "fleet rows {}", count(status.fleet_rows))?;
    writeln!(Stdout, "decisions  {}", count(status.decisions))?;
    if !ok {
        writeln!(
            Stdout,
            "run `hookd team init` as the database owner to apply the pending migrations"
        )?;
    }
    Ok(Outcome::problems_unless(ok))
}

async fn verify(
    config: Option<&Path>,
    log: Option<PathBuf>,
    json: bool,
) -> anyhow::Result<Outcome> {
    let target = target(config)?;
    let log = super::args::log_path(log)?;
    let lines = crate::daemon::team_ship::local_lines(&log)
        .with_context(|| format!("reading the event log {}", log.display()))?;
    let client = hookd_team::connect::connect(&target)
        .await
        .with_context(|| format!("connecting to {}", target.describe()))?;
    let report = hookd_team::ship::verify(&client, &target.machine, lines).await?;
    let ok = report.ok();
    if json {
        print_json(&report)?;
        return Ok(Outcome::problems_unless(ok));
    }
    let seq = |s: Option<u64>| s.map_or("-".to_string(), |s| s.to_string());
    writeln!(
        Stdout,
        "machine    {} ({})",
        report.machine,
        target.describe()
    )?;
    writeln!(
        Stdout,
        "log        {} (seq {})",
        log.display(),
        report
            .log_range
            .map_or("-".to_string(), |(a, b)| format!("{a}..{b}"))
    )?;
    writeln!(
        Stdout,
        "shipped    seq {}..{} ({} rows)",
        seq(report.first_shipped),
        seq(report.shipped_through),
        report.rows
    )?;
    writeln!(
        Stdout,
        "matched {}, pending {}, before the first shipped line {}, rotated away here {}",
        report.matched, report.pending, report.before_first_shipped, report.rotated_away
    )?;
    for m in &report.mismatches {
        writeln!(Stdout, "seq {}: {}", m.seq, m.what)?;
    }
    if let Some(first) = report.first_bad() {
        writeln!(
            Stdout,
            "MISMATCH: {} disagreements; the first at seq {first}",
            report.mismatch_count
        )?;
    } else {
        writeln!(Stdout, "ok: the database matches the log")?;
    }
    Ok(Outcome::problems_unless(ok))
}
