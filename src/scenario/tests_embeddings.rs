//! Unit tests of an embeddings scenario: `request.batch` (1 or more, embeddings only), and what
//! an embeddings request cannot carry or measure, each refused at its file, line and field.

use super::*;

const BASE: &str = "name: t\ntarget:\n  api: openai-embeddings\n  sim: {}\n  models: [m]\n\
                    request:\n  prompt: hello\nload:\n  ladder: [1, 2]\n";

fn load(yaml: &str) -> Result<Scenario, ScenarioError> {
    load_str(yaml, std::path::Path::new("/tmp/e.yaml"), &|_| None)
}

/// The line, field and message of a refused scenario.
fn refused(yaml: &str) -> (Option<usize>, String, String) {
    match load(yaml) {
        Err(ScenarioError::Invalid {
            line,
            field,
            message,
            ..
        }) => (line, field, message),
        other => panic!("expected an Invalid error, got {other:?} for\n{yaml}"),
    }
}

fn with_request(extra: &str) -> String {
    BASE.replace("load:", &format!("{extra}load:"))
}

#[test]
fn an_embeddings_scenario_is_whole_answers_without_a_limit_one_text_by_default() {
    let s = load(BASE).unwrap();
    assert!(s.target.api.embeds());
    assert!(!s.request.stream, "embeddings are never streamed");
    assert_eq!((s.request.max_tokens, s.request.batch), (None, 1));
    let s = load(&with_request(
        "  batch: 16\n  extra_body: {dimensions: 256, encoding_format: base64}\n",
    ))
    .unwrap();
    assert_eq!(s.request.batch, 16);
    assert_eq!(s.request.extra_body["dimensions"], 256);
    // The batch is part of the workload: it changes the fingerprint.
    assert_ne!(s.fingerprint, load(BASE).unwrap().fingerprint);
    // stream: false and max_tokens: null said out loud are what it is anyway (a run's recorded
    // scenario says them).
    assert!(load(&with_request("  stream: false\n  max_tokens: null\n")).is_ok());
}

#[test]
fn batch_is_one_or_more_and_only_for_embeddings() {
    let (line, field, msg) = refused(&with_request("  batch: 0\n"));
    assert_eq!((line, field.as_str()), (Some(8), "request.batch"), "{msg}");
    assert!(msg.contains("1 or more"), "{msg}");
    let (_, field, msg) = refused(&with_request("  batch: 4096\n"));
    assert_eq!(field, "request.batch");
    assert!(msg.contains("1 to 2048"), "{msg}");
    let chat = BASE
        .replace("  api: openai-embeddings\n", "")
        .replace("load:", "  batch: 4\nload:");
    let (line, field, msg) = refused(&chat);
    assert_eq!((line, field.as_str()), (Some(7), "request.batch"), "{msg}");
    assert!(
        msg.contains("only openai-embeddings") && msg.contains("openai-chat sends one prompt"),
        "{msg}"
    );
}

#[test]
fn what_an_embedding_cannot_carry_is_refused_at_its_field() {
    for (extra, field, words) in [
        (
            "  max_tokens: 16\n",
            "request.max_tokens",
            "no output limit",
        ),
        (
            "  max_tokens_field: max_tokens\n",
            "request.max_tokens_field",
            "no output limit",
        ),
        ("  stream: true\n", "request.stream", "cannot be streamed"),
        (
            "  session: {turns: 2}\n",
            "request.session",
            "no conversation",
        ),
        (
            "  system_file: s.txt\n",
            "request.system_file",
            "no system prompt",
        ),
        ("  temperature: 0.2\n", "request.temperature", "not sampled"),
        ("  short_below: 5%\n", "request.short_below", "can be short"),
    ] {
        let (line, f, msg) = refused(&with_request(extra));
        assert_eq!((line, f.as_str()), (Some(8), field), "{extra}: {msg}");
        assert!(msg.contains(words), "{extra}: {msg}");
    }
}

#[test]
fn an_embeddings_scenario_cannot_bound_what_only_a_stream_measures() {
    assert!(load(&format!(
        "{BASE}slo: {{e2e: 2s}}\ngates: {{e2e: {{p90: 10%}}}}\n"
    ))
    .is_ok());
    for (extra, field, line) in [
        ("slo:\n  e2e: 2s\n  ttft: 500ms\n", "slo.ttft", 12),
        ("slo: {tpot: 50ms}\n", "slo.tpot", 10),
        ("gates:\n  ttft: {p90: 10%}\n", "gates.ttft", 11),
        ("gates: {itl: {p99: 20%}}\n", "gates.itl", 10),
    ] {
        let (at, f, msg) = refused(&format!("{BASE}{extra}"));
        assert_eq!((at, f.as_str()), (Some(line), field), "{msg}");
        assert!(
            msg.contains("openai-embeddings does not measure")
                && msg.contains("bound E2E")
                && !msg.contains("request.stream: true"),
            "{msg}"
        );
    }
}
