//! Issue 19 §3: a target that cannot work (here a refused key) stops the run after its first
//! requests instead of spending the whole budget; the run keeps what it recorded, says what
//! `ladder check` says, and exits 1. `--no-fail-fast` sends everything, and the table names
//! each error class.

use crate::support::{read_csv, Project};

fn bad_key_scenario() -> String {
    "name: badkey\ntarget:\n  api: openai-chat\n  api_key: sk-wrong-key-0000\n  sim:\n    ttft: 5ms\n    tpot: 1ms\n    output_tokens: 4\n    require_api_key: sk-right-key-1111\n  models: [sim-model]\nrequest:\n  prompt_file: prompts/p.txt\n  max_tokens: 4\nload:\n  ladder: [4, 8]\n  requests_per_step: 50\n  warmup_requests: 5\n".to_string()
}

#[test]
fn a_refused_key_stops_the_run_with_the_check_diagnosis() {
    let p = Project::new();
    let f = p.scenario("badkey", &bad_key_scenario());
    let out = p.ladder().arg("run").arg(&f).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr
            .contains("stopped early: the first 5 requests to sim-model all failed with http_401"),
        "{stderr}"
    );
    // What `ladder check` says of a refused key.
    assert!(stderr.contains("ladder check"), "{stderr}");
    assert!(stderr.to_lowercase().contains("key"), "{stderr}");
    assert!(
        !stderr.contains("sk-wrong-key-0000"),
        "the key never shows: {stderr}"
    );
    let dir = &p.run_dirs("badkey")[0];
    for file in ["summary.csv", "findings.json", "meta.json"] {
        assert!(dir.join(file).is_file(), "{file}");
    }
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("meta.json")).unwrap()).unwrap();
    assert!(
        meta["notes"].to_string().contains("stopped early"),
        "{meta}"
    );
    // The warm-ups decided: at most the requests in flight then were sent after them.
    let (_, rows) = read_csv(&dir.join("requests.csv"));
    assert!(
        rows.len() <= 8,
        "{} requests recorded of 100 planned",
        rows.len()
    );
}

#[test]
fn no_fail_fast_sends_the_whole_plan_and_the_table_names_the_class() {
    let p = Project::new();
    let f = p.scenario("badkey", &bad_key_scenario());
    let out = p
        .ladder()
        .args(["run", "--no-fail-fast"])
        .arg(&f)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("stopped early"), "{stderr}");
    let (h, rows) = read_csv(&p.run_dirs("badkey")[0].join("summary.csv"));
    let c = |n: &str| h.iter().position(|x| x == n).unwrap();
    assert_eq!(rows.len(), 2);
    for r in &rows {
        assert_eq!(r[c("failed")], "50");
        assert_eq!(r[c("error_classes")], "http_401:50");
    }
    assert!(stdout.contains("50 (401×50)"), "{stdout}");
}

/// Issue 34 part 5: a run `--against` a baseline whose target is down (a 127.0.0.1 port nobody
/// listens on) stops by the fail-fast rule, and its JUnit names the refused connection, not an
/// interruption; meta.json keeps why, and `diff` of the run afterwards says the same.
#[test]
fn a_dead_target_is_named_in_the_junit_markdown_and_meta() {
    let p = Project::new();
    let load = "  ladder: [2]\n  requests_per_step: 10\n  warmup_requests: 0";
    let live = crate::support::sim_scenario(
        "dead",
        "    ttft: 2ms\n    tpot: 1ms\n    output_tokens: 4",
        load,
        4,
    );
    let f = p.scenario("dead", &live);
    p.ladder().args(["-q", "run"]).arg(&f).assert().success();
    let baseline = p.run_dirs("dead")[0].clone();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/v1");
    p.scenario("dead", &crate::support::url_scenario("dead", &url, load, 4));
    let out = p
        .ladder()
        .args(["run", "--no-step-summary", "--format", "junit", "--against"])
        .arg(&baseline)
        .arg(&f)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    let xml = String::from_utf8_lossy(&out.stdout).to_string();
    let doc = roxmltree::Document::parse(&xml).unwrap_or_else(|e| panic!("{e}: {xml}"));
    let failure = doc
        .descendants()
        .find(|n| n.has_tag_name("testcase") && n.attribute("name") == Some("run complete"))
        .and_then(|c| c.children().find(|n| n.has_tag_name("failure")))
        .unwrap_or_else(|| panic!("no completeness failure in {xml}"));
    let message = failure.attribute("message").unwrap().to_lowercase();
    assert!(message.contains("connection refused"), "{message}");
    assert!(message.contains("stopped early"), "{message}");
    assert!(!xml.contains("Ctrl-C"), "{xml}");
    assert!(!xml.contains("was interrupted"), "{xml}");
    // meta.json keeps why; the terminal says the same words.
    let run = p
        .run_dirs("dead")
        .into_iter()
        .find(|d| d != &baseline)
        .unwrap();
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("meta.json")).unwrap()).unwrap();
    assert_eq!(meta["stopped_by"]["cause"], "fail-fast", "{meta}");
    assert_eq!(meta["stopped_by"]["class"], "connect", "{meta}");
    assert!(
        stderr.contains(
            "the run stopped early: the first 5 requests to sim-model all failed with connect"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("(fail-fast: connect)"),
        "the table's cell: {stderr}"
    );
    // Read back later by diff (markdown) through the store's loader: the same cause.
    let out = p
        .ladder()
        .args(["diff", "--no-step-summary", "--format", "markdown"])
        .arg(&baseline)
        .arg(&run)
        .output()
        .unwrap();
    let md = String::from_utf8_lossy(&out.stdout).to_lowercase();
    assert!(
        md.contains("stopped early") && md.contains("connection refused"),
        "{md}"
    );
}
