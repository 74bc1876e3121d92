//! The verdict's first lines: what happened to each model's capacity, said before any
//! percentile. A lower cap reads "capacity: cap ≈ 47 → 37 streams (−21%): queueing at a lower
//! concurrency limit, confirmed by the server; TTFT P50 at 60 streams +330%", not as a TPM dip
//! and a P90 that was already a queued request. Built from the checks already judged (the cap,
//! the knee, the 429 wall, the SLO capacity, cost) and the new run's knee cause; pure words.
//! When the answers' lengths differ, a sentence saying so comes first (`length::sentence`).

use super::{fmt_pct, length, Check, Metric, Side, Verdict};

/// The sentences per model that has something to speak of, in the checks' model order: first
/// that its answers' lengths differ (`length::sentence`: E2E then follows the length, the change
/// per token is the speed), then its capacity.
pub(super) fn sentences(checks: &[Check], base: &Side, new: &Side) -> Vec<String> {
    let mut models: Vec<&str> = Vec::new();
    for c in checks {
        if !models.contains(&c.model.as_str()) {
            models.push(&c.model);
        }
    }
    let many = models.len() > 1;
    let mut out = Vec::new();
    for m in models {
        let who = if many {
            format!("{m} · ")
        } else {
            String::new()
        };
        let mine: Vec<&Check> = checks.iter().filter(|c| c.model == m).collect();
        if let Some(s) = length::sentence(&mine, m, base, new) {
            out.push(format!("{who}{s}"));
        }
        let parts = parts(&mine, m, base, new);
        if !parts.is_empty() {
            out.push(format!("{who}capacity: {}", parts.join("; ")));
        }
    }
    out
}

fn find(checks: &[&Check], metric: Metric) -> Option<Check> {
    checks
        .iter()
        .find(|c| c.metric == metric)
        .map(|c| (*c).clone())
}

/// Whether the check saw a change, or could not tell: by what it measured, also when it was set
/// aside at a step whose client did not keep up.
fn changed(c: &Check) -> bool {
    let (label, _) = c.as_measured();
    [
        Verdict::Regressed.label(),
        Verdict::Improved.label(),
        Verdict::Inconclusive {
            requests_per_step: None,
        }
        .label(),
    ]
    .contains(&label)
}

/// The check's detail as it measured it, "(set aside)" when it rests on a step whose client
/// did not keep up (the verdict's `invalid:` line says which).
fn said(c: &Check) -> String {
    let (_, detail) = c.as_measured();
    if c.is_set_aside() {
        format!("{detail} (set aside)")
    } else {
        detail.to_string()
    }
}

fn parts(checks: &[&Check], model: &str, base: &Side, new: &Side) -> Vec<String> {
    let mut out = Vec::new();
    let cap = find(checks, Metric::Cap);
    if let Some(c) = &cap {
        out.push(cap_words(c, new, model));
    } else {
        out.extend(one_sided_cap(checks, model, base, new));
    }
    let knee = find(checks, Metric::Knee);
    match &knee {
        Some(k) if cap.is_none() || changed(k) => out.push(said(k)),
        _ => {}
    }
    if let Some(w) = find(checks, Metric::Wall).filter(changed) {
        out.push(format!("429 {}", said(&w)));
    }
    if let Some(s) = find(checks, Metric::Capacity) {
        out.push(format!("SLO {}", said(&s)));
    }
    if out.is_empty() {
        return out;
    }
    out.extend(strongest(checks, Metric::is_latency));
    out.extend(strongest(checks, |m| m == Metric::Cost));
    out
}

/// "cap ≈ 47 → 37 streams (−21%, 99% CI [−24%, −18%]): queueing at a lower concurrency limit,
/// confirmed by the server".
fn cap_words(c: &Check, new: &Side, model: &str) -> String {
    let (b, n) = (c.base.unwrap_or(f64::NAN), c.new.unwrap_or(f64::NAN));
    let mut s = format!("cap ≈ {b:.0} → {n:.0} {}", c.ladder_unit.plural());
    match (c.ratio, c.ci) {
        (Some(r), Some((lo, hi))) => s.push_str(&format!(
            " ({}, 99% CI [{}, {}])",
            fmt_pct(r),
            fmt_pct(lo),
            fmt_pct(hi)
        )),
        (Some(r), None) => s.push_str(&format!(" ({})", fmt_pct(r))),
        _ => {}
    }
    let meaning = match c.verdict {
        _ if c.is_set_aside() => "set aside (a step it rests on is invalid for the gate)",
        Verdict::Regressed => "queueing at a lower concurrency limit",
        Verdict::Improved => "queueing at a higher concurrency limit",
        Verdict::BelowGate => "a real change, within the capacity gate",
        Verdict::NoChange => "the same concurrency limit",
        Verdict::Inconclusive { .. } => "the data cannot tell yet whether the limit moved",
        Verdict::Info | Verdict::Skipped { .. } => "estimates only, not judged",
    };
    s.push_str(&format!(": {meaning}"));
    // The cause is the queueing's: said of the moved limit, or of the queueing both runs show.
    if let Some((_, cause)) = new.knee_cause.get(model) {
        let moved = matches!(
            c.verdict,
            Verdict::Regressed | Verdict::Improved | Verdict::BelowGate
        );
        s.push_str(match (moved, cause.seen) {
            (true, true) => ", confirmed by the server",
            (true, false) => ", inferred (the server did not show its queue)",
            (false, true) => " (the queueing itself confirmed by the server)",
            (false, false) => " (the queueing itself inferred: the server did not show its queue)",
        });
    }
    s
}

/// A cap on one side only: "a cap ≈ 36 streams now (none estimated in the baseline)".
fn one_sided_cap(checks: &[&Check], model: &str, base: &Side, new: &Side) -> Option<String> {
    let unit = checks.first()?.ladder_unit;
    match (base.caps.get(model), new.caps.get(model)) {
        (None, Some(n)) => Some(format!(
            "a queueing cap ≈ {:.0} {} now (none estimated in the baseline)",
            n.estimate,
            unit.plural()
        )),
        (Some(b), None) => Some(format!(
            "the baseline's queueing cap ≈ {:.0} {} is not seen now",
            b.estimate,
            unit.plural()
        )),
        _ => None,
    }
}

/// The regressed check of `metric`s with the largest change, as evidence: "TTFT P50 at 60
/// streams +330%".
fn strongest(checks: &[&Check], metric: impl Fn(Metric) -> bool) -> Option<String> {
    checks
        .iter()
        .filter(|c| c.gated && c.verdict == Verdict::Regressed && metric(c.metric))
        .filter_map(|c| c.ratio.map(|r| (r, c)))
        .max_by(|a, b| a.0.abs().total_cmp(&b.0.abs()))
        .map(|(r, c)| format!("{} {}", c.title(), fmt_pct(r)))
}
