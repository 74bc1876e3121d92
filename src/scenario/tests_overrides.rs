//! Unit tests of command-line overrides and ad-hoc scenarios: an override must give exactly the
//! scenario (and fingerprint) of the same edit of the file; a list may come from one variable.

use super::*;
use std::path::Path;

const BASE: &str = "name: t\ntarget:\n  sim: {}\n  models: [a, b, c]\nrequest:\n  \
                    prompt_file: p.txt\n  max_tokens: 20\nload:\n  ladder: [1, 2]\n  \
                    requests_per_worker: 3\n";

/// Loads `yaml` as `<dir>/s.yaml` next to `p.txt` and `q.txt`, with the overrides.
fn load_in(dir: &Path, yaml: &str, o: &Overrides) -> Result<Scenario, ScenarioError> {
    std::fs::write(dir.join("p.txt"), "How do I reset my password?\n").unwrap();
    std::fs::write(dir.join("q.txt"), "Another prompt\n").unwrap();
    let env = |name: &str| (name == "LADDER").then(|| "[2, 4, 8]".to_string());
    load_str_with(yaml, &dir.join("s.yaml"), &env, o)
}

#[test]
fn each_override_equals_the_same_edit_of_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let q = d.join("q.txt");
    let cases: Vec<(Overrides, String)> = vec![
        (
            Overrides {
                models: vec!["c".into(), "a".into()],
                ..Default::default()
            },
            BASE.replace("[a, b, c]", "[c, a]"),
        ),
        (
            Overrides {
                ladder: Some(vec![1, 8, 32]),
                ..Default::default()
            },
            BASE.replace("ladder: [1, 2]", "ladder: [1, 8, 32]"),
        ),
        (
            Overrides {
                no_stream: true,
                ..Default::default()
            },
            BASE.replace("max_tokens: 20\n", "max_tokens: 20\n  stream: false\n"),
        ),
        (
            Overrides {
                requests_per_step: Some(7),
                max_tokens: Some(9),
                max_tokens_field: Some("max_tokens".into()),
                ..Default::default()
            },
            BASE.replace("requests_per_worker: 3", "requests_per_step: 7")
                .replace(
                    "max_tokens: 20",
                    "max_tokens: 9\n  max_tokens_field: max_tokens",
                ),
        ),
        (
            Overrides {
                duration: Some(std::time::Duration::from_secs(5)),
                prompt_file: Some(q.clone()),
                ..Default::default()
            },
            BASE.replace("requests_per_worker: 3", "duration: 5s")
                .replace("p.txt", "q.txt"),
        ),
        (
            Overrides {
                base_url: Some("http://127.0.0.1:9/v1".into()),
                api: Some("openai-completions".into()),
                ..Default::default()
            },
            BASE.replace(
                "  sim: {}\n",
                "  base_url: http://127.0.0.1:9/v1\n  api: openai-completions\n",
            ),
        ),
    ];
    let plain = load_in(d, BASE, &Overrides::default()).unwrap();
    for (o, edited) in cases {
        let over = load_in(d, BASE, &o).unwrap_or_else(|e| panic!("{o:?}: {e}"));
        let edit = load_in(d, &edited, &Overrides::default()).unwrap();
        assert_eq!(over.fingerprint, edit.fingerprint, "{o:?}");
        assert_ne!(over.fingerprint, plain.fingerprint, "{o:?} changed nothing");
        assert_eq!(normalized_yaml(&over), normalized_yaml(&edit), "{o:?}");
    }
}

#[test]
fn model_override_picks_a_subset_and_names_the_models_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    let o = Overrides {
        models: vec!["z".into()],
        ..Default::default()
    };
    let e = load_in(dir.path(), BASE, &o).unwrap_err().to_string();
    assert!(e.contains("--model z") && e.contains("a, b, c"), "{e}");
    let both = Overrides {
        prompt: Some("hi".into()),
        prompt_file: Some(dir.path().join("q.txt")),
        ..Default::default()
    };
    let e = load_in(dir.path(), BASE, &both).unwrap_err().to_string();
    assert!(e.contains("keep one"), "{e}");
}

#[test]
fn inline_prompt_is_sent_and_hashed_not_written() {
    let dir = tempfile::tempdir().unwrap();
    let o = Overrides {
        prompt: Some("What is the capital of France?".into()),
        ..Default::default()
    };
    let s = load_in(dir.path(), BASE, &o).unwrap();
    assert_eq!(s.request.prompt, "What is the capital of France?");
    assert_eq!(s.request.prompts, PromptSource::Inline);
    assert!(
        !workload_yaml(&s).contains("capital"),
        "{}",
        workload_yaml(&s)
    );
    assert!(workload_yaml(&s).contains("text_sha256"));
}

#[test]
fn adhoc_scenario_loads_and_its_text_reloads_to_the_same_fingerprint() {
    let dir = tempfile::tempdir().unwrap();
    let o = Overrides {
        base_url: Some("http://127.0.0.1:9/v1".into()),
        models: vec!["m".into()],
        ladder: Some(vec![1, 8]),
        ..Default::default()
    };
    let text = o.adhoc("quick", dir.path()).unwrap();
    assert!(text.contains("${OPENAI_API_KEY:-}"), "{text}");
    let a = load_in(dir.path(), &text, &Overrides::default()).unwrap();
    assert_eq!(a.load.ladder, vec![1, 8]);
    assert_eq!(a.target.models, vec!["m".to_string()]);
    assert_eq!(a.load.budget, Budget::RequestsPerStep(32));
    let b = load_in(dir.path(), &text, &Overrides::default()).unwrap();
    assert_eq!(a.fingerprint, b.fingerprint);
    let none = Overrides::default().adhoc("x", dir.path()).unwrap_err();
    assert!(none.to_string().contains("--base-url"), "{none}");
}

#[test]
fn adhoc_without_a_url_or_a_model_says_the_flags_only_form() {
    let dir = tempfile::tempdir().unwrap();
    let e = Overrides::default()
        .adhoc("x", dir.path())
        .unwrap_err()
        .to_string();
    assert!(e.contains("ladder run scenarios/demo.yaml"), "{e}");
    assert!(
        e.contains("\n  ladder run --base-url http://localhost:8000/v1 --model my-model\n"),
        "{e}"
    );
    let models = Overrides {
        models: vec!["a".into(), "b".into()],
        ..Default::default()
    };
    let e = models.adhoc("x", dir.path()).unwrap_err().to_string();
    assert!(
        e.ends_with("ladder run --base-url http://localhost:8000/v1 --model a --model b"),
        "{e}"
    );
    let url = Overrides {
        base_url: Some("http://h:1/v1".into()),
        ..Default::default()
    };
    let e = url.adhoc("x", dir.path()).unwrap_err().to_string();
    assert!(
        e.ends_with("ladder run --base-url http://h:1/v1 --model MODEL"),
        "{e}"
    );
}

#[test]
fn rewrite_keeps_variables_and_applies_the_overrides() {
    let dir = tempfile::tempdir().unwrap();
    let yaml = BASE.replace(
        "  models: [a, b, c]\n",
        "  models: [a, b, c]\n  api_key: ${OPENAI_API_KEY:-}\n",
    );
    let o = Overrides {
        models: vec!["b".into()],
        ..Default::default()
    };
    let saved = rewrite(&yaml, &o, dir.path()).unwrap();
    assert!(saved.contains("${OPENAI_API_KEY:-}"), "{saved}");
    let over = load_in(dir.path(), &yaml, &o).unwrap();
    let again = load_in(dir.path(), &saved, &Overrides::default()).unwrap();
    assert_eq!(over.fingerprint, again.fingerprint);
}

#[test]
fn a_whole_list_may_come_from_one_variable() {
    let dir = tempfile::tempdir().unwrap();
    let yaml = BASE.replace("ladder: [1, 2]", "ladder: ${LADDER:-[1, 2]}");
    let s = load_in(dir.path(), &yaml, &Overrides::default()).unwrap();
    assert_eq!(s.load.ladder, vec![2, 4, 8]);
    let dflt = BASE.replace("ladder: [1, 2]", "ladder: ${UNSET_LIST:-[1, 2]}");
    assert_eq!(
        load_in(dir.path(), &dflt, &Overrides::default())
            .unwrap()
            .load
            .ladder,
        vec![1, 2]
    );
    // Anything that is not a plain flow list stays a string (and is rejected as one).
    let nested = BASE.replace("ladder: [1, 2]", "ladder: ${UNSET_LIST:-[{a: 1}]}");
    assert!(load_in(dir.path(), &nested, &Overrides::default()).is_err());
}
