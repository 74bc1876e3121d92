//! The steady window of a closed-loop step and the one throughput estimator (the number
//! `summary.csv` calls `rps_steady` / `tpm_steady`, the table and the report show, and the
//! throughput checks judge), with the time blocks its confidence interval is computed from.
//!
//! The rate counts *output progress*, not completions: each successful request contributes the
//! share of its decode span (first token → end) that lies inside the window, and as many output
//! tokens. Counting completions over a window adds edge noise as large as one burst of
//! completions (a server with a 16-stream cap finishes its streams 16 at a time), and Little's
//! law over the completed requests' E2E is biased while the queue fills; decode progress is what
//! the server delivers, and it is smooth.

use crate::model::RequestRecord;

/// What the steady window needs of one request: who sent it and when it ran.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timed {
    pub worker: u32,
    pub start_ms: f64,
    /// Time to first token; `None` for a failed request or one without tokens.
    pub ttft_ms: Option<f64>,
    /// `None` when the request has no end time (then it ends at its start).
    pub e2e_ms: Option<f64>,
    pub ok: bool,
    pub output_tokens: u64,
}

impl Timed {
    pub fn end_ms(&self) -> f64 {
        self.start_ms + self.e2e_ms.filter(|e| e.is_finite()).unwrap_or(0.0)
    }
}

impl From<&RequestRecord> for Timed {
    fn from(r: &RequestRecord) -> Self {
        Timed {
            worker: r.worker,
            start_ms: r.started_at_ms,
            ttft_ms: r.ttft_ms,
            e2e_ms: r.e2e_ms,
            ok: r.is_ok(),
            output_tokens: r.output_tokens.unwrap_or(0),
        }
    }
}

/// The part of a step where every worker is busy: from the last worker's first start (end of
/// the ramp-up) to the first worker's last end (start of the drain tail).
#[derive(Debug, Clone, PartialEq)]
pub struct SteadyWindow {
    pub start_ms: f64,
    pub end_ms: f64,
    /// Σ (time each request spent inside the window) / window length.
    pub concurrency: f64,
    /// The decode spans of the successful requests that overlap the window.
    pub served: Vec<Decode>,
    /// One service cycle (ms): the median decode span plus the shortest TTFT (the time a
    /// request holds the server without its queueing). The length of the CI's time blocks.
    pub cycle_ms: Option<f64>,
}

/// The output of one successful request: tokens streamed from `from_ms` (first token) to
/// `to_ms` (end), evenly for the purpose of a rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Decode {
    pub from_ms: f64,
    pub to_ms: f64,
    pub tokens: f64,
}

impl Decode {
    /// The share of this request delivered in `(a, b]`: the overlap of its decode span, or,
    /// for a span of no length (one token), 1 when it ended inside.
    fn share(&self, a: f64, b: f64) -> f64 {
        let len = self.to_ms - self.from_ms;
        if len > 0.0 {
            ((self.to_ms.min(b) - self.from_ms.max(a)) / len).clamp(0.0, 1.0)
        } else if self.to_ms > a && self.to_ms <= b {
            1.0
        } else {
            0.0
        }
    }
}

/// Output progress over a stretch of time: requests (fractional) and output tokens, and the
/// streaming behind them (decode time and the tokens after each first one) for the decode rate.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Progress {
    pub length_ms: f64,
    pub requests: f64,
    pub tokens: f64,
    /// Σ time the requests spent streaming inside the stretch (their decode spans' overlap).
    pub decode_ms: f64,
    /// The tokens streamed in that time after each request's first one (a request of n tokens
    /// has n − 1 gaps over its decode span).
    pub decode_tokens: f64,
}

impl Progress {
    /// Successful requests per second.
    pub fn rps(&self) -> f64 {
        self.requests / (self.length_ms / 1000.0)
    }
    /// Output tokens per minute.
    pub fn tpm(&self) -> f64 {
        self.tokens / (self.length_ms / 60_000.0)
    }
    /// Output tokens per second of one stream while it streams: the server's decode speed,
    /// which does not depend on how long the answers are (TPM and RPS do). `NaN` without a
    /// decode span of any length.
    pub fn decode_rate(&self) -> f64 {
        if self.decode_ms > 0.0 {
            self.decode_tokens / (self.decode_ms / 1000.0)
        } else {
            f64::NAN
        }
    }
}

/// Fewest time blocks a throughput CI is computed from (shorter blocks than a cycle when the
/// window holds fewer cycles; their noise then widens the CI, as it should).
pub const MIN_BLOCKS: usize = 4;

impl SteadyWindow {
    pub fn length_ms(&self) -> f64 {
        self.end_ms - self.start_ms
    }

    /// Output progress inside `(a, b]`.
    pub fn progress(&self, a: f64, b: f64) -> Progress {
        let mut p = Progress {
            length_ms: b - a,
            ..Progress::default()
        };
        for d in &self.served {
            let s = d.share(a, b);
            p.requests += s;
            p.tokens += s * d.tokens;
            if d.to_ms > d.from_ms {
                p.decode_ms += s * (d.to_ms - d.from_ms);
                p.decode_tokens += s * (d.tokens - 1.0).max(0.0);
            }
        }
        p
    }

    /// Output progress over the whole window: the step's steady RPS and TPM.
    pub fn rate(&self) -> Progress {
        self.progress(self.start_ms, self.end_ms)
    }

    /// The window cut into equal blocks of about one service cycle (at least [`MIN_BLOCKS`]),
    /// each with its progress: the batches of the throughput CI. Empty without a cycle.
    pub fn blocks(&self) -> Vec<Progress> {
        let Some(cycle) = self.cycle_ms.filter(|c| *c > 0.0) else {
            return Vec::new();
        };
        let len = self.length_ms();
        let k = ((len / cycle).round() as usize).clamp(MIN_BLOCKS, 1_000);
        let step = len / k as f64;
        (0..k)
            .map(|i| {
                let a = self.start_ms + step * i as f64;
                let b = if i + 1 == k { self.end_ms } else { a + step };
                self.progress(a, b)
            })
            .collect()
    }
}

/// The steady window of one step's requests; `None` when it is empty or has no length (a worker
/// finished before the last one started, or times are missing).
pub fn steady_window(requests: &[Timed]) -> Option<SteadyWindow> {
    let mut first_start: std::collections::BTreeMap<u32, f64> = Default::default();
    let mut last_end: std::collections::BTreeMap<u32, f64> = Default::default();
    for r in requests.iter().filter(|r| r.start_ms.is_finite()) {
        let fs = first_start.entry(r.worker).or_insert(f64::INFINITY);
        *fs = fs.min(r.start_ms);
        let le = last_end.entry(r.worker).or_insert(f64::NEG_INFINITY);
        *le = le.max(r.end_ms());
    }
    let start = first_start
        .values()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    let end = last_end.values().copied().fold(f64::INFINITY, f64::min);
    if !(start.is_finite() && end.is_finite() && end > start) {
        return None;
    }
    let mut busy = 0.0;
    let mut served = Vec::new();
    let mut spans = Vec::new();
    let mut min_ttft = f64::INFINITY;
    for r in requests.iter().filter(|r| r.start_ms.is_finite()) {
        let e = r.end_ms();
        busy += (e.min(end) - r.start_ms.max(start)).max(0.0);
        if !r.ok {
            continue;
        }
        // Without a first-token time the request's output is taken to arrive at its end.
        let ttft = r
            .ttft_ms
            .filter(|t| t.is_finite() && *t >= 0.0)
            .map_or(e - r.start_ms, |t| t.min(e - r.start_ms));
        let d = Decode {
            from_ms: r.start_ms + ttft,
            to_ms: e,
            tokens: r.output_tokens as f64,
        };
        if d.to_ms > start && d.from_ms <= end {
            min_ttft = min_ttft.min(ttft);
            spans.push(d.to_ms - d.from_ms);
            served.push(d);
        }
    }
    spans.sort_by(f64::total_cmp);
    let cycle_ms = super::quantile_sorted(&spans, 0.5).map(|m| m + min_ttft);
    Some(SteadyWindow {
        start_ms: start,
        end_ms: end,
        concurrency: busy / (end - start),
        served,
        cycle_ms: cycle_ms.filter(|c| c.is_finite() && *c > 0.0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timed(worker: u32, start_ms: f64, e2e_ms: f64, ok: bool) -> Timed {
        Timed {
            worker,
            start_ms,
            ttft_ms: Some(100.0),
            e2e_ms: Some(e2e_ms),
            ok,
            output_tokens: 10,
        }
    }

    #[test]
    fn steady_window_excludes_ramp_and_drain() {
        // Worker 0 starts at 0, worker 1 at 500 (ramp-up); worker 1 ends last at 3,500, worker
        // 0 at 3,000: the window is [500, 3,000].
        let reqs = [
            timed(0, 0.0, 1000.0, true),
            timed(0, 1000.0, 1000.0, true),
            timed(0, 2000.0, 1000.0, false),
            timed(1, 500.0, 1500.0, true),
            timed(1, 2000.0, 1500.0, true),
        ];
        let w = steady_window(&reqs).unwrap();
        assert_eq!(
            (w.start_ms, w.end_ms, w.length_ms()),
            (500.0, 3000.0, 2500.0)
        );
        // Busy time inside the window: 500 + 1000 + 1000 (worker 0) + 1500 + 1000 (worker 1).
        assert!((w.concurrency - 5000.0 / 2500.0).abs() < 1e-12);
        // Decode spans: [100, 1000] (share (1000 − 500) / 900), [1100, 2000] (1),
        // [600, 2000] (1), [2100, 3500] (900 / 1400); the failed request delivers nothing.
        let p = w.rate();
        let want = 500.0 / 900.0 + 1.0 + 1.0 + 900.0 / 1400.0;
        assert!((p.requests - want).abs() < 1e-12, "{p:?}");
        assert!((p.tokens - 10.0 * want).abs() < 1e-9);
        assert!((p.rps() - want / 2.5).abs() < 1e-12);
        // A worker that finished before the last one started: no steady window.
        assert_eq!(
            steady_window(&[timed(0, 0.0, 10.0, true), timed(1, 20.0, 10.0, true)]),
            None
        );
        assert_eq!(steady_window(&[]), None);
    }

    /// A server that finishes its 16 streams together every 735 ms (a concurrency cap with 50
    /// streams queued in front of it): counting completions in the window swings by a burst,
    /// decode progress does not, and every cycle-long block holds the same progress.
    #[test]
    fn bursts_of_completions_give_a_steady_rate() {
        let mut reqs = Vec::new();
        for w in 0..16u32 {
            for k in 0..8 {
                let start = 735.0 * f64::from(k) + f64::from(w) * 0.5;
                reqs.push(Timed {
                    worker: w,
                    start_ms: start,
                    ttft_ms: Some(150.0),
                    e2e_ms: Some(735.0),
                    ok: true,
                    output_tokens: 40,
                });
            }
        }
        let w = steady_window(&reqs).unwrap();
        let truth = 16.0 / 0.735;
        assert!(
            (w.rate().rps() / truth - 1.0).abs() < 0.01,
            "{:?}",
            w.rate()
        );
        assert!((w.cycle_ms.unwrap() - 735.0).abs() < 1e-9);
        let blocks = w.blocks();
        assert!(blocks.len() >= MIN_BLOCKS);
        for b in &blocks {
            assert!((b.rps() / truth - 1.0).abs() < 0.05, "{b:?}");
        }
    }

    /// Four streams at 5 ms a token with a 30 ms prefill: answers of 48 and of 24 tokens give
    /// the same decode rate (200 tokens/s a stream), while TPM falls with the shorter answers;
    /// tokens 30% slower lower the decode rate by the same factor.
    #[test]
    fn decode_rate_follows_the_server_not_the_answer_length() {
        let run = |tokens: u64, tpot: f64| {
            let mut reqs = Vec::new();
            for w in 0..4u32 {
                let e2e = 30.0 + tpot * (tokens - 1) as f64;
                for k in 0..40 {
                    reqs.push(Timed {
                        worker: w,
                        start_ms: e2e * f64::from(k) + f64::from(w),
                        ttft_ms: Some(30.0),
                        e2e_ms: Some(e2e),
                        ok: true,
                        output_tokens: tokens,
                    });
                }
            }
            steady_window(&reqs).unwrap().rate()
        };
        let (long, short, slow) = (run(48, 5.0), run(24, 5.0), run(48, 6.5));
        assert!((long.decode_rate() - 200.0).abs() < 1e-6, "{long:?}");
        assert!((short.decode_rate() - 200.0).abs() < 1e-6, "{short:?}");
        assert!(short.tpm() < long.tpm() * 0.95, "{short:?} {long:?}");
        assert!((slow.decode_rate() / long.decode_rate() - 5.0 / 6.5).abs() < 1e-6);
        assert!(Progress::default().decode_rate().is_nan());
    }
}
