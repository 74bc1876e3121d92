//! The server's own evidence about a TTFT knee: its queue (the per-request queue times it sent,
//! or llama.cpp's derived ones, and the `waiting` series of its `/metrics`), how many requests
//! it ran at once, and its KV-cache use. Requests waiting in the server's queue at the knee, and
//! not before, is queueing, whatever TPOT did (two sequences decoded together on a CPU slow each
//! other down before any request waits); no wait and a full KV cache is saturation. A server
//! that reports queue and prefill only as one time (`openai-processing-ms`, a LiteLLM gateway)
//! shows no queue; that time growing with load while TPOT stays flat is queueing, inferred, not
//! seen ([`unsplit_server_cause`]; `diff` gives the knee's cause for a step at or past it). Without server data the client's
//! inference stands, and the sentence says it is inferred.

use super::rise::ShareShift;
use super::ttft_parts::{TtftParts, PROCESSING};
use super::KneeKind;
use crate::stats::StepSummary;
use serde::{Deserialize, Serialize};

/// The server's queue explains the knee when its P90 rose by at least this share of the rise of
/// TTFT P90 (the rest is network, prefill or decode).
const QUEUE_SHARE: f64 = 0.5;
/// Requests waiting on average at the knee step (from `/metrics`) that make a queue.
const WAITING_MIN: f64 = 1.0;
/// KV-cache use at which a server cannot admit more: saturation.
const KV_FULL: f64 = 0.9;
/// TPOT P50 within +20% of the reference step: decode did not slow down.
pub(super) const TPOT_FLAT: f64 = 1.2;

/// A cache hit share that fell by at least this many points (as a fraction)...
pub const CACHE_DROP: f64 = 0.05;
/// ...so that the uncached share of the input grew by at least this factor is cache misses.
const UNCACHED_GROWTH: f64 = 1.25;

/// The one rule for "the cache hit share fell" (the knee's cause, `diff`'s TTFT decomposition):
/// from `before` to `after` by at least [`CACHE_DROP`], and the input prefilled again (the
/// uncached share) grew by a quarter at least: 84% → 78% is 16% → 22% of the prompt prefilled.
pub fn cache_share_fell(before: Option<f64>, after: Option<f64>) -> bool {
    matches!((before, after), (Some(b), Some(a))
        if b - a >= CACHE_DROP && (1.0 - a) >= UNCACHED_GROWTH * (1.0 - b))
}

/// Whether TPOT P50 `at` stayed within +20% of `reference`'s.
pub(super) fn tpot_flat(at: f64, reference: f64) -> bool {
    at <= TPOT_FLAT * reference
}

/// The one rule for a server time that covers queue and prefill together, between a step with
/// less load and one with more at the same prompt size: it grew by at least half of TTFT P90's
/// rise while TPOT stayed flat, so requests waited (prefill does not grow with load when decode
/// does not slow down): queueing, inferred. `None`: it cannot tell.
fn unsplit_server_cause(
    processing_rise_ms: f64,
    ttft_rise_ms: f64,
    tpot_is_flat: bool,
) -> Option<KneeKind> {
    (ttft_rise_ms > 0.0 && processing_rise_ms >= QUEUE_SHARE * ttft_rise_ms && tpot_is_flat)
        .then_some(KneeKind::Queueing)
}

/// One series compared between the reference step and the knee step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvidenceSeries {
    /// `server_queue_p90_ms`, `server_processing_p90_ms` (queue + prefill, not split),
    /// `waiting_max`, `waiting_mean`, `running_max` or `kv_cache_max`.
    pub series: String,
    pub reference: f64,
    pub at_knee: f64,
    /// Where the values come from (`sim`, `llama.cpp`, `metrics`, ...).
    pub source: String,
}

/// What the server's data says about the knee's cause (`findings.json` `server_evidence`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerEvidence {
    /// The cause the server's data points to; `None` when it points to neither.
    pub cause: Option<KneeKind>,
    /// Whether the server's data agrees with the client-side classification.
    pub confirms_client: bool,
    /// The cause is inferred from a server time that does not split queue from prefill (it
    /// grew with load while TPOT stayed flat), not seen in a queue the server reported.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub inferred: bool,
    pub series: Vec<EvidenceSeries>,
    /// The same steps' `running_max` from the knee on, when it stays at one value (the cap).
    pub running_cap: Option<f64>,
}

/// The server's evidence between `reference` and `knee` (indices into `rows`; `parts` aligned
/// with `rows`), or `None` when the server sent nothing usable.
pub(super) fn server_evidence(
    rows: &[&StepSummary],
    parts: &[Option<&TtftParts>],
    (reference, knee): (usize, usize),
    waited: Option<&ShareShift>,
    client: KneeKind,
) -> Option<ServerEvidence> {
    let (r, k) = (rows[reference], rows[knee]);
    let mut series = Vec::new();
    let queue_of = |i: usize| {
        parts
            .get(i)
            .copied()
            .flatten()
            .and_then(|p| p.server_queue.as_ref())
    };
    if let (Some(qr), Some(qk)) = (queue_of(reference), queue_of(knee)) {
        series.push(EvidenceSeries {
            series: "server_queue_p90_ms".into(),
            reference: qr.p90_ms,
            at_knee: qk.p90_ms,
            source: qk.source.clone(),
        });
    }
    let processing_of = |i: usize| {
        parts
            .get(i)
            .copied()
            .flatten()
            .and_then(|p| p.server_processing.as_ref())
    };
    if let (Some(pr), Some(pk)) = (processing_of(reference), processing_of(knee)) {
        series.push(EvidenceSeries {
            series: "server_processing_p90_ms".into(),
            reference: pr.p90_ms,
            at_knee: pk.p90_ms,
            source: pk.source.clone(),
        });
    }
    let metric = |name: &str, f: fn(&StepSummary) -> Option<f64>| {
        Some(EvidenceSeries {
            series: name.into(),
            reference: f(r)?,
            at_knee: f(k)?,
            source: "metrics".into(),
        })
    };
    series.extend(metric("waiting_max", |s| s.server_waiting_max));
    series.extend(metric("waiting_mean", |s| s.server_waiting_mean));
    series.extend(metric("running_max", |s| s.server_running_max));
    series.extend(metric("kv_cache_max", |s| s.server_kv_max));
    if series.is_empty() {
        return None;
    }
    let get = |name: &str| series.iter().find(|s| s.series == name);
    let ttft_rise = k.ttft_p90_ms.unwrap_or(0.0) - r.ttft_p90_ms.unwrap_or(0.0);
    // A share of requests that waited in the server's queue where none did (a cap just
    // crossed: P90 barely moves, so its queue's P90 need not either) is a queue too.
    let queue_explains = waited.is_some()
        || get("server_queue_p90_ms")
            .is_some_and(|q| ttft_rise > 0.0 && q.at_knee - q.reference >= QUEUE_SHARE * ttft_rise);
    let waits = get("waiting_mean")
        .is_some_and(|w| w.at_knee >= WAITING_MIN && w.reference < WAITING_MIN)
        || get("waiting_max")
            .is_some_and(|w| w.at_knee >= WAITING_MIN && w.reference < WAITING_MIN);
    let kv_full = get("kv_cache_max").is_some_and(|s| s.at_knee >= KV_FULL);
    let tpot_is_flat =
        matches!((k.tpot_p50_ms, r.tpot_p50_ms), (Some(a), Some(b)) if tpot_flat(a, b));
    let unsplit = get("server_processing_p90_ms")
        .and_then(|p| unsplit_server_cause(p.at_knee - p.reference, ttft_rise, tpot_is_flat));
    let (cause, inferred) = if queue_explains || waits {
        (Some(KneeKind::Queueing), false)
    } else if kv_full {
        (Some(KneeKind::Saturation), false)
    } else {
        (unsplit, unsplit.is_some())
    };
    let running: Vec<f64> = rows[knee..]
        .iter()
        .filter_map(|s| s.server_running_max)
        .collect();
    let running_cap = (running.len() == rows.len() - knee
        && running.windows(2).all(|w| w[0] == w[1]))
    .then(|| running.first().copied())
    .flatten()
    .filter(|_| cause == Some(KneeKind::Queueing));
    Some(ServerEvidence {
        confirms_client: cause == Some(client),
        inferred,
        cause,
        series,
        running_cap,
    })
}

impl ServerEvidence {
    /// Whether the only server data is a time that does not split queue from prefill.
    pub fn only_unsplit(&self) -> bool {
        self.series
            .iter()
            .all(|s| s.series == "server_processing_p90_ms")
    }

    /// "confirmed by the server: waiting 0 → 31, running capped at 16" and the like.
    pub fn words(&self) -> String {
        let shown: Vec<String> = self
            .series
            .iter()
            .filter(|s| s.series != "waiting_mean" && s.series != "running_max")
            .map(|s| match s.series.as_str() {
                "server_queue_p90_ms" => format!(
                    "server queue P90 {:.0} → {:.0} ms ({})",
                    s.reference, s.at_knee, s.source
                ),
                "server_processing_p90_ms" => format!(
                    "{PROCESSING}, P90 {:.0} → {:.0} ms ({})",
                    s.reference, s.at_knee, s.source
                ),
                "waiting_max" => format!("waiting {:.0} → {:.0}", s.reference, s.at_knee),
                "kv_cache_max" => format!(
                    "KV cache {:.0}% → {:.0}%",
                    s.reference * 100.0,
                    s.at_knee * 100.0
                ),
                other => format!("{other} {:.1} → {:.1}", s.reference, s.at_knee),
            })
            .collect();
        let mut out = shown.join(", ");
        if let Some(cap) = self.running_cap {
            out.push_str(&format!(", running capped at {cap:.0}"));
        }
        out
    }
}
