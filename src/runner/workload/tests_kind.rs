//! A workload kind that exists only for this test, added in this one file, run through both
//! loops without a change to them: the proof that the loops only pace and send. Its
//! conversations hold a pretend socket (opened when the conversation starts, closed when it is
//! dropped), as a realtime session would hold its connection; they wait between turns, number
//! their turns, build their own bodies, and hold each record until the next turn goes.

use super::{Bodies, Conversation, Prepared, Settled, StepInput, Workload};
use crate::client::Backend;
use crate::model::{RequestRecord, StepRun, ToolCallSent};
use crate::runner::fake::FakeServer;
use crate::runner::{run_with, Interrupt, NoProgress, Progress, RunSink, Schedule};
use crate::scenario::{RequestSpec, Scenario};
use bytes::Bytes;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The kind: conversations of "relay" turns; an arrival's has [`ARRIVAL_TURNS`].
struct Relay {
    bodies: Box<dyn Bodies>,
    sockets: Arc<Sockets>,
}

const ARRIVAL_TURNS: u32 = 3;
/// A worker's wait between its turns; an arrival's is half of it.
const GAP: Duration = Duration::from_millis(100);

/// Pretend sockets: how many were opened, how many are open.
#[derive(Default)]
struct Sockets {
    opened: AtomicUsize,
    open: AtomicUsize,
}

/// A conversation's socket, closed when the conversation is dropped.
struct Socket(Arc<Sockets>);

impl Socket {
    fn open(s: &Arc<Sockets>) -> Socket {
        s.opened.fetch_add(1, Ordering::SeqCst);
        s.open.fetch_add(1, Ordering::SeqCst);
        Socket(Arc::clone(s))
    }
}

impl Drop for Socket {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Relay {
    fn line(self: Arc<Self>, who: u32, arrival: bool) -> Box<dyn Conversation> {
        let socket = Socket::open(&self.sockets);
        Box::new(Line {
            work: self,
            who,
            arrival,
            done: 0,
            _socket: socket,
        })
    }
}

impl Workload for Relay {
    fn worker(self: Arc<Self>, worker: u32) -> Box<dyn Conversation> {
        self.line(worker, false)
    }

    fn arrival(self: Arc<Self>, k: u64) -> Box<dyn Conversation> {
        self.line(k as u32, true)
    }
}

struct Line {
    work: Arc<Relay>,
    who: u32,
    arrival: bool,
    /// Turns answered.
    done: u32,
    _socket: Socket,
}

impl Conversation for Line {
    fn wait(&mut self) -> Option<Duration> {
        match (self.arrival, self.done) {
            (true, d) if d >= ARRIVAL_TURNS => None,
            (true, _) => Some(GAP / 2),
            (false, 0) => Some(Duration::ZERO),
            (false, _) => Some(GAP),
        }
    }

    fn next(&mut self, _: u64) -> Prepared {
        let spec = RequestSpec {
            prompt: format!("relay {} {}", self.who, self.done + 1),
            ..RequestSpec::default()
        };
        let of = if self.arrival { ARRIVAL_TURNS } else { 0 };
        Prepared {
            body: self.work.bodies.body(&spec),
            max_tokens: Some(7),
            turn: Some((self.done + 1, of)),
            // An arrival numbers its own records: its number for the worker, its turn for seq.
            origin: self.arrival.then_some((self.who, self.done)),
            variant: None,
        }
    }

    /// Every turn but an arrival's last claims its next turn goes (`tool_call_sent`), so the
    /// record waits for it.
    fn answered(&mut self, rec: &mut RequestRecord) -> Settled {
        self.done += 1;
        if self.arrival && self.done >= ARRIVAL_TURNS {
            return Settled::Now;
        }
        rec.tool_call_sent = Some(ToolCallSent::Synthetic);
        Settled::OnNextTurn {
            unsent: |r| r.tool_call_sent = None,
        }
    }
}

/// The fake server, keeping every body it is sent.
struct Keeping {
    server: FakeServer,
    bodies: Mutex<Vec<String>>,
}

impl Backend for Keeping {
    fn body_for(&self, _: &str, r: &RequestSpec) -> Bytes {
        Bytes::from(r.prompt.clone())
    }
    async fn send(&self, body: Bytes, id: &str) -> crate::client::http::Attempt {
        let text = String::from_utf8(body.to_vec()).unwrap();
        self.bodies.lock().unwrap().push(text);
        self.server.send(body, id).await
    }
}

#[derive(Default)]
struct Keep(Vec<RequestRecord>);

impl RunSink for Keep {
    fn record(&mut self, record: RequestRecord) {
        self.0.push(record);
    }
    fn step_finished(&mut self, _: StepRun) {}
}

/// Runs `load` with the relay kind on a paused clock: the records, sorted by worker and seq,
/// the bodies sent, and the sockets.
async fn run(load: &str) -> (Vec<RequestRecord>, Vec<String>, Arc<Sockets>) {
    let dir = tempfile::tempdir().unwrap();
    let yaml = format!(
        "name: relay\ntarget:\n  sim: {{}}\n  models: [m]\nrequest:\n  prompt: hi\nload:\n{load}"
    );
    let s: Scenario =
        crate::scenario::load_str(&yaml, &dir.path().join("s.yaml"), &|_| None).unwrap();
    let backend = Arc::new(Keeping {
        server: FakeServer::new(100, 40, 1, 10),
        bodies: Mutex::default(),
    });
    let sockets = Arc::new(Sockets::default());
    let kind_sockets = Arc::clone(&sockets);
    let choose: super::Choose = Arc::new(move |input: StepInput<'_>| {
        let relay = Relay {
            bodies: input.bodies,
            sockets: Arc::clone(&kind_sockets),
        };
        Arc::new(relay) as Arc<dyn Workload>
    });
    let progress: Arc<dyn Progress> = Arc::new(NoProgress);
    let mut sink = Keep::default();
    let schedule = Schedule::pretend_time();
    let b = Arc::clone(&backend);
    run_with(
        &s,
        b,
        progress,
        Interrupt::new(),
        &mut sink,
        schedule,
        choose,
    )
    .await;
    let mut records = sink.0;
    records.sort_by_key(|r| (r.worker, r.seq));
    let bodies = backend.bodies.lock().unwrap().clone();
    (records, bodies, sockets)
}

/// Each of `records`' turns after the first goes `gap` ms after the one before it ended.
fn assert_waits(records: &[&RequestRecord], gap: f64) {
    for pair in records.windows(2) {
        let ended = pair[0].started_at_ms + pair[0].e2e_ms.unwrap();
        let got = pair[1].started_at_ms - ended;
        assert!(
            (got - gap).abs() < 1.0,
            "{got} ms between turns, want {gap}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_test_kind_runs_through_the_closed_loop() {
    let (records, bodies, sockets) = run("  ladder: [2]\n  requests_per_step: 7\n").await;
    assert_eq!(records.len(), 7);
    assert_eq!(bodies.len(), 7);
    assert_eq!(sockets.opened.load(Ordering::SeqCst), 2, "one per worker");
    assert_eq!(sockets.open.load(Ordering::SeqCst), 0, "closed at the end");
    for w in 0..2 {
        let mine: Vec<&RequestRecord> = records.iter().filter(|r| r.worker == w).collect();
        let turns: Vec<u32> = mine.iter().map(|r| r.turn.unwrap()).collect();
        assert_eq!(turns, (1..=mine.len() as u32).collect::<Vec<_>>());
        assert!(mine.iter().all(|r| r.max_tokens == Some(7)));
        for (turn, r) in mine.iter().enumerate() {
            assert!(bodies.contains(&format!("relay {w} {}", turn + 1)));
            // Held until the next turn went; the last one's claim undone.
            let sent = (turn + 1 < mine.len()).then_some(ToolCallSent::Synthetic);
            assert_eq!(r.tool_call_sent, sent, "worker {w} turn {}", turn + 1);
        }
        assert_waits(&mine, GAP.as_secs_f64() * 1000.0);
    }
}

#[tokio::test(start_paused = true)]
async fn a_test_kind_runs_through_the_open_loop() {
    let load = "  mode: rate\n  ladder: [5]\n  requests_per_step: 4\n";
    let (records, bodies, sockets) = run(load).await;
    assert_eq!(
        records.len(),
        4 * ARRIVAL_TURNS as usize,
        "every arrival's turns"
    );
    assert_eq!(bodies.len(), records.len());
    assert_eq!(sockets.opened.load(Ordering::SeqCst), 4, "one per arrival");
    assert_eq!(sockets.open.load(Ordering::SeqCst), 0, "closed at the end");
    for k in 0..4 {
        let mine: Vec<&RequestRecord> = records.iter().filter(|r| r.worker == k).collect();
        let seqs: Vec<u32> = mine.iter().map(|r| r.seq).collect();
        assert_eq!(seqs, [0, 1, 2], "the kind's own numbering");
        let turns: Vec<_> = mine.iter().map(|r| (r.turn, r.task_turns)).collect();
        assert_eq!(
            turns,
            (1..=3).map(|t| (Some(t), Some(3))).collect::<Vec<_>>()
        );
        let sent: Vec<_> = mine.iter().map(|r| r.tool_call_sent).collect();
        let claim = Some(ToolCallSent::Synthetic);
        assert_eq!(sent, [claim, claim, None]);
        assert!(mine.iter().all(|r| r.send_lag_ms.is_some()));
        assert_waits(&mine, GAP.as_secs_f64() * 500.0);
    }
}
