//! How a scenario's regression gates read for people (`Gates::describe`): the line `diff` and
//! `run --against` print under their verdicts.

use super::{Gates, MetricGate};

impl Gates {
    /// One line for people: "TTFT P90 +10% P99 +20% (floor 50 ms); …; error rate +1pp;
    /// throughput -10%; capacity -10%".
    pub fn describe(&self) -> String {
        let pct = |f: f64| format!("{:.4}", f * 100.0);
        let trim = |s: String| s.trim_end_matches('0').trim_end_matches('.').to_string();
        let metric = |name: &str, g: &MetricGate| {
            format!(
                "{name} P90 +{}% P99 +{}% (floor {} ms)",
                trim(pct(g.p90)),
                trim(pct(g.p99)),
                trim(format!("{:.3}", g.floor_ms))
            )
        };
        // TTFC is named only when its gate is not TTFT's (it is judged only when a step
        // reasoned, and follows TTFT's gate unless set).
        let ttfc = if self.ttfc == self.ttft {
            String::new()
        } else {
            format!("; {}", metric("TTFC", &self.ttfc))
        };
        // Cost (priced runs only) and the cache hit share: named when not their defaults.
        let d = Gates::default();
        let cost: String = [
            (self.cost != d.cost).then(|| format!("; cost mean +{}%", trim(pct(self.cost)))),
            (self.cache_hit != d.cache_hit)
                .then(|| format!("; cache hit share -{}pp", trim(pct(self.cache_hit)))),
        ]
        .into_iter()
        .flatten()
        .collect();
        format!(
            "{}{ttfc}; {}; {}; {}; error rate +{}pp; throughput -{}%; capacity -{}%{cost}",
            metric("TTFT", &self.ttft),
            metric("TPOT", &self.tpot),
            metric("ITL", &self.itl),
            metric("E2E", &self.e2e),
            trim(pct(self.error_rate)),
            trim(pct(self.throughput)),
            trim(pct(self.capacity))
        )
    }
}
