//! The team plane (issue #26) against a real PostgreSQL: a throw-away
//! cluster per test (tests/support/postgres.rs), the real `hookd` binary.

#[path = "../support/mod.rs"]
mod support;

mod team_approvals;
mod team_approvals_claude;
mod team_approvals_rls;
mod team_approve_pane;
mod team_approve_plain;
mod team_asks_announced;
mod team_dashboard;
mod team_dashboard_limits;
mod team_fleet;
mod team_init;
mod team_ship;
mod team_tls;
