//! `load.agent`: closed-loop agents. Each worker is one agent doing tasks one after another; a
//! task is a conversation of `turns` requests that starts from the shared prefix (the system
//! prompt, byte-identical across turns and agents) and a task text unique to the task, and grows
//! by the answer, a synthetic tool call and a tool result of `tool_result_tokens` every turn,
//! sent after `tool_latency` (+ `think_time`). Lengths and waits are a value or a uniform range
//! `{min, max}` (`Spread`), drawn per task (turns) or per turn (the rest), seeded. What a turn
//! sends, and the waits, are the runner's agent workload's (`runner::workload::agent`).

use super::errors::Ctx;
use super::raw::{RawAgent, RawSpread};
use super::scalars::{Dur, Pos};
use super::ScenarioError;
use serde_yaml::Value as Yaml;
use std::time::Duration;

/// A length or a wait: one value, or drawn uniformly from `min` to `max` (inclusive).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread<T> {
    pub min: T,
    pub max: T,
}

impl<T: Copy> Spread<T> {
    pub fn fixed(v: T) -> Spread<T> {
        Spread { min: v, max: v }
    }
}

impl Spread<u32> {
    /// The value for the uniform draw `u` in [0, 1).
    pub fn at(&self, u: f64) -> u32 {
        let span = f64::from(self.max - self.min) + 1.0;
        (self.min + (u * span) as u32).min(self.max)
    }
}

impl Spread<Duration> {
    /// The value for the uniform draw `u` in [0, 1).
    pub fn at(&self, u: f64) -> Duration {
        self.min + (self.max - self.min).mul_f64(u.clamp(0.0, 1.0))
    }
}

/// `load.agent` as run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Agent {
    /// Requests per task.
    pub turns: Spread<u32>,
    /// Size of each tool result the next turn carries.
    pub tool_result_tokens: Spread<u32>,
    /// How long the tool runs before the next turn is sent.
    pub tool_latency: Spread<Duration>,
    /// The agent's own pause before each request after the first (and between tasks).
    pub think_time: Spread<Duration>,
}

/// `tool_result_tokens` when the scenario does not set it.
pub const DEFAULT_TOOL_RESULT_TOKENS: u32 = 200;

/// Validates `load.agent` (`closed_loop`: the load is closed-loop streams, the only mode agents
/// run in).
pub(super) fn build_agent(
    cx: &Ctx,
    raw: Option<RawAgent>,
    closed_loop: bool,
) -> Result<Option<Agent>, ScenarioError> {
    let Some(a) = raw else { return Ok(None) };
    if !closed_loop {
        return Err(cx.err(
            "load.agent",
            "agents are closed-loop workers over a ladder of agents; remove load.mode and \
             load.ladder_over, or remove agent"
                .into(),
        ));
    }
    let Some(turns) = a.turns else {
        return Err(cx.err(
            "load.agent.turns",
            "missing; write e.g. agent: {turns: 6, tool_result_tokens: 400, tool_latency: 300ms}"
                .into(),
        ));
    };
    let ordered = |field: &str, lo: bool| -> Result<(), ScenarioError> {
        if lo {
            Ok(())
        } else {
            Err(cx.err(
                &format!("load.agent.{field}"),
                "min is above max; write e.g. {min: 2, max: 8}".into(),
            ))
        }
    };
    let whole = |s: RawSpread<Pos<u32>>| Spread {
        min: s.min.0,
        max: s.max.0,
    };
    let wait = |s: Option<RawSpread<Dur>>| {
        s.map_or(Spread::fixed(Duration::ZERO), |s| Spread {
            min: s.min.0,
            max: s.max.0,
        })
    };
    let agent = Agent {
        turns: whole(turns),
        tool_result_tokens: a
            .tool_result_tokens
            .map_or(Spread::fixed(DEFAULT_TOOL_RESULT_TOKENS), whole),
        tool_latency: wait(a.tool_latency),
        think_time: wait(a.think_time),
    };
    ordered("turns", agent.turns.min <= agent.turns.max)?;
    ordered(
        "tool_result_tokens",
        agent.tool_result_tokens.min <= agent.tool_result_tokens.max,
    )?;
    ordered(
        "tool_latency",
        agent.tool_latency.min <= agent.tool_latency.max,
    )?;
    ordered("think_time", agent.think_time.min <= agent.think_time.max)?;
    Ok(Some(agent))
}

/// `load.agent` as the normalized YAML writes it (a value, or `{min, max}`).
pub(super) fn agent_yaml(a: &Agent) -> Yaml {
    fn spread<T: Copy + PartialEq>(s: Spread<T>, f: impl Fn(T) -> Yaml) -> Yaml {
        if s.min == s.max {
            return f(s.min);
        }
        let mut m = serde_yaml::Mapping::new();
        m.insert("min".into(), f(s.min));
        m.insert("max".into(), f(s.max));
        Yaml::Mapping(m)
    }
    let dur = |d: Duration| Yaml::from(crate::util::duration::format(d));
    let mut m = serde_yaml::Mapping::new();
    m.insert("turns".into(), spread(a.turns, Yaml::from));
    m.insert(
        "tool_result_tokens".into(),
        spread(a.tool_result_tokens, Yaml::from),
    );
    m.insert("tool_latency".into(), spread(a.tool_latency, dur));
    m.insert("think_time".into(), spread(a.think_time, dur));
    Yaml::Mapping(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spreads_cover_their_range() {
        let s = Spread { min: 2u32, max: 4 };
        assert_eq!(s.at(0.0), 2);
        assert_eq!(s.at(0.5), 3);
        assert_eq!(s.at(0.999), 4);
        let d = Spread {
            min: Duration::from_millis(100),
            max: Duration::from_millis(300),
        };
        assert_eq!(d.at(0.5), Duration::from_millis(200));
        assert_eq!(Spread::fixed(7u32).at(0.9), 7);
    }
}
