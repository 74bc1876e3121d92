//! Model upgrades as a first-class comparison: `ladder diff BASE RUN --pair OLD=NEW` judges one
//! model's run against another model's baseline (the workload check ignores only the paired
//! names), and `ladder run --pair A=B` / `compare: {baseline: A}` judges B against A per step
//! in a multi-model run.

use crate::support::Project;

/// A simulator scenario; `old` answers with 4 ms per token, `new` with 8 ms.
fn scenario(p: &Project, name: &str, models: &str, extra: &str) -> String {
    let yaml = format!(
        "name: {name}\ntarget:\n  sim:\n    ttft: 5ms\n    tpot: 4ms\n    output_tokens: 8\n    models: {{new: {{tpot: 8ms}}}}\n  models: {models}\nrequest:\n  prompt_file: prompts/p.txt\n  max_tokens: 8\nload:\n  ladder: [2]\n  requests_per_step: 60\n{extra}"
    );
    p.scenario(name, &yaml).to_str().unwrap().to_string()
}

fn run(p: &Project, args: &[&str]) -> (i32, String) {
    let o = p.ladder().args(args).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    (o.status.code().unwrap_or(-1), text)
}

#[test]
fn diff_pairs_an_old_model_baseline_with_a_new_model_run() {
    let p = Project::new();
    let old = scenario(&p, "up", "[old]", "");
    let (code, text) = run(&p, &["run", &old, "--quiet", "--save-baseline"]);
    assert_eq!(code, 0, "{text}");
    let new = scenario(&p, "up", "[new]", "");
    let (code, text) = run(&p, &["run", &new, "--quiet"]);
    assert_eq!(code, 0, "{text}");
    let base = p.path().join("baselines/up.csv");
    let run_dir = p.run_dirs("up").pop().unwrap();
    let (base, run_dir) = (base.to_str().unwrap(), run_dir.to_str().unwrap());
    // Unpaired, the model names make the workloads differ: refused.
    let (code, text) = run(&p, &["diff", base, run_dir]);
    assert_eq!(code, 1, "{text}");
    // Paired: judged, and the doubled TPOT is a regression of old→new.
    let (code, text) = run(&p, &["diff", base, run_dir, "--pair", "old=new"]);
    assert_eq!(code, 3, "{text}");
    assert!(text.contains("old→new"), "{text}");
    // A name that is not there is a usage error naming what is.
    let (code, text) = run(&p, &["diff", base, run_dir, "--pair", "gpt=new"]);
    assert_eq!(code, 2, "{text}");
    assert!(
        text.contains("the baseline has no model `gpt` (it has: old)"),
        "{text}"
    );
    // Any other difference is still refused.
    let longer = std::fs::read_to_string(&new)
        .unwrap()
        .replace("max_tokens: 8", "max_tokens: 9");
    std::fs::write(&new, longer).unwrap();
    let (code, text) = run(&p, &["run", &new, "--quiet"]);
    assert_eq!(code, 0, "{text}");
    let run_dir = p.run_dirs("up").pop().unwrap();
    let (code, text) = run(
        &p,
        &["diff", base, run_dir.to_str().unwrap(), "--pair", "old=new"],
    );
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("max_tokens"), "{text}");
}

#[test]
fn a_multi_model_run_judges_b_against_a_per_step() {
    let p = Project::new();
    let both = scenario(&p, "both", "[old, new]", "");
    let (code, text) = run(&p, &["run", &both, "--no-color", "--pair", "old=new"]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("new vs old (same run, same steps)"), "{text}");
    assert!(text.contains("regressed"), "{text}");
    // The same from the scenario.
    let with = scenario(&p, "both", "[old, new]", "compare: {baseline: old}\n");
    let (code, text) = run(&p, &["run", &with, "--no-color"]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("new vs old (same run, same steps)"), "{text}");
}
