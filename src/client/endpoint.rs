//! Where a target's requests go: its URL, or the embedded simulator started on 127.0.0.1 for
//! `target.sim`.

use crate::scenario::Endpoint;
use crate::sim::SimHandle;

/// The base URL of a target's endpoint: the URL itself, or the embedded simulator started on
/// 127.0.0.1 (a free port) with its handle, which must be kept for as long as it is needed. The
/// one place `run` and `check` start the simulator.
pub async fn serve_endpoint(endpoint: &Endpoint) -> std::io::Result<(String, Option<SimHandle>)> {
    match endpoint {
        Endpoint::Url(url) => Ok((url.clone(), None)),
        Endpoint::Sim(params) => {
            let h = crate::sim::start(params.clone(), ([127, 0, 0, 1], 0).into()).await?;
            Ok((h.base_url(), Some(h)))
        }
    }
}
