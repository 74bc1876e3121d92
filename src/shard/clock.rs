//! NTP-free estimate of how far this host's wall clock is from the target's, for sharded runs:
//! every HTTP server stamps its responses with a `Date` header (whole seconds). Polling the
//! target until that second ticks over brackets the instant the target's clock crossed a whole
//! second between two local readings; a second, finer pass one second later (back-to-back
//! requests around the predicted tick) narrows the bracket to about one round trip. The offset
//! is `target time − local time` with its half-width as the error. Shards that measure against
//! the same target are thus compared on one clock, without NTP access or privileges. The probes
//! are plain `GET base_url` requests without credentials (any status will do: only `Date` is
//! read), about 30 of them.

use std::future::Future;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// `target clock − local clock`, ms, known to ± `error_ms`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClockOffset {
    pub offset_ms: f64,
    pub error_ms: f64,
}

/// One probe: local send and receive times (Unix ms) and the server's `Date` (Unix s).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Probe {
    pub sent_ms: f64,
    pub recv_ms: f64,
    pub date_s: u64,
}

/// Local wall clock, Unix ms.
pub fn now_unix_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

/// Estimates the offset of the server at `url` with real HTTP requests.
pub async fn estimate_offset(http: &reqwest::Client, url: &str) -> Option<ClockOffset> {
    let probe = || async {
        let sent_ms = now_unix_ms();
        let resp = http
            .get(url)
            .timeout(Duration::from_secs(5))
            .send()
            .await
            .ok()?;
        let recv_ms = now_unix_ms();
        let date = resp.headers().get(reqwest::header::DATE)?.to_str().ok()?;
        let t = httpdate::parse_http_date(date).ok()?;
        let date_s = t.duration_since(UNIX_EPOCH).ok()?.as_secs();
        Some(Probe {
            sent_ms,
            recv_ms,
            date_s,
        })
    };
    estimate_with(probe, now_unix_ms).await
}

/// The edge between two consecutive probes whose dates differ: the server's clock reached
/// `cur.date_s` after `prev` was stamped (so after `prev.sent_ms`) and before `cur.recv_ms`.
fn edge(prev: &Probe, cur: &Probe) -> Option<ClockOffset> {
    (cur.date_s > prev.date_s).then(|| {
        let mid = (prev.sent_ms + cur.recv_ms) / 2.0;
        ClockOffset {
            offset_ms: cur.date_s as f64 * 1000.0 - mid,
            error_ms: (cur.recv_ms - prev.sent_ms) / 2.0,
        }
    })
}

/// The algorithm, on any probe and clock (tests use a simulated server on paused time).
pub async fn estimate_with<P, F>(mut probe: P, now_ms: impl Fn() -> f64) -> Option<ClockOffset>
where
    P: FnMut() -> F,
    F: Future<Output = Option<Probe>>,
{
    const COARSE_EVERY: Duration = Duration::from_millis(50);
    const FINE_GAP: Duration = Duration::from_millis(2);
    // Coarse pass: poll every 50 ms for up to ~1.2 s until the server's second ticks over.
    let mut prev = probe().await?;
    let mut coarse = None;
    for _ in 0..25 {
        tokio::time::sleep(COARSE_EVERY).await;
        let cur = probe().await?;
        if let Some(e) = edge(&prev, &cur) {
            coarse = Some(e);
            break;
        }
        prev = cur;
    }
    let coarse = coarse?;
    // Fine pass: the next tick is due 1 s of target time after the last one; start polling
    // back-to-back just before it.
    let next_tick_local = (prev.date_s as f64 + 2.0) * 1000.0 - coarse.offset_ms;
    let rtt = (prev.recv_ms - prev.sent_ms).max(0.0);
    let lead = coarse.error_ms + rtt + 5.0;
    let wait = next_tick_local - lead - now_ms();
    if wait > 0.0 {
        tokio::time::sleep(Duration::from_secs_f64(wait / 1000.0)).await;
    }
    let mut best = coarse;
    let mut prev = probe().await?;
    let give_up = next_tick_local + lead + 50.0;
    for _ in 0..200 {
        let cur = probe().await?;
        if let Some(e) = edge(&prev, &cur) {
            if e.error_ms < best.error_ms {
                best = e;
            }
            break;
        }
        if cur.recv_ms > give_up {
            break;
        }
        prev = cur;
        // On a fast link, spacing the probes 2 ms apart costs 1 ms of precision and keeps
        // their number small.
        tokio::time::sleep(FINE_GAP).await;
    }
    Some(best)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;

    /// A server whose clock is `offset_ms` ahead, with a symmetric round trip of `rtt_ms`,
    /// on tokio's paused clock (local time starts at an arbitrary non-whole second).
    async fn estimate_fake(offset_ms: f64, rtt_ms: f64) -> (Option<ClockOffset>, u64) {
        let start = tokio::time::Instant::now();
        let now = move || 1_800_000_000_123.4 + start.elapsed().as_secs_f64() * 1000.0;
        let calls = Arc::new(AtomicU64::new(0));
        let c = calls.clone();
        let probe = move || {
            c.fetch_add(1, Ordering::Relaxed);
            async move {
                let sent_ms = now();
                let half = Duration::from_secs_f64(rtt_ms / 2000.0);
                tokio::time::sleep(half).await;
                let date_s = ((now() + offset_ms) / 1000.0).floor() as u64;
                tokio::time::sleep(half).await;
                Some(Probe {
                    sent_ms,
                    recv_ms: now(),
                    date_s,
                })
            }
        };
        let est = estimate_with(probe, now).await;
        (est, calls.load(Ordering::Relaxed))
    }

    #[tokio::test(start_paused = true)]
    async fn finds_the_offset_within_its_error_bound() {
        for (offset, rtt) in [(0.0, 1.0), (-2_345.6, 2.0), (731.0, 30.0), (40.0, 0.2)] {
            let (est, calls) = estimate_fake(offset, rtt).await;
            let est = est.expect("an estimate");
            assert!(
                (est.offset_ms - offset).abs() <= est.error_ms + 1e-6,
                "offset {offset}, rtt {rtt}: {est:?}"
            );
            assert!(est.error_ms <= rtt + 3.0, "fine pass narrows it: {est:?}");
            assert!(calls < 80, "{calls} probes");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn no_date_no_estimate() {
        let est = estimate_with(|| async { None }, || 0.0).await;
        assert_eq!(est, None);
    }
}
