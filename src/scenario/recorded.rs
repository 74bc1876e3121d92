//! The scenario a run recorded (`scenario.yaml` in its run directory, already normalized and
//! redacted), read back once for every command that needs it: the gates `diff` and `report`
//! judge with, the load plan an unfinished run is measured against, the SLO and account limits
//! `plan` and the report use, and the `compare: {baseline: A}` pairing.
//!
//! A recorded scenario is not re-validated as a user's file is (its prompt files may be gone,
//! its secrets are redacted): each part is read on its own, and a part that cannot be read is
//! absent (the gates say why, since a verdict depends on them).

use super::{gates_from_yaml, load_from_yaml, Gates, Limits, Load, Slo};

/// What a run's `scenario.yaml` says, part by part.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    /// The text as recorded (shown by the report).
    pub yaml: String,
    /// Its `gates:` (the defaults when it has none); `Err` says why they cannot be read.
    pub gates: Result<Gates, String>,
    /// Its `load:`, when it can be read.
    pub load: Option<Load>,
    pub slo: Slo,
    pub limits: Limits,
    /// `compare: {baseline: A}`.
    pub compare_baseline: Option<String>,
    /// `compare: {interleave: true}`: an A/B run, whose pair is its verdict.
    pub compare_interleave: bool,
    /// `pricing:`, when the run was priced (and it can be read).
    pub pricing: Option<crate::model::Pricing>,
    /// What kind of target the run measured (`target.sim` or `target.base_url`), when it says.
    pub target: Option<crate::model::TargetKind>,
}

impl Recorded {
    pub fn from_yaml(yaml: String) -> Recorded {
        let doc: Option<serde_yaml::Value> = serde_yaml::from_str(&yaml).ok();
        let at = |block: &str, key: &str| doc.as_ref()?.get(block)?.get(key).cloned();
        let duration = |key: &str| {
            at("slo", key)
                .and_then(|d| d.as_str().map(str::to_string))
                .and_then(|d| crate::util::duration::parse(&d).ok())
        };
        let limit = |key: &str| at("limits", key).and_then(|v| v.as_u64());
        Recorded {
            gates: gates_from_yaml(&yaml),
            load: load_from_yaml(&yaml).ok(),
            slo: Slo {
                ttft: duration("ttft"),
                ttfc: duration("ttfc"),
                tpot: duration("tpot"),
                e2e: duration("e2e"),
            },
            limits: Limits {
                concurrency: limit("concurrency").and_then(|c| u32::try_from(c).ok()),
                rpm: limit("rpm"),
                tpm: limit("tpm"),
                tpm_counts: at("limits", "tpm_counts")
                    .and_then(|v| serde_yaml::from_value(v).ok())
                    .unwrap_or_default(),
                itpm: limit("itpm"),
                itpm_cached: at("limits", "itpm_cached")
                    .is_some_and(|v| v.as_str() == Some("counted")),
                otpm: limit("otpm"),
                max_tokens: at("request", "max_tokens")
                    .and_then(|v| v.as_u64())
                    .and_then(|m| u32::try_from(m).ok()),
            },
            pricing: super::build_pricing::pricing_from_yaml(&yaml)
                .ok()
                .flatten(),
            target: target_kind(doc.as_ref()),
            compare_baseline: at("compare", "baseline")
                .and_then(|b| b.as_str().map(str::to_string)),
            compare_interleave: at("compare", "interleave").and_then(|v| v.as_bool()) == Some(true),
            yaml,
        }
    }
}

/// `target.sim` is the embedded simulator; `target.base_url` is classified by its host.
fn target_kind(doc: Option<&serde_yaml::Value>) -> Option<crate::model::TargetKind> {
    use crate::model::target_kind::{SelfRunBasis, TargetKind};
    let target = doc?.get("target")?;
    if target.get("sim").is_some() {
        return Some(TargetKind::SelfRun {
            basis: SelfRunBasis::Simulator,
        });
    }
    target
        .get("base_url")
        .and_then(serde_yaml::Value::as_str)
        .map(TargetKind::of_base_url)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn reads_each_part_of_a_recorded_scenario() {
        let r = Recorded::from_yaml(
            "name: x\nload:\n  ladder: [1, 4]\n  requests_per_step: 50\nslo:\n  ttft: 1s\n  tpot: 50ms\nlimits:\n  concurrency: 8\n  tpm: 90000\ncompare:\n  baseline: a\ngates:\n  ttft:\n    p90: 25%\n".into(),
        );
        assert_eq!(r.slo.ttft, Some(Duration::from_secs(1)));
        assert_eq!(r.slo.tpot, Some(Duration::from_millis(50)));
        assert_eq!(r.slo.e2e, None);
        assert_eq!(
            r.limits,
            Limits {
                concurrency: Some(8),
                rpm: None,
                tpm: Some(90_000),
                ..Limits::default()
            }
        );
        assert_eq!(r.compare_baseline.as_deref(), Some("a"));
        assert_eq!(r.load.as_ref().map(|l| l.ladder.clone()), Some(vec![1, 4]));
        assert_ne!(r.gates.as_ref().unwrap(), &Gates::default());
        assert_eq!(r.target, None);
        let sim = Recorded::from_yaml("target:\n  sim: {}\n".into());
        assert!(matches!(
            sim.target,
            Some(crate::model::TargetKind::SelfRun { .. })
        ));
        let hosted = Recorded::from_yaml("target:\n  base_url: https://api.openai.com/v1\n".into());
        assert!(matches!(
            hosted.target,
            Some(crate::model::TargetKind::Hosted { .. })
        ));
    }

    #[test]
    fn a_part_that_cannot_be_read_is_absent_and_bad_gates_say_why() {
        let r = Recorded::from_yaml("gates: [1, 2]\nslo: {ttft: soon}\nload: 7\n".into());
        assert!(r.gates.is_err());
        assert!(r.slo.is_empty());
        assert!(r.load.is_none());
        let empty = Recorded::from_yaml(String::new());
        assert_eq!(empty.gates, Ok(Gates::default()));
        assert_eq!(empty.limits, Limits::default());
        assert_eq!(empty.compare_baseline, None);
    }
}
