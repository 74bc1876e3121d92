//! Levels that follow the data around the knee. The first pass groups a log's requests into at
//! most `--levels` levels, rounded to a common width (1, 2, 4, … in flight) so that each holds
//! the successes the gate needs; on a busy log that width is coarse (32, 64, 96 …) and the knee
//! lands between two of them, "(32, 64]", with a cap estimated over both sides of the limit.
//! This bisects the knee's level, as a run's `refine` bisects its steps: split it in two, judge
//! again, and keep splitting the level the knee is then found in, while each half keeps
//! `min_per_level` successes, down to single in-flight counts where the log allows. The other
//! levels stay as they were. Pure, like the rest of `logs`.

use super::ladder::{build_ladder, LogLadder, LogOptions};
use super::sharing::{self, Sharing};
use super::LogRequest;
use crate::findings::{self, KneeFinding, ModelFindings};
use std::collections::BTreeMap;

/// How many bisections at most (a 2¹⁰-wide level comes down to one count).
const MAX_SPLITS: usize = 10;

/// A log judged: its requests as grouped (keys dropped where the limit looks shared), their
/// ladder with each knee narrowed, its findings, and how each keyed model's limit looks.
#[derive(Debug, Clone)]
pub struct Analysis {
    pub requests: Vec<LogRequest>,
    pub ladder: LogLadder,
    pub found: Vec<ModelFindings>,
    pub sharing: BTreeMap<String, Sharing>,
}

/// The production ladder of `requests` and its findings: each knee narrowed, and for each model
/// with several keys its in-flight counted per key or across keys, as the log shows its limit
/// (`sharing`).
pub fn analyze(requests: Vec<LogRequest>, opts: &LogOptions) -> Analysis {
    let keyed = sharing::keyed_models(&requests);
    let (ladder, found) = narrowed(&requests, opts);
    let pooled_of = |requests: &[LogRequest], models: &dyn Fn(&str) -> bool| -> Vec<LogRequest> {
        requests
            .iter()
            .cloned()
            .map(|mut r| {
                if models(&r.model) {
                    r.key = None;
                }
                r
            })
            .collect()
    };
    if keyed.is_empty() {
        return Analysis {
            requests,
            ladder,
            found,
            sharing: BTreeMap::new(),
        };
    }
    let pooled = pooled_of(&requests, &|m| keyed.contains_key(m));
    let (p_ladder, p_found) = narrowed(&pooled, opts);
    let sharing = sharing::judge((&requests, &ladder, &found), (&pooled, &p_ladder, &p_found));
    let shared = |m: &str| matches!(sharing.get(m), Some(Sharing::Shared { .. }));
    let (requests, ladder, found) = if keyed.keys().all(|m| shared(m)) {
        (pooled, p_ladder, p_found)
    } else if keyed.keys().any(|m| shared(m)) {
        let mixed = pooled_of(&requests, &shared);
        let (l, f) = narrowed(&mixed, opts);
        (mixed, l, f)
    } else {
        (requests, ladder, found)
    };
    Analysis {
        requests,
        ladder,
        found,
        sharing,
    }
}

/// The production ladder of `requests` with each knee narrowed, and its findings.
fn narrowed(requests: &[LogRequest], opts: &LogOptions) -> (LogLadder, Vec<ModelFindings>) {
    let mut opts = opts.clone();
    let mut ladder = build_ladder(requests, &opts);
    let mut found = findings::analyze_run(&ladder.summaries, Some(&ladder.records));
    for _ in 0..MAX_SPLITS {
        let mut split = false;
        for f in &found {
            let KneeFinding::Knee(k) = &f.knee else {
                continue;
            };
            let (below, at) = (k.max_clean_concurrency, k.concurrency);
            // The knee's level, and the clean level below it when the cap it implies lies
            // there (that level already held queued requests, too few to move its P90).
            let clean = ladder.levels.get(&f.model).and_then(|l| {
                let level = l.levels.iter().find(|l| l.hi == below)?;
                let inside = k
                    .estimated_cap
                    .is_some_and(|c| c.round() < f64::from(below));
                inside.then_some((level.lo.saturating_sub(1), below))
            });
            for (from, to) in [(below, at)].into_iter().chain(clean) {
                if to <= from + 1 {
                    continue;
                }
                let mid = from + (to - from) / 2;
                let points = opts.splits.entry(f.model.clone()).or_default();
                if !points.contains(&mid) {
                    points.push(mid);
                    split = true;
                }
            }
        }
        if !split {
            break;
        }
        let next = build_ladder(requests, &opts);
        if next.levels == ladder.levels {
            // Every split left a half too thin: the levels are as fine as the log allows.
            break;
        }
        found = findings::analyze_run(&next.summaries, Some(&next.records));
        ladder = next;
    }
    (ladder, found)
}

/// How fine the log allowed the knee to be, for the group's notes, when it is not a single
/// in-flight count (the interval "(6, 7]" says that itself): "The knee's level spans 49–56 in
/// flight: the log holds too few successful requests there for finer levels of 40 each
/// (--min-per-level)."; `None` without a knee or at a single count.
pub fn resolution(f: &ModelFindings, min_per_level: u64) -> Option<String> {
    let KneeFinding::Knee(k) = &f.knee else {
        return None;
    };
    let (lo, hi) = (k.max_clean_concurrency + 1, k.concurrency);
    (lo < hi).then(|| {
        format!(
            "The knee's level spans {lo}–{hi} in flight: the log holds too few successful requests there for finer levels of {min_per_level} each (--min-per-level)."
        )
    })
}
