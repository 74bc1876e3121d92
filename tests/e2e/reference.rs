//! Issue 34 part 6, reference gaps, through the real binary: `request.prompt: "text"` runs as
//! the `{text: …}` form and other shapes say the accepted forms; `ladder sim --list` names every
//! parameter with its unit, default and meaning; `ladder run` without a scenario shows the
//! flags-only form; an empty `${OPENAI_API_KEY}` is named as set but empty.

use crate::support::session::Session;
use crate::support::{col, read_csv, Project};

const PLAIN: &str = "name: plain\ntarget:\n  sim: {ttft: 1ms, tpot: 1ms, output_tokens: 2}\n  models: [sim-model]\nrequest:\n  prompt: \"Say hello to the load tester in a few words.\"\n  max_tokens: 2\nload:\n  ladder: [1]\n  requests_per_step: 3\n";

#[test]
fn a_plain_string_prompt_runs_as_the_text_form() {
    let p = Project::new();
    let plain = p.scenario("plain", PLAIN);
    let mapped = p.scenario(
        "mapped",
        &PLAIN.replace(
            "prompt: \"Say hello to the load tester in a few words.\"",
            "prompt: {text: \"Say hello to the load tester in a few words.\"}",
        ),
    );
    let fingerprint = |f: &std::path::Path| {
        let out = p.ladder().arg("validate").arg(f).assert().success();
        let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
        text.split("fingerprint ").nth(1).unwrap().to_string()
    };
    assert_eq!(fingerprint(&plain), fingerprint(&mapped));
    p.ladder().arg("run").arg(&plain).assert().success();
    let (h, rows) = read_csv(&p.run_dirs("plain")[0].join("requests.csv"));
    let (status, input) = (col(&h, "status"), col(&h, "input_tokens"));
    assert_eq!(rows.len(), 3);
    assert!(rows.iter().all(|r| r[status] == "ok"), "{rows:?}");
    // The text itself was sent (the simulator counts its prompt tokens), not a file named so.
    assert!(
        rows.iter().all(|r| r[input].parse::<u32>().unwrap() > 5),
        "{rows:?}"
    );
}

#[test]
fn a_prompt_of_another_shape_names_the_file_line_field_and_forms() {
    let s = Session::new();
    s.scenario(
        "bad",
        &PLAIN.replace("\"Say hello to the load tester in a few words.\"", "2000"),
    );
    s.args(["validate", "scenarios/bad.yaml"])
        .code(2)
        .stdout_is_empty()
        .stderr("bad.yaml:6: request.prompt: a number is not a prompt")
        .stderr("prompt: {synthetic_tokens: 2000}")
        .stderr("prompt: \"Hello\" (the text itself), prompt: {text: \"Hello\"}")
        .run();
}

#[test]
fn sim_list_names_every_parameter_with_unit_default_and_meaning() {
    let out = Project::new()
        .ladder()
        .args(["sim", "--list"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("KEY") && lines[0].contains("DEFAULT"),
        "{text}"
    );
    let row = |key: &str| {
        lines
            .iter()
            .find(|l| l.split_whitespace().next() == Some(key))
            .unwrap_or_else(|| panic!("no row for {key} in\n{text}"))
            .to_string()
    };
    let cache = row("prefix_cache");
    assert!(
        cache.contains("true or false") && cache.contains("false"),
        "{cache}"
    );
    assert!(cache.contains("16-token blocks"), "{cache}");
    let tpot = row("tpot");
    assert!(tpot.contains("duration") && tpot.contains("20ms"), "{tpot}");
    for key in [
        "stream_reasoning",
        "faults.stall_for",
        "models.<name>.output_tokens",
        "rpm",
    ] {
        row(key);
    }
    // A listed key is one `--sim-set` takes: the same long prompt twice hits the prefix cache.
    let p = Project::new();
    let long = "word ".repeat(200);
    let f = p.scenario(
        "cached",
        &PLAIN
            .replace("name: plain", "name: cached")
            .replace("Say hello to the load tester in a few words.", &long)
            .replace("requests_per_step: 3", "requests_per_step: 2"),
    );
    p.ladder()
        .args(["run", "--sim-set", "prefix_cache=true"])
        .arg(&f)
        .assert()
        .success();
    let (h, rows) = read_csv(&p.run_dirs("cached")[0].join("requests.csv"));
    let cached = col(&h, "cached_tokens");
    assert!(
        rows.iter()
            .any(|r| r[cached].parse::<u32>().unwrap_or(0) > 100),
        "no cached prompt tokens with prefix_cache=true: {rows:?}"
    );
}

#[test]
fn run_without_a_scenario_shows_the_flags_only_form_ready_to_paste() {
    let s = Session::new();
    let out = s
        .args(["run"])
        .code(2)
        .stdout_is_empty()
        .stderr("no scenario file")
        .stderr("ladder run scenarios/demo.yaml")
        .stderr("  ladder run --base-url http://localhost:8000/v1 --model my-model\n")
        .run();
    // The simulator line works as written: start it, then run its second half.
    let line = out
        .stderr_filtered()
        .lines()
        .find(|l| l.contains("ladder sim --port"))
        .expect("a simulator example")
        .to_string();
    assert!(line.contains("--model sim-model"), "{line}");
    let sim = crate::support::start_sim(&["ttft=1ms", "tpot=1ms", "output_tokens=2"]);
    let run = line.split("; ").nth(1).unwrap().trim();
    let run = run.replace("http://127.0.0.1:8080/v1", &sim.base_url);
    let args: Vec<&str> = run.split_whitespace().skip(1).collect();
    s.args(args)
        .args(["--ladder", "1", "--requests-per-step", "2"])
        .run();
    // Half the flags: the missing one, with the given ones in a pasteable line.
    s.args(["run", "--model", "m"])
        .code(2)
        .stderr("ladder run --base-url http://localhost:8000/v1 --model m")
        .run();
    s.args(["run", "--base-url", "http://127.0.0.1:9/v1"])
        .code(2)
        .stderr("needs --model")
        .run();
    // --help shows both forms.
    s.args(["run", "--help"])
        .stdout("ladder run [OPTIONS] --base-url <URL> --model <MODEL>")
        .run();
}

#[test]
fn an_empty_key_variable_is_named_not_reported_as_a_missing_key() {
    let s = Session::new();
    let keyed = PLAIN.replace(
        "  models: [sim-model]\n",
        "  api_key: ${OPENAI_API_KEY}\n  models: [sim-model]\n",
    );
    s.scenario("keyed", &keyed);
    let says = "scenarios/keyed.yaml:4: target.api_key: OPENAI_API_KEY is set but empty";
    for cmd in [
        vec!["run", "scenarios/keyed.yaml"],
        vec!["check", "scenarios/keyed.yaml"],
    ] {
        s.args(cmd)
            .env("OPENAI_API_KEY", "")
            .code(2)
            .stderr(says)
            .stderr("${OPENAI_API_KEY:-}")
            .stderr_lacks("not set")
            .run();
    }
    assert!(s.project().run_dirs("keyed").is_empty(), "nothing ran");
    // validate needs no secrets, and says what run will refuse.
    s.args(["validate", "scenarios/keyed.yaml"])
        .env("OPENAI_API_KEY", "")
        .stderr("OPENAI_API_KEY is set but empty; `ladder run` will need it")
        .run();
    s.args(["validate", "scenarios/keyed.yaml"])
        .env_remove("OPENAI_API_KEY")
        .stderr("OPENAI_API_KEY is not set; `ladder run` will need it")
        .run();
}
