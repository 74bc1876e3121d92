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
mod tests {
    use super::*;

    #[test]
    fn server_timing_header_as_the_w3c_examples_write_it() {
        let m = parse_server_timing(
            r#"miss, db;dur=53, app;dur=47.2, cache;desc="Cache Read";dur=23.2, q;desc="a, \"b\"; c""#,
        );
        let names: Vec<&str> = m.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["miss", "db", "app", "cache", "q"]);
        assert_eq!(m[1].dur, Some(53.0));
        assert_eq!(m[3].dur, Some(23.2));
        assert_eq!(m[3].desc.as_deref(), Some("Cache Read"));
        assert_eq!(m[4].desc.as_deref(), Some(r#"a, "b"; c"#));
        assert_eq!(m[0].dur, None);
        // Garbage is skipped, not an error.
        assert!(parse_server_timing(r#"=x, "a";dur=1, ;;"#).is_empty());
    }

    #[test]
    fn headers_map_onto_queue_prefill_decode_with_their_source() {
        let st = from_headers([
            (
                "Server-Timing",
                r#"queue;dur=120.5;desc="ladder-sim", prefill;dur=80"#,
            ),
            ("content-type", "text/event-stream"),
        ]);
        assert_eq!(st.queue_ms, Some(120.5));
        assert_eq!(st.prefill_ms, Some(80.0));
        assert_eq!(st.decode_ms, None);
        assert_eq!(st.source, Some(TimingSource::Sim));
        let st = from_headers([("server-timing", "cfL4;desc=\"rtt=12\", queue;dur=3")]);
        assert_eq!(
            (st.queue_ms, st.source),
            (Some(3.0), Some(TimingSource::ServerTiming))
        );
        // A CDN's Server-Timing without our names is not a server report.
        assert!(from_headers([("server-timing", "cdn-cache;desc=HIT, edge;dur=4")]).is_empty());
        let st = from_headers([
            ("x-queue-time", "1520"),
            ("x-inference-time", "2210"),
            ("x-time-per-token", "21"),
        ]);
        assert_eq!(
            (st.queue_ms, st.decode_ms, st.source),
            (Some(1520.0), Some(2210.0), Some(TimingSource::Tgi))
        );
        // Queue and prefill together: never read as prefill.
        let st = from_headers([("openai-processing-ms", "412")]);
        assert_eq!(
            (st.processing_ms, st.prefill_ms, st.source),
            (Some(412.0), None, Some(TimingSource::OpenAi))
        );
        // A LiteLLM gateway: its response duration less its own overhead; the provider's own
        // header, when the gateway passes it on, is nearer the model and wins.
        let litellm = [
            ("x-litellm-response-duration-ms", "530.5"),
            ("x-litellm-overhead-duration-ms", "30.5"),
            ("x-litellm-attempted-retries", "0"),
        ];
        let st = from_headers(litellm);
        assert_eq!(
            (st.processing_ms, st.source),
            (Some(500.0), Some(TimingSource::LiteLlm))
        );
        let st = from_headers(litellm.into_iter().chain([("openai-processing-ms", "412")]));
        assert_eq!(st.source, Some(TimingSource::OpenAi));
        // The request's id as the provider gave it, the provider's before a gateway's.
        let azure = [
            ("x-request-id", "ladder-1"),
            ("x-litellm-call-id", "9acf"),
            ("llm_provider-apim-request-id", " 0bd6 "),
        ];
        assert_eq!(super::request_id(&azure), Some("0bd6"));
        assert_eq!(
            super::request_id(&[("Request-Id", "req_011")]),
            Some("req_011")
        );
        assert_eq!(super::request_id(&[("x-request-id", " ")]), None);
        let st = from_headers(
            litellm
                .into_iter()
                .chain([("llm_provider-openai-processing-ms", "401")]),
        );
        assert_eq!(
            (st.processing_ms, st.source),
            (Some(401.0), Some(TimingSource::OpenAi))
        );
        // Negative or non-numeric values are dropped.
        assert!(
            from_headers([("openai-processing-ms", "-3"), ("x-queue-time", "soon")]).is_empty()
        );
        assert_eq!(from_headers([]), ServerTimings::default());
    }

    #[test]
    fn llama_cpp_timings_and_the_body_overriding_headers() {
        let t: LlamaTimings = serde_json::from_str(
            r#"{"cache_n":3,"prompt_n":9,"prompt_ms":41.2,"prompt_per_token_ms":4.5,
                "predicted_n":32,"predicted_ms":690.5,"predicted_per_second":46.3}"#,
        )
        .unwrap();
        let st = t.to_server_timings();
        assert_eq!(st.prefill_ms, Some(41.2));
        assert_eq!(st.decode_ms, Some(690.5));
        assert_eq!(st.cached_tokens, Some(3));
        assert_eq!(st.queue_ms, None);
        let headers = from_headers([("server-timing", "queue;dur=7")]);
        let both = headers.or_from(st);
        assert_eq!(both.queue_ms, Some(7.0));
        assert_eq!(both.prefill_ms, Some(41.2));
        assert_eq!(both.source, Some(TimingSource::LlamaCpp));
        assert_eq!(headers.or_from(ServerTimings::default()), headers);
        assert_eq!("tgi".parse::<TimingSource>(), Ok(TimingSource::Tgi));
        assert!("x".parse::<TimingSource>().is_err());
    }

    /// The parser as it was before it stopped allocating (issue 24), to compare with.
    mod before {
        use super::super::{ms, ServerTimings, TimingMetric};
        use crate::model::TimingSource;

        pub(super) fn from_headers<'a>(
            headers: impl IntoIterator<Item = (&'a str, &'a str)>,
        ) -> ServerTimings {
            let mut st = ServerTimings::default();
            let mut sim = false;
            let (mut tgi, mut openai) = (ServerTimings::default(), ServerTimings::default());
            for (name, value) in headers {
                let name = name.to_ascii_lowercase();
                let num = || value.trim().parse::<f64>().ok().and_then(ms);
                match name.as_str() {
                    "server-timing" => {
                        for m in parse_server_timing(value) {
                            sim |= m.desc.as_deref() == Some("ladder-sim");
                            let Some(dur) = m.dur.and_then(ms) else {
                                continue;
                            };
                            let slot = match m.name.to_ascii_lowercase().as_str() {
                                "queue" | "queue_time" | "wait" => &mut st.queue_ms,
                                "prefill" | "prompt" => &mut st.prefill_ms,
                                "decode" | "generation" => &mut st.decode_ms,
                                _ => continue,
                            };
                            slot.get_or_insert(dur);
                        }
                    }
                    "x-queue-time" => tgi.queue_ms = num(),
                    "x-inference-time" => tgi.decode_ms = num(),
                    "openai-processing-ms" => openai.processing_ms = num(),
                    _ => {}
                }
            }
            super::super::first_found(
                st,
                sim,
                [
                    (tgi, TimingSource::Tgi),
                    (openai, TimingSource::OpenAi),
                    (ServerTimings::default(), TimingSource::LiteLlm),
                ],
            )
        }

        pub(super) fn parse_server_timing(value: &str) -> Vec<TimingMetric> {
            split_outside_quotes(value, ',')
                .into_iter()
                .filter_map(|metric| {
                    let mut parts = split_outside_quotes(metric, ';').into_iter();
                    let name = parts.next()?.trim();
                    if name.is_empty() || name.contains(['"', '=', ' ']) {
                        return None;
                    }
                    let mut m = TimingMetric {
                        name: name.to_string(),
                        dur: None,
                        desc: None,
                    };
                    for p in parts {
                        let Some((k, v)) = p.split_once('=') else {
                            continue;
                        };
                        let v = unquote(v.trim());
                        match k.trim().to_ascii_lowercase().as_str() {
                            "dur" if m.dur.is_none() => m.dur = v.parse().ok(),
                            "desc" if m.desc.is_none() => m.desc = Some(v),
                            _ => {}
                        }
                    }
                    Some(m)
                })
                .collect()
        }

        fn split_outside_quotes(s: &str, sep: char) -> Vec<&str> {
            let mut out = Vec::new();
            let (mut quoted, mut escaped, mut from) = (false, false, 0);
            for (i, c) in s.char_indices() {
                match c {
                    _ if escaped => escaped = false,
                    '\\' if quoted => escaped = true,
                    '"' => quoted = !quoted,
                    c if c == sep && !quoted => {
                        out.push(&s[from..i]);
                        from = i + c.len_utf8();
                    }
                    _ => {}
                }
            }
            out.push(&s[from..]);
            out
        }

        fn unquote(v: &str) -> String {
            match v.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
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
                    out
                }
                None => v.to_string(),
            }
        }
    }

    /// NaN durations compare unequal; compare their text instead.
    fn same_metrics(a: &[TimingMetric], b: &[TimingMetric]) -> bool {
        format!("{a:?}") == format!("{b:?}")
    }

    #[test]
    fn parsing_is_what_it_was_on_random_headers() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(11);
        let pieces = [
            "queue",
            "Queue",
            "prefill",
            "PROMPT",
            "decode",
            "wait",
            "generation",
            "x",
            "dur",
            "DUR",
            "desc",
            "=",
            ";",
            ",",
            "\"",
            "\\",
            " ",
            "1",
            "2.5",
            "-3",
            "NaN",
            "inf",
            "1e3",
            "ladder-sim",
            "\"ladder-sim\"",
            "é",
            "\t",
        ];
        let names = [
            "server-timing",
            "Server-Timing",
            "x-queue-time",
            "X-Inference-Time",
            "openai-processing-ms",
            "content-type",
        ];
        let metric_names = [
            "queue", "Queue", "prefill", "PROMPT", "decode", "cdn", "", "a b",
        ];
        let keys = ["dur", "DUR", " desc ", "desc", "x", ""];
        let values = [
            "1",
            "2.5",
            " 7 ",
            "-3",
            "NaN",
            "\"12\"",
            "\"ladder-sim\"",
            "ladder-sim",
            "\"a, \\\"b\\\"; c\"",
            "\"x\\y\"",
            "\"",
            "",
        ];
        let pick = |rng: &mut rand::rngs::StdRng, from: &[&'static str]| {
            from[rng.gen_range(0..from.len())]
        };
        // Half noise, half metrics as servers write them (names, `;key=value` parameters,
        // repeated keys, quoted values with escapes).
        let value = |rng: &mut rand::rngs::StdRng| -> String {
            if rng.gen_bool(0.5) {
                return (0..rng.gen_range(0..14))
                    .map(|_| pick(rng, &pieces))
                    .collect();
            }
            let metrics: Vec<String> = (0..rng.gen_range(1..4))
                .map(|_| {
                    let mut m = pick(rng, &metric_names).to_string();
                    for _ in 0..rng.gen_range(0..4) {
                        m.push(';');
                        m.push_str(pick(rng, &keys));
                        if rng.gen_bool(0.9) {
                            m.push('=');
                        }
                        m.push_str(pick(rng, &values));
                    }
                    m
                })
                .collect();
            metrics.join(pick(rng, &[",", ", ", ";", ","]))
        };
        for _ in 0..20_000 {
            let v = value(&mut rng);
            assert!(
                same_metrics(&parse_server_timing(&v), &before::parse_server_timing(&v)),
                "{v:?}"
            );
            let headers: Vec<(&str, String)> = (0..rng.gen_range(0..4))
                .map(|_| (names[rng.gen_range(0..names.len())], value(&mut rng)))
                .collect();
            let pairs = || headers.iter().map(|(n, v)| (*n, v.as_str()));
            assert_eq!(
                format!("{:?}", from_headers(pairs())),
                format!("{:?}", before::from_headers(pairs())),
                "{headers:?}"
            );
        }
    }
}
