//! Snapshots of what a user reads (insta, committed in `tests/e2e/snapshots/`): whole outputs, so
//! a change in wording, layout or order shows up in review as a diff of the text, not as a
//! substring that happened to survive. The filters (`support::session::snapshot_settings`)
//! replace what changes between runs and machines: temporary paths, times, run ids, hashes, and
//! for a live run's table every figure. `validate`'s error messages are snapshot by
//! `validate.rs`, into the same folder.
//!
//! After an intended change: `INSTA_UPDATE=always cargo test --test e2e snapshots`, then read
//! `git diff tests/e2e/snapshots/` (docs/development.md, "Tests").

use crate::support::session::{snapshot_settings, Figures, Session};
use crate::support::sim_scenario;

#[test]
fn help_lists_the_commands_and_their_flags() {
    let s = Session::in_repo();
    for (name, args) in [
        ("help", vec!["--help"]),
        ("help_run", vec!["run", "--help"]),
        ("help_diff", vec!["diff", "--help"]),
        ("help_validate", vec!["validate", "--help"]),
    ] {
        let out = s.args(args).stderr_is_empty().run().stdout_filtered();
        // The dialects are the registry's (every name listed, checked here), not the
        // snapshot's: a new dialect changes no snapshot.
        let mut settings = snapshot_settings(Figures::Keep);
        if out.contains("--api <API>") {
            for api in ladder::dialect::Api::names() {
                assert!(
                    out.contains(api),
                    "{name} lists every dialect, not {api}:\n{out}"
                );
            }
            settings.add_filter(
                r"\[possible\s+values: openai-chat,[^\]]*\]",
                "[possible values: [DIALECTS]]",
            );
        }
        settings.bind(|| insta::assert_snapshot!(name, out));
    }
}

#[test]
fn the_demo_baseline_diffed_against_itself() {
    // Read-only in the repository: the committed baseline on both sides.
    let s = Session::in_repo();
    let diff = || s.args(["diff", "baselines/demo.csv", "baselines/demo.csv"]);
    let text = diff().run().stdout_filtered();
    let full = diff().arg("--full").run().stdout_filtered();
    let markdown = diff()
        .args(["--format", "markdown"])
        .run()
        .stdout_filtered();
    // A passing diff is a few lines; the 55 rows of checks are `--full`'s (issue 34, part 5).
    // The capacity headline and the queued steps' P50 and mean (issue 46) took it to 22.
    assert!(text.lines().count() <= 22, "{text}");
    assert!(full.lines().count() > 60, "{full}");
    snapshot_settings(Figures::Keep).bind(|| {
        insta::assert_snapshot!("diff_demo_self", text);
        insta::assert_snapshot!("diff_demo_self_full", full);
        insta::assert_snapshot!("diff_demo_self_markdown", markdown);
    });
}

#[test]
fn plan_for_the_demo() {
    let out = Session::in_repo()
        .args([
            "plan",
            "baselines/demo.csv",
            "--rps",
            "10",
            "--slo-ttft",
            "1s",
        ])
        .args(["--limit-concurrency", "50", "--limit-tpm", "2000000"])
        .run()
        .stdout_filtered();
    snapshot_settings(Figures::Keep).bind(|| insta::assert_snapshot!("plan_demo", out));
}

#[test]
fn the_demo_dry_run_estimates_from_its_baseline() {
    let out = Session::in_repo()
        .args(["run", "scenarios/demo.yaml", "--dry-run"])
        .stderr_is_empty()
        .run()
        .stdout_filtered();
    snapshot_settings(Figures::Keep).bind(|| insta::assert_snapshot!("dry_run_demo", out));
}

#[test]
fn a_run_prints_its_table() {
    let s = Session::new();
    s.scenario(
        "table",
        &sim_scenario(
            "table",
            "    ttft: 20ms\n    tpot: 2ms\n    output_tokens: 8\n    seed: 1",
            "  ladder: [1, 2]\n  requests_per_step: 20\n  warmup_requests: 1",
            8,
        ),
    );
    let done = s
        .args(["run", "scenarios/table.yaml"])
        .stderr("wrote runs/table/")
        .run();
    // The figures vary from run to run; the table's columns and rows do not. Only the table:
    // the findings below it depend on the figures (a loaded machine can make a knee).
    let stdout = done.stdout_filtered();
    let shown: String = stdout
        .lines()
        .skip_while(|l| !l.starts_with("model: "))
        .take_while(|l| !l.is_empty())
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(shown.contains("╰"), "no table in:\n{stdout}");
    snapshot_settings(Figures::Hide).bind(|| insta::assert_snapshot!("run_table", shown));
}

#[test]
fn a_diff_of_two_workloads_refuses_and_shows_what_differs() {
    let s = Session::new();
    let body = |max: u32| {
        sim_scenario(
            "wl",
            "    ttft: 5ms\n    tpot: 1ms\n    output_tokens: 4\n    seed: 1",
            "  ladder: [2]\n  requests_per_step: 4\n  warmup_requests: 0",
            max,
        )
    };
    s.scenario("wl", &body(8));
    s.args(["run", "--quiet", "--save-baseline", "scenarios/wl.yaml"])
        .run();
    s.scenario("wl", &body(4));
    s.args(["run", "--quiet", "scenarios/wl.yaml"]).run();
    let run = s.project().run_dirs("wl").pop().expect("a second run");
    let out = s
        .args(["diff", "baselines/wl.csv"])
        .arg(&run)
        .code(1)
        .stdout("max_tokens")
        .run()
        .stdout_filtered();
    snapshot_settings(Figures::Keep).bind(|| insta::assert_snapshot!("diff_refused_workload", out));
}
