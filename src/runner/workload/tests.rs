//! The kinds' conversations driven by hand, without a loop: sessions grow by the answer and
//! start over after their last turn, a chained session sends its turn and the previous answer's
//! id; and the helper the runner's tests build a scenario's workload with.

use super::*;
use crate::scenario::RequestSpec;
use serde_json::{json, Value};

/// `scenario`'s workload for step 1 of model `m`, its bodies built by `backend`.
pub(in crate::runner) fn workload_of<B: Backend>(
    backend: &Arc<B>,
    scenario: &Scenario,
) -> Arc<dyn Workload> {
    for_step(StepInput {
        scenario,
        step: 1,
        value: 1,
        load: 1.0,
        budget: scenario.load.budget,
        run_tag: "t",
        bodies: bodies(backend, "m"),
    })
}

/// Bodies as the JSON of what a dialect would build from: messages and extra_body.
struct Echo;

impl Backend for Echo {
    fn body_for(&self, _: &str, r: &RequestSpec) -> Bytes {
        Bytes::from(json!({"messages": r.messages, "extra": r.extra_body}).to_string())
    }
    async fn send(&self, _: Bytes, _: &str) -> crate::client::http::Attempt {
        unreachable!("not sent")
    }
}

fn ok(output_tokens: u64, id: Option<&str>) -> RequestRecord {
    RequestRecord {
        output_tokens: Some(output_tokens),
        response_id: id.map(Into::into),
        ..Default::default()
    }
}

fn sessions(extra: &str) -> Scenario {
    let dir = tempfile::tempdir().unwrap();
    let yaml = format!(
        "name: s\ntarget:\n  sim: {{}}\n  api: openai-responses\n  models: [m]\n\
         request:\n  prompt: next question\n{extra}\
         load:\n  ladder: [1]\n  requests_per_step: 6\n"
    );
    crate::scenario::load_str(&yaml, &dir.path().join("s.yaml"), &|_| None).unwrap()
}

fn body(c: &mut dyn Conversation, n: u64) -> (Value, Option<(u32, u32)>) {
    let p = c.next(n);
    (serde_json::from_slice(&p.body).unwrap(), p.turn)
}

#[test]
fn sessions_grow_by_the_answer_and_restart_after_the_last_turn() {
    let s = sessions("  session: {turns: 2}\n");
    let mut c = workload_of(&Arc::new(Echo), &s).worker(0);
    let (first, turn) = body(&mut *c, 0);
    assert_eq!(turn, Some((1, 2)));
    assert_eq!(first["messages"].as_array().unwrap().len(), 1);
    assert!(matches!(c.answered(&mut ok(3, None)), Settled::Now));
    let (second, turn) = body(&mut *c, 1);
    assert_eq!(turn, Some((2, 2)));
    let m = second["messages"].as_array().unwrap();
    assert_eq!(m.len(), 3, "the question, the answer, the next question");
    assert_eq!(m[1]["content"], crate::scenario::synthetic_prompt(3));
    c.answered(&mut ok(3, None));
    let (third, turn) = body(&mut *c, 2);
    assert_eq!(turn, Some((1, 2)), "a new conversation");
    assert_eq!(third["messages"].as_array().unwrap().len(), 1);
    assert_eq!(c.wait(), Some(Duration::ZERO));
}

#[test]
fn a_chained_session_sends_its_turn_and_the_previous_answers_id() {
    let s = sessions(
        "  session: {turns: 3, chain: previous_response_id}\n  extra_body: {store: true}\n",
    );
    let mut c = workload_of(&Arc::new(Echo), &s).worker(0);
    let (first, _) = body(&mut *c, 0);
    assert_eq!(first["messages"].as_array().unwrap().len(), 1);
    assert!(first["extra"].get("previous_response_id").is_none());
    c.answered(&mut ok(5, Some("resp_1")));
    let (second, turn) = body(&mut *c, 1);
    assert_eq!(
        second["messages"],
        json!([{"role": "user", "content": "next question"}])
    );
    assert_eq!(second["extra"]["previous_response_id"], "resp_1");
    assert_eq!(turn, Some((2, 3)));
    // A failed turn leaves nothing to continue: the next request starts over.
    let mut failed = RequestRecord {
        error_class: Some(crate::model::ErrorClass::Http5xx),
        ..Default::default()
    };
    c.answered(&mut failed);
    let (third, turn) = body(&mut *c, 2);
    assert_eq!(third["messages"].as_array().unwrap().len(), 1);
    assert!(third["extra"].get("previous_response_id").is_none());
    assert_eq!(turn, Some((1, 3)));
}

#[test]
fn prompts_send_a_shared_body_and_an_arrival_is_one_turn() {
    let s = sessions("");
    let work = workload_of(&Arc::new(Echo), &s);
    let mut worker = Arc::clone(&work).worker(0);
    assert_eq!(worker.wait(), Some(Duration::ZERO));
    let (a, b) = (worker.next(0).body, worker.next(1).body);
    assert_eq!(a.as_ptr(), b.as_ptr(), "one body, shared");
    let mut arrival = work.arrival(3);
    assert!(arrival.next(3).turn.is_none());
    assert!(matches!(arrival.answered(&mut ok(1, None)), Settled::Now));
    assert_eq!(arrival.wait(), None, "an arrival of prompts is one request");
}
