//! Clock times in the two textual forms the format uses, and a strict ISO reader.

use chrono::{DateTime, Utc};

/// Now, as `Date.prototype.toISOString()` prints it (UTC, milliseconds, `Z`), and as ms: the
/// host's time inside [`with_host_now`], else the system clock's.
pub fn now_iso() -> (String, u64) {
    let ms = HOST_NOW_MS
        .get()
        .unwrap_or_else(|| Utc::now().timestamp_millis().max(0) as u64);
    (iso_from_ms(ms), ms)
}

thread_local! {
    /// The host's time for the call running on this thread, when it passed one (see
    /// [`with_host_now`]).
    static HOST_NOW_MS: std::cell::Cell<Option<u64>> = const { std::cell::Cell::new(None) };
}

/// Runs `f` with `ms` (ms since 1970, as JS's `Date.now()` gives it) as the time [`now_iso`]
/// gives on this thread; `None`, or a value that is no such time, leaves it the system clock's.
/// The binding passes JS's clock, which stamps the entries, so that a new session's header time
/// and id come from the same clock as its entries' times: on Windows, V8's clock can trail the
/// system's by up to a timer tick, and a header would then be younger than its first entries.
pub fn with_host_now<T>(ms: Option<f64>, f: impl FnOnce() -> T) -> T {
    /// Puts the time before back, also when `f` panics.
    struct Restore(Option<u64>);
    impl Drop for Restore {
        fn drop(&mut self) {
            HOST_NOW_MS.set(self.0);
        }
    }
    let ms = ms
        .filter(|m| m.is_finite() && *m >= 0.0 && *m <= MAX_HOST_MS)
        .map(|m| m as u64);
    let _restore = Restore(HOST_NOW_MS.replace(ms));
    f()
}

/// The latest time [`with_host_now`] takes: JS's largest `Date` (8.64e15 ms).
const MAX_HOST_MS: f64 = 8.64e15;

pub fn iso_from_ms(ms: u64) -> String {
    let dt = DateTime::<Utc>::from_timestamp_millis(ms as i64).unwrap_or_default();
    dt.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// The file-name form: every `:` and `.` of the ISO time replaced by `-`.
pub fn file_timestamp(iso: &str) -> String {
    iso.replace([':', '.'], "-")
}

/// Milliseconds for an ISO time in exactly the shape `toISOString()` produces
/// (`YYYY-MM-DDTHH:mm:ss.sssZ`, also without `.sss`), with every field in range.
/// Anything else returns `None`: callers hand such strings to JavaScript's own `Date` parser, whose
/// lenient rules we do not try to imitate.
pub fn parse_iso_strict(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    if !(b.len() == 24 || b.len() == 20) || b[b.len() - 1] != b'Z' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<u32> {
        let mut v = 0u32;
        for &c in &b[r] {
            if !c.is_ascii_digit() {
                return None;
            }
            v = v * 10 + (c - b'0') as u32;
        }
        Some(v)
    };
    if b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (y, mo, d, h, mi, se) = (
        num(0..4)?,
        num(5..7)?,
        num(8..10)?,
        num(11..13)?,
        num(14..16)?,
        num(17..19)?,
    );
    let millis = if b.len() == 24 {
        if b[19] != b'.' {
            return None;
        }
        num(20..23)?
    } else {
        0
    };
    if !(1..=12).contains(&mo) || d == 0 || d > days_in_month(y, mo) || h > 23 || mi > 59 || se > 59
    {
        return None;
    }
    let days = days_from_civil(y as i64, mo, d);
    Some(
        (days * 86_400_000
            + (h as i64) * 3_600_000
            + (mi as i64) * 60_000
            + (se as i64) * 1000
            + millis as i64) as f64,
    )
}

fn days_in_month(y: u32, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (y.is_multiple_of(4) && !y.is_multiple_of(100)) || y.is_multiple_of(400) => 29,
        _ => 28,
    }
}

/// Days since 1970-01-01 (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_time_is_now_inside_with_host_now_and_only_there() {
        let at = 1_700_000_000_123.0;
        let (iso, ms) = with_host_now(Some(at), now_iso);
        assert_eq!(
            (iso.as_str(), ms),
            ("2023-11-14T22:13:20.123Z", 1_700_000_000_123)
        );
        // Nested, and put back after.
        with_host_now(Some(at), || {
            assert_eq!(with_host_now(Some(5.0), now_iso).1, 5);
            assert_eq!(now_iso().1, 1_700_000_000_123);
        });
        let system = now_iso().1;
        assert!(
            system > 1_700_000_000_123,
            "the system clock again: {system}"
        );
        // Not a time: the system clock.
        for bad in [f64::NAN, -1.0, f64::INFINITY, 1e300] {
            assert!(with_host_now(Some(bad), now_iso).1 >= system, "{bad}");
        }
        assert!(with_host_now(None, now_iso).1 >= system);
        // Put back also when the call panics.
        let caught =
            std::panic::catch_unwind(|| with_host_now(Some(7.0), || panic!("in the call")));
        assert!(caught.is_err());
        assert!(now_iso().1 >= system);
    }

    #[test]
    fn iso_round_trips_through_milliseconds() {
        let ms = 1_764_442_533_520u64;
        let iso = iso_from_ms(ms);
        assert_eq!(iso, "2025-11-29T18:55:33.520Z");
        assert_eq!(parse_iso_strict(&iso), Some(ms as f64));
        assert_eq!(file_timestamp(&iso), "2025-11-29T18-55-33-520Z");
    }

    #[test]
    fn strict_parser_refuses_what_it_cannot_vouch_for() {
        assert_eq!(parse_iso_strict("1970-01-01T00:00:00Z"), Some(0.0));
        assert!(parse_iso_strict("2024-02-29T00:00:00.000Z").is_some());
        for bad in [
            "2023-02-29T00:00:00.000Z",
            "2024-01-01",
            "2024-01-01T00:00:00.000",
            "garbage",
            "2024-13-01T00:00:00.000Z",
            "2024-01-01T24:00:00.000Z",
        ] {
            assert_eq!(parse_iso_strict(bad), None, "{bad}");
        }
    }
}
