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
