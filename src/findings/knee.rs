//! The TTFT knee: the first step from which on TTFT stays above the best earlier step, by the
//! one rule of `findings::rise` (P90 well above, a tail that moved, or a queue the server
//! reports, each with confidence, so a noisy server does not produce a knee at random), classified
//! (queueing, saturation, rate-limited) by TPOT and the wall's 429 rule, with the estimated
//! concurrency cap (queueing knees only) and the report sentence that describes it. On a
//! prompt-size ladder TTFT grows with the prompt anyway, so a knee is only where that growth
//! bends upwards beyond its uncertainty (prefill: no queueing class and no cap, with the slope
//! per 1k prompt tokens); a straight line is reported as its slope.

use super::evidence::{cache_share_fell, server_evidence, tpot_flat, TPOT_FLAT};
use super::rise::{first_rise, Rise, RiseSignal, StepSamples, KNEE_ABS_MS, KNEE_RATIO};
use super::ttft_parts::TtftParts;
use super::{
    rate, rate_limited, Knee, KneeFinding, KneeKind, RunCause, StepEvidence, MIN_KNEE_SAMPLES,
};
use crate::model::LadderUnit;
use crate::stats::StepSummary;

fn evidence(s: &StepSummary, p90: f64, parts: Option<&TtftParts>) -> StepEvidence {
    StepEvidence {
        cache_hit_share: s.cache_hit_share(),
        prefill_p90_ms: parts.and_then(|p| p.prefill.as_ref()).map(|p| p.p90_ms),
        step: s.step,
        concurrency: s.concurrency,
        ttft_p50_ms: s.ttft_p50_ms,
        ttft_p90_ms: p90,
        ttft_p99_ms: s.ttft_p99_ms,
        ttft_mean_ms: s.ttft_mean_ms,
        tpot_p50_ms: s.tpot_p50_ms,
    }
}

/// `bounds` holds each step's 95% (lower, upper) bounds of TTFT P90 when the records were
/// available; with any missing, the rule falls back to point values (and says so).
/// `parts`, aligned with `rows`, is each step's TTFT decomposition (the server's evidence).
pub(super) fn find_knee(
    rows: &[&StepSummary],
    n429: &[u64],
    bounds: &[Option<(f64, f64)>],
    parts: &[Option<&TtftParts>],
    samples: &[StepSamples],
) -> KneeFinding {
    let Some(last) = rows.last() else {
        return KneeFinding::NoSteps;
    };
    let mut p90 = Vec::with_capacity(rows.len());
    for s in rows {
        match s.ttft_p90_ms {
            Some(v) if s.succeeded >= MIN_KNEE_SAMPLES && v.is_finite() => p90.push(v),
            _ => {
                return KneeFinding::NotEnoughSamples {
                    step: s.step,
                    concurrency: s.concurrency,
                    n: s.succeeded,
                    needed: MIN_KNEE_SAMPLES,
                }
            }
        }
    }
    let confident: Option<Vec<(f64, f64)>> = (bounds.len() == rows.len())
        .then(|| bounds.iter().copied().collect::<Option<Vec<_>>>())
        .flatten();
    // A prompt-size ladder's TTFT grows with the prompt anyway: only a bend is a knee.
    let accept = |k: usize| {
        rows[k].ladder_unit != LadderUnit::PromptTokens
            || bends(rows, &p90, confident.as_deref(), k)
    };
    if let Some((k, ref_idx, rise)) = first_rise(rows, &p90, confident.as_deref(), samples, &accept)
    {
        let mut knee = describe_knee(rows, n429, (k, ref_idx), &p90, parts, rise);
        knee.with_confidence = confident.is_some();
        return KneeFinding::Knee(Box::new(knee));
    }
    KneeFinding::None {
        highest_step: last.step,
        highest_concurrency: last.concurrency,
        ttft_ms_per_1k_tokens: (last.ladder_unit == LadderUnit::PromptTokens)
            .then(|| slope_per_1k(rows, &p90))
            .flatten(),
    }
}

/// How far above the straight line a prompt-size step's lower bound must lie to be a bend.
const MIN_BEND: f64 = 1.1;

/// On a prompt-size ladder, whether the steps from `k` on lie above the straight line through
/// the two steps before it, beyond its uncertainty: each step's lower 95% bound above the line
/// from the upper bound at `k − 1` with the steepest slope the two steps' bounds allow, by 10%
/// at least (with point values only: 1.5 × the line). A line needs two steps, so the first two are never a
/// knee: a purely linear prefill has none, however steep (it is reported as a slope).
fn bends(rows: &[&StepSummary], p90: &[f64], bounds: Option<&[(f64, f64)]>, k: usize) -> bool {
    if k < 2 {
        return false;
    }
    let x = |i: usize| f64::from(rows[i].concurrency);
    let (a, b) = (k - 2, k - 1);
    if x(b) <= x(a) {
        return false;
    }
    match bounds {
        Some(ci) => {
            // Beyond the uncertainty and by a margin that matters: a nearly noiseless server
            // (the simulator) gives bounds a millisecond wide, and a prompt's own upload then
            // bends a straight line by a few milliseconds "with confidence".
            let steepest = ((ci[b].1 - ci[a].0) / (x(b) - x(a))).max(0.0);
            (k..rows.len()).all(|j| ci[j].0 > MIN_BEND * (ci[b].1 + steepest * (x(j) - x(b))))
        }
        None => {
            let slope = ((p90[b] - p90[a]) / (x(b) - x(a))).max(0.0);
            (k..rows.len()).all(|j| p90[j] > KNEE_RATIO * (p90[b] + slope * (x(j) - x(b))))
        }
    }
}

/// TTFT P90's growth per 1k prompt tokens from the smallest prompt to the largest.
fn slope_per_1k(rows: &[&StepSummary], p90: &[f64]) -> Option<f64> {
    let (first, last) = (rows.first()?, rows.last()?);
    let dx = f64::from(last.concurrency) - f64::from(first.concurrency);
    (dx > 0.0).then(|| (p90[p90.len() - 1] - p90[0]) * 1000.0 / dx)
}

fn describe_knee(
    rows: &[&StepSummary],
    n429: &[u64],
    (k, r): (usize, usize),
    p90: &[f64],
    parts: &[Option<&TtftParts>],
    rise: Rise,
) -> Knee {
    let (knee, reference) = (rows[k], rows[r]);
    let rate_429 = rate(n429[k], knee.attempted);
    let client = if rate_limited(n429[k], knee.attempted) {
        KneeKind::RateLimited
    } else if knee.ladder_unit == LadderUnit::PromptTokens {
        // Fixed concurrency, bigger prompts: prefill, whatever TPOT did.
        KneeKind::Prefill
    } else {
        match (knee.tpot_p50_ms, reference.tpot_p50_ms) {
            (Some(at), Some(base)) if tpot_flat(at, base) => KneeKind::Queueing,
            (Some(_), Some(_)) => KneeKind::Saturation,
            _ => KneeKind::Unclassified,
        }
    };
    let server = server_evidence(rows, parts, (r, k), rise.waited.as_ref(), client);
    // The server's own account wins over the client's inference, except for a 429 wall or a
    // prompt-size ladder (their cause is not a guess).
    let mut kind = match server.as_ref().and_then(|e| e.cause) {
        Some(cause) if !matches!(client, KneeKind::RateLimited | KneeKind::Prefill) => cause,
        _ => client,
    };
    // A cache hit share that fell is the cause, unless the server saw requests wait.
    let queue_seen = server
        .as_ref()
        .is_some_and(|e| e.cause == Some(KneeKind::Queueing) && !e.inferred);
    if cache_share_fell(reference.cache_hit_share(), knee.cache_hit_share())
        && !queue_seen
        && !matches!(client, KneeKind::RateLimited | KneeKind::Prefill)
    {
        kind = KneeKind::CacheMisses;
    }
    // A cap only means something when requests wait in line behind it. Little's law on the
    // requests in service: cap = X × S, S = E2E − wait, wait = TTFT − the reference's TTFT. In a
    // closed loop of N streams X = N / E2E in the steady state (each stream sends again at
    // once), so cap = N × S / E2E: the measured rate would carry the step's ramp and tail, which
    // bias it low (the demo's 16 read as 14). An open loop's offered rate is X itself.
    let x = match knee.ladder_unit {
        LadderUnit::Streams => knee
            .e2e_mean_ms
            .filter(|e| *e > 0.0)
            .map(|e2e| f64::from(knee.concurrency) * 1000.0 / e2e),
        _ => Some(knee.throughput(false)),
    };
    let estimated_cap = match (
        x,
        knee.e2e_mean_ms,
        knee.ttft_mean_ms,
        reference.ttft_mean_ms,
    ) {
        (Some(x), Some(e2e), Some(ttft), Some(ref_ttft)) if kind == KneeKind::Queueing => {
            Some(x * (e2e - (ttft - ref_ttft)) / 1000.0).filter(|c| c.is_finite() && *c > 0.0)
        }
        _ => None,
    };
    let prev = rows[k - 1].concurrency;
    Knee {
        step: knee.step,
        concurrency: knee.concurrency,
        kind,
        max_clean_concurrency: prev,
        rate_429,
        estimated_cap,
        with_confidence: false,
        suggested_next: (knee.concurrency > prev.saturating_add(1))
            .then(|| prev + (knee.concurrency - prev) / 2),
        reference: evidence(reference, p90[r], parts.get(r).copied().flatten()),
        at_knee: evidence(knee, p90[k], parts.get(k).copied().flatten()),
        server_evidence: server,
        rise,
    }
}

/// "max clean concurrency 10", "max clean rate 4 req/s", "max clean prompt size 1000 prompt
/// tokens": the interval's open lower end, in the ladder's unit.
fn max_clean(unit: LadderUnit, value: u32) -> String {
    match unit {
        LadderUnit::Streams => format!("max clean concurrency {value}"),
        LadderUnit::Agents => format!("max clean {}", unit.describe(value)),
        LadderUnit::Rps => format!("max clean rate {}", unit.describe(value)),
        LadderUnit::PromptTokens => format!("max clean prompt size {value} tokens"),
        LadderUnit::Speed => format!("max clean speed {}", unit.describe(value)),
    }
}

pub(super) fn knee_sentence(knee: &KneeFinding, unit: LadderUnit) -> String {
    let k = match knee {
        KneeFinding::NoSteps => return "No steps to analyze.".to_string(),
        KneeFinding::None {
            highest_concurrency,
            ttft_ms_per_1k_tokens: Some(per_1k),
            ..
        } => {
            return format!(
                "No TTFT knee up to {}: TTFT grows with prompt size in a straight line, {per_1k:+.0} ms per 1k prompt tokens (TTFT P90), with no bend beyond its uncertainty.",
                unit.describe(*highest_concurrency)
            )
        }
        KneeFinding::None {
            highest_concurrency,
            ..
        } => {
            return format!(
                "No TTFT knee up to {}.",
                unit.describe(*highest_concurrency)
            )
        }
        KneeFinding::NotEnoughSamples {
            concurrency,
            n,
            needed,
            ..
        } => {
            return format!(
                "Knee: not analysed (the step {} has {n} successful requests; need ≥ {needed}).",
                unit.at(*concurrency)
            )
        }
        KneeFinding::Knee(k) => k,
    };
    let (r, a) = (&k.reference, &k.at_knee);
    let cause = k.cause().words;
    let mut s = format!(
        "TTFT knee in ({}, {}] {}: {cause} (TTFT P90 {:.0} → {:.0} ms",
        k.max_clean_concurrency,
        k.concurrency,
        unit.plural(),
        r.ttft_p90_ms,
        a.ttft_p90_ms
    );
    if let (Some(from), Some(to)) = (r.ttft_mean_ms, a.ttft_mean_ms) {
        s.push_str(&format!(", mean {from:.0} → {to:.0} ms"));
    }
    s.push_str(&tail_words(k));
    s.push(')');
    if k.kind == KneeKind::Prefill && a.concurrency > r.concurrency {
        let per_1k =
            (a.ttft_p90_ms - r.ttft_p90_ms) * 1000.0 / f64::from(a.concurrency - r.concurrency);
        s.push_str(&format!(
            "; TTFT grows with prompt size: {per_1k:+.0} ms per 1k prompt tokens"
        ));
    }
    let streams = unit.closed_loop();
    if let Some(cap) = k.estimated_cap {
        // The cap counts requests in flight, whatever the ladder's values count.
        let what = match (streams, cap.round() == 1.0) {
            (true, _) => "",
            (false, true) => " request in flight",
            (false, false) => " requests in flight",
        };
        s.push_str(&format!("; estimated cap ≈ {cap:.0}{what}"));
    }
    s.push_str(&format!("; {}.", max_clean(unit, k.max_clean_concurrency)));
    match k.estimated_cap {
        // The cap estimate sits below the last "clean" step: that step already queued, by too
        // little for the rise rule to tell from noise. Say so rather than contradict ourselves.
        Some(cap) if streams && cap.round() < f64::from(k.max_clean_concurrency) => {
            s.push_str(&format!(
                " The cap estimate is below {0}: requests probably already waited {1}, by too few or too little to tell with confidence (P90 ×{2} and +{3:.0} ms, or 5 points more slow or waiting requests); try {4} to confirm.",
                k.max_clean_concurrency,
                unit.at(k.max_clean_concurrency),
                KNEE_RATIO,
                KNEE_ABS_MS,
                unit.describe(cap.round().max(1.0) as u32)
            ));
        }
        _ => {
            if let Some(next) = k.suggested_next {
                s.push_str(&format!(" Try {} to narrow it.", unit.describe(next)));
            }
        }
    }
    if !k.with_confidence {
        s.push_str(" (Point values: no per-request samples for a confidence bound.)");
    }
    s
}

/// What moved when P90 did not move past the threshold (a cap just crossed: the tail or the
/// server's queue made the knee): "; P99 754 → 2749 ms, requests slower than 1020 ms 0% → 11%,
/// waited ≥ 170 ms in the server's queue 0% → 11%"; empty when P90 itself rose that far.
fn tail_words(k: &Knee) -> String {
    let (r, a) = (&k.reference, &k.at_knee);
    let mut out = String::new();
    let threshold = super::rise::knee_threshold_ms(r.ttft_p90_ms);
    if k.rise.signals.contains(&RiseSignal::P90) || a.ttft_p90_ms >= threshold {
        return out;
    }
    if let (Some(from), Some(to)) = (r.ttft_p99_ms, a.ttft_p99_ms) {
        out.push_str(&format!("; P99 {from:.0} → {to:.0} ms"));
    }
    let pct = |v: f64| format!("{:.0}%", v * 100.0);
    if let Some(t) = &k.rise.slow {
        out.push_str(&format!(
            ", requests slower than {:.0} ms {} → {}",
            t.beyond_ms,
            pct(t.reference),
            pct(t.at_knee)
        ));
    }
    if let Some(w) = &k.rise.waited {
        out.push_str(&format!(
            ", waited ≥ {:.0} ms in the server's queue {} → {}",
            w.beyond_ms,
            pct(w.reference),
            pct(w.at_knee)
        ));
    }
    out
}

impl Knee {
    /// The knee's cause, seen or inferred, with its evidence in words: the server's evidence
    /// when there is some (confirming or correcting the client-side reading), else what the
    /// client timings suggest, said to be inferred. The knee line, `diff` (for a step at or past
    /// the knee whose server time moved) and the report all give these words.
    pub fn cause(&self) -> RunCause {
        let (r, a) = (&self.reference, &self.at_knee);
        let tpot_change = match (a.tpot_p50_ms, r.tpot_p50_ms) {
            (Some(at), Some(base)) if base > 0.0 => Some((at / base - 1.0) * 100.0),
            _ => None,
        };
        let (seen, words) = cause_words(self, tpot_change);
        RunCause {
            kind: self.kind,
            seen,
            words,
        }
    }
}

/// Whether the cause was seen (the server's queue, waiting requests or KV cache, or 429s) and
/// the words. `tpot_change` is the TPOT P50 change from the reference step, in percent.
fn cause_words(k: &Knee, tpot_change: Option<f64>) -> (bool, String) {
    let tpot_words = match tpot_change {
        Some(c) if c.abs() < (TPOT_FLAT - 1.0) * 100.0 => "TPOT flat".to_string(),
        Some(c) => format!("TPOT {c:+.0}%"),
        None => "no TPOT".to_string(),
    };
    let inferred = |words: String| (false, words);
    match (k.kind, &k.server_evidence) {
        (KneeKind::CacheMisses, _) => cache_miss_words(k, &tpot_words),
        (KneeKind::RateLimited, _) => (
            true,
            format!("rate-limited, {:.1}% 429s", k.rate_429 * 100.0),
        ),
        (KneeKind::Prefill, _) => inferred(
            "prefill, inferred: TTFT grew with the prompt size at the same load".to_string(),
        ),
        (kind, Some(e)) if e.cause == Some(kind) && e.inferred => inferred(format!(
            "{}, inferred (the server's time grew with load, {tpot_words}): {}",
            kind.name(),
            e.words()
        )),
        (kind, Some(e)) if e.cause == Some(kind) => {
            let how = if e.confirms_client {
                "confirmed by the server".to_string()
            } else {
                format!("by the server's own data ({tpot_words} misleads)")
            };
            (true, format!("{}, {how}: {}", kind.name(), e.words()))
        }
        // A time that does not split queue from prefill cannot show a queue either way.
        (kind, Some(e)) if e.only_unsplit() => inferred(format!(
            "{}, {tpot_words} (inferred from client timings; the server's time did not grow with TTFT: {})",
            kind.name(),
            e.words()
        )),
        (kind, Some(e)) => inferred(format!(
            "{}, {tpot_words}; the server's data does not show a queue: {}",
            kind.name(),
            e.words()
        )),
        (KneeKind::Queueing, None) => {
            inferred("queueing, TPOT flat (inferred from client timings)".into())
        }
        (KneeKind::Saturation, None) => inferred(match tpot_change {
            Some(c) => format!("saturation, TPOT up {c:.0}% (inferred from client timings)"),
            None => "saturation, TPOT up (inferred from client timings)".to_string(),
        }),
        (KneeKind::Unclassified, None) => {
            inferred("cause unclear (no TPOT to compare)".to_string())
        }
    }
}

/// "prefill of cache misses: cache hit share 91% → 34%, server queue flat, prefill P90 109 →
/// 204 ms (sim)": seen when the server's own prefill rose by at least half of TTFT P90's rise,
/// else inferred from the share and the client's timings.
fn cache_miss_words(k: &Knee, tpot_words: &str) -> (bool, String) {
    let (r, a) = (&k.reference, &k.at_knee);
    let pct = |v: Option<f64>| v.map_or_else(|| "?".into(), |v| format!("{:.0}%", v * 100.0));
    let mut words = format!(
        "cache hit share {} → {}",
        pct(r.cache_hit_share),
        pct(a.cache_hit_share)
    );
    let queue = k
        .server_evidence
        .as_ref()
        .and_then(|e| e.series.iter().find(|s| s.series == "server_queue_p90_ms"));
    if let Some(q) = queue {
        words.push_str(&format!(
            ", server queue flat (P90 {:.0} → {:.0} ms)",
            q.reference, q.at_knee
        ));
    }
    let rise = a.ttft_p90_ms - r.ttft_p90_ms;
    let prefill = match (r.prefill_p90_ms, a.prefill_p90_ms) {
        (Some(from), Some(to)) => {
            words.push_str(&format!(", prefill P90 {from:.0} → {to:.0} ms"));
            rise > 0.0 && to - from >= 0.5 * rise
        }
        _ => false,
    };
    if prefill {
        (true, format!("prefill of cache misses: {words}"))
    } else {
        (
            false,
            format!("prefill of cache misses, inferred ({tpot_words}): {words}"),
        )
    }
}
