//! Unit tests of `load.mode: replay` (issue 21): the trace is read next to the scenario, the
//! speeds are the ladder, keys replay has no use for are refused with the fix, the fingerprint
//! follows the trace's content (never its text), and a run's recorded load reads back.

use super::*;

const TRACE: &str = "{\"timestamp\": 0, \"input_tokens\": 100, \"output_tokens\": 10}\n\
                     {\"timestamp\": 500, \"prompt\": \"secret words\"}\n\
                     {\"timestamp\": 1000, \"input_tokens\": 50}\n";

fn load_with(req: &str, load: &str, trace: &str) -> Result<Scenario, ScenarioError> {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("t.jsonl"), trace).expect("write");
    std::fs::write(dir.path().join("p.txt"), "Hello\n").expect("write");
    let yaml = format!(
        "name: t\ntarget:\n  sim: {{}}\n  models: [m]\nrequest:\n  {req}\nload:\n  {}\n",
        load.replace('\n', "\n  ")
    );
    load_str(&yaml, &dir.path().join("s.yaml"), &|_| None)
}

fn err(req: &str, load: &str) -> String {
    match load_with(req, load, TRACE) {
        Ok(_) => panic!("expected an error for {load}"),
        Err(e) => e.to_string(),
    }
}

const REPLAY: &str = "mode: replay\ntrace: t.jsonl\nspeed: [1, 2]";

#[test]
fn a_replay_loads_its_trace_and_replays_all_of_it_by_default() {
    let s = load_with("max_tokens: 32", REPLAY, TRACE).unwrap();
    assert_eq!(s.load.ladder, [1, 2]);
    assert!(matches!(s.load.mode, LoadMode::Replay { .. }));
    assert_eq!(s.load.budget, Budget::RequestsPerStep(3));
    assert_eq!(s.load.ladder_unit(), crate::model::LadderUnit::Speed);
    assert_eq!(s.request.prompts, PromptSource::Trace);
    let t = s.load.trace.as_ref().expect("trace");
    assert_eq!(t.requests.len(), 3);
    let w = workload_yaml(&s);
    assert!(w.contains("mode: replay"), "{w}");
    assert!(w.contains("trace:\n  file: t.jsonl\n  sha256: "), "{w}");
    assert!(w.contains("requests: 3"), "{w}");
    assert!(!w.contains("secret words"), "no trace text: {w}");
    // Another trace, another workload; `ladder:` is the same list as `speed:`.
    let other = load_with("max_tokens: 32", REPLAY, &TRACE.replace("500", "600")).unwrap();
    assert_ne!(other.fingerprint, s.fingerprint);
    let as_ladder = "mode: replay\ntrace: t.jsonl\nladder: [1, 2]";
    let same = load_with("max_tokens: 32", as_ladder, TRACE).unwrap();
    assert_eq!(same.fingerprint, s.fingerprint);
    // The recorded scenario names the trace by hash; its load reads back.
    let recorded = load_from_yaml(&normalized_yaml(&s)).unwrap();
    assert_eq!(recorded.budget, Budget::RequestsPerStep(3));
    assert!(recorded.trace.is_none());
    assert!(matches!(recorded.mode, LoadMode::Replay { .. }));
}

#[test]
fn replay_refuses_what_it_has_no_use_for() {
    let cases = [
        (
            "max_tokens: 8",
            "mode: replay\nspeed: [1]",
            "load.trace: missing",
        ),
        (
            "max_tokens: 8",
            "mode: replay\ntrace: t.jsonl",
            "load.speed: missing",
        ),
        (
            "max_tokens: 8",
            "mode: replay\ntrace: t.jsonl\nspeed: [1]\nladder: [1]",
            "keep speed",
        ),
        (
            "prompt_file: p.txt",
            REPLAY,
            "request.prompt_file: load.mode: replay sends each request of the trace",
        ),
        (
            "max_tokens: 8",
            "mode: replay\ntrace: t.jsonl\nspeed: [1]\nrequests_per_step: 9",
            "the trace holds 3 requests",
        ),
        (
            "max_tokens: 8",
            "mode: replay\ntrace: t.jsonl\nspeed: [1]\narrivals: poisson",
            "load.arrivals: does not apply to replay",
        ),
        (
            "max_tokens: 8",
            "ladder: [1]\ntrace: t.jsonl",
            "load.trace: only applies to trace replay",
        ),
        (
            "max_tokens: 8",
            "mode: replay\ntrace: missing.jsonl\nspeed: [1]",
            "cannot read it",
        ),
        (
            "max_tokens: 8",
            "mode: replay\ntrace: t.jsonl\nspeed: [2, 1]",
            "steps must increase",
        ),
        (
            "max_tokens: 8\n  session: {turns: 2}",
            REPLAY,
            "sessions need closed-loop workers",
        ),
    ];
    for (req, l, needle) in cases {
        let e = err(req, l);
        assert!(e.contains(needle), "{l}: {e}");
    }
}

#[test]
fn a_bad_trace_line_is_named_in_the_trace_file() {
    let bad = "{\"timestamp\": 0, \"input_tokens\": 5}\n{\"timestamp\": 1}\n";
    let e = load_with("max_tokens: 8", REPLAY, bad)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("t.jsonl:2: load.trace: has no `input_tokens`"),
        "{e}"
    );
}

#[test]
fn a_search_needs_an_slo_may_leave_the_ladder_out_and_is_part_of_the_workload() {
    let s = load_with(
        "prompt_file: p.txt",
        "requests_per_step: 64\nsearch: {slo: {ttft_p90: 1s}, max: 64}",
        TRACE,
    )
    .unwrap();
    assert_eq!(s.load.ladder, [1], "starts low");
    let search = s.load.search.expect("search");
    assert_eq!((search.max, search.steps), (64, DEFAULT_SEARCH_STEPS));
    assert_eq!(search.slo.ttft, Some(std::time::Duration::from_secs(1)));
    let w = workload_yaml(&s);
    assert!(
        w.contains("search:\n  slo:\n    ttft_p90: 1s\n  max: 64"),
        "{w}"
    );
    let recorded = load_from_yaml(&normalized_yaml(&s)).unwrap();
    assert_eq!(recorded.search, s.load.search, "reads back from the record");
    for (l, needle) in [
        (
            "search: {max: 8}",
            "load.search.slo: the search needs an SLO",
        ),
        (
            "ladder: [16]\nsearch: {slo: {e2e_p90: 2s}, max: 8}",
            "below the ladder's top step 16",
        ),
        (
            "requests_per_step: 10\nsearch: {slo: {e2e_p90: 2s}, max: 64}",
            "at least 64",
        ),
    ] {
        let e = err("prompt_file: p.txt", l);
        assert!(e.contains(needle), "{l}: {e}");
    }
}
