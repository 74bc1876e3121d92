//! `ladder check --from codex` as a Codex CLI user types it: a `CODEX_HOME` whose `config.toml`
//! names a provider served by an external `ladder sim` on 127.0.0.1; the check passes, asks the
//! endpoint `wire_api` names (counted by the simulator), and never prints the key.

use crate::support::session::Session;
use crate::support::{start_sim, Sim};

const KEY: &str = "sk-codex-LEAKCHECK-5678";

/// A Codex home in the session's project: `codex-home/config.toml` with a provider `local` at
/// the simulator, speaking `wire_api`, its key in `$LOCAL_SIM_KEY`.
fn codex_home(s: &Session, sim: &Sim, wire_api: &str) -> std::path::PathBuf {
    let home = s.path().join("codex-home");
    std::fs::create_dir_all(&home).unwrap();
    let config = format!(
        r#"model = "sim-model"
model_provider = "local"
approval_policy = "on-request"

[model_providers.local]
name = "ladder sim"
base_url = "{}"
env_key = "LOCAL_SIM_KEY"
wire_api = "{wire_api}"
"#,
        sim.base_url
    );
    std::fs::write(home.join("config.toml"), config).unwrap();
    home
}

fn requests(sim: &Sim, path: &str) -> u64 {
    sim.stats()["requests"][path].as_u64().unwrap_or(0)
}

fn check_from_codex(wire_api: &str, api: &str, path: &str) {
    let sim = start_sim(&["ttft=5ms", "tpot=1ms", &format!("require_api_key={KEY}")]);
    let s = Session::new();
    let home = codex_home(&s, &sim, wire_api);
    let done = s
        .args(["check", "--from", "codex"])
        .env("CODEX_HOME", &home)
        .env("LOCAL_SIM_KEY", KEY)
        .env_remove("OPENAI_API_KEY")
        .stdout(&format!(
            "provider `local` (model_providers.local), wire_api {wire_api} → api {api}"
        ))
        .stdout("ok  sim-model  TTFT ")
        .stdout(&format!("{api} · {}", sim.base_url))
        .stdout("from $LOCAL_SIM_KEY (model_providers.local.env_key)")
        .stdout("checked 1 model(s): 1 ok, 0 failed")
        .stdout_lacks(KEY)
        .run();
    assert!(!done.stderr.contains(KEY), "{}", done.stderr);
    assert!(requests(&sim, path) >= 1, "{path}: {}", sim.stats());
    let other = if path == "/v1/responses" {
        "/v1/chat/completions"
    } else {
        "/v1/responses"
    };
    assert_eq!(requests(&sim, other), 0, "{other}: {}", sim.stats());
}

#[test]
fn codex_config_with_wire_api_responses_checks_the_responses_endpoint() {
    check_from_codex("responses", "openai-responses", "/v1/responses");
}

#[test]
fn codex_config_with_wire_api_chat_checks_chat_completions() {
    check_from_codex("chat", "openai-chat", "/v1/chat/completions");
}

#[test]
fn codex_config_without_its_key_exits_2_naming_the_field() {
    let sim = start_sim(&["ttft=5ms"]);
    let s = Session::new();
    let home = codex_home(&s, &sim, "responses");
    // The home directory itself, as a path, reads the same as `codex`.
    s.args(["check", "--from"])
        .arg(&home)
        .env_remove("LOCAL_SIM_KEY")
        .code(2)
        .stderr("model_providers.local.env_key names $LOCAL_SIM_KEY, which is unset or empty")
        .run();
    assert_eq!(requests(&sim, "/v1/responses"), 0);
}

/// A server with `/v1/models` but no `/v1/responses` (a chat-only server).
fn without_responses(_: &str, path: &str) -> crate::check::Answer {
    if path == "/v1/models" {
        return (
            "200 OK",
            "application/json",
            r#"{"data":[{"id":"sim-model"}]}"#.into(),
        );
    }
    (
        "404 Not Found",
        "application/json",
        r#"{"detail":"Not Found"}"#.into(),
    )
}

/// Issue 36: the fix names Codex's own setting (the provider's `wire_api` in config.toml), not
/// `target.api`, when the dialect came from Codex's config.
#[test]
fn codex_config_against_a_server_without_responses_says_wire_api_chat() {
    let fake = crate::check::Fake::start(without_responses);
    let s = Session::new();
    let home = s.path().join("codex-home");
    std::fs::create_dir_all(&home).unwrap();
    let config = home.join("config.toml");
    std::fs::write(
        &config,
        format!(
            "model = \"sim-model\"\nmodel_provider = \"local\"\n\n[model_providers.local]\n\
             name = \"chat only\"\nbase_url = \"{}/v1\"\nenv_key = \"LOCAL_SIM_KEY\"\n\
             wire_api = \"responses\"\n",
            fake.base
        ),
    )
    .unwrap();
    let out = s
        .args(["check", "--from", "codex"])
        .env("CODEX_HOME", &home)
        .env("LOCAL_SIM_KEY", KEY)
        .env_remove("OPENAI_API_KEY")
        .code(1)
        .stdout("has no /responses")
        .stdout("set `wire_api = \"chat\"` in [model_providers.local] of ")
        .stdout_lacks("target.api")
        .stdout_lacks(KEY)
        .run();
    assert!(out.stdout.contains("config.toml"), "{}", out.stdout);
}
