//! Keep-alive connections the server may already have closed. Servers close idle connections
//! (llama.cpp's `llama-server`, Node.js and uvicorn after 5 s, gateways after 60-75 s); a pool
//! that hands out such a connection loses the request the server never saw. Two rules live
//! here: idle connections are kept no longer than the server says (`Keep-Alive: timeout=N`) or
//! than servers commonly keep them, and a request lost on a connection closed before any
//! response byte is sent again once, on a new connection (what HTTP clients do for this case).

use super::builder::{build_http_client_with, ClientError};
use super::connect_timer::ConnectLog;
use super::tls::SystemRoots;
use crate::scenario::{Timeouts, Tls};
use std::sync::RwLock;
use std::time::Duration;

/// How long an idle connection is kept when the server has not said: below the 5 s that
/// llama-server, Node.js and uvicorn keep them by default.
pub const DEFAULT_IDLE: Duration = Duration::from_secs(4);

/// The pooled client of a run, rebuilt with a shorter idle time when a server announces one,
/// and a client without a pool for resending a request a stale connection lost. Every client
/// it builds times its connections into one log (`connect_ms`, `client::connect_timer`).
#[derive(Debug)]
pub struct Pool {
    timeouts: Timeouts,
    tls: Tls,
    /// Read once for every client the pool builds.
    roots: SystemRoots,
    max_concurrency: usize,
    connects: ConnectLog,
    current: RwLock<(reqwest::Client, Duration)>,
    fresh: reqwest::Client,
}

impl Pool {
    /// `roots`: the system's store, or [`SystemRoots::none`] when the run makes no TLS
    /// connection (`client::tls::system_roots_needed`).
    pub fn new(
        timeouts: &Timeouts,
        tls: &Tls,
        roots: SystemRoots,
        max_concurrency: usize,
    ) -> Result<Pool, ClientError> {
        let connects = ConnectLog::default();
        let pooled = build_http_client_with(
            timeouts,
            tls,
            &roots,
            max_concurrency,
            Some(DEFAULT_IDLE),
            &connects,
        )?;
        let fresh =
            build_http_client_with(timeouts, tls, &roots, max_concurrency, None, &connects)?;
        Ok(Pool {
            timeouts: timeouts.clone(),
            tls: tls.clone(),
            roots,
            max_concurrency,
            connects,
            current: RwLock::new((pooled, DEFAULT_IDLE)),
            fresh,
        })
    }

    /// The pooled client (cheap to clone: a handle on the shared pool).
    pub fn client(&self) -> reqwest::Client {
        match self.current.read() {
            Ok(g) => g.0.clone(),
            Err(poisoned) => poisoned.into_inner().0.clone(),
        }
    }

    /// The connections this pool's clients made, for `connect_ms`.
    pub fn connects(&self) -> &ConnectLog {
        &self.connects
    }

    /// A client that opens a new connection for every request.
    pub fn fresh(&self) -> &reqwest::Client {
        &self.fresh
    }

    /// How long idle connections are kept now.
    pub fn idle(&self) -> Duration {
        match self.current.read() {
            Ok(g) => g.1,
            Err(poisoned) => poisoned.into_inner().1,
        }
    }

    /// A server said it keeps idle connections for `server`: when that is shorter than what the
    /// pool keeps, later requests go through a pool that drops them sooner (connections of the
    /// old pool close as their requests end).
    pub fn server_keeps_idle(&self, server: Duration) {
        let want = idle_for(server);
        if want >= self.idle() {
            return;
        }
        let Ok(client) = build_http_client_with(
            &self.timeouts,
            &self.tls,
            &self.roots,
            self.max_concurrency,
            Some(want),
            &self.connects,
        ) else {
            return;
        };
        if let Ok(mut g) = self.current.write() {
            if want < g.1 {
                *g = (client, want);
            }
        }
    }
}

/// The idle time to keep for a server that keeps idle connections for `server`: a margin
/// below it (1 s, or half of it for short ones), so that the pool lets go first.
pub fn idle_for(server: Duration) -> Duration {
    let margin = Duration::from_secs(1).min(server / 2);
    server.saturating_sub(margin).min(DEFAULT_IDLE)
}

/// The `timeout=N` (seconds) of a `Keep-Alive` header value (`timeout=5, max=100`).
pub fn keep_alive_timeout(value: &str) -> Option<Duration> {
    value.split(',').find_map(|part| {
        let (k, v) = part.split_once('=')?;
        if !k.trim().eq_ignore_ascii_case("timeout") {
            return None;
        }
        let secs: u64 = v.trim().trim_matches('"').parse().ok()?;
        Some(Duration::from_secs(secs))
    })
}

/// Builds an HTTP client for one probe or a few requests (`ladder check`), with the run's pool
/// rules (`client::pool`); its connections are timed into `connects`.
pub fn build_http_client(
    timeouts: &Timeouts,
    tls: &crate::scenario::Tls,
    max_concurrency: usize,
    connects: &ConnectLog,
) -> Result<reqwest::Client, ClientError> {
    build_http_client_with(
        timeouts,
        tls,
        &SystemRoots::load(),
        max_concurrency,
        Some(DEFAULT_IDLE),
        connects,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keep_alive_header_values() {
        assert_eq!(
            keep_alive_timeout("timeout=5, max=100"),
            Some(Duration::from_secs(5))
        );
        assert_eq!(
            keep_alive_timeout("max=100,Timeout=2"),
            Some(Duration::from_secs(2))
        );
        assert_eq!(keep_alive_timeout("max=100"), None);
        assert_eq!(keep_alive_timeout("timeout=soon"), None);
        assert_eq!(keep_alive_timeout(""), None);
    }

    #[test]
    fn the_pool_lets_go_before_the_server() {
        assert_eq!(idle_for(Duration::from_secs(5)), Duration::from_secs(4));
        assert_eq!(idle_for(Duration::from_secs(2)), Duration::from_secs(1));
        assert_eq!(idle_for(Duration::from_secs(1)), Duration::from_millis(500));
        assert_eq!(idle_for(Duration::from_secs(75)), DEFAULT_IDLE);
        assert_eq!(idle_for(Duration::ZERO), Duration::ZERO);
    }
}
