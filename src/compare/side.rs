//! Builds one side of a comparison from its parts (summaries, per-request samples, the knee/wall
//! found by `findings`), whether they were just measured or loaded from disk (`app::side` builds
//! a loaded run's parts), so `diff`, `run --against` and `report --baseline` judge the same
//! thing the same way.

use std::collections::BTreeMap;

use super::{CapBasis, RequestSample, Side};
use crate::findings::{self, ModelFindings};
use crate::model::RequestRecord;
use crate::stats::StepSummary;

impl Side {
    /// A side from parts already at hand (a run just measured: its summaries, its samples and
    /// its findings, nothing re-read from disk).
    pub fn from_parts(
        label: &str,
        summaries: Vec<StepSummary>,
        samples: Option<Vec<RequestSample>>,
        findings: &[ModelFindings],
        workload_yaml: Option<String>,
    ) -> Side {
        let mut knee = BTreeMap::new();
        let mut wall = BTreeMap::new();
        let mut wall_rule = BTreeMap::new();
        let mut knee_cause = BTreeMap::new();
        let mut caps = BTreeMap::new();
        for f in findings {
            if let findings::KneeFinding::Knee(k) = &f.knee {
                knee_cause.insert(f.model.clone(), (k.concurrency, k.cause()));
                if let Some(estimate) = k.estimated_cap {
                    let basis = CapBasis {
                        at: k.concurrency,
                        reference: k.reference.concurrency,
                        max_clean: k.max_clean_concurrency,
                        estimate,
                    };
                    caps.insert(f.model.clone(), basis);
                }
            }
            // A knee that was not analysed stays out of the map: never "no knee".
            if let Some(status) = f.knee_status() {
                knee.insert(f.model.clone(), status);
            }
            wall.insert(f.model.clone(), f.wall_concurrency());
            if let findings::WallFinding::Wall { kind, limit, .. } = &f.wall {
                wall_rule.insert(f.model.clone(), (*kind, *limit));
            }
        }
        Side {
            label: label.to_string(),
            fingerprint: summaries
                .first()
                .map(|x| x.fingerprint.clone())
                .unwrap_or_default(),
            workload_yaml,
            summaries,
            samples,
            knee,
            knee_cause,
            wall,
            wall_rule,
            caps,
            pool: Vec::new(),
        }
    }
}

impl RequestSample {
    /// What the comparison needs of one request.
    pub fn of(x: &RequestRecord) -> RequestSample {
        RequestSample {
            model: x.model.clone(),
            step: x.step,
            worker: x.worker,
            started_at_ms: x.started_at_ms,
            ok: x.is_ok(),
            ttft_ms: x.ttft_ms,
            tpot_ms: x.tpot_ms,
            e2e_ms: x.e2e_ms,
            ttfc_ms: x.ttfc_ms,
            output_tokens: x.output_tokens,
            input_tokens: x.input_tokens,
            cached_tokens: x.cached_tokens,
            cache_write_tokens: x.cache_write_tokens,
            reasoning_tokens: x.reasoning_tokens,
            sent_to: None,
            itl: x.itl.clone(),
            parts: crate::findings::PartSample::of(x),
        }
    }
}

/// A run keeps its samples as records arrive, for the bootstrap of `--against`.
impl crate::runner::record::Tap for Vec<RequestSample> {
    fn record(&mut self, r: &RequestRecord) {
        self.push(RequestSample::of(r));
    }
}
