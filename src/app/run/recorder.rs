//! What `ladder run` keeps of each record beyond its files (`runner::record` writes those and
//! summarizes each step): the findings' per-step extras, and the per-request samples the
//! bootstrap needs, kept only with `--against` or models judged in the run.

use crate::compare::RequestSample;
use crate::findings::RunExtras;
use crate::model::RequestRecord;
use crate::runner::record::{self, Tap};

/// The run's tap on its records.
pub struct Kept {
    pub extras: RunExtras,
    /// Per-request samples, kept only when asked (`--against`).
    pub samples: Option<Vec<RequestSample>>,
}

impl Kept {
    pub fn new(keep_samples: bool) -> Kept {
        Kept {
            extras: RunExtras::new(),
            samples: keep_samples.then(Vec::new),
        }
    }
}

impl Tap for Kept {
    fn record(&mut self, r: &RequestRecord) {
        self.extras.record(r);
        self.samples.record(r);
    }
}

/// A run's recorder, keeping the extras and the samples.
pub type Recorder<'a> = record::Recorder<'a, Kept>;
/// A finished run in memory.
pub type CollectedRun = record::CollectedRun<Kept>;

impl super::refine::WithExtras for Recorder<'_> {
    fn extras(&self) -> Option<&RunExtras> {
        Some(&self.tap().extras)
    }
}
