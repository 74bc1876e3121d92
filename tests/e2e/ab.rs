//! Interleaved A/B runs (`ladder run --ab A=B`, `compare: {baseline: A, interleave: true}`):
//! both models at every step, request by request, and B gated against A with the diff's
//! outcome, formats and exit codes; what an A/B run refuses to be (a baseline, a run judged
//! against one).

use crate::support::Project;

/// A simulator scenario of one model, `a`; `slow` (when asked for) answers its first token
/// 60 ms late.
fn scenario(p: &Project, extra: &str) -> String {
    let yaml = format!(
        "name: ab\ntarget:\n  sim:\n    ttft: 20ms\n    tpot: 2ms\n    output_tokens: 8\n    models: {{slow: {{ttft: 80ms}}}}\n  models: [a]\nrequest:\n  prompt_file: prompts/p.txt\n  max_tokens: 8\nload:\n  ladder: [1, 4]\n  requests_per_step: 60\n{extra}"
    );
    p.scenario("ab", &yaml).to_str().unwrap().to_string()
}

fn run(p: &Project, args: &[&str]) -> (i32, String, String) {
    let o = p.ladder().args(args).output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).to_string(),
        String::from_utf8_lossy(&o.stderr).to_string(),
    )
}

#[test]
fn an_ab_run_gates_the_candidate_against_the_current_model() {
    let p = Project::new();
    let s = scenario(&p, "");
    // Two identical models: a pass (exit 0), each with exactly its requests per step.
    let (code, out, err) = run(&p, &["run", &s, "--no-color", "--ab", "a=b"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("ladder diff: PASS"), "{out}");
    assert!(out.contains("A: a (interleaved with B in"), "{out}");
    let dir = p.run_dirs("ab").pop().unwrap();
    let requests = std::fs::read_to_string(dir.join("requests.csv")).unwrap();
    for m in ["a", "b"] {
        let n = requests
            .lines()
            .filter(|l| l.starts_with(&format!("{m},")))
            .count();
        assert_eq!(n, 120, "{m}: {n} requests (60 per step at 2 steps)");
    }
    // The recorded scenario says what ran, so the run repeats as it was.
    let recorded = std::fs::read_to_string(dir.join("scenario.yaml")).unwrap();
    assert!(recorded.contains("interleave: true"), "{recorded}");
    // A candidate 60 ms slower to its first token: a regression (exit 3), in every format.
    let (code, out, err) = run(&p, &["run", &s, "--no-color", "--ab", "a=slow"]);
    assert_eq!(code, 3, "{out}{err}");
    assert!(out.contains("ladder diff: REGRESSION"), "{out}");
    assert!(out.contains("TTFT P90"), "{out}");
    let (code, out, err) = run(
        &p,
        &["run", &s, "--ab", "a=slow", "--format", "json", "--quiet"],
    );
    assert_eq!(code, 3, "{out}{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).expect("stdout is one JSON document");
    assert_eq!(doc["outcome"], "regression", "{out}");
    assert_eq!(doc["exit_code"], 3, "{out}");
    let (code, out, _) = run(
        &p,
        &["run", &s, "--ab", "a=slow", "--format", "junit", "--quiet"],
    );
    assert_eq!(code, 3);
    assert!(
        out.starts_with("<?xml") && out.contains("<failure"),
        "{out}"
    );
}

#[test]
fn the_scenario_block_is_the_same_ab_run_and_its_throughput_informs_only() {
    let p = Project::new();
    let yaml = std::fs::read_to_string(scenario(&p, ""))
        .unwrap()
        .replace("models: [a]", "models: [a, slow]")
        + "compare: {baseline: a, interleave: true}\n";
    let s = p.scenario("ab", &yaml).to_str().unwrap().to_string();
    let (code, out, err) = run(&p, &["run", &s, "--no-color", "--full"]);
    assert_eq!(code, 3, "{out}{err}");
    // Each stream alternates between the two models: their RPS are alike whatever their
    // speeds, so the throughput rows are information, never a regression.
    let rps: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("│ RPS ") && l.contains("/s"))
        .collect();
    assert!(!rps.is_empty(), "{out}");
    assert!(rps.iter().all(|l| l.contains("info")), "{rps:?}");
    // `ladder diff` of the run with itself, paired, gives the verdict the run gave.
    let dir = p.run_dirs("ab").pop().unwrap();
    let dir = dir.to_str().unwrap();
    let o = p
        .ladder()
        .args(["diff", dir, dir, "--pair", "a=slow", "--full", "--no-color"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(3), "{text}");
    let rps: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("│ RPS ") && l.contains("/s"))
        .collect();
    assert!(
        !rps.is_empty() && rps.iter().all(|l| l.contains("info")),
        "{text}"
    );
}

#[test]
fn an_ab_run_is_neither_a_baseline_nor_judged_against_one() {
    let p = Project::new();
    let s = scenario(&p, "");
    for (flags, words) in [
        (
            &["--save-baseline"][..],
            "each model ran at half of every step's streams",
        ),
        (
            &["--against", "baselines/ab.csv"][..],
            "judged between its two models",
        ),
        (&["--model", "a"][..], "cannot be used with"),
    ] {
        let mut args = vec!["run", s.as_str(), "--ab", "a=b"];
        args.extend_from_slice(flags);
        let (code, out, err) = run(&p, &args);
        assert_eq!(code, 2, "{flags:?}: {out}{err}");
        assert!(err.contains(words), "{flags:?}: {err}");
        assert!(p.run_dirs("ab").is_empty(), "nothing ran");
    }
    // One model on both sides is the flag's mistake, not the file's.
    let (code, out, err) = run(&p, &["run", s.as_str(), "--ab", "a=a"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("--ab a=a names one model twice"), "{err}");
    assert!(!err.contains("listed twice"), "{err}");
    assert!(p.run_dirs("ab").is_empty(), "nothing ran");
    // Three models cannot be interleaved as A and B.
    let yaml = std::fs::read_to_string(&s)
        .unwrap()
        .replace("models: [a]", "models: [a, b, c]")
        + "compare: {baseline: a, interleave: true}\n";
    let three = p.scenario("ab", &yaml).to_str().unwrap().to_string();
    let (code, _, err) = run(&p, &["run", &three]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("compare.interleave") && err.contains("exactly two models"),
        "{err}"
    );
}

#[test]
fn the_report_of_an_ab_run_names_the_gates_it_was_judged_with() {
    let p = Project::new();
    // A gate wide enough that the slow candidate passes: the page's verdict must be judged with
    // it, and say so, not "the defaults".
    let s = scenario(&p, "gates:\n  ttft: {p90: 900%}\n  e2e: {p90: 900%}\n");
    let (code, out, err) = run(&p, &["run", &s, "--no-color", "--ab", "a=slow"]);
    assert_eq!(code, 0, "{out}{err}");
    let dir = p.run_dirs("ab").pop().unwrap();
    let page = p.path().join("ab.html");
    let (code, out, err) = run(
        &p,
        &[
            "report",
            dir.to_str().unwrap(),
            "-o",
            page.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("outcome pass"), "the run's verdict");
    assert!(!html.contains("gates the defaults"), "names the gates");
    assert!(
        html.contains("gates recorded with the run ("),
        "names the gates"
    );
    assert!(html.contains("TTFT P90 +900%"), "names the gates");
}

#[test]
fn validating_an_ab_scenario_does_not_advise_a_baseline_it_would_refuse() {
    let p = Project::new();
    let yaml = std::fs::read_to_string(scenario(&p, ""))
        .unwrap()
        .replace("models: [a]", "models: [a, slow]")
        + "compare: {baseline: a, interleave: true}\n";
    let s = p.scenario("ab", &yaml).to_str().unwrap().to_string();
    let (code, out, err) = run(&p, &["validate", &s]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!err.contains("--save-baseline"), "{err}");
    // `run --save-baseline` on it is refused, so the advice would fail when copied.
    let (code, _, err) = run(&p, &["run", &s, "--save-baseline"]);
    assert_eq!(code, 2, "{err}");
    let (code, out, err) = run(&p, &["run", &s, "--dry-run"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!out.contains("baseline"), "{out}");
}
