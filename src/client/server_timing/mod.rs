//! The server's own account of one request, where it sends one: how long the request waited in
//! the server's queue, how long prefill and decode took. Pure parsing of what real servers send:
//! - the W3C `Server-Timing` header (`queue;dur=12.5, prefill;dur=80`; any server or gateway
//!   can send it; ladder's simulator sends its true queue and prefill times this way);
//! - TGI's `x-queue-time`, `x-inference-time` and `x-time-per-token` (whole milliseconds; TGI
//!   sets them on non-streaming answers, so streams usually carry none);
//! - OpenAI's (and Azure OpenAI's) `openai-processing-ms`: the time the API spent before it
//!   answered, queue and prefill together (OpenAI does not split it), kept as such
//!   (`processing_ms`), never as prefill: which of the two grew is for the findings to infer;
//!   (also under LiteLLM's `llm_provider-` prefix, as a LiteLLM gateway passes it on);
//! - a LiteLLM gateway's `x-litellm-response-duration-ms` less its `x-litellm-overhead-duration-ms`
//!   (the gateway's own work): the time the provider behind it took to start answering, queue
//!   and prefill together, the same kind of number;
//! - llama.cpp's `timings` object in the final chunk (`prompt_ms`: prefill, `predicted_ms`:
//!   decode, `cache_n`: prompt tokens served from its cache); llama.cpp reports no queue time.

use crate::model::TimingSource;
use serde::Deserialize;
use std::borrow::Cow;

/// The server's per-request timings, in milliseconds; each part only when the server said it.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ServerTimings {
    pub queue_ms: Option<f64>,
    pub prefill_ms: Option<f64>,
    pub decode_ms: Option<f64>,
    /// The server's time before it answered, queue and prefill together, not split
    /// (`openai-processing-ms`, LiteLLM's response duration less its overhead).
    pub processing_ms: Option<f64>,
    /// Prompt tokens the server served from its cache (llama.cpp `cache_n`).
    pub cached_tokens: Option<u64>,
    pub source: Option<TimingSource>,
}

impl ServerTimings {
    pub fn is_empty(&self) -> bool {
        self.queue_ms.is_none()
            && self.prefill_ms.is_none()
            && self.decode_ms.is_none()
            && self.processing_ms.is_none()
    }

    /// `other`'s parts where it has them, ours elsewhere (a body report overrides headers).
    pub fn or_from(self, other: ServerTimings) -> ServerTimings {
        if other.is_empty() {
            return ServerTimings {
                cached_tokens: other.cached_tokens.or(self.cached_tokens),
                ..self
            };
        }
        ServerTimings {
            queue_ms: other.queue_ms.or(self.queue_ms),
            prefill_ms: other.prefill_ms.or(self.prefill_ms),
            decode_ms: other.decode_ms.or(self.decode_ms),
            processing_ms: other.processing_ms.or(self.processing_ms),
            cached_tokens: other.cached_tokens.or(self.cached_tokens),
            source: other.source.or(self.source),
        }
    }
}

/// A duration in ms from a header or JSON value: finite and not negative, else nothing.
fn ms(v: f64) -> Option<f64> {
    (v.is_finite() && v >= 0.0).then_some(v)
}

/// The timings in a response's headers (`(name, value)` pairs, names in any case). The W3C
/// header wins over TGI's, TGI's over OpenAI's, OpenAI's over LiteLLM's, when a gateway adds
/// one to another's (the one nearest the model wins). Read for
/// every response, so nothing is allocated on the way (issue 24).
pub fn from_headers<'a>(headers: impl IntoIterator<Item = (&'a str, &'a str)>) -> ServerTimings {
    let mut st = ServerTimings::default();
    let mut sim = false;
    let (mut tgi, mut openai) = (ServerTimings::default(), ServerTimings::default());
    let (mut litellm_total, mut litellm_overhead) = (None, None);
    for (name, value) in headers {
        let num = || value.trim().parse::<f64>().ok().and_then(ms);
        if name.eq_ignore_ascii_case("server-timing") {
            for m in metrics(value) {
                sim |= m.desc.as_deref() == Some("ladder-sim");
                let Some(dur) = m.dur.and_then(ms) else {
                    continue;
                };
                let is = |names: &[&str]| names.iter().any(|n| m.name.eq_ignore_ascii_case(n));
                let slot = if is(&["queue", "queue_time", "wait"]) {
                    &mut st.queue_ms
                } else if is(&["prefill", "prompt"]) {
                    &mut st.prefill_ms
                } else if is(&["decode", "generation"]) {
                    &mut st.decode_ms
                } else {
                    continue;
                };
                slot.get_or_insert(dur);
            }
        } else if name.eq_ignore_ascii_case("x-queue-time") {
            tgi.queue_ms = num();
        } else if name.eq_ignore_ascii_case("x-inference-time") {
            // TGI: validation excluded, queue excluded; prefill and decode together.
            tgi.decode_ms = num();
        } else if name.eq_ignore_ascii_case("openai-processing-ms")
            || name.eq_ignore_ascii_case("llm_provider-openai-processing-ms")
        {
            // LiteLLM passes the provider's headers on with an `llm_provider-` prefix.
            openai.processing_ms = num();
        } else if name.eq_ignore_ascii_case("x-litellm-response-duration-ms") {
            litellm_total = num();
        } else if name.eq_ignore_ascii_case("x-litellm-overhead-duration-ms") {
            litellm_overhead = num();
        }
    }
    let litellm = ServerTimings {
        processing_ms: litellm_total.map(|t| (t - litellm_overhead.unwrap_or(0.0)).max(0.0)),
        ..ServerTimings::default()
    };
    first_found(
        st,
        sim,
        [
            (tgi, TimingSource::Tgi),
            (openai, TimingSource::OpenAi),
            (litellm, TimingSource::LiteLlm),
        ],
    )
}

/// Response headers that carry the provider's or gateway's id of a request, nearest the model
/// first: Azure OpenAI's `apim-request-id`, Anthropic's `request-id`, a provider's id passed on by
/// LiteLLM (`llm_provider-x-request-id`), OpenAI's `x-request-id` (a server that echoes ladder's
/// own is left out by the caller), a LiteLLM gateway's `x-litellm-call-id`, Portkey's
/// `x-portkey-trace-id`.
const REQUEST_ID_HEADERS: [&str; 7] = [
    "apim-request-id",
    "request-id",
    "llm_provider-apim-request-id",
    "llm_provider-x-request-id",
    "x-request-id",
    "x-litellm-call-id",
    "x-portkey-trace-id",
];

/// The id the server (or the gateway in front of it) gave this request, the one to quote to its
/// support, from the first of [`REQUEST_ID_HEADERS`] present with a non-empty value.
pub fn request_id<'a>(headers: &[(&str, &'a str)]) -> Option<&'a str> {
    REQUEST_ID_HEADERS.iter().find_map(|want| {
        headers
            .iter()
            .find(|(name, v)| name.eq_ignore_ascii_case(want) && !v.trim().is_empty())
            .map(|(_, v)| v.trim())
    })
}

/// Which headers' timings a response's record gets: `Server-Timing` (the simulator's own when it
/// said so), else the first of `others` (TGI's, OpenAI's processing time, LiteLLM's) that says
/// something.
fn first_found(
    mut st: ServerTimings,
    sim: bool,
    others: [(ServerTimings, TimingSource); 3],
) -> ServerTimings {
    if !st.is_empty() {
        st.source = Some(if sim {
            TimingSource::Sim
        } else {
            TimingSource::ServerTiming
        });
        return st;
    }
    others
        .into_iter()
        .find(|(t, _)| !t.is_empty())
        .map(|(t, source)| ServerTimings {
            source: Some(source),
            ..t
        })
        .unwrap_or_default()
}

/// One `Server-Timing` metric: `name;dur=123.4;desc="text"`.
#[derive(Debug, Clone, PartialEq)]
pub struct TimingMetric {
    pub name: String,
    pub dur: Option<f64>,
    pub desc: Option<String>,
}

/// Parses a `Server-Timing` header value (W3C Server Timing, `#server-timing-header-field`):
/// metrics separated by commas, parameters by semicolons, values plain tokens or quoted
/// strings. Malformed metrics are skipped, never an error: the header is advisory.
pub fn parse_server_timing(value: &str) -> Vec<TimingMetric> {
    metrics(value)
        .map(|m| TimingMetric {
            name: m.name.to_string(),
            dur: m.dur,
            desc: m.desc.map(Cow::into_owned),
        })
        .collect()
}

/// A metric borrowed from the header value (`desc` is owned only when it had escapes).
struct Metric<'a> {
    name: &'a str,
    dur: Option<f64>,
    desc: Option<Cow<'a, str>>,
}

/// The metrics of a `Server-Timing` value, in order, as [`parse_server_timing`] describes.
fn metrics(value: &str) -> impl Iterator<Item = Metric<'_>> {
    split_outside_quotes(value, b',').filter_map(|metric| {
        let mut parts = split_outside_quotes(metric, b';');
        let name = parts.next()?.trim();
        if name.is_empty() || name.bytes().any(|b| matches!(b, b'"' | b'=' | b' ')) {
            return None;
        }
        let mut m = Metric {
            name,
            dur: None,
            desc: None,
        };
        for p in parts {
            let Some((k, v)) = p.split_once('=') else {
                continue;
            };
            let k = k.trim();
            if k.eq_ignore_ascii_case("dur") && m.dur.is_none() {
                m.dur = unquote(v.trim()).parse().ok();
            } else if k.eq_ignore_ascii_case("desc") && m.desc.is_none() {
                m.desc = Some(unquote(v.trim()));
            }
        }
        Some(m)
    })
}

/// The pieces of `s` between `sep`s that are not inside a quoted string (a `\` inside quotes
/// escapes the next character); always at least one piece. Bytes, not chars: the separators,
/// quotes and backslash are ASCII, and the other bytes of an escaped multi-byte character
/// match none of them.
fn split_outside_quotes(s: &str, sep: u8) -> impl Iterator<Item = &str> {
    let mut rest = Some(s);
    std::iter::from_fn(move || {
        let s = rest?;
        let (mut quoted, mut escaped) = (false, false);
        for (i, &c) in s.as_bytes().iter().enumerate() {
            match c {
                _ if escaped => escaped = false,
                b'\\' if quoted => escaped = true,
                b'"' => quoted = !quoted,
                c if c == sep && !quoted => {
                    rest = Some(&s[i + 1..]);
                    return Some(&s[..i]);
                }
                _ => {}
            }
        }
        rest = None;
        Some(s)
    })
}

/// A quoted string's text (escapes removed), or the token as it is.
fn unquote(v: &str) -> Cow<'_, str> {
    match v.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
        Some(inner) if !inner.contains('\\') => Cow::Borrowed(inner),
        Some(inner) => {
            let mut out = String::with_capacity(inner.len());
            let mut chars = inner.chars();
            while let Some(c) = chars.next() {
                if c == '\\' {
                    if let Some(n) = chars.next() {
                        out.push(n);
                    }
                } else {
                    out.push(c);
                }
            }
            Cow::Owned(out)
        }
        None => Cow::Borrowed(v),
    }
}

/// llama.cpp's `timings` object (server `server_slot_stats::to_json`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct LlamaTimings {
    prompt_ms: Option<f64>,
    predicted_ms: Option<f64>,
    cache_n: Option<f64>,
}

impl LlamaTimings {
    pub(crate) fn to_server_timings(&self) -> ServerTimings {
        ServerTimings {
            queue_ms: None,
            prefill_ms: self.prompt_ms.and_then(ms),
            decode_ms: self.predicted_ms.and_then(ms),
            processing_ms: None,
            cached_tokens: self
                .cache_n
                .filter(|n| n.is_finite() && *n >= 0.0 && n.fract() == 0.0)
                .map(|n| n as u64),
            source: Some(TimingSource::LlamaCpp),
        }
    }
}

#[cfg(test)]
mod tests;
