//! The daemon's Prometheus metrics: a registry the hook path feeds with
//! atomics only, and the text exposition format (version 0.0.4) that
//! `GET /metrics` serves.
//!
//! Decisions are counted by event, verdict and source in one fixed table
//! of counters (every label takes its values from a closed set: the event
//! kinds of `HookEventKind`, the five verdicts, the kinds of
//! [`Source`]; a client's or a grant's name is not a label, so the series
//! cannot grow without bound). Recording a decision is a few relaxed
//! atomic adds: no lock, no allocation, nothing held across an await.
//! Everything else (pending, clients, subscribers, lagged drops, the log's
//! counters) is read from the daemon's existing counters when Prometheus
//! scrapes, through [`crate::protocol::Status`], the same numbers
//! `hookd status` prints.
//!
//! Hand-written rather than the `prometheus-client` crate: its label
//! families are a map behind a lock, where a table of atomics indexed by
//! closed enums is lock-free on the hook path; and the text format for
//! counters, gauges and one histogram is a page of code with no label
//! escaping to get wrong (every label value is a constant).

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::agent::claude::HookEventKind;
use crate::decision::{Decision, Source, Verdict};
use crate::protocol::{Counters, RunDone, Status};

/// The `Content-Type` of [`render`]'s text.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The source label of each [`Source`] kind, in index order.
const SOURCES: [&str; 10] = [
    "rule", "client", "timeout", "fallback", "default", "copy", "probe", "terminal", "grant",
    "unknown",
];

fn source_index(source: &Source) -> usize {
    match source {
        Source::Rule => 0,
        Source::Client(_) => 1,
        Source::Timeout => 2,
        Source::Fallback => 3,
        Source::Default => 4,
        Source::Copy => 5,
        Source::Probe => 6,
        Source::Terminal => 7,
        Source::Grant(_) => 8,
        Source::Unknown(_) => 9,
    }
}

fn verdict_index(verdict: Verdict) -> usize {
    Verdict::ALL
        .iter()
        .position(|v| *v == verdict)
        .expect("ALL lists every verdict")
}

/// Event kinds: the known ones, then `Unknown`.
fn kind_count() -> usize {
    HookEventKind::ALL.len() + 1
}

fn kind_index(kind: HookEventKind) -> usize {
    HookEventKind::ALL
        .iter()
        .position(|k| *k == kind)
        .unwrap_or(HookEventKind::ALL.len())
}

fn kind_label(index: usize) -> &'static str {
    HookEventKind::ALL
        .get(index)
        .map_or(HookEventKind::Unknown.as_str(), |k| k.as_str())
}

/// Upper bounds of the decision latency histogram, in microseconds: from
/// a rule's answer (tens of µs) to a person's (seconds to minutes).
const LATENCY_BOUNDS_US: [u64; 16] = [
    100,
    250,
    500,
    1_000,
    2_500,
    5_000,
    10_000,
    25_000,
    50_000,
    100_000,
    250_000,
    1_000_000,
    5_000_000,
    30_000_000,
    120_000_000,
    600_000_000,
];

/// The counters only the hook path and the run supervisor know; see the
/// module's doc.
#[derive(Debug)]
pub struct Metrics {
    /// Decisions, indexed `(kind × verdicts + verdict) × sources + source`.
    decisions: Box<[AtomicU64]>,
    /// Decisions per latency bucket (not cumulative; the last is `+Inf`).
    latency_buckets: [AtomicU64; LATENCY_BOUNDS_US.len() + 1],
    latency_sum_us: AtomicU64,
    runs_ok: AtomicU64,
    runs_failed: AtomicU64,
    /// Summed `total_cost_usd` of ended runs, in millionths of a dollar
    /// (an integer, so it adds atomically).
    run_cost_micro_usd: AtomicU64,
    run_turns: AtomicU64,
}

impl Default for Metrics {
    fn default() -> Metrics {
        let cells = kind_count() * Verdict::ALL.len() * SOURCES.len();
        Metrics {
            decisions: (0..cells).map(|_| AtomicU64::new(0)).collect(),
            latency_buckets: std::array::from_fn(|_| AtomicU64::new(0)),
            latency_sum_us: AtomicU64::new(0),
            runs_ok: AtomicU64::new(0),
            runs_failed: AtomicU64::new(0),
            run_cost_micro_usd: AtomicU64::new(0),
            run_turns: AtomicU64::new(0),
        }
    }
}

impl Metrics {
    /// Counts `decision`, sent for an event of `kind`: the one call on the
    /// hook path, where the decision is logged.
    pub fn record_decision(&self, kind: HookEventKind, decision: &Decision) {
        let cell = (kind_index(kind) * Verdict::ALL.len() + verdict_index(decision.answer.verdict))
            * SOURCES.len()
            + source_index(&decision.source);
        self.decisions[cell].fetch_add(1, Ordering::Relaxed);
        let bucket = LATENCY_BOUNDS_US
            .iter()
            .position(|bound| decision.latency_us <= *bound)
            .unwrap_or(LATENCY_BOUNDS_US.len());
        self.latency_buckets[bucket].fetch_add(1, Ordering::Relaxed);
        self.latency_sum_us
            .fetch_add(decision.latency_us, Ordering::Relaxed);
    }

    /// Counts an ended run and its cost: the one call in the run supervisor.
    pub fn record_run(&self, done: &RunDone) {
        match done.ok {
            true => &self.runs_ok,
            false => &self.runs_failed,
        }
        .fetch_add(1, Ordering::Relaxed);
        if let Some(cost) = done.cost_usd.filter(|c| c.is_finite() && *c > 0.0) {
            self.run_cost_micro_usd
                .fetch_add((cost * 1e6).round() as u64, Ordering::Relaxed);
        }
        self.run_turns
            .fetch_add(done.num_turns.unwrap_or(0), Ordering::Relaxed);
    }

    fn decisions_of(&self, kind: usize, verdict: usize, source: usize) -> u64 {
        self.decisions[(kind * Verdict::ALL.len() + verdict) * SOURCES.len() + source]
            .load(Ordering::Relaxed)
    }
}

/// Microseconds as Prometheus' seconds.
fn seconds(us: u64) -> f64 {
    us as f64 / 1e6
}

/// The text exposition of `metrics` and of the daemon's `status`: each of
/// `FAMILIES` in turn, its `# HELP` and `# TYPE` lines, then its samples.
///
/// Decision series appear once they are non-zero (most of the table's
/// combinations never happen); every other metric is always present.
pub fn render(metrics: &Metrics, status: &Status) -> String {
    let scrape = Scrape { metrics, status };
    let mut out = String::with_capacity(8 * 1024);
    for family in FAMILIES {
        let _ = writeln!(out, "# HELP {} {}", family.name, family.help);
        let _ = writeln!(out, "# TYPE {} {}", family.name, family.kind);
        match family.samples {
            Samples::One(value) => {
                let _ = writeln!(out, "{} {}", family.name, value(&scrape));
            }
            Samples::Series(write) => write(family.name, &scrape, &mut out),
        }
    }
    out
}

/// What one scrape reads: the hook path's table and the daemon's status.
struct Scrape<'a> {
    metrics: &'a Metrics,
    status: &'a Status,
}

impl Scrape<'_> {
    /// The status counters `hookd status` prints too.
    fn counters(&self) -> &Counters {
        &self.status.counters
    }

    /// Decisions recorded with `source`'s kind, whatever their event and
    /// verdict.
    fn decisions_by(&self, source: &Source) -> u64 {
        let s = source_index(source);
        (0..kind_count())
            .flat_map(|kind| (0..Verdict::ALL.len()).map(move |v| (kind, v)))
            .map(|(kind, v)| self.metrics.decisions_of(kind, v, s))
            .sum()
    }
}

/// One metric family, as Prometheus reads it: name, type, help, samples.
struct Family {
    name: &'static str,
    /// `counter`, `gauge` or `histogram`.
    kind: &'static str,
    help: &'static str,
    samples: Samples,
}

/// How a family's sample lines are written.
enum Samples {
    /// One unlabelled sample: `name value`.
    One(fn(&Scrape) -> Number),
    /// Labelled samples or a histogram's series, written after the header
    /// by the function (given the family's name).
    Series(fn(&str, &Scrape, &mut String)),
}

/// A sample's value: a count, or a real number (seconds, dollars).
enum Number {
    Count(u64),
    Real(f64),
}

impl std::fmt::Display for Number {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Number::Count(n) => n.fmt(f),
            Number::Real(x) => x.fmt(f),
        }
    }
}

/// Every metric, in the order of the exposition.
const FAMILIES: &[Family] = &[
    Family {
        name: "hookd_events_total",
        kind: "counter",
        help: "Hooks received.",
        samples: Samples::One(|s| Number::Count(s.counters().events)),
    },
    Family {
        name: "hookd_decisions_total",
        kind: "counter",
        help: "Decisions sent, by event, verdict and source (a client's or grant's name is not a label).",
        samples: Samples::Series(write_decisions),
    },
    Family {
        name: "hookd_fallbacks_total",
        kind: "counter",
        help: "Decisions that were the event's fallback, by reason: timeout, no_decision (nobody decided, the run or daemon ended, unreadable input), internal_error (the answering task panicked).",
        samples: Samples::Series(write_fallbacks),
    },
    Family {
        name: "hookd_timeouts_total",
        kind: "counter",
        help: "Pending events that reached their timeout or deadline.",
        samples: Samples::One(|s| Number::Count(s.counters().timeouts)),
    },
    Family {
        name: "hookd_pending",
        kind: "gauge",
        help: "Events waiting for a client's decision now.",
        samples: Samples::One(|s| Number::Count(s.counters().pending)),
    },
    Family {
        name: "hookd_hooks_in_flight",
        kind: "gauge",
        help: "Hooks being answered now.",
        samples: Samples::One(|s| Number::Count(s.counters().hooks_in_flight)),
    },
    Family {
        name: "hookd_connections",
        kind: "gauge",
        help: "Open socket connections (forwarders and clients).",
        samples: Samples::One(|s| Number::Count(s.counters().connections)),
    },
    Family {
        name: "hookd_subscribers",
        kind: "gauge",
        help: "Clients subscribed to events now.",
        samples: Samples::One(|s| Number::Count(s.counters().subscribers)),
    },
    Family {
        name: "hookd_subscriber_lagged_dropped_total",
        kind: "counter",
        help: "Frames dropped because a subscriber's queue was full.",
        samples: Samples::One(|s| Number::Count(s.counters().lagged_dropped)),
    },
    Family {
        name: "hookd_refused_peers_total",
        kind: "counter",
        help: "Peers refused for running as another user.",
        samples: Samples::One(|s| Number::Count(s.counters().refused_peers)),
    },
    Family {
        name: "hookd_shed_peers_total",
        kind: "counter",
        help: "Idle peers closed to make room.",
        samples: Samples::One(|s| Number::Count(s.counters().shed_peers)),
    },
    Family {
        name: "hookd_grants",
        kind: "gauge",
        help: "Session grants in force.",
        samples: Samples::One(|s| Number::Count(s.counters().grants)),
    },
    Family {
        name: "hookd_panics_total",
        kind: "counter",
        help: "Panics in the daemon's tasks and threads.",
        samples: Samples::One(|s| Number::Count(s.counters().panics)),
    },
    Family {
        name: "hookd_log_written_total",
        kind: "counter",
        help: "Event log lines written.",
        samples: Samples::One(|s| Number::Count(s.counters().log_written)),
    },
    Family {
        name: "hookd_log_dropped_total",
        kind: "counter",
        help: "Event log lines dropped because the writer's queue was full.",
        samples: Samples::One(|s| Number::Count(s.counters().log_dropped)),
    },
    Family {
        name: "hookd_log_errors_total",
        kind: "counter",
        help: "Event log write errors.",
        samples: Samples::One(|s| Number::Count(s.counters().log_errors)),
    },
    Family {
        name: "hookd_log_rotations_total",
        kind: "counter",
        help: "Event log rotations.",
        samples: Samples::One(|s| Number::Count(s.counters().log_rotations)),
    },
    Family {
        name: "hookd_decision_latency_seconds",
        kind: "histogram",
        help: "Time from a hook's arrival to its decision (a client's decision includes the wait).",
        samples: Samples::Series(write_latency),
    },
    Family {
        name: "hookd_runs_active",
        kind: "gauge",
        help: "Agent-SDK runs going now.",
        samples: Samples::One(|s| Number::Count(s.status.runs.len() as u64)),
    },
    Family {
        name: "hookd_runs_total",
        kind: "counter",
        help: "Agent-SDK runs ended, by outcome.",
        samples: Samples::Series(write_runs),
    },
    Family {
        name: "hookd_run_cost_usd_total",
        kind: "counter",
        help: "Summed total_cost_usd of ended runs, as the SDK reported it.",
        samples: Samples::One(|s| {
            Number::Real(s.metrics.run_cost_micro_usd.load(Ordering::Relaxed) as f64 / 1e6)
        }),
    },
    Family {
        name: "hookd_run_turns_total",
        kind: "counter",
        help: "Model turns of ended runs.",
        samples: Samples::One(|s| Number::Count(s.metrics.run_turns.load(Ordering::Relaxed))),
    },
    Family {
        name: "hookd_unjudged_tool_calls_total",
        kind: "counter",
        help: "Tool calls that ran without their pre-tool hook judged (the coverage alarm), by agent: a registration dropped, a matcher that misses a tool, hooks left untrusted.",
        samples: Samples::Series(write_unjudged),
    },
    Family {
        name: "hookd_model_questions_today",
        kind: "gauge",
        help: "The daemon's own model questions this UTC day, by feature (judge, narrator) and outcome: call (a model call made), cache_hit, shared (waited for the same question's call), error, timeout, over_budget, dropped, skipped (another rule denied whatever the answer).",
        samples: Samples::Series(write_model_questions),
    },
    Family {
        name: "hookd_model_tokens_today",
        kind: "gauge",
        help: "Tokens of the daemon's own model calls this UTC day, by feature and direction (input, output).",
        samples: Samples::Series(write_model_tokens),
    },
    Family {
        name: "hookd_model_cost_usd_today",
        kind: "gauge",
        help: "Dollars of the daemon's own model calls this UTC day at the configured prices, by feature.",
        samples: Samples::Series(write_model_cost),
    },
    Family {
        name: "hookd_team_fleet_updates_total",
        kind: "counter",
        help: "Writes of this machine's row in the team database's fleet ([team]; no sample when it is off).",
        samples: Samples::Series(|name, s, out| {
            if let Some(t) = &s.status.team {
                let _ = writeln!(out, "{name} {}", t.fleet_updates);
            }
        }),
    },
    Family {
        name: "hookd_team_escalated_total",
        kind: "counter",
        help: "Asks escalated to the team's approvers ([team]; no sample when it is off).",
        samples: Samples::Series(|name, s, out| {
            if let Some(t) = &s.status.team {
                let _ = writeln!(out, "{name} {}", t.escalated);
            }
        }),
    },
    Family {
        name: "hookd_team_answers_total",
        kind: "counter",
        help: "Escalated asks the team's answer decided ([team]; no sample when it is off).",
        samples: Samples::Series(|name, s, out| {
            if let Some(t) = &s.status.team {
                let _ = writeln!(out, "{name} {}", t.team_answers);
            }
        }),
    },
    Family {
        name: "hookd_team_approvals_failures_total",
        kind: "counter",
        help: "Team approvals' attempts to reach or query the team database that failed ([team]; no sample when it is off).",
        samples: Samples::Series(|name, s, out| {
            if let Some(t) = &s.status.team {
                let _ = writeln!(out, "{name} {}", t.approvals_failures);
            }
        }),
    },
    Family {
        name: "hookd_team_failures_total",
        kind: "counter",
        help: "Attempts to reach or write the team database that failed ([team]; no sample when it is off).",
        samples: Samples::Series(|name, s, out| {
            if let Some(t) = &s.status.team {
                let _ = writeln!(out, "{name} {}", t.failures);
            }
        }),
    },
    Family {
        name: "hookd_team_shipped_total",
        kind: "counter",
        help: "Event log lines inserted into the team database's hookd.decisions since start ([team] with ship; no sample when off).",
        samples: Samples::Series(|name, s, out| {
            if let Some(ship) = s.status.team.as_ref().and_then(|t| t.ship.as_ref()) {
                let _ = writeln!(out, "{name} {}", ship.shipped);
            }
        }),
    },
    Family {
        name: "hookd_team_ship_pending_lines",
        kind: "gauge",
        help: "Event log lines written and not yet shipped to the team database.",
        samples: Samples::Series(|name, s, out| {
            if let Some(ship) = s.status.team.as_ref().and_then(|t| t.ship.as_ref()) {
                let _ = writeln!(out, "{name} {}", ship.pending_lines);
            }
        }),
    },
    Family {
        name: "hookd_team_ship_pending_bytes",
        kind: "gauge",
        help: "Event log bytes the shipper has not read yet.",
        samples: Samples::Series(|name, s, out| {
            if let Some(ship) = s.status.team.as_ref().and_then(|t| t.ship.as_ref()) {
                let _ = writeln!(out, "{name} {}", ship.pending_bytes);
            }
        }),
    },
    Family {
        name: "hookd_team_ship_failures_total",
        kind: "counter",
        help: "Shipping attempts that failed (connecting, reading the cursor, inserting a batch).",
        samples: Samples::Series(|name, s, out| {
            if let Some(ship) = s.status.team.as_ref().and_then(|t| t.ship.as_ref()) {
                let _ = writeln!(out, "{name} {}", ship.failures);
            }
        }),
    },
    Family {
        name: "hookd_team_ship_lost_total",
        kind: "counter",
        help: "Event log lines rotated away before the shipper read them (never shipped).",
        samples: Samples::Series(|name, s, out| {
            if let Some(ship) = s.status.team.as_ref().and_then(|t| t.ship.as_ref()) {
                let _ = writeln!(out, "{name} {}", ship.lost);
            }
        }),
    },
    Family {
        name: "hookd_otlp_logs_exported_total",
        kind: "counter",
        help: "Log records the OpenTelemetry collector accepted since start ([otlp]; no sample when off).",
        samples: Samples::Series(|name, s, out| {
            if let Some(otlp) = &s.status.otlp {
                let _ = writeln!(out, "{name} {}", otlp.logs_exported);
            }
        }),
    },
    Family {
        name: "hookd_otlp_spans_exported_total",
        kind: "counter",
        help: "Spans the OpenTelemetry collector accepted since start.",
        samples: Samples::Series(|name, s, out| {
            if let Some(otlp) = &s.status.otlp {
                let _ = writeln!(out, "{name} {}", otlp.spans_exported);
            }
        }),
    },
    Family {
        name: "hookd_otlp_failures_total",
        kind: "counter",
        help: "OpenTelemetry export requests that failed (not sent, or not accepted).",
        samples: Samples::Series(|name, s, out| {
            if let Some(otlp) = &s.status.otlp {
                let _ = writeln!(out, "{name} {}", otlp.failures);
            }
        }),
    },
    Family {
        name: "hookd_otlp_dropped_total",
        kind: "counter",
        help: "OpenTelemetry records dropped: batches the collector refused for good (a down collector drops nothing).",
        samples: Samples::Series(|name, s, out| {
            if let Some(otlp) = &s.status.otlp {
                let _ = writeln!(out, "{name} {}", otlp.dropped);
            }
        }),
    },
    Family {
        name: "hookd_otlp_behind_lines",
        kind: "gauge",
        help: "Event log lines written and not yet exported to OpenTelemetry (read from the exporter's cursor on).",
        samples: Samples::Series(|name, s, out| {
            if let Some(otlp) = &s.status.otlp {
                let _ = writeln!(out, "{name} {}", otlp.behind_lines);
            }
        }),
    },
    Family {
        name: "hookd_otlp_behind_bytes",
        kind: "gauge",
        help: "Event log bytes the OpenTelemetry exporter has not read yet.",
        samples: Samples::Series(|name, s, out| {
            if let Some(otlp) = &s.status.otlp {
                let _ = writeln!(out, "{name} {}", otlp.behind_bytes);
            }
        }),
    },
    Family {
        name: "hookd_otlp_lost_total",
        kind: "counter",
        help: "Event log lines rotated away before the OpenTelemetry exporter read them (never exported).",
        samples: Samples::Series(|name, s, out| {
            if let Some(otlp) = &s.status.otlp {
                let _ = writeln!(out, "{name} {}", otlp.lost);
            }
        }),
    },
    Family {
        name: "hookd_uptime_seconds",
        kind: "gauge",
        help: "Seconds since the daemon started.",
        samples: Samples::One(|s| Number::Real(s.status.uptime_s)),
    },
];

/// The judge's and the narrator's use today (absent ones: no sample).
fn model_features<'a>(
    scrape: &'a Scrape,
) -> impl Iterator<Item = (&'static str, &'a crate::protocol::status::ModelUsage)> {
    [
        ("judge", scrape.status.judge.as_ref()),
        ("narrator", scrape.status.narrator.as_ref()),
    ]
    .into_iter()
    .filter_map(|(f, u)| Some((f, u?)))
}

fn write_model_questions(name: &str, scrape: &Scrape, out: &mut String) {
    for (feature, u) in model_features(scrape) {
        for (outcome, n) in [
            ("call", u.calls),
            ("cache_hit", u.cache_hits),
            ("shared", u.shared),
            ("error", u.errors),
            ("timeout", u.timeouts),
            ("over_budget", u.over_budget),
            ("dropped", u.dropped),
            ("skipped", u.skipped),
        ] {
            let _ = writeln!(
                out,
                "{name}{{feature=\"{feature}\",outcome=\"{outcome}\"}} {n}"
            );
        }
    }
}

fn write_model_tokens(name: &str, scrape: &Scrape, out: &mut String) {
    for (feature, u) in model_features(scrape) {
        for (direction, n) in [("input", u.input_tokens), ("output", u.output_tokens)] {
            let _ = writeln!(
                out,
                "{name}{{feature=\"{feature}\",direction=\"{direction}\"}} {n}"
            );
        }
    }
}

fn write_model_cost(name: &str, scrape: &Scrape, out: &mut String) {
    for (feature, u) in model_features(scrape) {
        let _ = writeln!(out, "{name}{{feature=\"{feature}\"}} {}", u.cost_usd);
    }
}

/// The decision table's non-zero cells, labelled by event, verdict and source.
fn write_decisions(name: &str, scrape: &Scrape, out: &mut String) {
    for kind in 0..kind_count() {
        for (v, verdict) in Verdict::ALL.iter().enumerate() {
            for (s, source) in SOURCES.iter().enumerate() {
                let n = scrape.metrics.decisions_of(kind, v, s);
                if n == 0 {
                    continue;
                }
                let _ = writeln!(
                    out,
                    "{name}{{event=\"{}\",verdict=\"{verdict}\",source=\"{source}\"}} {n}",
                    kind_label(kind)
                );
            }
        }
    }
}

/// Fallbacks by reason. Every decision that was a fallback comes through
/// `record_decision` as source `timeout` (a pending event's wait ran out)
/// or `fallback` (no client left, the run or the daemon ended, unreadable
/// input); a panic's fallback does not (its task is gone), and is the rest
/// of `status`'s count.
fn write_fallbacks(name: &str, scrape: &Scrape, out: &mut String) {
    let timeout = scrape.decisions_by(&Source::Timeout);
    let no_decision = scrape.decisions_by(&Source::Fallback);
    let internal = scrape
        .counters()
        .fallbacks
        .saturating_sub(timeout + no_decision);
    for (reason, n) in [
        ("timeout", timeout),
        ("no_decision", no_decision),
        ("internal_error", internal),
    ] {
        let _ = writeln!(out, "{name}{{reason=\"{reason}\"}} {n}");
    }
}

/// The latency histogram: cumulative buckets up to `+Inf`, sum, count.
fn write_latency(name: &str, scrape: &Scrape, out: &mut String) {
    let metrics = scrape.metrics;
    let mut cumulative = 0u64;
    for (i, bucket) in metrics.latency_buckets.iter().enumerate() {
        cumulative += bucket.load(Ordering::Relaxed);
        match LATENCY_BOUNDS_US.get(i) {
            Some(bound) => {
                let le = seconds(*bound);
                let _ = writeln!(out, "{name}_bucket{{le=\"{le}\"}} {cumulative}");
            }
            None => {
                let _ = writeln!(out, "{name}_bucket{{le=\"+Inf\"}} {cumulative}");
            }
        }
    }
    let sum = seconds(metrics.latency_sum_us.load(Ordering::Relaxed));
    let _ = writeln!(out, "{name}_sum {sum}");
    let _ = writeln!(out, "{name}_count {cumulative}");
}

/// Unjudged tool calls per agent the daemon has seen a session of (see
/// `crate::coverage`); the label values are the harnesses' names, a
/// closed set.
fn write_unjudged(name: &str, scrape: &Scrape, out: &mut String) {
    for agent in &scrape.status.coverage {
        let _ = writeln!(
            out,
            "{name}{{agent=\"{}\"}} {}",
            agent.agent, agent.unjudged
        );
    }
}

/// Ended runs by outcome.
fn write_runs(name: &str, scrape: &Scrape, out: &mut String) {
    let metrics = scrape.metrics;
    for (outcome, n) in [("ok", &metrics.runs_ok), ("failed", &metrics.runs_failed)] {
        let n = n.load(Ordering::Relaxed);
        let _ = writeln!(out, "{name}{{outcome=\"{outcome}\"}} {n}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decision::Answer;

    fn decision(verdict: Verdict, source: Source, latency_us: u64) -> Decision {
        Decision {
            decision_id: crate::event::new_id(),
            event_id: crate::event::new_id(),
            run_id: None,
            answer: Answer {
                verdict,
                ..Answer::no_opinion()
            },
            source,
            rule_ids: Vec::new(),
            grant_rule: None,
            remembered: None,
            generation: 1,
            latency_us,
            layer: None,
            rules: Vec::new(),
            revision: None,
            project_revision: None,
            facts: None,
            judgements: Vec::new(),
            signals: Default::default(),
        }
    }

    fn status(fallbacks: u64) -> Status {
        let mut status: Status = serde_json::from_value(serde_json::json!({
            "version": "0", "protocol": 1, "pid": 1, "uptime_s": 2.5,
            "socket": "/s", "log": "/l",
            "rules": {"generation": 1, "count": 0, "source": "defaults"},
            "counters": {}, "adapter_dir": "/a", "runs": [], "grants": [],
        }))
        .expect("a minimal status");
        status.counters.fallbacks = fallbacks;
        status
    }

    /// Every sample line of `text` as (series, value).
    fn samples(text: &str) -> Vec<(&str, &str)> {
        text.lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| l.rsplit_once(' ').expect("series and value"))
            .collect()
    }

    fn value<'a>(text: &'a str, series: &str) -> Option<&'a str> {
        samples(text)
            .into_iter()
            .find(|(s, _)| *s == series)
            .map(|(_, v)| v)
    }

    #[test]
    fn decisions_are_counted_by_event_verdict_and_source() {
        let metrics = Metrics::default();
        for _ in 0..3 {
            metrics.record_decision(
                HookEventKind::PreToolUse,
                &decision(Verdict::Deny, Source::Rule, 40),
            );
        }
        metrics.record_decision(
            HookEventKind::PermissionRequest,
            &decision(Verdict::Allow, Source::Client("phone".into()), 2_000_000),
        );
        metrics.record_decision(
            HookEventKind::Unknown,
            &decision(Verdict::NoOpinion, Source::Timeout, 30_000_000),
        );
        let text = render(&metrics, &status(2));
        assert_eq!(
            value(
                &text,
                r#"hookd_decisions_total{event="PreToolUse",verdict="deny",source="rule"}"#
            ),
            Some("3")
        );
        assert_eq!(
            value(
                &text,
                r#"hookd_decisions_total{event="PermissionRequest",verdict="allow",source="client"}"#
            ),
            Some("1")
        );
        assert_eq!(
            value(
                &text,
                r#"hookd_decisions_total{event="unknown",verdict="none",source="timeout"}"#
            ),
            Some("1")
        );
        // Only the combinations that happened.
        assert_eq!(
            samples(&text)
                .iter()
                .filter(|(s, _)| s.starts_with("hookd_decisions_total"))
                .count(),
            3
        );
        // One timeout recorded, and `status` counted one more fallback: a
        // panic's, which never reaches `record_decision`.
        assert_eq!(
            value(&text, r#"hookd_fallbacks_total{reason="timeout"}"#),
            Some("1")
        );
        assert_eq!(
            value(&text, r#"hookd_fallbacks_total{reason="internal_error"}"#),
            Some("1")
        );
    }

    #[test]
    fn the_latency_histogram_is_cumulative_and_ends_with_inf() {
        let metrics = Metrics::default();
        for latency_us in [50, 100, 101, 700_000_000] {
            metrics.record_decision(
                HookEventKind::Stop,
                &decision(Verdict::NoOpinion, Source::Default, latency_us),
            );
        }
        let text = render(&metrics, &status(0));
        let bucket = |le: &str| {
            value(
                &text,
                &format!("hookd_decision_latency_seconds_bucket{{le=\"{le}\"}}"),
            )
        };
        assert_eq!(bucket("0.0001"), Some("2"));
        assert_eq!(bucket("0.00025"), Some("3"));
        assert_eq!(bucket("600"), Some("3"));
        assert_eq!(bucket("+Inf"), Some("4"));
        assert_eq!(
            value(&text, "hookd_decision_latency_seconds_count"),
            Some("4")
        );
        assert_eq!(
            value(&text, "hookd_decision_latency_seconds_sum"),
            Some("700.000251")
        );
    }

    #[test]
    fn runs_and_their_cost_add_up() {
        let metrics = Metrics::default();
        let done = |ok: bool, cost: Option<f64>| RunDone {
            run_id: "r".into(),
            received_at: String::new(),
            ok,
            session_id: None,
            usage: None,
            cost_usd: cost,
            num_turns: Some(2),
            duration_ms: 1,
            result: None,
            error: None,
        };
        metrics.record_run(&done(true, Some(0.0125)));
        metrics.record_run(&done(true, Some(0.5)));
        metrics.record_run(&done(false, None));
        let text = render(&metrics, &status(0));
        assert_eq!(value(&text, r#"hookd_runs_total{outcome="ok"}"#), Some("2"));
        assert_eq!(
            value(&text, r#"hookd_runs_total{outcome="failed"}"#),
            Some("1")
        );
        assert_eq!(value(&text, "hookd_run_cost_usd_total"), Some("0.5125"));
        assert_eq!(value(&text, "hookd_run_turns_total"), Some("6"));
    }

    #[test]
    fn the_judges_and_narrators_use_today_is_labelled_by_feature() {
        let text = render(&Metrics::default(), &status(0));
        assert_eq!(
            value(&text, r#"hookd_model_cost_usd_today{feature="judge"}"#),
            None
        );
        let mut with = status(0);
        with.judge = Some(crate::protocol::status::ModelUsage {
            calls: 3,
            cache_hits: 2,
            input_tokens: 100,
            cost_usd: 0.25,
            ..Default::default()
        });
        let text = render(&Metrics::default(), &with);
        for (series, v) in [
            (
                r#"hookd_model_questions_today{feature="judge",outcome="call"}"#,
                "3",
            ),
            (
                r#"hookd_model_questions_today{feature="judge",outcome="cache_hit"}"#,
                "2",
            ),
            (
                r#"hookd_model_tokens_today{feature="judge",direction="input"}"#,
                "100",
            ),
            (r#"hookd_model_cost_usd_today{feature="judge"}"#, "0.25"),
        ] {
            assert_eq!(value(&text, series), Some(v), "{series}\n{text}");
        }
        assert_eq!(
            value(&text, r#"hookd_model_cost_usd_today{feature="narrator"}"#),
            None
        );
    }

    #[test]
    fn every_metric_has_help_and_type_before_its_samples() {
        let text = render(&Metrics::default(), &status(0));
        let mut typed = std::collections::HashSet::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                typed.insert(rest.split(' ').next().unwrap().to_string());
            } else if !line.starts_with('#') {
                let series = line.split(['{', ' ']).next().unwrap();
                let family = ["_bucket", "_sum", "_count"]
                    .iter()
                    .find_map(|s| series.strip_suffix(s).filter(|f| typed.contains(*f)))
                    .unwrap_or(series);
                assert!(typed.contains(family), "{series} has no # TYPE before it");
            }
        }
    }
}
