//! Connect time per request (`connect_ms`: DNS + TCP + TLS when the request opened a new
//! connection, nothing when it reused one). reqwest does not expose it, so a tower layer wraps
//! reqwest's connector (`ClientBuilder::connector_layer`): it times every connection it makes
//! and files the time under the connection's local address (hyper's `HttpInfo`, which the
//! connection reports through `Connection::connected`). The response carries the same
//! `HttpInfo` in its extensions, so the request that receives the first response of a new
//! connection takes its connect time; later requests on that connection find nothing. A
//! connection that finished connecting before the request was handed over (another request
//! raced it and took an idle connection) is not this request's wait, and is not charged to it.

use hyper_util::client::legacy::connect::{Connection, HttpInfo};
use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use tokio::time::Instant;

/// Connections made and not yet claimed by a response, by local address.
#[derive(Debug, Clone, Default)]
pub struct ConnectLog {
    made: Arc<Mutex<HashMap<SocketAddr, Made>>>,
}

#[derive(Debug, Clone, Copy)]
struct Made {
    started: Instant,
    finished: Instant,
}

/// Entries kept at most (a connection that never answered leaves one behind).
const MAX_PENDING: usize = 65_536;

impl ConnectLog {
    fn record(&self, local: SocketAddr, started: Instant, finished: Instant) {
        let mut made = self.made.lock().unwrap_or_else(PoisonError::into_inner);
        if made.len() >= MAX_PENDING {
            made.clear();
        }
        made.insert(local, Made { started, finished });
    }

    /// The connect time (ms) of the connection that answered with `extensions`, when it is new
    /// and was made while the request waited (`handed_over` is when the request was given to
    /// the client). `None` for a reused connection.
    pub fn claim(&self, extensions: &http::Extensions, handed_over: Instant) -> Option<f64> {
        self.take(extensions.get::<HttpInfo>()?.local_addr(), handed_over)
    }

    fn take(&self, local: SocketAddr, handed_over: Instant) -> Option<f64> {
        let made = self
            .made
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&local)?;
        (made.finished >= handed_over).then(|| {
            made.finished
                .saturating_duration_since(made.started)
                .as_secs_f64()
                * 1000.0
        })
    }
}

/// The layer given to `reqwest::ClientBuilder::connector_layer`.
#[derive(Debug, Clone)]
pub struct ConnectTimerLayer {
    pub log: ConnectLog,
}

impl<S> tower_layer::Layer<S> for ConnectTimerLayer {
    type Service = ConnectTimer<S>;
    fn layer(&self, inner: S) -> ConnectTimer<S> {
        ConnectTimer {
            inner,
            log: self.log.clone(),
        }
    }
}

/// The connector service wrapped by [`ConnectTimerLayer`].
#[derive(Debug, Clone)]
pub struct ConnectTimer<S> {
    inner: S,
    log: ConnectLog,
}

impl<S, R> tower_service::Service<R> for ConnectTimer<S>
where
    S: tower_service::Service<R>,
    S::Response: Connection,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, dst: R) -> Self::Future {
        let started = Instant::now();
        let fut = self.inner.call(dst);
        let log = self.log.clone();
        Box::pin(async move {
            let conn = fut.await?;
            let finished = Instant::now();
            let mut ext = http::Extensions::new();
            conn.connected().get_extras(&mut ext);
            if let Some(info) = ext.get::<HttpInfo>() {
                log.record(info.local_addr(), started, finished);
            }
            Ok(conn)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn a_connection_is_claimed_once_and_only_by_a_request_that_waited_for_it() {
        let log = ConnectLog::default();
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let (a, b): (SocketAddr, SocketAddr) = (
            ([127, 0, 0, 1], 40000).into(),
            ([127, 0, 0, 1], 40001).into(),
        );
        log.record(a, t0, t0 + ms(12));
        log.record(b, t0, t0 + ms(5));
        assert_eq!(log.take(a, t0), Some(12.0));
        assert_eq!(log.take(a, t0), None, "claimed once");
        // b was ready before this request was handed over: another request's connect.
        assert_eq!(log.take(b, t0 + ms(6)), None);
        assert!(log.made.lock().unwrap().is_empty());
    }

    #[tokio::test]
    async fn real_connections_through_reqwest_time_new_ones_and_leave_reused_ones_empty() {
        let sim = crate::sim::start(
            crate::sim::SimParams::default(),
            "127.0.0.1:0".parse().unwrap(),
        )
        .await
        .unwrap();
        let log = ConnectLog::default();
        let client = reqwest::Client::builder()
            .connector_layer(ConnectTimerLayer { log: log.clone() })
            .pool_max_idle_per_host(4)
            .build()
            .unwrap();
        let url = format!("{}/models", sim.base_url());
        let mut got = Vec::new();
        for _ in 0..3 {
            let handed = Instant::now();
            let r = client.get(&url).send().await.unwrap();
            got.push(log.claim(r.extensions(), handed));
            r.bytes().await.unwrap();
        }
        assert!(got[0].is_some_and(|ms| ms >= 0.0), "{got:?}");
        assert_eq!(&got[1..], [None, None], "reused connection: {got:?}");
        sim.shutdown().await;
    }
}
