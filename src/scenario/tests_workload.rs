//! Unit tests of the round-2 workload fields (issue 12): prompt sets, synthetic prompts, the
//! prompt-size ladder, cache-busting, sessions, rate mode and its arrivals, the truncation
//! threshold, and what the fingerprint covers (prompt file hashes, never the text).

use super::normalize::fingerprint_of;
use super::*;

const BASE: &str = "name: t\ntarget:\n  sim: {}\n  models: [m]\nrequest:\n  REQ\nload:\n  LOAD\n";

/// Loads a scenario whose `request:` and `load:` bodies are given, next to `p.jsonl`,
/// `p.csv` and `p.txt` holding `files`.
fn load(req: &str, load: &str, jsonl: &str) -> Result<Scenario, ScenarioError> {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("p.jsonl"), jsonl).expect("write");
    std::fs::write(dir.path().join("p.csv"), "prompt\nHi there\n").expect("write");
    std::fs::write(dir.path().join("p.txt"), "Hello\n").expect("write");
    let yaml = BASE
        .replace("REQ", &req.replace('\n', "\n  "))
        .replace("LOAD", &load.replace('\n', "\n  "));
    load_str(&yaml, &dir.path().join("s.yaml"), &|_| None)
}

const SET: &str = "{\"prompt\": \"one\"}\n{\"messages\": [{\"role\": \"user\", \"content\": \"two\"}], \"max_tokens\": 5}\n";

fn ok(req: &str, l: &str) -> Scenario {
    load(req, l, SET).unwrap_or_else(|e| panic!("{e}"))
}

fn err(req: &str, l: &str, jsonl: &str) -> String {
    match load(req, l, jsonl) {
        Ok(_) => panic!("expected an error for {req} / {l}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn prompt_sets_load_with_order_and_hash() {
    let s = ok("prompts: p.jsonl\nprompt_order: random", "ladder: [1]");
    let PromptSource::Set(set) = &s.request.prompts else {
        panic!("a set")
    };
    assert_eq!(set.items.len(), 2);
    assert_eq!(set.sha256, fingerprint_of(SET));
    assert_eq!(s.request.prompt_order, PromptOrder::Random);
    let w = workload_yaml(&s);
    assert!(w.contains("prompts:\n  file: p.jsonl\n  sha256: "), "{w}");
    assert!(w.contains("count: 2") && w.contains("seed: 1"), "{w}");
    assert!(
        !w.contains("one") && !w.contains("two"),
        "no prompt text: {w}"
    );
    let csv = ok("prompts: p.csv", "ladder: [1]");
    assert!(matches!(csv.request.prompts, PromptSource::Set(_)));
    // The fingerprint follows the file's content.
    let other = load("prompts: p.jsonl", "ladder: [1]", "{\"prompt\": \"x\"}\n").unwrap();
    let same = ok("prompts: p.jsonl", "ladder: [1]");
    assert_ne!(other.fingerprint, same.fingerprint);
}

#[test]
fn prompt_set_errors_name_the_prompt_file_and_line() {
    let e = err(
        "prompts: p.jsonl",
        "ladder: [1]",
        "{\"prompt\": \"a\"}\n{\"x\": 1}\n",
    );
    assert!(e.contains("p.jsonl:2: request.prompts: has neither"), "{e}");
    let e = err("prompts: nope.jsonl", "ladder: [1]", SET);
    assert!(
        e.contains("s.yaml:6: request.prompts:") && e.contains("cannot read"),
        "{e}"
    );
    let e = err("prompts: p.jsonl\nprompt_file: p.txt", "ladder: [1]", SET);
    assert!(e.contains("both `prompt_file` and `prompts`"), "{e}");
    let e = err(
        "prompt_file: p.txt\nprompt_order: random",
        "ladder: [1]",
        SET,
    );
    assert!(
        e.contains("request.prompt_order: orders the prompts of a set"),
        "{e}"
    );
    let e = err("prompts: p.jsonl\nprompt_order: randm", "ladder: [1]", SET);
    assert!(e.contains("did you mean `random`"), "{e}");
}

#[test]
fn synthetic_prompts_and_the_prompt_size_ladder() {
    let s = ok("prompt: {synthetic_tokens: 100}", "ladder: [1]");
    assert_eq!(s.request.prompts, PromptSource::Synthetic { tokens: 100 });
    assert_eq!(s.request.prompt.split(' ').count(), 100);
    assert!(workload_yaml(&s).contains("prompt:\n  synthetic_tokens: 100\n"));
    let sweep = ok(
        "max_tokens: 16",
        "ladder_over: prompt_tokens\nconcurrency: 4\nladder: [128, 1024]",
    );
    assert_eq!(
        sweep.load.ladder_over,
        LadderOver::PromptTokens { level: 4 }
    );
    assert_eq!(
        sweep.load.ladder_unit(),
        crate::model::LadderUnit::PromptTokens
    );
    let w = workload_yaml(&sweep);
    assert!(
        w.contains("ladder_over: prompt_tokens\nconcurrency: 4\n"),
        "{w}"
    );
    let e = err(
        "prompt_file: p.txt",
        "ladder_over: prompt_tokens\nladder: [8]",
        SET,
    );
    assert!(e.contains("generates the prompts"), "{e}");
    let e = err("prompt_file: p.txt", "concurrency: 3\nladder: [8]", SET);
    assert!(e.contains("load.concurrency: fixes the load"), "{e}");
    let e = err("prompt_file: p.txt", "ladder_over: size\nladder: [8]", SET);
    assert!(e.contains("unknown value `size`"), "{e}");
}

#[test]
fn rate_mode_arrivals_and_cap() {
    let s = ok(
        "prompt_file: p.txt",
        "mode: rate\nladder: [2, 4]\nmax_concurrency: 50",
    );
    assert_eq!(
        s.load.mode,
        LoadMode::Rate {
            arrivals: ArrivalProcess::Poisson,
            max_concurrency: Some(50)
        }
    );
    assert_eq!(s.load.ladder_unit(), crate::model::LadderUnit::Rps);
    let g = ok(
        "prompt_file: p.txt",
        "mode: rate\nladder: [2]\narrivals: {gamma: {burstiness: 0.5}}",
    );
    assert!(
        matches!(g.load.mode, LoadMode::Rate { arrivals: ArrivalProcess::Gamma { burstiness }, .. } if burstiness == 0.5)
    );
    assert!(workload_yaml(&g).contains("arrivals:\n  gamma:\n    burstiness: 0.5\n"));
    assert_ne!(
        g.fingerprint,
        ok("prompt_file: p.txt", "mode: rate\nladder: [2]").fingerprint
    );
    let cases = [
        ("mode: rat\nladder: [1]", "did you mean `rate`"),
        (
            "ladder: [1]\narrivals: poisson",
            "load.arrivals: only applies to open-loop",
        ),
        (
            "ladder: [1]\nmax_concurrency: 3",
            "load.max_concurrency: only applies",
        ),
        (
            "mode: rate\nladder: [1]\narrivals: uniform",
            "unknown arrivals `uniform`",
        ),
        (
            "mode: rate\nladder: [1]\narrivals: {gamma: {burstiness: 0}}",
            "burstiness above 0",
        ),
        (
            "mode: rate\nladder: [1]\narrivals: {gama: {}}",
            "did you mean `gamma`",
        ),
        (
            "mode: rate\nladder: [1]\nrequests_per_worker: 3",
            "rate mode has no workers",
        ),
        (
            "mode: rate\nladder: [1]\nconcurrency: 3",
            "rate mode sets a rate",
        ),
    ];
    for (l, needle) in cases {
        let e = err("prompt_file: p.txt", l, SET);
        assert!(e.contains(needle), "{l}: {e}");
    }
    // Rate mode checks no stream count against requests_per_step.
    ok(
        "prompt_file: p.txt",
        "mode: rate\nladder: [500]\nrequests_per_step: 10",
    );
}

#[test]
fn cache_bust_sessions_and_short_threshold() {
    let s = ok(
        "prompt_file: p.txt\ncache_bust: true\nsession: {turns: 3}\nshort_below: 25%",
        "ladder: [1]",
    );
    assert!(s.request.cache_bust);
    assert_eq!((s.request.session_turns, s.request.short_below), (3, 0.25));
    let w = workload_yaml(&s);
    assert!(
        w.contains("cache_bust: true\nsession:\n  turns: 3\n"),
        "{w}"
    );
    assert!(!w.contains("short_below"), "analysis, not workload: {w}");
    let plain = ok("prompt_file: p.txt", "ladder: [1]");
    assert_eq!(
        (plain.request.session_turns, plain.request.short_below),
        (1, 0.1)
    );
    assert!(!workload_yaml(&plain).contains("cache_bust"));
    let e = err(
        "prompt_file: p.txt\nsession: {turns: 2}",
        "mode: rate\nladder: [1]",
        SET,
    );
    assert!(e.contains("sessions need closed-loop workers"), "{e}");
    let e = err("prompt_file: p.txt\nsession: {}", "ladder: [1]", SET);
    assert!(e.contains("session: says nothing"), "{e}");
}

#[test]
fn chat_only_features_are_refused_for_legacy_completions() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("p.jsonl"), SET).expect("write");
    let yaml = "name: t\ntarget:\n  api: openai-completions\n  sim: {}\n  models: [m]\n\
                request:\n  prompts: p.jsonl\nload:\n  ladder: [1]\n";
    let e = load_str(yaml, &dir.path().join("s.yaml"), &|_| None).unwrap_err();
    assert!(
        e.to_string().contains("openai-completions cannot send"),
        "{e}"
    );
}
