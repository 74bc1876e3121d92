//! Issue 18: one run, one truth. Every command that reads a run must say the same thing about
//! it: the throughput a check judges is the number `summary.csv` records for that step, a
//! baseline diffed against itself is "no change" for throughput, and `report --baseline` judges
//! like `diff` with the gates recorded with the run.

use crate::support::{col, read_csv, Project};
use std::path::{Path, PathBuf};

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// `diff --format json` of the demo's baseline against itself: every TPM/RPS check's base and new
/// value is the baseline's `tpm_steady` / `rps_steady` for that step, and none is inconclusive
/// (at the simulator's cap throughput is the steadiest figure of the run).
#[test]
fn demo_throughput_checks_judge_the_summary_columns_and_a_self_diff_decides() {
    let p = Project::new();
    let baseline = repo("baselines/demo.csv");
    let out = p
        .ladder()
        .arg("diff")
        .arg(&baseline)
        .arg(&baseline)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let (h, rows) = read_csv(&baseline);
    let column = |concurrency: u64, name: &str| -> f64 {
        let row = rows
            .iter()
            .find(|r| r[col(&h, "concurrency")] == concurrency.to_string())
            .unwrap_or_else(|| panic!("no step at {concurrency}"));
        row[col(&h, name)].parse().unwrap()
    };
    let mut seen = 0;
    for c in doc["checks"].as_array().unwrap() {
        let name = match c["metric"].as_str().unwrap() {
            "tpm" => "tpm_steady",
            "rps" => "rps_steady",
            _ => continue,
        };
        let at = c["concurrency"].as_u64().unwrap();
        let want = column(at, name);
        for side in ["base", "new"] {
            let got = c[side].as_f64().unwrap();
            assert!(
                (got - want).abs() <= 1e-9 * want.max(1.0),
                "{name} at {at}: {side} {got} vs summary.csv {want}"
            );
        }
        assert_eq!(c["verdict"]["kind"], "no_change", "{name} at {at}: {c}");
        let (lo, hi) = (c["ci"][0].as_f64().unwrap(), c["ci"][1].as_f64().unwrap());
        assert!(lo > -0.10 && hi < 0.10, "{name} at {at}: CI [{lo}, {hi}]");
        seen += 1;
    }
    assert_eq!(seen, 8, "TPM and RPS at each of the 4 steps");
}

/// The verdict per check of a diff JSON document: (model, step, metric, percentile) → kind.
fn verdicts(doc: &serde_json::Value) -> std::collections::BTreeMap<String, String> {
    doc["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .map(|c| {
            let key = format!(
                "{} step {} {} {}",
                c["model"], c["step"], c["metric"], c["percentile"]
            );
            (key, c["verdict"]["kind"].as_str().unwrap().to_string())
        })
        .collect()
}

/// `ladder diff BASE RUN --format json` and `ladder report RUN --baseline BASE`: the same
/// outcome and the same verdict for every check, and the page names the gates it applied.
fn report_agrees_with_diff(p: &Project, base: &Path, run: &Path, gates_words: &str) -> String {
    let diff = p
        .ladder()
        .arg("diff")
        .arg(base)
        .arg(run)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let diff_doc: serde_json::Value = serde_json::from_slice(&diff.stdout)
        .unwrap_or_else(|e| panic!("diff JSON: {e}: {}", String::from_utf8_lossy(&diff.stderr)));
    let page = p.path().join(format!(
        "report-{}.html",
        run.file_name().unwrap().to_string_lossy()
    ));
    p.ladder()
        .arg("report")
        .arg(run)
        .arg("--baseline")
        .arg(base)
        .arg("-o")
        .arg(&page)
        .assert()
        .success();
    let html = std::fs::read_to_string(&page).unwrap();
    let start = html
        .find("<pre class=\"ladder-diff\" hidden=\"hidden\">")
        .expect("the page embeds its comparison");
    let rest = &html[start..];
    let json = rest[rest.find('>').unwrap() + 1..rest.find("</pre>").unwrap()]
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&");
    let report_doc: serde_json::Value = serde_json::from_str(&json).expect("embedded JSON");
    let what = format!("{} vs {}", base.display(), run.display());
    assert_eq!(report_doc["outcome"], diff_doc["outcome"], "{what}");
    assert_eq!(report_doc["exit_code"], diff_doc["exit_code"], "{what}");
    let (d, r) = (verdicts(&diff_doc), verdicts(&report_doc));
    assert!(!d.is_empty(), "{what}: no checks");
    assert_eq!(d, r, "{what}: per-check verdicts differ");
    assert!(
        html.contains(gates_words),
        "{what}: the page names its gates"
    );
    assert_eq!(report_doc["gates"], diff_doc["gates"], "{what}");
    diff_doc["outcome"].as_str().unwrap().to_string()
}

/// Every example scenario that targets the simulator, run once; the report of each run against
/// itself agrees with the diff, and so does the demo's run against its committed baseline.
#[test]
fn report_judges_every_simulator_example_like_diff() {
    let p = Project::new();
    let examples = [
        "cache-bust",
        "demo",
        "prefill-sweep",
        "prompt-set",
        "rate-ladder",
        "reasoning",
        "sessions",
        "sim-faults",
    ];
    // The runs wait on the simulator's clock, not the CPU: run them side by side.
    let runs: Vec<_> = examples
        .iter()
        .map(|name| {
            let mut c = p.ladder();
            c.timeout(std::time::Duration::from_secs(400));
            let out = p.path().join("runs").join(name);
            let scenario = repo(&format!("scenarios/{name}.yaml"));
            std::thread::spawn(move || {
                c.arg("run")
                    .arg(scenario)
                    .arg("--out")
                    .arg(&out)
                    .arg("--quiet")
                    .output()
                    .unwrap()
            })
        })
        .collect();
    for (name, run) in examples.iter().zip(runs) {
        let out = run.join().unwrap();
        assert!(
            out.status.code().is_some_and(|c| c == 0 || c == 4),
            "{name}: {:?} {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        let dirs = p.run_dirs(&format!("{name}/{name}"));
        assert_eq!(dirs.len(), 1, "{name}: one run directory");
        report_agrees_with_diff(&p, &dirs[0], &dirs[0], "recorded with the run");
        examples_show_what_they_say(name, &dirs[0]);
        if *name == "demo" {
            report_agrees_with_diff(
                &p,
                &repo("baselines/demo.csv"),
                &dirs[0],
                "recorded with the run",
            );
        }
    }
}

/// What an example's header promises is in its run: sim-faults' stalls happen (its simulator
/// counts them), prefill-sweep's straight-line prefill is a slope, not a knee.
fn examples_show_what_they_say(name: &str, dir: &std::path::Path) {
    let json = |file: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(dir.join(file)).unwrap()).unwrap()
    };
    match name {
        "sim-faults" => {
            let stats = json("sim_stats.json");
            assert!(stats["faults"]["stall"].as_u64() >= Some(1), "{stats}");
        }
        "prefill-sweep" => {
            let knee = &json("findings.json")[0]["knee"];
            assert_eq!(knee["status"], "none", "{knee}");
            let slope = knee["ttft_ms_per_1k_tokens"].as_f64().unwrap();
            assert!((35.0..=70.0).contains(&slope), "0.05 ms a token: {knee}");
        }
        _ => {}
    }
}

/// A scenario with wide gates (latency +200%, throughput −90%: wide enough that a loaded
/// machine's timing cannot cross them): a run with 30% slower decode regresses under the default
/// gates but passes under its own, and the report says PASS with the diff.
#[test]
fn report_applies_the_gates_recorded_with_the_run() {
    let p = Project::new();
    let yaml = "name: wide\ntarget:\n  api: openai-chat\n  sim:\n    ttft: 40ms\n    tpot: 5ms\n    \
        tpot_jitter: 0.02\n    output_tokens: 20\n    seed: 5\n  models: [sim-model]\nrequest:\n  \
        prompt_file: prompts/p.txt\n  max_tokens: 20\nload:\n  ladder: [4]\n  requests_per_step: 60\n\
        gates:\n  ttft: {p90: 200%, p99: 200%, floor: 50ms}\n  tpot: {p90: 200%, p99: 200%, floor: 1ms}\n  \
        itl: {p90: 200%, p99: 200%, floor: 1ms}\n  e2e: {p90: 200%, p99: 200%, floor: 100ms}\n  throughput: 90%\n";
    let f = p.scenario("wide", yaml);
    p.ladder()
        .args(["run", "--quiet"])
        .arg(&f)
        .assert()
        .success();
    p.ladder()
        .args(["run", "--quiet", "--sim-set", "tpot=6.5ms"])
        .arg(&f)
        .assert()
        .success();
    let dirs = p.run_dirs("wide");
    assert_eq!(dirs.len(), 2);
    let outcome = report_agrees_with_diff(&p, &dirs[0], &dirs[1], "recorded with the run");
    assert_eq!(outcome, "pass");
    // The defaults would have judged the same sides a regression: the gates matter here.
    let defaults = p.scenario(
        "defaults",
        &yaml.replace(yaml.split("gates:").nth(1).unwrap(), " {}\n"),
    );
    let out = p
        .ladder()
        .arg("diff")
        .arg(&dirs[0])
        .arg(&dirs[1])
        .arg("--gates-from")
        .arg(&defaults)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
