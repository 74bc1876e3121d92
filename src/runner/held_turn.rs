//! An agent turn's record held back until its next turn is sent, so that `tool_call_sent`
//! never claims a call went back when the step ended the task first.

use tokio::sync::mpsc;

use crate::model::RequestRecord;

/// An agent turn's record waits until its next turn is sent: only then is it known that what
/// `tool_call_sent` says was sent (the step's budget, its deadline or an interrupt may end the
/// task first). Other records go straight to the step.
#[derive(Default)]
pub(super) struct HeldTurn(Option<(RequestRecord, f64)>);

impl HeldTurn {
    /// Sends a record with its end time, or holds it when it is an agent turn; false when the
    /// step stopped listening.
    pub(super) fn send(&mut self, tx: &RecordTx, rec: RequestRecord, ended_ms: f64) -> bool {
        if rec.tool_call_sent.is_some() {
            self.0 = Some((rec, ended_ms));
            return true;
        }
        tx.send((rec, ended_ms)).is_ok()
    }

    /// The next turn is about to be sent: the held record said the truth.
    pub(super) fn next_sent(&mut self, tx: &RecordTx) -> bool {
        match self.0.take() {
            Some(held) => tx.send(held).is_ok(),
            None => true,
        }
    }

    /// The worker stops: no turn followed the held one, so nothing was sent back.
    pub(super) fn finish(self, tx: &RecordTx) {
        if let Some((mut rec, ended_ms)) = self.0 {
            rec.tool_call_sent = None;
            let _ = tx.send((rec, ended_ms));
        }
    }
}

/// Where a step's workers send their records with their end times.
pub(super) type RecordTx = mpsc::UnboundedSender<(RequestRecord, f64)>;
