//! The styles of human output (`cli::output::Stdout` strips them where
//! colour is not allowed). Colour marks what a reader scans for: a pass or a
//! failure, a verdict. Below the command line so that the reports it prints
//! (doctor's, the rules') colour alike.

use anstyle::{AnsiColor, Style};

use crate::decision::Verdict;

/// Something fine: `✓`, `ok`, `allow`.
pub const GOOD: Style = AnsiColor::Green.on_default();
/// Something wrong: `✗`, `FAIL`, `deny`.
pub const BAD: Style = AnsiColor::Red.on_default().bold();
/// Something that wants a person: `ask`, a warning.
pub const NOTICE: Style = AnsiColor::Yellow.on_default();
/// Secondary text: ids, hints.
pub const DIM: Style = Style::new().dimmed();

/// The style of a verdict's name.
pub fn verdict(verdict: Verdict) -> Style {
    match verdict {
        Verdict::Allow => GOOD,
        Verdict::Deny => BAD,
        Verdict::Ask => NOTICE,
        _ => Style::new(),
    }
}

/// `text` in `style` (escape codes around it).
pub fn paint(style: Style, text: impl std::fmt::Display) -> String {
    format!("{style}{text}{style:#}")
}
