//! `run --metrics-addr` and `--prometheus-remote-write`: binds the endpoint and checks the push
//! URL before any traffic, feeds each run's progress events into the shared
//! `telemetry::Telemetry`, pushes every second, and at the end waits for one more scrape and
//! makes the last push, so that Prometheus holds the run's final counts.

use super::options::{RemoteWrite, TelemetryOptions};
use crate::error::UsageError;
use crate::runner::Progress;
use crate::telemetry::{self, RemoteWriter, Telemetry};
use anyhow::Result;
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// How often the remote write pushes.
const PUSH_EVERY: Duration = Duration::from_secs(1);
/// The longest the end of a run waits for Prometheus' next scrape.
const SCRAPE_WAIT_CAP: Duration = Duration::from_secs(30);

/// The live metrics of this process's runs.
pub(super) struct Live {
    telemetry: Arc<Telemetry>,
    server: Option<(watch::Sender<bool>, JoinHandle<std::io::Result<()>>)>,
    pusher: Option<(watch::Sender<bool>, JoinHandle<()>)>,
    quiet: bool,
}

impl Live {
    /// `None` without either flag. A bad address or an unreachable push URL is a usage error
    /// (exit 2) before any traffic.
    pub(super) async fn start(args: &TelemetryOptions, quiet: bool) -> Result<Option<Live>> {
        if args.metrics_addr.is_none() && args.remote_write.is_none() {
            return Ok(None);
        }
        let t = Telemetry::new();
        let server = match args.metrics_addr {
            Some(addr) => {
                let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| {
                    UsageError(format!(
                        "--metrics-addr {addr}: cannot listen there ({e}); pick another port, or 0 for a free one"
                    ))
                })?;
                let bound = listener.local_addr()?;
                if !quiet {
                    eprintln!("metrics: serving http://{bound}/metrics while the run lasts");
                }
                let (stop, mut stopped) = watch::channel(false);
                let shutdown = async move {
                    let _ = stopped.wait_for(|s| *s).await;
                };
                let task = tokio::spawn(telemetry::serve(listener, Arc::clone(&t), shutdown));
                Some((stop, task))
            }
            None => None,
        };
        let pusher = match &args.remote_write {
            Some(push) => Some(start_pusher(push, &t, quiet).await?),
            None => None,
        };
        Ok(Some(Live {
            telemetry: t,
            server,
            pusher,
            quiet,
        }))
    }

    /// The progress sink of one run: `live` (the progress line) and the metrics.
    pub(super) fn progress(
        &self,
        scenario: &str,
        run_id: &str,
        live: Arc<dyn Progress>,
    ) -> Arc<dyn Progress> {
        Arc::new(telemetry::Both(
            live,
            Arc::new(self.telemetry.for_run(scenario, run_id)),
        ))
    }

    /// After the last run: one more scrape (when Prometheus has been scraping), the last push,
    /// then the endpoint closes.
    pub(super) async fn finish(self) {
        if let Some((stop, task)) = self.server {
            if let Some(wait) = self.telemetry.scrape_wait(SCRAPE_WAIT_CAP) {
                // Listening before saying so: a scraper may answer the line at once.
                let next = self.telemetry.next_scrape(wait);
                if !self.quiet {
                    eprintln!(
                        "metrics: waiting up to {} s for the last scrape",
                        wait.as_secs()
                    );
                }
                if !next.await && !self.quiet {
                    eprintln!("warning: --metrics-addr: no scrape came after the run ended; the last counts did not reach Prometheus");
                }
            }
            let _ = stop.send(true);
            let _ = task.await;
        }
        if let Some((stop, task)) = self.pusher {
            let _ = stop.send(true);
            let _ = task.await;
        }
    }
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// Checks the URL with an empty push, then pushes every `PUSH_EVERY` until told to stop, and
/// once more then. A failing periodic push is reported once; the run goes on.
async fn start_pusher(
    push: &RemoteWrite,
    t: &Arc<Telemetry>,
    quiet: bool,
) -> Result<(watch::Sender<bool>, JoinHandle<()>)> {
    let flag = "--prometheus-remote-write";
    let url = push.url.as_str();
    match reqwest::Url::parse(url) {
        Ok(u) if u.scheme() == "http" || u.scheme() == "https" => {
            if !u.username().is_empty() || u.password().is_some() {
                return Err(UsageError(format!(
                    "{flag}: put credentials in LADDER_REMOTE_WRITE_USERNAME/LADDER_REMOTE_WRITE_PASSWORD, not in the URL (it is recorded in meta.json)"
                ))
                .into());
            }
        }
        _ => {
            return Err(UsageError(format!(
                "{flag} {url}: not an http(s) URL; e.g. http://127.0.0.1:9090/api/v1/write"
            ))
            .into())
        }
    }
    let mut writer = RemoteWriter::new(url, push.auth.clone())?;
    writer
        .push(Default::default())
        .await
        .map_err(|e| UsageError(format!("{flag}: {e}; nothing was sent to the target")))?;
    let (stop, mut stopped) = watch::channel(false);
    let t = Arc::clone(t);
    let task = tokio::spawn(async move {
        let mut tick = tokio::time::interval(PUSH_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut failed = false;
        loop {
            let last = tokio::select! {
                _ = tick.tick() => false,
                _ = stopped.wait_for(|s| *s) => true,
            };
            match writer.push(t.write_request(now_ms())).await {
                Err(e) if last && !quiet => {
                    eprintln!(
                        "warning: the last push failed, Prometheus misses the end of the run: {e}"
                    )
                }
                Err(e) if !failed && !quiet => {
                    failed = true;
                    eprintln!("warning: {e} (the run goes on; later failures are not shown)");
                }
                _ => {}
            }
            if last {
                return;
            }
        }
    });
    Ok((stop, task))
}
