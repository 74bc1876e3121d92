//! One meaning per word (issue 46 part 4): every table, file and chart says which tokens a TPM
//! counts (output, input, uncached input, total). A run against the simulator, its report,
//! `ladder logs` on its requests and `plan`'s JSON show no bare `TPM` (or `tpm`, `tok/min`)
//! header: a header cell, CSV column, chart label or JSON key with no qualifier.

use crate::support::{only_dir, sim_scenario, Project};
use serde_json::Value;
use std::path::Path;

/// Headers that do not say which tokens they count.
const BARE: [&str; 5] = ["TPM", "tpm", "tok/min", "TPM (tokens/min)", "tokens/min"];

fn assert_no_bare(what: &str, cells: impl IntoIterator<Item = String>) {
    for c in cells {
        assert!(!BARE.contains(&c.trim()), "{what}: a bare {c:?}");
    }
}

/// The cells of a terminal or markdown table's lines (split on `|` and `│`).
fn table_cells(text: &str) -> Vec<String> {
    text.lines()
        .flat_map(|l| l.split(['|', '│']).map(str::to_string))
        .collect()
}

/// The text between tags of an HTML page (header cells, SVG titles and labels).
fn html_texts(page: &str) -> Vec<String> {
    page.split('>')
        .filter_map(|s| s.split('<').next())
        .map(str::to_string)
        .collect()
}

fn json_keys(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                out.push(k.clone());
                json_keys(v, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|v| json_keys(v, out)),
        _ => {}
    }
}

fn csv_header(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let line = text.lines().next().unwrap_or_default();
    line.split(',').map(str::to_string).collect()
}

#[test]
fn no_bare_tpm_header_in_any_output() {
    let p = Project::new();
    let yaml = sim_scenario(
        "words",
        "    ttft: 20ms\n    tpot: 2ms\n    output_tokens: 10\n    seed: 3",
        "  ladder: [1, 2]\n  requests_per_step: 12\n  warmup_requests: 0",
        10,
    );
    let f = p.scenario("words", &yaml);
    let run = p.ladder().arg("run").arg(&f).output().unwrap();
    let table = String::from_utf8_lossy(&run.stdout).to_string();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(table.contains("output TPM"), "{table}");
    assert_no_bare("run table", table_cells(&table));
    let dir = only_dir(&p.path().join("runs/words"));

    let summary = csv_header(&dir.join("summary.csv"));
    assert!(summary.iter().any(|c| c == "output_tpm"), "{summary:?}");
    assert_no_bare("summary.csv", summary);

    let md_file = p.scenario("words-md", &yaml.replace("words", "words-md"));
    let md = p
        .ladder()
        .args(["run", "--format", "markdown"])
        .arg(&md_file)
        .output()
        .unwrap();
    let md = String::from_utf8_lossy(&md.stdout).to_string();
    assert!(md.contains("output tok/min"), "{md}");
    assert_no_bare("run markdown", table_cells(&md));

    p.ladder().arg("report").arg(&dir).assert().success();
    let page = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(page.contains("output TPM"), "the report's TPM says output");
    assert_no_bare("report.html", html_texts(&page));

    let logs = p
        .ladder()
        .args(["logs", "--out", "prod", "--scenario"])
        .arg(&f)
        .arg(dir.join("requests.csv"))
        .output()
        .unwrap();
    let timeline = String::from_utf8_lossy(&logs.stdout).to_string();
    assert!(
        logs.status.success(),
        "{}",
        String::from_utf8_lossy(&logs.stderr)
    );
    assert!(timeline.contains("total tok/min"), "{timeline}");
    assert_no_bare(
        "logs timeline",
        timeline
            .lines()
            .flat_map(|l| l.split("  ").map(str::to_string).collect::<Vec<_>>()),
    );
    let log_dir = only_dir(&p.path().join("prod/words"));
    let columns = csv_header(&log_dir.join("timeline.csv"));
    assert!(columns.iter().any(|c| c == "total_tpm"), "{columns:?}");
    assert_no_bare("timeline.csv", columns);

    let plan = p
        .ladder()
        .args([
            "plan",
            "--rps",
            "5",
            "--limit-tpm",
            "100000",
            "--format",
            "json",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        plan.status.success(),
        "{}",
        String::from_utf8_lossy(&plan.stderr)
    );
    let v: Value = serde_json::from_slice(&plan.stdout).unwrap();
    let mut keys = Vec::new();
    json_keys(&v, &mut keys);
    assert!(keys.iter().any(|k| k == "total_tpm_needed"), "{keys:?}");
    assert_no_bare("plan JSON", keys);
}
