//! Unit tests of `ladder check`'s inputs: flags, Claude Code settings.json, Codex auth.json,
//! with the environment and the file system replaced by closures.

use super::*;
use std::collections::HashMap;

fn args() -> CheckInputs {
    CheckInputs {
        scenario: None,
        base_url: None,
        model: Vec::new(),
        api: None,
        api_key_env: None,
        from: None,
        timeout: Duration::from_secs(20),
        max_tokens_field: None,
    }
}

fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |k| map.get(k).cloned()
}

fn file(text: &'static str) -> impl Fn(&Path) -> std::io::Result<String> {
    move |_| Ok(text.to_string())
}

fn no_file(_: &Path) -> std::io::Result<String> {
    Err(std::io::Error::new(
        std::io::ErrorKind::NotFound,
        "No such file or directory",
    ))
}

fn base(t: &CheckTarget) -> &str {
    match &t.target.endpoint {
        Endpoint::Url(u) => u,
        Endpoint::Sim(_) => panic!("sim"),
    }
}

fn header(t: &CheckTarget, name: &str) -> Option<String> {
    t.target
        .headers
        .iter()
        .find(|h| h.name == name)
        .map(|h| h.value.expose().to_string())
}

#[test]
fn nothing_to_check() {
    let e = from_flags(&args(), &env_of(&[]), &no_file).unwrap_err();
    assert_eq!(e, InputError::NoTarget);
    assert!(e.to_string().contains("--base-url URL --model MODEL"));
}

#[test]
fn base_url_flags() {
    let mut a = args();
    a.base_url = Some("https://api.openai.com/v1/".into());
    assert_eq!(
        from_flags(&a, &env_of(&[]), &no_file).unwrap_err(),
        InputError::MissingModel("--base-url".into())
    );
    a.model = vec!["gpt-4o-mini".into()];
    let t = from_flags(&a, &env_of(&[("OPENAI_API_KEY", "sk-k")]), &no_file).unwrap();
    assert_eq!(base(&t), "https://api.openai.com/v1");
    assert_eq!(t.target.api, Api::OpenAiChat);
    assert_eq!(t.target.models, vec!["gpt-4o-mini"]);
    assert_eq!(t.key.as_ref().map(|k| k.expose()), Some("sk-k"));
    assert_eq!(t.target.api_key, t.key);
    assert_eq!(t.key_source, "$OPENAI_API_KEY");
    assert_eq!(t.target.timeouts.first_token, Duration::from_secs(20));
    assert_eq!(t.target.timeouts.connect, Duration::from_secs(10));
    // The default key variable follows the API; --api-key-env overrides it.
    a.api = Some(Api::AnthropicMessages);
    let t = from_flags(&a, &env_of(&[]), &no_file).unwrap();
    assert_eq!(t.key_source, "$ANTHROPIC_API_KEY");
    assert_eq!(t.key, None);
    a.api_key_env = Some("MY_KEY".into());
    let t = from_flags(&a, &env_of(&[("MY_KEY", "k")]), &no_file).unwrap();
    assert_eq!(t.key_source, "$MY_KEY");
    assert_eq!(t.target.api, Api::AnthropicMessages);
}

#[test]
fn bad_base_urls() {
    let mut a = args();
    a.model = vec!["m".into()];
    for bad in [
        "api.openai.com/v1",
        "ftp://h/v1",
        "http://",
        "localhost:8000",
    ] {
        a.base_url = Some(bad.into());
        assert_eq!(
            from_flags(&a, &env_of(&[]), &no_file).unwrap_err(),
            InputError::BadUrl(bad.into()),
            "{bad}"
        );
    }
}

#[test]
fn claude_base_url_gets_v1_when_needed() {
    let (b, note) = claude_base_url("https://gateway.example.com/");
    assert_eq!(b, "https://gateway.example.com/v1");
    assert!(note.contains("/v1 appended"), "{note}");
    let (b, note) = claude_base_url("https://gw.example.com/anthropic");
    assert_eq!(b, "https://gw.example.com/anthropic/v1");
    assert!(note.contains("Claude Code calls https://gw.example.com/anthropic/v1/messages"));
    let (b, note) = claude_base_url("https://gw.example.com/v1/");
    assert_eq!(b, "https://gw.example.com/v1");
    assert!(note.contains("already ends with /v1"), "{note}");
    assert!(note.contains("remove the /v1"));
}

const CLAUDE: &str = r#"{
  "model": "opus",
  "env": {
    "ANTHROPIC_BASE_URL": "https://gateway.example.com",
    "ANTHROPIC_API_KEY": "sk-ant-api03-secret",
    "ANTHROPIC_MODEL": "claude-sonnet-4-5"
  }
}"#;

#[test]
fn claude_settings_with_an_api_key() {
    let mut a = args();
    a.from = Some("/home/u/.claude/settings.json".into());
    let t = from_flags(&a, &env_of(&[]), &file(CLAUDE)).unwrap();
    assert_eq!(base(&t), "https://gateway.example.com/v1");
    assert_eq!(t.target.api, Api::AnthropicMessages);
    assert_eq!(t.target.models, vec!["claude-sonnet-4-5"]);
    assert_eq!(
        t.target.api_key.as_ref().map(|k| k.expose()),
        Some("sk-ant-api03-secret")
    );
    assert_eq!(
        t.key_source,
        "env.ANTHROPIC_API_KEY in /home/u/.claude/settings.json"
    );
    assert_eq!(t.notes.len(), 1);
    assert!(t.target.headers.is_empty());
    // Flags override the file.
    a.model = vec!["claude-haiku".into()];
    a.base_url = Some("http://127.0.0.1:9/v1".into());
    let t = from_flags(&a, &env_of(&[]), &file(CLAUDE)).unwrap();
    assert_eq!(t.target.models, vec!["claude-haiku"]);
    assert_eq!(base(&t), "http://127.0.0.1:9/v1");
    assert!(t.notes.is_empty());
}

#[test]
fn claude_settings_with_an_auth_token_use_bearer() {
    let mut a = args();
    a.from = Some("s.json".into());
    let text = r#"{"env": {"ANTHROPIC_AUTH_TOKEN": "tok-123", "ANTHROPIC_MODEL": "m"}}"#;
    let t = from_flags(&a, &env_of(&[]), &move |_: &Path| Ok(text.to_string())).unwrap();
    assert_eq!(base(&t), ANTHROPIC_DEFAULT_BASE);
    assert_eq!(t.target.api_key, None);
    assert_eq!(
        header(&t, "authorization").as_deref(),
        Some("Bearer tok-123")
    );
    assert!(t.target.headers[0].secret);
    assert_eq!(t.key.as_ref().map(|k| k.expose()), Some("tok-123"));
    assert_eq!(t.key_source, "env.ANTHROPIC_AUTH_TOKEN in s.json");
    // With an OpenAI-style API the token is the bearer key itself.
    a.api = Some(Api::OpenAiChat);
    let t = from_flags(&a, &env_of(&[]), &move |_: &Path| Ok(text.to_string())).unwrap();
    assert_eq!(
        t.target.api_key.as_ref().map(|k| k.expose()),
        Some("tok-123")
    );
    assert!(t.target.headers.is_empty());
}

#[test]
fn claude_settings_fall_back_to_the_environment() {
    let mut a = args();
    a.from = Some("s.json".into());
    let text = r#"{"env": {"ANTHROPIC_API_KEY": ""}}"#;
    let env = env_of(&[
        ("ANTHROPIC_API_KEY", "sk-ant-from-env"),
        ("ANTHROPIC_AUTH_TOKEN", "tok"),
        ("ANTHROPIC_MODEL", "claude-x"),
        ("ANTHROPIC_BASE_URL", "http://127.0.0.1:4000"),
    ]);
    let t = from_flags(&a, &env, &move |_: &Path| Ok(text.to_string())).unwrap();
    assert_eq!(t.key_source, "$ANTHROPIC_API_KEY");
    assert_eq!(t.target.models, vec!["claude-x"]);
    assert_eq!(base(&t), "http://127.0.0.1:4000/v1");
    assert!(t.notes.iter().any(|n| n.contains("both")));
}

#[test]
fn claude_settings_errors() {
    let mut a = args();
    a.from = Some("s.json".into());
    let run = |a: &CheckInputs, text: &'static str| {
        from_flags(a, &env_of(&[]), &move |_: &Path| Ok(text.to_string()))
    };
    assert_eq!(
        run(&a, r#"{"env": {"ANTHROPIC_API_KEY": "k"}}"#).unwrap_err(),
        InputError::NoClaudeModel("s.json".into())
    );
    assert_eq!(
        run(&a, r#"{"env": {"ANTHROPIC_MODEL": 3}}"#).unwrap_err(),
        InputError::NotAString("s.json".into(), "env.ANTHROPIC_MODEL".into())
    );
    assert_eq!(
        run(
            &a,
            r#"{"env": {"ANTHROPIC_MODEL": "m", "ANTHROPIC_BASE_URL": "gateway:4000"}}"#
        )
        .unwrap_err(),
        InputError::BadFileUrl("s.json".into(), "gateway:4000".into())
    );
    // No key is not an error: the check will say so.
    let t = run(&a, r#"{"env": {"ANTHROPIC_MODEL": "m"}}"#).unwrap();
    assert_eq!(t.key, None);
    assert!(t.key_source.contains("ANTHROPIC_API_KEY"));
}

#[test]
fn codex_auth() {
    let mut a = args();
    a.from = Some("auth.json".into());
    let text = r#"{"OPENAI_API_KEY": "sk-proj-abc", "tokens": null}"#;
    let read = move |_: &Path| Ok(text.to_string());
    assert!(matches!(
        from_flags(&a, &env_of(&[]), &read).unwrap_err(),
        InputError::MissingModel(m) if m.contains("auth.json")
    ));
    a.model = vec!["gpt-4o-mini".into()];
    let t = from_flags(&a, &env_of(&[]), &read).unwrap();
    assert_eq!(base(&t), OPENAI_DEFAULT_BASE);
    assert_eq!(t.target.api, Api::OpenAiChat);
    assert_eq!(
        t.target.api_key.as_ref().map(|k| k.expose()),
        Some("sk-proj-abc")
    );
    assert_eq!(t.key_source, "OPENAI_API_KEY in auth.json");
    a.base_url = Some("http://127.0.0.1:8000/v1".into());
    assert_eq!(
        base(&from_flags(&a, &env_of(&[]), &read).unwrap()),
        "http://127.0.0.1:8000/v1"
    );
    let chatgpt = r#"{"OPENAI_API_KEY": null, "tokens": {"access_token": "x"}}"#;
    assert_eq!(
        from_flags(&a, &env_of(&[]), &move |_: &Path| Ok(chatgpt.to_string())).unwrap_err(),
        InputError::NoCodexKey("auth.json".into())
    );
    let number = r#"{"OPENAI_API_KEY": 5}"#;
    assert_eq!(
        from_flags(&a, &env_of(&[]), &move |_: &Path| Ok(number.to_string())).unwrap_err(),
        InputError::NotAString("auth.json".into(), "OPENAI_API_KEY".into())
    );
}

#[test]
fn unreadable_or_unknown_files() {
    let mut a = args();
    a.from = Some("missing.json".into());
    let e = from_flags(&a, &env_of(&[]), &no_file).unwrap_err();
    assert!(matches!(e, InputError::Unreadable(..)));
    assert!(e.to_string().contains("missing.json: cannot read"));
    let e = from_flags(&a, &env_of(&[]), &file("not json")).unwrap_err();
    assert!(matches!(e, InputError::NotJson(..)));
    let e = from_flags(&a, &env_of(&[]), &file(r#"{"theme": "dark"}"#)).unwrap_err();
    assert_eq!(e, InputError::UnknownShape("missing.json".into()));
}

#[test]
fn timeouts_are_capped() {
    let t = check_timeouts(&Timeouts::default(), Duration::from_secs(5));
    assert_eq!(t.connect, Duration::from_secs(5));
    assert_eq!(t.first_token, Duration::from_secs(5));
    assert_eq!(t.idle, Duration::from_secs(5));
    assert_eq!(t.total, Duration::from_secs(5));
    let t = check_timeouts(&Timeouts::default(), Duration::from_secs(120));
    assert_eq!(t.connect, Duration::from_secs(10));
    assert_eq!(t.first_token, Duration::from_secs(60));
    assert_eq!(t.idle, Duration::from_secs(30));
    assert_eq!(t.total, Duration::from_secs(120));
}
