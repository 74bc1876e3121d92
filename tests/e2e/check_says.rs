//! `ladder check` says what it saw (issue 46): against a simulator that streams its reasoning,
//! one that hides it and one that caches prompt prefixes, the check names each; and
//! `check --from claude` finds Claude Code's settings under a test HOME and CLAUDE_CONFIG_DIR
//! (the project's local file winning over the project's and the user's), or lists every path it
//! tried, exit 2.

use crate::support::session::Session;
use crate::support::{start_sim, Sim};

const KEY: &str = "sk-ant-claude-LEAKCHECK-9012";

fn fast_sim(sets: &[&str]) -> Sim {
    let mut all = vec!["ttft=5ms", "tpot=1ms"];
    all.extend_from_slice(sets);
    start_sim(&all)
}

/// `ladder check --base-url SIM --model sim-model` in a session without Anthropic variables.
fn check_sim(sim: &Sim) -> crate::support::session::Done {
    let s = Session::new();
    s.args(["check", "--base-url", &sim.base_url, "--model", "sim-model"])
        .env_remove("OPENAI_API_KEY")
        .stdout("ok  sim-model  TTFT ")
        .stdout("checked 1 model(s): 1 ok, 0 failed")
        .run()
}

#[test]
fn streamed_reasoning_is_named_with_its_tokens_and_the_ttfc() {
    let sim = fast_sim(&["reasoning_tokens=20", "stream_reasoning=true"]);
    let done = check_sim(&sim);
    for w in [
        "saw:   reasoning, streamed: 20 reasoning tokens",
        "saw:   TTFC ",
        "after reasoning (TTFT ",
    ] {
        assert!(done.stdout.contains(w), "missing `{w}`:\n{}", done.stdout);
    }
    assert!(!done.stdout.contains("hidden"), "{}", done.stdout);
}

#[test]
fn hidden_reasoning_is_named_as_counted_only() {
    let sim = fast_sim(&["reasoning_tokens=20"]);
    let done = check_sim(&sim);
    assert!(
        done.stdout
            .contains("saw:   reasoning, hidden: 20 reasoning tokens counted in usage only"),
        "{}",
        done.stdout
    );
    assert!(!done.stdout.contains("TTFC"), "{}", done.stdout);
}

#[test]
fn a_cached_prefix_is_named_and_a_server_without_cache_figures_is_said() {
    let cached = fast_sim(&["prefix_cache=true"]);
    let done = check_sim(&cached);
    assert!(
        done.stdout
            .contains("saw:   prefix cache: yes, a second identical request read "),
        "{}",
        done.stdout
    );
    let plain = fast_sim(&[]);
    let done = check_sim(&plain);
    assert!(
        done.stdout
            .contains("saw:   prefix cache: unknown, the server reports no cached-token figure"),
        "{}",
        done.stdout
    );
    assert!(!done.stdout.contains("reasoning"), "{}", done.stdout);
}

/// Claude Code's three settings files in a test HOME and project, pointing at `sim`: the user
/// file sets the URL, the key and a model, the project file another model, the local file the
/// model the check must ask for.
fn claude_setup(s: &Session, sim: &Sim) -> std::path::PathBuf {
    let config = s.path().join("home").join("claude-config");
    std::fs::create_dir_all(&config).unwrap();
    let root = sim.base_url.trim_end_matches("/v1");
    let user = serde_json::json!({"env": {
        "ANTHROPIC_BASE_URL": root,
        "ANTHROPIC_API_KEY": KEY,
        "ANTHROPIC_MODEL": "user-model",
    }});
    std::fs::write(config.join("settings.json"), user.to_string()).unwrap();
    let project = s.path().join(".claude");
    std::fs::create_dir_all(&project).unwrap();
    let shared = serde_json::json!({"env": {"ANTHROPIC_MODEL": "project-model"}});
    std::fs::write(project.join("settings.json"), shared.to_string()).unwrap();
    let local = serde_json::json!({"env": {"ANTHROPIC_MODEL": "sim-model"}});
    std::fs::write(project.join("settings.local.json"), local.to_string()).unwrap();
    config
}

#[test]
fn from_claude_reads_claude_codes_settings_the_local_file_first() {
    let sim = fast_sim(&[&format!("require_api_key={KEY}"), "known_models_only=true"]);
    let s = Session::new();
    let config = claude_setup(&s, &sim);
    let done = s
        .args(["check", "--from", "claude"])
        .env("HOME", s.path().join("home"))
        .env("CLAUDE_CONFIG_DIR", &config)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_AUTH_TOKEN")
        .env_remove("ANTHROPIC_MODEL")
        .env_remove("ANTHROPIC_BASE_URL")
        .stdout("ok  sim-model  TTFT ")
        .stdout("anthropic-messages · ")
        .stdout("env.ANTHROPIC_API_KEY in ")
        .stdout(".claude/settings.local.json, ")
        .stdout("checked 1 model(s): 1 ok, 0 failed")
        .stdout_lacks(KEY)
        .run();
    assert!(!done.stderr.contains(KEY), "{}", done.stderr);
}

#[test]
fn from_claude_without_settings_lists_every_path_tried() {
    let s = Session::new();
    let home = s.path().join("empty-home");
    std::fs::create_dir_all(&home).unwrap();
    let done = s
        .args(["check", "--from", "claude"])
        .env("HOME", &home)
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_AUTH_TOKEN")
        .env_remove("ANTHROPIC_MODEL")
        .code(2)
        .stderr("no Claude Code settings found")
        .run();
    let err = done.stderr_filtered();
    for p in [
        "[TMP]/.claude/settings.local.json, ",
        "[TMP]/.claude/settings.json, ",
        "[TMP]/empty-home/.claude/settings.json",
        "CLAUDE_CONFIG_DIR unset",
    ] {
        assert!(err.contains(p), "missing {p}:\n{err}");
    }
}
