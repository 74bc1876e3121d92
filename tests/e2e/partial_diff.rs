//! `ladder diff` against a run that did not finish (issue 10 §2): every format carries a warning
//! naming where the run stopped and how many of the planned requests the cut step got, and the
//! JSON has it in `warnings`, the JUnit in a `<property>` and `<system-out>` of each suite.
//!
//! The killed run is a finished run made to look killed the way a SIGKILL leaves it: `meta.json`
//! says `complete: false` and lists only the first step as finished, `summary.csv` holds only
//! that step's row, and `requests.csv` ends part-way through the second step. (The real kills
//! are in `crash`, the real Ctrl-C in `interrupt`; both check the warning too.)

use crate::support::{sim_scenario, Project};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A finished run of `[2, 4]` × 60 requests against the in-process simulator, and a copy of it
/// cut to 25 requests in the second step, marked killed.
fn full_and_killed(p: &Project) -> (PathBuf, PathBuf) {
    let yaml = sim_scenario(
        "cut",
        "    ttft: 5ms\n    tpot: 1ms\n    tpot_jitter: 0.0\n    output_tokens: 8\n    seed: 3",
        "  ladder: [2, 4]\n  requests_per_step: 60",
        8,
    );
    let f = p.scenario("cut", &yaml);
    let out = p
        .ladder()
        .args(["run", "--quiet"])
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let full = p.run_dirs("cut").pop().expect("a run directory");
    let killed = p.path().join("killed-run");
    copy_dir(&full, &killed);
    // meta.json: not complete, only step 1 finished.
    let meta_path = killed.join("meta.json");
    let mut meta: Value =
        serde_json::from_str(&std::fs::read_to_string(&meta_path).unwrap()).unwrap();
    meta["complete"] = Value::Bool(false);
    let steps = meta["steps"].as_array_mut().unwrap();
    steps.truncate(1);
    std::fs::write(&meta_path, serde_json::to_string_pretty(&meta).unwrap()).unwrap();
    // summary.csv: the header and step 1's row.
    let summary = std::fs::read_to_string(killed.join("summary.csv")).unwrap();
    let kept: Vec<&str> = summary.lines().take(2).collect();
    std::fs::write(killed.join("summary.csv"), kept.join("\n") + "\n").unwrap();
    // requests.csv: all of step 1, the first 25 rows of step 2.
    let text = std::fs::read_to_string(killed.join("requests.csv")).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    let step_col = header.split(',').position(|h| h == "step").unwrap();
    let mut out = vec![header.to_string()];
    let mut in_step_2 = 0;
    for l in lines {
        if l.split(',').nth(step_col) == Some("2") {
            in_step_2 += 1;
            if in_step_2 > 25 {
                continue;
            }
        }
        out.push(l.to_string());
    }
    std::fs::write(killed.join("requests.csv"), out.join("\n") + "\n").unwrap();
    std::fs::remove_file(killed.join("findings.json")).ok();
    (full, killed)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

const WHERE: &str = "stopped in step 2 of 2 (at 4 streams)";
const CUT: &str = "at 4 streams has 25 of 60 planned requests";

#[test]
fn diff_of_a_killed_run_warns_in_every_format() {
    let p = Project::new();
    let (full, killed) = full_and_killed(&p);
    let diff = |format: &str| {
        let out = p
            .ladder()
            .args(["diff", "--no-step-summary", "--format", format])
            .arg(&full)
            .arg(&killed)
            .output()
            .unwrap();
        let stdout = String::from_utf8(out.stdout).unwrap();
        // The same data on both sides for the steps that ran: no regression, so the unfinished
        // side makes it exit 1 (docs/commands.md, exit codes: "interrupted run"), never 0.
        assert_eq!(
            out.status.code(),
            Some(1),
            "{format}: {:?} {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        stdout
    };

    let table = diff("table");
    assert!(table.starts_with("ladder diff: INCOMPLETE\n"), "{table}");
    assert!(
        table.contains("incomplete: the new run (")
            && table.contains("was killed before it finished"),
        "{table}"
    );
    let warning_line = table
        .lines()
        .find(|l| l.starts_with("warning: the new run"))
        .unwrap_or_else(|| panic!("no warning near the top:\n{table}"));
    assert!(
        warning_line.contains("is an incomplete run"),
        "{warning_line}"
    );
    assert!(warning_line.contains(WHERE), "{warning_line}");
    assert!(warning_line.contains(CUT), "{warning_line}");
    // Near the top: before what was judged.
    assert!(
        table.find(WHERE).unwrap() < table.find("judged: ").unwrap(),
        "{table}"
    );

    let md = diff("markdown");
    assert!(md.starts_with("## ladder diff: INCOMPLETE"), "{md}");
    assert!(md.contains("Incomplete: the new run"), "{md}");
    assert!(md.contains("> **Warning:**"), "{md}");
    assert!(md.contains(WHERE) && md.contains(CUT), "{md}");

    let json: Value = serde_json::from_str(&diff("json")).expect("JSON on stdout");
    assert_eq!(json["outcome"], "incomplete", "{json}");
    assert_eq!(json["exit_code"], 1, "{json}");
    assert_eq!(
        json["incomplete"].as_array().map(Vec::len),
        Some(1),
        "{json}"
    );
    let warnings = json["warnings"].as_array().expect("warnings array");
    assert_eq!(warnings.len(), 1, "{json}");
    let w = warnings[0].as_str().unwrap();
    assert!(w.contains(WHERE) && w.contains(CUT), "{w}");
    assert!(w.contains("complete: false"), "{w}");

    let xml = diff("junit");
    let doc = roxmltree::Document::parse(&xml).unwrap_or_else(|e| panic!("{e}\n{xml}"));
    let suites: Vec<_> = doc
        .root_element()
        .children()
        .filter(|n| n.has_tag_name("testsuite"))
        .collect();
    assert!(!suites.is_empty());
    // CI dashboards show the build failing for the unfinished run.
    let failure = doc
        .descendants()
        .find(|n| n.has_tag_name("failure") && n.attribute("type") == Some("incomplete"))
        .unwrap_or_else(|| panic!("no incomplete failure:\n{xml}"));
    assert!(
        failure
            .attribute("message")
            .unwrap()
            .contains("the run is incomplete"),
        "{xml}"
    );
    for s in &suites {
        let prop = s
            .descendants()
            .find(|n| n.has_tag_name("property") && n.attribute("name") == Some("ladder.warning"))
            .unwrap_or_else(|| panic!("suite without a ladder.warning property:\n{xml}"));
        assert!(prop.attribute("value").unwrap().contains(CUT), "{xml}");
        let out = s
            .children()
            .find(|n| n.has_tag_name("system-out"))
            .and_then(|n| n.text())
            .unwrap_or_else(|| panic!("suite without system-out:\n{xml}"));
        assert!(out.contains(WHERE), "{out}");
    }
    // A finished run has no warning.
    let out = p
        .ladder()
        .args(["diff", "--no-step-summary", "--format", "json"])
        .arg(&full)
        .arg(&full)
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["warnings"], serde_json::json!([]));
}
