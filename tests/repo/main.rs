//! Checks on the repository itself, not on hookd's behaviour: the layering
//! and hygiene rules read off the sources (`tidy`), the documentation's
//! links (`docs`) and the test harness's own helpers (`harness`). One
//! small crate (issue #22).

#[path = "../support/mod.rs"]
mod support;

mod docs;
mod harness;
mod locks;
mod tidy;
