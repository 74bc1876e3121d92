//! Which part of TTFT moved, for every TTFT P90 regression: the change of each part's P90
//! (headers, server queue, prefill, rest; `findings::ttft_parts` splits each request) with a
//! 99% bootstrap CI, and the cause the part that moved names: headers is the network (or a
//! gateway's admission), the server queue is queueing, prefill is the model, the rest is what is
//! left (first decode, tokenization). A part is named only when its CI excludes 0; the largest
//! such rise is the cause. A server time that covers queue and prefill together
//! (`server: queue + prefill, not split`, e.g. `openai-processing-ms`) names neither by itself:
//! at or past the new run's knee the cause is the run's own (`findings::Knee::cause`, the knee
//! line's words: queueing inferred when that time grew with load while TPOT stayed flat);
//! below it, or without a knee, the time did not grow with this run's load and the sentence
//! says queue and prefill cannot be told apart. Pure and seeded, like the checks.

use super::types::{
    Check, Metric, PartChange, Percentile, RequestSample, Side, TtftCause, Verdict,
};
use crate::findings::ttft_parts::{least_overhead, PartValues, PROCESSING};
use crate::findings::{cache_share_fell, PartSample};
use crate::stats::inference::{generator, resampled_quantile};
use crate::stats::StepSummary;
use crate::util::duration::signed_ms_text as signed;

/// Resamples per part (each a pair of P90 draws).
const RESAMPLES: usize = 4_000;
/// Two-sided confidence of the part CIs, as the checks' 99%.
const CONFIDENCE: f64 = 0.99;

/// The explanation of every regressed TTFT P90 check with per-request parts on both sides.
pub(super) fn explain(base: &Side, new: &Side, checks: &[Check], seed: u64) -> Vec<TtftCause> {
    let (Some(bs), Some(ns)) = (&base.samples, &new.samples) else {
        return Vec::new();
    };
    checks
        .iter()
        .filter(|c| {
            c.metric == Metric::Ttft
                && c.percentile == Some(Percentile::P90)
                && c.verdict == Verdict::Regressed
        })
        .filter_map(|c| {
            let conc = c.concurrency?;
            let b = step_values(base, bs, &c.model, conc)?;
            let n = step_values(new, ns, &c.model, conc)?;
            let mut cause = explain_step(c, &b, &n, seed);
            if cause.cause.as_deref() == Some(PROCESSING) {
                unsplit_cause(&mut cause, new, &c.model, conc);
            }
            if cause.cause.as_deref() == Some("prefill") {
                cache_miss_cause(&mut cause, (base, new), &c.model, conc);
            }
            Some(cause)
        })
        .collect()
}

/// The parts of one model × step of a side (its derived-queue floor from the whole model).
fn step_values(
    side: &Side,
    samples: &[RequestSample],
    model: &str,
    conc: u32,
) -> Option<PartValues> {
    let step = side
        .summaries
        .iter()
        .find(|s| s.model == model && s.concurrency == conc)?
        .step;
    let of_model = || {
        samples
            .iter()
            .filter(|s| s.model == model)
            .filter_map(|s| s.parts.as_ref())
    };
    let floor = least_overhead(of_model());
    let at: Vec<PartSample> = samples
        .iter()
        .filter(|s| s.model == model && s.step == step)
        .filter_map(|s| s.parts)
        .collect();
    (!at.is_empty()).then(|| PartValues::of(&at, floor))
}

fn explain_step(c: &Check, b: &PartValues, n: &PartValues, seed: u64) -> TtftCause {
    let mut rng = generator(seed ^ u64::from(c.concurrency.unwrap_or(0)));
    let parts: Vec<PartChange> = b
        .named()
        .iter()
        .zip(n.named())
        .filter_map(|((name, bv), (_, nv))| {
            let (bs, ns) = (sorted(bv), sorted(nv));
            let (bq, nq) = (p90(&bs)?, p90(&ns)?);
            let mut diffs: Vec<f64> = (0..RESAMPLES)
                .map(|_| {
                    resampled_quantile(&ns, 0.9, ns.len(), &mut rng)
                        - resampled_quantile(&bs, 0.9, bs.len(), &mut rng)
                })
                .collect();
            diffs.sort_by(f64::total_cmp);
            let tail = (1.0 - CONFIDENCE) / 2.0;
            let lo = crate::stats::quantile_sorted(&diffs, tail)?;
            let hi = crate::stats::quantile_sorted(&diffs, 1.0 - tail)?;
            Some(PartChange {
                part: name.to_string(),
                base_p90_ms: bq,
                new_p90_ms: nq,
                change_ms: nq - bq,
                ci_ms: (lo, hi),
            })
        })
        .collect();
    let cause = parts
        .iter()
        .filter(|p| p.ci_ms.0 > 0.0)
        .max_by(|a, b| a.change_ms.total_cmp(&b.change_ms))
        .map(|p| cause_of(&p.part).to_string());
    let ttft_change = c.new.unwrap_or(0.0) - c.base.unwrap_or(0.0);
    let shown: Vec<String> = parts
        .iter()
        .map(|p| {
            format!(
                "{} {} [{}, {}]",
                p.part,
                signed(p.change_ms),
                signed(p.ci_ms.0),
                signed(p.ci_ms.1)
            )
        })
        .collect();
    let sentence = format!(
        "{}: TTFT P90 {}: {}: {}",
        c.title(),
        signed(ttft_change),
        shown.join("; "),
        cause
            .as_deref()
            .unwrap_or("no single part moved with confidence")
    );
    TtftCause {
        model: c.model.clone(),
        concurrency: c.concurrency.unwrap_or(0),
        ladder_unit: c.ladder_unit,
        ttft_p90_change_ms: ttft_change,
        parts,
        cause,
        inferred: false,
        evidence: None,
        sentence,
    }
}

fn cause_of(part: &str) -> &'static str {
    match part {
        "headers" => "network",
        "server queue" => "queueing",
        "prefill" => "prefill",
        PROCESSING => PROCESSING,
        _ => "other",
    }
}

/// The server's unsplit time (queue + prefill) moved most at `conc`: at or past the new run's
/// knee, the run's own cause (the knee line's words, seen or inferred); otherwise neither queue
/// nor prefill is named, since the time did not grow with this run's load (a slower model or a
/// queue behind other traffic look the same) and the server does not split them.
fn unsplit_cause(cause: &mut TtftCause, new: &Side, model: &str, conc: u32) {
    let head = cause
        .sentence
        .strip_suffix(PROCESSING)
        .unwrap_or(&cause.sentence)
        .to_string();
    let unit = cause.ladder_unit;
    match new.knee_cause.get(model).filter(|(at, _)| *at <= conc) {
        Some((at, run)) => {
            cause.cause = Some(run.kind.name().to_string());
            cause.inferred = !run.seen;
            cause.evidence = Some(run.words.clone());
            cause.sentence = format!(
                "{head}{} (the new run's cause, from its knee {})",
                run.words,
                unit.at(*at)
            );
        }
        None => {
            let why = match new.knee.get(model) {
                Some(Some(at)) => format!("the new run's knee is only {}", unit.at(*at)),
                Some(None) => "the new run has no knee".to_string(),
                None => "the new run's knee was not analysed".to_string(),
            };
            let evidence = format!(
                "{why}, so it did not grow with this run's load; the server reports queue and prefill as one time, so a slower prefill and a queue behind other traffic cannot be told apart"
            );
            cause.cause = Some(PROCESSING.to_string());
            cause.inferred = false;
            cause.sentence = format!("{head}{PROCESSING} ({evidence})");
            cause.evidence = Some(evidence);
        }
    }
}

/// Prefill moved and the step's cache hit share fell (`findings::cache_share_fell`, the knee's
/// rule): "prefill (cache misses): cache hit share 81% → 0%".
fn cache_miss_cause(cause: &mut TtftCause, (base, new): (&Side, &Side), model: &str, conc: u32) {
    let share = |side: &Side| {
        side.summaries
            .iter()
            .find(|s| s.model == model && s.concurrency == conc)
            .and_then(StepSummary::cache_hit_share)
    };
    let (b, n) = (share(base), share(new));
    if let (true, Some(b), Some(n)) = (cache_share_fell(b, n), b, n) {
        let words = format!("cache hit share {:.0}% → {:.0}%", b * 100.0, n * 100.0);
        cause.cause = Some(CACHE_MISSES.to_string());
        cause.sentence = format!(
            "{}{CACHE_MISSES}: {words}",
            cause
                .sentence
                .strip_suffix("prefill")
                .unwrap_or(&cause.sentence)
        );
        cause.evidence = Some(words);
    }
}

/// The part that moved when it was the prefill of cache misses.
pub const CACHE_MISSES: &str = "prefill (cache misses)";

fn sorted(v: &[f64]) -> Vec<f64> {
    let mut s: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    s.sort_by(f64::total_cmp);
    s
}

fn p90(sorted: &[f64]) -> Option<f64> {
    crate::stats::quantile_sorted(sorted, 0.9)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::{KneeKind, RunCause};
    use crate::model::LadderUnit;
    use crate::model::TimingSource;
    use crate::stats::StepSummary;

    fn side(queue: f64, headers: f64) -> Side {
        let samples = (0..60)
            .map(|i| {
                let jitter = f64::from(i % 7);
                let (q, h) = (queue + jitter, headers + jitter);
                RequestSample {
                    model: "m".into(),
                    step: 1,
                    ok: true,
                    ttft_ms: Some(h + q + 100.0),
                    parts: Some(PartSample {
                        ttft_ms: h + q + 100.0,
                        headers_ms: Some(h + q),
                        queue_ms: Some(q),
                        prefill_ms: Some(100.0),
                        processing_ms: None,
                        source: Some(TimingSource::Sim),
                    }),
                    ..RequestSample::default()
                }
            })
            .collect();
        Side {
            summaries: vec![StepSummary {
                model: "m".into(),
                step: 1,
                concurrency: 20,
                ..StepSummary::default()
            }],
            samples: Some(samples),
            ..Side::default()
        }
    }

    fn regressed(base: f64, new: f64) -> Check {
        Check {
            model: "m".into(),
            step: Some(1),
            concurrency: Some(20),
            ladder_unit: LadderUnit::Streams,
            metric: Metric::Ttft,
            percentile: Some(Percentile::P90),
            gated: true,
            base: Some(base),
            new: Some(new),
            ratio: None,
            ci: None,
            method: super::super::types::Method::Bootstrap,
            verdict: Verdict::Regressed,
            detail: String::new(),
        }
    }

    #[test]
    fn the_part_that_moved_names_the_cause() {
        let c = explain(
            &side(0.0, 2.0),
            &side(1600.0, 4.0),
            &[regressed(108.0, 1710.0)],
            7,
        );
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].cause.as_deref(), Some("queueing"), "{}", c[0].sentence);
        assert!(
            c[0].sentence
                .starts_with("TTFT P90 at 20 streams: TTFT P90 +1.6 s: headers +2.0 ms ["),
            "{}",
            c[0].sentence
        );
        let q = &c[0].parts[1];
        assert_eq!(q.part, "server queue");
        assert!(q.ci_ms.0 > 1500.0 && q.ci_ms.1 < 1700.0, "{q:?}");
        // Prefill did not move: its CI is [0, 0].
        assert_eq!(c[0].parts[2].ci_ms, (0.0, 0.0));
        let c = explain(
            &side(0.0, 2.0),
            &side(0.0, 302.0),
            &[regressed(108.0, 408.0)],
            7,
        );
        assert_eq!(c[0].cause.as_deref(), Some("network"), "{}", c[0].sentence);
        // Nothing explained without samples, or for a check that did not regress.
        let mut quiet = regressed(108.0, 408.0);
        quiet.verdict = Verdict::NoChange;
        assert!(explain(&side(0.0, 2.0), &side(0.0, 302.0), &[quiet], 7).is_empty());
        let bare = Side {
            samples: None,
            ..side(0.0, 2.0)
        };
        assert!(explain(&bare, &side(0.0, 2.0), &[regressed(1.0, 2.0)], 7).is_empty());
    }

    /// A hosted API's side: the server reports queue + prefill as one time (`openai`).
    fn unsplit_side(server_ms: f64) -> Side {
        let mut s = side(0.0, 2.0);
        for r in s.samples.iter_mut().flatten() {
            let p = r.parts.as_mut().unwrap();
            let jitter = p.headers_ms.unwrap() - 2.0;
            let server = server_ms + jitter;
            (p.ttft_ms, p.headers_ms) = (server + 3.0, Some(server + 2.0));
            (p.queue_ms, p.prefill_ms, p.processing_ms) = (None, None, Some(server));
            p.source = Some(TimingSource::OpenAi);
            r.ttft_ms = Some(p.ttft_ms);
        }
        s
    }

    #[test]
    fn an_unsplit_server_time_takes_the_new_runs_cause_never_prefill() {
        let run = RunCause {
            kind: KneeKind::Queueing,
            seen: false,
            words: "queueing, inferred (the server's time grew with load, TPOT flat): server: queue + prefill, not split, P90 150 → 1250 ms (openai)".into(),
        };
        let mut new = unsplit_side(1250.0);
        new.knee.insert("m".into(), Some(20));
        new.knee_cause.insert("m".into(), (20, run.clone()));
        let c = explain(&unsplit_side(150.0), &new, &[regressed(153.0, 1253.0)], 7);
        let c = &c[0];
        let names: Vec<&str> = c.parts.iter().map(|p| p.part.as_str()).collect();
        assert_eq!(
            names,
            ["headers", "server: queue + prefill, not split", "rest"]
        );
        assert_eq!(
            (c.cause.as_deref(), c.inferred, c.evidence.as_deref()),
            (Some("queueing"), true, Some(run.words.as_str()))
        );
        assert!(
            c.sentence.ends_with(&format!(
                "server: queue + prefill, not split +1.1 s [+1.1 s, +1.1 s]; rest +0.0 ms [+0.0 ms, +0.0 ms]: {} (the new run's cause, from its knee at 20 streams)",
                run.words
            )),
            "{}",
            c.sentence
        );
        assert!(!c.sentence.contains(": prefill"), "{}", c.sentence);
        // Below the new run's knee (or without one) the time did not grow with this run's load:
        // neither queue nor prefill is named.
        new.knee.insert("m".into(), Some(40));
        new.knee_cause.insert("m".into(), (40, run));
        let c = explain(&unsplit_side(150.0), &new, &[regressed(153.0, 1253.0)], 7);
        assert_eq!(
            (c[0].cause.as_deref(), c[0].inferred),
            (Some("server: queue + prefill, not split"), false)
        );
        assert!(
            c[0].sentence.ends_with(": server: queue + prefill, not split (the new run's knee is only at 40 streams, so it did not grow with this run's load; the server reports queue and prefill as one time, so a slower prefill and a queue behind other traffic cannot be told apart)"),
            "{}",
            c[0].sentence
        );
    }
}
