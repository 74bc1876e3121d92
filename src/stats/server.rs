//! A step's server evidence: the client's split of TTFT (headers, the share of requests on new
//! connections, the server's own queue times) summarized from its records, and the server's
//! `/metrics` during the step (waiting, running, KV-cache use) from the scraped rows.

use super::{describe, StepSummary};
use crate::model::{MetricRow, RequestRecord};

/// Fills `headers_p50_ms`, `headers_p90_ms`, `server_queue_p90_ms` and
/// `server_processing_p90_ms` (queue + prefill, not split) of successful requests
/// and `new_conn_share` (attempted requests that opened a connection).
pub(super) fn client_split(s: &mut StepSummary, records: &[RequestRecord]) {
    let ok = || records.iter().filter(|r| r.is_ok());
    let headers = describe(&ok().filter_map(|r| r.headers_ms).collect::<Vec<_>>());
    s.headers_p50_ms = headers.map(|d| d.p50);
    s.headers_p90_ms = headers.map(|d| d.p90);
    s.server_queue_p90_ms =
        describe(&ok().filter_map(|r| r.server_queue_ms).collect::<Vec<_>>()).map(|d| d.p90);
    s.server_processing_p90_ms = describe(
        &ok()
            .filter_map(|r| r.server_processing_ms)
            .collect::<Vec<_>>(),
    )
    .map(|d| d.p90);
    let new_conns = records.iter().filter(|r| r.connect_ms.is_some()).count();
    s.new_conn_share = (s.attempted > 0).then(|| new_conns as f64 / s.attempted as f64);
}

/// Fills each step's server columns (`server_waiting_mean`, `_max`, `server_running_max`,
/// `server_kv_max`) from the scraped `/metrics` rows tagged with its model and step; gaps
/// (failed scrapes) are left out.
pub fn apply_server_metrics(summaries: &mut [StepSummary], rows: &[MetricRow]) {
    for s in summaries {
        let of = |series: &str| -> Vec<f64> {
            rows.iter()
                .filter(|r| {
                    r.series == series
                        && r.step == Some(s.step)
                        && r.model.as_deref() == Some(s.model.as_str())
                })
                .filter_map(|r| r.value)
                .filter(|v| v.is_finite())
                .collect()
        };
        let max = |v: &[f64]| v.iter().copied().reduce(f64::max);
        let waiting = of("waiting");
        s.server_waiting_mean =
            (!waiting.is_empty()).then(|| waiting.iter().sum::<f64>() / waiting.len() as f64);
        s.server_waiting_max = max(&waiting);
        s.server_running_max = max(&of("running"));
        s.server_kv_max = max(&of("kv_cache_usage"));
    }
}
