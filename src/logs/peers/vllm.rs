//! vLLM's serving benchmark result (`vllm bench serve --save-result --save-detailed`, also the
//! older `benchmarks/benchmark_serving.py`): one JSON object per run, so one file is one sweep
//! point, its `max_concurrency` (or its `request_rate` when that is finite and no concurrency
//! was set). A sweep is several files, one per point. Per request (parallel lists): `ttfts` (s),
//! `itls` (the gaps between chunks, s), `latencies` (s; else TTFT plus the gaps),
//! `start_times` (s on the benchmark's own clock), `input_lens` and `output_lens` (vLLM's
//! tokenizer), `errors` (empty when the request succeeded). vLLM writes neither its version nor
//! the requested lengths into the file: `--metadata vllm_version=X random_input_len=N
//! random_output_len=N` does, and is read. A result without the per-request lists (saved
//! without `--save-detailed`) is refused.
//! The reader follows the fields of vLLM's `vllm/benchmarks/serve.py`; the recording in
//! scenarios/logs/peers/vllm-0.33.0/ is vLLM 0.33.0's (`compat/peers.sh` with PEERS_VLLM=1).

use super::{at, document, num, PeerRequest, PeerRun, Point, Requested, SweepPoint, Tool};
use crate::logs::read::outcome;
use crate::logs::{LogError, LogRequest};
use serde_json::Value;

pub fn parse(text: &str) -> Result<PeerRun, LogError> {
    let doc = document(text, Tool::Vllm)?;
    let version = at(&doc, "vllm_version")
        .and_then(Value::as_str)
        .unwrap_or("unknown")
        .to_string();
    let list = |key: &str| at(&doc, key).and_then(Value::as_array);
    let (Some(ttfts), Some(itls)) = (list("ttfts"), list("itls")) else {
        return Err(LogError::Usage(format!(
            "a vLLM result (version {version}) without per-request `ttfts` and `itls`: save it with `vllm bench serve --save-result --save-detailed`"
        )));
    };
    let point = point_of(&doc)?;
    let model = at(&doc, "model_id")
        .and_then(Value::as_str)
        .unwrap_or("model")
        .to_string();
    let nth = |key: &str, i: usize| list(key).and_then(|l| l.get(i)).and_then(Value::as_f64);
    let mut requests = Vec::with_capacity(ttfts.len());
    for (i, ttft) in ttfts.iter().enumerate() {
        let gaps_s: Vec<f64> = itls
            .get(i)
            .and_then(Value::as_array)
            .map(|g| g.iter().filter_map(Value::as_f64).collect())
            .unwrap_or_default();
        let ttft_s = ttft.as_f64().unwrap_or(0.0);
        let e2e_s = nth("latencies", i).unwrap_or_else(|| ttft_s + gaps_s.iter().sum::<f64>());
        let start_s = nth("start_times", i).unwrap_or(0.0);
        let error = list("errors")
            .and_then(|l| l.get(i))
            .and_then(Value::as_str)
            .filter(|e| !e.trim().is_empty())
            .map(str::to_string);
        let mut req = LogRequest {
            line: i + 1,
            start_ms: start_s * 1000.0,
            end_ms: (start_s + e2e_s) * 1000.0,
            ttft_ms: Some(ttft_s * 1000.0),
            model: model.clone(),
            input_tokens: nth("input_lens", i).map(|n| n as u64),
            output_tokens: nth("output_lens", i).map(|n| n as u64),
            ..LogRequest::default()
        };
        if let Some(e) = error {
            req.error_message = Some(e.clone());
            outcome(&mut req, None, Some(e));
            req.ttft_ms = None;
        }
        requests.push(PeerRequest {
            req,
            gaps_ms: gaps_s.iter().map(|g| g * 1000.0).collect(),
            tokens_from_usage: false,
            tpot_ms: None,
        });
    }
    let median = |key: &str| {
        let mut v: Vec<f64> = list(key)?.iter().filter_map(Value::as_f64).collect();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).map(|x| x.round() as u64)
    };
    // vLLM keeps no requested sizes; `--metadata random_input_len=N random_output_len=N` (its
    // own argument names) puts them in the file, else the median lengths stand for them.
    let meta = |key: &str| {
        let v = at(&doc, key)?;
        v.as_u64()
            .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
    };
    Ok(PeerRun {
        tool: Tool::Vllm,
        version,
        requested: Requested {
            input_tokens: meta("random_input_len").or_else(|| median("input_lens")),
            output_tokens: meta("random_output_len").or_else(|| median("output_lens")),
        },
        points: vec![SweepPoint {
            point,
            duration_s: num(&doc, "duration"),
            requests,
        }],
        notes: Vec::new(),
    })
}

/// `max_concurrency`, else a finite `request_rate`.
fn point_of(doc: &Value) -> Result<Point, LogError> {
    let rate = num(doc, "request_rate").filter(|r| *r > 0.0);
    match (num(doc, "max_concurrency").filter(|c| *c >= 1.0), rate) {
        (Some(c), None) => Ok(Point::Streams(c.round() as u32)),
        (_, Some(r)) => Ok(Point::Rate(r)),
        (None, None) => Err(LogError::Usage(
            "a vLLM result with neither `max_concurrency` nor a finite `request_rate`: every request was sent at once, so there is no step to make; run `vllm bench serve` with --max-concurrency N (one file per N)"
                .into(),
        )),
    }
}
