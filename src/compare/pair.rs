//! Model upgrades: "we move from model OLD to model NEW; is NEW at least as fast at our load?".
//! A pair `OLD=NEW` judges NEW's steps against OLD's as if they were the same model, with the
//! same verdict rules: both sides' model is renamed to `OLD→NEW` before the comparison. The
//! workload check still holds for everything else: the recorded workloads are compared with the
//! paired model names made equal, so a different prompt, max_tokens or ladder is still refused.

use std::collections::BTreeMap;

use super::Side;

/// `OLD=NEW` from the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pair {
    pub old: String,
    pub new: String,
}

impl Pair {
    /// The name both sides' models get: `OLD→NEW`.
    pub fn label(&self) -> String {
        format!("{}→{}", self.old, self.new)
    }
}

impl std::str::FromStr for Pair {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.split_once('=') {
            Some((o, n)) if !o.trim().is_empty() && !n.trim().is_empty() && !n.contains('=') => {
                Ok(Pair {
                    old: o.trim().to_string(),
                    new: n.trim().to_string(),
                })
            }
            _ => Err(format!(
                "`{s}` is not a pair; write OLD=NEW with the two model names, e.g. gpt-4o=gpt-4.1"
            )),
        }
    }
}

/// `side` with model `from` renamed to `to` everywhere (summaries, samples, knee, its cause, wall).
fn rename(side: &mut Side, from: &str, to: &str) {
    for s in &mut side.summaries {
        if s.model == from {
            s.model = to.to_string();
        }
    }
    for r in side.samples.iter_mut().flatten() {
        if r.model == from {
            // Priced under the name it was sent to.
            r.sent_to.get_or_insert_with(|| from.to_string());
            r.model = to.to_string();
        }
    }
    for map in [&mut side.knee, &mut side.wall] {
        if let Some(v) = map.remove(from) {
            map.insert(to.to_string(), v);
        }
    }
    if let Some(v) = side.knee_cause.remove(from) {
        side.knee_cause.insert(to.to_string(), v);
    }
    if let Some(v) = side.caps.remove(from) {
        side.caps.insert(to.to_string(), v);
    }
}

/// The workload YAML with the model list's names mapped through `names`; `None` when it does
/// not parse.
fn renamed_workload(yaml: &str, names: &BTreeMap<&str, String>) -> Option<String> {
    let mut v: serde_yaml::Value = serde_yaml::from_str(yaml).ok()?;
    if let Some(models) = v.get_mut("models").and_then(|m| m.as_sequence_mut()) {
        for m in models.iter_mut() {
            if let Some(to) = m.as_str().and_then(|s| names.get(s)) {
                *m = serde_yaml::Value::from(to.as_str());
            }
        }
        models.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
        models.dedup();
    }
    serde_yaml::to_string(&v).ok()
}

/// The two sides with each pair's models renamed to `OLD→NEW`, and their fingerprints made
/// equal when the recorded workloads are the same once the paired names are.
pub fn pair_sides(base: &Side, new: &Side, pairs: &[Pair]) -> (Side, Side) {
    let (mut b, mut n) = (base.clone(), new.clone());
    let old_names: BTreeMap<&str, String> =
        pairs.iter().map(|p| (p.old.as_str(), p.label())).collect();
    let new_names: BTreeMap<&str, String> =
        pairs.iter().map(|p| (p.new.as_str(), p.label())).collect();
    for p in pairs {
        rename(&mut b, &p.old, &p.label());
        rename(&mut n, &p.new, &p.label());
    }
    if let (Some(bw), Some(nw)) = (&base.workload_yaml, &new.workload_yaml) {
        if let (Some(bw), Some(nw)) = (
            renamed_workload(bw, &old_names),
            renamed_workload(nw, &new_names),
        ) {
            if bw == nw {
                n.fingerprint = b.fingerprint.clone();
            }
            b.workload_yaml = Some(bw);
            n.workload_yaml = Some(nw);
        }
    }
    (b, n)
}

/// One run's side restricted to `models` (for comparing two models of the same run).
pub fn only_models(side: &Side, models: &[&str]) -> Side {
    let mut s = side.clone();
    s.summaries.retain(|x| models.contains(&x.model.as_str()));
    if let Some(v) = s.samples.as_mut() {
        v.retain(|x| models.contains(&x.model.as_str()));
    }
    s.knee.retain(|k, _| models.contains(&k.as_str()));
    s.knee_cause.retain(|k, _| models.contains(&k.as_str()));
    s.caps.retain(|k, _| models.contains(&k.as_str()));
    s.wall.retain(|k, _| models.contains(&k.as_str()));
    s
}

/// The pairs judged inside one multi-model run: the explicit `--pair`s, else every other model
/// against the scenario's `compare: {baseline: A}` (none without either).
pub fn in_run_pairs(explicit: &[Pair], baseline: Option<&str>, models: &[String]) -> Vec<Pair> {
    if !explicit.is_empty() {
        return explicit.to_vec();
    }
    let Some(b) = baseline else {
        return Vec::new();
    };
    models
        .iter()
        .filter(|m| m.as_str() != b)
        .map(|m| Pair {
            old: b.to_string(),
            new: m.clone(),
        })
        .collect()
}

/// The pair an A/B run gates (`compare: {baseline: A, interleave: true}`): A, and the other of
/// its two models (`None` when the run has no such pair).
pub fn ab_pair(baseline: Option<&str>, models: &[String]) -> Option<Pair> {
    let a = baseline?;
    let b = models.iter().find(|m| m.as_str() != a)?;
    Some(Pair {
        old: a.to_string(),
        new: b.clone(),
    })
}

/// Judges `pair.new` against `pair.old`, two models of the same run (same steps), with the
/// verdict rules of every comparison. `Err` names a model the run does not have.
pub fn compare_in_run(
    side: &Side,
    pair: &Pair,
    opts: &super::CompareOptions,
) -> Result<super::Comparison, String> {
    let (b, n) = (
        only_models(side, &[&pair.old]),
        only_models(side, &[&pair.new]),
    );
    check_pairs(&b, &n, std::slice::from_ref(pair))?;
    let (mut b, mut n) = pair_sides(&b, &n, std::slice::from_ref(pair));
    b.label = pair.old.clone();
    n.label = pair.new.clone();
    Ok(super::compare(&b, &n, opts))
}

/// Why an A/B run's rates do not judge its models: each stream alternates between them, so
/// each completes as many requests as the other whatever their speeds.
const COUPLED: &str = "an A/B step's streams alternate between the two models request by \
                       request, so each model's throughput and cap follow both models' speeds; \
                       TTFT, TPOT, ITL, E2E and the decode rate judge each model";

/// An A/B run's TPM, RPS and cap checks made information (not gated), saying why.
pub(super) fn coupled_rates(checks: &mut [super::Check]) {
    use super::{Metric, Verdict};
    for c in checks {
        if !matches!(c.metric, Metric::Tpm | Metric::Rps | Metric::Cap) {
            continue;
        }
        // Information whatever it found, a skip too: no sample size would make it gate.
        c.gated = false;
        c.detail = format!("{COUPLED}: {}", c.detail);
        c.verdict = Verdict::Info;
    }
}

/// Why a pair cannot be used: a name that is not a model of its side.
pub fn check_pairs(base: &Side, new: &Side, pairs: &[Pair]) -> Result<(), String> {
    let models = |s: &Side| -> Vec<String> {
        let mut m: Vec<String> = s.summaries.iter().map(|x| x.model.clone()).collect();
        m.dedup();
        m
    };
    let (bm, nm) = (models(base), models(new));
    for p in pairs {
        for (name, list, which) in [(&p.old, &bm, "the baseline"), (&p.new, &nm, "the new run")] {
            if !list.contains(name) {
                return Err(format!(
                    "--pair {}={}: {which} has no model `{name}` (it has: {})",
                    p.old,
                    p.new,
                    list.join(", ")
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_run_pairs_prefer_the_explicit_ones_else_the_scenarios_baseline() {
        let models = vec!["a".to_string(), "b".to_string(), "c".to_string()];
        let p = |o: &str, n: &str| Pair {
            old: o.into(),
            new: n.into(),
        };
        assert_eq!(
            in_run_pairs(&[], Some("a"), &models),
            [p("a", "b"), p("a", "c")]
        );
        assert_eq!(
            in_run_pairs(&[p("b", "c")], Some("a"), &models),
            [p("b", "c")]
        );
        assert!(in_run_pairs(&[], None, &models).is_empty());
    }
    use crate::stats::StepSummary;

    fn side(model: &str, workload: &str) -> Side {
        let summary = StepSummary {
            model: model.into(),
            step: 1,
            concurrency: 4,
            fingerprint: format!("fp-{model}"),
            ..StepSummary::default()
        };
        let mut knee = BTreeMap::new();
        knee.insert(model.to_string(), Some(4));
        Side {
            label: model.into(),
            fingerprint: format!("fp-{model}"),
            workload_yaml: Some(workload.into()),
            summaries: vec![summary],
            samples: Some(vec![]),
            knee,
            knee_cause: BTreeMap::new(),
            wall: BTreeMap::new(),
            wall_rule: BTreeMap::new(),
            caps: BTreeMap::new(),
            pool: Vec::new(),
        }
    }

    const W: &str = "api: openai-chat\nmodels:\n- MODEL\nmax_tokens: 200\nprompt: hi\n";

    #[test]
    fn pairs_parse_from_old_equals_new() {
        let p: Pair = "gpt-4o=gpt-4.1".parse().unwrap();
        assert_eq!((p.old.as_str(), p.new.as_str()), ("gpt-4o", "gpt-4.1"));
        assert_eq!(p.label(), "gpt-4o→gpt-4.1");
        assert!("gpt-4o".parse::<Pair>().is_err());
        assert!("=b".parse::<Pair>().is_err());
        assert!("a=b=c".parse::<Pair>().is_err());
    }

    #[test]
    fn paired_models_share_a_name_and_an_equal_workload_a_fingerprint() {
        let base = side("a", &W.replace("MODEL", "a"));
        let new = side("b", &W.replace("MODEL", "b"));
        let pairs = ["a=b".parse().unwrap()];
        assert_eq!(check_pairs(&base, &new, &pairs), Ok(()));
        let (b, n) = pair_sides(&base, &new, &pairs);
        assert_eq!(b.summaries[0].model, "a→b");
        assert_eq!(n.summaries[0].model, "a→b");
        assert_eq!(n.knee.get("a→b"), Some(&Some(4)));
        assert_eq!(b.fingerprint, n.fingerprint);
    }

    #[test]
    fn any_other_difference_still_differs() {
        let base = side("a", &W.replace("MODEL", "a"));
        let new = side("b", &W.replace("MODEL", "b").replace("200", "300"));
        let (b, n) = pair_sides(&base, &new, &["a=b".parse().unwrap()]);
        assert_ne!(b.fingerprint, n.fingerprint);
        let (bw, nw) = (b.workload_yaml.unwrap(), n.workload_yaml.unwrap());
        assert!(bw.contains("a→b") && nw.contains("a→b") && nw.contains("300"));
        let err = check_pairs(&base, &new, &["x=b".parse().unwrap()]).unwrap_err();
        assert!(
            err.contains("the baseline has no model `x` (it has: a)"),
            "{err}"
        );
    }
}
