//! The API key never reaches a file, stdout or stderr, even when the server echoes it back.

use crate::support::{sim_scenario, Project};

#[test]
fn api_key_echoed_by_a_401_never_leaks() {
    let key = "sk-LEAKCHECK-0123456789abcdef";
    let p = Project::new();
    let yaml = sim_scenario(
        "leak",
        "    ttft: 5ms\n    tpot: 1ms\n    output_tokens: 3\n    require_api_key: the-right-key",
        "  ladder: [2]\n  requests_per_step: 4",
        3,
    )
    .replace("  models:", "  api_key: ${LEAK_TEST_KEY}\n  models:");
    let f = p.scenario("leak", &yaml);
    let out = p
        .ladder()
        .env("LEAK_TEST_KEY", key)
        .args(["run", "-v", "--save-baseline"])
        .arg(&f)
        .assert()
        .code(1); // every request failed: nothing was measured
    let o = out.get_output();
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        !stdout.contains(key) && !stderr.contains(key),
        "key printed"
    );
    assert!(!stdout.contains("LEAKCHECK") && !stderr.contains("LEAKCHECK"));
    let mut checked = 0;
    for file in p.all_files() {
        let bytes = std::fs::read(&file).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        assert!(
            !text.contains("LEAKCHECK"),
            "key leaked into {}",
            file.display()
        );
        checked += 1;
    }
    assert!(checked >= 5);
    assert!(
        !p.path().join("baselines/leak.csv").exists(),
        "a run with no success must not become a baseline"
    );
    // The failures are recorded as 401s.
    let dir = &p.run_dirs("leak")[0];
    let requests = std::fs::read_to_string(dir.join("requests.csv")).unwrap();
    assert_eq!(requests.matches("http_401").count(), 4, "{requests}");
}
