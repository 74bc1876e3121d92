//! `ladder report --trend`: every committed version of a baseline from git history (one point
//! per commit, a shallow clone says how many it found), or several run directories.

use crate::support::{sim_scenario, skip, Project};
use std::path::Path;
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> bool {
    Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The committed demo baseline with every TTFT P90 scaled by `factor`.
fn baseline_version(factor: f64) -> String {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("baselines/demo.csv"))
            .unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    let col = header.split(',').position(|h| h == "ttft_p90_ms").unwrap();
    let mut out = format!("{header}\n");
    for line in lines {
        let mut cells: Vec<String> = line.split(',').map(String::from).collect();
        let v: f64 = cells[col].parse().unwrap();
        cells[col] = format!("{:.3}", v * factor);
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    out
}

#[test]
fn trend_of_a_baseline_reads_every_commit_and_a_shallow_clone_says_how_many() {
    let p = Project::new();
    let repo = p.path().join("repo");
    std::fs::create_dir_all(repo.join("baselines")).unwrap();
    let initialised = git(&repo, &["init", "-q"]).then_some(());
    if skip::require(
        initialised,
        "trend_of_a_baseline_reads_every_commit_and_a_shallow_clone_says_how_many",
        "git is not available",
        "Debian: apt-get install git",
    )
    .is_none()
    {
        return;
    }
    for (i, factor) in [1.0, 1.1, 1.2].iter().enumerate() {
        std::fs::write(repo.join("baselines/demo.csv"), baseline_version(*factor)).unwrap();
        assert!(git(&repo, &["add", "."]));
        assert!(git(&repo, &["commit", "-q", "-m", &format!("v{i}")]));
    }
    let out = p
        .ladder()
        .current_dir(repo.join("baselines"))
        .args(["report", "--trend", "demo.csv", "--format", "markdown"])
        .assert()
        .success();
    let md = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(md.contains("(3 point(s))"), "{md}");
    let rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| 20")).collect();
    assert_eq!(rows.len(), 3, "one row per commit:\n{md}");
    // Oldest first: step 20's TTFT P90 grows 877.5 → ×1.1 → ×1.2.
    assert!(rows[0].contains("| 877.5 / 15.1 |"), "{md}");
    assert!(rows[2].contains("| 1053.0 / 15.1 |"), "{md}");

    // The HTML page: a chart per metric with a series per step.
    let page = p.path().join("trend.html");
    p.ladder()
        .args(["report", "--trend", "repo/baselines/demo.csv", "-o"])
        .arg(&page)
        .assert()
        .success();
    let html = std::fs::read_to_string(&page).unwrap();
    let doc = roxmltree::Document::parse_with_options(
        &html,
        roxmltree::ParsingOptions {
            allow_dtd: true,
            ..Default::default()
        },
    )
    .unwrap();
    let series = doc
        .descendants()
        .filter(|n| n.attribute("data-series") == Some("20 streams"))
        .count();
    assert_eq!(series, 2, "TTFT and TPOT charts");

    // A shallow clone has one commit: the trend says so instead of pretending.
    let clone = p.path().join("clone");
    let url = format!("file://{}", repo.display());
    assert!(git(
        p.path(),
        &["clone", "-q", "--depth", "1", &url, "clone"]
    ));
    let out = p
        .ladder()
        .args(["report", "--trend", "--format", "markdown"])
        .arg(clone.join("baselines/demo.csv"))
        .assert()
        .success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        stderr.contains("Shallow clone: found 1 committed version"),
        "{stderr}"
    );
}

#[test]
fn trend_of_run_directories_and_bad_input() {
    let p = Project::new();
    let f = p.scenario(
        "t",
        &sim_scenario(
            "t",
            "    ttft: 10ms\n    tpot: 1ms\n    output_tokens: 4",
            "  ladder: [1, 2]\n  requests_per_step: 4",
            4,
        ),
    );
    for _ in 0..2 {
        p.ladder()
            .args(["run", "--quiet"])
            .arg(&f)
            .assert()
            .success();
    }
    let runs = p.run_dirs("t");
    assert_eq!(runs.len(), 2);
    let out = p
        .ladder()
        .args(["report", "--trend", "--format", "markdown"])
        .args(&runs)
        .assert()
        .success();
    let md = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(md.contains("2 run(s) (2 point(s))"), "{md}");
    assert!(md.contains("| 1 stream | 2 streams |"), "{md}");

    // Not in git: says so, exit 2.
    let lone = p.path().join("lone.csv");
    std::fs::write(&lone, baseline_version(1.0)).unwrap();
    p.ladder()
        .args(["report", "--trend"])
        .arg(&lone)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("not inside a git repository"));
}
