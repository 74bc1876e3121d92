//! The scenario's scalars, parsed inside the deserializer so that an error points at the
//! scalar's own line: human durations, whole numbers (≥ 1, ≥ 0), numbers, ladder steps and
//! percentages, each also read from a quoted string (what `${VAR}` interpolation leaves).

use serde::{Deserialize, Deserializer};
use std::time::Duration;

/// Parses a scalar's text inside the deserializer, so serde_yaml reports the scalar's own line.
struct ScalarVisitor<F>(&'static str, F);

impl<T, F: FnOnce(&str) -> Result<T, String>> serde::de::Visitor<'_> for ScalarVisitor<F> {
    type Value = T;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(self.0)
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<T, E> {
        (self.1)(v).map_err(E::custom)
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<T, E> {
        self.visit_str(&v.to_string())
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<T, E> {
        self.visit_str(&v.to_string())
    }
    fn visit_i128<E: serde::de::Error>(self, v: i128) -> Result<T, E> {
        self.visit_str(&v.to_string())
    }
    fn visit_u128<E: serde::de::Error>(self, v: u128) -> Result<T, E> {
        self.visit_str(&v.to_string())
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<T, E> {
        self.visit_str(&v.to_string())
    }
}

/// A whole-number type of the scenario, with its largest value for messages.
pub(super) trait Whole: TryFrom<i64> {
    const MAX: u64;
}
impl Whole for u32 {
    const MAX: u64 = u32::MAX as u64;
}
impl Whole for u64 {
    const MAX: u64 = i64::MAX as u64;
}

/// `text` as a whole number of at least `min` that fits in `T`. Numbers are read from their
/// text, so a quoted `"8"` (what `${VAR:-8}` in a flow mapping needs) is a number too.
fn parse_whole<T: Whole>(text: &str, min: i64) -> Result<T, String> {
    let t = text.trim();
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let too_large = || {
        format!(
            "`{t}` is too large; write a whole number from {min} to {}",
            T::MAX
        )
    };
    let too_small = || format!("`{t}` is not allowed here; write a whole number of {min} or more");
    match t.parse::<i64>() {
        Ok(n) if n < min => Err(too_small()),
        Ok(n) => T::try_from(n).map_err(|_| too_large()),
        Err(_) if digits(t.trim_start_matches('+')) => Err(too_large()),
        Err(_) if t.strip_prefix('-').is_some_and(digits) => Err(too_small()),
        Err(_) => Err(format!(
            "`{t}` is not a whole number; write a whole number of {min} or more"
        )),
    }
}

/// A human duration (`250ms`, `2s`, `1m30s`).
pub(super) struct Dur(pub(super) Duration);

impl<'de> Deserialize<'de> for Dur {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let parse = |t: &str| crate::util::duration::parse(t).map(Dur);
        d.deserialize_str(ScalarVisitor("a duration such as 2s", parse))
    }
}

pub(super) fn dur_or(d: Option<Dur>, default: Duration) -> Duration {
    d.map_or(default, |d| d.0)
}

/// A whole number ≥ 1 that fits in `T`.
#[derive(Clone, Copy)]
pub(super) struct Pos<T>(pub(super) T);

impl<'de, T: Whole> Deserialize<'de> for Pos<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let parse = |t: &str| parse_whole(t, 1).map(Pos);
        d.deserialize_any(ScalarVisitor("a whole number of 1 or more", parse))
    }
}

/// A whole number ≥ 0 that fits in `T`.
#[derive(Clone, Copy)]
pub(super) struct Count<T>(pub(super) T);

impl<'de, T: Whole> Deserialize<'de> for Count<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let parse = |t: &str| parse_whole(t, 0).map(Count);
        d.deserialize_any(ScalarVisitor("a whole number of 0 or more", parse))
    }
}

/// A number, also from a quoted string (after `${VAR}` interpolation).
pub(super) struct Num(pub(super) f64);

impl<'de> Deserialize<'de> for Num {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let parse = |t: &str| match t.trim().parse::<f64>() {
            Ok(v) => Ok(Num(v)),
            Err(_) => Err(format!("`{}` is not a number; write e.g. 0.7", t.trim())),
        };
        d.deserialize_any(ScalarVisitor("a number", parse))
    }
}

pub(super) fn pos<T>(p: Option<Pos<T>>) -> Option<T> {
    p.map(|p| p.0)
}

/// One ladder step (its own type for a message that says what a step is).
pub(super) struct Concurrency(pub(super) u32);

impl<'de> Deserialize<'de> for Concurrency {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let parse = |t: &str| match t.trim().parse::<i64>().map(u32::try_from) {
            Ok(Ok(c)) if c >= 1 => Ok(Concurrency(c)),
            _ => Err(format!(
                "step {t} is not allowed: each step is a whole number from 1 to {} \
                 (streams, requests/s or prompt tokens), e.g. ladder: [5, 10, 20]",
                u32::MAX
            )),
        };
        d.deserialize_any(ScalarVisitor("a whole number", parse))
    }
}

/// `10%`, `1pp` or a fraction such as `0.1`.
pub(super) struct Fraction(pub(super) f64);

impl<'de> Deserialize<'de> for Fraction {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let parse = |t: &str| parse_fraction(t).map(Fraction);
        d.deserialize_str(ScalarVisitor("a percentage such as 10%", parse))
    }
}

pub(super) fn parse_fraction(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let (num, scale) = match t.strip_suffix("pp").or_else(|| t.strip_suffix('%')) {
        Some(n) => (n.trim(), 0.01),
        None => (t, 1.0),
    };
    match num.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 && (scale < 1.0 || v <= 1.0) => Ok(v * scale),
        Ok(v) if v > 1.0 => Err(format!(
            "`{t}` is ambiguous; write `{t}%` or the fraction {}",
            v / 100.0
        )),
        _ => Err(format!(
            "`{t}` is not a percentage of 0 or more; write e.g. `10%`, `1pp` or 0.1"
        )),
    }
}
