//! Baseline vs new run → verdicts (DESIGN §5, exit codes §7). This is the part of ladder that
//! decides whether a release fails, so it is pure (no clock, no files, seeded randomness) and
//! judges every model × step × metric × percentile with the documented rule, says which rule it
//! used, and never drops data silently: steps or models present on one side only are listed.
//!
//! Steps are matched by model and concurrency (not by step index), so inserting a step into a
//! ladder does not shift every comparison. User-facing text names a step by its concurrency.

mod inference;
mod latency;
mod rules;
mod side;
#[cfg(test)]
mod tests;
mod types;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::scenario::{Gates, MetricGate};
use crate::stats::StepSummary;
use latency::{Evidence, Rule};
use rules::{error_rate, findings_check, throughput};
pub use types::{
    Check, CompareOptions, Comparison, Counts, Method, Metric, Outcome, Percentile, RequestSample,
    Side, Verdict, WorkloadMismatch,
};

/// Judges `new` against `base`. Refuses (no checks) when the workload fingerprints differ and
/// `opts.allow_different_workload` is off. Deterministic for a given `opts.seed`.
/// Fewest successful requests per side for a throughput (TPM, RPS) verdict.
pub const MIN_THROUGHPUT_SAMPLES: u64 = 40;

pub fn compare(base: &Side, new: &Side, opts: &CompareOptions) -> Comparison {
    let mut out = Comparison {
        base_label: base.label.clone(),
        new_label: new.label.clone(),
        base_fingerprint: base.fingerprint.clone(),
        new_fingerprint: new.fingerprint.clone(),
        strict: opts.strict,
        refused: None,
        checks: Vec::new(),
        unmatched: Vec::new(),
        notes: Vec::new(),
    };
    if base.fingerprint != new.fingerprint {
        if !opts.allow_different_workload {
            out.refused = Some(mismatch(base, new));
            return out;
        }
        out.notes.push(format!(
            "the workloads differ (fingerprint {} vs {}); compared anyway because different workloads were allowed",
            base.fingerprint, new.fingerprint
        ));
    }
    let b = Indexed::new(base, "the baseline", &mut out.notes);
    let n = Indexed::new(new, "the new run", &mut out.notes);
    let models: BTreeSet<&str> = b
        .steps
        .keys()
        .chain(n.steps.keys())
        .map(|(m, _)| m.as_str())
        .collect();
    for model in models {
        let in_b = b.has_model(model);
        let in_n = n.has_model(model);
        if !(in_b && in_n) {
            let (side, label) = if in_b {
                ("the baseline", &base.label)
            } else {
                ("the new run", &new.label)
            };
            out.unmatched
                .push(format!("model {model}: only in {side} ({label})"));
            continue;
        }
        let concs: BTreeSet<u32> = b
            .concurrencies(model)
            .chain(n.concurrencies(model))
            .collect();
        for conc in concs {
            let key = (model.to_string(), conc);
            match (b.steps.get(&key), n.steps.get(&key)) {
                (Some(bs), Some(ns)) => step_checks(&mut out.checks, opts, (&b, bs), (&n, ns)),
                (Some(_), None) => out.unmatched.push(format!(
                    "model {model} step {conc}: only in the baseline ({})",
                    base.label
                )),
                _ => out.unmatched.push(format!(
                    "model {model} step {conc}: only in the new run ({})",
                    new.label
                )),
            }
        }
        let new_top = n.concurrencies(model).max();
        for (metric, bm, nm) in [
            (Metric::Knee, &base.knee, &new.knee),
            (Metric::Wall, &base.wall, &new.wall),
        ] {
            let mut check = findings_check(model, metric, bm.get(model), nm.get(model));
            // "Gone" only counts when the new run went as far as the baseline's finding.
            if let (Some(c), Some(Some(at)), Some(None)) =
                (check.as_mut(), bm.get(model), nm.get(model))
            {
                if new_top.is_some_and(|top| top < *at) {
                    rules::skip(
                        c,
                        format!(
                            "{} at step {at} in the baseline; the new run stopped at step {}, so it cannot say",
                            metric.label(),
                            new_top.unwrap_or(0)
                        ),
                    );
                }
            }
            out.checks.extend(check);
        }
    }
    out
}

fn mismatch(base: &Side, new: &Side) -> WorkloadMismatch {
    let unified_diff = match (&base.workload_yaml, &new.workload_yaml) {
        (Some(a), Some(b)) => similar::TextDiff::from_lines(a.as_str(), b.as_str())
            .unified_diff()
            .header(&base.label, &new.label)
            .to_string(),
        (a, b) => {
            let which = match (a, b) {
                (None, None) => "either side",
                (None, _) => base.label.as_str(),
                _ => new.label.as_str(),
            };
            format!("workload not recorded in {which}; cannot show what changed\n")
        }
    };
    WorkloadMismatch {
        base_fp: base.fingerprint.clone(),
        new_fp: new.fingerprint.clone(),
        unified_diff,
    }
}

/// One side's rows keyed by (model, concurrency), and its samples keyed by (model, step index).
struct Indexed<'a> {
    steps: BTreeMap<(String, u32), &'a StepSummary>,
    samples: Option<HashMap<(&'a str, u32), Vec<&'a RequestSample>>>,
}

impl<'a> Indexed<'a> {
    fn new(side: &'a Side, name: &str, notes: &mut Vec<String>) -> Self {
        let mut steps = BTreeMap::new();
        for s in &side.summaries {
            if steps.insert((s.model.clone(), s.concurrency), s).is_some() {
                notes.push(format!(
                    "{name} has two rows for model {} at concurrency {}; the later one was used",
                    s.model, s.concurrency
                ));
            }
        }
        let samples = side.samples.as_ref().map(|all| {
            let mut m: HashMap<(&str, u32), Vec<&RequestSample>> = HashMap::new();
            for r in all {
                m.entry((r.model.as_str(), r.step)).or_default().push(r);
            }
            m
        });
        Indexed { steps, samples }
    }
    fn has_model(&self, model: &str) -> bool {
        self.concurrencies(model).next().is_some()
    }
    fn concurrencies<'s>(&'s self, model: &'s str) -> impl Iterator<Item = u32> + 's {
        self.steps
            .keys()
            .filter(move |(m, _)| m == model)
            .map(|(_, c)| *c)
    }
    /// Sorted finite values of a latency for the successful requests of a step, if kept.
    fn values(&self, s: &StepSummary, metric: Metric) -> Option<Vec<f64>> {
        let pick: fn(&RequestSample) -> Option<f64> = match metric {
            Metric::Ttft => |r| r.ttft_ms,
            Metric::Tpot => |r| r.tpot_ms,
            Metric::E2e => |r| r.e2e_ms,
            _ => return None,
        };
        let rows = self.samples.as_ref()?.get(&(s.model.as_str(), s.step))?;
        let mut v: Vec<f64> = rows
            .iter()
            .filter(|r| r.ok)
            .filter_map(|r| pick(r))
            .filter(|x| x.is_finite())
            .collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        Some(v)
    }
}

fn summary_q(s: &StepSummary, metric: Metric, p: Percentile) -> Option<f64> {
    use Percentile::*;
    match (metric, p) {
        (Metric::Ttft, P50) => s.ttft_p50_ms,
        (Metric::Ttft, P90) => s.ttft_p90_ms,
        (Metric::Ttft, P99) => s.ttft_p99_ms,
        (Metric::Tpot, P50) => s.tpot_p50_ms,
        (Metric::Tpot, P90) => s.tpot_p90_ms,
        (Metric::Tpot, P99) => s.tpot_p99_ms,
        (Metric::Itl, P50) => s.itl_p50_ms,
        (Metric::Itl, P90) => s.itl_p90_ms,
        (Metric::Itl, P99) => s.itl_p99_ms,
        (Metric::E2e, P50) => s.e2e_p50_ms,
        (Metric::E2e, P90) => s.e2e_p90_ms,
        (Metric::E2e, P99) => s.e2e_p99_ms,
        _ => None,
    }
}

fn gate_for(g: &Gates, metric: Metric) -> &MetricGate {
    match metric {
        Metric::Tpot => &g.tpot,
        Metric::Itl => &g.itl,
        Metric::E2e => &g.e2e,
        _ => &g.ttft,
    }
}

/// A per-check seed, so a verdict does not depend on which other checks ran before it.
fn check_seed(seed: u64, model: &str, conc: u32, metric: Metric, p: Percentile) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ seed;
    for b in model
        .bytes()
        .chain(conc.to_le_bytes())
        .chain([metric as u8, p as u8])
    {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

fn step_checks(
    out: &mut Vec<Check>,
    opts: &CompareOptions,
    (bi, bs): (&Indexed<'_>, &StepSummary),
    (ni, ns): (&Indexed<'_>, &StepSummary),
) {
    let blank = |metric, percentile, gated| Check {
        model: ns.model.clone(),
        step: Some(ns.step),
        concurrency: Some(ns.concurrency),
        metric,
        percentile,
        gated,
        base: None,
        new: None,
        ratio: None,
        ci: None,
        method: Method::Point,
        verdict: Verdict::NoChange,
        detail: String::new(),
    };
    for metric in Metric::LATENCIES {
        let (bv, nv) = (bi.values(bs, metric), ni.values(ns, metric));
        for p in Percentile::ALL {
            let ev = |s: &StepSummary, v: &Option<Vec<f64>>| Evidence {
                sorted: v.clone(),
                summary_q: summary_q(s, metric, p),
                summary_n: s.succeeded,
            };
            let rule = Rule {
                metric,
                pct: p,
                gate: gate_for(&opts.gates, metric),
                resamples: opts.resamples,
                seed: check_seed(opts.seed, &ns.model, ns.concurrency, metric, p),
            };
            let j = latency::judge(&rule, &ev(bs, &bv), &ev(ns, &nv));
            out.push(Check {
                base: j.base,
                new: j.new,
                ratio: j.ratio,
                ci: j.ci,
                method: j.method,
                verdict: j.verdict,
                detail: j.detail,
                ..blank(metric, Some(p), p != Percentile::P50)
            });
        }
    }
    let mut c = blank(Metric::ErrorRate, None, true);
    error_rate(&mut c, bs, ns, opts.gates.error_rate);
    out.push(c);
    for (metric, bv, nv) in [(Metric::Tpm, bs.tpm, ns.tpm), (Metric::Rps, bs.rps, ns.rps)] {
        let mut c = blank(metric, None, true);
        // A rate from a handful of requests is mostly the step's start-up and tail.
        let fewest = bs.succeeded.min(ns.succeeded);
        if fewest < MIN_THROUGHPUT_SAMPLES {
            rules::skip(
                &mut c,
                format!(
                    "{} needs ≥ {MIN_THROUGHPUT_SAMPLES} successful requests per side (have {} / {}): use requests_per_step ≥ {MIN_THROUGHPUT_SAMPLES}",
                    metric.label(),
                    bs.succeeded,
                    ns.succeeded
                ),
            );
            out.push(c);
            continue;
        }
        throughput(
            &mut c,
            (bv, bs.duration_s),
            (nv, ns.duration_s),
            opts.gates.throughput,
        );
        out.push(c);
    }
}
/// "948.3 ms"
pub(crate) fn fmt_ms(x: f64) -> String {
    format!("{x:.1} ms")
}

/// "+25.3%" / "-4.0%"
pub(crate) fn fmt_pct(r: f64) -> String {
    format!("{:+.1}%", r * 100.0)
}
