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
