//! Numbers, sizes and times as people read them.

use chrono::{DateTime, TimeZone, Utc};

use crate::localtime;

/// `1234567` → `1,234,567`.
pub fn thousands(n: f64) -> String {
    if !n.is_finite() {
        return "?".into();
    }
    let neg = n < 0.0;
    let digits = format!("{:.0}", n.abs());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if neg {
        format!("-{out}")
    } else {
        out
    }
}

/// Dollars with enough digits for small amounts: `$0.0031`, `$1.24`.
pub fn cost(c: f64) -> String {
    if !c.is_finite() {
        "?".into()
    } else if c == 0.0 {
        "$0".into()
    } else if c.abs() < 1.0 {
        format!("${c:.4}")
    } else {
        format!("${c:.2}")
    }
}

/// `812 B`, `4.2 KB`, `1.3 MB` (powers of 1024).
pub fn size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut v = bytes as f64 / 1024.0;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if v < 10.0 {
        format!("{v:.1} {}", UNITS[u])
    } else {
        format!("{v:.0} {}", UNITS[u])
    }
}

/// `just now`, `5 min ago`, `3 h ago`, `yesterday`, `4 days ago`, then the date.
pub fn relative(ms: f64, now_ms: i64, utc: bool) -> String {
    if !ms.is_finite() {
        return "?".into();
    }
    let secs = ((now_ms as f64 - ms) / 1000.0).max(0.0);
    let mins = (secs / 60.0).floor();
    let hours = (secs / 3600.0).floor();
    let days = (secs / 86400.0).floor();
    if secs < 60.0 {
        "just now".into()
    } else if mins < 60.0 {
        format!("{mins} min ago")
    } else if hours < 24.0 {
        format!("{hours} h ago")
    } else if days < 2.0 {
        "yesterday".into()
    } else if days < 14.0 {
        format!("{days} days ago")
    } else {
        date(ms, utc)
    }
}

fn at(ms: f64) -> Option<DateTime<Utc>> {
    if !ms.is_finite() {
        return None;
    }
    Utc.timestamp_millis_opt(ms as i64).single()
}

/// `2025-01-15`.
pub fn date(ms: f64, utc: bool) -> String {
    format_ms(ms, utc, "%Y-%m-%d")
}

/// `2025-01-15 10:00`.
pub fn date_time(ms: f64, utc: bool) -> String {
    format_ms(ms, utc, "%Y-%m-%d %H:%M")
}

/// `10:00:04`.
pub fn clock(ms: f64, utc: bool) -> String {
    format_ms(ms, utc, "%H:%M:%S")
}

fn format_ms(ms: f64, utc: bool, f: &str) -> String {
    match at(ms) {
        None => "?".into(),
        Some(t) if utc => t.format(f).to_string(),
        Some(t) => localtime::local(t).format(f).to_string(),
    }
}

/// `Date.prototype.toISOString()` of a time value; `None` for an invalid date.
pub fn iso(ms: f64) -> Option<String> {
    if !ms.is_finite() || ms.abs() > 8.64e15 {
        return None;
    }
    at(ms.trunc()).map(|t| t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
}

/// A time from an ISO string: the strict form first, then RFC 3339 and a few forms JS `Date`
/// also reads (date only, no zone = UTC here).
pub fn parse_time(s: &str) -> Option<f64> {
    if let Some(ms) = pi_session_core::timefmt::parse_iso_strict(s) {
        return Some(ms);
    }
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Some(t.timestamp_millis() as f64);
    }
    for f in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M:%S",
    ] {
        if let Ok(t) = chrono::NaiveDateTime::parse_from_str(s, f) {
            return Some(t.and_utc().timestamp_millis() as f64);
        }
    }
    if let Ok(d) = chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d") {
        return d
            .and_hms_opt(0, 0, 0)
            .map(|t| t.and_utc().timestamp_millis() as f64);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_sizes_and_times_read_naturally() {
        assert_eq!(thousands(1234567.0), "1,234,567");
        assert_eq!(thousands(12.0), "12");
        assert_eq!(cost(0.003), "$0.0030");
        assert_eq!(cost(12.345), "$12.35");
        assert_eq!(size(812), "812 B");
        assert_eq!(size(4300), "4.2 KB");
        assert_eq!(size(3 * 1024 * 1024), "3.0 MB");
        let now = 1_736_935_200_000i64;
        assert_eq!(relative(now as f64 - 30_000.0, now, true), "just now");
        assert_eq!(relative(now as f64 - 300_000.0, now, true), "5 min ago");
        assert_eq!(
            relative(now as f64 - 3.0 * 86_400_000.0, now, true),
            "3 days ago"
        );
        assert_eq!(
            iso(1_736_935_200_000.0).unwrap(),
            "2025-01-15T10:00:00.000Z"
        );
        assert_eq!(
            parse_time("2025-01-15T10:00:00.000Z"),
            Some(1_736_935_200_000.0)
        );
        assert_eq!(
            parse_time("2025-01-15T11:00:00+01:00"),
            Some(1_736_935_200_000.0)
        );
        assert_eq!(parse_time("nope"), None);
    }
}
