//! What a step's ladder value counts (streams, offered req/s, prompt tokens, trace speed), and how a step is
//! named for people.

use serde::{Deserialize, Serialize};

/// What a step's ladder value (the `concurrency` column) counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LadderUnit {
    /// Concurrent streams (closed loop; older files).
    #[default]
    Streams,
    /// Offered requests per second (open loop, `load.mode: rate`).
    Rps,
    /// Synthetic prompt size in tokens (`load.ladder_over: prompt_tokens`).
    PromptTokens,
    /// Multiples of a trace's own arrival rate (`load.mode: replay`).
    Speed,
    /// Concurrent agents (closed loop, `load.agent`): each a worker doing multi-turn tasks.
    Agents,
}

impl LadderUnit {
    pub fn as_str(self) -> &'static str {
        match self {
            LadderUnit::Streams => "streams",
            LadderUnit::Rps => "rps",
            LadderUnit::PromptTokens => "prompt_tokens",
            LadderUnit::Speed => "speed",
            LadderUnit::Agents => "agents",
        }
    }

    /// Closed-loop workers (streams or agents): the value counts requests in flight.
    pub fn closed_loop(self) -> bool {
        matches!(self, LadderUnit::Streams | LadderUnit::Agents)
    }

    pub fn parse(s: &str) -> Option<LadderUnit> {
        [
            LadderUnit::Streams,
            LadderUnit::Rps,
            LadderUnit::PromptTokens,
            LadderUnit::Speed,
            LadderUnit::Agents,
        ]
        .into_iter()
        .find(|u| u.as_str() == s)
    }

    /// A step's value with its unit, the way the run table's first column counts it: `20
    /// streams`, `1 stream`, `8 req/s`, `2000-token prompts`. The one way diffs, findings and
    /// reports name a step for people (never "step 16": `summary.csv`'s `step` is the index).
    pub fn describe(self, value: u32) -> String {
        self.describe_all(&[value])
    }

    /// Several steps' values with one unit: `5, 10 and 20 streams`, `500 and 2000-token prompts`.
    pub fn describe_all(self, values: &[u32]) -> String {
        let list = match values {
            [] => String::new(),
            [one] => one.to_string(),
            [init @ .., last] => {
                let init: Vec<String> = init.iter().map(u32::to_string).collect();
                format!("{} and {last}", init.join(", "))
            }
        };
        match self {
            LadderUnit::Streams if values == [1] => format!("{list} stream"),
            LadderUnit::Agents if values == [1] => format!("{list} agent"),
            LadderUnit::PromptTokens => format!("{list}-token prompts"),
            LadderUnit::Speed => format!("{list}× production"),
            _ => format!("{list} {}", self.plural()),
        }
    }

    /// The unit after a number other than 1: `streams`, `req/s`, `prompt tokens`.
    pub fn plural(self) -> &'static str {
        match self {
            LadderUnit::Streams => "streams",
            LadderUnit::Rps => "req/s",
            LadderUnit::PromptTokens => "prompt tokens",
            LadderUnit::Speed => "× production",
            LadderUnit::Agents => "agents",
        }
    }

    /// A step named for a sentence: `at 16 streams`, `at 4 req/s`, `at 2000-token prompts`.
    pub fn at(self, value: u32) -> String {
        format!("at {}", self.describe(value))
    }

    /// The run table's column header for the ladder's values: `streams`, `req/s`, `prompt tok`.
    pub fn header(self) -> &'static str {
        match self {
            LadderUnit::Streams => "streams",
            LadderUnit::Rps => "req/s",
            LadderUnit::PromptTokens => "prompt tok",
            LadderUnit::Speed => "speed",
            LadderUnit::Agents => "agents",
        }
    }
}
