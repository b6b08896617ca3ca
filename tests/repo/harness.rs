//! The test harness's own helpers (`tests/support/process.rs`): skipping a
//! test whose program is missing, which fails instead on CI, and the poll
//! helpers every bounded wait in the tests goes through.

use crate::support::process;

use std::process::{Command, Output};
use std::time::Duration;

/// What the tests below run in a child of this test binary, with `CI` set
/// as each needs: a test whose program is missing.
#[test]
#[ignore = "run by the skip_or_fail tests, in a child process"]
fn a_test_missing_its_program() {
    process::skip_or_fail(
        "a_test_missing_its_program",
        "needs frobnicate, and `frobnicate` is not on PATH",
    );
}

/// Runs [`a_test_missing_its_program`] in a child with `CI` set to `ci`
/// (unset if `None`).
fn run_missing_program(ci: Option<&str>) -> Output {
    // Its name in this crate's test list: the module path without the
    // crate's name (`harness::a_test_missing_its_program`).
    let (_, module) = module_path!().split_once("::").unwrap();
    let name = format!("{module}::a_test_missing_its_program");
    let mut command = Command::new(std::env::current_exe().unwrap());
    command.args(["--exact", &name, "--ignored", "--nocapture"]);
    match ci {
        Some(value) => command.env("CI", value),
        None => command.env_remove("CI"),
    };
    command.output().unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn off_ci_a_missing_program_skips_the_test_and_says_why() {
    for ci in [None, Some("false")] {
        let out = run_missing_program(ci);
        assert!(out.status.success(), "CI={ci:?}: {}", text(&out));
        assert!(
            text(&out).contains(
                "skipped: a_test_missing_its_program needs frobnicate, and `frobnicate` is not on PATH"
            ),
            "CI={ci:?}: {}",
            text(&out)
        );
    }
}

#[test]
fn on_ci_a_missing_program_fails_the_test() {
    let out = run_missing_program(Some("true"));
    assert!(!out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains(
            "a_test_missing_its_program needs frobnicate, and `frobnicate` is not on PATH: on CI \
             (CI=true) that is a broken setup, not a skip"
        ),
        "{}",
        text(&out)
    );
    assert!(!text(&out).contains("skipped:"), "{}", text(&out));
}

#[test]
fn poll_for_returns_what_the_probe_found() {
    let mut probes = 0;
    let found = process::poll_for("the third probe", Duration::from_secs(60), || {
        probes += 1;
        (probes == 3).then_some("found")
    });
    assert_eq!((found, probes), ("found", 3));
}

#[test]
fn poll_reporting_gives_up_naming_the_wait_and_the_last_thing_seen() {
    let mut probes = 0;
    let failed = std::panic::catch_unwind(move || {
        process::poll_reporting("a count of 1000", Duration::ZERO, || -> Result<(), _> {
            probes += 1;
            Err(format!("count {probes}"))
        })
    })
    .unwrap_err();
    let message = failed.downcast_ref::<String>().unwrap();
    assert_eq!(
        message,
        "gave up after 0ns waiting for a count of 1000: count 1"
    );
}

#[test]
fn poll_until_gives_up_naming_the_wait() {
    let failed = std::panic::catch_unwind(|| {
        process::poll_until("never", Duration::ZERO, || false);
    })
    .unwrap_err();
    let message = failed.downcast_ref::<String>().unwrap();
    assert_eq!(message, "gave up after 0ns waiting for never");
}

#[test]
fn poll_last_returns_the_last_value_when_none_is_accepted() {
    let mut probes = 0;
    let last = process::poll_last(
        Duration::ZERO,
        Duration::from_millis(10),
        || {
            probes += 1;
            probes
        },
        |n| *n > 5,
    );
    assert_eq!(last, 1);
    let mut probes = 0;
    let accepted = process::poll_last(
        Duration::from_secs(60),
        Duration::from_millis(10),
        || {
            probes += 1;
            probes
        },
        |n| *n == 2,
    );
    assert_eq!(accepted, 2);
}
