//! The user's local time, asked of the OS for each moment shown.
//!
//! chrono's own local zone (its `clock` feature) finds the zone by name, which on macOS links the
//! CoreFoundation framework: a binary for macOS could then only be linked on a Mac. The C library
//! (Unix) and kernel32 (Windows) already know the zone, its daylight-saving rules included, so the
//! offset comes from them: `localtime_r` honours `TZ` as every Unix program does, and Windows uses
//! the zone set in its control panel.

use chrono::{DateTime, FixedOffset, Utc};

/// `t` in the user's time zone; in UTC when the OS cannot say (a moment outside its range).
pub fn local(t: DateTime<Utc>) -> DateTime<FixedOffset> {
    let offset = offset_seconds(t.timestamp())
        .and_then(FixedOffset::east_opt)
        .unwrap_or_else(|| FixedOffset::east_opt(0).expect("zero is a valid offset"));
    t.with_timezone(&offset)
}

/// Seconds east of UTC of local time at `utc_seconds` since the Unix epoch.
#[cfg(unix)]
pub fn offset_seconds(utc_seconds: i64) -> Option<i32> {
    use std::sync::Once;

    extern "C" {
        // POSIX; glibc, musl and macOS's libSystem all have it. Not declared by the libc crate.
        fn tzset();
    }
    static READ_TZ: Once = Once::new();
    // SAFETY: tzset takes no arguments and only (re)reads TZ into the C library's zone state;
    // `Once` keeps two threads of ours from running it at the same time.
    READ_TZ.call_once(|| unsafe { tzset() });

    // The type is inferred from localtime_r's parameter: the libc crate deprecates naming
    // `time_t` on musl (its width changed in musl 1.2), which `-D warnings` turns into an error.
    #[allow(
        clippy::useless_conversion,
        reason = "time_t is 64 bits on the targets we ship, but not on every Unix"
    )]
    let t = utc_seconds.try_into().ok()?;
    // SAFETY: `tm` is plain old data (integers and, on some systems, a pointer that localtime_r
    // fills in), for which all-zero bytes are a valid value.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers are valid for the call; localtime_r writes only into `tm` (the
    // reentrant form, no static buffer) and returns null on failure.
    let done = unsafe { libc::localtime_r(&t, &mut tm) };
    if done.is_null() {
        return None;
    }
    i32::try_from(tm.tm_gmtoff).ok()
}

/// Seconds east of UTC of local time at `utc_seconds` since the Unix epoch.
#[cfg(windows)]
pub fn offset_seconds(utc_seconds: i64) -> Option<i32> {
    use chrono::NaiveDate;
    use windows_sys::Win32::Foundation::{FILETIME, SYSTEMTIME};
    use windows_sys::Win32::System::Time::{FileTimeToSystemTime, SystemTimeToTzSpecificLocalTime};

    // FILETIME counts 100 ns since 1601-01-01 UTC.
    const EPOCH_1601_TO_1970: i64 = 11_644_473_600;
    let ticks = utc_seconds
        .checked_add(EPOCH_1601_TO_1970)?
        .checked_mul(10_000_000)?;
    let ticks = u64::try_from(ticks).ok()?;
    let file_time = FILETIME {
        dwLowDateTime: ticks as u32,
        dwHighDateTime: (ticks >> 32) as u32,
    };
    // SAFETY: SYSTEMTIME is eight u16 fields; all-zero is a valid value.
    let mut utc: SYSTEMTIME = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers are valid for the call, which only writes `utc`.
    if unsafe { FileTimeToSystemTime(&file_time, &mut utc) } == 0 {
        return None;
    }
    // SAFETY: as above.
    let mut here: SYSTEMTIME = unsafe { std::mem::zeroed() };
    // SAFETY: a null zone means the current one; `utc` is valid and `here` is only written.
    if unsafe { SystemTimeToTzSpecificLocalTime(std::ptr::null(), &utc, &mut here) } == 0 {
        return None;
    }
    let naive = |s: &SYSTEMTIME| {
        NaiveDate::from_ymd_opt(s.wYear.into(), s.wMonth.into(), s.wDay.into())?.and_hms_opt(
            s.wHour.into(),
            s.wMinute.into(),
            s.wSecond.into(),
        )
    };
    let seconds = (naive(&here)? - naive(&utc)?).num_seconds();
    i32::try_from(seconds).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn the_local_time_is_the_same_moment_as_the_utc_one() {
        for ms in [0_i64, 1_700_000_000_000, 1_751_000_000_000] {
            let t = Utc
                .timestamp_millis_opt(ms)
                .single()
                .expect("a valid moment");
            let here = local(t);
            assert_eq!(here.timestamp_millis(), ms);
            assert!(here.offset().local_minus_utc().abs() <= 14 * 3600);
        }
    }
}
