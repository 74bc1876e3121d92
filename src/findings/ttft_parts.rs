//! TTFT split into where the time went, per step: `headers` (network and admission: the part
//! of TTFT outside the server's reported work, at most start -> response headers), `server_queue`
//! (waiting for a slot), `prefill`, and `rest` (what is left: the first decode, tokenization,
//! the gap between headers and the first token). The parts of one request add up to its TTFT.
//! A server that reports one time for queue and prefill together (`openai-processing-ms`, a
//! LiteLLM gateway) gets that one part instead, `server: queue + prefill`, never called prefill:
//! which of the two grew is inferred from how it varies with load (`findings::evidence`).
//!
//! Per request, with TTFT `T`, headers `H`, the server's queue `Q` and prefill `P` (0 when not
//! reported; or their unsplit sum): `headers = min(H, T − Q − P)`, `rest = T − headers − Q − P`
//! (clamped at 0). A
//! server that sends its headers only once the first token is ready (llama.cpp, the simulator
//! after admission) has its queue and prefill inside `H`, hence the minimum.
//!
//! llama.cpp reports prefill (`prompt_ms`) but no queue time. Its queue is derived: `T − P`
//! minus the least `T − P` of the model in the run (the overhead a request pays when nothing
//! waits: network, HTTP, tokenization). The source says so.

use super::StepExtras;
use crate::model::{RequestRecord, TimingSource};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The name of the part a server reports as one time for queue and prefill together.
pub const PROCESSING: &str = "server: queue + prefill, not split";

/// What one successful request contributes (kept per step until the findings are made).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PartSample {
    pub ttft_ms: f64,
    pub headers_ms: Option<f64>,
    pub queue_ms: Option<f64>,
    pub prefill_ms: Option<f64>,
    /// Queue and prefill together, not split (only when neither is reported on its own).
    #[serde(default)]
    pub processing_ms: Option<f64>,
    pub source: Option<TimingSource>,
}

impl PartSample {
    /// The sample of a successful request with a TTFT.
    pub fn of(r: &RequestRecord) -> Option<PartSample> {
        let ttft_ms = r.ttft_ms.filter(|t| r.is_ok() && t.is_finite())?;
        Some(PartSample {
            ttft_ms,
            headers_ms: r.headers_ms,
            queue_ms: r.server_queue_ms,
            prefill_ms: r.server_prefill_ms,
            processing_ms: r.server_processing_ms,
            source: r.server_timing_source,
        })
    }

    /// `T − P` when the queue must be derived (llama.cpp: prefill but no queue).
    fn overhead_without_queue(&self) -> Option<f64> {
        match (self.queue_ms, self.prefill_ms, self.source) {
            (None, Some(p), Some(TimingSource::LlamaCpp)) => Some(self.ttft_ms - p),
            _ => None,
        }
    }

    /// The four parts, with `floor` the model's least `T − P` (for a derived queue).
    fn split(&self, floor: Option<f64>) -> Split {
        let t = self.ttft_ms;
        let derived = self
            .overhead_without_queue()
            .zip(floor)
            .map(|(o, f)| (o - f).max(0.0));
        let queue = self.queue_ms.or(derived);
        let processing = self
            .processing_ms
            .filter(|_| queue.is_none() && self.prefill_ms.is_none());
        let known =
            queue.unwrap_or(0.0) + self.prefill_ms.unwrap_or(0.0) + processing.unwrap_or(0.0);
        let headers = self.headers_ms.map(|h| h.min(t - known).max(0.0));
        Split {
            headers,
            queue,
            prefill: self.prefill_ms,
            processing,
            rest: (t - headers.unwrap_or(0.0) - known).max(0.0),
            derived: derived.is_some() && self.queue_ms.is_none(),
        }
    }
}

struct Split {
    headers: Option<f64>,
    queue: Option<f64>,
    prefill: Option<f64>,
    processing: Option<f64>,
    rest: f64,
    derived: bool,
}

/// P50 and P90 of one part over a step's successful requests, and where it comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Part {
    pub p50_ms: f64,
    pub p90_ms: f64,
    /// The means of a request's parts add up to its mean TTFT (the report stacks them).
    #[serde(default)]
    pub mean_ms: f64,
    /// Requests the part is known for.
    pub n: u64,
    /// `client` (ladder's own timings), a server's name (`sim`, `llama.cpp`, `server-timing`,
    /// `tgi`, `openai`), or how it was derived.
    pub source: String,
}

/// The TTFT decomposition of one step (`findings.json` `ttft_parts`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TtftParts {
    pub step: u32,
    pub concurrency: u32,
    pub ttft: Part,
    pub headers: Option<Part>,
    pub server_queue: Option<Part>,
    pub prefill: Option<Part>,
    /// The server's queue and prefill together, when it reports only their sum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_processing: Option<Part>,
    pub rest: Part,
}

/// The least `T − P` among requests whose queue must be derived (llama.cpp), the overhead a
/// request pays when nothing waits; computed over one model's requests of one run.
pub fn least_overhead<'a>(samples: impl IntoIterator<Item = &'a PartSample>) -> Option<f64> {
    samples
        .into_iter()
        .filter_map(PartSample::overhead_without_queue)
        .min_by(f64::total_cmp)
}

/// Each part's values over some requests (a part only for the requests it is known for).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PartValues {
    pub headers: Vec<f64>,
    pub server_queue: Vec<f64>,
    pub prefill: Vec<f64>,
    pub server_processing: Vec<f64>,
    pub rest: Vec<f64>,
}

impl PartValues {
    /// The parts of `samples`, with `floor` from [`least_overhead`] of the same run and model.
    pub fn of(samples: &[PartSample], floor: Option<f64>) -> PartValues {
        let mut v = PartValues::default();
        for s in samples {
            let sp = s.split(floor);
            v.headers.extend(sp.headers);
            v.server_queue.extend(sp.queue);
            v.prefill.extend(sp.prefill);
            v.server_processing.extend(sp.processing);
            v.rest.push(sp.rest);
        }
        v
    }

    /// (name, values) in timeline order.
    pub fn named(&self) -> [(&'static str, &[f64]); 5] {
        [
            ("headers", &self.headers),
            ("server queue", &self.server_queue),
            ("prefill", &self.prefill),
            (PROCESSING, &self.server_processing),
            ("rest", &self.rest),
        ]
    }
}

/// The decomposition of every step of one model (`steps` and `extras` in the same order), or
/// nothing when no step has a successful request.
pub fn decompose(steps: &[(u32, u32)], extras: &[StepExtras]) -> Vec<TtftParts> {
    let floor = least_overhead(extras.iter().flat_map(|e| &e.parts));
    steps
        .iter()
        .zip(extras)
        .filter_map(|(&(step, concurrency), e)| step_parts(step, concurrency, &e.parts, floor))
        .collect()
}

fn step_parts(
    step: u32,
    concurrency: u32,
    samples: &[PartSample],
    floor: Option<f64>,
) -> Option<TtftParts> {
    let splits: Vec<Split> = samples.iter().map(|s| s.split(floor)).collect();
    let server = majority(samples.iter().filter_map(|s| s.source));
    let server_name = server.map(TimingSource::as_str).unwrap_or("server");
    let queue_source = if splits.iter().any(|s| s.derived) {
        format!("{server_name} (derived: TTFT − prompt_ms − the least such gap of the run)")
    } else {
        server_name.to_string()
    };
    let ttft = part(samples.iter().map(|s| Some(s.ttft_ms)), "client")?;
    Some(TtftParts {
        step,
        concurrency,
        headers: part(splits.iter().map(|s| s.headers), "client"),
        server_queue: part(splits.iter().map(|s| s.queue), &queue_source),
        prefill: part(splits.iter().map(|s| s.prefill), server_name),
        server_processing: part(splits.iter().map(|s| s.processing), server_name),
        rest: part(splits.iter().map(|s| Some(s.rest)), "client − server")?,
        ttft,
    })
}

fn part(values: impl Iterator<Item = Option<f64>>, source: &str) -> Option<Part> {
    let v: Vec<f64> = values.flatten().filter(|v| v.is_finite()).collect();
    let d = crate::stats::describe(&v)?;
    Some(Part {
        p50_ms: d.p50,
        p90_ms: d.p90,
        mean_ms: d.mean,
        n: v.len() as u64,
        source: source.to_string(),
    })
}

fn majority(sources: impl Iterator<Item = TimingSource>) -> Option<TimingSource> {
    let mut counts: BTreeMap<&'static str, (usize, TimingSource)> = BTreeMap::new();
    for s in sources {
        counts.entry(s.as_str()).or_insert((0, s)).0 += 1;
    }
    counts.into_values().max_by_key(|(n, _)| *n).map(|(_, s)| s)
}

impl TtftParts {
    /// The parts as (name, part) in timeline order, the known ones only.
    pub fn named(&self) -> Vec<(&'static str, &Part)> {
        let mut out = Vec::new();
        out.extend(self.headers.as_ref().map(|p| ("headers", p)));
        out.extend(self.server_queue.as_ref().map(|p| ("server queue", p)));
        out.extend(self.prefill.as_ref().map(|p| ("prefill", p)));
        out.extend(self.server_processing.as_ref().map(|p| (PROCESSING, p)));
        out.push(("rest", &self.rest));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(t: f64, h: f64, q: Option<f64>, p: Option<f64>, src: TimingSource) -> PartSample {
        PartSample {
            ttft_ms: t,
            headers_ms: Some(h),
            queue_ms: q,
            prefill_ms: p,
            processing_ms: None,
            source: Some(src),
        }
    }

    fn extras(parts: Vec<PartSample>) -> StepExtras {
        StepExtras {
            parts,
            ..StepExtras::default()
        }
    }

    #[test]
    fn headers_after_admission_keep_queue_and_prefill_out_of_the_network_part() {
        // The simulator: headers once admitted (H = network + Q), prefill after them.
        // TTFT = 2.5 ms of network + queue + prefill; the headers came after the queue.
        let s = sample(
            1_000.0 + 100.0 + 2.5,
            1_000.0 + 1.5,
            Some(1_000.0),
            Some(100.0),
            TimingSource::Sim,
        );
        let sp = s.split(None);
        assert_eq!(sp.headers, Some(2.5));
        assert_eq!(sp.queue, Some(1_000.0));
        assert!(sp.rest.abs() < 1e-9);
        // Headers before any server work (H small): all of H is network.
        let s = sample(
            150.0,
            5.0,
            Some(40.0),
            Some(100.0),
            TimingSource::ServerTiming,
        );
        let sp = s.split(None);
        assert_eq!((sp.headers, sp.rest), (Some(5.0), 5.0));
        // Nothing from the server: headers and the rest.
        let s = PartSample {
            source: None,
            queue_ms: None,
            prefill_ms: None,
            ..s
        };
        let sp = s.split(None);
        assert_eq!((sp.headers, sp.queue, sp.rest), (Some(5.0), None, 145.0));
    }

    #[test]
    fn llama_cpp_queue_is_derived_from_prompt_ms_and_the_least_overhead() {
        let l = TimingSource::LlamaCpp;
        // Headers at the first token; overhead 12 ms when nothing waits.
        let quiet = sample(52.0, 51.0, None, Some(40.0), l);
        let queued = sample(1_552.0, 1_551.0, None, Some(40.0), l);
        let parts = decompose(
            &[(1, 1), (2, 8)],
            &[extras(vec![quiet; 3]), extras(vec![queued; 3])],
        );
        assert_eq!(parts.len(), 2);
        let q = parts[1].server_queue.as_ref().unwrap();
        assert!((q.p90_ms - 1_500.0).abs() < 1e-9, "{q:?}");
        assert!(q.source.starts_with("llama.cpp (derived"), "{}", q.source);
        assert!((parts[1].headers.as_ref().unwrap().p90_ms - 12.0).abs() < 1e-9);
        assert_eq!(parts[0].server_queue.as_ref().unwrap().p90_ms, 0.0);
        assert_eq!(parts[1].prefill.as_ref().unwrap().source, "llama.cpp");
        let names: Vec<&str> = parts[1].named().iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ["headers", "server queue", "prefill", "rest"]);
        // The parts' means add up to the mean TTFT (what the report stacks).
        let sum: f64 = parts[1].named().iter().map(|(_, p)| p.mean_ms).sum();
        assert!((sum - parts[1].ttft.mean_ms).abs() < 1e-9, "{sum}");
        assert!((parts[1].ttft.mean_ms - 1_552.0).abs() < 1e-9);
    }

    #[test]
    fn parts_of_each_request_add_up_to_its_ttft() {
        for (t, h, q, p) in [
            (100.0, 300.0, Some(20.0), Some(50.0)),
            (100.0, 10.0, Some(200.0), Some(50.0)),
            (100.0, 0.0, None, Some(10.0)),
        ] {
            let sp = sample(t, h, q, p, TimingSource::Tgi).split(None);
            let sum = sp.headers.unwrap() + sp.queue.unwrap_or(0.0) + sp.prefill.unwrap() + sp.rest;
            // A server that reports more than TTFT (clock skew) clamps at 0: the sum may exceed.
            assert!(sum >= t - 1e-9, "{t} {h} {q:?} {p:?} -> {sum}");
            if q.unwrap_or(0.0) + p.unwrap() <= t {
                assert!((sum - t).abs() < 1e-9, "{sum}");
            }
        }
        assert!(decompose(&[(1, 1)], &[extras(vec![])]).is_empty());
    }
}
