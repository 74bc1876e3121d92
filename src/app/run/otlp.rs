//! `telemetry.otlp` and `run --otlp URL`: one OTLP exporter per scenario run. It exports the
//! run's metrics every `every` and once more at the end (spans too with `traces: true`), on a
//! task of its own: a slow or failing receiver never holds up a request. A failed export is
//! counted, the first one is reported at once, and the end of the run says how many failed;
//! it never stops the run.

use super::options::TelemetryOptions;
use crate::error::UsageError;
use crate::runner::Progress;
use crate::scenario::build_telemetry::{check_endpoint, DEFAULT_OTLP_EVERY};
use crate::scenario::Scenario;
use crate::telemetry::otlp::{Encoding, OtlpExporter, OtlpRun, RunInfo};
use crate::telemetry::Both;
use anyhow::Result;
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// How long one export may take before it counts as failed.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// The OTLP export of one run.
pub(super) struct Otlp {
    run: Arc<OtlpRun>,
    stop: watch::Sender<bool>,
    task: JoinHandle<Tally>,
    endpoint: String,
    quiet: bool,
}

/// Exports sent and failed.
#[derive(Debug, Default)]
struct Tally {
    sent: u64,
    failed: u64,
    last_error: Option<String>,
}

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// `gen_ai.provider.name` and `gen_ai.operation.name` of a scenario's target (an Azure
/// deployment, which `api_version` marks, is `azure.ai.openai`).
fn provider_and_operation(s: &Scenario) -> (&'static str, &'static str) {
    let spec = s.target.api.spec();
    let provider = match s.target.api_version {
        Some(_) => "azure.ai.openai",
        None => spec.family.otel_provider(),
    };
    (provider, spec.input.otel_operation())
}

/// The progress sinks of one run: `progress` (the live line), the Prometheus metrics when
/// `live`, and the OTLP export when asked for (returned, to be finished after the run).
pub(super) fn sinks(
    s: &Scenario,
    args: &TelemetryOptions,
    live: Option<&super::telemetry::Live>,
    run_id: &str,
    quiet: bool,
    progress: &Arc<super::progress::LiveProgress>,
) -> Result<(Option<Otlp>, Arc<dyn Progress>)> {
    let events: Arc<dyn Progress> = match live {
        Some(live) => live.progress(&s.name, run_id, progress.clone()),
        None => progress.clone(),
    };
    let otlp = Otlp::start(s, args, run_id, quiet)?;
    let events = match &otlp {
        Some(o) => o.progress(events),
        None => events,
    };
    Ok((otlp, events))
}

/// The OTLP export's last export and report, when there is one.
pub(super) async fn finish(otlp: Option<Otlp>) {
    if let Some(o) = otlp {
        o.finish().await;
    }
}

impl Otlp {
    /// `None` when neither the scenario nor `--otlp` asks for an export.
    pub(super) fn start(
        s: &Scenario,
        args: &TelemetryOptions,
        run_id: &str,
        quiet: bool,
    ) -> Result<Option<Otlp>> {
        let spec = s.otlp.as_ref();
        let Some(endpoint) = args
            .otlp
            .clone()
            .or_else(|| spec.map(|o| o.endpoint.clone()))
        else {
            return Ok(None);
        };
        check_endpoint(&endpoint).map_err(|why| UsageError(format!("--otlp: {why}")))?;
        let headers = spec.map_or_else(Vec::new, |o| {
            o.headers
                .iter()
                .map(|(k, v)| (k.clone(), v.expose().to_string()))
                .collect()
        });
        let json = args.otlp_json || spec.is_some_and(|o| o.json);
        let encoding = if json {
            Encoding::Json
        } else {
            Encoding::Protobuf
        };
        let exporter = OtlpExporter::new(&endpoint, headers, encoding, EXPORT_TIMEOUT)?;
        let (provider, operation) = provider_and_operation(s);
        let info = RunInfo {
            scenario: s.name.clone(),
            run_id: run_id.to_string(),
            provider: provider.into(),
            operation: operation.into(),
            version: env!("CARGO_PKG_VERSION").into(),
        };
        let traces = spec.is_some_and(|o| o.traces);
        let every = spec.map_or(DEFAULT_OTLP_EVERY, |o| o.every);
        let run = Arc::new(OtlpRun::new(info, traces, now_ns));
        let (stop, stopped) = watch::channel(false);
        let task = tokio::spawn(export_loop(
            exporter,
            Arc::clone(&run),
            every,
            stopped,
            quiet,
        ));
        if !quiet {
            let what = if traces {
                "metrics and spans"
            } else {
                "metrics"
            };
            eprintln!("otlp: exporting the run's {what} to {endpoint} every {every:?}");
        }
        Ok(Some(Otlp {
            run,
            stop,
            task,
            endpoint,
            quiet,
        }))
    }

    /// `events` and the export, fed the same progress events.
    pub(super) fn progress(&self, events: Arc<dyn Progress>) -> Arc<dyn Progress> {
        Arc::new(Both(events, Arc::clone(&self.run) as Arc<dyn Progress>))
    }

    /// The last export, then what failed.
    pub(super) async fn finish(self) {
        let _ = self.stop.send(true);
        let tally = self.task.await.unwrap_or_default();
        let dropped = self.run.spans_dropped();
        if self.quiet {
            return;
        }
        if tally.failed > 0 {
            eprintln!(
                "warning: otlp: {} of {} exports to {} failed; the run's files hold everything (last: {})",
                tally.failed,
                tally.sent + tally.failed,
                self.endpoint,
                tally.last_error.unwrap_or_default()
            );
        } else {
            eprintln!(
                "otlp: {} exports to {}, none failed",
                tally.sent, self.endpoint
            );
        }
        if dropped > 0 {
            eprintln!("warning: otlp: {dropped} spans dropped (more than the queue holds between two exports); lower telemetry.otlp.every");
        }
    }
}

/// Exports every `every` until told to stop, then once more.
async fn export_loop(
    exporter: OtlpExporter,
    run: Arc<OtlpRun>,
    every: Duration,
    mut stopped: watch::Receiver<bool>,
    quiet: bool,
) -> Tally {
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick.tick().await;
    let mut tally = Tally::default();
    loop {
        let last = tokio::select! {
            _ = tick.tick() => false,
            _ = stopped.wait_for(|s| *s) => true,
        };
        let mut results = vec![exporter.metrics(&run.metrics()).await];
        if let Some(spans) = run.take_spans() {
            results.push(exporter.traces(&spans).await);
        }
        for r in results {
            match r {
                Ok(()) => tally.sent += 1,
                Err(e) => {
                    if tally.failed == 0 && !quiet && !last {
                        eprintln!("warning: {e} (the run goes on; the end of the run counts the failures)");
                    }
                    tally.failed += 1;
                    tally.last_error = Some(e.to_string());
                }
            }
        }
        if last {
            return tally;
        }
    }
}
