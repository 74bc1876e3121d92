//! One side of a comparison from a run as the store loaded it (a run directory or a baseline):
//! the commands that judge stored runs (`diff`, `report --baseline`, `run --against`'s
//! baseline, the gates' budget) build it here, so `compare` judges sides and never reads the
//! store's types.

use crate::compare::partial::{self, Partial};
use crate::compare::{PooledRun, RequestSample, Side};
use crate::findings;
use crate::store::LoadedResult;

/// The side of a loaded run: its summaries, its per-request samples when it kept them, its
/// pool of earlier runs (a pooled baseline), and the knee and wall found in it.
pub(crate) fn of_result(r: &LoadedResult) -> Side {
    let findings = findings::analyze_run(&r.summaries, r.requests.as_deref());
    let pool = r
        .pool
        .iter()
        .map(|(id, rows)| PooledRun {
            id: id.clone(),
            summaries: rows.clone(),
        })
        .collect();
    let samples = r
        .requests
        .as_ref()
        .map(|rs| rs.iter().map(RequestSample::of).collect());
    Side {
        pool,
        ..Side::from_parts(
            &r.label,
            r.summaries.clone(),
            samples,
            &findings,
            r.workload_yaml.clone(),
        )
    }
}

/// The unfinished-run facts of a loaded side, or `None` for a finished run or a baseline CSV:
/// from its typed `meta.json` and recorded load plan, with the store's description of where a
/// killed run stopped.
pub(crate) fn partial_of(loaded: &LoadedResult, side: &'static str) -> Option<Partial> {
    let meta = loaded.meta.as_ref()?;
    if meta.complete && !meta.interrupted {
        return None;
    }
    let load = loaded.recorded.as_ref().and_then(|r| r.load.as_ref());
    Some(partial::of(
        side,
        loaded.label.clone(),
        !meta.complete,
        meta,
        load,
        loaded.incomplete.as_deref(),
        &loaded.summaries,
    ))
}
