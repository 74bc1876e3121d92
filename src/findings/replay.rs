//! Replay findings (`load.mode: replay`): the first multiple of the trace's rate at which the
//! server breaks, whichever comes first of the SLO (first step missing it), the TTFT knee and
//! the rate-limit wall, said the way people ask the question: "breaks at 2× production: TTFT
//! P90 0.7 → 2.1 s, queueing".

use super::slo::miss;
use super::{KneeFinding, KneeKind, ModelFindings, WallFinding};
use crate::model::{LadderUnit, Slo};
use crate::stats::StepSummary;
use serde::{Deserialize, Serialize};

/// What crossed first at the breaking speed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Crossed {
    Slo,
    Knee,
    Wall,
}

/// The first speed that crossed the SLO, a knee or a wall.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BreaksAt {
    /// The multiple of the trace's rate.
    pub speed: u32,
    /// Everything that crossed at that speed, SLO first.
    pub crossed: Vec<Crossed>,
    /// TTFT P90 at the lowest speed and at `speed`, in ms.
    pub ttft_p90_from_ms: Option<f64>,
    pub ttft_p90_at_ms: Option<f64>,
    /// Why, in words: the knee's cause, the wall, the SLO bound missed.
    pub why: String,
}

/// Where one model's replay breaks (a step misses the SLO by `findings::slo`; no SLO: it never
/// does). `None` outside replay and when no step was measured.
pub fn breaks_at(rows: &[StepSummary], f: &ModelFindings, slo: Option<&Slo>) -> Option<BreaksAt> {
    if f.ladder_unit != LadderUnit::Speed {
        return None;
    }
    let mut mine: Vec<&StepSummary> = rows.iter().filter(|r| r.model == f.model).collect();
    mine.sort_by_key(|r| r.concurrency);
    let first = *mine.first()?;
    let slo = mine
        .iter()
        .find_map(|r| miss(r, slo).map(|why| (r.concurrency, why)));
    let knee = match &f.knee {
        KneeFinding::Knee(k) => Some((k.concurrency, k.kind)),
        _ => None,
    };
    let wall = match f.wall {
        WallFinding::Wall { concurrency, .. } => Some(concurrency),
        _ => None,
    };
    let speed = [slo.as_ref().map(|s| s.0), knee.map(|k| k.0), wall]
        .into_iter()
        .flatten()
        .min()?;
    let mut crossed = Vec::new();
    let mut why = Vec::new();
    if let Some((_, w)) = slo.as_ref().filter(|s| s.0 == speed) {
        crossed.push(Crossed::Slo);
        why.push(format!("SLO missed ({w})"));
    }
    if let Some((_, kind)) = knee.filter(|k| k.0 == speed) {
        crossed.push(Crossed::Knee);
        why.push(
            match kind {
                KneeKind::Queueing => "queueing",
                KneeKind::Saturation => "saturation (TPOT rose too)",
                KneeKind::RateLimited => "rate-limited",
                KneeKind::Unclassified | KneeKind::Prefill => "TTFT knee",
                KneeKind::CacheMisses => "prefill of cache misses",
            }
            .to_string(),
        );
    }
    if wall == Some(speed) {
        crossed.push(Crossed::Wall);
        why.push("rate-limit wall (429s)".into());
    }
    let at = mine.iter().find(|r| r.concurrency == speed)?;
    Some(BreaksAt {
        speed,
        crossed,
        ttft_p90_from_ms: first.ttft_p90_ms,
        ttft_p90_at_ms: at.ttft_p90_ms,
        why: why.join(", "),
    })
}

fn secs(ms: Option<f64>) -> String {
    ms.map_or_else(|| "–".into(), |v| format!("{:.2}", v / 1000.0))
}

/// "Breaks at 4× production: TTFT P90 0.31 → 2.10 s, queueing." or, when nothing crossed,
/// "Holds up to 4× production (the highest speed tested): TTFT P90 0.31 → 0.40 s."
pub fn sentence(b: Option<&BreaksAt>, rows: &[StepSummary], model: &str) -> Option<String> {
    let mut mine: Vec<&StepSummary> = rows
        .iter()
        .filter(|r| r.model == model && r.ladder_unit == LadderUnit::Speed)
        .collect();
    mine.sort_by_key(|r| r.concurrency);
    let (first, last) = (mine.first()?, mine.last()?);
    let unit = LadderUnit::Speed;
    Some(match b {
        Some(b) => format!(
            "Breaks at {}: TTFT P90 {} → {} s, {}.",
            unit.describe(b.speed),
            secs(b.ttft_p90_from_ms),
            secs(b.ttft_p90_at_ms),
            b.why
        ),
        None => format!(
            "Holds up to {} (the highest speed tested): TTFT P90 {} → {} s; no SLO miss, knee or wall.",
            unit.describe(last.concurrency),
            secs(first.ttft_p90_ms),
            secs(last.ttft_p90_ms)
        ),
    })
}
