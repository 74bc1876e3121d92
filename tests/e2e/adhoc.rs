//! Ad-hoc runs from flags alone and flags that override a scenario, like a user types them:
//! against an external `ladder sim`, the ad-hoc run saves its scenario, the saved file reruns
//! with the same fingerprint, an override equals the same edit of the file, a list comes from
//! one variable, and `--format json` without `--against` is one JSON document on stdout.

use crate::support::Project;
use serde_json::Value;

/// `ladder sim` on a free port: fast, no cap.
fn start_sim() -> crate::support::Sim {
    crate::support::start_sim(&["ttft=10ms", "tpot=1ms", "output_tokens=5", "seed=3"])
}

/// Runs `ladder --quiet run ARGS --format json` in the project; stdout must be one JSON document.
fn run_json(p: &Project, args: &[&str], env: &[(&str, &str)]) -> Value {
    let mut c = p.ladder();
    c.arg("--quiet")
        .arg("run")
        .args(args)
        .args(["--format", "json"]);
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.env_remove("OPENAI_API_KEY").output().unwrap();
    assert!(
        out.status.success(),
        "ladder run {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON document ({e}):\n{}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

#[test]
fn adhoc_run_saves_a_scenario_that_reruns_with_the_same_fingerprint() {
    let sim = start_sim();
    let p = Project::new();
    let first = run_json(
        &p,
        &[
            "--base-url",
            &sim.base_url,
            "--model",
            "sim-model",
            "--ladder",
            "1,2",
            "--requests-per-step",
            "6",
            "--max-tokens",
            "5",
            "--prompt-file",
            "scenarios/prompts/p.txt",
            "--save-scenario",
            "scenarios/quick.yaml",
        ],
        &[],
    );
    let fp = first["fingerprint"].as_str().unwrap().to_string();
    let rows = first["summary"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{first}");
    assert_eq!(rows[1]["concurrency"], 2);
    assert_eq!(rows[1]["succeeded"], 6);
    let dir = p.path().join(first["run_dir"].as_str().unwrap());
    let recorded = std::fs::read_to_string(dir.join("scenario.yaml")).unwrap();
    assert!(recorded.contains(&fp), "{recorded}");

    let saved = std::fs::read_to_string(p.path().join("scenarios/quick.yaml")).unwrap();
    assert!(saved.contains("prompt_file: prompts/p.txt"), "{saved}");
    assert!(saved.contains("${OPENAI_API_KEY:-}"), "{saved}");
    let again = run_json(&p, &["scenarios/quick.yaml"], &[]);
    assert_eq!(again["fingerprint"], fp.as_str());
    assert_eq!(again["scenario"], "quick");

    // An override is the same edit of the file: same fingerprint, same scenario.yaml body.
    let over = run_json(&p, &["scenarios/quick.yaml", "--ladder", "2"], &[]);
    assert_ne!(over["fingerprint"], fp.as_str());
    let edited = saved.replace("ladder:\n  - 1\n  - 2\n", "ladder: ${LADDER:-[1, 2]}\n");
    assert_ne!(edited, saved, "the saved ladder is a block list:\n{saved}");
    p.scenario("edited", &edited.replace("name: quick", "name: edited"));
    let by_var = run_json(&p, &["scenarios/edited.yaml"], &[("LADDER", "[2]")]);
    assert_eq!(by_var["fingerprint"], over["fingerprint"]);
    assert_eq!(by_var["summary"].as_array().unwrap().len(), 1);
    let by_default = run_json(&p, &["scenarios/edited.yaml"], &[]);
    assert_eq!(by_default["fingerprint"], fp.as_str());
}

#[test]
fn model_override_must_pick_among_the_scenarios_models() {
    let p = Project::new();
    let s = p.scenario(
        "two",
        "name: two\ntarget:\n  sim: {}\n  models: [a, b]\nrequest:\n  prompt_file: prompts/p.txt\n\
         load:\n  ladder: [1]\n  requests_per_step: 2\n",
    );
    let out = p
        .ladder()
        .args(["run", s.to_str().unwrap(), "--model", "c"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--model c") && err.contains("a, b"), "{err}");
    assert!(p.run_dirs("two").is_empty(), "nothing may be written");
    let none = p.ladder().args(["run", "--model", "m"]).output().unwrap();
    assert_eq!(none.status.code(), Some(2), "no scenario and no --base-url");
}
