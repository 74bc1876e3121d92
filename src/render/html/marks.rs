//! The findings every chart drawn against the ladder marks: the knee interval (shaded, with
//! its cause) and the rate-limit wall (a vertical line), for the run's charts and the evidence
//! charts alike.

use crate::findings::{KneeFinding, KneeKind, ModelFindings, WallFinding};
use crate::model::LimitKind;
use crate::render::svg::{Band, VLine};

/// The knee interval, shaded, labelled with its cause.
pub fn knee_band(f: &ModelFindings) -> Vec<Band> {
    match &f.knee {
        KneeFinding::Knee(k) => {
            let cause = match k.kind {
                KneeKind::Queueing => "queueing",
                KneeKind::Saturation => "saturation",
                KneeKind::RateLimited => "rate-limited",
                KneeKind::Unclassified => "unclassified",
                KneeKind::Prefill => "prefill",
                KneeKind::CacheMisses => "cache misses",
            };
            vec![Band {
                x0: f64::from(k.max_clean_concurrency),
                x1: f64::from(k.concurrency),
                label: format!(
                    "knee ({}, {}]: {cause}",
                    k.max_clean_concurrency, k.concurrency
                ),
            }]
        }
        _ => Vec::new(),
    }
}

/// The rate-limit wall, marked.
pub fn wall_line(f: &ModelFindings) -> Vec<VLine> {
    match &f.wall {
        WallFinding::Wall {
            concurrency, kind, ..
        } => {
            let what = match kind {
                Some(LimitKind::Acceleration) => "429s on the ramp (acceleration)".to_string(),
                Some(k) => format!("429 wall ({})", k.words()),
                None => "429 wall".to_string(),
            };
            vec![VLine {
                x: f64::from(*concurrency),
                label: what,
                class: "wall",
            }]
        }
        _ => Vec::new(),
    }
}
