//! Issue 19 §9: the Makefile works with `CARGO_TARGET_DIR` set (many developers set it
//! globally): `make demo` runs the binary cargo built there, not `./target/release/ladder`.

use crate::support::skip;
use std::path::Path;
use std::process::Command;

fn make_dry_run(target: &str, goal: &str) -> Option<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("make")
        .args(["-n", "-C"])
        .arg(root)
        .arg(goal)
        .env("CARGO_TARGET_DIR", target)
        .output()
        .ok()?;
    assert!(out.status.success(), "make -n {goal}: {out:?}");
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn make_demo_uses_cargo_target_dir() {
    let make = skip::on_path(&["make"]);
    let missing = "no `make` on PATH";
    if skip::require(
        make,
        "make_demo_uses_cargo_target_dir",
        missing,
        "Debian: apt-get install make",
    )
    .is_none()
    {
        return;
    }
    let demo = make_dry_run("/tmp/elsewhere-target", "demo").expect("make runs");
    assert!(
        demo.contains("/tmp/elsewhere-target/release/ladder run scenarios/demo.yaml"),
        "{demo}"
    );
    assert!(!demo.contains("./target/release/ladder"), "{demo}");
    let baseline = make_dry_run("/tmp/elsewhere-target", "baseline").unwrap();
    assert!(
        baseline.contains("/tmp/elsewhere-target/release/ladder run"),
        "{baseline}"
    );
}

/// Issue 34, part 5: the demo is short. Both runs are `--quiet` (no progress, no notes), the
/// slower rerun's own table is left out (its JSON verdict goes to a file) and its verdict is
/// printed by `ladder diff`, in the short form.
#[test]
fn make_demo_keeps_its_output_short() {
    let make = skip::on_path(&["make"]);
    if skip::require(
        make,
        "make_demo_keeps_its_output_short",
        "no `make` on PATH",
        "Debian: apt-get install make",
    )
    .is_none()
    {
        return;
    }
    let demo = make_dry_run("/tmp/elsewhere-target", "demo").expect("make runs");
    let runs: Vec<&str> = demo
        .lines()
        .filter(|l| l.contains("release/ladder run scenarios/demo.yaml"))
        .collect();
    assert_eq!(runs.len(), 2, "{demo}");
    for r in &runs {
        assert!(
            r.contains(" --quiet ") && r.contains("--against baselines/demo.csv"),
            "{r}"
        );
    }
    assert!(
        demo.contains("--sim-set tpot=19.5ms --format json > runs/demo-verdict.json"),
        "{demo}"
    );
    assert!(
        demo.contains("release/ladder diff --quiet --no-step-summary baselines/demo.csv"),
        "{demo}"
    );
    assert!(!demo.contains("--full"), "{demo}");
}

/// The whole demo, counted: at most 80 lines (it printed 253 before issue 34, part 5). Two real
/// ladders against the simulator take about two minutes, so it is not part of `make test`;
/// `make compat` (and so CI) runs it with the release build. By hand,
/// `cargo test --test e2e -- --ignored makefile` runs it with the debug build of ladder, or the
/// binary `LADDER_BIN` names (`make build` first: `LADDER_BIN=target/release/ladder`); the debug
/// build's busier client can add a note and, on a loaded machine, a noisy ITL check.
#[test]
#[ignore = "runs the whole demo (two ladders, about 2 minutes): cargo test --test e2e -- --ignored makefile"]
fn make_demo_prints_at_most_80_lines() {
    let Some(_) = skip::require(
        skip::on_path(&["make"]),
        "make_demo_prints_at_most_80_lines",
        "no `make` on PATH",
        "Debian: apt-get install make",
    ) else {
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out_dir = tempfile::tempdir().unwrap();
    let ladder = std::env::var_os("LADDER_BIN").map_or_else(
        || assert_cmd::cargo::cargo_bin("ladder"),
        std::path::PathBuf::from,
    );
    // `-o build`: the binary under test stands in for the release build.
    let out = Command::new("sh")
        .arg("-c")
        .arg("make -o build demo \"LADDER=$1\" \"DEMO_OUT=$2\" 2>&1")
        .arg("sh")
        .arg(&ladder)
        .arg(out_dir.path())
        .current_dir(root)
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_STEP_SUMMARY")
        .output()
        .expect("make runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    for shown in [
        "│ streams │",
        "TTFT knee in (10, 20] streams",
        "ladder diff: PASS",
        "ladder diff: REGRESSION",
        "│ TPOT P90 ",
        "run --against exited 3",
        "report.html",
    ] {
        assert!(text.contains(shown), "`{shown}` missing:\n{text}");
    }
    let lines = text.lines().count();
    assert!(lines <= 80, "{lines} lines:\n{text}");
}
