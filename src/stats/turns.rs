//! A step's conversations (`load.agent`, `request.session`): the cache hit share (input tokens
//! read from the cache ÷ input tokens) overall and by turn, TTFT on first turns and on later
//! turns, and the complete tasks' end-to-end time (every turn plus the tool and think time
//! between them) and tokens, and for agents the share of turns followed by a synthetic tool call.
//! Records without a turn add nothing.

use super::{describe, StepSummary};
use crate::model::{RequestRecord, ToolCallSent};
use std::collections::BTreeMap;

impl StepSummary {
    /// Input tokens read from the cache ÷ input tokens of the successes; `None` without input
    /// tokens. The one rule for the cache hit share (table, findings, `diff`).
    pub fn cache_hit_share(&self) -> Option<f64> {
        (self.input_tokens > 0).then(|| self.cached_tokens as f64 / self.input_tokens as f64)
    }

    /// `cache_hit_by_turn` read back: (turn, share) in turn order.
    pub fn cache_hit_by_turn(&self) -> Vec<(u32, f64)> {
        self.cache_hit_by_turn
            .split_whitespace()
            .filter_map(|cell| {
                let (turn, share) = cell.split_once(':')?;
                Some((turn.parse().ok()?, share.parse().ok()?))
            })
            .collect()
    }
}

/// The turn columns of `s` from its records.
pub(super) fn turn_columns(s: &mut StepSummary, records: &[RequestRecord]) {
    if records.iter().all(|r| r.turn.is_none()) {
        return;
    }
    let mut by_turn: BTreeMap<u32, (u64, u64)> = BTreeMap::new();
    let (mut first, mut later) = (Vec::new(), Vec::new());
    for r in records.iter().filter(|r| r.is_ok()) {
        let Some(turn) = r.turn else { continue };
        let (input, cached) = by_turn.entry(turn).or_default();
        *input = input.saturating_add(r.input_tokens.unwrap_or(0));
        *cached = cached.saturating_add(r.cached_tokens.unwrap_or(0));
        let ttft = if turn == 1 { &mut first } else { &mut later };
        ttft.extend(r.ttft_ms);
    }
    s.cache_hit_by_turn = by_turn
        .iter()
        .filter(|(_, (input, _))| *input > 0)
        .map(|(turn, (input, cached))| format!("{turn}:{:.3}", *cached as f64 / *input as f64))
        .collect::<Vec<_>>()
        .join(" ");
    let (first, later) = (describe(&first), describe(&later));
    (s.ttft_first_p50_ms, s.ttft_first_p90_ms) = (first.map(|d| d.p50), first.map(|d| d.p90));
    (s.ttft_later_p50_ms, s.ttft_later_p90_ms) = (later.map(|d| d.p50), later.map(|d| d.p90));
    let sent: Vec<ToolCallSent> = records
        .iter()
        .filter(|r| r.is_ok())
        .filter_map(|r| r.tool_call_sent)
        .collect();
    s.synthetic_call_share = (!sent.is_empty()).then(|| {
        let synthetic = sent
            .iter()
            .filter(|t| **t == ToolCallSent::Synthetic)
            .count();
        synthetic as f64 / sent.len() as f64
    });
    let tasks = complete_tasks(records);
    s.tasks = tasks.len() as u64;
    let e2e = describe(&tasks.iter().map(|t| t.0).collect::<Vec<_>>());
    (s.task_e2e_p50_ms, s.task_e2e_p90_ms) = (e2e.map(|d| d.p50), e2e.map(|d| d.p90));
    let mean = |f: fn(&(f64, f64, u32)) -> f64| {
        (!tasks.is_empty()).then(|| tasks.iter().map(f).sum::<f64>() / tasks.len() as f64)
    };
    s.task_tokens_mean = mean(|t| t.1);
    s.task_e2e_mean_ms = mean(|t| t.0);
    s.task_turns_mean = mean(|t| f64::from(t.2));
}

/// Each complete task of the step: its end-to-end time (first turn's start to the last turn's
/// end, ms), its tokens (input and output) and its requests. A task is complete when one worker's records
/// hold its turns 1 to `task_turns` in a row, every one a success.
fn complete_tasks(records: &[RequestRecord]) -> Vec<(f64, f64, u32)> {
    let mut order: Vec<&RequestRecord> = records.iter().filter(|r| r.turn.is_some()).collect();
    order.sort_by_key(|r| (r.worker, r.seq));
    let mut out = Vec::new();
    let mut open: Option<(u32, u32, f64, f64)> = None; // (worker, next turn, start, tokens)
    for r in order {
        let turn = r.turn.unwrap_or(0);
        let tokens = (r.input_tokens.unwrap_or(0) + r.output_tokens.unwrap_or(0)) as f64;
        let ok = r.is_ok();
        open = match open {
            Some((w, next, start, sum)) if w == r.worker && next == turn && ok => {
                Some((w, turn + 1, start, sum + tokens))
            }
            _ if turn == 1 && ok => Some((r.worker, 2, r.started_at_ms, tokens)),
            _ => None,
        };
        if let Some((_, next, start, sum)) = open {
            if next > r.task_turns.unwrap_or(u32::MAX) {
                let end = r.started_at_ms + r.retry_wait_ms + r.e2e_ms.unwrap_or(0.0);
                out.push((end - start, sum, turn));
                open = None;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(worker: u32, seq: u32, turn: u32, start: f64) -> RequestRecord {
        RequestRecord {
            worker,
            seq,
            turn: Some(turn),
            task_turns: Some(2),
            started_at_ms: start,
            e2e_ms: Some(100.0),
            ttft_ms: Some(if turn == 1 { 50.0 } else { 20.0 }),
            input_tokens: Some(1000),
            cached_tokens: Some(if turn == 1 { 500 } else { 900 }),
            output_tokens: Some(10),
            ..Default::default()
        }
    }

    #[test]
    fn turns_split_cache_hits_ttft_and_complete_tasks() {
        let mut records = vec![
            rec(0, 0, 1, 0.0),
            rec(0, 1, 2, 400.0),
            rec(0, 2, 1, 600.0),
            // Worker 1's first task failed at its second turn: not complete.
            rec(1, 0, 1, 0.0),
            rec(1, 1, 2, 300.0),
        ];
        records[4].error_class = Some(crate::model::ErrorClass::Http5xx);
        let mut s = StepSummary::default();
        turn_columns(&mut s, &records);
        assert_eq!(s.cache_hit_by_turn, "1:0.500 2:0.900");
        assert_eq!(s.cache_hit_by_turn(), [(1, 0.5), (2, 0.9)]);
        assert_eq!(s.ttft_first_p50_ms, Some(50.0));
        assert_eq!(s.ttft_later_p90_ms, Some(20.0));
        assert_eq!(s.tasks, 1);
        assert_eq!(s.task_e2e_p50_ms, Some(500.0));
        assert_eq!(s.task_tokens_mean, Some(2020.0));
        assert_eq!(s.task_e2e_mean_ms, Some(500.0));
        assert_eq!(s.task_turns_mean, Some(2.0));
        assert_eq!(s.synthetic_call_share, None, "no agent: no calls sent");
        // Agents: the first turns were followed by the model's call (worker 0) and a synthetic
        // one (worker 1's, whose next turn failed: still sent).
        records[0].tool_call_sent = Some(ToolCallSent::Model);
        records[3].tool_call_sent = Some(ToolCallSent::Synthetic);
        turn_columns(&mut s, &records);
        assert_eq!(s.synthetic_call_share, Some(0.5));
        let mut plain = StepSummary::default();
        turn_columns(&mut plain, &[RequestRecord::default()]);
        assert_eq!(plain, StepSummary::default(), "no turns, no columns");
    }
}
