//! The ISO 8601 timestamps of transcripts (`2026-12-01T15:00:07.241Z`, what
//! JavaScript's `toISOString` writes) to and from milliseconds since the
//! Unix epoch.

use std::time::{SystemTime, UNIX_EPOCH};

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// `days_from_civil`).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day since 1970-01-01 (`civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

fn digits(s: &str, range: std::ops::Range<usize>) -> Option<u32> {
    let part = s.get(range)?;
    if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    part.parse().ok()
}

/// Milliseconds since the Unix epoch of `YYYY-MM-DDTHH:MM:SS[.fff…][Z|±HH:MM]`
/// (a space may stand for the `T`; no zone means UTC). `None` for anything
/// else.
pub(crate) fn parse_iso_ms(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (year, month, day) = (digits(s, 0..4)?, digits(s, 5..7)?, digits(s, 8..10)?);
    let (hour, minute, second) = (digits(s, 11..13)?, digits(s, 14..16)?, digits(s, 17..19)?);
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 59
    {
        return None;
    }
    let mut rest = &s[19..];
    let mut millis = 0i64;
    if let Some(frac) = rest.strip_prefix('.') {
        let n = frac.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return None;
        }
        let ms: String = frac[..n].chars().chain("00".chars()).take(3).collect();
        millis = ms.parse().ok()?;
        rest = &frac[n..];
    }
    let offset_minutes = match rest {
        "" | "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes()[0] {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let zone = &rest[1..];
            let (h, m) = match zone.len() {
                5 if zone.as_bytes()[2] == b':' => (digits(zone, 0..2)?, digits(zone, 3..5)?),
                4 => (digits(zone, 0..2)?, digits(zone, 2..4)?),
                2 => (digits(zone, 0..2)?, 0),
                _ => return None,
            };
            sign * i64::from(h * 60 + m)
        }
    };
    let days = days_from_civil(i64::from(year), month, day);
    let secs = days * 86_400 + i64::from(hour * 3600 + minute * 60 + second) - offset_minutes * 60;
    Some(secs * 1000 + millis)
}

/// `YYYY-MM-DDTHH:MM:SS.sssZ` for milliseconds since the Unix epoch.
pub(crate) fn format_iso_ms(ms: i64) -> String {
    let (days, in_day) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    let (y, m, d) = civil_from_days(days);
    let (h, rest) = (in_day / 3_600_000, in_day % 3_600_000);
    let (min, rest) = (rest / 60_000, rest % 60_000);
    let (s, milli) = (rest / 1000, rest % 1000);
    format!("{y:04}-{m:02}-{d:02}T{h:02}:{min:02}:{s:02}.{milli:03}Z")
}

/// Milliseconds since the Unix epoch of a time (rounded down).
pub(crate) fn system_time_ms(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_nanos().div_ceil(1_000_000)).unwrap_or(i64::MAX),
    }
}

/// Now, as the CLI writes timestamps.
pub(crate) fn now_iso() -> String {
    format_iso_ms(system_time_ms(SystemTime::now()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        assert_eq!(parse_iso_ms("1970-01-01T00:00:00.000Z"), Some(0));
        assert_eq!(
            parse_iso_ms("2026-12-01T15:00:06.795Z"),
            Some(1_796_137_206_795)
        );
        assert_eq!(
            parse_iso_ms("2026-12-01T16:00:06.7+01:00"),
            Some(1_796_137_206_700)
        );
        assert_eq!(parse_iso_ms("2026-12-01T15:00:06"), Some(1_796_137_206_000));
        assert_eq!(
            parse_iso_ms("2024-02-29T23:59:59.999999Z"),
            Some(1_709_251_199_999)
        );
        for bad in [
            "",
            "2026-12-01",
            "2026-13-01T00:00:00Z",
            "2026-12-01T00:00:00.Z",
            "x026-12-01T00:00:00Z",
            "2026-12-01T00:00:00+1",
        ] {
            assert_eq!(parse_iso_ms(bad), None, "{bad}");
        }
        for ms in [0, 1_796_137_206_795, 951_782_400_000, -1] {
            assert_eq!(parse_iso_ms(&format_iso_ms(ms)), Some(ms));
        }
        assert_eq!(format_iso_ms(1_796_137_206_795), "2026-12-01T15:00:06.795Z");
    }
}
