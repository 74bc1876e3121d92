//! Rate-limit headers and bodies of 429 responses: how long to wait, and whether the wall is
//! about requests or tokens (the "rate-limit wall" of docs/metrics.md), plus telling "too fast" apart from
//! "out of money" (quota/billing 429s, which are never retried).
//!
//! Pure: headers come in as `(name, value)` pairs and the time the response arrived is given;
//! nothing here reads a clock. An HTTP date in `Retry-After` is turned into a wait against the
//! response's own `Date` header, else against the arrival time; Anthropic's RFC 3339 reset
//! stamps are not turned into waits.

use super::chunk::InBandError;
use crate::model::LimitKind;
use std::time::{Duration, SystemTime};

/// What a rate-limited response says about the limit.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RateLimitInfo {
    /// `retry-after-ms`, else `retry-after` (seconds), else the reset time of the exhausted
    /// OpenAI limit (`x-ratelimit-reset-requests`/`-tokens`).
    pub retry_after: Option<Duration>,
    pub kind: Option<LimitKind>,
    /// The limit of `kind` its header or its message gave (per minute; in flight for a
    /// concurrency limit).
    pub limit: Option<u64>,
    /// The smallest share left of any limit the response's rate-limit headers reported.
    pub headroom: Option<f64>,
}

/// One limit's headers: OpenAI's `x-ratelimit-{remaining,limit}-<suffix>` (`input-tokens` and
/// `output-tokens` as LiteLLM's deployment ITPM/OTPM), Anthropic's
/// `anthropic-ratelimit-<infix>-{remaining,limit}`.
struct LimitHeaders {
    kind: LimitKind,
    openai: Option<&'static str>,
    anthropic: &'static str,
}

/// The limits headers report, the specific before Anthropic's `tokens` (its tightest token
/// limit, at zero whenever one of them is).
const LIMIT_HEADERS: [LimitHeaders; 4] = [
    LimitHeaders {
        kind: LimitKind::InputTokens,
        openai: Some("input-tokens"),
        anthropic: "input-tokens",
    },
    LimitHeaders {
        kind: LimitKind::OutputTokens,
        openai: Some("output-tokens"),
        anthropic: "output-tokens",
    },
    LimitHeaders {
        kind: LimitKind::Tokens,
        openai: Some("tokens"),
        anthropic: "tokens",
    },
    LimitHeaders {
        kind: LimitKind::Requests,
        openai: Some("requests"),
        anthropic: "requests",
    },
];

/// Whether a header's name is a rate-limit header's (`x-ratelimit-…`, `anthropic-ratelimit-…`).
fn is_ratelimit_name(name: &str) -> bool {
    let name = name.trim().as_bytes();
    [&b"x-ratelimit-"[..], &b"anthropic-ratelimit-"[..]]
        .iter()
        .any(|p| name.len() >= p.len() && name[..p.len()].eq_ignore_ascii_case(p))
}

/// A header value by name (case-insensitive).
fn header<'a>(headers: &[(&str, &'a str)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k.trim().eq_ignore_ascii_case(name))
        .map(|(_, v)| v.trim())
}

/// `(remaining, limit)` of one limit's headers, each when sent.
fn limit_headers(headers: &[(&str, &str)], h: &LimitHeaders) -> (Option<f64>, Option<u64>) {
    let names = |what: &str| {
        let openai = h.openai.map(|s| format!("x-ratelimit-{what}-{s}"));
        let anthropic = format!("anthropic-ratelimit-{}-{what}", h.anthropic);
        [openai, Some(anthropic)]
    };
    let get = |what: &str| {
        names(what)
            .into_iter()
            .flatten()
            .find_map(|n| header(headers, &n))
    };
    let remaining = get("remaining").and_then(|v| v.parse::<f64>().ok());
    let limit = get("limit").and_then(|v| v.parse::<f64>().ok());
    (remaining, limit.filter(|l| *l >= 1.0).map(|l| l as u64))
}

/// The share left of limits kept per scope, `x-ratelimit-<scope>-remaining-<suffix>` beside
/// `x-ratelimit-<scope>-limit-<suffix>` (a gateway's per key, user or team: LiteLLM's
/// `x-ratelimit-api_key-remaining-tokens`), one per scope that sent both.
fn scoped_shares<'a>(headers: &'a [(&str, &str)]) -> impl Iterator<Item = f64> + 'a {
    headers.iter().filter_map(move |(name, value)| {
        if !is_ratelimit_name(name) {
            return None;
        }
        let name = name.trim().to_ascii_lowercase();
        let rest = name.strip_prefix("x-ratelimit-")?;
        let (scope, suffix) = rest.split_once("-remaining-")?;
        if scope.is_empty() || !LIMIT_HEADERS.iter().any(|h| h.openai == Some(suffix)) {
            return None;
        }
        let remaining = value.trim().parse::<f64>().ok()?;
        let limit = header(headers, &format!("x-ratelimit-{scope}-limit-{suffix}"))?
            .parse::<f64>()
            .ok()
            .filter(|l| *l >= 1.0)?;
        Some((remaining / limit).clamp(0.0, 1.0))
    })
}

/// The smallest share left of any limit the headers report (`remaining / limit`), for every
/// response, not only 429s.
pub fn headroom(headers: &[(&str, &str)]) -> Option<f64> {
    // Most servers one runs send none: one look at the names, nothing built.
    if !headers.iter().any(|(k, _)| is_ratelimit_name(k)) {
        return None;
    }
    LIMIT_HEADERS
        .iter()
        .filter_map(|h| match limit_headers(headers, h) {
            (Some(r), Some(l)) => Some((r / l as f64).clamp(0.0, 1.0)),
            _ => None,
        })
        .chain(scoped_shares(headers))
        .min_by(f64::total_cmp)
}

/// Reads the rate-limit headers (names case-insensitive) and, when they do not decide, the
/// body's error, of a 429 (or 503) response that arrived at `received` (our clock).
pub fn parse_rate_limit(
    headers: &[(&str, &str)],
    body_error: Option<&InBandError>,
    received: SystemTime,
) -> RateLimitInfo {
    let get = |name: &str| header(headers, name);
    let exhausted: Vec<LimitKind> = LIMIT_HEADERS
        .iter()
        .filter(|h| limit_headers(headers, h).0.is_some_and(|r| r <= 0.0))
        .map(|h| h.kind)
        .collect();
    // Anthropic's `tokens` is at zero whenever its input or output limit is: the specific wins.
    let specific: Vec<LimitKind> = match exhausted.as_slice() {
        [k @ (LimitKind::InputTokens | LimitKind::OutputTokens), LimitKind::Tokens] => vec![*k],
        other => other.to_vec(),
    };
    let kind = match specific.as_slice() {
        [k] => Some(*k),
        _ => body_error.and_then(kind_from_error),
    };
    let limit = kind.and_then(|k| {
        LIMIT_HEADERS
            .iter()
            .find(|h| h.kind == k)
            .and_then(|h| limit_headers(headers, h).1)
            .or_else(|| body_error.and_then(|e| limit_from_message(&e.message)))
    });
    let reset = match kind {
        Some(LimitKind::Tokens) => get("x-ratelimit-reset-tokens"),
        Some(LimitKind::Requests) => get("x-ratelimit-reset-requests"),
        _ => None,
    };
    let retry_after = get("retry-after-ms")
        .and_then(|v| non_negative(v).map(|ms| Duration::from_secs_f64(ms / 1000.0)))
        .or_else(|| {
            get("retry-after").and_then(|v| {
                non_negative(v)
                    .map(Duration::from_secs_f64)
                    .or_else(|| until_http_date(v, get("date"), received))
            })
        })
        .or_else(|| reset.and_then(parse_go_duration));
    RateLimitInfo {
        retry_after,
        kind,
        limit,
        headroom: headroom(headers),
    }
}

/// The limit a 429's message states: OpenAI's "Limit 30000", Anthropic's "of 30,000 input
/// tokens per minute", "allows 8 requests in flight", a gateway's "Current limit: 2000" or
/// "TPM limit=2000".
fn limit_from_message(msg: &str) -> Option<u64> {
    let lower = msg.to_lowercase();
    let number_after = |at: usize| -> Option<u64> {
        let digits: String = lower[at..]
            .trim_start()
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == ',')
            .filter(char::is_ascii_digit)
            .collect();
        digits.parse().ok().filter(|n| *n > 0)
    };
    for cue in ["limit ", "limit: ", "limit=", " of ", "allows "] {
        if let Some(n) = lower
            .match_indices(cue)
            .find_map(|(i, _)| number_after(i + cue.len()))
        {
            return Some(n);
        }
    }
    None
}

/// `Retry-After: <HTTP-date>` (RFC 9110) as a wait: the date minus the response's own `Date`
/// header (the server's clock on both sides, so the two machines' clocks need not agree); a
/// response without a readable `Date` is measured against `received`, the time it arrived by
/// our clock. A date in the past is no wait.
fn until_http_date(retry_at: &str, date: Option<&str>, received: SystemTime) -> Option<Duration> {
    let at = httpdate::parse_http_date(retry_at).ok()?;
    let now = date
        .and_then(|d| httpdate::parse_http_date(d).ok())
        .unwrap_or(received);
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// Whether a 429's error means "out of money or over a spend limit" rather than "too fast":
/// OpenAI `insufficient_quota`, billing limits, exhausted credits or balance.
pub fn is_quota_error(err: &InBandError) -> bool {
    const TYPES: [&str; 5] = [
        "insufficient_quota",
        "billing_hard_limit_reached",
        "billing_not_active",
        "insufficient_credits",
        "insufficient_balance",
    ];
    const PHRASES: [&str; 8] = [
        "exceeded your current quota",
        "check your plan and billing",
        "credit balance is too low",
        "insufficient credits",
        "insufficient balance",
        "spend limit",
        "spending limit",
        "reached your specified api usage limits",
    ];
    let ty = err.error_type.as_deref().unwrap_or("").to_ascii_lowercase();
    let msg = err.message.to_lowercase();
    TYPES.contains(&ty.as_str()) || PHRASES.iter().any(|p| msg.contains(p))
}

/// A Go `time.Duration` string as OpenAI sends in `x-ratelimit-reset-*`: `6m0s`, `20ms`,
/// `59.5s`, `1h2m3.5s`, `0`. Units: ns, us/µs/μs, ms, s, m, h. `None` for anything else,
/// including negative durations.
pub fn parse_go_duration(s: &str) -> Option<Duration> {
    let s = s.trim();
    let s = s.strip_prefix('+').unwrap_or(s);
    if s == "0" {
        return Some(Duration::ZERO);
    }
    if s.is_empty() {
        return None;
    }
    let mut rest = s;
    let mut total: u128 = 0; // nanoseconds
    while !rest.is_empty() {
        let int_len = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let (int_part, after) = rest.split_at(int_len);
        let (frac_part, after) = match after.strip_prefix('.') {
            Some(a) => {
                let n = a.find(|c: char| !c.is_ascii_digit()).unwrap_or(a.len());
                a.split_at(n)
            }
            None => ("", after),
        };
        if int_part.is_empty() && frac_part.is_empty() {
            return None;
        }
        let unit_len = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, after) = after.split_at(unit_len);
        let unit_ns: u128 = match unit {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return None,
        };
        let int: u128 = if int_part.is_empty() {
            0
        } else {
            int_part.parse().ok()?
        };
        total = total.checked_add(int.checked_mul(unit_ns)?)?;
        // Fraction: at most 18 digits matter at nanosecond resolution.
        let frac_digits = &frac_part[..frac_part.len().min(18)];
        if !frac_digits.is_empty() {
            let frac: u128 = frac_digits.parse().ok()?;
            let scale = 10u128.pow(frac_digits.len() as u32);
            total = total.checked_add(frac * unit_ns / scale)?;
        }
        rest = after;
    }
    let nanos = u64::try_from(total).ok()?;
    Some(Duration::from_nanos(nanos))
}

fn non_negative(v: &str) -> Option<f64> {
    v.parse::<f64>()
        .ok()
        .filter(|n| n.is_finite() && *n >= 0.0 && *n < 1e12)
}

/// Which limit an error message or code talks about; `None` when it names both or neither.
fn kind_from_error(err: &InBandError) -> Option<LimitKind> {
    let ty = err.error_type.as_deref().unwrap_or("").to_ascii_lowercase();
    let msg = err.message.to_lowercase();
    let words: Vec<&str> = msg
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let has_word = |w: &str| words.contains(&w);
    const TOKEN_PHRASES: [&str; 6] = [
        "tokens per min",
        "tokens per day",
        "tokens per hour",
        "token rate limit",
        "request tokens",
        "limit type: tokens",
    ];
    const REQUEST_PHRASES: [&str; 6] = [
        "requests per min",
        "requests per day",
        "requests per hour",
        "number of requests",
        "request rate limit",
        "limit type: requests",
    ];
    let tokens = ty.starts_with("tokens")
        || TOKEN_PHRASES.iter().any(|p| msg.contains(p))
        || ["tpm", "tpd", "itpm", "otpm"].iter().any(|w| has_word(w))
        || msg.contains("input tokens per")
        || msg.contains("output tokens per");
    let requests = ty == "requests"
        || REQUEST_PHRASES.iter().any(|p| msg.contains(p))
        || ["rpm", "rpd"].iter().any(|w| has_word(w));
    // "parallel": a gateway's `max_parallel_requests` (LiteLLM's "Limit type:
    // max_parallel_requests").
    if has_word("concurrent")
        || has_word("concurrency")
        || has_word("parallel")
        || msg.contains("in flight")
    {
        return Some(LimitKind::Concurrency);
    }
    let input = msg.contains("input tokens per") || has_word("itpm");
    let output = msg.contains("output tokens per") || has_word("otpm");
    match (tokens, requests, input, output) {
        (true, false, true, false) => Some(LimitKind::InputTokens),
        (true, false, false, true) => Some(LimitKind::OutputTokens),
        (true, false, _, _) => Some(LimitKind::Tokens),
        (false, true, _, _) => Some(LimitKind::Requests),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
