//! The live metrics of a run (`docs/telemetry.md`): what `--metrics-addr` serves and what
//! `--prometheus-remote-write` pushes, kept in one place so both speak the same series.
//!
//! Per scenario × run × model × step: histograms of TTFT, ITL, TPOT and E2E of successful
//! requests (seconds), counters of requests by outcome and of the tokens of successful requests,
//! and, while the step runs, the gauges `ladder_in_flight` and `ladder_step_load`. A finished
//! step's counters and histograms stay (they are cumulative); its gauges go away, so that a
//! dashboard shows the load of the step that is running, not of every step so far.
//!
//! Pure data: no clock, no I/O. `families` turns the state into the metric families that the
//! text exposition and the remote-write encoder render.

use crate::model::RequestRecord;
use std::collections::BTreeMap;

/// Upper bounds (seconds) of the TTFT and E2E histograms: 5 ms to 2 minutes.
pub const LATENCY_BOUNDS: &[f64] = &[
    0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0,
    7.5, 10.0, 15.0, 20.0, 30.0, 60.0, 120.0,
];
/// Upper bounds (seconds) of the ITL and TPOT histograms: 0.5 ms to 2 s.
pub const TOKEN_GAP_BOUNDS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05, 0.075, 0.1,
    0.15, 0.2, 0.3, 0.5, 1.0, 2.0,
];

/// The metric names (documented in `docs/telemetry.md`).
pub const TTFT: &str = "ladder_ttft_seconds";
pub const ITL: &str = "ladder_itl_seconds";
pub const TPOT: &str = "ladder_tpot_seconds";
pub const E2E: &str = "ladder_e2e_seconds";
pub const REQUESTS: &str = "ladder_requests_total";
pub const OUTPUT_TOKENS: &str = "ladder_output_tokens_total";
pub const INPUT_TOKENS: &str = "ladder_input_tokens_total";
pub const IN_FLIGHT: &str = "ladder_in_flight";
pub const STEP_LOAD: &str = "ladder_step_load";

/// Every series name a scrape or a push can carry (histograms with their suffixes), for tests
/// and for the dashboard check.
pub fn series_names() -> Vec<String> {
    let mut names = Vec::new();
    for h in [TTFT, ITL, TPOT, E2E] {
        for suffix in ["_bucket", "_sum", "_count"] {
            names.push(format!("{h}{suffix}"));
        }
    }
    for n in [REQUESTS, OUTPUT_TOKENS, INPUT_TOKENS, IN_FLIGHT, STEP_LOAD] {
        names.push(n.to_string());
    }
    names
}

/// A cumulative histogram with fixed bounds (Prometheus' classic histogram).
#[derive(Debug, Clone, PartialEq)]
pub struct Histogram {
    bounds: &'static [f64],
    /// Observations per bucket (not cumulative); the last one is +Inf.
    counts: Vec<u64>,
    sum: f64,
    count: u64,
}

impl Histogram {
    pub fn new(bounds: &'static [f64]) -> Self {
        Histogram {
            bounds,
            counts: vec![0; bounds.len() + 1],
            sum: 0.0,
            count: 0,
        }
    }

    /// Adds `n` observations of `value` (seconds); NaN and negative values are ignored.
    pub fn observe_n(&mut self, value: f64, n: u64) {
        if value.is_nan() || value < 0.0 || n == 0 {
            return;
        }
        let i = self.bounds.partition_point(|&b| b < value);
        self.counts[i] += n;
        self.sum += value * n as f64;
        self.count += n;
    }

    pub fn observe(&mut self, value: f64) {
        self.observe_n(value, 1);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn sum(&self) -> f64 {
        self.sum
    }

    pub fn bounds(&self) -> &'static [f64] {
        self.bounds
    }

    /// Observations per bucket, not cumulative (OTLP's `bucket_counts`); the last is +Inf.
    pub fn bucket_counts(&self) -> &[u64] {
        &self.counts
    }

    /// `(le, cumulative count)` pairs, ending with `+Inf` (as `f64::INFINITY`).
    pub fn cumulative(&self) -> Vec<(f64, u64)> {
        let mut acc = 0;
        self.bounds
            .iter()
            .copied()
            .chain(std::iter::once(f64::INFINITY))
            .zip(&self.counts)
            .map(|(le, c)| {
                acc += c;
                (le, acc)
            })
            .collect()
    }
}

/// Which step of which run a series belongs to.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StepKey {
    pub scenario: String,
    pub run_id: String,
    pub model: String,
    pub step: u32,
}

impl StepKey {
    /// The labels every series carries, in the documented order.
    pub fn labels(&self) -> Vec<(&'static str, String)> {
        vec![
            ("scenario", self.scenario.clone()),
            ("model", self.model.clone()),
            ("step", self.step.to_string()),
            ("run_id", self.run_id.clone()),
        ]
    }
}

/// The series of one step.
#[derive(Debug, Clone, PartialEq)]
pub struct StepSeries {
    pub ttft: Histogram,
    pub itl: Histogram,
    pub tpot: Histogram,
    pub e2e: Histogram,
    /// Requests by outcome (`ok` or the error class).
    pub outcomes: BTreeMap<&'static str, u64>,
    pub output_tokens: u64,
    pub input_tokens: u64,
    /// Set while the step runs: (in flight, the step's load in its unit).
    pub running: Option<(f64, f64)>,
}

impl Default for StepSeries {
    fn default() -> Self {
        StepSeries {
            ttft: Histogram::new(LATENCY_BOUNDS),
            itl: Histogram::new(TOKEN_GAP_BOUNDS),
            tpot: Histogram::new(TOKEN_GAP_BOUNDS),
            e2e: Histogram::new(LATENCY_BOUNDS),
            outcomes: BTreeMap::new(),
            output_tokens: 0,
            input_tokens: 0,
            running: None,
        }
    }
}

impl StepSeries {
    /// Counts one recorded request: every outcome is counted, latencies and tokens only of
    /// successful requests (the same requests the summary's percentiles and TPM are made of).
    pub fn add(&mut self, r: &RequestRecord) {
        let outcome = r.error_class.map_or("ok", |c| c.as_str());
        *self.outcomes.entry(outcome).or_default() += 1;
        if !r.is_ok() {
            return;
        }
        let s = |ms: Option<f64>| ms.map(|v| v / 1000.0);
        if let Some(v) = s(r.ttft_ms) {
            self.ttft.observe(v);
        }
        if let Some(v) = s(r.tpot_ms) {
            self.tpot.observe(v);
        }
        if let Some(v) = s(r.e2e_ms) {
            self.e2e.observe(v);
        }
        if let Some(h) = &r.itl {
            for &(bin, n) in h.bins() {
                self.itl
                    .observe_n(crate::model::itl::bin_value_ms(bin) / 1000.0, u64::from(n));
            }
        }
        self.output_tokens += r.output_tokens.unwrap_or(0);
        self.input_tokens += r.input_tokens.unwrap_or(0);
    }
}

/// All steps of all runs this process has run so far.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Registry {
    pub steps: BTreeMap<StepKey, StepSeries>,
}

/// The kind of a metric family (the exposition's `# TYPE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Histogram,
    Counter,
    Gauge,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Histogram => "histogram",
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
        }
    }
}

/// One sample: the full series name (with `_bucket`/`_sum`/`_count` for histograms), its
/// labels in order, and its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub name: String,
    pub labels: Vec<(&'static str, String)>,
    pub value: f64,
}

/// A metric family: name, help text, kind and samples.
#[derive(Debug, Clone, PartialEq)]
pub struct Family {
    pub name: &'static str,
    pub help: &'static str,
    pub kind: Kind,
    pub samples: Vec<Sample>,
}

impl Registry {
    /// The step starts: its gauges appear (load in the step's unit: streams or requests/s).
    pub fn step_started(&mut self, key: StepKey, load: f64) {
        self.steps.entry(key).or_default().running = Some((0.0, load));
    }

    pub fn record(&mut self, key: StepKey, r: &RequestRecord) {
        self.steps.entry(key).or_default().add(r);
    }

    pub fn in_flight(&mut self, key: &StepKey, n: usize) {
        if let Some(s) = self.steps.get_mut(key) {
            if let Some((f, _)) = &mut s.running {
                *f = n as f64;
            }
        }
    }

    /// The step ended: its gauges go away. Returns the gauge samples that went away (a
    /// remote-write push marks them stale).
    pub fn step_finished(&mut self, key: &StepKey) -> Vec<Sample> {
        match self.steps.get_mut(key).and_then(|s| s.running.take()) {
            Some((f, load)) => gauge_samples(key, f, load),
            None => Vec::new(),
        }
    }

    /// Every family, in the documented order, with its samples ordered by step key.
    pub fn families(&self) -> Vec<Family> {
        let hist = |name, help, pick: fn(&StepSeries) -> &Histogram| Family {
            name,
            help,
            kind: Kind::Histogram,
            samples: self
                .steps
                .iter()
                .flat_map(|(k, s)| histogram_samples(name, k, pick(s)))
                .collect(),
        };
        let counter = |name, help, pick: fn(&StepSeries) -> u64| Family {
            name,
            help,
            kind: Kind::Counter,
            samples: self
                .steps
                .iter()
                .map(|(k, s)| Sample {
                    name: name.to_string(),
                    labels: k.labels(),
                    value: pick(s) as f64,
                })
                .collect(),
        };
        let requests = self.requests_family();
        let gauges: Vec<Sample> = self
            .steps
            .iter()
            .filter_map(|(k, s)| s.running.map(|(f, l)| gauge_samples(k, f, l)))
            .flatten()
            .collect();
        let gauge = |name: &'static str, help| Family {
            name,
            help,
            kind: Kind::Gauge,
            samples: gauges.iter().filter(|g| g.name == name).cloned().collect(),
        };
        vec![
            hist(
                TTFT,
                "Time to first token of successful requests, in seconds.",
                |s| &s.ttft,
            ),
            hist(
                ITL,
                "Gaps between consecutive token events of successful requests, in seconds.",
                |s| &s.itl,
            ),
            hist(
                TPOT,
                "Time per output token after the first, of successful requests, in seconds.",
                |s| &s.tpot,
            ),
            hist(
                E2E,
                "Request start to end of stream of successful requests, in seconds.",
                |s| &s.e2e,
            ),
            requests,
            counter(
                OUTPUT_TOKENS,
                "Output tokens of successful requests.",
                |s| s.output_tokens,
            ),
            counter(
                INPUT_TOKENS,
                "Input tokens of successful requests (as the server reported them).",
                |s| s.input_tokens,
            ),
            gauge(IN_FLIGHT, "Requests in flight in the running step."),
            gauge(
                STEP_LOAD,
                "Load of the running step: concurrent streams, or requests/s in rate mode.",
            ),
        ]
    }

    /// Requests recorded per step, by outcome.
    fn requests_family(&self) -> Family {
        Family {
            name: REQUESTS,
            help: "Requests recorded (warmup excluded), by outcome: ok or the error class.",
            kind: Kind::Counter,
            samples: self
                .steps
                .iter()
                .flat_map(|(k, s)| {
                    s.outcomes.iter().map(move |(o, n)| {
                        let mut labels = k.labels();
                        labels.push(("outcome", (*o).to_string()));
                        Sample {
                            name: REQUESTS.to_string(),
                            labels,
                            value: *n as f64,
                        }
                    })
                })
                .collect(),
        }
    }
}

fn gauge_samples(key: &StepKey, in_flight: f64, load: f64) -> Vec<Sample> {
    vec![
        Sample {
            name: IN_FLIGHT.to_string(),
            labels: key.labels(),
            value: in_flight,
        },
        Sample {
            name: STEP_LOAD.to_string(),
            labels: key.labels(),
            value: load,
        },
    ]
}

fn histogram_samples(name: &str, key: &StepKey, h: &Histogram) -> Vec<Sample> {
    let mut out: Vec<Sample> = h
        .cumulative()
        .into_iter()
        .map(|(le, n)| {
            let mut labels = key.labels();
            labels.push(("le", le_text(le)));
            Sample {
                name: format!("{name}_bucket"),
                labels,
                value: n as f64,
            }
        })
        .collect();
    out.push(Sample {
        name: format!("{name}_sum"),
        labels: key.labels(),
        value: h.sum,
    });
    out.push(Sample {
        name: format!("{name}_count"),
        labels: key.labels(),
        value: h.count as f64,
    });
    out
}

/// A bucket bound as Prometheus writes it (`0.005`, `1`, `+Inf`).
fn le_text(le: f64) -> String {
    if le.is_infinite() {
        "+Inf".into()
    } else {
        format!("{le}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ErrorClass;

    fn key(step: u32) -> StepKey {
        StepKey {
            scenario: "demo".into(),
            run_id: "r1".into(),
            model: "m".into(),
            step,
        }
    }

    fn ok(ttft_ms: f64) -> RequestRecord {
        RequestRecord {
            model: "m".into(),
            step: 1,
            ttft_ms: Some(ttft_ms),
            tpot_ms: Some(12.0),
            e2e_ms: Some(ttft_ms + 500.0),
            output_tokens: Some(40),
            input_tokens: Some(9),
            itl: Some(crate::model::ItlHistogram::from_gaps(&[12.0, 12.0, 30.0])),
            ..RequestRecord::default()
        }
    }

    #[test]
    fn histogram_buckets_are_cumulative_and_upper_inclusive() {
        let mut h = Histogram::new(&[0.1, 1.0]);
        h.observe(0.1); // on the bound: counts in le="0.1"
        h.observe(0.5);
        h.observe(7.0);
        h.observe(f64::NAN);
        assert_eq!(h.cumulative(), vec![(0.1, 1), (1.0, 2), (f64::INFINITY, 3)]);
        assert_eq!(h.count(), 3);
        assert!((h.sum - 7.6).abs() < 1e-12);
    }

    #[test]
    fn records_count_by_outcome_and_only_successes_reach_latencies_and_tokens() {
        let mut reg = Registry::default();
        reg.step_started(key(1), 16.0);
        reg.record(key(1), &ok(80.0));
        reg.record(key(1), &ok(120.0));
        let failed = RequestRecord {
            error_class: Some(ErrorClass::Http429),
            ttft_ms: Some(5.0),
            output_tokens: Some(3),
            ..ok(5.0)
        };
        reg.record(key(1), &failed);
        let s = &reg.steps[&key(1)];
        assert_eq!(s.outcomes.get("ok"), Some(&2));
        assert_eq!(s.outcomes.get("http_429"), Some(&1));
        assert_eq!(s.ttft.count(), 2);
        assert_eq!(s.itl.count(), 6, "three gaps of each of the two successes");
        assert_eq!(s.output_tokens, 80);
        assert_eq!(s.input_tokens, 18);
        assert_eq!(s.running, Some((0.0, 16.0)));
    }

    #[test]
    fn gauges_exist_only_while_their_step_runs() {
        let mut reg = Registry::default();
        reg.step_started(key(1), 4.0);
        reg.in_flight(&key(1), 3);
        let gauges = |reg: &Registry| -> Vec<(String, f64)> {
            reg.families()
                .into_iter()
                .filter(|f| f.kind == Kind::Gauge)
                .flat_map(|f| f.samples)
                .map(|s| (s.name, s.value))
                .collect()
        };
        assert_eq!(
            gauges(&reg),
            vec![(IN_FLIGHT.into(), 3.0), (STEP_LOAD.into(), 4.0)]
        );
        let gone = reg.step_finished(&key(1));
        assert_eq!(gone.len(), 2);
        assert!(gauges(&reg).is_empty());
        assert!(reg.step_finished(&key(1)).is_empty(), "only once");
    }

    #[test]
    fn every_family_name_is_a_documented_series() {
        let mut reg = Registry::default();
        reg.step_started(key(1), 1.0);
        reg.record(key(1), &ok(50.0));
        let names = series_names();
        for f in reg.families() {
            assert!(!f.samples.is_empty(), "{} has samples", f.name);
            for s in f.samples {
                assert!(names.contains(&s.name), "{} is documented", s.name);
                assert_eq!(
                    s.labels[..4].iter().map(|l| l.0).collect::<Vec<_>>(),
                    ["scenario", "model", "step", "run_id"]
                );
            }
        }
    }
}
