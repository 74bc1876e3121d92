//! Builds one side of a comparison from a loaded result (run directory or baseline): the
//! summaries, the per-request samples and the knee/wall found by `findings::analyze_run`, so
//! `diff`, `run --against` and `report --baseline` judge the same thing the same way.

use std::collections::BTreeMap;

use super::{RequestSample, Side};
use crate::findings;
use crate::store::LoadedResult;

impl Side {
    pub fn from_result(r: &LoadedResult) -> Side {
        let mut knee = BTreeMap::new();
        let mut wall = BTreeMap::new();
        for f in findings::analyze_run(&r.summaries, r.requests.as_deref()) {
            knee.insert(f.model.clone(), f.knee_concurrency());
            wall.insert(f.model.clone(), f.wall_concurrency());
        }
        Side {
            label: r.label.clone(),
            fingerprint: r
                .summaries
                .first()
                .map(|x| x.fingerprint.clone())
                .unwrap_or_default(),
            workload_yaml: r.workload_yaml.clone(),
            summaries: r.summaries.clone(),
            samples: r.requests.as_ref().map(|rs| {
                rs.iter()
                    .map(|x| RequestSample {
                        model: x.model.clone(),
                        step: x.step,
                        ok: x.is_ok(),
                        ttft_ms: x.ttft_ms,
                        tpot_ms: x.tpot_ms,
                        e2e_ms: x.e2e_ms,
                        output_tokens: x.output_tokens,
                    })
                    .collect()
            }),
            knee,
            wall,
        }
    }
}
