//! What `ladder check` saw in an answer besides its TTFT and token count, said in words: that
//! the model reasoned (streamed as reasoning deltas, or hidden and only counted in usage), its
//! TTFC when the first answer token came after the first token, the tool calls it made, the
//! input tokens read from the server's cache, and whether a second identical request found the
//! prompt's prefix cached. A run records every one of these (`model::RequestRecord`), so the
//! check says them before the run does. Pure: no I/O.

/// The figures of a streamed answer that the check's summary line does not hold.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Seen {
    /// First answer (non-reasoning) token.
    pub ttfc_ms: Option<f64>,
    /// Input tokens, as usage reported them.
    pub input_tokens: Option<u64>,
    /// Input tokens read from the server's cache, as usage reported them (`None`: no figure).
    pub cached_tokens: Option<u64>,
    /// Token events that carried reasoning: streamed reasoning (0 when hidden).
    pub reasoning_events: u64,
    /// Tool calls the answer began.
    pub tool_calls: u32,
}

/// One line per thing seen in an answer whose first token came `ttft_ms` after the request,
/// with `reasoning_tokens` counted in usage.
pub fn lines(ttft_ms: Option<f64>, reasoning_tokens: Option<u64>, s: &Seen) -> Vec<String> {
    let mut out = Vec::new();
    let counted = reasoning_tokens.filter(|&n| n > 0);
    match (s.reasoning_events, counted) {
        (0, Some(r)) => out.push(format!(
            "reasoning, hidden: {r} reasoning tokens counted in usage only, never streamed (they delay the first token: TTFT includes them)"
        )),
        (e, Some(r)) if e > 0 => out.push(format!(
            "reasoning, streamed: {r} reasoning tokens (counted in usage) sent as reasoning deltas before the answer"
        )),
        (e, _) if e > 0 => out.push(format!(
            "reasoning, streamed: {e} reasoning deltas before the answer (usage gives no reasoning token count)"
        )),
        _ => {}
    }
    match (ttft_ms, s.ttfc_ms) {
        (Some(t), Some(c)) if c.round() > t.round() => out.push(format!(
            "TTFC {c:.0} ms: the first answer token, after reasoning (TTFT {t:.0} ms is the first token of any kind)"
        )),
        (Some(_), None) if s.reasoning_events > 0 => out.push(
            "TTFC not measured: every token the check asked for went to reasoning, none to the answer".into(),
        ),
        _ => {}
    }
    if s.tool_calls > 0 {
        out.push(format!("tool calls: the answer made {}", s.tool_calls));
    }
    if let Some(c) = s.cached_tokens.filter(|&c| c > 0) {
        out.push(format!(
            "cached input: {c}{} input tokens read from the server's cache",
            of(s.input_tokens)
        ));
    }
    out
}

fn of(input: Option<u64>) -> String {
    input.map(|i| format!(" of {i}")).unwrap_or_default()
}

/// What two identical requests showed of the server's prompt cache.
#[derive(Debug, Clone, PartialEq)]
pub enum CacheProbe {
    /// The second read `cached` of its `input` tokens from cache.
    Cached { cached: u64, input: Option<u64> },
    /// The server reports cached tokens, and the second read none.
    NotCached { input: Option<u64> },
    /// Neither answer's usage had a cached-token figure.
    NoFigures,
    /// A request of the probe did not end well (its summary).
    Failed(String),
}

/// The probe's verdict from the answers to the first and the second identical request.
pub fn cache_probe(a: &Seen, b: &Seen) -> CacheProbe {
    match (a.cached_tokens, b.cached_tokens) {
        (_, Some(c)) if c > 0 => CacheProbe::Cached {
            cached: c,
            input: b.input_tokens,
        },
        (None, None) => CacheProbe::NoFigures,
        _ => CacheProbe::NotCached {
            input: b.input_tokens,
        },
    }
}

/// The line saying what the probe found; `cache_control`: the API caches only marked prompts.
pub fn cache_line(p: &CacheProbe, cache_control: bool) -> String {
    match p {
        CacheProbe::Cached { cached, input } => format!(
            "prefix cache: yes, a second identical request read {cached}{} input tokens from cache",
            of(*input)
        ),
        CacheProbe::NotCached { input } => {
            let why = if cache_control {
                " (this API caches only prompts marked with cache_control)"
            } else {
                ""
            };
            format!(
                "prefix cache: no, a second identical request read 0{} input tokens from cache{why}",
                of(*input)
            )
        }
        CacheProbe::NoFigures => "prefix cache: unknown, the server reports no cached-token figure in usage (a run will record none)".into(),
        CacheProbe::Failed(why) => format!("prefix cache: not checked, a request of the cache probe failed ({why})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_answer_says_nothing_more() {
        let s = Seen {
            ttfc_ms: Some(20.0),
            cached_tokens: Some(0),
            ..Seen::default()
        };
        assert!(lines(Some(20.0), Some(0), &s).is_empty());
    }

    #[test]
    fn streamed_reasoning_names_its_tokens_and_the_ttfc() {
        let s = Seen {
            ttfc_ms: Some(45.0),
            reasoning_events: 20,
            ..Seen::default()
        };
        let l = lines(Some(26.0), Some(20), &s);
        assert_eq!(l.len(), 2, "{l:?}");
        assert!(
            l[0].starts_with("reasoning, streamed: 20 reasoning tokens"),
            "{l:?}"
        );
        assert!(l[1].starts_with("TTFC 45 ms"), "{l:?}");
        assert!(l[1].contains("TTFT 26 ms"), "{l:?}");
        let uncounted = lines(Some(26.0), None, &s);
        assert!(
            uncounted[0].contains("20 reasoning deltas"),
            "{uncounted:?}"
        );
        let only = Seen { ttfc_ms: None, ..s };
        assert!(lines(Some(26.0), Some(5), &only)[1].starts_with("TTFC not measured"));
    }

    #[test]
    fn hidden_reasoning_is_only_counted() {
        let s = Seen {
            ttfc_ms: Some(80.0),
            ..Seen::default()
        };
        let l = lines(Some(80.0), Some(20), &s);
        assert_eq!(l.len(), 1, "{l:?}");
        assert!(l[0].starts_with("reasoning, hidden: 20 reasoning tokens counted in usage only"));
    }

    #[test]
    fn tool_calls_and_cached_input_are_named() {
        let s = Seen {
            ttfc_ms: Some(5.0),
            tool_calls: 2,
            cached_tokens: Some(1024),
            input_tokens: Some(1200),
            ..Seen::default()
        };
        assert_eq!(
            lines(Some(5.0), None, &s),
            vec![
                "tool calls: the answer made 2".to_string(),
                "cached input: 1024 of 1200 input tokens read from the server's cache".into()
            ]
        );
    }

    #[test]
    fn the_cache_probe_reads_the_second_answer() {
        let with = |c: Option<u64>| Seen {
            cached_tokens: c,
            input_tokens: Some(300),
            ..Seen::default()
        };
        let hit = cache_probe(&with(Some(0)), &with(Some(256)));
        assert_eq!(
            hit,
            CacheProbe::Cached {
                cached: 256,
                input: Some(300)
            }
        );
        assert!(cache_line(&hit, false).starts_with("prefix cache: yes"));
        let miss = cache_probe(&with(Some(0)), &with(Some(0)));
        assert_eq!(miss, CacheProbe::NotCached { input: Some(300) });
        assert!(cache_line(&miss, true).contains("cache_control"));
        assert!(!cache_line(&miss, false).contains("cache_control"));
        assert_eq!(cache_probe(&with(None), &with(None)), CacheProbe::NoFigures);
        assert!(cache_line(&CacheProbe::NoFigures, false).contains("no cached-token figure"));
        let failed = cache_line(&CacheProbe::Failed("HTTP 429".into()), false);
        assert!(failed.contains("not checked") && failed.contains("HTTP 429"));
    }
}
