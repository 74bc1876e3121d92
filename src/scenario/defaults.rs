//! What a scenario's author chose: its normalized YAML (which spells out every default) without
//! the values a scenario of the same API and target kind gets by default. The report shows this
//! short form first and the whole normalized scenario folded below it.

use serde_yaml::{Mapping, Value};
use std::path::Path;

/// `normalized` (a run's `scenario.yaml`) reduced to what differs from the normalizer's own
/// output for a minimal scenario of the same API and target kind (whose prompt is synthetic,
/// so the run's prompt always differs and is shown). The API and the models are always kept,
/// first under `target`; the fingerprint is dropped (it identifies the whole workload, not a
/// choice). `None` when either side does not parse.
pub fn non_default_yaml(normalized: &str) -> Option<String> {
    let run: Value = serde_yaml::from_str(normalized).ok()?;
    let target = run.get("target")?;
    let api = target.get("api")?.as_str()?;
    let models = target.get("models")?.clone();
    let model = models.get(0)?.as_str()?;
    let endpoint = if target.get("sim").is_some_and(|s| !s.is_null()) {
        "sim: {}".to_string()
    } else {
        "base_url: http://127.0.0.1:1/v1".to_string()
    };
    let minimal = format!(
        "name: defaults\ntarget:\n  api: {api}\n  {endpoint}\n  models: [{model:?}]\nrequest:\n  prompt: {{synthetic_tokens: 8}}\nload:\n  ladder: [1]\n"
    );
    let defaults = super::load_str(&minimal, Path::new("defaults.yaml"), &|_| None).ok()?;
    let defaults: Value = serde_yaml::from_str(&super::normalized_yaml(&defaults)).ok()?;
    let mut kept = prune(&run, Some(&defaults)).unwrap_or(Value::Mapping(Mapping::new()));
    if let Value::Mapping(m) = &mut kept {
        m.remove("fingerprint");
        let t = m
            .entry("target".into())
            .or_insert_with(|| Value::Mapping(Mapping::new()));
        if let Value::Mapping(t) = t {
            let mut first = Mapping::new();
            first.insert("api".into(), api.into());
            first.insert("models".into(), models);
            first.extend(
                std::mem::take(t)
                    .into_iter()
                    .filter(|(k, _)| k != "api" && k != "models"),
            );
            *t = first;
        }
    }
    serde_yaml::to_string(&kept).ok()
}

/// `v` without the entries equal to `d`'s (mappings compared key by key; anything else whole).
fn prune(v: &Value, d: Option<&Value>) -> Option<Value> {
    match (v, d) {
        (Value::Mapping(m), Some(Value::Mapping(dm))) => {
            let kept: Mapping = m
                .iter()
                .filter_map(|(k, v)| prune(v, dm.get(k)).map(|v| (k.clone(), v)))
                .collect();
            (!kept.is_empty()).then_some(Value::Mapping(kept))
        }
        (v, Some(d)) if v == d => None,
        (v, _) => Some(v.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_what_the_author_chose_and_drops_the_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let prompt = dir.path().join("p.txt");
        std::fs::write(&prompt, "hello").unwrap();
        let yaml = "name: chosen\ntarget:\n  api: openai-chat\n  sim:\n    ttft: 80ms\n  models: [m1, m2]\nrequest:\n  prompt_file: p.txt\n  max_tokens: 64\nload:\n  ladder: [2, 4]\n  requests_per_step: 30\nslo:\n  ttft: 1s\n";
        let s = crate::scenario::load_str(yaml, &dir.path().join("s.yaml"), &|_| None).unwrap();
        let normalized = crate::scenario::normalized_yaml(&s);
        let short = non_default_yaml(&normalized).unwrap();
        for chosen in [
            "api: openai-chat",
            "- m1",
            "ttft: 80ms",
            "max_tokens: 64",
            "requests_per_step: 30",
            "slo:",
        ] {
            assert!(short.contains(chosen), "{chosen} missing from:\n{short}");
        }
        for default in ["fingerprint", "timeouts", "retry"] {
            assert!(!short.contains(default), "{default} is a default:\n{short}");
        }
        assert!(
            short.lines().count() * 2 < normalized.lines().count(),
            "short form:\n{short}\nwhole:\n{normalized}"
        );
        // The API and models come first under target.
        let target = short.split("target:").nth(1).unwrap();
        assert!(target.trim_start().starts_with("api:"), "{short}");
    }

    #[test]
    fn unparsable_input_gives_none() {
        assert_eq!(non_default_yaml("not: [yaml"), None);
        assert_eq!(non_default_yaml("name: x\n"), None);
    }
}
