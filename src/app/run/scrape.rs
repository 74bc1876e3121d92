//! `target.metrics`: scrapes the server's Prometheus endpoint every `every` while the ladder
//! runs, tags each scrape with the model and step running then (a wrapper around the run's
//! progress sink learns them), and hands back the rows for `server_metrics.csv` and the step
//! summaries. A scrape that fails or times out is a gap; it never stops the run.

use crate::client::prom;
use crate::model::{MetricRow, RequestRecord};
use crate::runner::Progress;
use crate::scenario::{MetricsTarget, Scenario};
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;

type Current = Arc<Mutex<Option<(String, u32)>>>;

/// The run's progress sink, which also remembers the step running now.
pub(super) struct StepTracker {
    inner: Arc<dyn Progress>,
    current: Current,
}

impl Progress for StepTracker {
    fn step_started(&self, model: &str, step: u32, steps: u32, label: &str, total: Option<u64>) {
        *self.current.lock().unwrap_or_else(PoisonError::into_inner) =
            Some((model.to_string(), step));
        self.inner.step_started(model, step, steps, label, total);
    }
    fn record(&self, record: &RequestRecord) {
        self.inner.record(record);
    }
    fn in_flight(&self, n: usize) {
        self.inner.in_flight(n);
    }
    fn step_finished(&self, model: &str, step: u32) {
        *self.current.lock().unwrap_or_else(PoisonError::into_inner) = None;
        self.inner.step_finished(model, step);
    }
}

/// A running scraper.
pub(super) struct Scraper {
    stop: watch::Sender<bool>,
    task: JoinHandle<Vec<MetricRow>>,
    pub url: String,
}

/// The endpoint of `metrics` for a target at `base_url`: its url, or (auto) the base URL's
/// origin + `/metrics`.
pub(super) fn metrics_url(metrics: &MetricsTarget, base_url: &str) -> Option<String> {
    if let Some(u) = &metrics.url {
        return Some(u.clone());
    }
    let mut u = reqwest::Url::parse(base_url).ok()?;
    u.set_path("/metrics");
    u.set_query(None);
    Some(u.to_string())
}

/// Starts scraping when the scenario has `target.metrics` (for a target at `base_url`);
/// returns the scraper, if any, and the progress sink to give the runner.
pub(super) fn start_for(
    s: &Scenario,
    base_url: &str,
    progress: Arc<dyn Progress>,
) -> (Option<Scraper>, Arc<dyn Progress>) {
    let Some((m, url)) = s
        .target
        .metrics
        .as_ref()
        .and_then(|m| Some((m, metrics_url(m, base_url)?)))
    else {
        return (None, progress);
    };
    let (scraper, progress) = start(url, m, progress, Instant::now());
    (Some(scraper), progress)
}

/// Stops the scraper of scenario `name`, if it has one, and returns its rows; says on stderr
/// when no scrape succeeded (the file then holds only gaps).
pub(super) async fn finish_for(scraper: Option<Scraper>, name: &str) -> Option<Vec<MetricRow>> {
    let scraper = scraper?;
    let url = scraper.url.clone();
    let rows = scraper.finish().await;
    if !rows.iter().any(|r| r.value.is_some()) {
        eprintln!(
            "warning: {name}: no scrape of the server's metrics at {url} succeeded; server_metrics.csv has only gaps"
        );
    }
    Some(rows)
}

/// Puts a run's scraped rows, if it scraped, into its step summaries (`persist` writes
/// `server_metrics.csv`).
pub(super) fn keep(run: &mut super::recorder::CollectedRun, rows: Option<&[MetricRow]>) {
    if let Some(rows) = rows {
        crate::stats::apply_server_metrics(&mut run.summaries, rows);
    }
}

/// Starts scraping `url`; returns the scraper and the progress sink to give the runner.
pub(super) fn start(
    url: String,
    metrics: &MetricsTarget,
    progress: Arc<dyn Progress>,
    run_start: Instant,
) -> (Scraper, Arc<dyn Progress>) {
    let current: Current = Arc::default();
    let tracker = Arc::new(StepTracker {
        inner: progress,
        current: current.clone(),
    });
    let (stop, mut stopped) = watch::channel(false);
    let every = metrics.every;
    let client = reqwest::Client::builder()
        .timeout(every.max(std::time::Duration::from_millis(250)))
        .build()
        .unwrap_or_default();
    let target = url.clone();
    let task = tokio::spawn(async move {
        let mut rows = Vec::new();
        let mut prev: Option<(prom::Mapped, f64)> = None;
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                _ = stopped.changed() => break,
            }
            let t_ms = run_start.elapsed().as_secs_f64() * 1000.0;
            let (model, step) = current
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone()
                .map_or((None, None), |(m, s)| (Some(m), Some(s)));
            let text = match client.get(&target).send().await {
                Ok(r) if r.status().is_success() => r.text().await.ok(),
                _ => None,
            };
            let points = match &text {
                Some(t) => {
                    let now = prom::map(&prom::parse(t));
                    let p = prom::points(&now, t_ms, prev.as_ref().map(|(m, t)| (m, *t)));
                    prev = Some((now, t_ms));
                    p
                }
                None => prom::gap(),
            };
            rows.extend(points.into_iter().map(|p| MetricRow {
                t_ms,
                step,
                model: model.clone(),
                series: p.series,
                value: p.value,
            }));
        }
        rows
    });
    (Scraper { stop, task, url }, tracker)
}

impl Scraper {
    /// Stops scraping and returns every row.
    pub(super) async fn finish(self) -> Vec<MetricRow> {
        let _ = self.stop.send(true);
        self.task.await.unwrap_or_default()
    }
}
