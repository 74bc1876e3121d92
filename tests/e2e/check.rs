//! `ladder check`: one test per diagnosis, against the embedded simulator (in-process, or via a
//! scenario with `target.sim`) or a tiny local server that answers like the failing case. Each
//! asserts that the output names the cause and the fix, the exit code, and that the key never
//! appears in the output.

use crate::support::{sim_scenario, Project};
use ladder::sim::SimParams;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub(crate) const KEY: &str = "sk-right-key-LEAKCHECK-1234";

/// The simulator on 127.0.0.1, served by its own runtime for the duration of a test.
struct Sim {
    _rt: tokio::runtime::Runtime,
    _handle: ladder::sim::SimHandle,
    /// `http://127.0.0.1:PORT/v1`
    base: String,
}

impl Sim {
    fn start(sets: &[(&str, &str)]) -> Sim {
        let mut params = SimParams {
            ttft: Duration::from_millis(5),
            tpot: Duration::from_millis(1),
            ..SimParams::default()
        };
        for (k, v) in sets {
            params.set(k, v).unwrap();
        }
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let handle = rt
            .block_on(ladder::sim::start(params, ([127, 0, 0, 1], 0).into()))
            .unwrap();
        let base = handle.base_url();
        Sim {
            _rt: rt,
            _handle: handle,
            base,
        }
    }

    fn with_key() -> Sim {
        Sim::start(&[("require_api_key", KEY)])
    }

    /// `http://127.0.0.1:PORT` (no `/v1`).
    fn root(&self) -> String {
        self.base.trim_end_matches("/v1").to_string()
    }
}

/// What a fake server answers: status line, content type, body.
pub(crate) type Answer = (&'static str, &'static str, String);

/// A tiny HTTP/1.1 server: one thread per connection, `Connection: close`, answers from `route`;
/// records the request bodies it got.
pub(crate) struct Fake {
    pub(crate) base: String,
    pub(crate) bodies: Arc<Mutex<Vec<String>>>,
}

/// Answers before `route` when it returns `Some`: gets the request head and body.
pub(crate) type Guard = fn(&str, &str) -> Option<Answer>;

impl Fake {
    pub(crate) fn start(route: fn(&str, &str) -> Answer) -> Fake {
        Fake::start_guarded(route, |_, _| None)
    }

    pub(crate) fn start_guarded(route: fn(&str, &str) -> Answer, guard: Guard) -> Fake {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let seen = bodies.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let seen = seen.clone();
                std::thread::spawn(move || serve(stream, route, guard, &seen));
            }
        });
        Fake {
            base: format!("http://{addr}"),
            bodies,
        }
    }
}

fn serve(
    mut s: TcpStream,
    route: fn(&str, &str) -> Answer,
    guard: Guard,
    seen: &Mutex<Vec<String>>,
) {
    s.set_read_timeout(Some(Duration::from_secs(5))).ok();
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let len: usize = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .unwrap_or(0);
    while buf.len() < head_end + len {
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    let body = String::from_utf8_lossy(&buf[head_end..]).to_string();
    seen.lock().unwrap().push(body.clone());
    let mut first = head.lines().next().unwrap_or("").split(' ');
    let (method, path) = (first.next().unwrap_or(""), first.next().unwrap_or(""));
    let (status, ctype, body) = guard(&head, &body).unwrap_or_else(|| route(method, path));
    if status == "hang" {
        std::thread::sleep(Duration::from_secs(5));
        return;
    }
    let _ = write!(
        s,
        "HTTP/1.1 {status}\r\ncontent-type: {ctype}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
}

/// A port on 127.0.0.1 where nothing listens.
fn closed_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

pub(crate) struct Out {
    pub(crate) code: i32,
    pub(crate) stdout: String,
}

/// Runs `ladder check ARGS` with `key` in `$CHECK_KEY` and no proxy settings; asserts the key
/// is in neither stdout nor stderr.
pub(crate) fn check(p: &Project, args: &[&str], key: Option<&str>) -> Out {
    let mut cmd = p.ladder();
    cmd.arg("check").args(args);
    for v in [
        "HTTP_PROXY",
        "http_proxy",
        "HTTPS_PROXY",
        "https_proxy",
        "ALL_PROXY",
        "all_proxy",
        "NO_PROXY",
        "no_proxy",
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
        "ANTHROPIC_MODEL",
    ] {
        cmd.env_remove(v);
    }
    if let Some(k) = key {
        cmd.env("CHECK_KEY", k);
    }
    cmd.timeout(Duration::from_secs(30));
    let o = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout).to_string();
    let stderr = String::from_utf8_lossy(&o.stderr).to_string();
    for leak in ["LEAKCHECK", KEY] {
        assert!(
            !stdout.contains(leak) && !stderr.contains(leak),
            "key printed:\n{stdout}\n{stderr}"
        );
    }
    Out {
        code: o.status.code().unwrap_or(-1),
        stdout: stdout + &stderr,
    }
}

pub(crate) fn says(out: &Out, words: &[&str]) {
    for w in words {
        assert!(out.stdout.contains(w), "missing `{w}` in:\n{}", out.stdout);
    }
}

// ------------------------------------------------------------------------ ok

#[test]
fn ok_against_a_simulator_scenario() {
    let p = Project::new();
    let yaml = sim_scenario("ok", "    ttft: 5ms\n    tpot: 1ms", "  ladder: [1]", 50);
    let f = p.scenario("ok", &yaml);
    let out = check(&p, &[f.to_str().unwrap()], None);
    assert_eq!(out.code, 0, "{}", out.stdout);
    says(
        &out,
        &[
            "ok  sim-model  TTFT ",
            "5 tokens, usage reported (stream_options honoured)",
            "checked 1 model(s): 1 ok, 0 failed",
        ],
    );
}

fn sse_without_usage(method: &str, path: &str) -> Answer {
    match (method, path) {
        ("POST", "/v1/chat/completions") => (
            "200 OK",
            "text/event-stream",
            ["Hel", "lo", "!"]
                .iter()
                .map(|t| {
                    format!("data: {{\"choices\":[{{\"delta\":{{\"content\":\"{t}\"}}}}]}}\n\n")
                })
                .collect::<String>()
                + "data: [DONE]\n\n",
        ),
        _ => ("404 Not Found", "application/json", "{}".into()),
    }
}

#[test]
fn ok_without_usage_notes_chunk_counting_and_sends_a_tiny_request() {
    let fake = Fake::start(sse_without_usage);
    let p = Project::new();
    let base = format!("{}/v1", fake.base);
    let out = check(&p, &["--base-url", &base, "--model", "m1"], None);
    assert_eq!(out.code, 0, "{}", out.stdout);
    says(
        &out,
        &[
            "ok  m1  TTFT ",
            "3 token events, no usage in the stream",
            "tokens_source=chunks",
            "no key ($OPENAI_API_KEY not set)",
        ],
    );
    let bodies = fake.bodies.lock().unwrap();
    let body: serde_json::Value = serde_json::from_str(&bodies[0]).unwrap();
    assert_eq!(body["max_completion_tokens"], 5);
    assert!(body.get("max_tokens").is_none(), "{body}");
    assert_eq!(body["stream"], true);
    assert_eq!(body["model"], "m1");
}

// ------------------------------------------------------------------------ keys

#[test]
fn rejected_key_is_named_masked_and_never_echoed() {
    let sim = Sim::with_key();
    let p = Project::new();
    let wrong = "sk-wrong-key-LEAKCHECK-9876";
    let args = key_args(&sim.base);
    let out = check(&p, &args, Some(wrong));
    assert_eq!(out.code, 1, "{}", out.stdout);
    says(
        &out,
        &[
            "FAIL  sim-model  HTTP 401: the server rejected the API key",
            "key …9876 from $CHECK_KEY",
            "wrong, revoked",
            "fix:   create or copy a valid key",
            "Incorrect API key provided: ***",
        ],
    );
    // The right key passes.
    let out = check(&p, &args, Some(KEY));
    assert_eq!(out.code, 0, "{}", out.stdout);
}

/// Issue 19: one rule for the whitespace around a key, in `check` as in `run`: a trailing
/// newline (a key file read as is) is dropped before sending by both, and `check` says so; a
/// newline inside the key is refused by both before anything is sent.
#[test]
fn key_with_a_trailing_newline_is_sent_without_it_by_check_and_run() {
    let sim = Sim::with_key();
    let p = Project::new();
    let args = key_args(&sim.base);
    let out = check(&p, &args, Some(&format!("{KEY}\n")));
    assert_eq!(out.code, 0, "{}", out.stdout);
    says(
        &out,
        &["ok  sim-model", "whitespace around it", "as in `run`"],
    );
    let yaml = format!(
        "name: keynl\ntarget:\n  api: openai-chat\n  base_url: {}\n  api_key: ${{CHECK_KEY}}\n  models: [sim-model]\nrequest:\n  prompt_file: prompts/p.txt\n  max_tokens: 3\nload:\n  ladder: [1]\n  requests_per_step: 2\n",
        sim.base
    );
    let f = p.scenario("keynl", &yaml);
    let file = f.to_str().unwrap();
    let out = check(&p, &[file], Some(&format!("{KEY}\r\n")));
    assert_eq!(out.code, 0, "{}", out.stdout);
    let run = |key: String| {
        p.ladder()
            .env("CHECK_KEY", key)
            .args(["-q", "run"])
            .arg(&f)
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap()
    };
    let o = run(format!("{KEY}\n"));
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let dir = &p.run_dirs("keynl")[0];
    let requests = std::fs::read_to_string(dir.join("requests.csv")).unwrap();
    assert_eq!(requests.matches(",ok,").count(), 2, "{requests}");

    // A newline inside the key: neither sends it.
    let inside = format!("{}\n{}", &KEY[..8], &KEY[8..]);
    let out = check(&p, &args, Some(&inside));
    assert_eq!(out.code, 1, "{}", out.stdout);
    says(&out, &["cannot be sent", "contains a newline", "tr -d"]);
    assert!(
        !out.stdout.contains("234\n"),
        "raw newline in the masked key"
    );
    let o = run(inside);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("target.api_key"));
    assert_eq!(
        p.run_dirs("keynl").len(),
        1,
        "the refused run left a directory"
    );
}

#[test]
fn key_with_whitespace_quotes_or_the_wrong_provider() {
    let sim = Sim::with_key();
    let p = Project::new();
    let args = key_args(&sim.base);
    let cases = [
        (
            format!("{} {}", &KEY[..8], &KEY[8..]),
            "contains a space or a tab",
            "remove the spaces",
        ),
        (
            format!("\"{KEY}\""),
            "includes its quotes",
            "remove the quotes",
        ),
        (
            "sk-ant-api03-LEAKCHECK-abcdef".to_string(),
            "looks like an Anthropic key",
            "use a key issued for this endpoint",
        ),
    ];
    for (key, cause, fix) in cases {
        let out = check(&p, &args, Some(&key));
        assert_eq!(out.code, 1, "{}", out.stdout);
        says(&out, &["HTTP 401", cause, fix]);
    }
}

#[test]
fn missing_key() {
    let sim = Sim::with_key();
    let p = Project::new();
    let out = check(&p, &["--base-url", &sim.base, "--model", "sim-model"], None);
    assert_eq!(out.code, 1, "{}", out.stdout);
    says(
        &out,
        &[
            "HTTP 401: no API key was sent",
            "$OPENAI_API_KEY is not set",
            "set $OPENAI_API_KEY",
        ],
    );
}

fn forbidden(_: &str, _: &str) -> Answer {
    (
        "403 Forbidden",
        "application/json",
        r#"{"error":{"message":"Country, region, or territory not supported","type":"request_forbidden","code":"unsupported_country_region_territory"}}"#.into(),
    )
}

#[test]
fn forbidden_by_region() {
    let fake = Fake::start(forbidden);
    let p = Project::new();
    let base = format!("{}/v1", fake.base);
    let out = check(
        &p,
        &[
            "--base-url",
            &base,
            "--model",
            "m",
            "--api-key-env",
            "CHECK_KEY",
        ],
        Some(KEY),
    );
    assert_eq!(out.code, 1, "{}", out.stdout);
    says(
        &out,
        &[
            "HTTP 403",
            "does not serve requests from your country or region",
            "supported region",
        ],
    );
}

/// nginx's own page for `ssl_verify_client on` without a client certificate (byte for byte).
fn nginx_wants_a_client_cert(_: &str, _: &str) -> Answer {
    (
        "400 Bad Request",
        "text/html",
        "<html>\r\n<head><title>400 No required SSL certificate was sent</title></head>\r\n<body>\r\n<center><h1>400 Bad Request</h1></center>\r\n<center>No required SSL certificate was sent</center>\r\n<hr><center>nginx/1.22.1</center>\r\n</body>\r\n</html>\r\n".into(),
    )
}

/// Issue 19: behind nginx with `ssl_verify_client on`, `check` names the client certificate
/// and the settings, not "an HTML page instead of JSON". (`make compat` does the same against
/// a real nginx when one is installed.)
#[test]
fn nginx_wanting_a_client_certificate_names_the_tls_settings() {
    let fake = Fake::start(nginx_wants_a_client_cert);
    let p = Project::new();
    let base = format!("{}/v1", fake.base);
    let out = check(&p, &["--base-url", &base, "--model", "m"], None);
    assert_eq!(out.code, 1, "{}", out.stdout);
    says(
        &out,
        &[
            "HTTP 400: the server wants a TLS client certificate",
            "mutual TLS",
            "target.tls.client_cert and target.tls.client_key",
        ],
    );
    assert!(!out.stdout.contains("HTML page"), "{}", out.stdout);
}

// ------------------------------------------------------------------------ URLs and models

#[test]
fn unknown_model_lists_models_with_did_you_mean() {
    let sim = Sim::start(&[
        ("known_models_only", "true"),
        ("models.gpt-4o-mini.ttft", "5ms"),
    ]);
    let p = Project::new();
    let out = check(
        &p,
        &["--base-url", &sim.base, "--model", "gpt-4o-mnii"],
        None,
    );
    assert_eq!(out.code, 1, "{}", out.stdout);
    says(
        &out,
        &[
            "HTTP 404: the server does not know the model `gpt-4o-mnii`",
            "did you mean `gpt-4o-mini`?",
            "lists: gpt-4o-mini, sim-model",
        ],
    );
}

#[test]
fn base_url_without_v1_gets_the_corrected_url() {
    let sim = Sim::start(&[]);
    let p = Project::new();
    let out = check(
        &p,
        &["--base-url", &sim.root(), "--model", "sim-model"],
        None,
    );
    assert_eq!(out.code, 1, "{}", out.stdout);
    says(
        &out,
        &[
            "HTTP 404 on the path: the base URL looks wrong",
            &format!("set the base URL to {}", sim.base),
        ],
    );
}

fn web_site(_: &str, path: &str) -> Answer {
    if path == "/v1/models" {
        return (
            "200 OK",
            "application/json",
            r#"{"data":[{"id":"m"}]}"#.into(),
        );
    }
    (
        "200 OK",
        "text/html; charset=utf-8",
        "<!doctype html><html><body>Welcome</body></html>".into(),
    )
}

#[test]
fn html_page_instead_of_json() {
    let fake = Fake::start(web_site);
    let p = Project::new();
    let out = check(&p, &["--base-url", &fake.base, "--model", "m"], None);
    assert_eq!(out.code, 1, "{}", out.stdout);
    says(
        &out,
        &[
            "an HTML page instead of JSON",
            "web page",
            &format!("set the base URL to {}/v1", fake.base),
        ],
    );
}

fn plain_json(_: &str, _: &str) -> Answer {
    (
        "200 OK",
        "application/json",
        r#"{"id":"x","choices":[{"message":{"role":"assistant","content":"ok"}}]}"#.into(),
    )
}

#[test]
fn answer_that_is_not_an_event_stream() {
    let fake = Fake::start(plain_json);
    let p = Project::new();
    let out = check(
        &p,
        &["--base-url", &format!("{}/v1", fake.base), "--model", "m"],
        None,
    );
    assert_eq!(out.code, 1, "{}", out.stdout);
    says(
        &out,
        &[
            "not an event stream (`application/json`)",
            "ignores `stream: true`",
            "enable streaming",
        ],
    );
}

// ------------------------------------------------------------------------ network

#[test]
fn connection_refused() {
    let p = Project::new();
    let base = format!("http://127.0.0.1:{}/v1", closed_port());
    let out = check(&p, &["--base-url", &base, "--model", "m"], None);
    assert_eq!(out.code, 1, "{}", out.stdout);
    says(
        &out,
        &[
            "connection refused",
            "nothing is listening on 127.0.0.1:",
            "start the server",
        ],
    );
}

fn hang(_: &str, _: &str) -> Answer {
    ("hang", "", String::new())
}

#[test]
fn no_answer_before_the_timeout() {
    let fake = Fake::start(hang);
    let p = Project::new();
    let base = format!("{}/v1", fake.base);
    let out = check(
        &p,
        &["--base-url", &base, "--model", "m", "--timeout", "1s"],
        None,
    );
    assert_eq!(out.code, 1, "{}", out.stdout);
    says(&out, &["no answer within 1s", "--timeout 60s"]);
}

/// A plain-HTTP server that answers `400` as soon as a connection opens (as many do to a TLS
/// client hello); returns its port.
fn eager_http_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut s in listener.incoming().flatten() {
            let _ = s.write_all(
                b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
            );
        }
    });
    port
}

#[test]
fn https_to_a_plain_http_server_is_a_tls_error() {
    let port = eager_http_server();
    let p = Project::new();
    let base = format!("https://127.0.0.1:{port}/v1");
    let out = check(
        &p,
        &["--base-url", &base, "--model", "m", "--timeout", "3s"],
        None,
    );
    assert_eq!(out.code, 1, "{}", out.stdout);
    says(
        &out,
        &[
            "TLS handshake with 127.0.0.1:",
            "use http:// instead of https://",
        ],
    );
}

#[test]
fn unknown_host_is_a_dns_error() {
    let p = Project::new();
    let args = [
        "--base-url",
        "http://ladder-check.invalid/v1",
        "--model",
        "m",
        "--timeout",
        "5s",
    ];
    let out = check(&p, &args, None);
    assert_eq!(out.code, 1, "{}", out.stdout);
    says(
        &out,
        &["cannot resolve the host `ladder-check.invalid`", "typo"],
    );
}

#[test]
fn unreachable_proxy_names_the_variable() {
    let p = Project::new();
    let proxy = format!("http://user:pw@127.0.0.1:{}", closed_port());
    let mut cmd = p.ladder();
    cmd.args([
        "check",
        "--base-url",
        "http://api.example.test/v1",
        "--model",
        "m",
    ]);
    for v in [
        "NO_PROXY",
        "no_proxy",
        "ALL_PROXY",
        "all_proxy",
        "http_proxy",
        "OPENAI_API_KEY",
    ] {
        cmd.env_remove(v);
    }
    let o = cmd.env("HTTP_PROXY", &proxy).output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert_eq!(o.status.code(), Some(1), "{out}");
    for w in [
        "through the proxy HTTP_PROXY=http://***@127.0.0.1:",
        "add it to NO_PROXY (e.g. NO_PROXY=api.example.test)",
    ] {
        assert!(out.contains(w), "missing `{w}` in:\n{out}");
    }
    assert!(
        !out.contains("user:pw"),
        "proxy credentials printed:\n{out}"
    );
}

// ------------------------------------------------------------------------ inputs

#[test]
fn claude_code_settings_against_the_simulator() {
    let sim = Sim::with_key();
    let p = Project::new();
    let settings = p.path().join("settings.json");
    let json = serde_json::json!({"env": {
        "ANTHROPIC_BASE_URL": sim.root(),
        "ANTHROPIC_API_KEY": KEY,
        "ANTHROPIC_MODEL": "sim-model",
    }});
    std::fs::write(&settings, json.to_string()).unwrap();
    let out = check(&p, &["--from", settings.to_str().unwrap()], None);
    assert_eq!(out.code, 0, "{}", out.stdout);
    says(
        &out,
        &[
            "/v1 appended",
            "ok  sim-model  TTFT",
            "usage reported",
            "anthropic-messages · ",
            "env.ANTHROPIC_API_KEY in ",
        ],
    );
}

#[test]
fn codex_auth_with_a_base_url() {
    let sim = Sim::with_key();
    let p = Project::new();
    let auth = p.path().join("auth.json");
    std::fs::write(
        &auth,
        serde_json::json!({"OPENAI_API_KEY": KEY}).to_string(),
    )
    .unwrap();
    let from = auth.to_str().unwrap();
    let out = check(
        &p,
        &[
            "--from",
            from,
            "--base-url",
            &sim.base,
            "--model",
            "sim-model",
        ],
        None,
    );
    assert_eq!(out.code, 0, "{}", out.stdout);
    says(&out, &["ok  sim-model", "OPENAI_API_KEY in "]);
    // A Codex auth.json names no model.
    let out = check(&p, &["--from", from], None);
    assert_eq!(out.code, 2, "{}", out.stdout);
    says(&out, &["needs --model"]);
}

#[test]
fn bad_input_exits_2() {
    let p = Project::new();
    let out = check(&p, &["--base-url", "http://127.0.0.1:1/v1"], None);
    assert_eq!(out.code, 2, "{}", out.stdout);
    says(&out, &["--base-url needs --model"]);
    let out = check(&p, &["--from", "no-such-settings.json"], None);
    assert_eq!(out.code, 2, "{}", out.stdout);
    says(&out, &["no-such-settings.json: cannot read"]);
    let out = check(&p, &[], None);
    assert_eq!(out.code, 2, "{}", out.stdout);
    says(&out, &["nothing to check"]);
}

#[test]
fn quiet_prints_only_failures() {
    let p = Project::new();
    let yaml = sim_scenario(
        "two",
        "    ttft: 5ms\n    tpot: 1ms\n    known_models_only: true",
        "  ladder: [1]",
        50,
    )
    .replace("models: [sim-model]", "models: [sim-model, sim-modle]");
    let f = p.scenario("two", &yaml);
    let out = check(&p, &["--quiet", f.to_str().unwrap()], None);
    assert_eq!(out.code, 1, "{}", out.stdout);
    says(&out, &["FAIL  sim-modle", "did you mean `sim-model`?"]);
    assert!(!out.stdout.contains("ok  sim-model"), "{}", out.stdout);
    assert!(!out.stdout.contains("checked 2"), "{}", out.stdout);
    let out = check(&p, &[f.to_str().unwrap()], None);
    says(
        &out,
        &[
            "ok  sim-model",
            "FAIL  sim-modle",
            "checked 2 model(s): 1 ok, 1 failed",
        ],
    );
}

#[test]
fn a_base_url_with_a_query_is_refused_without_echoing_it() {
    let p = crate::support::Project::new();
    let out = p
        .ladder()
        .args([
            "check",
            "--base-url",
            "http://127.0.0.1:9/v1?api-key=hunter3query",
            "--model",
            "m",
        ])
        .assert()
        .code(2);
    let o = out.get_output();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!all.contains("hunter3query"), "{all}");
    assert!(all.contains("query string"), "{all}");
}

/// `--base-url BASE --model sim-model --api-key-env CHECK_KEY`: the key comes from CHECK_KEY.
fn key_args(base: &str) -> [&str; 6] {
    [
        "--base-url",
        base,
        "--model",
        "sim-model",
        "--api-key-env",
        "CHECK_KEY",
    ]
}

// ------------------------------------------------- 4xx without a reason: find the culprit

/// The value of header `name` in a request head.
fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim().eq_ignore_ascii_case(name).then_some(v.trim())
    })
}

fn is_uuid(v: &str) -> bool {
    let g: Vec<&str> = v.split('-').collect();
    g.len() == 5
        && g.iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.chars().all(|c| c.is_ascii_hexdigit()))
}

/// Like llama-cpp-python's request-id middleware: a non-UUID `x-request-id` gets an empty 400.
fn uuid_only(head: &str, _: &str) -> Option<Answer> {
    let id = header(head, "x-request-id")?;
    (!is_uuid(id)).then(|| ("400 Bad Request", "text/plain", String::new()))
}

fn culprit_scenario(p: &Project, base: &str, target_extra: &str, request_extra: &str) -> String {
    let yaml = format!(
        "name: culprit\ntarget:\n  base_url: {base}\n  models: [m1]\n{target_extra}request:\n  prompt_file: prompts/p.txt\n{request_extra}load:\n  ladder: [1]\n"
    );
    p.scenario("culprit", &yaml).to_str().unwrap().to_string()
}

#[test]
fn ladder_request_ids_pass_a_server_that_wants_uuids() {
    let fake = Fake::start_guarded(sse_without_usage, uuid_only);
    let p = Project::new();
    let f = culprit_scenario(&p, &format!("{}/v1", fake.base), "", "");
    let out = check(&p, &[&f], None);
    assert_eq!(out.code, 0, "{}", out.stdout);
}

#[test]
fn a_non_uuid_request_id_header_is_named_with_its_line() {
    let fake = Fake::start_guarded(sse_without_usage, uuid_only);
    let p = Project::new();
    let extra = "  request_id_header: none\n  headers:\n    x-team: core\n    x-request-id: ldr-1234-000001\n";
    let f = culprit_scenario(&p, &format!("{}/v1", fake.base), extra, "");
    let out = check(&p, &[&f], None);
    assert_eq!(out.code, 1, "{}", out.stdout);
    says(
        &out,
        &[
            "FAIL  m1  HTTP 400: the server rejects the extra header `x-request-id` (target.headers)",
            "the same request without",
            &format!("{f}:8: remove the header `x-request-id` from target.headers"),
        ],
    );
    // The first request, then one without stream_options, then one without x-request-id
    // (headers go in name order; accepted): the search stops at the culprit, x-team is kept.
    assert_eq!(fake.bodies.lock().unwrap().len(), 3);
}

/// Rejects ladder's request id header unless it is a plain number (a stricter gateway).
fn numeric_ids_only(head: &str, _: &str) -> Option<Answer> {
    let id = header(head, "x-request-id")?;
    (!id.chars().all(|c| c.is_ascii_digit()))
        .then(|| ("400 Bad Request", "text/plain", "Bad Request".into()))
}

#[test]
fn a_rejected_request_id_header_says_to_turn_it_off() {
    let fake = Fake::start_guarded(sse_without_usage, numeric_ids_only);
    let p = Project::new();
    let f = culprit_scenario(&p, &format!("{}/v1", fake.base), "", "");
    let out = check(&p, &[&f], None);
    assert_eq!(out.code, 1, "{}", out.stdout);
    says(
        &out,
        &[
            "the server rejects the `x-request-id` header that carries ladder's request id",
            &format!("{f}:2: add `request_id_header: none` under target:"),
            "server said: Bad Request",
        ],
    );
}

fn no_stream_options(_: &str, body: &str) -> Option<Answer> {
    body.contains("stream_options")
        .then(|| ("422 Unprocessable Entity", "application/json", "{}".into()))
}

#[test]
fn rejected_stream_options_point_at_extra_body() {
    let fake = Fake::start_guarded(sse_without_usage, no_stream_options);
    let p = Project::new();
    let f = culprit_scenario(
        &p,
        &format!("{}/v1", fake.base),
        "",
        "  extra_body: {seed: 1}\n",
    );
    let out = check(&p, &[&f], None);
    assert_eq!(out.code, 1, "{}", out.stdout);
    says(
        &out,
        &[
            "HTTP 422: the server rejects `stream_options`",
            &format!("{f}:7: add `stream_options: null` to request.extra_body"),
        ],
    );
}

/// Rejects everything with an empty 400.
fn reject_all(_: &str, _: &str) -> Option<Answer> {
    Some(("400 Bad Request", "text/plain", String::new()))
}

#[test]
fn when_no_part_is_to_blame_the_check_says_what_it_tried() {
    let fake = Fake::start_guarded(sse_without_usage, reject_all);
    let p = Project::new();
    let f = culprit_scenario(&p, &format!("{}/v1", fake.base), "", "");
    let out = check(&p, &[&f], None);
    assert_eq!(out.code, 1, "{}", out.stdout);
    says(
        &out,
        &["even without each optional part ladder tried (the `x-request-id` request-id header, stream_options)"],
    );
    assert_eq!(fake.bodies.lock().unwrap().len(), 3);
}

// ------------------------------------------------------------------ Azure OpenAI

/// Like Azure OpenAI's deployment endpoint: the key in `api-key` (a bearer token is a 401),
/// `?api-version=` required (else 404 Resource not found), the deployment in the path.
fn azure(head: &str, _: &str) -> Option<Answer> {
    let first = head.lines().next().unwrap_or("");
    if header(head, "authorization").is_some() || header(head, "api-key") != Some(KEY) {
        let body = r#"{"error":{"code":"401","message":"Access denied due to invalid subscription key or wrong API endpoint."}}"#;
        return Some(("401 Unauthorized", "application/json", body.into()));
    }
    if !first.starts_with("POST /openai/deployments/dep1/chat/completions?api-version=2024-10-21 ")
    {
        let body = r#"{"error":{"code":"404","message":"Resource not found"}}"#;
        return Some(("404 Not Found", "application/json", body.into()));
    }
    None
}

fn azure_route(_: &str, _: &str) -> Answer {
    sse_without_usage("POST", "/v1/chat/completions")
}

#[test]
fn azure_deployment_urls_send_api_key_and_api_version() {
    let fake = Fake::start_guarded(azure_route, azure);
    let p = Project::new();
    let yaml = format!(
        "name: az\ntarget:\n  base_url: {}/openai/deployments/dep1\n  auth: api-key\n  api_version: \"2024-10-21\"\n  api_key: ${{CHECK_KEY}}\n  models: [dep1]\nrequest:\n  prompt_file: prompts/p.txt\nload:\n  ladder: [1]\n  requests_per_step: 2\n",
        fake.base
    );
    let f = p.scenario("az", &yaml);
    let out = check(&p, &[f.to_str().unwrap()], Some(KEY));
    assert_eq!(out.code, 0, "{}", out.stdout);
    let run = p
        .ladder()
        .env("CHECK_KEY", KEY)
        .args(["run", f.to_str().unwrap(), "--no-color"])
        .output()
        .unwrap();
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    // Without `auth: api-key` on a non-Azure host the key goes as a bearer token: refused.
    let bearer = yaml.replace("  auth: api-key\n", "");
    let f = p.scenario("az", &bearer);
    let out = check(&p, &[f.to_str().unwrap()], Some(KEY));
    assert_eq!(out.code, 1, "{}", out.stdout);
    says(&out, &["HTTP 401"]);
}
