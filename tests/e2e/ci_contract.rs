//! The CI contract (issue 10 §2): with `--format json|junit|markdown` stdout holds only that
//! document, parsed here the way CI tools parse it (serde_json; a real XML parser reading the
//! fields GitHub, GitLab and Jenkins read); the run directory is on stderr and in the JSON; the
//! markdown verdict is appended to $GITHUB_STEP_SUMMARY; a baseline of another workload is
//! refused before any traffic; a failing gate does not replace the baseline; `diff` applies the
//! gates recorded with the run and agrees with `run --against`.

use crate::support::{sim_scenario, Project};
use std::path::{Path, PathBuf};

/// Gates no noise on a busy machine crosses: a run of the same server passes with them, so the
/// tests of the output contract do not depend on timing. Gates do not change the workload.
const WIDE: &str = "gates:\n  ttft: {p90: 900%, p99: 900%}\n  tpot: {p90: 900%, p99: 900%}\n  itl: {p90: 900%, p99: 900%}\n  e2e: {p90: 900%, p99: 900%}\n  error_rate: 50pp\n  throughput: 90%\n";

fn gate_scenario(max_tokens: u32, gates: &str) -> String {
    let mut s = sim_scenario(
        "gate",
        "    ttft: 40ms\n    tpot: 4ms\n    tpot_jitter: 0.02\n    output_tokens: 24\n    seed: 3",
        "  ladder: [4]\n  requests_per_step: 80",
        max_tokens,
    );
    s.push_str(gates);
    s
}

/// A project with the gate scenario and a baseline saved from one run of it.
fn project_with_baseline(gates: &str) -> (Project, PathBuf, PathBuf) {
    let p = Project::new();
    let f = p.scenario("gate", &gate_scenario(24, gates));
    p.ladder()
        .args(["run", "--quiet", "--save-baseline"])
        .arg(&f)
        .assert()
        .success();
    let baseline = p.path().join("baselines/gate.csv");
    (p, f, baseline)
}

struct Ran {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run_against(p: &Project, f: &Path, baseline: &Path, extra: &[&str]) -> Ran {
    let out = p
        .ladder()
        .env_remove("GITHUB_STEP_SUMMARY")
        .arg("run")
        .args(extra)
        .arg("--against")
        .arg(baseline)
        .arg(f)
        .output()
        .unwrap();
    Ran {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

fn newest_run(p: &Project) -> PathBuf {
    p.run_dirs("gate").pop().expect("a run directory")
}

#[test]
fn json_on_stdout_is_the_only_thing_there_and_names_the_run_directory() {
    let (p, f, baseline) = project_with_baseline(WIDE);
    let r = run_against(&p, &f, &baseline, &["--format", "json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc: serde_json::Value = serde_json::from_str(&r.stdout)
        .unwrap_or_else(|e| panic!("stdout is not one JSON document: {e}\n{}", r.stdout));
    assert_eq!(doc["outcome"], "pass");
    assert_eq!(doc["exit_code"], 0);
    assert!(doc["checks"].as_array().is_some_and(|c| !c.is_empty()));
    let dir = newest_run(&p);
    let run_dir = doc["run_dir"].as_str().unwrap();
    assert_eq!(p.path().join(run_dir), dir);
    assert!(doc["gates"]
        .as_str()
        .unwrap()
        .starts_with("from the scenario"));
    // People read stderr: the run table, the findings and where the run went.
    assert!(r.stderr.contains("streams"), "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!("wrote {run_dir}")),
        "{}",
        r.stderr
    );

    // --quiet drops the table but still says where the run went; stdout is unchanged in kind.
    let r = run_against(&p, &f, &baseline, &["--quiet", "--format", "json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    serde_json::from_str::<serde_json::Value>(&r.stdout).expect("JSON");
    assert!(!r.stderr.contains("streams"), "{}", r.stderr);
    assert!(r.stderr.contains("wrote "), "{}", r.stderr);

    // Markdown too: the document alone, starting with its heading.
    let r = run_against(&p, &f, &baseline, &["--format", "markdown"]);
    assert!(r.stdout.starts_with("## ladder diff: PASS"), "{}", r.stdout);
    assert!(!r.stdout.contains("streams │"), "{}", r.stdout);
}

#[test]
fn junit_on_stdout_parses_and_carries_what_ci_dashboards_read() {
    let (p, f, baseline) = project_with_baseline("");
    let r = run_against(
        &p,
        &f,
        &baseline,
        // Decode 3x slower: a regression no noise explains, in a third of the time 10x took.
        &["--format", "junit", "--sim-set", "tpot=12ms"],
    );
    assert_eq!(r.code, 3, "{}", r.stderr);
    let doc = roxmltree::Document::parse(&r.stdout)
        .unwrap_or_else(|e| panic!("stdout is not XML: {e}\n{}", r.stdout));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    let attr = |n: roxmltree::Node, a: &str| -> usize {
        n.attribute(a)
            .unwrap_or_else(|| panic!("<{}> has no {a}", n.tag_name().name()))
            .parse()
            .unwrap()
    };
    let suites: Vec<_> = root
        .children()
        .filter(|n| n.has_tag_name("testsuite"))
        .collect();
    assert!(!suites.is_empty());
    let (mut tests, mut failures, mut skipped) = (0, 0, 0);
    for s in &suites {
        assert!(!s.attribute("name").unwrap_or_default().is_empty());
        let cases: Vec<_> = s
            .children()
            .filter(|n| n.has_tag_name("testcase"))
            .collect();
        assert_eq!(attr(*s, "tests"), cases.len());
        let failed = cases
            .iter()
            .filter(|c| c.children().any(|n| n.has_tag_name("failure")))
            .count();
        let skip = cases
            .iter()
            .filter(|c| c.children().any(|n| n.has_tag_name("skipped")))
            .count();
        assert_eq!(attr(*s, "failures"), failed);
        assert_eq!(attr(*s, "skipped"), skip);
        assert_eq!(attr(*s, "errors"), 0);
        for c in &cases {
            assert!(!c.attribute("name").unwrap_or_default().is_empty());
            assert!(c
                .attribute("classname")
                .is_some_and(|n| n.starts_with("ladder.")));
        }
        tests += cases.len();
        failures += failed;
        skipped += skip;
    }
    // The root carries what Jenkins' junit-10.xsd allows there (no `skipped`).
    assert_eq!(
        (attr(root, "tests"), attr(root, "failures")),
        (tests, failures)
    );
    assert!(root.attribute("skipped").is_none());
    assert!(skipped > 0, "the P99 gates lack samples at 80 requests");
    assert_eq!(attr(root, "errors"), 0);
    let failure = doc
        .descendants()
        .filter(|n| n.has_tag_name("failure"))
        .find(|n| {
            n.attribute("message")
                .is_some_and(|m| m.contains("TPOT P90"))
        })
        .expect("a <failure> for the TPOT regression");
    assert_eq!(failure.attribute("type"), Some("regression"));
    let case = failure.parent().unwrap().attribute("name").unwrap();
    assert!(case.contains("TPOT P90"), "{case}");
}

#[test]
fn the_markdown_verdict_is_appended_to_the_github_step_summary() {
    let (p, f, baseline) = project_with_baseline(WIDE);
    let summary = p.path().join("step-summary.md");
    std::fs::write(&summary, "# earlier step\n").unwrap();
    p.ladder()
        .env("GITHUB_STEP_SUMMARY", &summary)
        .args(["run", "--quiet", "--format", "json", "--against"])
        .arg(&baseline)
        .arg(&f)
        .assert()
        .code(0);
    let text = std::fs::read_to_string(&summary).unwrap();
    assert!(
        text.starts_with("# earlier step\n## ladder diff: PASS"),
        "{text}"
    );
    p.ladder()
        .env("GITHUB_STEP_SUMMARY", &summary)
        .args(["diff", "--no-step-summary"])
        .arg(&baseline)
        .arg(newest_run(&p))
        .assert()
        .code(0);
    assert_eq!(std::fs::read_to_string(&summary).unwrap(), text);
    p.ladder()
        .env("GITHUB_STEP_SUMMARY", &summary)
        .args(["diff", "--format", "json"])
        .arg(&baseline)
        .arg(newest_run(&p))
        .assert()
        .code(0);
    let again = std::fs::read_to_string(&summary).unwrap();
    assert_eq!(again.matches("## ladder diff: PASS").count(), 2, "{again}");
}

#[test]
fn a_baseline_of_another_workload_is_refused_before_any_traffic() {
    let (p, _, baseline) = project_with_baseline("");
    let other = p.scenario("gate", &gate_scenario(12, ""));
    let before = p.run_dirs("gate").len();
    let r = run_against(&p, &other, &baseline, &["--format", "json"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(p.run_dirs("gate").len(), before, "traffic was sent");
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).expect("JSON");
    assert_eq!(doc["outcome"], "refused");
    let diff = doc["refused"]["unified_diff"].as_str().unwrap();
    assert!(diff.contains("max_tokens"), "{diff}");
    assert!(r.stderr.contains("nothing was sent"), "{}", r.stderr);
    // The table form shows the scenario diff as `ladder diff` does.
    let r = run_against(&p, &other, &baseline, &["--quiet"]);
    assert_eq!(r.code, 1);
    assert!(r.stdout.contains("-max_tokens: 24"), "{}", r.stdout);
    // Allowed on purpose: the run goes ahead.
    let r = run_against(
        &p,
        &other,
        &baseline,
        &["--quiet", "--allow-different-workload"],
    );
    assert_ne!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert_eq!(p.run_dirs("gate").len(), before + 1);
}

#[test]
fn a_failing_gate_keeps_the_old_baseline_unless_forced() {
    let (p, f, baseline) = project_with_baseline("");
    let before = std::fs::read_to_string(&baseline).unwrap();
    let slower = ["--save-baseline", "--quiet", "--sim-set", "tpot=12ms"];
    let r = run_against(&p, &f, &baseline, &slower);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(r.stderr.contains("baseline not replaced"), "{}", r.stderr);
    assert_eq!(std::fs::read_to_string(&baseline).unwrap(), before);

    let forced: Vec<&str> = slower.iter().copied().chain(["--force"]).collect();
    let r = run_against(&p, &f, &baseline, &forced);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(r.stderr.contains("saved baseline"), "{}", r.stderr);
    assert_ne!(std::fs::read_to_string(&baseline).unwrap(), before);
    // A passing gate replaces the baseline (gates wide enough that timing noise passes).
    let forced = std::fs::read_to_string(&baseline).unwrap();
    std::fs::write(&f, gate_scenario(24, WIDE)).unwrap();
    let r = run_against(&p, &f, &baseline, &slower);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("saved baseline"), "{}", r.stderr);
    assert_ne!(std::fs::read_to_string(&baseline).unwrap(), forced);
}

/// Verdicts per check, for comparing two JSON documents.
fn verdicts(doc: &serde_json::Value) -> Vec<(String, String)> {
    doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                format!("{} {} {}", c["model"], c["metric"], c["percentile"]),
                c["verdict"]["kind"].to_string(),
            )
        })
        .collect()
}

#[test]
fn diff_applies_the_gates_recorded_with_the_run_and_agrees_with_run_against() {
    // Decode twice as slow passes under the wide gates recorded with the run and fails under
    // the defaults (10%).
    let (p, f, baseline) = project_with_baseline(WIDE);
    let r = run_against(
        &p,
        &f,
        &baseline,
        &["--format", "json", "--sim-set", "tpot=8ms"],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let from_run: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let dir = newest_run(&p);

    let out = p
        .ladder()
        .args(["diff", "--format", "json"])
        .arg(&baseline)
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let from_diff: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(verdicts(&from_diff), verdicts(&from_run));
    assert_eq!(from_diff["outcome"], from_run["outcome"]);
    let gates = from_diff["gates"].as_str().unwrap();
    assert!(gates.starts_with("recorded with the run"), "{gates}");
    assert!(gates.contains("TPOT P90 +900%"), "{gates}");

    // The table says which gates it applied.
    let out = p
        .ladder()
        .arg("diff")
        .arg(&baseline)
        .arg(&dir)
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("gates: recorded with the run"), "{table}");

    // --gates-from a scenario with the default gates: the same data is a regression.
    let defaults = p.scenario("defaults", &gate_scenario(24, ""));
    let out = p
        .ladder()
        .args(["diff", "--gates-from"])
        .arg(&defaults)
        .arg(&baseline)
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stdout).contains("gates: from --gates-from"));
}
