//! The server-timing readers' tests: the W3C `Server-Timing` header, each server's own timing
//! fields, and what is kept when a value is missing or nonsense.

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
    assert!(from_headers([("openai-processing-ms", "-3"), ("x-queue-time", "soon")]).is_empty());
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
    let pick =
        |rng: &mut rand::rngs::StdRng, from: &[&'static str]| from[rng.gen_range(0..from.len())];
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
