//! Numbers written as text into a `String` without `core::fmt`: every `requests.csv` row holds
//! a dozen integers and a dozen fixed-decimal numbers, and every request id is digits, and
//! `format!` (a `String` per value, the formatter's dispatch, exact float printing through
//! `flt2dec`) cost more per request than the rest of turning an attempt into a row (issue 24).
//! Each function writes exactly what the `format!` rule named in its doc writes; the tests
//! compare them with `format!` on many values.

/// Appends `n` in decimal: `format!("{n}")`.
pub fn push_u64(out: &mut String, n: u64) {
    // Most numbers in a row are one digit (ITL counts, flags of counts).
    if n < 10 {
        out.push(char::from(b'0' + n as u8));
    } else {
        push_padded(out, n, 1);
    }
}

/// Appends `n` in decimal with at least `width` digits, zero-padded: `format!("{n:0width$}")`.
pub fn push_padded(out: &mut String, mut n: u64, width: usize) {
    let mut buf = [b'0'; 20];
    let mut i = buf.len();
    while n > 0 {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
    }
    let start = i.min(buf.len().saturating_sub(width.max(1)));
    for _ in buf.len()..width {
        out.push('0');
    }
    push_ascii(out, &buf[start..]);
}

/// Appends `n` in lower-case hex with at least `width` digits, zero-padded:
/// `format!("{n:0width$x}")`.
pub fn push_hex_padded(out: &mut String, mut n: u64, width: usize) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut buf = [b'0'; 16];
    let mut i = buf.len();
    while n > 0 {
        i -= 1;
        buf[i] = HEX[(n & 0xf) as usize];
        n >>= 4;
    }
    let start = i.min(buf.len().saturating_sub(width.max(1)));
    for _ in buf.len()..width {
        out.push('0');
    }
    push_ascii(out, &buf[start..]);
}

/// Largest number of decimals the exact fast path of [`push_fixed`] handles.
const MAX_FAST_DECIMALS: usize = 9;

/// Appends `v` with `decimals` digits after the point: `format!("{v:.decimals$}")`, i.e. the
/// exact binary value rounded to the nearest decimal, ties to even, with a `-` for every
/// negative value (`-0.000` included). Values whose scaled magnitude reaches 10^18, more than
/// [`MAX_FAST_DECIMALS`] decimals and non-finite values are left to `core::fmt`.
pub fn push_fixed(out: &mut String, v: f64, decimals: usize) {
    if !v.is_finite() || decimals > MAX_FAST_DECIMALS {
        return push_fixed_fmt(out, v, decimals);
    }
    let Some(n) = scaled(v, decimals) else {
        return push_fixed_fmt(out, v, decimals);
    };
    if v.is_sign_negative() {
        out.push('-');
    }
    push_point(out, n, decimals);
}

/// |v| × 10^decimals rounded to the nearest whole number, ties to even, computed exactly from
/// the double's mantissa and exponent; `None` from 10^18 on.
fn scaled(v: f64, decimals: usize) -> Option<u64> {
    const LIMIT: u128 = 1_000_000_000_000_000_000;
    let scale = 10u64.pow(decimals as u32);
    // |v| = mantissa × 2^exp exactly.
    let bits = v.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let fraction = bits & ((1u64 << 52) - 1);
    let (mantissa, exp) = if biased == 0 {
        (fraction, -1074)
    } else {
        (fraction | (1u64 << 52), biased - 1075)
    };
    let n: u128 = if exp >= 0 {
        // An integer of 2^52 or more; mantissa × scale < 2^53 × 10^9 < 2^83.
        if exp > 64 {
            return None;
        }
        let whole = u128::from(mantissa) * u128::from(scale);
        if whole > LIMIT >> exp {
            return None;
        }
        whole << exp
    } else {
        let shift = exp.unsigned_abs();
        if shift >= 100 {
            0 // mantissa × scale < 2^83 < half of 2^shift
        } else {
            round_shift(u128::from(mantissa) * u128::from(scale), shift)
        }
    };
    u64::try_from(n).ok().filter(|&n| u128::from(n) < LIMIT)
}

/// `x / 2^shift` rounded to the nearest, ties to even (`1 ≤ shift < 128`).
fn round_shift(x: u128, shift: u32) -> u128 {
    let whole = x >> shift;
    let rest = x & ((1u128 << shift) - 1);
    let half = 1u128 << (shift - 1);
    if rest > half || (rest == half && whole & 1 == 1) {
        whole + 1
    } else {
        whole
    }
}

/// Appends `n / 10^decimals` with `decimals` digits after the point, in one pass.
fn push_point(out: &mut String, mut n: u64, decimals: usize) {
    let mut buf = [b'0'; 24];
    let mut i = buf.len();
    for _ in 0..decimals {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
    }
    if decimals > 0 {
        i -= 1;
        buf[i] = b'.';
    }
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    push_ascii(out, &buf[i..]);
}

fn push_fixed_fmt(out: &mut String, v: f64, decimals: usize) {
    use std::fmt::Write as _;
    let _ = write!(out, "{v:.decimals$}");
}

/// Digits are ASCII: pushed one by one, which for a few bytes is cheaper than a UTF-8 check
/// and a `memcpy` call.
fn push_ascii(out: &mut String, digits: &[u8]) {
    out.reserve(digits.len());
    for &d in digits {
        out.push(char::from(d));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn fixed(v: f64, d: usize) -> String {
        let mut s = String::new();
        push_fixed(&mut s, v, d);
        s
    }

    #[test]
    fn integers_match_format() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(24);
        let mut values: Vec<u64> = vec![0, 1, 9, 10, 99, 100, u64::MAX, u64::MAX - 1];
        values.extend((0..64).map(|p| 1u64 << p));
        values.extend((0..20).map(|p| 10u64.pow(p)));
        values.extend((0..20).map(|p| 10u64.pow(p) - 1));
        values.extend((0..20_000).map(|i| rng.gen::<u64>() >> (i % 64)));
        for n in values {
            for width in [0, 1, 3, 4, 8, 12, 15, 20, 25] {
                let mut s = String::from("x");
                push_padded(&mut s, n, width);
                assert_eq!(s, format!("x{n:0width$}"), "{n} width {width}");
                let mut s = String::from("x");
                push_hex_padded(&mut s, n, width);
                assert_eq!(s, format!("x{n:0width$x}"), "{n} width {width}");
            }
            let mut s = String::new();
            push_u64(&mut s, n);
            assert_eq!(s, n.to_string());
        }
    }

    /// Values where the rule is easiest to get wrong: exact ties (k/2^j at the rounding
    /// digit), neighbours of ties, round-ups that carry into the integer part, negative zero,
    /// subnormals, and the edges of the fast path.
    #[test]
    fn fixed_matches_format_at_the_awkward_values() {
        let mut values = vec![
            0.0,
            -0.0,
            0.5,
            1.5,
            2.5,
            0.0625,
            0.0005,
            0.0015,
            0.9995,
            9.9995,
            -0.0001,
            -0.0005,
            999.9995,
            f64::MIN_POSITIVE,
            -f64::MIN_POSITIVE,
            5e-324,
            f64::EPSILON,
            1e9,
            1e12,
            1e15,
            1e17,
            9.999_999_999_999_999e17,
            1e18,
            1e19,
            1e300,
            f64::MAX,
            f64::MIN,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ];
        for j in 1..=24 {
            for k in 0..600u32 {
                let v = f64::from(k) / f64::from(1u32 << j);
                // The neighbouring doubles (v ≥ 0 here).
                let up = f64::from_bits(v.to_bits() + 1);
                let down = f64::from_bits(v.to_bits().saturating_sub(1));
                values.extend([v, -v, up, down, 1e6 + v, 123_456.0 + v]);
            }
        }
        for v in values {
            for d in 0..=12 {
                assert_eq!(fixed(v, d), format!("{v:.d$}"), "{v:e} with {d} decimals");
            }
        }
    }

    #[test]
    fn fixed_matches_format_on_random_values() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(2024);
        for i in 0..200_000 {
            let v = match i % 4 {
                // Any bit pattern (every exponent).
                0 => f64::from_bits(rng.gen()),
                // Latencies as they come: 0 to 10^7 ms with many digits.
                1 => rng.gen_range(0.0..1e7),
                // Small and negative.
                2 => rng.gen_range(-10.0..10.0),
                // Milliseconds measured in whole nanoseconds.
                _ => f64::from(rng.gen_range(0u32..u32::MAX)) / 1e6,
            };
            for d in [0, 1, 3, 4, 6, 9] {
                assert_eq!(fixed(v, d), format!("{v:.d$}"), "{v:e} with {d} decimals");
            }
        }
    }
}
