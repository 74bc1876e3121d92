//! AIPerf's per-record profile export (`profile_export.jsonl`, one `{"metadata", "metrics",
//! "error"}` object per request), with the run's summary beside it
//! (`profile_export_aiperf.json`: `aiperf_version`, `schema_version` 1.x, `input_config`, the
//! benchmark duration). A run of `aiperf profile --concurrency 1,2,4` writes one folder per
//! point (`concurrency_1/`, …), each one sweep point: its concurrency (or request rate) is the
//! profiling phase's in `input_config.phases`, else the folder's name. Per record:
//! `request_start_ns`/`request_end_ns` (epoch ns), `time_to_first_token`, `request_latency`,
//! output tokens from `usage_completion_tokens` (the server's usage) else
//! `output_sequence_length` (AIPerf's tokenizer), input tokens likewise, ITL from
//! `inter_chunk_latency` (the gaps between chunks). Warm-up and cancelled records are left out
//! with a note. AIPerf's `inter_token_latency` is ladder's TPOT: the same (E2E − TTFT) /
//! (tokens − 1), recomputed here with the token count above.

use super::{
    at, count, major_minor, num, PeerRequest, PeerRun, Point, Requested, SweepPoint, Tool,
};
use crate::logs::read::outcome;
use crate::logs::{LogError, LogRequest};
use serde_json::Value;

/// The summary schema this reader knows (`schema_version` 1.x).
const SCHEMA_MAJOR: u32 = 1;

/// One AIPerf run's files, as the caller found them.
#[derive(Debug, Clone, Copy, Default)]
pub struct Files<'a> {
    /// `profile_export.jsonl`.
    pub records: &'a str,
    /// `profile_export_aiperf.json` beside it, when there.
    pub summary: Option<&'a str>,
    /// The records' folder name (`concurrency_8`), for the point when the summary is missing.
    pub folder: Option<&'a str>,
}

pub fn parse(files: Files) -> Result<PeerRun, LogError> {
    let summary: Option<Value> = match files.summary {
        Some(text) => Some(serde_json::from_str(text).map_err(|e| {
            LogError::Usage(format!(
                "profile_export_aiperf.json beside it is not JSON ({e})"
            ))
        })?),
        None => None,
    };
    let version = summary
        .as_ref()
        .and_then(|s| at(s, "aiperf_version"))
        .and_then(Value::as_str)
        .unwrap_or("unknown")
        .to_string();
    if let Some(schema) = summary
        .as_ref()
        .and_then(|s| at(s, "schema_version"))
        .and_then(Value::as_str)
    {
        if major_minor(schema).map(|v| v.0) != Some(SCHEMA_MAJOR) {
            return Err(LogError::Usage(format!(
                "AIPerf {version} (export schema {schema}) is not supported: ladder reads AIPerf's export schema {SCHEMA_MAJOR}.x (AIPerf 0.13.0 is tested)"
            )));
        }
    }
    let point = point_of(summary.as_ref(), files.folder)?;
    let mut run = PeerRun {
        tool: Tool::Aiperf,
        version,
        points: Vec::new(),
        requested: summary.as_ref().map(requested).unwrap_or_default(),
        notes: Vec::new(),
    };
    if summary.is_none() {
        run.notes.push(
            "AIPerf's profile_export_aiperf.json was not beside its records: its version is unknown."
                .into(),
        );
    }
    let (mut requests, mut warmup, mut cancelled) = (Vec::new(), 0, 0);
    for (i, line) in files.records.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let line_no = i + 1;
        let rec: Value = serde_json::from_str(line).map_err(|e| LogError::Line {
            line: line_no,
            message: format!("not an AIPerf record ({e})"),
        })?;
        if at(&rec, "metadata.benchmark_phase").and_then(Value::as_str) == Some("warmup") {
            warmup += 1;
            continue;
        }
        if at(&rec, "metadata.was_cancelled").and_then(Value::as_bool) == Some(true) {
            cancelled += 1;
            continue;
        }
        let r = request(&rec, line_no).map_err(|message| {
            let message = format!(
                "{message}; AIPerf {} records are not supported",
                run.version
            );
            LogError::Line {
                line: line_no,
                message,
            }
        })?;
        requests.push(r);
    }
    let model = summary.as_ref().and_then(model_of);
    for r in requests
        .iter_mut()
        .filter(|r: &&mut PeerRequest| r.req.model.is_empty())
    {
        r.req.model = model.clone().unwrap_or_else(|| "model".into());
    }
    if warmup + cancelled > 0 {
        run.notes.push(format!(
            "{warmup} warm-up and {cancelled} cancelled AIPerf record(s) were left out."
        ));
    }
    run.points.push(SweepPoint {
        point,
        duration_s: summary
            .as_ref()
            .and_then(|s| num(s, "benchmark_duration.avg")),
        requests,
    });
    Ok(run)
}

/// The profiling phase's concurrency or rate, else the folder's `concurrency_N` /
/// `request_rate_R`.
fn point_of(summary: Option<&Value>, folder: Option<&str>) -> Result<Point, LogError> {
    let phase = summary
        .and_then(|s| at(s, "input_config.phases"))
        .and_then(Value::as_array)
        .and_then(|ps| {
            ps.iter()
                .find(|p| p.get("kind").and_then(Value::as_str) == Some("profiling"))
        });
    if let Some(p) = phase {
        if let Some(c) = num(p, "concurrency").filter(|c| *c >= 1.0) {
            return Ok(Point::Streams(c.round() as u32));
        }
        if let Some(r) = num(p, "request_rate").or_else(|| num(p, "rate")) {
            return Ok(Point::Rate(r));
        }
    }
    let name = folder.unwrap_or("");
    if let Some(n) = name
        .strip_prefix("concurrency_")
        .and_then(|n| n.parse().ok())
    {
        return Ok(Point::Streams(n));
    }
    if let Some(r) = name
        .strip_prefix("request_rate_")
        .and_then(|r| r.parse().ok())
    {
        return Ok(Point::Rate(r));
    }
    Err(LogError::Usage(
        "no concurrency or request rate for these AIPerf records: keep profile_export_aiperf.json beside profile_export.jsonl (its input_config says it), or put the file in a folder named concurrency_N"
            .into(),
    ))
}

/// The first model the run named (`input_config.models.items[0].name`).
fn model_of(summary: &Value) -> Option<String> {
    at(summary, "input_config.models.items")?
        .get(0)?
        .get("name")?
        .as_str()
        .map(str::to_string)
}

fn requested(summary: &Value) -> Requested {
    let prompts = at(summary, "input_config.datasets")
        .and_then(|d| d.get(0))
        .and_then(|d| d.get("prompts"));
    Requested {
        input_tokens: prompts.and_then(|p| count(p, "isl.mean")),
        output_tokens: prompts.and_then(|p| count(p, "osl.mean")),
    }
}

/// A metric's value in ms, by its unit.
fn ms(rec: &Value, name: &str) -> Option<f64> {
    let m = at(rec, &format!("metrics.{name}"))?;
    let scale = match m.get("unit").and_then(Value::as_str).unwrap_or("ms") {
        "ns" => 1e-6,
        "us" => 1e-3,
        "s" | "sec" => 1000.0,
        _ => 1.0,
    };
    Some(num(m, "value")? * scale)
}

fn request(rec: &Value, line: usize) -> Result<PeerRequest, String> {
    let start_ns = num(rec, "metadata.request_start_ns").ok_or("no `metadata.request_start_ns`")?;
    let end_ns = num(rec, "metadata.request_end_ns");
    let e2e = ms(rec, "request_latency");
    let start_ms = start_ns / 1e6;
    let end_ms = match (end_ns, e2e) {
        (_, Some(e)) => start_ms + e,
        (Some(end), None) => end / 1e6,
        (None, None) => return Err("no `metadata.request_end_ns` or `request_latency`".into()),
    };
    let usage = count(rec, "metrics.usage_completion_tokens.value");
    let model = at(rec, "metadata.model_name")
        .or_else(|| at(rec, "metadata.model"))
        .and_then(Value::as_str);
    let mut req = LogRequest {
        line,
        start_ms,
        end_ms,
        ttft_ms: ms(rec, "time_to_first_token"),
        model: model.unwrap_or("").to_string(),
        input_tokens: count(rec, "metrics.usage_prompt_tokens.value")
            .or_else(|| count(rec, "metrics.input_sequence_length.value")),
        output_tokens: usage.or_else(|| count(rec, "metrics.output_sequence_length.value")),
        ..LogRequest::default()
    };
    if let Some(err) = at(rec, "error") {
        let code = num(err, "code").map(|c| format!("{c}"));
        let message = at(err, "message")
            .and_then(Value::as_str)
            .or_else(|| at(err, "type").and_then(Value::as_str))
            .unwrap_or("error")
            .to_string();
        req.error_message = Some(message.clone());
        outcome(&mut req, code, Some(message));
        req.ttft_ms = None;
    }
    let gaps_ms = at(rec, "metrics.inter_chunk_latency.value")
        .and_then(Value::as_array)
        .map(|g| g.iter().filter_map(Value::as_f64).collect())
        .unwrap_or_default();
    Ok(PeerRequest {
        req,
        gaps_ms,
        tokens_from_usage: usage.is_some(),
        tpot_ms: None,
    })
}
