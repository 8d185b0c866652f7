//! Clock times in the two textual forms the format uses, and a strict ISO reader.

use chrono::{DateTime, Utc};

/// Now, as `Date.prototype.toISOString()` prints it (UTC, milliseconds, `Z`), and as ms.
pub fn now_iso() -> (String, u64) {
    let now: DateTime<Utc> = Utc::now();
    let ms = now.timestamp_millis().max(0) as u64;
    (iso_from_ms(ms), ms)
}

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
