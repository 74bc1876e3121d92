//! The bars of the failed-requests chart: per step, the share of attempts that failed, by
//! class group (from `requests.csv` when the report has it, else the summary's four buckets),
//! and the legend of the groups.

use super::view::RunView;
use crate::model::{ErrorClass, RequestRecord};
use crate::render::svg::Bar;
use crate::stats::StepSummary;

/// Error groups for the stacked chart: (colour slot, label, classes).
const ERROR_GROUPS: [(usize, &str, &[ErrorClass]); 8] = [
    (5, "429 rate limit", &[ErrorClass::Http429]),
    (1, "5xx", &[ErrorClass::Http5xx]),
    (
        0,
        "timeout",
        &[
            ErrorClass::TimeoutConnect,
            ErrorClass::TimeoutFirstToken,
            ErrorClass::TimeoutIdle,
            ErrorClass::TimeoutTotal,
        ],
    ),
    (3, "disconnect", &[ErrorClass::Disconnect]),
    (
        4,
        "bad stream",
        &[
            ErrorClass::StreamError,
            ErrorClass::Protocol,
            ErrorClass::Empty,
        ],
    ),
    (
        2,
        "4xx / auth",
        &[
            ErrorClass::Http401,
            ErrorClass::Http403,
            ErrorClass::Http404,
            ErrorClass::Http4xx,
        ],
    ),
    (
        6,
        "connect / quota",
        &[ErrorClass::Connect, ErrorClass::Quota],
    ),
    (7, "interrupted", &[ErrorClass::Interrupted]),
];

/// The bars and legend of the failed-requests chart: from `requests.csv` when kept (each class
/// group), else from the summary's four buckets.
pub(super) fn error_bars(
    view: &RunView,
    model: &str,
    rows: &[&StepSummary],
) -> (Vec<Bar>, Vec<(usize, String)>) {
    let records: Option<Vec<&RequestRecord>> = view
        .result
        .requests
        .as_ref()
        .map(|rs| rs.iter().filter(|r| r.model == model).collect());
    let pct = |n: u64, of: u64| {
        if of == 0 {
            0.0
        } else {
            n as f64 * 100.0 / of as f64
        }
    };
    match &records {
        Some(recs) => {
            let bars = rows
                .iter()
                .map(|r| {
                    let at: Vec<&&RequestRecord> =
                        recs.iter().filter(|x| x.step == r.step).collect();
                    let segments = ERROR_GROUPS
                        .iter()
                        .map(|(c, _, classes)| {
                            let n = at
                                .iter()
                                .filter(|x| x.error_class.is_some_and(|e| classes.contains(&e)))
                                .count() as u64;
                            (*c, pct(n, r.attempted))
                        })
                        .collect();
                    Bar {
                        x: f64::from(r.concurrency),
                        label: r.concurrency.to_string(),
                        segments,
                    }
                })
                .collect();
            let legend = ERROR_GROUPS
                .iter()
                .map(|(c, l, _)| (*c, l.to_string()))
                .collect();
            (bars, legend)
        }
        None => {
            let bars = rows
                .iter()
                .map(|r| Bar {
                    x: f64::from(r.concurrency),
                    label: r.concurrency.to_string(),
                    segments: vec![
                        (5, pct(r.err_429, r.attempted)),
                        (1, pct(r.err_5xx, r.attempted)),
                        (0, pct(r.err_timeout, r.attempted)),
                        (3, pct(r.err_other, r.attempted)),
                    ],
                })
                .collect();
            let legend = vec![
                (5, "429 rate limit".to_string()),
                (1, "5xx".to_string()),
                (0, "timeout".to_string()),
                (3, "other".to_string()),
            ];
            (bars, legend)
        }
    }
}
