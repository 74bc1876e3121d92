//! Per-request timing accumulator (docs/metrics.md): timestamped `ChunkInfo`s in, the record's
//! latency and token figures out. Pure: the caller supplies every timestamp (milliseconds since
//! the request's start, taken when the bytes were read), so the formulas are tested with exact
//! numbers.

use super::chunk::{ChunkInfo, InBandError};
use super::server_timing::ServerTimings;
use crate::model::{RequestRecord, TokensSource};

/// Gaps between token events reserved at a stream's second token.
const ITL_GAPS_RESERVED: usize = 64;

/// More tokens than any real request has (the largest context windows hold about 10 million):
/// a server reporting such a count is broken, and its number must not reach TPM.
pub const MAX_PLAUSIBLE_TOKENS: u64 = 100_000_000;

/// Accumulates one stream's events.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StreamTiming {
    first_token_ms: Option<f64>,
    first_content_ms: Option<f64>,
    last_token_ms: Option<f64>,
    token_events: u64,
    /// Token events that carried reasoning (streamed reasoning, as opposed to hidden).
    reasoning_events: u64,
    itl_ms: Vec<f64>,
    usage_output: Option<u64>,
    usage_reasoning: Option<u64>,
    usage_input: Option<u64>,
    usage_cached: Option<u64>,
    usage_cache_write: Option<u64>,
    finish_reason: Option<String>,
    done: bool,
    error: Option<InBandError>,
    server: Option<ServerTimings>,
    tool_calls: u32,
    /// Calls counted by their `index` (chat streams): one more than the highest index seen.
    tool_calls_indexed: u32,
    tool_args: u64,
}

/// The figures of one stream (docs/metrics.md).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TimingSummary {
    /// First token event (content or reasoning).
    pub ttft_ms: Option<f64>,
    /// First content (non-reasoning) event.
    pub ttfc_ms: Option<f64>,
    /// (last token event − first token event) / (visible output tokens − 1): hidden reasoning
    /// tokens (reported in usage, never streamed) are left out.
    pub tpot_ms: Option<f64>,
    pub e2e_ms: f64,
    /// Last server-reported value, else the number of token events.
    pub output_tokens: Option<u64>,
    pub input_tokens: Option<u64>,
    /// Last server-reported count of prompt tokens served from cache.
    pub cached_tokens: Option<u64>,
    /// Last server-reported count of prompt tokens written to the cache (Anthropic).
    pub cache_write_tokens: Option<u64>,
    /// Last server-reported count of reasoning tokens (part of `output_tokens`).
    pub reasoning_tokens: Option<u64>,
    pub tokens_source: Option<TokensSource>,
    pub token_events: u64,
    /// Gaps between consecutive token events.
    pub itl_ms: Vec<f64>,
    /// The last finish reason reported.
    pub finish_reason: Option<String>,
    /// `[DONE]` / `message_stop` seen.
    pub done: bool,
    /// The first in-band error.
    pub error: Option<InBandError>,
    /// The last timings the server sent in the body (llama.cpp `timings`).
    pub server: ServerTimings,
    /// Why the server's usage was set aside (a count above [`MAX_PLAUSIBLE_TOKENS`]): the
    /// tokens were then counted from the events, and no usage figure is kept.
    pub usage_ignored: Option<String>,
    /// Tool calls the answer began.
    pub tool_calls: u32,
    /// Tool-call argument deltas streamed (each counted as a token).
    pub tool_args: u64,
    /// Token events that carried reasoning (streamed reasoning; 0 when it was hidden).
    pub reasoning_events: u64,
}

impl StreamTiming {
    pub fn new() -> Self {
        Self::default()
    }

    /// Records one event read `at_ms` after the request started.
    pub fn on_chunk(&mut self, at_ms: f64, info: &ChunkInfo) {
        if info.is_token() {
            self.token_events += 1;
            self.first_token_ms.get_or_insert(at_ms);
            if info.content {
                self.first_content_ms.get_or_insert(at_ms);
            }
            if info.reasoning {
                self.reasoning_events += 1;
            }
            if let Some(last) = self.last_token_ms {
                if self.itl_ms.capacity() == 0 {
                    // Room for a typical answer's gaps at once, instead of growing by doubling
                    // from 4 (four reallocations, each a copy, by 64 gaps).
                    self.itl_ms.reserve(ITL_GAPS_RESERVED);
                }
                self.itl_ms.push(at_ms - last);
            }
            self.last_token_ms = Some(at_ms);
        }
        if let Some(n) = info.output_tokens {
            self.usage_output = Some(n);
        }
        if let Some(n) = info.input_tokens {
            self.usage_input = Some(n);
        }
        if let Some(n) = info.cached_tokens {
            self.usage_cached = Some(n);
        }
        if let Some(n) = info.cache_write_tokens {
            self.usage_cache_write = Some(n);
        }
        if let Some(n) = info.reasoning_tokens {
            self.usage_reasoning = Some(n);
        }
        if let Some(reason) = &info.finish_reason {
            self.finish_reason = Some(reason.clone());
        }
        self.done |= info.done;
        if self.error.is_none() {
            self.error.clone_from(&info.error);
        }
        if let Some(server) = info.server.as_deref() {
            self.server = Some(*server);
        }
        match info.tool_call_index {
            // A numbered call is begun once, however many deltas name it again.
            Some(i) => self.tool_calls_indexed = self.tool_calls_indexed.max(i.saturating_add(1)),
            None => self.tool_calls = self.tool_calls.saturating_add(info.tool_calls),
        }
        self.tool_args += u64::from(info.tool_args);
    }

    /// Whether any token event arrived yet (for the first-token timeout).
    pub fn has_token(&self) -> bool {
        self.token_events > 0
    }

    /// The figures for a stream that ended `end_ms` after the request started.
    pub fn finish(&self, end_ms: f64) -> TimingSummary {
        // A usage count no real request can have (a broken server, or one near u64::MAX that
        // would wrap a sum) sets the whole usage aside: the stream itself was fine, so its
        // timings stand and its tokens are counted from the events.
        let implausible = [
            ("output", self.usage_output),
            ("input", self.usage_input),
            ("cached", self.usage_cached),
            ("cache write", self.usage_cache_write),
            ("reasoning", self.usage_reasoning),
        ]
        .into_iter()
        .find_map(|(what, n)| n.filter(|&n| n > MAX_PLAUSIBLE_TOKENS).map(|n| (what, n)));
        let usage_ignored = implausible.map(|(what, n)| {
            format!(
                "usage ignored: the server reported {n} {what} tokens for one request (no real request has more than {MAX_PLAUSIBLE_TOKENS}); output tokens counted from the stream's events"
            )
        });
        let usage = |n: Option<u64>| n.filter(|_| implausible.is_none());
        let (usage_output, usage_input) = (usage(self.usage_output), usage(self.usage_input));
        let (usage_cached, usage_reasoning) =
            (usage(self.usage_cached), usage(self.usage_reasoning));
        let (output_tokens, tokens_source) = match usage_output {
            Some(n) => (Some(n), Some(TokensSource::Usage)),
            None if self.token_events > 0 => (Some(self.token_events), Some(TokensSource::Chunks)),
            None => (None, None),
        };
        // Reasoning the server counted but never streamed (o-series, gpt-5: hidden) was
        // generated before the first visible token: TPOT divides the visible span by the
        // visible tokens only. Streamed reasoning is inside the span and counts.
        let visible = match (output_tokens, usage_reasoning) {
            (Some(n), Some(r)) if self.reasoning_events == 0 && usage_output.is_some() => {
                Some(n.saturating_sub(r))
            }
            (n, _) => n,
        };
        // A single token event has no decode span to divide, whatever usage says.
        let tpot_ms = match (self.first_token_ms, self.last_token_ms, visible) {
            (Some(first), Some(last), Some(n)) if n > 1 && self.token_events > 1 => {
                Some((last - first) / (n - 1) as f64)
            }
            _ => None,
        };
        TimingSummary {
            ttft_ms: self.first_token_ms,
            ttfc_ms: self.first_content_ms,
            tpot_ms,
            e2e_ms: end_ms,
            output_tokens,
            input_tokens: usage_input,
            cached_tokens: usage_cached,
            cache_write_tokens: usage(self.usage_cache_write),
            reasoning_tokens: usage_reasoning,
            tokens_source,
            token_events: self.token_events,
            itl_ms: self.itl_ms.clone(),
            finish_reason: self.finish_reason.clone(),
            done: self.done,
            error: self.error.clone(),
            server: self.server.unwrap_or_default(),
            usage_ignored,
            tool_calls: self.tool_calls.saturating_add(self.tool_calls_indexed),
            tool_args: self.tool_args,
            reasoning_events: self.reasoning_events,
        }
    }
}

impl TimingSummary {
    /// Copies the stream's timing and token figures into `record`: the one place a stream's
    /// timing becomes a record. A request that `failed` keeps what was observed before the
    /// failure (first token and first content times, token counts: they help diagnose; the
    /// statistics use successful requests only), not a TPOT, E2E or ITL of a stream that did
    /// not end well. The finish reason is server text, made printable (`client::untrusted`).
    pub fn apply_to(self, record: &mut RequestRecord, failed: bool) {
        record.ttft_ms = self.ttft_ms;
        record.ttfc_ms = self.ttfc_ms;
        record.output_tokens = self.output_tokens;
        record.input_tokens = self.input_tokens;
        record.cached_tokens = self.cached_tokens;
        record.cache_write_tokens = self.cache_write_tokens;
        record.reasoning_tokens = self.reasoning_tokens;
        record.tokens_source = self.tokens_source;
        record.token_events = self.token_events;
        record.tool_calls = (self.tool_calls > 0).then_some(self.tool_calls);
        record.tool_call_tokens = (self.tool_args > 0).then_some(self.tool_args);
        record.finish_reason = self
            .finish_reason
            .map(|f| super::untrusted::printable(&f).into_owned());
        if !failed {
            record.tpot_ms = self.tpot_ms;
            record.e2e_ms = Some(self.e2e_ms);
            record.itl = Some(crate::model::ItlHistogram::from_gaps(&self.itl_ms));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn content() -> ChunkInfo {
        ChunkInfo {
            content: true,
            ..ChunkInfo::default()
        }
    }
    fn reasoning() -> ChunkInfo {
        ChunkInfo {
            reasoning: true,
            ..ChunkInfo::default()
        }
    }
    fn usage(out: u64, input: u64) -> ChunkInfo {
        ChunkInfo {
            output_tokens: Some(out),
            input_tokens: Some(input),
            ..ChunkInfo::default()
        }
    }
    fn run(events: &[(f64, ChunkInfo)], end: f64) -> TimingSummary {
        let mut t = StreamTiming::new();
        for (at, info) in events {
            t.on_chunk(*at, info);
        }
        t.finish(end)
    }

    #[test]
    fn chunk_counting_without_usage() {
        let s = run(
            &[
                (5.0, ChunkInfo::default()), // role-only chunk: not a token
                (100.0, content()),
                (120.0, content()),
                (150.0, content()),
                (
                    160.0,
                    ChunkInfo {
                        done: true,
                        ..ChunkInfo::default()
                    },
                ),
            ],
            161.0,
        );
        assert_eq!(s.ttft_ms, Some(100.0));
        assert_eq!(s.ttfc_ms, Some(100.0));
        assert_eq!(s.output_tokens, Some(3));
        assert_eq!(s.tokens_source, Some(TokensSource::Chunks));
        assert_eq!(s.token_events, 3);
        assert_eq!(s.tpot_ms, Some(25.0)); // (150 − 100) / (3 − 1)
        assert_eq!(s.itl_ms, vec![20.0, 30.0]);
        assert_eq!(s.e2e_ms, 161.0);
        assert!(s.done);
        assert_eq!(s.input_tokens, None);
    }

    #[test]
    fn usage_overrides_chunk_count_and_drives_tpot() {
        // Two multi-token chunks; usage says 11 tokens.
        let s = run(
            &[
                (100.0, content()),
                (300.0, content()),
                (310.0, usage(11, 42)),
            ],
            320.0,
        );
        assert_eq!(s.output_tokens, Some(11));
        assert_eq!(s.input_tokens, Some(42));
        assert_eq!(s.tokens_source, Some(TokensSource::Usage));
        assert_eq!(s.token_events, 2);
        assert_eq!(s.tpot_ms, Some(20.0)); // 200 / 10
    }

    #[test]
    fn last_usage_value_wins_never_summed() {
        // Ollama-style zero first, then the real value; vLLM-style cumulative values.
        let s = run(
            &[(1.0, usage(0, 0)), (10.0, content()), (20.0, usage(7, 5))],
            30.0,
        );
        assert_eq!(s.output_tokens, Some(7));
        assert_eq!(s.input_tokens, Some(5));
        let s = run(
            &[
                (
                    10.0,
                    ChunkInfo {
                        output_tokens: Some(1),
                        ..content()
                    },
                ),
                (
                    20.0,
                    ChunkInfo {
                        output_tokens: Some(2),
                        ..content()
                    },
                ),
                (
                    30.0,
                    ChunkInfo {
                        output_tokens: Some(3),
                        ..content()
                    },
                ),
            ],
            31.0,
        );
        assert_eq!(s.output_tokens, Some(3));
        assert_eq!(s.tpot_ms, Some(10.0));
    }

    #[test]
    fn reasoning_sets_ttft_but_not_ttfc() {
        let s = run(
            &[(50.0, reasoning()), (80.0, reasoning()), (200.0, content())],
            210.0,
        );
        assert_eq!(s.ttft_ms, Some(50.0));
        assert_eq!(s.ttfc_ms, Some(200.0));
        assert_eq!(s.itl_ms, vec![30.0, 120.0]);
        assert_eq!(s.output_tokens, Some(3));
        assert_eq!(s.tpot_ms, Some(75.0));
    }

    #[test]
    fn tpot_undefined_for_one_token_or_one_event() {
        let s = run(&[(10.0, content())], 20.0);
        assert_eq!(s.output_tokens, Some(1));
        assert_eq!(s.tpot_ms, None);
        assert!(s.itl_ms.is_empty());
        // One event carrying the whole answer: no decode span to measure.
        let s = run(&[(10.0, content()), (11.0, usage(50, 3))], 20.0);
        assert_eq!(s.output_tokens, Some(50));
        assert_eq!(s.tpot_ms, None);
        // Usage of 1 with two events.
        let s = run(
            &[(10.0, content()), (20.0, content()), (21.0, usage(1, 3))],
            30.0,
        );
        assert_eq!(s.tpot_ms, None);
    }

    #[test]
    fn nothing_received() {
        let s = run(&[], 500.0);
        assert_eq!(
            s,
            TimingSummary {
                e2e_ms: 500.0,
                ..TimingSummary::default()
            }
        );
        let s = run(&[(5.0, usage(0, 9))], 6.0);
        assert_eq!(s.output_tokens, Some(0));
        assert_eq!(s.tokens_source, Some(TokensSource::Usage));
        assert_eq!(s.ttft_ms, None);
    }

    #[test]
    fn first_error_and_last_finish_reason_are_kept() {
        let err = |m: &str| InBandError {
            message: m.into(),
            ..InBandError::default()
        };
        let s = run(
            &[
                (10.0, content()),
                (
                    20.0,
                    ChunkInfo {
                        error: Some(err("first")),
                        ..ChunkInfo::default()
                    },
                ),
                (
                    30.0,
                    ChunkInfo {
                        error: Some(err("second")),
                        ..ChunkInfo::default()
                    },
                ),
                (
                    31.0,
                    ChunkInfo {
                        finish_reason: Some("error".into()),
                        ..ChunkInfo::default()
                    },
                ),
                (
                    32.0,
                    ChunkInfo {
                        finish_reason: Some("stop".into()),
                        ..ChunkInfo::default()
                    },
                ),
            ],
            40.0,
        );
        assert_eq!(s.error, Some(err("first")));
        assert_eq!(s.finish_reason.as_deref(), Some("stop"));
        assert!(!s.done);
    }

    #[test]
    fn apply_to_fills_the_record() {
        let mut t = StreamTiming::new();
        assert!(!t.has_token());
        t.on_chunk(10.0, &content());
        assert!(t.has_token());
        t.on_chunk(
            30.0,
            &ChunkInfo {
                finish_reason: Some("length".into()),
                ..content()
            },
        );
        let mut rec = RequestRecord::default();
        t.clone().finish(35.0).apply_to(&mut rec, false);
        assert_eq!(rec.ttft_ms, Some(10.0));
        assert_eq!(rec.tpot_ms, Some(20.0));
        assert_eq!(rec.e2e_ms, Some(35.0));
        assert_eq!(rec.output_tokens, Some(2));
        assert_eq!(rec.tokens_source, Some(TokensSource::Chunks));
        assert_eq!(rec.token_events, 2);
        assert_eq!(
            rec.itl,
            Some(crate::model::ItlHistogram::from_gaps(&[20.0]))
        );
        assert_eq!(rec.finish_reason.as_deref(), Some("length"));
        assert!(rec.is_ok());
        // A failed request keeps its first-token time and counts, not a TPOT, E2E or ITL; its
        // E2E stays the attempt's elapsed time, set by the caller.
        let mut failed = RequestRecord {
            e2e_ms: Some(99.0),
            ..RequestRecord::default()
        };
        t.finish(35.0).apply_to(&mut failed, true);
        assert_eq!(failed.ttft_ms, Some(10.0));
        assert_eq!(failed.output_tokens, Some(2));
        assert_eq!((failed.tpot_ms, failed.itl), (None, None));
        assert_eq!(failed.e2e_ms, Some(99.0));
    }

    fn usage_with_reasoning(out: u64, reasoning: u64) -> ChunkInfo {
        ChunkInfo {
            output_tokens: Some(out),
            input_tokens: Some(10),
            reasoning_tokens: Some(reasoning),
            ..ChunkInfo::default()
        }
    }

    #[test]
    fn hidden_reasoning_is_left_out_of_tpot_but_not_out_of_the_count() {
        // o-series style: 100 reasoning tokens never streamed, then 4 visible tokens 20 ms apart.
        let s = run(
            &[
                (500.0, content()),
                (520.0, content()),
                (540.0, content()),
                (560.0, content()),
                (561.0, usage_with_reasoning(104, 100)),
            ],
            562.0,
        );
        assert_eq!(s.tpot_ms, Some(20.0));
        assert_eq!(
            (s.output_tokens, s.reasoning_tokens),
            (Some(104), Some(100))
        );
        // Reasoning 0, or not reported: the whole count.
        let s = run(
            &[
                (500.0, content()),
                (530.0, content()),
                (531.0, usage_with_reasoning(4, 0)),
            ],
            532.0,
        );
        assert_eq!(s.tpot_ms, Some(10.0));
        // Everything hidden but one visible token: no decode span to divide.
        let s = run(
            &[(500.0, content()), (501.0, usage_with_reasoning(50, 49))],
            502.0,
        );
        assert_eq!(s.tpot_ms, None);
    }

    #[test]
    fn streamed_reasoning_counts_in_tpot() {
        // DeepSeek style: reasoning streamed as `reasoning_content`, then content; usage says
        // 6 of 8 tokens were reasoning, and all 8 lie inside the span.
        let mut events: Vec<(f64, ChunkInfo)> = (0..6)
            .map(|i| (100.0 + 10.0 * f64::from(i), reasoning()))
            .collect();
        events.push((160.0, content()));
        events.push((170.0, content()));
        events.push((171.0, usage_with_reasoning(8, 6)));
        let s = run(&events, 172.0);
        assert_eq!(s.tpot_ms, Some(10.0));
        assert_eq!(s.reasoning_tokens, Some(6));
    }

    #[test]
    fn an_impossible_usage_count_is_set_aside_and_the_events_counted() {
        for near_max in [u64::MAX, u64::MAX - 1, MAX_PLAUSIBLE_TOKENS + 1] {
            let s = run(
                &[
                    (100.0, content()),
                    (110.0, content()),
                    (130.0, content()),
                    (131.0, usage(near_max, 12)),
                ],
                140.0,
            );
            assert_eq!(s.output_tokens, Some(3), "{near_max}");
            assert_eq!(s.tokens_source, Some(TokensSource::Chunks));
            assert_eq!((s.input_tokens, s.ttft_ms), (None, Some(100.0)));
            assert_eq!((s.tpot_ms, s.e2e_ms), (Some(15.0), 140.0));
            let why = s.usage_ignored.expect("says why");
            assert!(why.contains(&format!("{near_max} output tokens")), "{why}");
        }
        // Any one count out of reach sets the whole usage aside.
        let s = run(&[(100.0, content()), (131.0, usage(20, u64::MAX))], 140.0);
        assert_eq!((s.output_tokens, s.input_tokens), (Some(1), None));
        assert!(s.usage_ignored.unwrap().contains("input tokens"));
        // At the bound, usage is kept.
        let s = run(
            &[(100.0, content()), (131.0, usage(MAX_PLAUSIBLE_TOKENS, 3))],
            140.0,
        );
        assert_eq!(s.output_tokens, Some(MAX_PLAUSIBLE_TOKENS));
        assert_eq!(
            (s.tokens_source, s.usage_ignored),
            (Some(TokensSource::Usage), None)
        );
    }
}
