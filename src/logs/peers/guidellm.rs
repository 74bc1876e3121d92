//! GuideLLM's benchmarks report (`guidellm run --output kind=json,path=benchmarks.json`), report
//! schema `metadata.version: 2` (GuideLLM 0.8.1 is what `make compat` runs). Each benchmark is
//! one sweep point: `config.strategy` says its concurrency (`concurrent`: `streams`;
//! `synchronous`: 1) or rate (`constant`, `poisson`, `async`: `rate`). Its requests are
//! `requests.successful` and `requests.errored`; `requests.incomplete` (cancelled when the
//! benchmark's limit was reached) are left out with a note. Per request: `request_start_time`
//! and `request_end_time` (epoch s), `time_to_first_token_ms`, `prompt_tokens` and
//! `output_tokens` (the server's usage when it sent one: GuideLLM prefers it), the error in
//! `info.error`. GuideLLM keeps no per-chunk gaps, so imported runs have no ITL.

use super::{
    at, count, document, need, num, PeerRequest, PeerRun, Point, Requested, SweepPoint, Tool,
};
use crate::logs::read::outcome;
use crate::logs::{LogError, LogRequest};
use serde_json::Value;

/// The report schema this reader knows.
const SCHEMA: u64 = 2;

pub fn parse(text: &str) -> Result<PeerRun, LogError> {
    let doc = document(text, Tool::GuideLlm)?;
    let version = at(&doc, "metadata.guidellm_version")
        .and_then(Value::as_str)
        .unwrap_or("unknown")
        .to_string();
    match at(&doc, "metadata.version").and_then(Value::as_u64) {
        Some(SCHEMA) => {}
        schema => {
            let schema = schema.map_or("none".to_string(), |s| s.to_string());
            return Err(LogError::Usage(format!(
                "GuideLLM {version} (report schema version {schema}) is not supported: ladder reads GuideLLM's report schema version {SCHEMA} (`metadata.version`, written by GuideLLM 0.8.1); re-export it with a supported GuideLLM (`guidellm export FILE --output kind=json,path=new.json`) or read its requests as --format jsonl with --map"
            )));
        }
    }
    let benchmarks = at(&doc, "benchmarks")
        .and_then(Value::as_array)
        .ok_or_else(|| LogError::Usage("no `benchmarks` list in the GuideLLM report".into()))?;
    let model = at(&doc, "config.spec.backend.model")
        .and_then(Value::as_str)
        .unwrap_or("model")
        .to_string();
    let mut run = PeerRun {
        tool: Tool::GuideLlm,
        version,
        points: Vec::new(),
        requested: requested(&doc),
        notes: Vec::new(),
    };
    let mut incomplete = 0;
    for (i, b) in benchmarks.iter().enumerate() {
        let where_ = |m: String| LogError::Usage(format!("benchmarks[{i}]: {m}"));
        let point = point_of(b).map_err(where_)?;
        let mut requests = Vec::new();
        for (kind, ok) in [("successful", true), ("errored", false)] {
            let list = at(b, &format!("requests.{kind}")).and_then(Value::as_array);
            for (j, r) in list.into_iter().flatten().enumerate() {
                let req = request(r, &model, ok, requests.len() + 1)
                    .map_err(|m| where_(format!("requests.{kind}[{j}]: {m}")))?;
                requests.push(req);
            }
        }
        incomplete += at(b, "requests.incomplete")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        run.points.push(SweepPoint {
            point,
            duration_s: num(b, "duration"),
            requests,
        });
    }
    if incomplete > 0 {
        run.notes.push(format!(
            "{incomplete} request(s) GuideLLM cancelled at the end of a benchmark (requests.incomplete) were left out."
        ));
    }
    Ok(run)
}

/// The sweep point of one benchmark, from its strategy.
fn point_of(b: &Value) -> Result<Point, String> {
    let kind = at(b, "config.strategy.type_")
        .and_then(Value::as_str)
        .ok_or("no `config.strategy.type_`")?;
    match kind {
        "synchronous" => Ok(Point::Streams(1)),
        "concurrent" => {
            let n = need(b, "config.strategy.streams", "the concurrent strategy's streams")?;
            Ok(Point::Streams(n.round().max(1.0) as u32))
        }
        "constant" | "poisson" | "async" => Ok(Point::Rate(need(
            b,
            "config.strategy.rate",
            "the strategy's requests per second",
        )?)),
        other => Err(format!(
            "strategy `{other}` has no concurrency or rate to make a step of (ladder reads synchronous, concurrent, constant, poisson and async benchmarks)"
        )),
    }
}

/// The synthetic data's requested sizes (`config.spec.data[0]`).
fn requested(doc: &Value) -> Requested {
    let data = at(doc, "config.spec.data").and_then(|d| d.get(0));
    Requested {
        input_tokens: data.and_then(|d| count(d, "prompt_tokens")),
        output_tokens: data.and_then(|d| count(d, "output_tokens")),
    }
}

fn request(r: &Value, model: &str, ok: bool, line: usize) -> Result<PeerRequest, String> {
    let start_s = num(r, "request_start_time")
        .or_else(|| num(r, "info.timings.request_start"))
        .ok_or("no `request_start_time`")?;
    let end_s = num(r, "request_end_time")
        .or_else(|| num(r, "info.timings.request_end"))
        .or_else(|| num(r, "request_latency").map(|l| start_s + l))
        .ok_or("no `request_end_time` or `request_latency`")?;
    let mut req = LogRequest {
        line,
        start_ms: start_s * 1000.0,
        end_ms: end_s * 1000.0,
        ttft_ms: num(r, "time_to_first_token_ms"),
        model: model.to_string(),
        input_tokens: count(r, "prompt_tokens"),
        output_tokens: count(r, "output_tokens"),
        ..LogRequest::default()
    };
    if !ok {
        let error = at(r, "info.error")
            .map(|e| e.as_str().map_or_else(|| e.to_string(), str::to_string))
            .unwrap_or_else(|| "errored".into());
        req.error_message = Some(error.clone());
        outcome(&mut req, None, Some(error));
        req.ttft_ms = None;
    }
    Ok(PeerRequest {
        req,
        gaps_ms: Vec::new(),
        tokens_from_usage: true,
        tpot_ms: if ok {
            num(r, "inter_token_latency_ms")
        } else {
            None
        },
    })
}
