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

/// A key in `extra_body` and in `--sim-set require_api_key=...`: it reaches no file, stdout or
/// stderr, and every YAML written (scenario, workload, baseline workload) still parses, so a
/// later `ladder diff` of the runs works (an unquoted `***redacted***` is a YAML alias).
#[test]
fn key_in_extra_body_and_sim_set_is_hidden_and_diff_still_works() {
    let key = "sk-EXTRABODY-0123456789abcdef";
    let p = Project::new();
    let yaml = sim_scenario(
        "eb",
        "    ttft: 5ms\n    tpot: 1ms\n    output_tokens: 3",
        "  ladder: [2]\n  requests_per_step: 4",
        3,
    )
    .replace("  models:", "  api_key: ${OPENAI_API_KEY}\n  models:")
    .replace(
        "  max_tokens:",
        "  extra_body: {user: \"${OPENAI_API_KEY}\"}\n  max_tokens:",
    );
    let f = p.scenario("eb", &yaml);
    for _ in 0..2 {
        let out = p
            .ladder()
            .env("OPENAI_API_KEY", key)
            .args(["run", "--save-baseline", "--sim-set"])
            .arg(format!("require_api_key={key}"))
            .arg(&f)
            .output()
            .unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
        assert!(!stdout.contains("EXTRABODY") && !stderr.contains("EXTRABODY"));
    }
    let mut yamls = 0;
    for file in p.all_files() {
        let text = String::from_utf8_lossy(&std::fs::read(&file).unwrap()).into_owned();
        assert!(
            !text.contains("EXTRABODY"),
            "key leaked into {}",
            file.display()
        );
        if file.extension().is_some_and(|e| e == "yaml") && !text.contains("${") {
            let parsed: Result<serde_yaml::Value, _> = serde_yaml::from_str(&text);
            assert!(parsed.is_ok(), "{}: {parsed:?}\n{text}", file.display());
            yamls += 1;
        }
    }
    assert!(yamls >= 5, "{yamls} YAML files checked");
    let runs = p.run_dirs("eb");
    for base in [runs[0].clone(), p.path().join("baselines/eb.csv")] {
        let out = p
            .ladder()
            .arg("diff")
            .arg(&base)
            .arg(&runs[1])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status.code(), Some(2), "{stderr}");
        assert!(!stderr.contains("alias"), "{stderr}");
    }
}
