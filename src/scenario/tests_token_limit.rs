//! Unit tests of the output-token limit: its field per API, `max_tokens: null`, and a limit
//! written in `extra_body` (read into the limit, never sent twice).

use super::*;

/// Loads a scenario of `api` whose `request:` block holds `request` (indented two spaces).
fn load_request(api: &str, request: &str) -> Result<Scenario, ScenarioError> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("p.txt"), "Hello\n").unwrap();
    let yaml = format!(
        "name: t\ntarget:\n  api: {api}\n  sim: {{}}\n  models: [m]\nrequest:\n  prompt_file: p.txt\n{request}load:\n  ladder: [1]\n"
    );
    load_str(&yaml, &dir.path().join("s.yaml"), &|_| None)
}

fn limit(api: &str, request: &str) -> (Option<u32>, &'static str, Vec<String>) {
    let s = load_request(api, request).unwrap();
    let r = s.request;
    (
        r.max_tokens,
        r.max_tokens_field.key(),
        r.extra_body.keys().cloned().collect(),
    )
}

fn refused(api: &str, request: &str) -> String {
    match load_request(api, request) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("accepted: {request}"),
    }
}

#[test]
fn each_api_gets_its_default_field() {
    assert_eq!(
        limit("openai-chat", ""),
        (Some(256), "max_completion_tokens", vec![])
    );
    assert_eq!(
        limit("openai-completions", "  max_tokens: 9\n"),
        (Some(9), "max_tokens", vec![])
    );
    assert_eq!(
        limit("anthropic-messages", ""),
        (Some(256), "max_tokens", vec![])
    );
    assert_eq!(
        limit("openai-chat", "  max_tokens_field: max_tokens\n"),
        (Some(256), "max_tokens", vec![])
    );
}

#[test]
fn null_sends_no_limit_where_the_api_allows_it() {
    assert_eq!(
        limit("openai-chat", "  max_tokens: null\n"),
        (None, "max_completion_tokens", vec![])
    );
    assert_eq!(limit("openai-completions", "  max_tokens: ~\n").0, None);
    let e = refused("anthropic-messages", "  max_tokens: null\n");
    assert!(e.contains("requires a limit"), "{e}");
}

#[test]
fn a_limit_in_extra_body_becomes_the_limit_and_is_not_sent_twice() {
    assert_eq!(
        limit(
            "openai-chat",
            "  extra_body: {max_completion_tokens: 900, seed: 1}\n"
        ),
        (Some(900), "max_completion_tokens", vec!["seed".to_string()])
    );
    assert_eq!(
        limit("openai-chat", "  extra_body: {max_tokens: 12}\n"),
        (Some(12), "max_tokens", vec![])
    );
    // The same value in both places is fine; null in extra_body means no limit.
    assert_eq!(
        limit(
            "openai-chat",
            "  max_tokens: 900\n  extra_body: {max_completion_tokens: 900}\n"
        )
        .0,
        Some(900)
    );
    assert_eq!(
        limit(
            "openai-chat",
            "  extra_body: {max_completion_tokens: null}\n"
        )
        .0,
        None
    );
    // A key the API does not have stays the user's business.
    assert_eq!(
        limit(
            "anthropic-messages",
            "  extra_body: {max_completion_tokens: 5}\n"
        )
        .2,
        ["max_completion_tokens"]
    );
}

#[test]
fn contradictions_are_refused_with_the_field_to_fix() {
    for (api, request, words) in [
        (
            "openai-chat",
            "  max_tokens_field: max_completion\n",
            "`max_completion` is not a limit field; write max_completion_tokens or max_tokens",
        ),
        (
            "anthropic-messages",
            "  max_tokens_field: max_completion_tokens\n",
            "anthropic-messages has no `max_completion_tokens`; it takes max_tokens",
        ),
        (
            "openai-chat",
            "  extra_body: {max_tokens: 5, max_completion_tokens: 5}\n",
            "sets both max_tokens and max_completion_tokens",
        ),
        (
            "openai-chat",
            "  max_tokens: 10\n  extra_body: {max_completion_tokens: 20}\n",
            "sets max_completion_tokens to 20 while request.max_tokens is 10",
        ),
        (
            "openai-chat",
            "  max_tokens_field: max_tokens\n  extra_body: {max_completion_tokens: 20}\n",
            "while request.max_tokens_field says max_tokens",
        ),
        (
            "openai-chat",
            "  extra_body: {max_completion_tokens: 0}\n",
            "max_completion_tokens is 0; write a whole number of 1 or more",
        ),
    ] {
        let e = refused(api, request);
        assert!(e.contains(words), "{request}: {e}");
        assert!(e.contains("s.yaml"), "{e}");
    }
}

#[test]
fn the_field_is_recorded_only_when_it_is_not_the_default() {
    let plain = load_request("openai-chat", "").unwrap();
    let other = load_request("openai-chat", "  max_tokens_field: max_tokens\n").unwrap();
    let none = load_request("openai-chat", "  max_tokens: null\n").unwrap();
    assert!(!normalized_yaml(&plain).contains("max_tokens_field"));
    assert!(normalized_yaml(&other).contains("max_tokens_field: max_tokens"));
    assert!(workload_yaml(&other).contains("max_tokens_field: max_tokens"));
    assert_ne!(plain.fingerprint, other.fingerprint);
    assert!(normalized_yaml(&none).contains("max_tokens: null"));
}

#[test]
fn the_limit_fields_are_the_dialects_own_each_once_in_order() {
    assert_eq!(
        LimitField::names(),
        ["max_completion_tokens", "max_tokens", "max_output_tokens"]
    );
    for api in crate::dialect::Api::ALL {
        for f in LimitField::allowed(api) {
            assert_eq!(LimitField::parse(f.key()), Some(f), "{api:?}");
        }
    }
    assert_eq!(LimitField::parse("max_new_tokens"), None);
}
