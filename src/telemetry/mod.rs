//! Live metrics of a run for Prometheus and Grafana (`docs/telemetry.md`): the runner's progress
//! events are counted into one [`registry::Registry`], which `--metrics-addr` serves in the text
//! exposition format ([`serve`]) and `--prometheus-remote-write` pushes ([`RemoteWriter`]).
//! Series names and labels are declared once, in `registry`.
//!
//! No clock of its own and no output: `app/` passes the wall-clock timestamps of pushes and
//! prints what goes wrong.

pub mod exposition;
pub mod otlp;
pub mod otlp_proto;
pub mod registry;
pub mod remote_write;

use crate::model::RequestRecord;
use crate::runner::Progress;
use crate::scenario::Secret;
use registry::{Registry, Sample, StepKey};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// The metrics of every run of this process, shared by the runner (writing), the endpoint and
/// the pusher (reading).
pub struct Telemetry {
    state: Mutex<State>,
    /// Scrapes served so far (the endpoint bumps it; the end of the run waits on it).
    scrapes: watch::Sender<u64>,
}

#[derive(Default)]
struct State {
    registry: Registry,
    /// Gauges of steps that ended since the last push (the push marks them stale).
    ended: Vec<Sample>,
    /// When the last scrapes came, newest last (a few, to estimate the scrape interval).
    scraped_at: Vec<Instant>,
}

impl Default for Telemetry {
    fn default() -> Self {
        Telemetry {
            state: Mutex::new(State::default()),
            scrapes: watch::channel(0).0,
        }
    }
}

impl Telemetry {
    pub fn new() -> Arc<Self> {
        Arc::new(Telemetry::default())
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves counters that are still counters.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The progress sink of one run: its records are counted under `scenario` and `run_id`.
    pub fn for_run(self: &Arc<Self>, scenario: &str, run_id: &str) -> RunTelemetry {
        RunTelemetry {
            telemetry: Arc::clone(self),
            scenario: scenario.to_string(),
            run_id: run_id.to_string(),
            current: Mutex::new(None),
        }
    }

    /// The text exposition of everything so far (a scrape: counted as one).
    pub fn scrape(&self) -> String {
        let text = {
            let mut s = self.state();
            s.scraped_at.push(Instant::now());
            let keep = s.scraped_at.len().saturating_sub(4);
            s.scraped_at.drain(..keep);
            exposition::render(&s.registry.families())
        };
        self.scrapes.send_modify(|n| *n += 1);
        text
    }

    /// The text exposition, without counting a scrape (tests, the final look).
    pub fn exposition(&self) -> String {
        exposition::render(&self.state().registry.families())
    }

    /// What a push sends at `timestamp_ms`: every series, and stale markers for the gauges of
    /// the steps that ended since the previous push.
    pub fn write_request(&self, timestamp_ms: i64) -> remote_write::WriteRequest {
        let mut s = self.state();
        let ended = std::mem::take(&mut s.ended);
        remote_write::write_request(&s.registry.families(), &ended, timestamp_ms)
    }

    /// How long to wait for one more scrape after the run: `None` when nothing has scraped (no
    /// one to wait for), else 1.5 × the interval between the last scrapes (15 s when only one
    /// came), at least 1 s and at most `cap`.
    pub fn scrape_wait(&self, cap: Duration) -> Option<Duration> {
        let s = self.state();
        let interval = match s.scraped_at.as_slice() {
            [] => return None,
            [_] => Duration::from_secs(10),
            [.., a, b] => *b - *a,
        };
        Some(interval.mul_f64(1.5).clamp(Duration::from_secs(1), cap))
    }

    /// Waits until a scrape after this call (not after the first poll: a scrape served
    /// between the call and the `await` counts) has been served, or `timeout`. Resolves to
    /// whether one came.
    pub fn next_scrape(&self, timeout: Duration) -> impl std::future::Future<Output = bool> {
        let mut rx = self.scrapes.subscribe();
        rx.mark_unchanged();
        async move { tokio::time::timeout(timeout, rx.changed()).await.is_ok() }
    }
}

/// [`Progress`] of one run into the shared [`Telemetry`].
pub struct RunTelemetry {
    telemetry: Arc<Telemetry>,
    scenario: String,
    run_id: String,
    /// The running step (steps of a run never overlap).
    current: Mutex<Option<StepKey>>,
}

impl RunTelemetry {
    fn key(&self, model: &str, step: u32) -> StepKey {
        StepKey {
            scenario: self.scenario.clone(),
            run_id: self.run_id.clone(),
            model: model.to_string(),
            step,
        }
    }

    fn current(&self) -> Option<StepKey> {
        self.current
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

impl Progress for RunTelemetry {
    fn step_started(&self, model: &str, step: u32, _: u32, _: &str, _: Option<u64>) {
        let key = self.key(model, step);
        *self.current.lock().unwrap_or_else(|e| e.into_inner()) = Some(key.clone());
        self.telemetry.state().registry.step_started(key, 0.0);
    }

    fn step_load(&self, load: f64) {
        if let Some(key) = self.current() {
            self.telemetry.state().registry.step_started(key, load);
        }
    }

    fn record(&self, record: &RequestRecord) {
        let key = self.key(&record.model, record.step);
        self.telemetry.state().registry.record(key, record);
    }

    fn in_flight(&self, n: usize) {
        if let Some(key) = self.current() {
            self.telemetry.state().registry.in_flight(&key, n);
        }
    }

    fn step_finished(&self, model: &str, step: u32) {
        let key = self.key(model, step);
        let mut s = self.telemetry.state();
        let gone = s.registry.step_finished(&key);
        s.ended.extend(gone);
    }
}

/// Two progress sinks fed the same events (the live line and the telemetry).
pub struct Both(pub Arc<dyn Progress>, pub Arc<dyn Progress>);

impl Progress for Both {
    fn step_started(&self, model: &str, step: u32, steps: u32, label: &str, total: Option<u64>) {
        self.0.step_started(model, step, steps, label, total);
        self.1.step_started(model, step, steps, label, total);
    }
    fn step_load(&self, load: f64) {
        self.0.step_load(load);
        self.1.step_load(load);
    }
    fn record(&self, record: &RequestRecord) {
        self.0.record(record);
        self.1.record(record);
    }
    fn in_flight(&self, n: usize) {
        self.0.in_flight(n);
        self.1.in_flight(n);
    }
    fn step_finished(&self, model: &str, step: u32) {
        self.0.step_finished(model, step);
        self.1.step_finished(model, step);
    }
}

/// Why a push failed. The URL is shown without credentials (they never travel in it).
#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    #[error("remote write to {url}: {reason}")]
    Push { url: String, reason: String },
    #[error("remote write to {url}: HTTP {status}: {body}")]
    Rejected {
        url: String,
        status: u16,
        body: String,
    },
}

/// How a push authenticates. The password and the token are secrets: `Debug` shows `***`.
#[derive(Debug, Clone, Default)]
pub enum PushAuth {
    #[default]
    None,
    Basic {
        username: String,
        password: Secret,
    },
    Bearer(Secret),
}

/// Pushes the metrics to a remote-write endpoint.
pub struct RemoteWriter {
    http: reqwest::Client,
    url: String,
    auth: PushAuth,
    /// The timestamp of the previous push: each push is later (Prometheus refuses a sample
    /// that is not newer than the series' last one).
    last_ms: i64,
}

impl RemoteWriter {
    pub fn new(url: &str, auth: PushAuth) -> Result<Self, TelemetryError> {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| TelemetryError::Push {
                url: url.to_string(),
                reason: e.to_string(),
            })?;
        Ok(RemoteWriter {
            http,
            url: url.to_string(),
            auth,
            last_ms: i64::MIN,
        })
    }

    /// Sends `request` (its samples re-stamped to stay after the previous push).
    pub async fn push(
        &mut self,
        mut request: remote_write::WriteRequest,
    ) -> Result<(), TelemetryError> {
        let stamp = request
            .timeseries
            .first()
            .and_then(|t| t.samples.first())
            .map_or(0, |s| s.timestamp)
            .max(self.last_ms.saturating_add(1));
        for t in &mut request.timeseries {
            for s in &mut t.samples {
                s.timestamp = stamp;
            }
        }
        let mut req = self.http.post(&self.url);
        for (k, v) in remote_write::HEADERS {
            req = req.header(k, v);
        }
        req = match &self.auth {
            PushAuth::None => req,
            PushAuth::Basic { username, password } => {
                req.basic_auth(username, Some(password.expose()))
            }
            PushAuth::Bearer(token) => req.bearer_auth(token.expose()),
        };
        let url = || self.url.clone();
        let resp = req
            .body(remote_write::body(&request))
            .send()
            .await
            .map_err(|e| TelemetryError::Push {
                url: url(),
                reason: e.without_url().to_string(),
            })?;
        let status = resp.status();
        if !status.is_success() {
            let body = resp.text().await.unwrap_or_default();
            let body: String = body
                .trim()
                .chars()
                .filter(|c| !c.is_control())
                .take(200)
                .collect();
            return Err(TelemetryError::Rejected {
                url: url(),
                status: status.as_u16(),
                body,
            });
        }
        self.last_ms = stamp;
        Ok(())
    }
}

/// Serves `GET /metrics` (the exposition) on `listener` until `shutdown` resolves.
pub async fn serve(
    listener: tokio::net::TcpListener,
    telemetry: Arc<Telemetry>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    use axum::{http::header, routing::get, Router};
    let app = Router::new()
        .route(
            "/metrics",
            get(move || {
                let t = Arc::clone(&telemetry);
                async move {
                    (
                        [(header::CONTENT_TYPE, exposition::CONTENT_TYPE)],
                        t.scrape(),
                    )
                }
            }),
        )
        .route(
            "/",
            get(|| async { "ladder: the run's metrics are at /metrics\n" }),
        );
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(step: u32, ttft: f64) -> RequestRecord {
        RequestRecord {
            model: "m".into(),
            step,
            ttft_ms: Some(ttft),
            e2e_ms: Some(ttft * 3.0),
            output_tokens: Some(10),
            ..RequestRecord::default()
        }
    }

    #[test]
    fn a_run_sink_counts_steps_under_its_labels_and_drops_ended_gauges() {
        let t = Telemetry::new();
        let run = t.for_run("demo", "2026-12-01T10-00-00Z");
        run.step_started("m", 1, 2, "4 streams", Some(2));
        run.step_load(4.0);
        run.in_flight(2);
        run.record(&rec(1, 80.0));
        run.record(&rec(1, 90.0));
        let text = t.exposition();
        assert!(text.contains(
            "ladder_requests_total{scenario=\"demo\",model=\"m\",step=\"1\",run_id=\"2026-12-01T10-00-00Z\",outcome=\"ok\"} 2\n"
        ), "{text}");
        assert!(text.contains("ladder_step_load{scenario=\"demo\",model=\"m\",step=\"1\",run_id=\"2026-12-01T10-00-00Z\"} 4\n"));
        assert!(text.contains("ladder_ttft_seconds_bucket{scenario=\"demo\",model=\"m\",step=\"1\",run_id=\"2026-12-01T10-00-00Z\",le=\"0.1\"} 2\n"));
        run.step_finished("m", 1);
        let text = t.exposition();
        assert!(!text.contains("ladder_step_load{"), "{text}");
        assert!(text.contains("ladder_output_tokens_total{scenario=\"demo\",model=\"m\",step=\"1\",run_id=\"2026-12-01T10-00-00Z\"} 20\n"));
        // The next push marks the two gauges stale, once.
        let pushed = t.write_request(1000);
        let stale = pushed
            .timeseries
            .iter()
            .filter(|s| s.samples[0].value.to_bits() == remote_write::STALE_NAN)
            .count();
        assert_eq!(stale, 2);
        let again = t.write_request(2000);
        assert!(again
            .timeseries
            .iter()
            .all(|s| s.samples[0].value.to_bits() != remote_write::STALE_NAN));
    }

    #[test]
    fn the_scrape_wait_follows_the_scrape_interval() {
        let t = Telemetry::new();
        assert_eq!(t.scrape_wait(Duration::from_secs(30)), None);
        t.scrape();
        assert_eq!(
            t.scrape_wait(Duration::from_secs(30)),
            Some(Duration::from_secs(15))
        );
        assert_eq!(
            t.scrape_wait(Duration::from_secs(5)),
            Some(Duration::from_secs(5))
        );
        t.scrape();
        // Two scrapes a moment apart: the floor of one second.
        assert_eq!(
            t.scrape_wait(Duration::from_secs(30)),
            Some(Duration::from_secs(1))
        );
    }

    /// The end of a run says it waits for the last scrape, then waits: a scraper that answers
    /// the line at once (before the wait is polled) is the scrape waited for.
    #[tokio::test(start_paused = true)]
    async fn a_scrape_between_asking_and_waiting_counts() {
        let t = Telemetry::new();
        let next = t.next_scrape(Duration::from_secs(5));
        let _ = t.scrape();
        assert!(next.await);
        let start = tokio::time::Instant::now();
        assert!(!t.next_scrape(Duration::from_secs(5)).await);
        assert_eq!(start.elapsed(), Duration::from_secs(5));
    }
}
