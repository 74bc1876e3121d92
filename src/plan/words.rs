//! The plan in plain words: one block per model with the arithmetic shown, so a reader can
//! check every figure against the run's table.

use super::estimate::{source_words, total_duration_s, StepEstimate};
use super::{Basis, Bounds, Fit, LimitCheck, LimitName, ModelPlan, Plan, StepBasis};
use crate::model::LadderUnit;
use crate::scenario::{LadderOver, Limits, LoadMode, Scenario};
use crate::util::duration::ms_text as ms;
use std::fmt::Write;
use std::path::Path;

/// 80400 -> "80,400"; 54.93 -> "54.9"; 0.5 -> "0.5".
pub(super) fn num(v: f64) -> String {
    if !v.is_finite() {
        return "unlimited".into();
    }
    if v.abs() >= 1000.0 {
        let s = format!("{:.0}", v.round());
        let (sign, digits) = s.strip_prefix('-').map_or(("", s.as_str()), |d| ("-", d));
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(c);
        }
        format!("{sign}{out}")
    } else if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.2}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// "TTFT P90 ≤ 1 s, TPOT P90 ≤ 50 ms" (empty without bounds).
pub fn bounds_text(slo: &crate::model::Slo) -> String {
    let parts: Vec<String> = slo
        .bounds_ms()
        .iter()
        .filter_map(|(n, v)| v.map(|v| format!("{n} P90 ≤ {}", ms(v))))
        .collect();
    parts.join(", ")
}

pub fn slo_text(p: &Plan) -> String {
    slo_words(&p.bounds)
}

/// "SLO TTFT P90 ≤ 1 s", or that there is none, from the TTFT, TTFC, TPOT and E2E bounds (ms).
pub(super) fn slo_words(b: &Bounds) -> String {
    let [ttft, ttfc, tpot, e2e] = b.slo_ms();
    let ms = |v: Option<f64>| v.map(|v| std::time::Duration::from_secs_f64(v / 1000.0));
    let bounds = bounds_text(&crate::model::Slo {
        ttft: ms(ttft),
        ttfc: ms(ttfc),
        tpot: ms(tpot),
        e2e: ms(e2e),
    });
    if bounds.is_empty() {
        "no SLO: any step without failures qualifies".into()
    } else {
        format!("SLO {bounds}")
    }
}

pub fn plain_words(p: &Plan) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "plan for {} RPS ({})", num(p.target_rps), slo_text(p));
    for m in &p.models {
        s.push('\n');
        model(&mut s, p, m);
    }
    s
}

fn model(s: &mut String, p: &Plan, m: &ModelPlan) {
    let Some(b) = &m.step else {
        let _ = writeln!(s, "{}: no plan", m.model);
        for n in &m.notes {
            let _ = writeln!(s, "  {n}");
        }
        return;
    };
    basis_line(s, m, b);
    sized_rows(s, p, m);
    needs_rows(s, p, m, b);
    cost_row(s, p, m, b);
    let has_slo = p.bounds.slo_ms().iter().any(Option::is_some);
    limit_rows(s, m, has_slo, &p.bounds.limits);
    for n in &m.notes {
        let _ = writeln!(s, "  note: {n}");
    }
}

/// "cost per hour  12.06 USD (0.6700 USD per 1,000 successful requests at 4 streams)" for a
/// priced run.
fn cost_row(s: &mut String, p: &Plan, m: &ModelPlan, b: &StepBasis) {
    let (Some(hour), Some(per_1k)) = (m.cost_per_hour, b.cost_per_1k_ok) else {
        return;
    };
    // A baseline CSV keeps the figures but not the pricing's currency.
    let cur = p
        .currency
        .as_deref()
        .map_or_else(String::new, |c| format!(" {c}"));
    row(
        s,
        "cost per hour",
        format!(
            "{}{cur} at {} RPS ({}{cur} per 1,000 successful requests at {})",
            crate::model::cost_text(hour),
            num(p.target_rps),
            crate::model::cost_text(per_1k),
            super::step_words(b.unit, b.concurrency)
        ),
    );
}

/// One labelled row of a model's block.
pub(super) fn row(s: &mut String, k: &str, v: String) {
    let _ = writeln!(s, "  {k:<20}{v}");
}

/// "model: measured at 10 streams (5.2 RPS, mean E2E 1.9 s; TTFT P90 …, TPOT P90 …)".
fn basis_line(s: &mut String, m: &ModelPlan, b: &StepBasis) {
    let how = match m.basis {
        Basis::Measured => "measured at",
        Basis::BeyondCapacity => "SCALED OUT from",
        _ => "EXTRAPOLATED from",
    };
    let p90 = |name: &str, v: Option<f64>| v.map(|v| format!("{name} P90 {}", ms(v)));
    let lat: Vec<String> = [p90("TTFT", b.ttft_p90_ms), p90("TPOT", b.tpot_p90_ms)]
        .into_iter()
        .flatten()
        .collect();
    let step = super::step_words(b.unit, b.concurrency);
    let achieved = if b.unit == LadderUnit::Rps {
        " achieved"
    } else {
        ""
    };
    // A run that was not streamed has no TTFT or TPOT: nothing after the E2E.
    let lat = if lat.is_empty() {
        String::new()
    } else {
        format!("; {}", lat.join(", "))
    };
    let _ = writeln!(
        s,
        "{}: {how} {step} ({} RPS{achieved}, mean E2E {}{lat})",
        m.model,
        num(b.measured_rps),
        ms(b.e2e_mean_ms),
    );
}

/// What the plan was sized from, and with a search's capacity, the rates at its edges and how
/// the target compares with them.
fn sized_rows(s: &mut String, p: &Plan, m: &ModelPlan) {
    let Some(c) = &m.capacity else {
        let why = if p
            .search_slo_ttft_ms
            .or(p.search_slo_tpot_ms)
            .or(p.search_slo_e2e_ms)
            .is_some()
        {
            "the search's capacity cannot size it (see the note)"
        } else {
            "the run has no `load.search`"
        };
        row(s, "sized from", format!("the ladder's steps ({why})"));
        return;
    };
    row(s, "sized from", format!("the search: {}", c.sentence));
    let unit = c.capacity.unit;
    let mut rates = format!(
        "{} RPS at {}",
        num(c.rps),
        super::step_words(unit, c.capacity.max)
    );
    if let Some(lo) = c.rps_lo.filter(|_| c.capacity.lo != c.capacity.max) {
        let _ = write!(
            rates,
            "; {} RPS at {} (met with confidence)",
            num(lo),
            super::step_words(unit, c.capacity.lo)
        );
    }
    if let Some(miss) = c.rps_missed {
        let _ = write!(
            rates,
            "; the first step missing it carried {} RPS",
            num(miss)
        );
    }
    row(s, "capacity carries", rates);
    let target = format!(
        "{} RPS = {:.0}% of it",
        num(p.target_rps),
        c.target_share_pct
    );
    let verdict = match (c.fit, c.replicas, c.replicas_lo, c.replicas_hi) {
        (Fit::Fits, ..) => "fits with confidence".to_string(),
        (Fit::Edge, ..) => "within the capacity's uncertainty: at its edge".to_string(),
        (Fit::Beyond, Some(n), Some(lo), Some(hi)) if lo != hi => {
            format!("beyond it: {n} copies of the measured service ({lo}–{hi} within the uncertainty)")
        }
        (Fit::Beyond, Some(n), None, _) => format!(
            "beyond what the search reached: at most {n} copies of the measured service (no step missed the SLO)"
        ),
        (Fit::Beyond, n, ..) => {
            format!("beyond it: {} copies of the measured service", n.unwrap_or(1))
        }
    };
    row(s, "target", format!("{target}: {verdict}"));
}

/// What the target rate needs, with the arithmetic: streams, tokens per request, TPM, RPM.
fn needs_rows(s: &mut String, p: &Plan, m: &ModelPlan, b: &StepBasis) {
    let rps = num(p.target_rps);
    let conc = m.concurrency_needed.unwrap_or(0);
    let tokens = b.input_tokens_per_request + b.output_tokens_per_request;
    row(
        s,
        "concurrency needed",
        format!(
            "{rps} RPS × {:.3} s = {} → {conc} streams",
            b.e2e_mean_ms / 1000.0,
            num(p.target_rps * b.e2e_mean_ms / 1000.0)
        ),
    );
    if let Some(c) = &m.cap {
        // A rate plan needs requests in flight, counted as streams even on an agent ladder.
        let unit = match b.unit {
            LadderUnit::Agents => LadderUnit::Streams,
            u => u,
        };
        let target = p.target_kind.as_ref();
        row(
            s,
            super::cap::lever_label(target),
            super::cap::words(c, conc, unit, target),
        );
    }
    row(
        s,
        "tokens per request",
        format!(
            "{} in + {} out = {}",
            num(b.input_tokens_per_request),
            num(b.output_tokens_per_request),
            num(tokens)
        ),
    );
    row(
        s,
        "total TPM needed",
        format!(
            "{rps} × 60 × {} = {} tokens/min",
            num(tokens),
            num(m.tpm_needed.unwrap_or(0.0))
        ),
    );
    row(
        s,
        "RPM needed",
        format!("{} requests/min", num(m.rpm_needed)),
    );
}

/// The "limits" row: each declared limit's value and headroom, for a rate or agents alike.
pub(super) fn limits_row<U>(s: &mut String, checks: &[LimitCheck<U>]) {
    let declared = |l| {
        checks
            .iter()
            .find(|c| c.limit == l)
            .map(|c| (c.declared, c.headroom_pct))
    };
    row(s, "limits", limits_text(declared));
}

/// The "max sustainable" row when no declared limit gives one.
pub(super) fn no_limits_row(s: &mut String) {
    row(
        s,
        "max sustainable",
        "unknown: declare `limits:` (concurrency, tpm, rpm) in the scenario or pass --limit-*"
            .into(),
    );
}

/// "concurrency 50: headroom 85% · tpm 2,000,000: OVER by 4% · rpm: not declared", from each
/// declared limit's value and headroom.
fn limits_text(declared: impl Fn(LimitName) -> Option<(f64, f64)>) -> String {
    // The three every account has are said even when not declared; ITPM and OTPM when they are.
    let limits: Vec<String> = LimitName::ALL
        .iter()
        .filter(|l| {
            matches!(l, LimitName::Concurrency | LimitName::Tpm | LimitName::Rpm)
                || declared(**l).is_some()
        })
        .map(|l| match declared(*l) {
            Some((value, headroom)) if headroom >= 0.0 => {
                format!("{} {}: headroom {headroom:.0}%", l.label(), num(value))
            }
            Some((value, headroom)) => {
                format!("{} {}: OVER by {:.0}%", l.label(), num(value), -headroom)
            }
            None => format!("{}: not declared", l.label()),
        })
        .collect();
    limits.join(" · ")
}

/// The declared limits with their headroom, which binds first, the largest sustainable rate,
/// and the most this run measured within the SLO (without failures when there is none).
fn limit_rows(s: &mut String, m: &ModelPlan, has_slo: bool, limits: &Limits) {
    limits_row(s, &m.limits);
    if let Some(b) = m.limits_at.as_ref().or(m.step.as_ref()) {
        for line in super::limit_words::counting_lines(&m.limits, &b.charges(limits), limits, num) {
            row(s, "counted as", line);
        }
    }
    match (m.binding_limit, m.max_sustainable_rps) {
        (Some(l), Some(max)) => {
            row(
                s,
                "binds first",
                format!("{} (at {} RPS)", l.label(), num(max)),
            );
            let at = m.limits_at.as_ref().map_or_else(String::new, |a| {
                format!(
                    ", at the latency measured at {}",
                    super::step_words(a.unit, a.concurrency)
                )
            });
            row(
                s,
                "max sustainable",
                format!("{} RPS under the declared limits{at}", num(max)),
            );
        }
        _ => no_limits_row(s),
    }
    if let Some(top) = m.measured_slo_rps {
        row(
            s,
            "measured",
            // The most any step carried, past the knee included (the plan itself rests on
            // steps below it).
            format!(
                "up to {} RPS {} in this run, past the knee included",
                num(top),
                if has_slo {
                    "within the SLO"
                } else {
                    "without failures"
                }
            ),
        );
    }
}

/// `12.3s` under two minutes, else `2m05s`: rounded to whole seconds once, then split, so the
/// seconds never read 60.
pub(super) fn secs(v: f64) -> String {
    if v >= 120.0 {
        let whole = v.round() as u64; // saturates for huge values
        format!("{}m{:02}s", whole / 60, whole % 60)
    } else {
        format!("{v:.1}s")
    }
}

/// `run --dry-run`: per model × step, what the run would send and how long it would take.
pub fn dry_run(s: &Scenario, steps: &[StepEstimate], baseline: Option<&Path>) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "dry run: {} ({}), nothing sent",
        s.name,
        s.path.display()
    );
    // The step column in the ladder's unit; a prompt-size ladder says its load once.
    let unit = steps.first().map(|e| e.unit).unwrap_or_default();
    let header = unit.header();
    if let LadderOver::PromptTokens { level } = s.load.ladder_over {
        let load = match s.load.mode {
            LoadMode::Rate { .. } => LadderUnit::Rps.describe(level),
            LoadMode::Concurrency | LoadMode::Replay { .. } => LadderUnit::Streams.describe(level),
        };
        let _ = writeln!(out, "every step at {load}; the ladder is the prompt size");
    }
    let _ = writeln!(
        out,
        "{:<16} {:>10} {:>9} {:>8} {:>13} {:>14} {:>10} {:>12}",
        "model",
        header,
        "requests",
        "warmup",
        "input tokens",
        "output tokens",
        "duration",
        "tokens/min"
    );
    step_rows(&mut out, s, steps);
    let source = steps.first().map(|e| e.source);
    let from = match (source, baseline) {
        (Some(super::estimate::Source::Baseline), Some(p)) => {
            format!("the saved baseline {}", p.display())
        }
        (Some(src), _) => format!("the {}", source_words(src)),
        (None, _) => "nothing".into(),
    };
    if let Some(e) = steps.first() {
        let _ = writeln!(
            out,
            "per request: ≈ {} input tokens, {} output tokens ({})",
            num(e.input_per_request),
            num(e.output_per_request),
            match s.request.max_tokens {
                Some(n) => format!("at most max_tokens {n}"),
                None => "no max_tokens sent: a guess".into(),
            }
        );
    }
    if let Some(line) = cost_line(s, steps) {
        let _ = writeln!(out, "{line}");
    }
    let _ = writeln!(out, "estimates from {from}");
    out.push_str(&open_loop_note(s, steps));
    out.push_str(&extra_steps_note(s));
    out
}

/// The dry run's row per model × step and its total line.
fn step_rows(out: &mut String, s: &Scenario, steps: &[StepEstimate]) {
    let opt = |v: Option<f64>| v.map_or("?".to_string(), num);
    let (mut req, mut inp, mut outp) = (0u64, 0.0, 0.0);
    let mut known = true;
    for e in steps {
        match (e.requests, e.input_tokens, e.output_tokens) {
            (Some(r), Some(i), Some(o)) => {
                req += r + e.warmup;
                inp += i;
                outp += o;
            }
            _ => known = false,
        }
        let _ = writeln!(
            out,
            "{:<16} {:>10} {:>9} {:>8} {:>13} {:>14} {:>10} {:>12}",
            e.model,
            e.value,
            e.requests.map_or("?".to_string(), |r| r.to_string()),
            e.warmup,
            opt(e.input_tokens),
            opt(e.output_tokens),
            e.duration_s.map_or("?".to_string(), secs),
            opt(e.tpm_total)
        );
    }
    let total = total_duration_s(s, steps);
    let _ = writeln!(
        out,
        "total: {} requests (warmup included), {} input + {} output tokens (warmup not counted), about {}",
        if known { req.to_string() } else { "?".into() },
        if known { num(inp) } else { "?".into() },
        if known { num(outp) } else { "?".into() },
        total.map_or("? (no latency known yet)".to_string(), secs)
    );
}

/// A priced scenario's cost before the run (`run --dry-run`, `validate`), said to be an
/// estimate: "estimated cost: ≈ 0.1573 USD for 120 requests (warmup included) at the tokens
/// per request of the simulator's parameters, prompts uncached; the run's table and
/// summary.csv give the measured cost". With several models, each one's share follows the
/// total. `None` for an unpriced scenario.
pub fn cost_line(s: &Scenario, steps: &[StepEstimate]) -> Option<String> {
    let est = super::estimate::cost(s, steps)?;
    let cur = &est.currency;
    let known: Option<Vec<f64>> = est.models.iter().map(|(_, c)| *c).collect();
    let Some(figures) = known else {
        return Some(format!(
            "estimated cost: ? {cur}: a step that lasts a duration sends as many requests as the latency allows, not known before the run; the run's table and summary.csv give the measured cost"
        ));
    };
    let sent: u64 = steps.iter().filter_map(|e| e.requests).sum::<u64>()
        + steps.iter().map(|e| e.warmup).sum::<u64>();
    let split = if est.models.len() > 1 {
        let each: Vec<String> = est
            .models
            .iter()
            .zip(&figures)
            .map(|((m, _), c)| format!("{m} ≈ {}", crate::model::cost_text(*c)))
            .collect();
        format!(" ({})", each.join(", "))
    } else {
        String::new()
    };
    let source = steps.first().map_or("scenario", |e| source_words(e.source));
    let extra = if s.load.search.is_some() || s.load.refine > 0 {
        ", the search's and refine's steps not included"
    } else {
        ""
    };
    Some(format!(
        "estimated cost: ≈ {} {cur}{split} for {sent} requests (warmup included{extra}) at the tokens per request of the {source}, prompts uncached; the run's table and summary.csv give the measured cost",
        crate::model::cost_text(figures.iter().sum())
    ))
}

/// The steps a run adds after the planned ones, which the table cannot list: the search's
/// (`load.search`) and refine's, chosen from what is measured.
fn extra_steps_note(s: &Scenario) -> String {
    let unit = s.load.ladder_unit();
    let mut out = String::new();
    if let Some(search) = &s.load.search {
        let _ = writeln!(
            out,
            "then up to {} search steps (doubling, then bisecting, up to {}), each like the ones above: not in the totals",
            search.steps,
            unit.describe(search.max)
        );
    }
    if s.load.refine > 0 {
        let _ = writeln!(
            out,
            "then up to {} refine steps bisecting the knee and SLO intervals, each like the ones above: not in the totals",
            s.load.refine
        );
    }
    out
}

/// How an open-loop step's duration is estimated (rate mode, replay); empty for closed loops.
fn open_loop_note(s: &Scenario, steps: &[StepEstimate]) -> String {
    let mut out = String::new();
    if let (LoadMode::Replay { .. }, Some(t)) = (s.load.mode, &s.load.trace) {
        let n = steps.first().and_then(|e| e.requests).unwrap_or(0) as usize;
        let _ = writeln!(
            out,
            "replay: {} ({} trace, {} requests over {:.1} s at 1×); a step lasts the trace's span / the speed, plus the last requests' latency",
            t.file.display(),
            t.format.as_str(),
            n,
            t.span_s(n)
        );
        if let Some(sessions) = t.sessions_note(n) {
            let _ = writeln!(out, "sessions: {sessions}");
        }
    } else if matches!(s.load.mode, LoadMode::Rate { .. }) {
        let _ = writeln!(
            out,
            "rate mode: a step lasts its arrivals / the rate, plus the last requests' latency{}; tokens/min is what the offered rate asks for",
            if steps.iter().any(|e| e.source == super::estimate::Source::Guess) {
                " (unknown here)"
            } else {
                ""
            }
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::num;

    #[test]
    fn numbers_read_like_prose() {
        assert_eq!(num(80_400.0), "80,400");
        assert_eq!(num(2_000_000.0), "2,000,000");
        assert_eq!(num(54.93), "54.93");
        assert_eq!(num(10.0), "10");
        assert_eq!(num(0.5), "0.5");
        assert_eq!(num(-1500.0), "-1,500");
        assert_eq!(num(f64::INFINITY), "unlimited");
    }
}
