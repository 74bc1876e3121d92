//! The composite GitHub Action (`action.yml`, issue 22 §2) run on this machine: its `run:`
//! steps, in order, under `bash -e` as GitHub runs `shell: bash`, with the `${{ }}` expressions
//! of their `env:` evaluated the way GitHub would (inputs with their defaults, `runner.*`,
//! `github.action_*`), `$GITHUB_PATH` and `$GITHUB_OUTPUT` honoured between steps, and the
//! download pointed at a local release folder (`download-url: file://…`) that holds this
//! build's binary packed the way `.github/workflows/release.yml` packs it, with its SHA256SUMS.
//!
//! What cannot run here: GitHub's own runner (the YAML's `uses:`/`if:` machinery) and the real
//! download from github.com. `make compat` lints the file with actionlint.

use crate::support::{read_csv, sim_scenario, Project};
use serde_yaml::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn action() -> Value {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("action.yml"))
        .expect("action.yml at the repository root");
    serde_yaml::from_str(&text).expect("action.yml is YAML")
}

/// The release target this machine's runner would report, as the action maps it.
fn runner() -> (&'static str, &'static str, &'static str) {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => ("Linux", "X64", "x86_64-unknown-linux-musl"),
        ("linux", "aarch64") => ("Linux", "ARM64", "aarch64-unknown-linux-musl"),
        ("macos", "x86_64") => ("macOS", "X64", "x86_64-apple-darwin"),
        ("macos", "aarch64") => ("macOS", "ARM64", "aarch64-apple-darwin"),
        other => panic!("no release target for {other:?}"),
    }
}

/// A release folder like GitHub's: `download/<tag>/` and `latest/download/` with the archive
/// (`ladder` at its root, as release.yml packs it) and SHA256SUMS. The archive is packed once
/// per build of the binary and linked into each test's folder (packing the debug binary is
/// seconds of gzip; three tests packing it twice each was the slowest part of the suite).
fn release(dir: &Path, tag: &str, target: &str) {
    let (archive, sum) = packed();
    let file = format!("ladder-{target}.tar.gz");
    for sub in [format!("download/{tag}"), "latest/download".to_string()] {
        let d = dir.join(sub);
        std::fs::create_dir_all(&d).unwrap();
        if std::fs::hard_link(archive, d.join(&file)).is_err() {
            std::fs::copy(archive, d.join(&file)).unwrap();
        }
        std::fs::write(d.join("SHA256SUMS"), format!("{sum}  {file}\n")).unwrap();
    }
}

/// This build's binary packed as release.yml packs it, and its SHA-256 in hex: kept in cargo's
/// scratch directory for integration tests, named by the binary's size and time, so that a
/// rebuilt binary is packed again (older packs are removed then).
fn packed() -> &'static (PathBuf, String) {
    static PACKED: std::sync::OnceLock<(PathBuf, String)> = std::sync::OnceLock::new();
    PACKED.get_or_init(|| {
        use sha2::Digest;
        let bin = Path::new(env!("CARGO_BIN_EXE_ladder"));
        let meta = std::fs::metadata(bin).unwrap();
        let stamp = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("action-release");
        let archive = dir.join(format!("ladder-{}-{stamp}.tar.gz", meta.len()));
        if !archive.is_file() {
            for old in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                if old.file_name().to_string_lossy().starts_with("ladder-") {
                    let _ = std::fs::remove_file(old.path());
                }
            }
            let stage = dir.join(format!("stage-{}", std::process::id()));
            std::fs::create_dir_all(&stage).unwrap();
            std::fs::copy(bin, stage.join("ladder")).unwrap();
            let partial = stage.join("ladder.tar.gz");
            let ok = Command::new("tar")
                .arg("-czf")
                .arg(&partial)
                .arg("-C")
                .arg(&stage)
                .arg("ladder")
                .status()
                .unwrap();
            assert!(ok.success());
            std::fs::rename(&partial, &archive).unwrap();
            let _ = std::fs::remove_dir_all(&stage);
        }
        let bytes = std::fs::read(&archive).unwrap();
        let sum: String = sha2::Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        (archive, sum)
    })
}

/// Evaluates the expressions the action's `env:` values use.
fn evaluate(value: &str, ctx: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    let mut rest = value;
    while let Some(open) = rest.find("${{") {
        out.push_str(&rest[..open]);
        let close = rest[open..].find("}}").expect("closed ${{") + open;
        let expr = rest[open + 3..close].trim();
        let v = ctx
            .get(expr)
            .unwrap_or_else(|| panic!("the test does not know `{expr}`: add it to the context"));
        out.push_str(v);
        rest = &rest[close + 2..];
    }
    out.push_str(rest);
    out
}

struct Outcome {
    codes: Vec<Option<i32>>,
    outputs: BTreeMap<String, String>,
    path_added: Vec<String>,
    log: String,
}

/// Runs the action's steps like a runner: stops at the first failing step.
fn run_action(p: &Project, with: &[(&str, String)], tag_ref: &str) -> Outcome {
    let action = action();
    let (os, arch, _) = runner();
    let temp = p.path().join("runner-temp");
    std::fs::create_dir_all(&temp).unwrap();
    let github_path = temp.join("github_path");
    let mut ctx: BTreeMap<String, String> = BTreeMap::new();
    for (name, spec) in action["inputs"].as_mapping().unwrap() {
        let name = name.as_str().unwrap();
        let default = spec["default"].as_str().unwrap_or_default().to_string();
        let given = with
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.clone());
        if spec["required"].as_bool() == Some(true) {
            assert!(
                given.is_some() || !default.is_empty(),
                "input {name} is required"
            );
        }
        ctx.insert(format!("inputs.{name}"), given.unwrap_or(default));
    }
    for (k, v) in [
        ("runner.os", os.to_string()),
        ("runner.arch", arch.to_string()),
        ("runner.temp", temp.display().to_string()),
        ("github.action_ref", tag_ref.to_string()),
        ("github.action_repository", "ladder-llm/ladder".to_string()),
    ] {
        ctx.insert(k.to_string(), v);
    }
    // A PATH without this build's target directory: the step must find the installed binary.
    let base_path = std::env::var("PATH")
        .unwrap_or_default()
        .split(':')
        .filter(|d| !d.contains("target/"))
        .collect::<Vec<_>>()
        .join(":");
    let mut outcome = Outcome {
        codes: Vec::new(),
        outputs: BTreeMap::new(),
        path_added: Vec::new(),
        log: String::new(),
    };
    for (i, step) in action["runs"]["steps"]
        .as_sequence()
        .unwrap()
        .iter()
        .enumerate()
    {
        let script = step["run"].as_str().expect("every step is a run: step");
        assert_eq!(
            step["shell"].as_str(),
            Some("bash"),
            "step {i}: shell: bash"
        );
        assert!(
            !script.contains("${{"),
            "step {i}: expressions go through env:, never into the script"
        );
        let file = temp.join(format!("step-{i}.sh"));
        std::fs::write(&file, script).unwrap();
        let github_output = temp.join(format!("github_output-{i}"));
        std::fs::write(&github_output, "").unwrap();
        let added: Vec<String> = std::fs::read_to_string(&github_path)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect();
        let mut path = added.clone();
        path.reverse();
        path.push(base_path.clone());
        let mut cmd = Command::new("bash");
        // What GitHub runs for `shell: bash`.
        cmd.args(["--noprofile", "--norc", "-eo", "pipefail"])
            .arg(&file)
            .current_dir(p.path())
            .env_clear()
            .env("PATH", path.join(":"))
            .env("HOME", p.path())
            .env("GITHUB_PATH", &github_path)
            .env("GITHUB_OUTPUT", &github_output)
            .env("GITHUB_STEP_SUMMARY", temp.join("step_summary.md"))
            .env("GITHUB_ACTIONS", "true");
        for (k, v) in step["env"].as_mapping().into_iter().flatten() {
            cmd.env(k.as_str().unwrap(), evaluate(v.as_str().unwrap(), &ctx));
        }
        let out = cmd.output().unwrap();
        outcome.log.push_str(&String::from_utf8_lossy(&out.stdout));
        outcome.log.push_str(&String::from_utf8_lossy(&out.stderr));
        outcome.codes.push(out.status.code());
        let id = step["id"].as_str().unwrap_or_default();
        for line in std::fs::read_to_string(&github_output).unwrap().lines() {
            let (k, v) = line.split_once('=').expect("name=value in $GITHUB_OUTPUT");
            ctx.insert(format!("steps.{id}.outputs.{k}"), v.to_string());
            outcome.outputs.insert(format!("{id}.{k}"), v.to_string());
        }
        if !out.status.success() {
            break;
        }
    }
    outcome.path_added = std::fs::read_to_string(&github_path)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect();
    // The action's outputs name step outputs that exist.
    for (name, spec) in action["outputs"].as_mapping().unwrap() {
        let v = spec["value"].as_str().unwrap();
        let expr = v.trim_start_matches("${{").trim_end_matches("}}").trim();
        let step = expr.split('.').nth(1).unwrap();
        assert!(
            action["runs"]["steps"]
                .as_sequence()
                .unwrap()
                .iter()
                .any(|s| s["id"].as_str() == Some(step)),
            "output {name:?} names step {step}, which is not there"
        );
    }
    outcome
}

/// Gates a loaded machine's timing cannot cross in an unchanged rerun (its event loop was seen
/// 25 ms late, which moved TTFT P90 of a 20 ms server past the default gate): TTFT, ITL, E2E
/// +200%, throughput −90%, TPOT +100% (floor 3 ms). The regression case makes decode 4x slower
/// (5 → 20 ms per token), far past the TPOT gate.
const GATES: &str = "gates:\n  ttft: {p90: 200%, p99: 200%, floor: 50ms}\n  tpot: {p90: 100%, p99: 100%, floor: 3ms}\n  \
     itl: {p90: 200%, p99: 200%, floor: 5ms}\n  e2e: {p90: 200%, p99: 200%, floor: 100ms}\n  throughput: 90%\n";

fn gate_project() -> (Project, PathBuf) {
    let p = Project::new();
    let f = p.scenario(
        "gate",
        &(sim_scenario(
            "gate",
            "    ttft: 20ms\n    tpot: 5ms\n    tpot_jitter: 0\n    output_tokens: 8\n    seed: 1",
            "  ladder: [1, 2]\n  requests_per_step: 40\n  warmup_requests: 1",
            8,
        ) + GATES),
    );
    let out = p
        .ladder()
        .args(["run", "--quiet", "--save-baseline"])
        .arg(&f)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    (p, f)
}

fn inputs(releases: &Path, version: &str) -> Vec<(&'static str, String)> {
    vec![
        ("scenario", "scenarios/gate.yaml".to_string()),
        ("against", "baselines/gate.csv".to_string()),
        ("download-url", format!("file://{}", releases.display())),
        ("version", version.to_string()),
    ]
}

#[test]
fn the_action_installs_the_release_binary_and_passes_an_unchanged_run() {
    let (p, _) = gate_project();
    let (_, _, target) = runner();
    let releases = p.path().join("releases");
    release(&releases, "v9.9.9", target);
    // No version input: the tag the action was used at.
    let o = run_action(&p, &inputs(&releases, ""), "v9.9.9");
    assert_eq!(o.codes, [Some(0), Some(0)], "{}", o.log);
    assert!(
        o.log.contains("releases/download/v9.9.9/ladder-"),
        "{}",
        o.log
    );
    assert!(
        o.log.contains(": OK"),
        "the checksum was checked: {}",
        o.log
    );
    assert_eq!(o.path_added.len(), 1);
    assert!(Path::new(&o.path_added[0]).join("ladder").is_file());
    assert_eq!(o.outputs["gate.exit-code"], "0");
    assert_eq!(o.outputs["gate.report"], "ladder-junit.xml");
    let junit = std::fs::read_to_string(p.path().join("ladder-junit.xml")).unwrap();
    let doc = roxmltree::Document::parse(&junit).expect("the report is XML");
    assert!(doc.descendants().any(|n| n.has_tag_name("testcase")));
    let run_dir = p.path().join(&o.outputs["gate.run-dir"]);
    let (_, rows) = read_csv(&run_dir.join("summary.csv"));
    assert_eq!(rows.len(), 2, "run-dir names the run directory");
    // The table and findings went to the log, not into the document.
    assert!(o.log.contains("sim-model"), "{}", o.log);
}

#[test]
fn the_action_fails_the_step_on_a_regression_and_says_so_in_its_outputs() {
    let (p, f) = gate_project();
    // The server's decode gets slower; the workload (and so the fingerprint) stays the same.
    let yaml = std::fs::read_to_string(&f).unwrap();
    std::fs::write(&f, yaml.replace("tpot: 5ms", "tpot: 20ms")).unwrap();
    let (_, _, target) = runner();
    let releases = p.path().join("releases");
    release(&releases, "v9.9.9", target);
    let mut with = inputs(&releases, "latest");
    with.push(("format", "json".to_string()));
    let o = run_action(&p, &with, "main");
    assert!(
        o.log.contains("releases/latest/download/ladder-"),
        "{}",
        o.log
    );
    assert_eq!(o.codes, [Some(0), Some(3)], "{}", o.log);
    assert_eq!(o.outputs["gate.exit-code"], "3");
    let verdict: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(p.path().join("ladder-verdict.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(verdict["exit_code"], 3, "{verdict}");
}

#[test]
fn a_download_that_does_not_match_its_checksum_is_not_installed() {
    let (p, _) = gate_project();
    let (_, _, target) = runner();
    let releases = p.path().join("releases");
    release(&releases, "v9.9.9", target);
    let sums = releases.join("download/v9.9.9/SHA256SUMS");
    let text = std::fs::read_to_string(&sums).unwrap();
    let flipped = if text.starts_with('0') { "1" } else { "0" };
    std::fs::write(&sums, format!("{flipped}{}", &text[1..])).unwrap();
    let o = run_action(&p, &inputs(&releases, "v9.9.9"), "v9.9.9");
    assert_eq!(o.codes.len(), 1, "the gate does not run: {}", o.log);
    assert_ne!(o.codes[0], Some(0), "{}", o.log);
    assert!(o.path_added.is_empty(), "nothing added to PATH");
}
