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
        profile: None,
        project_dir: PathBuf::from("/p"),
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
    // Claude Code's order: ANTHROPIC_AUTH_TOKEN before ANTHROPIC_API_KEY.
    assert_eq!(t.key_source, "$ANTHROPIC_AUTH_TOKEN");
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
        InputError::NoClaudeModel("s.json".into(), "s.json".into())
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

// ------------------------------------------------------------------ Codex config.toml

/// A file system of `(path, text)` pairs; any other path is missing, a listed directory
/// (a path ending in `/`) cannot be read as a file.
fn files(list: &[(&str, &str)]) -> impl Fn(&Path) -> std::io::Result<String> {
    let map: HashMap<PathBuf, String> = list
        .iter()
        .map(|(p, t)| (PathBuf::from(p.trim_end_matches('/')), t.to_string()))
        .collect();
    let dirs: Vec<PathBuf> = list
        .iter()
        .filter(|(p, _)| p.ends_with('/'))
        .map(|(p, _)| PathBuf::from(p.trim_end_matches('/')))
        .collect();
    move |p| {
        if dirs.iter().any(|d| d == p) {
            return Err(std::io::Error::other("Is a directory (os error 21)"));
        }
        map.get(p).cloned().ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::NotFound, "No such file or directory")
        })
    }
}

fn codex_args() -> CheckInputs {
    let mut a = args();
    a.from = Some("codex".into());
    a
}

const GATEWAY: &str = r#"
model = "gpt-5"
model_provider = "gw"
approval_policy = "on-request"

[model_providers.gw]
name = "Gateway"
base_url = "https://gw.example.com/v1/"
env_key = "GW_KEY"
wire_api = "responses"
http_headers = { "X-Team" = "search" }
env_http_headers = { "X-Project-Token" = "GW_PROJECT", "X-Unset" = "NOT_SET" }

[mcp_servers.docs]
command = "docs-mcp"
"#;

#[test]
fn codex_config_with_a_custom_provider() {
    let env = env_of(&[
        ("HOME", "/home/u"),
        ("GW_KEY", "sk-gw-secret"),
        ("GW_PROJECT", "tok-proj"),
    ]);
    let read = files(&[
        ("/home/u/.codex/", ""),
        ("/home/u/.codex/config.toml", GATEWAY),
    ]);
    let t = from_flags(&codex_args(), &env, &read).unwrap();
    assert_eq!(base(&t), "https://gw.example.com/v1");
    assert_eq!(t.target.api, Api::OpenAiResponses);
    assert_eq!(t.target.models, vec!["gpt-5"]);
    assert_eq!(t.key.as_ref().map(|k| k.expose()), Some("sk-gw-secret"));
    assert_eq!(t.target.api_key, t.key);
    assert_eq!(t.key_source, "$GW_KEY (model_providers.gw.env_key)");
    assert_eq!(t.label, "/home/u/.codex/config.toml");
    assert_eq!(header(&t, "X-Team").as_deref(), Some("search"));
    assert_eq!(header(&t, "X-Project-Token").as_deref(), Some("tok-proj"));
    // A variable that is not set sends no header, as in Codex.
    assert_eq!(header(&t, "X-Unset"), None);
    let secret = |n: &str| {
        t.target
            .headers
            .iter()
            .find(|h| h.name == n)
            .unwrap()
            .secret
    };
    assert!(!secret("X-Team") && secret("X-Project-Token"));
    assert!(
        t.notes[0].contains(
            "provider `gw` (model_providers.gw), wire_api responses → api openai-responses"
        ),
        "{:?}",
        t.notes
    );
    // $CODEX_HOME comes before ~/.codex; a directory and the file itself read the same.
    let env = env_of(&[("CODEX_HOME", "/etc/cx"), ("GW_KEY", "k")]);
    let read = files(&[("/etc/cx/", ""), ("/etc/cx/config.toml", GATEWAY)]);
    assert_eq!(
        from_flags(&codex_args(), &env, &read).unwrap().label,
        "/etc/cx/config.toml"
    );
    for from in ["/etc/cx", "/etc/cx/config.toml"] {
        let mut a = args();
        a.from = Some(from.into());
        let t = from_flags(&a, &env, &read).unwrap();
        assert_eq!(t.label, "/etc/cx/config.toml", "{from}");
    }
    // Flags come before the file.
    let mut a = codex_args();
    a.model = vec!["other".into()];
    a.api = Some(Api::OpenAiChat);
    a.api_key_env = Some("MINE".into());
    let env = env_of(&[("CODEX_HOME", "/etc/cx"), ("MINE", "k2")]);
    let t = from_flags(&a, &env, &read).unwrap();
    assert_eq!(t.target.models, vec!["other"]);
    assert_eq!(t.target.api, Api::OpenAiChat);
    assert_eq!(t.key_source, "$MINE");
    assert!(
        t.notes[0].contains("api openai-chat (--api)"),
        "{:?}",
        t.notes
    );
}

#[test]
fn codex_wire_api_picks_the_dialect() {
    let cfg = |wire: &str| {
        format!(
            "model = \"m\"\nmodel_provider = \"local\"\n[model_providers.local]\nbase_url = \"http://127.0.0.1:8000/v1\"\n{wire}"
        )
    };
    let run = |text: String| {
        let read = move |_: &Path| Ok(text.clone());
        let mut a = args();
        a.from = Some("config.toml".into());
        from_flags(&a, &env_of(&[]), &read)
    };
    let t = run(cfg("wire_api = \"chat\"")).unwrap();
    assert_eq!(t.target.api, Api::OpenAiChat);
    assert!(t
        .notes
        .iter()
        .any(|n| n.contains("current Codex releases refuse \"chat\"")));
    // No key is needed for a provider without env_key (a local server).
    assert_eq!(t.key, None);
    assert_eq!(
        t.key_source,
        "a variable named by model_providers.local.env_key in config.toml"
    );
    let t = run(cfg("wire_api = \"responses\"")).unwrap();
    assert_eq!(t.target.api, Api::OpenAiResponses);
    // Unset: Responses, Codex's default, with a note for older Codex's chat default.
    let t = run(cfg("")).unwrap();
    assert_eq!(t.target.api, Api::OpenAiResponses);
    assert!(t.notes.iter().any(|n| n.contains("wire_api is not set")));
    assert_eq!(
        run(cfg("wire_api = \"completions\"")).unwrap_err(),
        InputError::BadWireApi(
            "config.toml".into(),
            "model_providers.local.wire_api".into(),
            "completions".into()
        )
    );
}

#[test]
fn codex_built_in_providers_need_no_table() {
    let run = |text: &'static str, env: &[(&str, &str)], extra: &[(&'static str, &'static str)]| {
        let mut list = vec![("/c/config.toml", text)];
        list.extend_from_slice(extra);
        let mut a = args();
        a.from = Some("/c/config.toml".into());
        from_flags(&a, &env_of(env), &files(&list))
    };
    // openai: the key from the auth.json next to the file.
    let auth = ("/c/auth.json", r#"{"OPENAI_API_KEY": "sk-from-auth"}"#);
    let t = run(
        "model = \"gpt-5\"",
        &[("OPENAI_API_KEY", "sk-env")],
        &[auth],
    )
    .unwrap();
    assert_eq!(base(&t), OPENAI_DEFAULT_BASE);
    assert_eq!(t.target.api, Api::OpenAiResponses);
    assert_eq!(t.key.as_ref().map(|k| k.expose()), Some("sk-from-auth"));
    assert_eq!(t.key_source, "OPENAI_API_KEY in /c/auth.json");
    assert!(
        t.notes[0].contains("provider `openai` (built in)"),
        "{:?}",
        t.notes
    );
    // No auth.json: $OPENAI_API_KEY; a ChatGPT sign-in without it is refused.
    let t = run("model = \"gpt-5\"", &[("OPENAI_API_KEY", "sk-env")], &[]).unwrap();
    assert_eq!(t.key_source, "$OPENAI_API_KEY");
    // Neither: no key, said as where one goes (the check's "set … to your API key").
    let t = run("model = \"gpt-5\"", &[], &[]).unwrap();
    assert_eq!(t.key, None);
    assert_eq!(
        t.key_source,
        "$OPENAI_API_KEY (or OPENAI_API_KEY in /c/auth.json, written by codex login --with-api-key)"
    );
    let chatgpt = ("/c/auth.json", r#"{"OPENAI_API_KEY": null, "tokens": {}}"#);
    assert_eq!(
        run("model = \"gpt-5\"", &[], &[chatgpt]).unwrap_err(),
        InputError::NoCodexKey("/c/auth.json".into())
    );
    // openai_base_url, and the organization and project headers.
    let t = run(
        "model = \"gpt-5\"\nopenai_base_url = \"http://127.0.0.1:9/v1\"",
        &[("OPENAI_PROJECT", "proj_1")],
        &[auth],
    )
    .unwrap();
    assert_eq!(base(&t), "http://127.0.0.1:9/v1");
    assert_eq!(header(&t, "OpenAI-Project").as_deref(), Some("proj_1"));
    assert_eq!(header(&t, "OpenAI-Organization"), None);
    // ollama and lmstudio: local, Responses, no key; CODEX_OSS_PORT moves them; oss is chat.
    let t = run(
        "model = \"gpt-oss:20b\"\nmodel_provider = \"ollama\"",
        &[],
        &[],
    )
    .unwrap();
    assert_eq!(base(&t), "http://localhost:11434/v1");
    assert_eq!(t.target.api, Api::OpenAiResponses);
    assert_eq!(t.key, None);
    let t = run(
        "model = \"m\"\nmodel_provider = \"lmstudio\"",
        &[("CODEX_OSS_PORT", "4321")],
        &[],
    )
    .unwrap();
    assert_eq!(base(&t), "http://localhost:4321/v1");
    let t = run("model = \"m\"\nmodel_provider = \"oss\"", &[], &[]).unwrap();
    assert_eq!(
        (base(&t), t.target.api),
        ("http://localhost:11434/v1", Api::OpenAiChat)
    );
    // A table cannot replace a built-in (Codex ignores it): a note says so.
    let t = run(
        "model = \"m\"\nmodel_provider = \"ollama\"\n[model_providers.ollama]\nbase_url = \"http://gpu:11434/v1\"",
        &[],
        &[],
    )
    .unwrap();
    assert_eq!(base(&t), "http://localhost:11434/v1");
    assert!(t
        .notes
        .iter()
        .any(|n| n.contains("[model_providers.ollama] in /c/config.toml is ignored")));
    // A Codex home with only an auth.json: Codex's defaults.
    let mut a = args();
    a.from = Some("/c".into());
    a.model = vec!["gpt-5".into()];
    let t = from_flags(&a, &env_of(&[]), &files(&[("/c/", ""), auth])).unwrap();
    assert_eq!(
        (base(&t), t.key_source.as_str()),
        (OPENAI_DEFAULT_BASE, "OPENAI_API_KEY in /c/auth.json")
    );
}

const PROFILES: &str = r#"
model = "gpt-5"
profile = "local"

[profiles.local]
model = "qwen3"
model_provider = "vllm"

[profiles.azure]
model_provider = "azure"

[model_providers.vllm]
base_url = "http://127.0.0.1:8000/v1"
wire_api = "chat"

[model_providers.azure]
name = "Azure"
base_url = "https://my.openai.azure.com/openai"
env_key = "AZURE_OPENAI_API_KEY"
query_params = { api-version = "2025-04-01-preview", trace = "1" }
"#;

#[test]
fn codex_profiles() {
    let env = env_of(&[("AZURE_OPENAI_API_KEY", "az-key")]);
    let read = file(PROFILES);
    let mut a = args();
    a.from = Some("c.toml".into());
    // The file's profile: its model and provider.
    let t = from_flags(&a, &env, &read).unwrap();
    assert_eq!(t.target.models, vec!["qwen3"]);
    assert_eq!(base(&t), "http://127.0.0.1:8000/v1");
    assert_eq!(t.target.api, Api::OpenAiChat);
    assert!(
        t.notes[0].contains("profile `local`, provider `vllm`"),
        "{:?}",
        t.notes
    );
    // --profile: its provider, the top-level model; api-version sent, other parameters named.
    a.profile = Some("azure".into());
    let t = from_flags(&a, &env, &read).unwrap();
    assert_eq!(t.target.models, vec!["gpt-5"]);
    assert_eq!(base(&t), "https://my.openai.azure.com/openai");
    assert_eq!(t.target.api_version.as_deref(), Some("2025-04-01-preview"));
    assert!(
        t.notes
            .iter()
            .any(|n| n.contains("query_params: trace not sent")),
        "{:?}",
        t.notes
    );
    assert_eq!(
        t.key_source,
        "$AZURE_OPENAI_API_KEY (model_providers.azure.env_key)"
    );
    a.profile = Some("nope".into());
    let e = from_flags(&a, &env, &read).unwrap_err();
    assert_eq!(
        e,
        InputError::UnknownProfile(
            "c.toml".into(),
            "--profile".into(),
            "nope".into(),
            "azure, local".into()
        )
    );
}

#[test]
fn codex_config_errors_name_the_file_the_field_and_the_fix() {
    let run = |text: &'static str, env: &[(&str, &str)]| {
        let mut a = args();
        a.from = Some("/c/config.toml".into());
        from_flags(&a, &env_of(env), &file(text))
    };
    let e = run("model = \"m\"\nmodel_provider = \"gw\"\n[model_providers.gw]\nbase_url = \"https://gw/v1\"\nenv_key = \"GW_KEY\"", &[("GW_KEY", " ")]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "--from /c/config.toml: model_providers.gw.env_key names $GW_KEY, which is unset or empty; export GW_KEY with the key (Codex needs it too), or pass --api-key-env VAR"
    );
    let e = run("model_provider = \"gw\"", &[]).unwrap_err();
    assert_eq!(e, InputError::NoCodexModel("/c/config.toml".into(), None));
    assert!(e.to_string().contains("add e.g. model = \"gpt-5\""), "{e}");
    let e = run(
        "model = \"m\"\nmodel_provider = \"gw\"\n[model_providers.other]\n",
        &[],
    )
    .unwrap_err();
    let said = e.to_string();
    assert!(
        said.contains("model_provider = \"gw\" names no provider"),
        "{said}"
    );
    assert!(said.contains("tables in the file: other"), "{said}");
    assert!(said.contains("openai, ollama, lmstudio, oss"), "{said}");
    let e = run("model = \"m\"\nprofile = \"p\"", &[]).unwrap_err();
    assert!(
        e.to_string().contains(
            "profile = \"p\", but the file has no [profiles.p] table (profiles in the file: none)"
        ),
        "{e}"
    );
    let e = run("model = \"m\"\nmodel_provider = \"amazon-bedrock\"", &[]).unwrap_err();
    assert!(e.to_string().contains("AWS SigV4"), "{e}");
    let e = run(
        "model = \"m\"\nmodel_provider = \"x\"\n[model_providers.x]\nbase_url = \"gw:4000\"",
        &[],
    )
    .unwrap_err();
    assert_eq!(
        e,
        InputError::BadFieldUrl(
            "/c/config.toml".into(),
            "model_providers.x.base_url".into(),
            "gw:4000".into()
        )
    );
    // Not TOML, and a value of the wrong type: the line, no string value echoed (it may be a token).
    let e = run("model = \"m\"\nthis is not toml", &[]).unwrap_err();
    assert!(
        matches!(&e, InputError::NotToml(_, m) if m.starts_with("line 2: ")),
        "{e}"
    );
    let e = run(
        "model = \"m\"\n[model_providers.x]\nhttp_headers = \"sk-secret-value\"\n",
        &[],
    )
    .unwrap_err();
    let said = e.to_string();
    assert!(said.contains("line 3: "), "{said}");
    assert!(!said.contains("sk-secret-value"), "{said}");
}

#[test]
fn codex_bearer_token_and_no_home() {
    let mut a = args();
    a.from = Some("/c/config.toml".into());
    let text = "model = \"m\"\nmodel_provider = \"x\"\n[model_providers.x]\nbase_url = \"http://127.0.0.1:1/v1\"\nexperimental_bearer_token = \"tok-inline\"\nenv_key = \"UNSET\"";
    let t = from_flags(&a, &env_of(&[]), &move |_: &Path| Ok(text.to_string())).unwrap();
    assert_eq!(t.key.as_ref().map(|k| k.expose()), Some("tok-inline"));
    assert_eq!(
        t.key_source,
        "model_providers.x.experimental_bearer_token in /c/config.toml"
    );
    assert_eq!(
        from_flags(&codex_args(), &env_of(&[]), &no_file).unwrap_err(),
        InputError::NoCodexHome
    );
    let e = from_flags(&codex_args(), &env_of(&[("HOME", "/h")]), &no_file).unwrap_err();
    assert!(
        matches!(&e, InputError::NoCodexConfig(d, _) if d == Path::new("/h/.codex")),
        "{e}"
    );
    assert!(
        e.to_string().contains("point CODEX_HOME at Codex's home"),
        "{e}"
    );
}
