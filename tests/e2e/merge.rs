//! `ladder merge` input checks through the real binary: what is not a sharded run is refused
//! with a message that says so (exit 1), bad paths and an occupied output are usage errors
//! (exit 2), and nothing is written then.

use crate::support::Project;

const PLAIN: &str = "name: plain\ntarget:\n  api: openai-chat\n  sim: {ttft: 5ms, tpot: 1ms, output_tokens: 3}\n  models: [sim-model]\nrequest:\n  prompt_file: prompts/p.txt\n  max_tokens: 3\nload:\n  ladder: [2]\n  requests_per_step: 4\n  warmup_requests: 0\n";

#[test]
fn merge_refuses_runs_that_are_not_shards_and_bad_paths() {
    let p = Project::new();
    let s = p.scenario("plain", PLAIN);
    p.ladder()
        .args(["--quiet", "run", s.to_str().unwrap()])
        .assert()
        .success();
    let out = p
        .ladder()
        .args(["merge", "runs", "-o", "m"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("not run with --shard"), "{err}");
    assert!(!p.path().join("m").exists());

    let out = p
        .ladder()
        .args(["merge", "nope", "-o", "m"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("nope does not exist"), "{err}");

    let out = p
        .ladder()
        .args(["merge", "runs", "-o", "runs"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("not empty"), "{err}");

    std::fs::create_dir(p.path().join("empty")).unwrap();
    let out = p
        .ladder()
        .args(["merge", "empty", "-o", "m"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("no run directories"), "{err}");
}
