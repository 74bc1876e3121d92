//! Other load-testing tools' per-request results read as runs (`ladder logs --format
//! guidellm|aiperf|vllm`): GuideLLM's benchmarks report, AIPerf's per-record profile export and
//! vLLM's `bench serve --save-result --save-detailed` JSON. Unlike a production log, such a
//! file already says which sweep point (concurrency or rate) each request belongs to, so those
//! points are the run's steps (`build`), not levels rebuilt from overlaps. Each reader maps its
//! tool's own metric definitions to ladder's on reading (docs/logs.md, "Other tools' results"):
//! TTFT, E2E and the token counts as the tool recorded them; TPOT is GuideLLM's
//! `inter_token_latency_ms` (its own TPOT includes the first token and is not used), else
//! (E2E − TTFT) / (tokens − 1) as AIPerf's `inter_token_latency` and vLLM's TPOT define it; ITL
//! from the tool's per-chunk gaps when it kept them. Pure: the caller reads the files.

use super::{LogError, LogRequest};
use serde_json::Value;

pub mod aiperf;
pub mod build;
pub mod guidellm;
pub mod vllm;

/// The tools whose results ladder reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    GuideLlm,
    Aiperf,
    Vllm,
}

impl Tool {
    /// The tool's name as its users write it.
    pub fn name(self) -> &'static str {
        match self {
            Tool::GuideLlm => "GuideLLM",
            Tool::Aiperf => "AIPerf",
            Tool::Vllm => "vLLM bench serve",
        }
    }

    /// The `--format` value.
    pub fn as_str(self) -> &'static str {
        match self {
            Tool::GuideLlm => "guidellm",
            Tool::Aiperf => "aiperf",
            Tool::Vllm => "vllm",
        }
    }

    /// The tool whose output `text` is, from its first bytes: GuideLLM's report names
    /// `guidellm_version` (or holds `benchmarks` of `generative_benchmark`s), AIPerf's records
    /// carry `request_start_ns` and a `metrics` map, vLLM's result has `ttfts` and `itls`.
    pub fn detect(text: &str) -> Option<Tool> {
        let head: String = text.chars().take(8192).collect();
        if !head.trim_start().starts_with('{') {
            return None;
        }
        if head.contains("\"guidellm_version\"") || head.contains("\"generative_benchmark\"") {
            Some(Tool::GuideLlm)
        } else if head.contains("\"request_start_ns\"") && head.contains("\"metrics\"") {
            Some(Tool::Aiperf)
        } else if text.contains("\"ttfts\"") && text.contains("\"itls\"") {
            Some(Tool::Vllm)
        } else if head.contains("\"backend\"")
            && head.contains("\"max_concurrency\"")
            && head.contains("\"request_rate\"")
        {
            // vLLM's result saved without --save-detailed: `vllm::parse` says so.
            Some(Tool::Vllm)
        } else {
            None
        }
    }
}

/// One request as another tool recorded it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PeerRequest {
    /// Start and end (epoch ms, or the tool's own clock in ms), first-token time, tokens, model
    /// and outcome, in the shape production logs are read into.
    pub req: LogRequest,
    /// The gaps between streamed chunks the tool kept (ms), for ITL.
    pub gaps_ms: Vec<f64>,
    /// The output count is the server's usage (else the tool's tokenizer or chunk count).
    pub tokens_from_usage: bool,
    /// The tool's own figure of ladder's TPOT, when it recorded one per request (GuideLLM's
    /// `inter_token_latency_ms`: first to last token); else (E2E − TTFT) / (tokens − 1).
    pub tpot_ms: Option<f64>,
}

/// How a sweep point is named: a concurrency (streams held) or an offered rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Point {
    Streams(u32),
    Rate(f64),
}

impl Point {
    /// The value a step is numbered by and shows.
    pub fn value(self) -> f64 {
        match self {
            Point::Streams(n) => f64::from(n),
            Point::Rate(r) => r,
        }
    }
}

/// One sweep point (one benchmark of a GuideLLM report, one AIPerf run, one vLLM result).
#[derive(Debug, Clone, PartialEq)]
pub struct SweepPoint {
    pub point: Point,
    /// The tool's own measured duration of the point, when it recorded one (s).
    pub duration_s: Option<f64>,
    pub requests: Vec<PeerRequest>,
}

/// The requested sizes of the tool's synthetic workload, when its output records them.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Requested {
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
}

/// One tool's output file read.
#[derive(Debug, Clone, PartialEq)]
pub struct PeerRun {
    pub tool: Tool,
    /// The tool's version as its output says it (`unknown` when it does not).
    pub version: String,
    pub points: Vec<SweepPoint>,
    pub requested: Requested,
    /// Requests left out (the tool's cancelled or warm-up ones), said as a note.
    pub notes: Vec<String>,
}

impl PeerRun {
    /// "GuideLLM 0.8.1": the client that measured the run.
    pub fn client(&self) -> String {
        format!("{} {}", self.tool.name(), self.version)
    }
}

/// A field of a JSON object by dotted path.
pub(crate) fn at<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.')
        .try_fold(v, |v, key| v.get(key))
        .filter(|v| !v.is_null())
}

pub(crate) fn num(v: &Value, path: &str) -> Option<f64> {
    at(v, path)
        .and_then(Value::as_f64)
        .filter(|x| x.is_finite())
}

/// A required number, or an error naming the field and what the tool's output should hold.
pub(crate) fn need(v: &Value, path: &str, what: &str) -> Result<f64, String> {
    num(v, path).ok_or_else(|| format!("no number at `{path}` ({what})"))
}

/// A count (tokens) as the tool recorded it.
pub(crate) fn count(v: &Value, path: &str) -> Option<u64> {
    num(v, path).filter(|x| *x >= 0.0).map(|x| x.round() as u64)
}

/// The JSON document of a whole-file format, or an error saying where it stopped parsing.
pub(crate) fn document(text: &str, tool: Tool) -> Result<Value, LogError> {
    serde_json::from_str(text).map_err(|e| {
        LogError::Usage(format!(
            "not a {} result (JSON error at line {}, column {}: {e})",
            tool.name(),
            e.line(),
            e.column()
        ))
    })
}

/// A version `major.minor` as numbers (`0.8.1` → (0, 8)).
pub(crate) fn major_minor(version: &str) -> Option<(u32, u32)> {
    let mut parts = version.trim_start_matches('v').split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts
        .next()
        .map(|m| {
            m.chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
        })
        .and_then(|m| m.parse().ok())
        .unwrap_or(0);
    Some((major, minor))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_tool_is_told_from_its_first_bytes() {
        let g = r#"{"metadata": {"version": 2, "guidellm_version": "0.8.1"}, "benchmarks": []}"#;
        assert_eq!(Tool::detect(g), Some(Tool::GuideLlm));
        let a = r#"{"metadata":{"request_start_ns":1},"metrics":{}}"#;
        assert_eq!(Tool::detect(a), Some(Tool::Aiperf));
        let v = r#"{"backend": "openai-chat", "ttfts": [0.1], "itls": [[0.01]]}"#;
        assert_eq!(Tool::detect(v), Some(Tool::Vllm));
        assert_eq!(Tool::detect(r#"{"model": "x", "latency": 3}"#), None);
        assert_eq!(Tool::detect("ts,model\n1,x\n"), None);
    }

    #[test]
    fn versions_read_as_major_and_minor() {
        assert_eq!(major_minor("0.8.1"), Some((0, 8)));
        assert_eq!(major_minor("0.13.0rc1"), Some((0, 13)));
        assert_eq!(major_minor("v1"), Some((1, 0)));
        assert_eq!(major_minor("unknown"), None);
    }
}

#[cfg(test)]
mod tests_fixtures;
