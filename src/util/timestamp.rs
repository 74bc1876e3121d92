//! RFC 3339 timestamps (`2026-03-01T12:00:00.250Z`, `…+02:00`) as milliseconds since the Unix
//! epoch, for traces that stamp requests with wall-clock times. Pure and small, so no date crate
//! is needed for the one format ladder reads.

/// Milliseconds since 1970-01-01T00:00:00Z, or `None` when `s` is not RFC 3339 (a date, `T` or
/// a space, a time with optional fraction, and `Z` or an offset).
pub fn rfc3339_ms(s: &str) -> Option<f64> {
    let b = s.trim().as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let num = |from: usize, to: usize| -> Option<i64> {
        let t = std::str::from_utf8(b.get(from..to)?).ok()?;
        t.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| t.parse().ok())?
    };
    let (y, mo, d) = (num(0, 4)?, num(5, 7)?, num(8, 10)?);
    let (h, mi, sec) = (num(11, 13)?, num(14, 16)?, num(17, 19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let mut i = 19;
    let mut frac = 0.0;
    if b.get(i) == Some(&b'.') {
        let start = i + 1;
        i = start;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        let digits = std::str::from_utf8(&b[start..i]).ok()?;
        if digits.is_empty() {
            return None;
        }
        frac = format!("0.{digits}").parse::<f64>().ok()?;
    }
    let offset_min = match b.get(i..)? {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let hh = i64::from((*h1 as char).to_digit(10)? * 10 + (*h2 as char).to_digit(10)?);
            let mm = i64::from((*m1 as char).to_digit(10)? * 10 + (*m2 as char).to_digit(10)?);
            let v = hh * 60 + mm;
            if *sign == b'-' {
                -v
            } else {
                v
            }
        }
        _ => return None,
    };
    let days = days_from_civil(y, mo, d);
    let secs = days * 86_400 + h * 3600 + mi * 60 + sec - offset_min * 60;
    Some(secs as f64 * 1000.0 + frac * 1000.0)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_utc_offsets_and_fractions() {
        assert_eq!(rfc3339_ms("1970-01-01T00:00:00Z"), Some(0.0));
        assert_eq!(rfc3339_ms("1970-01-02T00:00:01.5Z"), Some(86_401_500.0));
        assert_eq!(
            rfc3339_ms("2026-03-01T12:00:00+02:00"),
            rfc3339_ms("2026-03-01T10:00:00Z")
        );
        // 2000-03-01 is day 11017 (leap year handling around February).
        assert_eq!(
            rfc3339_ms("2000-03-01T00:00:00Z"),
            Some(11_017.0 * 86_400_000.0)
        );
    }

    #[test]
    fn refuses_what_is_not_rfc_3339() {
        for bad in [
            "2026-03-01",
            "2026-13-01T00:00:00Z",
            "2026-03-01T00:00:00",
            "2026-03-01T00:00:00.Z",
            "yesterday at noon",
            "2026-03-01T00:00:00+2",
        ] {
            assert_eq!(rfc3339_ms(bad), None, "{bad}");
        }
    }
}
