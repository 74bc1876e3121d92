//! The cache hit share check of one matched step (docs/gate.md): input tokens read from the
//! cache ÷ input tokens of the successful requests, on steps where either side read from a
//! cache. A drop of more than `gates.cache_hit` points is a regression when its 99% CI (a
//! percentile bootstrap of the difference, each side's requests resampled, the share a ratio of
//! sums) lies below 0: a server upgrade that breaks prefix caching fails here, named, even where
//! TTFT's own gate has too few requests to decide.

use super::latency::CI_LEVEL;
use super::rules::skip;
use super::{Check, Method, RequestSample, Verdict};
use crate::stats::inference::generator;
use crate::stats::StepSummary;
use rand::Rng;

/// Fewest successful requests with input tokens per side for a verdict.
pub const MIN_CACHE_SAMPLES: usize = 20;

/// (input, cached) tokens of the successes that reported input tokens.
fn tokens(rows: &[&RequestSample]) -> Vec<(f64, f64)> {
    rows.iter()
        .filter(|r| r.ok)
        .filter_map(|r| {
            let input = r.input_tokens.filter(|n| *n > 0)?;
            Some((input as f64, r.cached_tokens.unwrap_or(0) as f64))
        })
        .collect()
}

fn share(v: &[(f64, f64)]) -> Option<f64> {
    let (i, c) = v.iter().fold((0.0, 0.0), |(i, c), t| (i + t.0, c + t.1));
    (i > 0.0).then(|| c / i)
}

/// Judges the cache hit share of a step from its summaries (the point values) and each side's
/// requests (the CI).
pub(super) fn cache_check(
    c: &mut Check,
    (bs, ns): (&StepSummary, &StepSummary),
    (base, new): (Option<&[&RequestSample]>, Option<&[&RequestSample]>),
    gate: f64,
    (resamples, seed): (usize, u64),
) {
    (c.base, c.new) = (bs.cache_hit_share(), ns.cache_hit_share());
    let (Some(br), Some(nr)) = (c.base, c.new) else {
        return skip(c, "cache hit share: no input tokens on one side".into());
    };
    let d = nr - br;
    let change = format!(
        "cache hit share {:.1}% → {:.1}% ({:+.1} pp; gate −{:.0} pp)",
        br * 100.0,
        nr * 100.0,
        d * 100.0,
        gate * 100.0
    );
    let (Some(base), Some(new)) = (base, new) else {
        return skip(c, format!("{change}: no per-request records for a CI"));
    };
    let (b, n) = (tokens(base), tokens(new));
    if b.len() < MIN_CACHE_SAMPLES || n.len() < MIN_CACHE_SAMPLES {
        return skip(
            c,
            format!(
                "{change}: needs ≥ {MIN_CACHE_SAMPLES} successes with input tokens per side (have {} / {})",
                b.len(),
                n.len()
            ),
        );
    }
    c.method = Method::Bootstrap;
    let mut rng = generator(seed);
    let mut draw = |v: &[(f64, f64)]| {
        let picked: Vec<(f64, f64)> = (0..v.len()).map(|_| v[rng.gen_range(0..v.len())]).collect();
        share(&picked).unwrap_or(0.0)
    };
    let mut diffs: Vec<f64> = (0..resamples.max(100))
        .map(|_| draw(&n) - draw(&b))
        .collect();
    diffs.sort_by(f64::total_cmp);
    let tail = (1.0 - CI_LEVEL) / 2.0;
    let (Some(lo), Some(hi)) = (
        crate::stats::quantile_sorted(&diffs, tail),
        crate::stats::quantile_sorted(&diffs, 1.0 - tail),
    ) else {
        return skip(c, format!("{change}: no resamples"));
    };
    c.ci = Some((lo, hi));
    let shown = format!(
        "{change}, 99% CI [{:+.1}, {:+.1}] pp",
        lo * 100.0,
        hi * 100.0
    );
    (c.verdict, c.detail) = if hi < 0.0 && -d > gate {
        (
            Verdict::Regressed,
            format!("{shown}: fewer input tokens read from the cache, more prefilled again"),
        )
    } else if lo > 0.0 && d > gate {
        (Verdict::Improved, shown)
    } else if hi < 0.0 || lo > 0.0 {
        (Verdict::BelowGate, format!("below gate: {shown}"))
    } else if d.abs() > gate {
        (
            Verdict::Inconclusive {
                requests_per_step: None,
            },
            format!("inconclusive: {shown}"),
        )
    } else {
        (Verdict::NoChange, format!("no change: {shown}"))
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::Metric;

    fn rows(n: usize, cached: u64) -> Vec<RequestSample> {
        (0..n)
            .map(|i| RequestSample {
                ok: true,
                input_tokens: Some(1000),
                cached_tokens: Some(cached + (i % 3) as u64 * 10),
                ..Default::default()
            })
            .collect()
    }

    fn judge(base: u64, new: u64) -> Check {
        let (b, n) = (rows(60, base), rows(60, new));
        let (br, nr): (Vec<&RequestSample>, Vec<&RequestSample>) =
            (b.iter().collect(), n.iter().collect());
        let summary = |v: &[RequestSample]| StepSummary {
            input_tokens: v.iter().map(|r| r.input_tokens.unwrap()).sum(),
            cached_tokens: v.iter().map(|r| r.cached_tokens.unwrap()).sum(),
            ..Default::default()
        };
        let at = StepSummary {
            model: "m".into(),
            step: 1,
            concurrency: 8,
            ladder_unit: crate::model::LadderUnit::Agents,
            ..Default::default()
        };
        let mut c = Check::unjudged(&at, Metric::CacheHit, None, true);
        cache_check(
            &mut c,
            (&summary(&b), &summary(&n)),
            (Some(&br), Some(&nr)),
            0.05,
            (2000, 7),
        );
        c
    }

    #[test]
    fn a_cache_that_stopped_hitting_regresses_and_a_steady_one_passes() {
        let c = judge(800, 0);
        assert_eq!(c.verdict, Verdict::Regressed, "{}", c.detail);
        assert!(c.detail.contains("81.0% → 1.0%"), "{}", c.detail);
        assert_eq!(judge(800, 800).verdict, Verdict::NoChange);
        assert_eq!(judge(800, 780).verdict, Verdict::BelowGate);
        assert_eq!(judge(500, 800).verdict, Verdict::Improved);
    }
}
