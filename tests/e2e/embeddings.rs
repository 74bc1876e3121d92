//! `api: openai-embeddings` end to end (issue 36, part 3): `ladder run` against the simulator's
//! `/v1/embeddings` records E2E and input tokens per request (no first token, no output), the
//! table shows E2E P50/P90/P99 and input tokens per minute and per second, the knee goes by E2E at
//! a simulated cap, `diff` judges E2E and says the output rates do not apply; an answer without
//! one vector per input is a protocol error that says so; `ladder check` passes against the
//! simulator and names a model that does not embed; `validate` refuses what embeddings cannot
//! measure.

use crate::check::{check, says, Answer, Fake};
use crate::support::{col, num, read_csv, Project};
use std::path::PathBuf;

fn scenario(name: &str, sim: &str, request: &str, load: &str) -> String {
    format!(
        "name: {name}\ntarget:\n  api: openai-embeddings\n  sim: {{{sim}}}\n  models: [sim-model]\n\
         request:\n  prompt_file: prompts/p.txt\n{request}load:\n{load}\n"
    )
}

fn run(p: &Project, name: &str, yaml: &str, args: &[&str]) -> (PathBuf, String) {
    let f = p.scenario(name, yaml);
    let out = p
        .ladder()
        .args(["run", "--no-color"])
        .args(args)
        .arg(&f)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let dirs = p.run_dirs(name);
    (dirs.last().expect("a run directory").clone(), stdout)
}

#[test]
fn a_ladder_measures_e2e_and_input_tokens_finds_the_knee_on_e2e_and_diffs() {
    let p = Project::new();
    // Two slots; each answer takes 120 ms + 4 texts' tokens at 10 us: at 4 streams half wait.
    let yaml = scenario(
        "emb",
        "embed_time: 120ms, embed_per_token: 10us, concurrency_cap: 2",
        "  batch: 4\n  extra_body: {dimensions: 64, encoding_format: base64}\n",
        "  ladder: [2, 4]\n  requests_per_step: 40",
    );
    let (dir, stdout) = run(&p, "emb", &yaml, &[]);
    let stats: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("sim_stats.json")).unwrap())
            .unwrap();
    assert_eq!(stats["requests"]["/v1/embeddings"], 80, "{stats}");
    assert_eq!(stats["rejected"]["400"], 0, "every body accepted: {stats}");
    let prompt = std::fs::read_to_string(p.path().join("scenarios/prompts/p.txt")).unwrap();
    // The simulator counts a request's characters / 4, every text together.
    let tokens = (4 * prompt.chars().count()).div_ceil(4) as f64;
    let (h, rows) = read_csv(&dir.join("requests.csv"));
    assert_eq!(rows.len(), 80);
    for r in &rows {
        assert_eq!(r[col(&h, "status")], "ok", "{r:?}");
        assert_eq!(r[col(&h, "tokens_source")], "usage", "{r:?}");
        assert_eq!(num(r, &h, "input_tokens"), tokens, "{r:?}");
        assert_eq!(num(r, &h, "output_tokens"), 0.0, "{r:?}");
        for empty in ["ttft_ms", "ttfc_ms", "tpot_ms", "itl_hist", "max_tokens"] {
            assert_eq!(r[col(&h, empty)], "", "{empty} {r:?}");
        }
        assert!(num(r, &h, "e2e_ms") >= 120.0, "{r:?}");
        // The simulator's time is a prefill, and says so.
        assert!(num(r, &h, "server_prefill_ms") >= 120.0, "{r:?}");
    }
    for words in [
        "E2E P50/P90/P99",
        "input TPM",
        "input tok/s",
        "an embeddings answer is one body of vectors",
        "E2E knee in (2, 4] streams",
    ] {
        assert!(stdout.contains(words), "missing `{words}` in\n{stdout}");
    }
    assert!(!stdout.contains("short"), "{stdout}");
    // Input tokens per minute: 2 streams of 4 texts per answer of about 120 ms.
    let (sh, steps) = read_csv(&dir.join("summary.csv"));
    let first = &steps[0];
    let in_tpm = num(first, &sh, "total_tpm") - num(first, &sh, "output_tpm");
    let expected = 2.0 * tokens / 0.12 * 60.0;
    assert!(
        (0.7 * expected..1.05 * expected).contains(&in_tpm),
        "in TPM {in_tpm}, ~{expected}"
    );
    assert_eq!(num(first, &sh, "output_tpm"), 0.0);

    // The same ladder with every answer 80 ms slower: diff fails on E2E, and says TPM and the
    // decode rate do not apply.
    let (slow, _) = run(&p, "emb", &yaml, &["--sim-set", "embed_time=200ms"]);
    let out = p
        .ladder()
        .args(["diff", "--no-color", "--full"])
        .arg(&dir)
        .arg(&slow)
        .output()
        .unwrap();
    let diff = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{diff}");
    assert!(diff.contains("E2E P90"), "{diff}");
    assert!(
        diff.contains("TPM does not apply: no output token was generated (embeddings)")
            && diff.contains("decode rate does not apply"),
        "{diff}"
    );
    // plan sizes by the input tokens.
    let out = p
        .ladder()
        .args(["plan", "--rps", "20"])
        .arg(&dir)
        .output()
        .unwrap();
    let plan = String::from_utf8_lossy(&out.stdout);
    assert!(plan.contains(" in + 0 out"), "{plan}");
    // The report's table and chart show the input tokens per minute, not an output TPM of 0.
    let html = p.path().join("report.html");
    let out = p
        .ladder()
        .arg("report")
        .arg(&dir)
        .arg("-o")
        .arg(&html)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = std::fs::read_to_string(&html).unwrap();
    for words in [
        "<th>input TPM</th>",
        &format!("<td>{in_tpm:.0}</td>"),
        "sim-model · input tokens per minute",
        "input TPM (tokens/min)",
    ] {
        assert!(page.contains(words), "missing `{words}` in the report");
    }
    assert!(!page.contains("output tokens per minute"), "the report");
}

/// A server that answers one vector whatever it was sent.
fn one_vector(_: &str, _: &str) -> Answer {
    (
        "200 OK",
        "application/json",
        r#"{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,0.2]}],"model":"m","usage":{"prompt_tokens":8,"total_tokens":8}}"#.into(),
    )
}

#[test]
fn an_answer_without_one_vector_per_input_is_a_protocol_error() {
    let fake = Fake::start(one_vector);
    let p = Project::new();
    let yaml = format!(
        "name: short\ntarget:\n  api: openai-embeddings\n  base_url: {}/v1\n  models: [m]\n\
         request:\n  prompt_file: prompts/p.txt\n  batch: 3\nload:\n  ladder: [1]\n  requests_per_step: 2\n",
        fake.base
    );
    let f = p.scenario("short", &yaml);
    p.ladder()
        .args(["run", "--no-color", "--quiet"])
        .arg(&f)
        .assert()
        .failure();
    let dirs = p.run_dirs("short");
    let (h, rows) = read_csv(&dirs[0].join("requests.csv"));
    assert!(!rows.is_empty());
    for r in &rows {
        assert_eq!(r[col(&h, "error_class")], "protocol", "{r:?}");
        assert!(
            r[col(&h, "error_message")].contains("holds 1 vectors for 3 inputs"),
            "{r:?}"
        );
    }
    let bodies = fake.bodies.lock().unwrap();
    let sent: serde_json::Value = serde_json::from_str(&bodies[0]).unwrap();
    assert_eq!(sent["input"].as_array().map(Vec::len), Some(3), "{sent}");
    assert!(
        sent.get("stream").is_none() && sent.get("max_tokens").is_none(),
        "{sent}"
    );
}

/// vLLM's answer for a generative model on `/v1/embeddings`, and a server without the path.
fn no_embeddings(_: &str, path: &str) -> Answer {
    if path == "/v1/embeddings" {
        return (
            "400 Bad Request",
            "application/json",
            r#"{"object":"error","message":"The model does not support Embeddings API","type":"BadRequestError","param":null,"code":400}"#.into(),
        );
    }
    (
        "404 Not Found",
        "application/json",
        r#"{"detail":"Not Found"}"#.into(),
    )
}

#[test]
fn check_passes_against_the_simulator_and_names_a_model_that_does_not_embed() {
    let p = Project::new();
    let yaml = scenario("ok", "embed_time: 5ms", "", "  ladder: [1]");
    let f = p.scenario("ok", &yaml);
    let out = check(&p, &[f.to_str().unwrap()], None);
    assert_eq!(out.code, 0, "{}", out.stdout);
    says(
        &out,
        &[
            "ok  sim-model  E2E ",
            "1 vector",
            "input tokens, usage reported",
            "openai-embeddings",
        ],
    );
    let fake = Fake::start(no_embeddings);
    let base = format!("{}/v1", fake.base);
    let args = [
        "--base-url",
        base.as_str(),
        "--model",
        "qwen",
        "--api",
        "openai-embeddings",
    ];
    let out = check(&p, &args, None);
    assert_eq!(out.code, 1, "{}", out.stdout);
    says(
        &out,
        &[
            "the model `qwen` is not served through /embeddings",
            "The model does not support Embeddings API",
        ],
    );
}

#[test]
fn validate_refuses_what_embeddings_cannot_measure() {
    let p = Project::new();
    let yaml = scenario("v", "", "  max_tokens: 16\n", "  ladder: [1]");
    let f = p.scenario("v", &yaml);
    let out = p.ladder().arg("validate").arg(&f).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(":8: request.max_tokens") && err.contains("no output limit"),
        "{err}"
    );
    let yaml = format!(
        "{}slo: {{ttft: 1s}}\n",
        scenario("v", "", "", "  ladder: [1]")
    );
    let f = p.scenario("v", &yaml);
    let out = p.ladder().arg("validate").arg(&f).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("slo.ttft") && err.contains("openai-embeddings does not measure"),
        "{err}"
    );
}
