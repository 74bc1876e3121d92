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
