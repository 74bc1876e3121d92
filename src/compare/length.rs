//! Answers of different lengths. A model that answers in half the tokens finishes sooner on the
//! same server: E2E, TPM and RPS then measure the answers, not the speed, and a comparison that
//! gated them would praise a shorter answer (or blame a longer one). This file holds the one
//! rule for when two steps' answers differ in length (the mean output tokens per success differ
//! by more than `gates.throughput`), the per-request E2E at equal length judged in E2E's place
//! (TTFT + TPOT × (L − 1), L the baseline's mean answer: what a request would have taken had it
//! answered as long as the baseline's), and the headline sentence that says so before any
//! percentile: "answers 50% shorter (40 → 20 tokens per success) at 2 streams: E2E P90 −40.1%
//! follows the length; per token +20.0% slower (TPOT P90, regressed); …".

use super::{fmt_pct, Check, Metric, Percentile, RequestSample, Side, Verdict};
use crate::stats::StepSummary;

/// The two sides' mean answer lengths at one step, when they differ beyond the gate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Lengths {
    /// Mean output tokens per success, in the baseline and in the new run.
    pub base: f64,
    pub new: f64,
}

impl Lengths {
    /// The lengths when the mean answer differs by more than `gate` (`gates.throughput`, the
    /// gate of the rates that follow the length); `None` when it does not, or a side has no
    /// success.
    pub(super) fn differ(bs: &StepSummary, ns: &StepSummary, gate: f64) -> Option<Lengths> {
        let (base, new) = (bs.mean_output_tokens()?, ns.mean_output_tokens()?);
        (base > 0.0 && (new / base - 1.0).abs() > gate).then_some(Lengths { base, new })
    }

    /// "answers 50% shorter (40 → 20 tokens per success)".
    pub(super) fn words(&self) -> String {
        let r = self.new / self.base - 1.0;
        format!(
            "answers {:.0}% {} ({:.0} → {:.0} tokens per success)",
            r.abs() * 100.0,
            if r < 0.0 { "shorter" } else { "longer" },
            self.base,
            self.new
        )
    }

    /// Why TPM and RPS are shown, not gated.
    pub(super) fn rates_reason(&self) -> String {
        format!(
            "{}: TPM and RPS follow the answers' length, so they are shown, not gated; the decode rate judges the server",
            self.words()
        )
    }
}

/// E2E at a step whose answers' lengths differ: information, never gated, with the reason
/// first ("answers 50% shorter (…): E2E follows the length …"). A skipped check stays skipped.
pub(super) fn e2e_information(c: &mut Check, lengths: &Lengths) {
    c.gated = false;
    if matches!(c.verdict, Verdict::Skipped { .. }) {
        return;
    }
    c.verdict = Verdict::Info;
    c.detail = format!(
        "{}: E2E follows the length, so it is shown, not gated; E2E at equal length and TPOT judge the speed per token ({})",
        lengths.words(),
        c.detail
    );
}

/// Each successful request's E2E had it answered `len` tokens: TTFT + TPOT × (len − 1), in
/// start order. A request without TTFT or TPOT (not streamed, a single token) has none.
pub(super) fn at_length(rows: &[&RequestSample], len: f64) -> Vec<f64> {
    rows.iter()
        .filter(|r| r.ok)
        .filter_map(|r| Some(r.ttft_ms? + r.tpot_ms? * (len - 1.0).max(0.0)))
        .filter(|v| v.is_finite())
        .collect()
}

/// The headline's sentence for `model` when its answers' lengths differ (it has E2E at equal
/// length checks): the lengths, E2E's change said as following the length, the change per token
/// (TPOT) and E2E at equal length with their verdicts, and, for two different models, that each
/// counts tokens with its own tokenizer. Said at the step whose per-token change is the most
/// decided (a regressed or improved TPOT P90, the largest first), else the lowest such step.
pub(super) fn sentence(checks: &[&Check], model: &str, base: &Side, new: &Side) -> Option<String> {
    let at = |metric: Metric, conc: u32| -> Vec<&Check> {
        checks
            .iter()
            .copied()
            .filter(|c| c.metric == metric && c.concurrency == Some(conc))
            .collect()
    };
    let mut steps: Vec<u32> = checks
        .iter()
        .filter(|c| c.metric == Metric::E2eAtEqualLength)
        .filter_map(|c| c.concurrency)
        .collect();
    steps.sort_unstable();
    steps.dedup();
    let decided = |c: &&Check| matches!(c.verdict, Verdict::Regressed | Verdict::Improved);
    let conc = steps
        .iter()
        .filter_map(|&s| {
            let tpot = pick(&at(Metric::Tpot, s)).filter(decided)?;
            Some((s, tpot.ratio?.abs()))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map_or_else(|| steps.first().copied(), |(s, _)| Some(s))?;
    let mean = |side: &Side| {
        side.summaries
            .iter()
            .rfind(|s| s.model == model && s.concurrency == conc)?
            .mean_output_tokens()
    };
    let lengths = Lengths {
        base: mean(base)?,
        new: mean(new)?,
    };
    let unit = checks.first()?.ladder_unit;
    let mut parts = vec![format!("{} {}", lengths.words(), unit.at(conc))];
    if let Some(e2e) = pick(&at(Metric::E2e, conc)).filter(|c| c.ratio.is_some()) {
        parts.push(format!(
            "{} {} follows the length",
            e2e.name(),
            fmt_pct(e2e.ratio.unwrap_or(0.0))
        ));
    }
    if let Some(tpot) = pick(&at(Metric::Tpot, conc)) {
        let r = tpot.ratio.unwrap_or(0.0);
        parts.push(format!(
            "per token {} {} ({}, {})",
            fmt_pct(r),
            if r > 0.0 { "slower" } else { "faster" },
            tpot.name(),
            tpot.verdict.label()
        ));
    }
    if let Some(eq) = pick(&at(Metric::E2eAtEqualLength, conc)) {
        parts.push(format!(
            "at equal length {} {} ({})",
            eq.name().replace("E2E at equal length", "E2E"),
            fmt_pct(eq.ratio.unwrap_or(0.0)),
            eq.verdict.label()
        ));
    }
    let mut s = parts.remove(0);
    s.push_str(": ");
    s.push_str(&parts.join("; "));
    if let Some(words) = tokenizers(model, base, new) {
        s.push_str("; ");
        s.push_str(&words);
    }
    Some(s)
}

/// The check to quote among one metric's percentiles at a step: P90 when it was measured on
/// both sides (gated), else P50 (shown).
fn pick<'a>(checks: &[&'a Check]) -> Option<&'a Check> {
    let of = |p: Percentile| {
        checks
            .iter()
            .copied()
            .find(|c| c.percentile == Some(p) && c.ratio.is_some())
    };
    of(Percentile::P90).or_else(|| of(Percentile::P50))
}

/// "token counts are each model's own (old, new): two tokenizers may count the same text
/// differently" when the two sides' requests went to different models (a pair); `None` for
/// one model on both sides, or when the samples do not say where they went. The records keep
/// no characters of the answers, so lengths are compared in each side's tokens.
fn tokenizers(model: &str, base: &Side, new: &Side) -> Option<String> {
    let sent_to = |side: &Side| -> Option<String> {
        side.samples
            .iter()
            .flatten()
            .find(|r| r.model == model)?
            .sent_to
            .clone()
    };
    let (b, n) = (sent_to(base)?, sent_to(new)?);
    (b != n).then(|| {
        format!(
            "token counts are each model's own ({b}, {n}): two tokenizers may count the same text differently, so lengths and per-token times compare different units"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{compare, CompareOptions, Side};

    fn summary(n: u64, tokens: u64) -> StepSummary {
        StepSummary {
            model: "m".into(),
            step: 1,
            concurrency: 4,
            attempted: n,
            succeeded: n,
            output_tokens: n * tokens,
            ..StepSummary::default()
        }
    }

    /// `n` requests of `tokens` tokens each, TTFT 50 ms and `tpot` ms per token after the
    /// first, with a little seeded spread; the E2E of each follows from them.
    fn requests(n: usize, tokens: u64, tpot: f64, sent_to: &str) -> Vec<RequestSample> {
        (0..n)
            .map(|i| {
                let wobble = 1.0 + 0.02 * ((i * 7 % 11) as f64 / 10.0 - 0.5);
                let (ttft, tpot) = (50.0 * wobble, tpot * wobble);
                RequestSample {
                    model: "m".into(),
                    step: 1,
                    worker: (i % 4) as u32,
                    started_at_ms: i as f64 * 100.0,
                    ok: true,
                    ttft_ms: Some(ttft),
                    tpot_ms: Some(tpot),
                    e2e_ms: Some(ttft + tpot * (tokens - 1) as f64),
                    output_tokens: Some(tokens),
                    sent_to: Some(sent_to.into()),
                    ..RequestSample::default()
                }
            })
            .collect()
    }

    fn side(label: &str, tokens: u64, tpot: f64, sent_to: &str) -> Side {
        let samples = requests(200, tokens, tpot, sent_to);
        let mut s = summary(200, tokens);
        let mut e2e: Vec<f64> = samples.iter().filter_map(|r| r.e2e_ms).collect();
        e2e.sort_by(f64::total_cmp);
        (s.e2e_p50_ms, s.e2e_p90_ms) = (Some(e2e[100]), Some(e2e[180]));
        Side {
            label: label.into(),
            fingerprint: "fp".into(),
            summaries: vec![s],
            samples: Some(samples),
            ..Side::default()
        }
    }

    fn check(c: &crate::compare::Comparison, metric: Metric, p: Percentile) -> &Check {
        c.checks
            .iter()
            .find(|k| k.metric == metric && k.percentile == Some(p))
            .unwrap_or_else(|| panic!("no {metric:?} {p:?}"))
    }

    #[test]
    fn lengths_differ_beyond_the_throughput_gate_only() {
        let base = summary(100, 40);
        assert_eq!(Lengths::differ(&base, &summary(100, 37), 0.10), None);
        let l = Lengths::differ(&base, &summary(100, 20), 0.10).unwrap();
        assert_eq!(
            l.words(),
            "answers 50% shorter (40 → 20 tokens per success)"
        );
        let longer = Lengths::differ(&base, &summary(100, 60), 0.10).unwrap();
        assert!(
            longer.words().starts_with("answers 50% longer"),
            "{longer:?}"
        );
        assert_eq!(Lengths::differ(&base, &summary(0, 0), 0.10), None);
    }

    #[test]
    fn a_request_is_retimed_to_the_baselines_length_from_its_ttft_and_tpot() {
        let mut rows = requests(3, 20, 4.0, "b");
        rows[1].ok = false;
        rows[2].tpot_ms = None;
        let refs: Vec<&RequestSample> = rows.iter().collect();
        let v = at_length(&refs, 40.0);
        assert_eq!(v.len(), 1);
        let (ttft, tpot) = (rows[0].ttft_ms.unwrap(), rows[0].tpot_ms.unwrap());
        assert!((v[0] - (ttft + tpot * 39.0)).abs() < 1e-9, "{v:?}");
    }

    /// The case: the new model answers in half the tokens, 20% slower per token. E2E
    /// falls by a third and must not be called improved: it is information with the reason,
    /// E2E at equal length rises and is judged, and the headline says all of it first.
    #[test]
    fn half_as_long_and_slower_per_token_is_not_an_e2e_improvement() {
        let base = side("old", 40, 4.0, "old");
        let new = side("new", 20, 4.8, "new");
        let mut opts = CompareOptions::default();
        opts.gates.e2e.floor_ms = 0.0;
        opts.gates.tpot.floor_ms = 0.0;
        let c = compare(&base, &new, &opts);
        let e2e = check(&c, Metric::E2e, Percentile::P90);
        assert!(!e2e.gated && e2e.verdict == Verdict::Info, "{e2e:?}");
        assert!(e2e.ratio.unwrap() < -0.3, "{e2e:?}");
        assert!(
            e2e.detail.starts_with(
                "answers 50% shorter (40 → 20 tokens per success): E2E follows the length"
            ),
            "{}",
            e2e.detail
        );
        let eq = check(&c, Metric::E2eAtEqualLength, Percentile::P90);
        assert!(eq.gated && eq.verdict == Verdict::Regressed, "{eq:?}");
        // (50 + 4.8 × 39) / (50 + 4 × 39) − 1 = +15.1%.
        assert!((eq.ratio.unwrap() - 0.151).abs() < 0.01, "{eq:?}");
        assert_eq!(eq.method, crate::compare::Method::Bootstrap);
        let tpot = check(&c, Metric::Tpot, Percentile::P90);
        assert_eq!(tpot.verdict, Verdict::Regressed, "{tpot:?}");
        let first = &c.headline[0];
        assert!(
            first.starts_with(
                "answers 50% shorter (40 → 20 tokens per success) at 4 streams: E2E P90 -"
            ),
            "{first}"
        );
        assert!(
            first.contains("follows the length; per token +20.")
                && first.contains("slower (TPOT P90, regressed)")
                && first.contains("at equal length E2E P90 +"),
            "{first}"
        );
        assert!(first.contains("each model's own (old, new)"), "{first}");
        assert_eq!(c.exit_code(), crate::error::ExitCode::Regression);
    }

    /// The same model on both sides (an upgrade of the server, answers shorter): no word of
    /// tokenizers; and equal lengths add no E2E at equal length and keep E2E gated.
    #[test]
    fn one_model_says_nothing_of_tokenizers_and_equal_lengths_change_nothing() {
        let c = compare(
            &side("a", 40, 4.0, "m"),
            &side("b", 20, 4.0, "m"),
            &CompareOptions::default(),
        );
        assert!(
            c.headline[0].starts_with("answers 50% shorter"),
            "{:?}",
            c.headline
        );
        assert!(!c.headline[0].contains("tokenizer"), "{}", c.headline[0]);
        let c = compare(
            &side("a", 40, 4.0, "m"),
            &side("b", 40, 4.0, "m"),
            &CompareOptions::default(),
        );
        assert!(c
            .checks
            .iter()
            .all(|k| k.metric != Metric::E2eAtEqualLength));
        assert!(check(&c, Metric::E2e, Percentile::P90).gated);
        assert!(
            c.headline.iter().all(|h| !h.contains("answers")),
            "{:?}",
            c.headline
        );
    }
}
