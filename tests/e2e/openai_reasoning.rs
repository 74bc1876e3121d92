//! OpenAI's reasoning models on chat completions (o-series, GPT-5): a test server that refuses
//! `max_tokens` exactly as OpenAI does (HTTP 400, its error body, param `max_tokens`, code
//! `unsupported_parameter`) and otherwise streams like OpenAI (hidden reasoning counted in
//! usage). `run` and `check` work with the default `max_tokens_field`, a limit in `extra_body` is
//! not sent twice, and `check` names the setting when the scenario asks for `max_tokens`.

use crate::check::{check, says, Answer, Fake};
use crate::support::Project;

/// OpenAI's answer to a chat request that carries `max_tokens` for a reasoning model.
const REFUSAL: &str = r#"{
  "error": {
    "message": "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
    "type": "invalid_request_error",
    "param": "max_tokens",
    "code": "unsupported_parameter"
  }
}"#;

/// Answers a chat request as OpenAI answers a reasoning model: `max_tokens` refused; otherwise
/// 64 hidden reasoning tokens, then "Hello!" in three chunks, within `max_completion_tokens`
/// (a smaller limit is spent on reasoning: no answer, `finish_reason: length`).
fn like_openai(_: &str, body: &str) -> Option<Answer> {
    let v: serde_json::Value = serde_json::from_str(body).ok()?;
    if v.get("max_tokens").is_some() {
        return Some(("400 Bad Request", "application/json", REFUSAL.to_string()));
    }
    let limit = v["max_completion_tokens"].as_u64().unwrap_or(u64::MAX);
    Some(("200 OK", "text/event-stream", reasoning_stream(limit)))
}

/// The stream of a reasoning model at `limit` completion tokens: the role chunk, the answer
/// chunks that fit after 64 reasoning tokens, the finish chunk and usage.
fn reasoning_stream(limit: u64) -> String {
    let head =
        r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"o4-mini","#;
    let chunk = |delta: &str, finish: &str| {
        format!("data: {head}\"choices\":[{{\"index\":0,\"delta\":{delta},\"finish_reason\":{finish}}}],\"usage\":null}}\n\n")
    };
    let mut s = chunk(r#"{"role":"assistant","content":""}"#, "null");
    let reasoning = limit.min(64);
    let answer = ["Hel", "lo", "!"];
    let fits = (limit - reasoning).min(answer.len() as u64);
    for t in &answer[..fits as usize] {
        s += &chunk(&format!(r#"{{"content":"{t}"}}"#), "null");
    }
    let finish = if fits < 3 { r#""length""# } else { r#""stop""# };
    s += &chunk("{}", finish);
    let out = reasoning + fits;
    s += &format!("data: {head}\"choices\":[],\"usage\":{{\"prompt_tokens\":9,\"completion_tokens\":{out},\"total_tokens\":{},\"completion_tokens_details\":{{\"reasoning_tokens\":{reasoning}}}}}}}\n\n", 9 + out);
    s += "data: [DONE]\n\n";
    s
}

fn not_found(_: &str, _: &str) -> Answer {
    ("404 Not Found", "application/json", "{}".into())
}

fn scenario(p: &Project, base: &str, request_extra: &str) -> String {
    let yaml = format!(
        "name: o4\ntarget:\n  base_url: {base}/v1\n  models: [o4-mini]\nrequest:\n  prompt_file: prompts/p.txt\n{request_extra}load:\n  ladder: [2]\n  requests_per_step: 6\n"
    );
    p.scenario("o4", &yaml).to_str().unwrap().to_string()
}

fn bodies(fake: &Fake) -> Vec<serde_json::Value> {
    fake.bodies
        .lock()
        .unwrap()
        .iter()
        .map(|b| serde_json::from_str(b).unwrap())
        .collect()
}

#[test]
fn run_and_check_work_with_the_default_field() {
    let fake = Fake::start_guarded(not_found, like_openai);
    let p = Project::new();
    let f = scenario(&p, &fake.base, "  max_tokens: 300\n");
    let out = check(&p, &[&f], None);
    assert_eq!(out.code, 0, "{}", out.stdout);
    says(
        &out,
        &["ok  o4-mini  accepted; all 5 tokens went to hidden reasoning"],
    );
    p.ladder()
        .args(["run", "--quiet"])
        .arg(&f)
        .assert()
        .success();
    let sent = bodies(&fake);
    assert!(sent.len() > 6, "{sent:?}");
    assert_eq!(sent[0]["max_completion_tokens"], 5, "check asks for 5");
    // The check's cache probe (its long prompt, twice) asks for 5 as well; then the run.
    let probe = |b: &&serde_json::Value| b.to_string().contains("ladder sends this text twice");
    assert_eq!(sent[1..3].iter().filter(probe).count(), 2, "{sent:?}");
    for b in &sent[3..] {
        assert!(!probe(&b), "{b}");
        assert_eq!(b["max_completion_tokens"], 300, "{b}");
        assert!(b.get("max_tokens").is_none(), "{b}");
    }
    let run = p.run_dirs("o4").pop().unwrap();
    let requests = std::fs::read_to_string(run.join("requests.csv")).unwrap();
    assert!(!requests.contains("http_4xx"), "{requests}");
    assert!(
        requests.lines().skip(1).all(|l| l.contains(",67,")),
        "{requests}"
    );
}

#[test]
fn a_limit_in_extra_body_is_sent_once() {
    let fake = Fake::start_guarded(not_found, like_openai);
    let p = Project::new();
    let f = scenario(
        &p,
        &fake.base,
        "  extra_body: {max_completion_tokens: 900}\n",
    );
    let out = check(&p, &[&f], None);
    assert_eq!(out.code, 0, "{}", out.stdout);
    p.ladder()
        .args(["run", "--quiet"])
        .arg(&f)
        .assert()
        .success();
    // The check request and its cache probe's two (the check's own limit), then the run's.
    for b in &bodies(&fake)[3..] {
        assert_eq!(b["max_completion_tokens"], 900, "{b}");
        assert!(b.get("max_tokens").is_none(), "{b}");
    }
}

#[test]
fn check_names_the_setting_when_the_scenario_sends_max_tokens() {
    let fake = Fake::start_guarded(not_found, like_openai);
    let p = Project::new();
    let f = scenario(&p, &fake.base, "  max_tokens_field: max_tokens\n");
    let out = check(&p, &[&f], None);
    assert_eq!(out.code, 1, "{}", out.stdout);
    says(
        &out,
        &[
            "HTTP 400: the server refuses the limit field `max_tokens`",
            "wants `max_completion_tokens`",
            &format!("{f}: set `max_tokens_field: max_completion_tokens` under request:"),
            "server said: Unsupported parameter: 'max_tokens'",
        ],
    );
    assert!(!out.stdout.contains("extra_body"), "{}", out.stdout);
    // The same with flags: the flag to change.
    let base = format!("{}/v1", fake.base);
    let flags = ["--base-url", &base, "--model", "o4-mini"];
    let out = check(
        &p,
        &[&flags[..], &["--max-tokens-field", "max_tokens"]].concat(),
        None,
    );
    assert_eq!(out.code, 1, "{}", out.stdout);
    says(&out, &["--max-tokens-field max_completion_tokens"]);
    assert_eq!(check(&p, &flags, None).code, 0);
}
