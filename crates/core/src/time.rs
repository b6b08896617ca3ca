//! Timestamps (RFC 3339, UTC) and ages, read and written with `jiff`.
//!
//! The log's timestamps are always `YYYY-MM-DDTHH:MM:SS.ffffffZ`: UTC,
//! microseconds, six digits even when they are zeros, so lines sort as text.
//! Reading is `jiff`'s: RFC 3339 (and the ISO 8601 forms jiff accepts, such as
//! `2026-11-22 10:00Z`) with a real calendar, so `2026-02-31` is refused;
//! ages are jiff's spans (`90s`, `10m`, `2h`, `1d`, `1w`, `1h30m`, `P1D`).

use std::time::{SystemTime, UNIX_EPOCH};

use jiff::tz::TimeZone;
use jiff::{Span, Timestamp};

/// A time or an age that could not be read or is out of range.
#[derive(Debug, thiserror::Error)]
pub enum TimeError {
    /// Not a time (or age) in a form jiff reads, or out of jiff's range
    /// (years -9999 to 9999); jiff's message says which part.
    #[error(transparent)]
    Invalid(#[from] jiff::Error),
    /// An age of zero or less (`-5m`, `5m ago`).
    #[error("an age must be positive")]
    NotPositive,
}

/// Formats `t` as `YYYY-MM-DDTHH:MM:SS.ffffffZ` (UTC, microseconds,
/// truncated). A time jiff cannot represent (beyond year 9999) is written
/// as the Unix epoch.
pub fn rfc3339(t: SystemTime) -> String {
    let at = Timestamp::try_from(t).unwrap_or(Timestamp::UNIX_EPOCH);
    format!("{at:.6}")
}

/// Reads an RFC 3339 time with an offset (`Z` or `±HH:MM`).
pub fn parse_timestamp(text: &str) -> Result<SystemTime, TimeError> {
    let at: Timestamp = text.parse()?;
    Ok(SystemTime::try_from(at)?)
}

/// [`parse_timestamp`], for callers that only need to know whether it read.
pub fn parse_rfc3339(text: &str) -> Option<SystemTime> {
    parse_timestamp(text).ok()
}

/// The instant `age` (`90s`, `10m`, `2h`, `1d`, `1w`, `1h30m`, `P1D`, …)
/// before `now`, counting calendar units in UTC. An age reaching back
/// before 1970 gives the Unix epoch.
pub fn before(now: SystemTime, age: &str) -> Result<SystemTime, TimeError> {
    let span: Span = age.parse()?;
    if !span.is_positive() {
        return Err(TimeError::NotPositive);
    }
    let now = Timestamp::try_from(now)?.to_zoned_datetime(TimeZone::UTC);
    let then = now.checked_sub(span)?.timestamp();
    Ok(SystemTime::try_from(then.max(Timestamp::UNIX_EPOCH))?)
}

/// Milliseconds since the Unix epoch; 0 for earlier times.
pub fn unix_millis(t: SystemTime) -> u128 {
    t.duration_since(UNIX_EPOCH).unwrap_or_default().as_millis()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn formats_microseconds_always_six_digits() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00.000000Z");
        let t = UNIX_EPOCH + Duration::from_micros(1_795_315_794_123_456);
        assert_eq!(rfc3339(t), "2026-11-22T02:49:54.123456Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
        assert_eq!(rfc3339(leap), "2000-02-29T00:00:00.000000Z");
        // Nanoseconds are truncated, never rounded up into the next second.
        let t = UNIX_EPOCH + Duration::new(1_795_315_794, 999_999_999);
        assert_eq!(rfc3339(t), "2026-11-22T02:49:54.999999Z");
        let t = UNIX_EPOCH + Duration::from_millis(1_795_315_794_100);
        assert_eq!(rfc3339(t), "2026-11-22T02:49:54.100000Z");
    }

    #[test]
    fn parses_what_it_formats_and_offsets() {
        for micros in [0u64, 951_782_400_000_000, 1_795_315_794_123_456] {
            let t = UNIX_EPOCH + Duration::from_micros(micros);
            assert_eq!(parse_rfc3339(&rfc3339(t)), Some(t));
        }
        assert_eq!(
            parse_rfc3339("2026-11-22T04:49:54+02:00"),
            parse_rfc3339("2026-11-22T02:49:54Z")
        );
        assert!(parse_rfc3339("2026-11-22 02:49:54Z").is_some());
    }

    #[test]
    fn refuses_what_is_not_a_time_without_panicking() {
        for bad in [
            "",
            "2026-11-22",
            "2026-13-01T00:00:00Z",
            "2026-02-31T00:00:00Z",
            "2025-02-29T00:00:00Z",
            "2026-11-22T24:00:01Z",
            "2026-11-22T02:49:54",
            "2026-11-22T02:49:54.Z",
            "2026-11-22T02:49:5é",
            "2026-11-22T02:49:54éééééééé",
            "ééééééééééééééééééééé",
            "+99999-01-01T00:00:00Z",
        ] {
            assert!(parse_timestamp(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn ages_count_back_from_now() {
        let now = UNIX_EPOCH + Duration::from_secs(1_795_315_794);
        let ago = |age: &str| now.duration_since(before(now, age).unwrap()).unwrap();
        assert_eq!(ago("90s"), Duration::from_secs(90));
        assert_eq!(ago("10m"), Duration::from_secs(600));
        assert_eq!(ago("2h"), Duration::from_secs(7200));
        assert_eq!(ago("1d"), Duration::from_secs(86_400));
        assert_eq!(ago("1w"), Duration::from_secs(7 * 86_400));
        assert_eq!(ago("1h30m"), Duration::from_secs(5400));
        // Reaching back before 1970 is the epoch: everything qualifies.
        assert_eq!(before(now, "100000d").unwrap(), UNIX_EPOCH);
        for bad in [
            "",
            "10",
            "10x",
            "-5m",
            "5m ago",
            "0s",
            "999999999d",
            "99999999999999999999d",
            "1e300s",
            "d",
        ] {
            assert!(before(now, bad).is_err(), "{bad:?}");
        }
    }
}
