//! Human-readable durations (`250ms`, `2s`, `1m`, `1m30s`) for scenario files and flags, with
//! serde helpers so every duration field in YAML reads and writes the same way; and the one rule
//! by which measured milliseconds are written for people.

use serde::{Deserialize, Deserializer, Serializer};
use std::time::Duration;

/// Parses `250ms`, `2s`, `1.5s`, `1m`, `1m30s`, `2h`, `100us`. A bare `0` is zero.
pub fn parse(text: &str) -> Result<Duration, String> {
    let s = text.trim();
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    if s.is_empty() {
        return Err("empty duration (write e.g. `250ms`, `2s` or `1m`)".into());
    }
    let mut total = 0f64;
    let mut rest = s;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if num_len == 0 {
            return Err(bad(text));
        }
        let value: f64 = rest[..num_len].parse().map_err(|_| bad(text))?;
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = rest[..unit_len].trim();
        rest = &rest[unit_len..];
        let seconds_per_unit = match unit {
            "ns" => 1e-9,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" | "sec" | "secs" => 1.0,
            "m" | "min" | "mins" => 60.0,
            "h" | "hr" | "hrs" => 3600.0,
            "" => {
                return Err(format!(
                    "duration `{text}` has no unit (write e.g. `{text}ms` or `{text}s`)"
                ))
            }
            _ => return Err(bad(text)),
        };
        total += value * seconds_per_unit;
    }
    if !total.is_finite() || total > 1e9 {
        return Err(bad(text));
    }
    Ok(Duration::from_secs_f64(total))
}

fn bad(text: &str) -> String {
    format!("invalid duration `{text}` (write e.g. `250ms`, `2s`, `1m` or `1m30s`)")
}

/// Formats a duration the way `parse` reads it, shortest exact unit first (`250ms`, `2s`, `1m`).
pub fn format(d: Duration) -> String {
    let nanos = d.as_nanos();
    if nanos == 0 {
        return "0s".into();
    }
    if nanos % 60_000_000_000 == 0 {
        format!("{}m", nanos / 60_000_000_000)
    } else if nanos % 1_000_000_000 == 0 {
        format!("{}s", nanos / 1_000_000_000)
    } else if nanos % 1_000_000 == 0 {
        format!("{}ms", nanos / 1_000_000)
    } else if nanos % 1_000 == 0 {
        format!("{}us", nanos / 1_000)
    } else {
        format!("{}ns", nanos)
    }
}

/// `#[serde(with = "crate::util::duration::serde_human")]`
pub mod serde_human {
    use super::*;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format(*d))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let raw = HumanRaw::deserialize(d)?;
        raw.into_duration().map_err(serde::de::Error::custom)
    }

    /// A duration as written in YAML: a string with a unit, or a bare number of seconds only when 0.
    #[derive(Deserialize)]
    #[serde(untagged)]
    pub(super) enum HumanRaw {
        Text(String),
        Number(f64),
    }

    impl HumanRaw {
        pub(super) fn into_duration(self) -> Result<Duration, String> {
            match self {
                HumanRaw::Text(t) => parse(&t),
                HumanRaw::Number(0.0) => Ok(Duration::ZERO),
                HumanRaw::Number(n) => Err(format!(
                    "duration `{n}` has no unit (write e.g. `{n}ms` or `{n}s`)"
                )),
            }
        }
    }
}

/// `#[serde(with = "crate::util::duration::serde_human_opt", default)]`
pub mod serde_human_opt {
    use super::*;

    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_str(&format(*d)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        let raw = Option::<serde_human::HumanRaw>::deserialize(d)?;
        match raw {
            None => Ok(None),
            Some(r) => r
                .into_duration()
                .map(Some)
                .map_err(serde::de::Error::custom),
        }
    }
}

/// Milliseconds for people, the one rule every output follows: one decimal below 10 ms
/// (`8.3 ms`), whole milliseconds below 1 s (`212 ms`), then seconds with up to two decimals
/// below 10 s (`1 s`, `1.5 s`, `2.06 s`) and one above (`12.3 s`). Negative values keep their
/// sign; `-` when not finite. Bounds a user wrote (`1s`, `50ms`) come out as written.
pub fn ms_text(v: f64) -> String {
    if !v.is_finite() {
        return "-".to_string();
    }
    let sign = if v < 0.0 { "-" } else { "" };
    let a = v.abs();
    let trim = |s: String| s.trim_end_matches('0').trim_end_matches('.').to_string();
    if (a * 10.0).round() < 100.0 {
        format!("{sign}{a:.1} ms")
    } else if a.round() < 1000.0 {
        format!("{sign}{a:.0} ms")
    } else if (a / 10.0).round() < 1000.0 {
        format!("{sign}{} s", trim(format!("{:.2}", a / 1000.0)))
    } else {
        format!("{sign}{} s", trim(format!("{:.1}", a / 1000.0)))
    }
}

/// [`ms_text`] with a sign always: `+4.0 ms`, `-12 ms`, `+1.6 s`.
pub fn signed_ms_text(v: f64) -> String {
    if v.is_finite() && v >= 0.0 {
        format!("+{}", ms_text(v))
    } else {
        ms_text(v)
    }
}

/// A table cell of milliseconds, the column's header naming the unit: [`ms_text`]'s precision,
/// but whole milliseconds up to 10 s so that a column reads in one unit (`8.3`, `212`, `2060`,
/// then `12.3 s`); `-` when not finite.
pub fn ms_figure(v: f64) -> String {
    if !v.is_finite() {
        return "-".to_string();
    }
    let sign = if v < 0.0 { "-" } else { "" };
    let a = v.abs();
    if (a * 10.0).round() < 100.0 {
        format!("{sign}{a:.1}")
    } else if a.round() < 10_000.0 {
        format!("{sign}{a:.0}")
    } else {
        format!("{sign}{:.1} s", a / 1000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_common_forms() {
        assert_eq!(parse("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse("2s").unwrap(), Duration::from_secs(2));
        assert_eq!(parse("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse("1m").unwrap(), Duration::from_secs(60));
        assert_eq!(parse("1m30s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse("6m0s").unwrap(), Duration::from_secs(360));
        assert_eq!(parse("100us").unwrap(), Duration::from_micros(100));
        assert_eq!(parse("0").unwrap(), Duration::ZERO);
        assert_eq!(parse(" 20ms ").unwrap(), Duration::from_millis(20));
    }

    #[test]
    fn rejects_bad_forms() {
        for bad in ["", "ms", "5", "5 parsecs", "-1s", "1.2.3s", "s5"] {
            assert!(parse(bad).is_err(), "{bad} should fail");
        }
        assert!(parse("5").unwrap_err().contains("no unit"));
    }

    #[test]
    fn format_round_trips() {
        for d in [
            Duration::from_millis(250),
            Duration::from_secs(2),
            Duration::from_secs(60),
            Duration::from_micros(15),
            Duration::ZERO,
        ] {
            assert_eq!(parse(&format(d)).unwrap(), d);
        }
    }

    #[test]
    fn milliseconds_are_written_by_one_rule() {
        use super::{ms_figure, ms_text, signed_ms_text};
        for (v, figure, text) in [
            (8.34, "8.3", "8.3 ms"),
            (0.0, "0.0", "0.0 ms"),
            (9.96, "10", "10 ms"),
            (212.4, "212", "212 ms"),
            (999.6, "1000", "1 s"),
            (1_000.0, "1000", "1 s"),
            (1_500.0, "1500", "1.5 s"),
            (2_061.0, "2061", "2.06 s"),
            (9_999.4, "9999", "10 s"),
            (9_999.6, "10.0 s", "10 s"),
            (12_345.0, "12.3 s", "12.3 s"),
            (-1_693.2, "-1693", "-1.69 s"),
            (-4.04, "-4.0", "-4.0 ms"),
            (f64::NAN, "-", "-"),
            (f64::INFINITY, "-", "-"),
        ] {
            assert_eq!(ms_figure(v), figure, "{v}");
            assert_eq!(ms_text(v), text, "{v}");
        }
        assert_eq!(signed_ms_text(4.0), "+4.0 ms");
        assert_eq!(signed_ms_text(1_600.0), "+1.6 s");
        assert_eq!(signed_ms_text(-12.0), "-12 ms");
    }
}
