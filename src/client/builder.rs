//! Building the reqwest client every request goes through: its pool (sized to the largest
//! step, idle connections kept or not), the connect timeout, no redirects, TLS (`client::tls`)
//! and the timing of every connection it makes (`client::connect_timer`). Its own file because
//! both the one-off client of `ladder check` and the run's `client::pool` build one.

use super::connect_timer::{ConnectLog, ConnectTimerLayer};
use super::tls::SystemRoots;
use crate::scenario::Timeouts;
use std::time::Duration;

/// Why the HTTP client could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error(transparent)]
    Tls(#[from] super::tls::TlsError),
    #[error("{0}")]
    Build(#[from] reqwest::Error),
}

/// Builds an HTTP client: pool sized to the largest step, idle connections kept for
/// `keep_idle` (`None` or zero: no pool, a new connection per request), no automatic
/// decompression surprises, the connect timeout from the scenario, and its TLS settings
/// (bundled roots, the system store's `roots`, `target.tls`); every connection it makes is timed
/// into `connects` (`client::connect_timer`).
pub fn build_http_client_with(
    timeouts: &Timeouts,
    tls: &crate::scenario::Tls,
    roots: &SystemRoots,
    max_concurrency: usize,
    keep_idle: Option<Duration>,
    connects: &ConnectLog,
) -> Result<reqwest::Client, ClientError> {
    let builder = reqwest::Client::builder()
        .connector_layer(ConnectTimerLayer {
            log: connects.clone(),
        })
        .connect_timeout(timeouts.connect);
    let builder = match keep_idle.filter(|d| !d.is_zero()) {
        Some(idle) => builder
            .pool_max_idle_per_host(max_concurrency.max(1))
            .pool_idle_timeout(idle),
        None => builder.pool_max_idle_per_host(0),
    };
    let builder = builder
        .tcp_nodelay(true)
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("ladder/", env!("CARGO_PKG_VERSION")));
    Ok(super::tls::configure(builder, tls, roots)?.build()?)
}
