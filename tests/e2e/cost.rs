//! What a run costs (issue 37, part 3), without a key: a scenario priced from a shared pricing
//! file runs against the embedded simulator and is saved as the baseline; the same simulator
//! reasoning three times as long (`--sim-set reasoning_tokens=120`, streamed, so the first token
//! and the decode speed do not move) answers in the same TTFT and TPOT but costs more per
//! answer: `diff` fails on cost per success (exit 3) naming the reasoning while the TTFT and
//! TPOT checks pass, and the table, the JSON, requests.csv, summary.csv, the report and the
//! plan show the cost with its currency.

use crate::support::{num, read_csv, Project};
use serde_json::Value;

const PRICES: &str = "# example prices, per 1M tokens\ncurrency: USD\nmodels:\n  sim-model: {input: 1.25, cached_input: 0.125, output: 10}\n";

/// 60 requests at 4 streams, each answer 10 tokens after 40 streamed reasoning tokens at 1 ms.
/// Wide gates for what thinking longer moves on its own (E2E, TTFC, the request rate), so the
/// exit code is the cost gate's alone.
const SCENARIO: &str = "name: cost
target:
  api: openai-chat
  sim: {ttft: 20ms, tpot: 1ms, tpot_jitter: 0, output_tokens: 10, reasoning_tokens: 40, stream_reasoning: true, seed: 7}
  models: [sim-model]
request:
  prompt_file: prompts/p.txt
  max_tokens: 400
load:
  ladder: [4]
  requests_per_step: 60
pricing: prices.yaml
gates:
  e2e: {p90: 900%, p99: 900%}
  ttfc: {p90: 900%, p99: 900%}
  itl: {p90: 900%, p99: 900%}
  throughput: 95%
  cost: {mean: 10%}
";

fn check<'a>(doc: &'a Value, metric: &str, percentile: Option<&str>) -> &'a Value {
    doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["metric"] == metric && percentile.map_or(true, |p| c["percentile"] == p))
        .unwrap_or_else(|| panic!("no {metric} {percentile:?} check: {doc}"))
}

fn kind(c: &Value) -> &str {
    c["verdict"]["kind"].as_str().unwrap()
}

#[test]
fn more_reasoning_fails_the_cost_gate_while_ttft_and_tpot_pass() {
    let p = Project::new();
    std::fs::write(p.path().join("scenarios/prices.yaml"), PRICES).unwrap();
    let f = p.scenario("cost", SCENARIO);

    // The baseline: the table shows the cost columns with the currency.
    let out = p
        .ladder()
        .arg("run")
        .arg("--save-baseline")
        .arg(&f)
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("USD/1k ok") && text.contains("USD/1M out"),
        "{text}"
    );

    // Every record is priced by the one rule: its uncached input at 1.25, cached at 0.125,
    // output (reasoning included: 10 + 40) at 10, per 1M tokens.
    let run = p.run_dirs("cost").pop().unwrap();
    let (h, rows) = read_csv(&run.join("requests.csv"));
    assert_eq!(rows.len(), 60);
    for r in &rows {
        let (input, cached, output) = (
            num(r, &h, "input_tokens"),
            r[crate::support::col(&h, "cached_tokens")]
                .parse::<f64>()
                .unwrap_or(0.0),
            num(r, &h, "output_tokens"),
        );
        assert_eq!(output, 50.0, "10 answer + 40 reasoning tokens: {r:?}");
        let expected = ((input - cached) * 1.25 + cached * 0.125 + output * 10.0) / 1e6;
        assert!((num(r, &h, "cost") - expected).abs() < 1e-9, "{r:?}");
    }
    let (sh, srows) = read_csv(&run.join("summary.csv"));
    let per_1k = num(&srows[0], &sh, "cost_per_1k_ok");
    let mean: f64 = rows.iter().map(|r| num(r, &h, "cost")).sum::<f64>() / 60.0;
    assert!((per_1k - mean * 1000.0).abs() < 1e-6, "{per_1k} vs {mean}");
    assert!(num(&srows[0], &sh, "cost_per_1m_output") > 10.0);
    // The run records the prices it used, inline; the workload (fingerprint) ignores them.
    let recorded = std::fs::read_to_string(run.join("scenario.yaml")).unwrap();
    assert!(
        recorded.contains("pricing:") && recorded.contains("currency: USD"),
        "{recorded}"
    );
    let workload = std::fs::read_to_string(run.join("workload.yaml")).unwrap();
    assert!(!workload.contains("USD"), "{workload}");
    // `summarize` rebuilds the table with the run's currency in the cost columns' headers.
    let out = p.ladder().arg("summarize").arg(&run).output().unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{table}");
    assert!(
        table.contains("USD/1k ok") && table.contains("USD/1M out"),
        "{table}"
    );

    // Three times the reasoning: `run --format json` carries the currency and the figures.
    let out = p
        .ladder()
        .args([
            "run",
            "--format",
            "json",
            "--sim-set",
            "reasoning_tokens=120",
        ])
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["currency"], "USD", "{doc}");
    let new_per_1k = doc["summary"][0]["cost_per_1k_ok"].as_f64().unwrap();
    assert!(new_per_1k > per_1k * 2.0, "{new_per_1k} vs {per_1k}");
    let new_run = p.path().join(doc["run_dir"].as_str().unwrap());

    // diff: cost per success regressed, with the reason named; TTFT and TPOT pass.
    let out = p
        .ladder()
        .args(["diff", "--format", "json", "baselines/cost.csv"])
        .arg(&new_run)
        .output()
        .unwrap();
    let diff: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    assert_eq!(out.status.code(), Some(3), "{diff}");
    let cost = check(&diff, "cost", None);
    assert_eq!(kind(cost), "regressed", "{cost}");
    let detail = cost["detail"].as_str().unwrap();
    assert!(
        detail.contains("more reasoning")
            && detail.contains("reasoning 40 → 120")
            && detail.contains("USD"),
        "{detail}"
    );
    for (metric, pct) in [
        ("ttft", "p90"),
        ("ttft", "p99"),
        ("tpot", "p90"),
        ("tpot", "p99"),
    ] {
        let c = check(&diff, metric, Some(pct));
        assert_ne!(kind(c), "regressed", "{metric} {pct}: {c}");
    }
    let regressed: Vec<&Value> = diff["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["verdict"]["kind"] == "regressed")
        .collect();
    assert!(
        regressed.iter().all(|c| c["metric"] == "cost"),
        "only cost regresses: {regressed:?}"
    );
    // The table names it too.
    let out = p
        .ladder()
        .args(["diff", "baselines/cost.csv"])
        .arg(&new_run)
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3));
    assert!(table.contains("cost per success"), "{table}");
    assert!(
        table.contains("; cost mean +10%"),
        "the gates line names the cost gate: {table}"
    );
    // A baseline CSV keeps no prices: nothing is said about them.
    assert!(!table.contains("was not priced"), "{table}");
    // Against the baseline's own run directory (priced the same), no note either; against a
    // run priced otherwise, the note says both sides were priced at the new run's prices.
    let base_run = p.run_dirs("cost").remove(0);
    let diff_text = |base: &std::path::Path| {
        let out = p
            .ladder()
            .arg("diff")
            .arg(base)
            .arg(&new_run)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    assert!(!diff_text(&base_run).contains("new run's prices ("));
    let recorded = base_run.join("scenario.yaml");
    let text = std::fs::read_to_string(&recorded).unwrap();
    std::fs::write(&recorded, text.replace("output: 10.0", "output: 8.0")).unwrap();
    let noted = diff_text(&base_run);
    assert!(
        noted.contains("priced at the new run's prices (USD); the baseline recorded other prices"),
        "{noted}"
    );

    // The report shows the cost columns and the verdict; the plan the cost per hour.
    let page = p.path().join("cost.html");
    let out = p
        .ladder()
        .arg("report")
        .arg(&new_run)
        .arg("--baseline")
        .arg("baselines/cost.csv")
        .arg("-o")
        .arg(&page)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("USD per 1,000 ok") && html.contains("cost per success"),
        "report"
    );
    let out = p
        .ladder()
        .args(["plan", "--rps", "5"])
        .arg(&new_run)
        .output()
        .unwrap();
    let plan = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{plan}");
    assert!(
        plan.contains("cost per hour") && plan.contains("USD at 5 RPS"),
        "{plan}"
    );
    // 5 req/s for an hour at the run's cost per success.
    let out = p
        .ladder()
        .args(["plan", "--rps", "5", "--format", "json"])
        .arg(&new_run)
        .output()
        .unwrap();
    let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
    let hour = plan["models"][0]["cost_per_hour"].as_f64().unwrap();
    assert!(
        (hour - new_per_1k / 1000.0 * 5.0 * 3600.0).abs() < 1e-6,
        "{plan}"
    );
}

/// Before the run, `--dry-run` and `validate` price the committed priced scenario from its
/// token sizes, and say it is an estimate: every request (warmup included) × the prompt's
/// tokens (its length / 4) at the input price + the simulator's answer and reasoning tokens
/// at the output price. An unpriced scenario says nothing of cost.
#[test]
fn a_priced_scenarios_dry_run_and_validate_estimate_its_cost() {
    let repo = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let scenario = repo.join("scenarios/cost.yaml");
    let yaml: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(&scenario).unwrap()).unwrap();
    let n = |v: &serde_yaml::Value| v.as_f64().unwrap_or_else(|| panic!("{v:?}"));
    let load = &yaml["load"];
    let steps = load["ladder"].as_sequence().unwrap().len() as f64;
    let warmup = load["warmup_requests"].as_f64().unwrap_or(0.0);
    let requests = steps * (n(&load["requests_per_step"]) + warmup);
    let sim = &yaml["target"]["sim"];
    let output = n(&sim["output_tokens"]).min(n(&yaml["request"]["max_tokens"]))
        + n(&sim["reasoning_tokens"]);
    let prompt = std::fs::read_to_string(
        repo.join("scenarios")
            .join(yaml["request"]["prompt_file"].as_str().unwrap()),
    )
    .unwrap();
    let input = (prompt.chars().count() as f64 / 4.0).ceil();
    let prices: serde_yaml::Value = serde_yaml::from_str(
        &std::fs::read_to_string(
            repo.join("scenarios")
                .join(yaml["pricing"].as_str().unwrap()),
        )
        .unwrap(),
    )
    .unwrap();
    let model = yaml["target"]["models"][0].as_str().unwrap();
    let price = &prices["models"][model];
    let currency = prices["currency"].as_str().unwrap();
    let expected = requests * (input * n(&price["input"]) + output * n(&price["output"])) / 1e6;
    assert!((0.01..1.0).contains(&expected), "four decimals: {expected}");
    let line = format!(
        "estimated cost: ≈ {expected:.4} {currency} for {requests} requests (warmup included)"
    );

    let p = Project::new();
    let out = p
        .ladder()
        .args(["run", "--dry-run"])
        .arg(&scenario)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(stdout.contains(&line), "{line}\n{stdout}");
    assert!(
        stdout.contains(&format!(
            "per request: ≈ {input} input tokens, {output} output tokens"
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains("the run's table and summary.csv give the measured cost"),
        "{stdout}"
    );

    let out = p.ladder().arg("validate").arg(&scenario).assert().success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        stderr.contains(&format!("note: {}: {line}", scenario.display())),
        "{stderr}"
    );

    let demo = repo.join("scenarios/demo.yaml");
    for args in [vec!["run", "--dry-run"], vec!["validate"]] {
        let out = p.ladder().args(args).arg(&demo).assert().success();
        let all = String::from_utf8_lossy(&out.get_output().stdout).to_string()
            + &String::from_utf8_lossy(&out.get_output().stderr);
        assert!(!all.contains("cost"), "an unpriced scenario: {all}");
    }
}
