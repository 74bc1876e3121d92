//! What the HTML report shows about one run: the view the page and its charts are drawn from.
//! `app::report` fills it from the store, findings and comparison; the renderer only reads it.

use crate::compare::Comparison;
use crate::findings::ModelFindings;
use crate::model::MetricRow;
use crate::model::Slo;
use crate::scenario::Limits;
use crate::store::LoadedResult;

/// Everything the page shows about one run.
#[derive(Debug, Clone)]
pub struct RunView {
    pub result: LoadedResult,
    pub findings: Vec<ModelFindings>,
    /// `meta.json`, typed (`None` for a baseline CSV).
    pub meta: Option<crate::store::Meta>,
    /// The scenario as run (secrets already redacted when it was written), or for a baseline
    /// its normalized workload.
    pub scenario_yaml: Option<String>,
    /// The scenario reduced to what differs from a default scenario of the same API and
    /// target kind (`None` when the defaults could not be built: the page shows it whole).
    pub scenario_changes: Option<String>,
    pub slo: Slo,
    pub limits: Limits,
    /// Set when a baseline was given.
    pub baseline: Option<LoadedResult>,
    pub comparison: Option<Comparison>,
    /// The run's own model comparisons (`run --pair A=B`, or the scenario's `compare:
    /// {baseline: A}`), judged as `run` judged them, with the default gates.
    pub pairs: Vec<(crate::compare::Pair, Comparison)>,
    /// An A/B run (`compare: {interleave: true}`): its one pair is the run's verdict, judged
    /// with its recorded gates, headed by its outcome.
    pub ab: bool,
    /// Which gates the comparison applied and where they came from (`verdict::describe`).
    pub gates: Option<String>,
    /// Plain warnings for the top of the run's section (interrupted, incomplete).
    pub warnings: Vec<String>,
    /// The server's `/metrics` during the run (`server_metrics.csv`); empty when the run did
    /// not scrape (`target.metrics`).
    pub server_metrics: Vec<MetricRow>,
    /// A log's minutes (`timeline.csv`, written by `ladder logs`); empty for other runs.
    pub timeline: Vec<crate::store::TimelineMinute>,
}
