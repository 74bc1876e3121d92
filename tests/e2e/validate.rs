//! `ladder validate` and bad input: exit 2 and a message naming the file, line and field.

use crate::support::session::{snapshot_settings, Figures, Session};
use crate::support::Project;

const GOOD: &str = "name: ok\ntarget:\n  base_url: http://127.0.0.1:9/v1\n  models: [m]\nrequest:\n  prompt_file: prompts/p.txt\n  max_tokens: 16\nload:\n  ladder: [1, 2]\n  requests_per_step: 4\n";

#[test]
fn a_good_scenario_validates() {
    let s = Session::new();
    s.scenario("ok", GOOD);
    s.args(["validate", "scenarios/ok.yaml"]).stdout("ok").run();
}

/// `ladder validate` of `yaml` as `scenarios/bad.yaml`: exit 2, nothing on stdout, a message
/// naming the file and each of `must_contain`; the whole message is snapshot `name`.
fn assert_invalid(name: &str, yaml: &str, must_contain: &[&str]) {
    let s = Session::new();
    s.scenario("bad", yaml);
    let mut cmd = s
        .args(["validate", "scenarios/bad.yaml"])
        .env_remove("LADDER_TEST_UNSET")
        .code(2)
        .stdout_is_empty()
        .stderr("bad.yaml");
    for needle in must_contain {
        cmd = cmd.stderr(needle);
    }
    let stderr = cmd.run().stderr_filtered();
    snapshot_settings(Figures::Keep).bind(|| insta::assert_snapshot!(name, stderr));
}

#[test]
fn empty_ladder_is_rejected_with_line_and_field() {
    assert_invalid(
        "validate_empty_ladder",
        &GOOD.replace("[1, 2]", "[]"),
        &["bad.yaml:9", "ladder"],
    );
}

#[test]
fn zero_and_negative_concurrency_are_rejected() {
    assert_invalid(
        "validate_zero_streams",
        &GOOD.replace("[1, 2]", "[0, 2]"),
        &["ladder"],
    );
    assert_invalid(
        "validate_negative_streams",
        &GOOD.replace("[1, 2]", "[-5, 2]"),
        &["ladder"],
    );
}

#[test]
fn unknown_field_gets_a_did_you_mean() {
    assert_invalid(
        "validate_unknown_field",
        &GOOD.replace("requests_per_step", "requests_per_stp"),
        &["bad.yaml:10", "requests_per_step"],
    );
}

#[test]
fn unset_variable_is_named() {
    assert_invalid(
        "validate_unset_variable",
        &GOOD.replace("http://127.0.0.1:9/v1", "${LADDER_TEST_UNSET}"),
        &["LADDER_TEST_UNSET", "bad.yaml:3"],
    );
}

#[test]
fn malformed_yaml_names_the_line() {
    assert_invalid(
        "validate_malformed_yaml",
        &GOOD.replace("  models: [m]", "  models: [m"),
        &["bad.yaml"],
    );
}

#[test]
fn invalid_url_is_rejected() {
    assert_invalid(
        "validate_bad_url",
        &GOOD.replace("http://127.0.0.1:9/v1", "not a url"),
        &["base_url"],
    );
}

#[test]
fn missing_prompt_file_names_the_path() {
    assert_invalid(
        "validate_missing_prompt_file",
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
    assert_invalid(
        "validate_sim_out_of_range",
        yaml,
        &["bad.yaml:3", "target.sim", "tpot_jitter"],
    );
}

#[test]
fn validate_needs_no_secrets_but_notes_them() {
    let s = Session::new();
    s.scenario(
        "keyed",
        &GOOD.replace(
            "  models: [m]",
            "  api_key: ${LADDER_TEST_SECRET_KEY}\n  models: [m]",
        ),
    );
    s.args(["validate", "scenarios/keyed.yaml"])
        .env_remove("LADDER_TEST_SECRET_KEY")
        .stderr("LADDER_TEST_SECRET_KEY is not set")
        .run();
    // `run` still needs it.
    s.args(["run", "scenarios/keyed.yaml"])
        .env_remove("LADDER_TEST_SECRET_KEY")
        .code(2)
        .run();
}

#[test]
fn a_variable_with_a_default_needs_no_note() {
    let s = Session::new();
    s.scenario(
        "defaulted",
        &GOOD.replace(
            "  models: [m]",
            "  api_key: ${LADDER_TEST_SECRET_KEY:-}\n  models: [m]",
        ),
    );
    s.args(["validate", "scenarios/defaulted.yaml"])
        .env_remove("LADDER_TEST_SECRET_KEY")
        .stderr_lacks("is not set")
        .run();
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
    let s = Session::new();
    s.scenario("two", &format!("{GOOD}baselines:\n  keep: 2\n"));
    s.args(["validate", "scenarios/two.yaml"])
        .stderr("baselines.keep is 2")
        .stderr("≥ 3 runs")
        .run();
    s.scenario("three", &format!("{GOOD}baselines:\n  keep: 3\n"));
    s.args(["validate", "scenarios/three.yaml"])
        .stderr_lacks("warning")
        .run();
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

/// Before any traffic, `validate` says for each gate the smallest change it can detect at the
/// scenario's requests per step, from the saved baseline's own spread; without a baseline it
/// says where one would come from.
#[test]
fn validate_says_what_each_gate_can_detect() {
    Session::in_repo()
        .args(["validate", "scenarios/demo.yaml"])
        .stderr("smallest change each gate can detect at 120 requests per step (from the spread of baselines/demo.csv):")
        .stderr("TPOT P90, ITL P90: the gate (+10%) at every step")
        .stderr("TPOT P99, ITL P99: skipped: needs 400 successful requests per step at every step")
        // Past the baseline's queueing knee (20 and 50 streams) TTFT and E2E are judged at P50
        // and the mean, held to P90's gate.
        .stderr("TTFT P90: +33% (the 50 ms floor) at 5 and 10 streams\n")
        .stderr("TTFT P50: +32% (the 50 ms floor) at 20 streams; +")
        .stderr("TTFT and E2E are judged at P50 and the mean")
        .stderr("the mean counts when its CI decides")
        .run();
    let s = Session::new();
    s.scenario("ok", GOOD);
    s.args(["validate", "scenarios/ok.yaml"])
        .stderr("no baseline at ")
        .stderr("save one with `ladder run scenarios/ok.yaml --save-baseline`")
        .run();
}
