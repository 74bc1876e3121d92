//! Editor and shell support: `ladder schema` prints the committed JSON Schema, every committed
//! scenario validates against it, the schema and the loader agree on a table of good and bad
//! scenarios, and `ladder completions` prints usable scripts.

mod validator;

use crate::support::Project;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn schema() -> Value {
    let text = std::fs::read_to_string(root().join("scenarios/scenario.schema.json")).unwrap();
    serde_json::from_str(&text).expect("scenario.schema.json is valid JSON")
}

/// The raw YAML (before interpolation, as an editor sees it) as JSON.
fn yaml_to_json(text: &str) -> Value {
    serde_yaml::from_str(text).expect("valid YAML")
}

#[test]
fn ladder_schema_prints_the_committed_schema() {
    let out = Project::new().ladder().arg("schema").assert().success();
    let printed: Value =
        serde_json::from_slice(&out.get_output().stdout).expect("`ladder schema` prints JSON");
    assert_eq!(printed, schema());
    assert_eq!(
        printed["$schema"], "http://json-schema.org/draft-07/schema#",
        "editors need the draft named"
    );
}

#[test]
fn every_committed_scenario_validates_against_the_schema() {
    let schema = schema();
    let mut checked = 0;
    for entry in std::fs::read_dir(root().join("scenarios")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "yaml") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let errors = validator::validate(&schema, &yaml_to_json(&text));
        assert!(errors.is_empty(), "{}: {errors:#?}", path.display());
        checked += 1;
    }
    assert!(checked >= 8, "only {checked} scenarios found");
}

const BASE: &str = "name: t
target:
  sim: {}
  models: [m]
request:
  prompt_file: prompts/p.txt
load:
  ladder: [1, 2]
";

/// Every field set (each value in a form the loader reads); keep in step with the schema.
const MAXIMAL: &str = "name: all-fields-1
description: every field once
target:
  api: anthropic-messages
  sim:
    ttft: 100ms
    prefill_per_token: 50us
    tpot: 10ms
    tpot_jitter: 0.1
    output_tokens: 32
    concurrency_cap: 8
    saturation: 0.01
    saturation_from: 4
    rpm: 600
    tpm: 100000
    seed: 7
    models:
      fast: {ttft: 50ms, tpot: 2ms, output_tokens: 16}
      slow: {tpot: ~}
    faults: {http_500: 0.01, http_502: 0, http_503: 0, overloaded_529: 0.01, disconnect: 0,
             stall: 0, malformed: 0, inband_error: 0, no_done: 0, json_body: 0, stall_for: 1s}
    require_api_key: ${SIM_KEY:-sk-sim}
    known_models_only: false
  api_key: ${SIM_KEY:-sk-sim}
  models: [fast, slow]
  headers: {X-Team: perf}
  timeouts: {connect: 1s, first_token: 1m, idle: 1m30s, total: 5m}
request:
  prompt_file: prompts/p.txt
  system_file: prompts/p.txt
  max_tokens: ${MAX_TOKENS:-64}
  temperature: 0.7
  extra_body: {seed: 1, metadata: {user: x}}
load:
  ladder: [1, 2, 4]
  duration: 2s
  warmup_requests: 1
  ramp_up: 0
  pause_between_steps: 500ms
retry:
  max_attempts: 3
  initial_backoff: 100ms
  max_backoff: 2s
  max_retry_after: 10s
  retry_on: [http_429, http_5xx, disconnect]
gates:
  ttft: {p90: 10%, p99: 0.2, floor: 50ms}
  tpot: {p90: 5%}
  itl: {p99: 30%}
  e2e: {floor: 0}
  error_rate: 1pp
  throughput: 10%
slo: {ttft: 1s, tpot: 50ms, e2e: 30s}
limits: {concurrency: 50, rpm: 500, tpm: 2000000}
extra: {owner: perf-team}
";

/// `(what, scenario text, valid?)`: the schema and the loader must give the same verdict.
fn cases() -> Vec<(&'static str, String, bool)> {
    let b = |from: &str, to: &str| BASE.replace(from, to);
    let add = |tail: &str| format!("{BASE}{tail}");
    let prompt = "  prompt_file: prompts/p.txt\n";
    let req = |line: &str| BASE.replace(prompt, &format!("{prompt}  {line}\n"));
    vec![
        ("minimal", BASE.to_string(), true),
        ("every field", MAXIMAL.to_string(), true),
        ("bare sim:", b("sim: {}", "sim:"), true),
        ("model shorthand", b("models: [m]", "model: m"), true),
        ("url", b("sim: {}", "base_url: http://127.0.0.1:9/v1"), true),
        ("var url", b("sim: {}", "base_url: ${U:-http://h/v1}"), true),
        (
            "var api",
            b("  sim:", "  api: ${API:-openai-chat}\n  sim:"),
            true,
        ),
        (
            "completions",
            b("  sim:", "  api: openai-completions\n  sim:"),
            true,
        ),
        (
            "durations",
            add("slo: {ttft: 1m30s, tpot: 1.5ms, e2e: 0}\n"),
            true,
        ),
        (
            "fractions",
            add("gates: {error_rate: 0, throughput: 0.5}\n"),
            true,
        ),
        (
            "null cap",
            b("sim: {}", "sim: {concurrency_cap: null}"),
            true,
        ),
        ("unknown top field", add("concurency: 5\n"), false),
        (
            "unknown sim field",
            b("sim: {}", "sim: {tpot_jiter: 0}"),
            false,
        ),
        (
            "unknown fault",
            b("sim: {}", "sim: {faults: {http_504: 0}}"),
            false,
        ),
        (
            "unknown gate field",
            add("gates: {ttft: {p95: 10%}}\n"),
            false,
        ),
        ("bad api", b("  sim:", "  api: openai-chats\n  sim:"), false),
        ("duration without unit", add("slo: {ttft: 5}\n"), false),
        (
            "duration word",
            b("ladder: [1, 2]", "ladder: [1, 2]\n  duration: fast"),
            false,
        ),
        ("sim duration", b("sim: {}", "sim: {tpot: 20}"), false),
        (
            "both endpoints",
            b("sim: {}", "sim: {}\n  base_url: http://h/v1"),
            false,
        ),
        ("no endpoint", b("  sim: {}\n", ""), false),
        (
            "model and models",
            b("models: [m]", "models: [m]\n  model: m"),
            false,
        ),
        ("no models", b("  models: [m]\n", ""), false),
        ("empty models", b("models: [m]", "models: []"), false),
        ("repeated model", b("models: [m]", "models: [m, m]"), false),
        ("bad name", b("name: t", "name: Support Chat"), false),
        ("no name", b("name: t\n", ""), false),
        (
            "two budgets",
            add("  requests_per_step: 4\n  duration: 1s\n"),
            false,
        ),
        ("zero max_tokens", req("max_tokens: 0"), false),
        ("zero step", b("[1, 2]", "[0, 2]"), false),
        ("empty ladder", b("[1, 2]", "[]"), false),
        (
            "ambiguous percent",
            add("gates: {ttft: {p90: 150}}\n"),
            false,
        ),
        ("negative percent", add("gates: {error_rate: -1%}\n"), false),
        (
            "bad retry class",
            add("retry: {retry_on: [http_999]}\n"),
            false,
        ),
        ("extra_body list", req("extra_body: [1]"), false),
        ("negative temperature", req("temperature: -1"), false),
        (
            "no prompt",
            b(prompt, "  system_file: prompts/p.txt\n"),
            false,
        ),
        ("no load", b("load:\n  ladder: [1, 2]\n", ""), false),
        (
            "rate mode (issue 12)",
            b(
                "ladder: [1, 2]",
                "mode: rate\n  ladder: [1, 2]\n  arrivals: {gamma: {burstiness: 0.5}}\n  max_concurrency: 8",
            ),
            true,
        ),
        (
            "prompt-size ladder",
            b(
                prompt,
                "  max_tokens: 8\nload:\n  ladder_over: prompt_tokens\n  concurrency: 2\n",
            )
            .replace("load:\n  ladder: [1, 2]", "  ladder: [1, 2]"),
            true,
        ),
        ("synthetic prompt", b(prompt, "  prompt: {synthetic_tokens: 50}\n"), true),
        ("text prompt", b(prompt, "  prompt: {text: Hello}\n"), true),
        ("plain text prompt", b(prompt, "  prompt: \"Hello there\"\n"), true),
        ("number prompt", b(prompt, "  prompt: 2000\n"), false),
        ("list prompt", b(prompt, "  prompt: [Hello]\n"), false),
        ("unknown mode", b("ladder: [1, 2]", "mode: open\n  ladder: [1, 2]"), false),
        (
            "unknown arrivals",
            b("ladder: [1, 2]", "mode: rate\n  ladder: [1, 2]\n  arrivals: uniform"),
            false,
        ),
        ("zero limit", add("limits: {tpm: 0}\n"), false),
        ("bad url", b("sim: {}", "base_url: ftp://h/v1"), false),
    ]
}

#[test]
fn schema_and_loader_agree_on_good_and_bad_scenarios() {
    let schema = schema();
    let p = Project::new();
    let path = p.path().join("scenarios/case.yaml");
    let no_env = |_: &str| None;
    let mut disagreements = Vec::new();
    for (what, text, valid) in cases() {
        let errors = validator::validate(&schema, &yaml_to_json(&text));
        let loaded = ladder::scenario::load_str(&text, &path, &no_env);
        if errors.is_empty() != valid {
            disagreements.push(format!(
                "schema on `{what}` (want valid={valid}): {errors:?}"
            ));
        }
        if loaded.is_ok() != valid {
            let why = loaded.err().map(|e| e.to_string()).unwrap_or_default();
            disagreements.push(format!("loader on `{what}` (want valid={valid}) {why}"));
        }
    }
    assert!(disagreements.is_empty(), "{disagreements:#?}");
}

#[test]
fn schema_errors_name_the_field() {
    let schema = schema();
    let unknown = format!("{BASE}concurency: 5\n");
    let errors = validator::validate(&schema, &yaml_to_json(&unknown)).join("\n");
    assert!(errors.contains("unknown field `concurency`"), "{errors}");
    let nested = BASE.replace("sim: {}", "sim: {tpot_jiter: 0}");
    let errors = validator::validate(&schema, &yaml_to_json(&nested)).join("\n");
    assert!(errors.contains("$.target.sim"), "{errors}");
    assert!(errors.contains("`tpot_jiter`"), "{errors}");
    let api = BASE.replace("  sim:", "  api: openai-chats\n  sim:");
    let errors = validator::validate(&schema, &yaml_to_json(&api)).join("\n");
    assert!(errors.contains("$.target.api"), "{errors}");
    assert!(errors.contains("anthropic-messages"), "{errors}");
}

#[test]
fn completions_bash_mentions_ladder_and_its_subcommands() {
    let out = Project::new()
        .ladder()
        .args(["completions", "bash"])
        .assert()
        .success();
    let script = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(script.contains("complete"), "not a bash completion script");
    assert!(script.contains("ladder"), "{script}");
    for sub in [
        "run",
        "diff",
        "validate",
        "check",
        "sim",
        "schema",
        "completions",
    ] {
        assert!(script.contains(sub), "subcommand `{sub}` missing");
    }
    for shell in ["zsh", "fish"] {
        let out = Project::new()
            .ladder()
            .args(["completions", shell])
            .assert()
            .success();
        let script = String::from_utf8_lossy(&out.get_output().stdout).to_string();
        assert!(
            script.contains("ladder") && script.contains("validate"),
            "{shell}"
        );
    }
}
