//! `ladder validate` and bad input: exit 2 and a message naming the file, line and field.

use crate::support::Project;
use predicates::prelude::*;

const GOOD: &str = "name: ok\ntarget:\n  base_url: http://127.0.0.1:9/v1\n  models: [m]\nrequest:\n  prompt_file: prompts/p.txt\n  max_tokens: 16\nload:\n  ladder: [1, 2]\n  requests_per_step: 4\n";

#[test]
fn a_good_scenario_validates() {
    let p = Project::new();
    let f = p.scenario("ok", GOOD);
    p.ladder()
        .arg("validate")
        .arg(&f)
        .assert()
        .success()
        .stdout(predicate::str::contains("ok"));
}

fn assert_invalid(yaml: &str, must_contain: &[&str]) {
    let p = Project::new();
    let f = p.scenario("bad", yaml);
    let assert = p
        .ladder()
        .env_remove("LADDER_TEST_UNSET")
        .arg("validate")
        .arg(&f)
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).to_string();
    assert!(stderr.contains("bad.yaml"), "no file name in: {stderr}");
    for needle in must_contain {
        assert!(stderr.contains(needle), "`{needle}` missing in: {stderr}");
    }
}

#[test]
fn empty_ladder_is_rejected_with_line_and_field() {
    assert_invalid(&GOOD.replace("[1, 2]", "[]"), &["bad.yaml:9", "ladder"]);
}

#[test]
fn zero_and_negative_concurrency_are_rejected() {
    assert_invalid(&GOOD.replace("[1, 2]", "[0, 2]"), &["ladder"]);
    assert_invalid(&GOOD.replace("[1, 2]", "[-5, 2]"), &["ladder"]);
}

#[test]
fn unknown_field_gets_a_did_you_mean() {
    assert_invalid(
        &GOOD.replace("requests_per_step", "requests_per_stp"),
        &["bad.yaml:10", "requests_per_step"],
    );
}

#[test]
fn unset_variable_is_named() {
    assert_invalid(
        &GOOD.replace("http://127.0.0.1:9/v1", "${LADDER_TEST_UNSET}"),
        &["LADDER_TEST_UNSET", "bad.yaml:3"],
    );
}

#[test]
fn malformed_yaml_names_the_line() {
    assert_invalid(
        &GOOD.replace("  models: [m]", "  models: [m"),
        &["bad.yaml"],
    );
}

#[test]
fn invalid_url_is_rejected() {
    assert_invalid(
        &GOOD.replace("http://127.0.0.1:9/v1", "not a url"),
        &["base_url"],
    );
}

#[test]
fn missing_prompt_file_names_the_path() {
    assert_invalid(
        &GOOD.replace("prompts/p.txt", "prompts/missing.txt"),
        &["missing.txt", "prompt_file"],
    );
}

#[test]
fn run_with_invalid_scenario_writes_nothing() {
    let p = Project::new();
    let f = p.scenario("bad", &GOOD.replace("[1, 2]", "[]"));
    p.ladder().arg("run").arg(&f).assert().code(2);
    assert!(
        !p.path().join("runs").exists(),
        "a run directory was created for invalid input"
    );
}

#[test]
fn committed_scenarios_validate() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    assert!(files.len() >= 3);
    let mut cmd = assert_cmd::Command::cargo_bin("ladder").unwrap();
    cmd.env("OPENAI_API_KEY", "sk-placeholder-for-validation")
        .env("ANTHROPIC_API_KEY", "sk-ant-placeholder")
        .arg("validate")
        .args(&files)
        .assert()
        .success();
}

#[test]
fn out_of_range_simulator_parameter_is_rejected_before_running() {
    let yaml = "name: bad\ntarget:\n  sim: {ttft: 5ms, tpot_jitter: 1.5}\n  models: [m]\nrequest:\n  prompt_file: prompts/p.txt\nload:\n  ladder: [1]\n  requests_per_step: 2\n";
    assert_invalid(yaml, &["bad.yaml:3", "target.sim", "tpot_jitter"]);
}

#[test]
fn validate_needs_no_secrets_but_notes_them() {
    let p = Project::new();
    let f = p.scenario(
        "keyed",
        &GOOD.replace(
            "  models: [m]",
            "  api_key: ${LADDER_TEST_SECRET_KEY}\n  models: [m]",
        ),
    );
    let out = p
        .ladder()
        .env_remove("LADDER_TEST_SECRET_KEY")
        .arg("validate")
        .arg(&f)
        .assert()
        .success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        stderr.contains("LADDER_TEST_SECRET_KEY is not set"),
        "{stderr}"
    );
    // `run` still needs it.
    p.ladder()
        .env_remove("LADDER_TEST_SECRET_KEY")
        .arg("run")
        .arg(&f)
        .assert()
        .code(2);
}

#[test]
fn a_variable_with_a_default_needs_no_note() {
    let p = Project::new();
    let f = p.scenario(
        "defaulted",
        &GOOD.replace(
            "  models: [m]",
            "  api_key: ${LADDER_TEST_SECRET_KEY:-}\n  models: [m]",
        ),
    );
    let out = p
        .ladder()
        .env_remove("LADDER_TEST_SECRET_KEY")
        .arg("validate")
        .arg(&f)
        .assert()
        .success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(!stderr.contains("is not set"), "{stderr}");
}

#[test]
fn validate_and_diff_format_have_help() {
    let p = Project::new();
    let out = p.ladder().args(["validate", "--help"]).assert().success();
    let help = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(
        help.contains("Scenario files (YAML) to parse and check"),
        "{help}"
    );
    let out = p.ladder().args(["diff", "--help"]).assert().success();
    let help = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(help.contains("junit (CI test reports"), "{help}");
}

#[test]
fn unwritable_output_and_missing_baseline_fail_before_any_traffic() {
    let p = Project::new();
    let f = p.scenario("ok", GOOD);
    std::fs::write(p.path().join("afile"), "x").unwrap();
    // base_url points at a closed port: had traffic been sent, the run would take timeouts.
    let out = p
        .ladder()
        .args(["run", "--out", "afile"])
        .arg(&f)
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        stderr.contains("afile") && stderr.contains("not a directory"),
        "{stderr}"
    );
    let out = p
        .ladder()
        .args(["run", "--against", "baselines/nope.csv"])
        .arg(&f)
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(stderr.contains("nope.csv"), "{stderr}");
    assert!(!p.path().join("runs/ok").exists(), "traffic was sent");
    p.ladder()
        .args(["diff", "baselines/nope.csv", "runs/x"])
        .assert()
        .code(2);
}

#[test]
fn a_pool_of_two_runs_is_warned_about() {
    let p = Project::new();
    let f = p.scenario("two", &format!("{GOOD}baselines:\n  keep: 2\n"));
    let out = p.ladder().arg("validate").arg(&f).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("baselines.keep is 2") && stderr.contains("≥ 3 runs"),
        "{stderr}"
    );
    let f = p.scenario("three", &format!("{GOOD}baselines:\n  keep: 3\n"));
    let out = p.ladder().arg("validate").arg(&f).output().unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("warning"));
}

#[test]
fn an_unknown_chat_role_is_refused_with_the_allowed_list() {
    let p = Project::new();
    std::fs::write(
        p.path().join("scenarios/prompts/chat.jsonl"),
        "{\"messages\": [{\"role\": \"bot\", \"content\": \"hi\"}]}\n",
    )
    .unwrap();
    let yaml = GOOD.replace("prompt_file: prompts/p.txt", "prompts: prompts/chat.jsonl");
    let f = p.scenario("role", &yaml);
    let out = p.ladder().arg("validate").arg(&f).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("role `bot`")
            && stderr.contains("system, user, assistant, tool, developer"),
        "{stderr}"
    );
}
