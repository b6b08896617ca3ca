//! Fault hooks for tests, compiled only with the `fault-injection` feature
//! (`tests/faults.rs` builds hookd with it, in the `fault` profile, which
//! has the release profile's panic strategy). Never part of a real build.
//!
//! A hook input carrying `"hookd_fault": "<fault>"` makes the daemon fail
//! where a real bug would:
//! - `panic_while_judging`: evaluating the rules panics;
//! - `panic_after_judging`: the hook's task panics after the judgement;
//! - `slow_judging:<ms>`: evaluating the rules takes `<ms>` milliseconds
//!   (the thread is blocked, as by a pathological input).
//!
//! A client whose `hello` names it [`PANIC_CLIENT`] makes its connection's
//! task panic.

use std::time::Duration;

use serde_json::Value;

/// The client name that makes a session panic.
pub const PANIC_CLIENT: &str = "hookd-fault:panic";

fn fault(input: &Value) -> Option<&str> {
    input.get("hookd_fault")?.as_str()
}

/// Called where the rules are evaluated.
pub fn while_judging(input: &Value) {
    match fault(input) {
        Some("panic_while_judging") => panic!("injected fault: panic while judging"),
        Some(slow) if slow.starts_with("slow_judging:") => {
            let ms = slow["slow_judging:".len()..].parse().unwrap_or(1000);
            std::thread::sleep(Duration::from_millis(ms));
        }
        _ => {}
    }
}

/// Called in the hook's task after the judgement.
pub fn after_judging(input: &Value) {
    if fault(input) == Some("panic_after_judging") {
        panic!("injected fault: panic after judging");
    }
}

/// Called when a client says `hello`.
pub fn on_hello(name: &str) {
    if name == PANIC_CLIENT {
        panic!("injected fault: panic in a client's session");
    }
}
