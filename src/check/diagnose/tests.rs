//! Unit tests of the pure diagnosis: one outcome per diagnosis, asserting the kind, that the
//! text names the cause and the fix, and which probes each outcome asks for.

use super::*;
use crate::check::key::inspect;
use crate::check::key::KeyShape;
use crate::check::url::host_of;
use crate::client::proxy::ProxyInfo;
use crate::dialect::Api;
use crate::scenario::Secret;
use std::time::Duration;

struct Setup {
    api: Api,
    base: String,
    key: KeyShape,
    proxy: Option<ProxyInfo>,
    auth: crate::scenario::Auth,
    api_version: Option<String>,
    api_setting: crate::check::diagnosis::ApiSetting,
}

impl Setup {
    fn new(base: &str, key: Option<&str>) -> Self {
        let api = Api::OpenAiChat;
        let secret = key.map(Secret::new);
        Setup {
            api,
            key: inspect(secret.as_ref(), api, &host_of(base)),
            base: base.into(),
            proxy: None,
            auth: crate::scenario::Auth::default_for(api, &host_of(base)),
            api_version: None,
            api_setting: Default::default(),
        }
    }

    fn anthropic(mut self) -> Self {
        self.api = Api::AnthropicMessages;
        self.auth = crate::scenario::Auth::XApiKey;
        self
    }

    fn proxied(mut self) -> Self {
        self.proxy = Some(ProxyInfo {
            var: "HTTPS_PROXY",
            shown: "http://***@proxy.corp:3128".into(),
        });
        self
    }

    fn run(&self, o: &Outcome, ev: &Evidence) -> Diagnosis {
        let cx = Context {
            api: self.api,
            base_url: &self.base,
            model: "gpt-4o-mnii",
            key: &self.key,
            key_source: "$OPENAI_API_KEY",
            proxy: self.proxy.as_ref(),
            timeout: Duration::from_secs(20),
            auth: self.auth,
            api_version: self.api_version.as_deref(),
            scenario_file: None,
            limit_field: crate::scenario::LimitField::parse("max_tokens").unwrap(),
            api_setting: self.api_setting.clone(),
        };
        diagnose(&cx, o, ev)
    }
}

fn local() -> Setup {
    Setup::new("http://127.0.0.1:8000/v1", Some("sk-0123456789abcdef"))
}

fn text(d: &Diagnosis) -> String {
    let mut all = vec![d.summary.clone()];
    all.extend(d.causes.iter().cloned());
    all.extend(d.fixes.iter().cloned());
    all.extend(d.notes.iter().cloned());
    all.extend(d.server_said.iter().cloned());
    all.join("\n")
}

fn assert_says(d: &Diagnosis, words: &[&str]) {
    let t = text(d);
    for w in words {
        assert!(t.contains(w), "missing `{w}` in:\n{t}");
    }
    assert!(!d.causes.is_empty() || d.is_ok(), "no cause:\n{t}");
    assert!(!d.fixes.is_empty() || d.is_ok(), "no fix:\n{t}");
}

fn status(status: u16, error_type: Option<&str>, message: &str) -> Outcome {
    Outcome::Status {
        status,
        error_type: error_type.map(str::to_string),
        message: message.into(),
        html: false,
        quota: false,
    }
}

fn no_answer(class: ErrorClass, detail: &str) -> Outcome {
    Outcome::NoAnswer {
        class,
        detail: detail.into(),
    }
}

fn streamed(source: TokensSource) -> Outcome {
    Outcome::Streamed {
        ttft_ms: Some(312.4),
        output_tokens: Some(5),
        tokens_source: Some(source),
        token_events: 5,
        reasoning_tokens: None,
        seen: Default::default(),
    }
}

// ---------------------------------------------------------------- success

#[test]
fn ok_with_usage() {
    let d = local().run(&streamed(TokensSource::Usage), &Evidence::default());
    assert_eq!(d.kind, Kind::Ok);
    assert!(d.is_ok());
    assert_eq!(
        d.summary,
        "TTFT 312 ms, 5 tokens, usage reported (stream_options honoured)"
    );
    assert!(d.notes.is_empty() && d.causes.is_empty());
    let a = local()
        .anthropic()
        .run(&streamed(TokensSource::Usage), &Evidence::default());
    assert_eq!(a.summary, "TTFT 312 ms, 5 tokens, usage reported");
}

#[test]
fn ok_without_usage_notes_chunk_counting() {
    let d = local().run(&streamed(TokensSource::Chunks), &Evidence::default());
    assert_eq!(d.kind, Kind::OkNoUsage);
    assert!(d.is_ok());
    assert_says(
        &d,
        &[
            "5 token events",
            "no usage",
            "tokens_source=chunks",
            "stream_options",
        ],
    );
}

#[test]
fn ok_notes_key_defects_the_server_tolerated_and_the_proxy() {
    let s = Setup::new("http://127.0.0.1:8000/v1", Some("sk-01234567 89abcdef")).proxied();
    let d = s.run(&streamed(TokensSource::Usage), &Evidence::default());
    assert_eq!(d.kind, Kind::Ok);
    assert_says(
        &d,
        &[
            "a space or a tab",
            "accepted",
            "HTTPS_PROXY=http://***@proxy.corp:3128",
        ],
    );
}

#[test]
fn usage_without_token_events_is_a_failure() {
    let o = Outcome::Streamed {
        ttft_ms: None,
        output_tokens: Some(5),
        tokens_source: Some(TokensSource::Usage),
        token_events: 0,
        reasoning_tokens: None,
        seen: Default::default(),
    };
    let d = local().run(&o, &Evidence::default());
    assert_eq!(d.kind, Kind::NoTokenEvents);
    assert!(!d.is_ok());
    assert_says(&d, &["TTFT cannot be measured", "target.api"]);
}

#[test]
fn a_check_spent_on_hidden_reasoning_is_accepted() {
    // OpenAI's reasoning models at a limit of 5: every token goes to hidden reasoning.
    let o = Outcome::Streamed {
        ttft_ms: None,
        output_tokens: Some(5),
        tokens_source: Some(TokensSource::Usage),
        token_events: 0,
        reasoning_tokens: Some(5),
        seen: Default::default(),
    };
    let d = local().run(&o, &Evidence::default());
    assert_eq!(d.kind, Kind::Ok);
    assert_says(&d, &["all 5 tokens went to hidden reasoning", "max_tokens"]);
}

// ---------------------------------------------------------------- the key

#[test]
fn key_that_cannot_be_sent() {
    let s = Setup::new("http://h/v1", Some("sk-01234567\n89abcdef"));
    let o = Outcome::NotSent {
        reason: "target.api_key: ...".into(),
        key_related: true,
    };
    let d = s.run(&o, &Evidence::default());
    assert_eq!(d.kind, Kind::KeyNotSendable);
    assert_says(&d, &["nothing was sent", "newline", "tr -d"]);
    // Without a visible reason, still a cause and a fix.
    let d = local().run(&o, &Evidence::default());
    assert_says(&d, &["not allowed in a header", "copy the key again"]);
}

#[test]
fn other_setup_errors_are_shown_as_is() {
    let o = Outcome::NotSent {
        reason: "target.headers: `x y` is not a valid HTTP header name".into(),
        key_related: false,
    };
    let d = local().run(&o, &Evidence::default());
    assert_eq!(d.kind, Kind::Setup);
    assert!(d.kind.is_target_level());
    assert_says(&d, &["target.headers"]);
}

#[test]
fn unauthorized_without_a_key() {
    let s = Setup::new("https://api.openai.com/v1", None);
    let d = s.run(&status(401, None, "missing key"), &Evidence::default());
    assert_eq!(d.kind, Kind::KeyMissing);
    assert_says(
        &d,
        &[
            "no API key was sent",
            "$OPENAI_API_KEY is not set",
            "set $OPENAI_API_KEY",
        ],
    );
}

#[test]
fn unauthorized_names_each_key_defect() {
    let cases = [
        ("sk-01234567 89abcdef", "a space or a tab"),
        ("\"sk-0123456789abcdef\"", "quotes"),
        ("Bearer sk-0123456789abcdef", "Bearer"),
        ("your-api-key-here", "placeholder"),
        ("sk-0123456789abcdef\u{200b}", "non-ASCII"),
        ("", "empty"),
    ];
    for (key, word) in cases {
        let s = Setup::new("http://127.0.0.1:8000/v1", Some(key));
        let d = s.run(
            &status(
                401,
                Some("invalid_api_key"),
                "Incorrect API key provided: ***",
            ),
            &Evidence::default(),
        );
        assert_eq!(d.kind, Kind::KeyRejected, "{key:?}");
        assert_says(&d, &[word, "$OPENAI_API_KEY"]);
        assert_eq!(
            d.server_said.as_deref(),
            Some("Incorrect API key provided: ***")
        );
    }
}

#[test]
fn unauthorized_with_a_foreign_key() {
    let s = Setup::new("https://api.openai.com/v1", Some("sk-ant-api03-0123456789"));
    let d = s.run(
        &status(401, None, "Incorrect API key"),
        &Evidence::default(),
    );
    assert_eq!(d.kind, Kind::KeyRejected);
    assert_says(
        &d,
        &[
            "an Anthropic key",
            "sk-ant-",
            "OpenAI's API (api.openai.com)",
        ],
    );
}

#[test]
fn unauthorized_with_a_clean_key() {
    let d = local().run(&status(401, None, "bad key"), &Evidence::default());
    assert_eq!(d.kind, Kind::KeyRejected);
    assert!(d.kind.is_target_level());
    assert_says(&d, &["…cdef", "wrong, revoked", "valid key for 127.0.0.1"]);
    let a = Setup::new("http://gw/v1", Some("0123456789abcdef")).anthropic();
    let d = a.run(&status(401, None, "bad key"), &Evidence::default());
    assert_says(&d, &["x-api-key", "target.headers"]);
}

#[test]
fn forbidden_by_region_org_model_or_other() {
    let cases = [
        (
            "Country, region, or territory not supported",
            "country or region",
        ),
        (
            "You are not a member of this organization",
            "organization or project",
        ),
        (
            "Project does not have access to model gpt-4o",
            "organization or project",
        ),
        (
            "You do not have access to this model",
            "no access to the model `gpt-4o-mnii`",
        ),
        ("Forbidden", "permissions"),
    ];
    for (msg, want) in cases {
        let d = local().run(&status(403, None, msg), &Evidence::default());
        assert_eq!(d.kind, Kind::Forbidden, "{msg}");
        assert_says(&d, &[want, "403"]);
        assert!(!d.kind.is_target_level());
    }
}

// ---------------------------------------------------------------- paths and pages

#[test]
fn not_found_on_the_path_with_a_confirmed_base() {
    let s = Setup::new("http://127.0.0.1:8000", Some("sk-0123456789abcdef"));
    let o = status(404, None, "Invalid URL (POST /chat/completions)");
    assert_eq!(
        wanted_probes(&o),
        Probes {
            models: true,
            bases: true
        }
    );
    let ev = Evidence {
        working_base: Some("http://127.0.0.1:8000/v1".into()),
        ..Evidence::default()
    };
    let d = s.run(&o, &ev);
    assert_eq!(d.kind, Kind::PathNotFound);
    assert!(d.kind.is_target_level());
    assert_says(
        &d,
        &[
            "POST http://127.0.0.1:8000/chat/completions answered 404",
            "set the base URL to http://127.0.0.1:8000/v1",
            "Invalid URL",
        ],
    );
}

#[test]
fn not_found_on_the_path_without_confirmation_gives_hints() {
    let s = Setup::new(
        "https://api.openai.com/v1/chat/completions",
        Some("sk-0123456789abcdef"),
    );
    let d = s.run(&status(404, None, "not found"), &Evidence::default());
    assert_eq!(d.kind, Kind::PathNotFound);
    assert_says(&d, &["remove `/chat/completions`", "ending in /v1"]);
    let s = Setup::new("http://h:1", Some("sk-0123456789abcdef"));
    let d = s.run(
        &status(405, None, "Method Not Allowed"),
        &Evidence::default(),
    );
    assert_eq!(d.kind, Kind::PathNotFound);
    assert_says(&d, &["405", "/v1"]);
}

#[test]
fn not_found_with_a_working_base_url_means_another_api() {
    let ev = Evidence {
        models: Some(vec!["m".into()]),
        base_answers: true,
        ..Evidence::default()
    };
    let d = local()
        .anthropic()
        .run(&status(404, None, "Not Found"), &ev);
    assert_eq!(d.kind, Kind::WrongApi);
    assert_says(&d, &["no /messages", "anthropic-messages", "target.api"]);
}

/// `check --from codex` against a server without /responses: the fix is Codex's `wire_api`,
/// in the provider's section of config.toml, not `target.api`.
#[test]
fn not_found_from_a_codex_config_says_wire_api() {
    let ev = Evidence {
        models: Some(vec!["m".into()]),
        base_answers: true,
        ..Evidence::default()
    };
    let mut s = local();
    s.api = Api::OpenAiResponses;
    s.api_setting = crate::check::diagnosis::ApiSetting::Codex {
        config: "/home/u/.codex/config.toml".into(),
        provider: "vllm".into(),
        built_in: false,
    };
    let d = s.run(&status(404, None, "Not Found"), &ev);
    assert_eq!(d.kind, Kind::WrongApi);
    assert_says(
        &d,
        &[
            "no /responses",
            "`wire_api = \"chat\"` in [model_providers.vllm] of /home/u/.codex/config.toml",
        ],
    );
    assert!(d.fixes.iter().all(|f| !f.contains("target.api")), "{d:?}");
}

#[test]
fn html_error_pages() {
    let o = Outcome::Status {
        status: 404,
        error_type: None,
        message: "the server answered with an HTML page".into(),
        html: true,
        quota: false,
    };
    let d = local().run(&o, &Evidence::default());
    assert_eq!(d.kind, Kind::PathNotFound);
    assert_says(&d, &["HTML error page"]);
    assert_eq!(d.server_said, None);
    let o = Outcome::Status {
        status: 403,
        error_type: None,
        message: "the server answered with an HTML page".into(),
        html: true,
        quota: false,
    };
    assert_eq!(
        wanted_probes(&o),
        Probes {
            models: false,
            bases: true
        }
    );
    let d = local().run(&o, &Evidence::default());
    assert_eq!(d.kind, Kind::HtmlPage);
    assert_says(
        &d,
        &["HTML page instead of JSON", "web page", "proxy", "/v1"],
    );
}

#[test]
fn html_with_status_200() {
    let o = Outcome::NotStream {
        status: 200,
        content_type: "text/html".into(),
        html: true,
        error: None,
    };
    assert!(wanted_probes(&o).bases);
    let ev = Evidence {
        working_base: Some("https://example.com/v1".into()),
        ..Evidence::default()
    };
    let d = Setup::new("https://example.com", None).run(&o, &ev);
    assert_eq!(d.kind, Kind::HtmlPage);
    assert_says(
        &d,
        &["HTML page", "set the base URL to https://example.com/v1"],
    );
}

// ---------------------------------------------------------------- models

#[test]
fn unknown_model_with_a_list_suggests_the_closest() {
    let o = status(
        404,
        Some("model_not_found"),
        "The model `gpt-4o-mnii` does not exist or you do not have access to it.",
    );
    assert_eq!(
        wanted_probes(&o),
        Probes {
            models: true,
            bases: false
        }
    );
    let ev = Evidence {
        models: Some(vec!["gpt-4o".into(), "gpt-4o-mini".into()]),
        base_answers: true,
        ..Evidence::default()
    };
    let d = local().run(&o, &ev);
    assert_eq!(d.kind, Kind::ModelNotFound);
    assert!(!d.kind.is_target_level());
    assert_says(
        &d,
        &[
            "does not know the model `gpt-4o-mnii`",
            "did you mean `gpt-4o-mini`?",
            "lists: gpt-4o, gpt-4o-mini",
        ],
    );
}

#[test]
fn unknown_model_without_a_close_name_or_a_list() {
    let o = status(404, Some("model_not_found"), "nope");
    let ev = Evidence {
        models: Some(vec!["llama3".into()]),
        base_answers: true,
        ..Evidence::default()
    };
    let d = local().run(&o, &ev);
    assert_says(
        &d,
        &["use one of the models the server lists", "lists: llama3"],
    );
    let ev = Evidence {
        models: Some(vec![]),
        base_answers: true,
        ..Evidence::default()
    };
    assert_says(&local().run(&o, &ev), &["lists no models"]);
    assert_says(&local().run(&o, &Evidence::default()), &["documentation"]);
}

// ---------------------------------------------------------------- other statuses

#[test]
fn rate_limits_quota_and_server_errors() {
    let d = local().run(
        &status(429, Some("rate_limit_exceeded"), "slow down"),
        &Evidence::default(),
    );
    assert_eq!(d.kind, Kind::RateLimited);
    assert_says(&d, &["rate limit", "wait"]);
    let q = Outcome::Status {
        status: 429,
        error_type: Some("insufficient_quota".into()),
        message: "You exceeded your current quota".into(),
        html: false,
        quota: true,
    };
    let d = local().run(&q, &Evidence::default());
    assert_eq!(d.kind, Kind::Quota);
    assert_says(&d, &["credit", "spend limit"]);
    for (code, word) in [
        (500, "internal error"),
        (502, "gateway"),
        (503, "overloaded"),
        (529, "overloaded"),
    ] {
        let d = local().run(&status(code, None, "x"), &Evidence::default());
        assert_eq!(d.kind, Kind::ServerError);
        assert_says(&d, &[word, "retry later"]);
    }
    let d = local().run(&status(418, None, "teapot"), &Evidence::default());
    assert_eq!(d.kind, Kind::HttpError);
    assert_says(&d, &["418", "teapot"]);
}

#[test]
fn bad_requests_with_known_hints() {
    let d = local().run(
        &status(
            400,
            None,
            "Unsupported parameter: 'max_tokens'. Use 'max_completion_tokens' instead.",
        ),
        &Evidence::default(),
    );
    assert_eq!(d.kind, Kind::BadRequest);
    assert_says(
        &d,
        &[
            "max_tokens_field: max_completion_tokens",
            "--max-tokens-field",
        ],
    );
    let d = local().run(
        &status(422, None, "stream_options: extra fields not permitted"),
        &Evidence::default(),
    );
    assert_says(&d, &["stream_options: null"]);
    let d = local().run(
        &status(400, None, "temperature out of range"),
        &Evidence::default(),
    );
    assert_says(&d, &["does not fit", "temperature out of range"]);
    // An unknown model reported as 400 is still an unknown model.
    let d = local().run(&status(400, None, "Model Not Exist"), &Evidence::default());
    assert_eq!(d.kind, Kind::ModelNotFound);
}

#[test]
fn an_empty_400_names_the_part_whose_removal_was_accepted() {
    use crate::check::culprit::{Culprit, Part};
    let ev = Evidence {
        tried: vec![Part::RequestIdHeader("x-request-id".into())],
        culprit: Some(Culprit {
            what: "the `x-request-id` header that carries ladder's request id".into(),
            fix: "s.yaml:2: add `request_id_header: none` under target:".into(),
        }),
        ..Evidence::default()
    };
    let d = local().run(&status(400, None, ""), &ev);
    assert_eq!(d.kind, Kind::BadRequest);
    assert!(!d.kind.is_target_level());
    assert_says(
        &d,
        &[
            "HTTP 400: the server rejects the `x-request-id` header",
            "the same request without",
            "s.yaml:2: add `request_id_header: none`",
        ],
    );
    // Everything was tried and rejected: the problem is elsewhere, and the list says so.
    let ev = Evidence {
        tried: vec![Part::StreamOptions, Part::Header("x-team".into())],
        ..Evidence::default()
    };
    let d = local().run(&status(400, None, ""), &ev);
    assert_says(&d, &["even without", "stream_options, header `x-team`"]);
}

// ---------------------------------------------------------------- no answer

#[test]
fn connection_refused() {
    let d = local().run(
        &no_answer(
            ErrorClass::Connect,
            "error connecting: tcp connect error: Connection refused (os error 111)",
        ),
        &Evidence::default(),
    );
    assert_eq!(d.kind, Kind::ConnectionRefused);
    assert!(d.kind.is_target_level());
    assert_says(
        &d,
        &[
            "nothing is listening on 127.0.0.1:8000",
            "start the server",
            "Ollama 11434",
        ],
    );
    let remote = Setup::new("https://api.example.com/v1", None);
    let d = remote.run(
        &no_answer(ErrorClass::Connect, "Connection refused"),
        &Evidence::default(),
    );
    assert!(!text(&d).contains("Ollama"));
}

#[test]
fn dns_failure() {
    let s = Setup::new("https://api.opneai.com/v1", None);
    let d = s.run(
        &no_answer(ErrorClass::Connect, "error connecting: dns error: failed to lookup address information: Name or service not known"),
        &Evidence::default(),
    );
    assert_eq!(d.kind, Kind::Dns);
    assert_says(&d, &["`api.opneai.com`", "typo", "VPN"]);
}

#[test]
fn tls_failures() {
    let s = Setup::new("https://127.0.0.1:8000/v1", None);
    let cases = [
        (
            "received corrupt message of type InvalidContentType",
            "use http:// instead of https://",
        ),
        ("invalid peer certificate: UnknownIssuer", "not trusted"),
        ("invalid peer certificate: Expired", "expired"),
        ("invalid peer certificate: NotValidForName", "host name"),
    ];
    for (detail, want) in cases {
        let d = s.run(
            &no_answer(ErrorClass::Connect, detail),
            &Evidence::default(),
        );
        assert_eq!(d.kind, Kind::Tls, "{detail}");
        assert_says(
            &d,
            &[want, "TLS handshake with 127.0.0.1:8000 failed", detail],
        );
    }
    // Behind a proxy, a TLS error is still a TLS error.
    let d = s.proxied().run(
        &no_answer(
            ErrorClass::Connect,
            "invalid peer certificate: UnknownIssuer",
        ),
        &Evidence::default(),
    );
    assert_eq!(d.kind, Kind::Tls);
    assert_says(&d, &["corporate proxy"]);
}

#[test]
fn proxy_failures_name_the_variable() {
    let s = Setup::new("https://api.openai.com/v1", None).proxied();
    let d = s.run(
        &no_answer(ErrorClass::Connect, "error connecting: Connection refused"),
        &Evidence::default(),
    );
    assert_eq!(d.kind, Kind::Proxy);
    assert_says(
        &d,
        &[
            "HTTPS_PROXY=http://***@proxy.corp:3128",
            "NO_PROXY=api.openai.com",
        ],
    );
    assert!(
        !d.notes.iter().any(|n| n.contains("proxy")),
        "no duplicate note"
    );
    let d = s.run(
        &no_answer(ErrorClass::Connect, "unsuccessful tunnel"),
        &Evidence::default(),
    );
    assert_says(&d, &["tunnel", "user:pass@proxy"]);
    let d = s.run(
        &no_answer(ErrorClass::TimeoutConnect, "timed out"),
        &Evidence::default(),
    );
    assert_eq!(d.kind, Kind::Proxy);
}

#[test]
fn timeouts() {
    let d = local().run(
        &no_answer(ErrorClass::TimeoutConnect, "timed out"),
        &Evidence::default(),
    );
    assert_eq!(d.kind, Kind::ConnectTimeout);
    assert_says(&d, &["firewall", "HTTPS_PROXY", "use https://"]);
    let tls = Setup::new("https://127.0.0.1:8000/v1", None);
    let d = tls.run(
        &no_answer(ErrorClass::TimeoutConnect, "timed out"),
        &Evidence::default(),
    );
    assert_says(&d, &["TLS handshake", "use http://"]);
    let d = local().run(
        &no_answer(
            ErrorClass::TimeoutFirstToken,
            "no response headers before the timeout",
        ),
        &Evidence::default(),
    );
    assert_eq!(d.kind, Kind::ResponseTimeout);
    assert!(!d.kind.is_target_level());
    assert_says(&d, &["no answer within 20s", "--timeout 60s", "cold start"]);
}

#[test]
fn closed_without_answer_and_other_connect_errors() {
    let d = local().run(
        &no_answer(
            ErrorClass::Disconnect,
            "connection closed before message completed",
        ),
        &Evidence::default(),
    );
    assert_eq!(d.kind, Kind::ClosedWithoutAnswer);
    assert_says(&d, &["https://", "TLS"]);
    let s = Setup::new("https://h/v1", None);
    let d = s.run(
        &no_answer(ErrorClass::Disconnect, "reset"),
        &Evidence::default(),
    );
    assert_says(
        &d,
        &["closed the connection", "retry", "target.tls.client_cert"],
    );
    // What a client without a certificate may see of a server that wants one: the connection
    // closed before the request went out (the TLS alert lost in the race).
    let d = s.run(
        &no_answer(
            ErrorClass::Disconnect,
            "error sending the request: client error (Canceled): operation was canceled: connection was not ready",
        ),
        &Evidence::default(),
    );
    assert_eq!(d.kind, Kind::ClosedWithoutAnswer);
    assert_says(&d, &["mutual TLS", "target.tls.client_key"]);
    // A plain-http target is told about https, not about client certificates.
    let d = local().run(
        &no_answer(ErrorClass::Disconnect, "reset"),
        &Evidence::default(),
    );
    assert!(!text(&d).contains("client_cert"), "{}", text(&d));
    let d = local().run(
        &no_answer(ErrorClass::Connect, "something odd"),
        &Evidence::default(),
    );
    assert_eq!(d.kind, Kind::ConnectFailed);
    assert_says(&d, &["something odd", "reachable"]);
}

// ---------------------------------------------------------------- 200, but

#[test]
fn two_hundred_without_a_stream() {
    let o = Outcome::NotStream {
        status: 200,
        content_type: "application/json".into(),
        html: false,
        error: None,
    };
    assert_eq!(wanted_probes(&o), Probes::default());
    let d = local().run(&o, &Evidence::default());
    assert_eq!(d.kind, Kind::NotStream);
    assert_says(
        &d,
        &[
            "not an event stream",
            "`application/json`",
            "stream: true",
            "text/event-stream",
        ],
    );
    let o = Outcome::NotStream {
        status: 200,
        content_type: String::new(),
        html: false,
        error: Some("model overloaded".into()),
    };
    let d = local().run(&o, &Evidence::default());
    assert_eq!(d.kind, Kind::NotStream);
    assert_says(&d, &["error object", "model overloaded"]);
    let o = Outcome::NotStream {
        status: 200,
        content_type: String::new(),
        html: false,
        error: None,
    };
    assert_says(&local().run(&o, &Evidence::default()), &["no content type"]);
}

#[test]
fn failures_inside_the_stream() {
    let cases = [
        (
            ErrorClass::Empty,
            Kind::Empty,
            "without any generated token",
        ),
        (ErrorClass::Disconnect, Kind::StreamBroken, "proxy"),
        (ErrorClass::Protocol, Kind::Malformed, "target.api"),
        (ErrorClass::TimeoutIdle, Kind::StreamStalled, "stalled"),
        (
            ErrorClass::StreamError,
            Kind::StreamError,
            "(overloaded_error)",
        ),
        // Classified in the stream (the Responses API's `response.failed` by `error.code`).
        (ErrorClass::Http429, Kind::RateLimited, "rate limit"),
        (ErrorClass::Http5xx, Kind::ServerError, "server error"),
    ];
    for (class, kind, word) in cases {
        let o = Outcome::StreamFailed {
            class,
            error_type: Some("overloaded_error".into()),
            message: "Overloaded".into(),
        };
        let d = local().run(&o, &Evidence::default());
        assert_eq!(d.kind, kind, "{class:?}");
        assert!(!d.kind.is_target_level());
        assert_says(&d, &[word, "Overloaded"]);
    }
}

#[test]
fn server_messages_are_cut() {
    let long = "x".repeat(1000);
    let d = local().run(&status(418, None, &long), &Evidence::default());
    assert_eq!(d.server_said.map(|s| s.len()), Some(300));
    let d = local().run(&status(418, None, "  "), &Evidence::default());
    assert_eq!(d.server_said, None);
}

/// Issue 19: nginx with `ssl_verify_client on` answers its own 400 page; the diagnosis is the
/// client certificate, naming the settings, not "an HTML page instead of JSON".
#[test]
fn nginx_asking_for_a_client_certificate() {
    use crate::client::http::CLIENT_CERT_WANTED;
    for (message, headline) in [
        (
            format!("{CLIENT_CERT_WANTED} (its page says \"No required SSL certificate was sent\")"),
            "HTTP 400: the server wants a TLS client certificate",
        ),
        (
            format!("{CLIENT_CERT_WANTED} and rejected the one sent (its page says \"The SSL certificate error\")"),
            "HTTP 400: the server rejected the TLS client certificate",
        ),
    ] {
        let o = Outcome::Status {
            status: 400,
            error_type: None,
            message,
            html: false,
            quota: false,
        };
        assert_eq!(wanted_probes(&o), Probes::default());
        let d = local().run(&o, &Evidence::default());
        assert_eq!(d.kind, Kind::Tls);
        assert_says(
            &d,
            &[
                headline,
                "mutual TLS",
                "target.tls.client_cert",
                "target.tls.client_key",
            ],
        );
        assert!(!format!("{d:?}").contains("HTML page instead"), "{d:?}");
    }
}

#[test]
fn an_embeddings_answer_is_diagnosed_as_an_answer_not_a_stream() {
    let mut setup = local();
    setup.api = Api::OpenAiEmbeddings;
    let o = Outcome::Embedded {
        e2e_ms: 12.4,
        input_tokens: Some(7),
    };
    let d = setup.run(&o, &Evidence::default());
    assert_eq!(d.kind, Kind::Ok);
    assert_says(&d, &["E2E 12 ms, 1 vector, 7 input tokens, usage reported"]);
    let o = Outcome::Embedded {
        e2e_ms: 12.4,
        input_tokens: None,
    };
    let d = setup.run(&o, &Evidence::default());
    assert_eq!(d.kind, Kind::OkNoUsage);
    assert_says(
        &d,
        &[
            "no usage in the answer",
            "input tokens per minute will read 0",
        ],
    );
    let o = Outcome::StreamFailed {
        class: ErrorClass::Protocol,
        error_type: None,
        message: "a vector of lists: one vector per token, not per input".into(),
    };
    let d = setup.run(&o, &Evidence::default());
    assert_eq!(d.kind, Kind::Malformed);
    assert_says(
        &d,
        &[
            "not an embeddings answer",
            "--pooling mean",
            "one vector per token",
        ],
    );
}
