//! Where a sender's records go: straight to the step, or, when the workload says a record is
//! settled only once the next turn is sent (`Settled::OnNextTurn`: an agent's
//! `tool_call_sent`), held until then, so a record never claims what the step's end prevented.

use super::sink::RecordTx;
use super::workload::Settled;
use crate::model::RequestRecord;

/// A sender's record waiting for its next turn, if any.
#[derive(Default)]
pub(super) struct Outbox(Option<Held>);

/// A held record, its end time, and what makes it true if no turn follows.
struct Held {
    rec: RequestRecord,
    ended_ms: f64,
    unsent: fn(&mut RequestRecord),
}

impl Outbox {
    /// Sends a record with its end time, or holds it until the next turn when it is settled
    /// only then; false when the step stopped listening.
    pub(super) fn send(
        &mut self,
        tx: &RecordTx,
        rec: RequestRecord,
        ended_ms: f64,
        settled: Settled,
    ) -> bool {
        match settled {
            Settled::OnNextTurn { unsent } => {
                self.0 = Some(Held {
                    rec,
                    ended_ms,
                    unsent,
                });
                true
            }
            Settled::Now => tx.send((rec, ended_ms)).is_ok(),
        }
    }

    /// The next turn is about to be sent: the held record said the truth.
    pub(super) fn next_sent(&mut self, tx: &RecordTx) -> bool {
        match self.0.take() {
            Some(held) => tx.send((held.rec, held.ended_ms)).is_ok(),
            None => true,
        }
    }

    /// No turn follows the held one (the sender stops, or its next turn was dropped): the
    /// record is made true and handed on.
    pub(super) fn unsent(&mut self, tx: &RecordTx) {
        if let Some(mut held) = self.0.take() {
            (held.unsent)(&mut held.rec);
            let _ = tx.send((held.rec, held.ended_ms));
        }
    }
}
