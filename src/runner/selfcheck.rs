//! The client watching itself: its CPU use and the event loop's lag during a step. A load tester
//! that is itself the bottleneck reports its own queueing as the server's latency; these figures
//! let the findings say when a step is not to be trusted.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// CPU time of this process (user + system), from `/proc/self/stat`. `None` where unavailable.
fn process_cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may contain spaces) start after the last ')'.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the full line: index 11 and 12 here.
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    // USER_HZ is 100 on every Linux configuration that matters.
    Some(Duration::from_millis((utime + stime) * 10))
}

/// Measures the process's CPU use over an interval as a percentage of one core.
pub struct ProcessCpu {
    wall: Instant,
    cpu: Option<Duration>,
}

impl ProcessCpu {
    pub fn start() -> Self {
        ProcessCpu {
            wall: Instant::now(),
            cpu: process_cpu_time(),
        }
    }

    /// CPU % of one core since `start` (200% = two cores busy).
    pub fn finish(&self) -> Option<f64> {
        let before = self.cpu?;
        let after = process_cpu_time()?;
        let wall = self.wall.elapsed().as_secs_f64();
        if wall < 0.05 {
            return None;
        }
        Some(after.saturating_sub(before).as_secs_f64() / wall * 100.0)
    }
}

/// A periodic timer's lateness: how long ready tasks wait for the runtime.
pub struct LoopLagProbe {
    samples: Arc<Mutex<Vec<f64>>>,
    handle: Option<tokio::task::JoinHandle<()>>,
}

/// How often the probe's timer is due. Every period wakes a parked worker (and often a second
/// one) when the runtime is idle, a cost per second rather than per token: at 10 ms it was about
/// a quarter of the client's CPU at 10 streams and a tenth at 100 (benches/RESULTS.md, issue 24).
/// 20 samples a second still give a P99 from half a second of step on.
const PROBE_PERIOD: Duration = Duration::from_millis(50);

impl LoopLagProbe {
    pub fn start() -> Self {
        let samples = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&samples);
        let handle = tokio::spawn(async move {
            let mut next = tokio::time::Instant::now() + PROBE_PERIOD;
            loop {
                tokio::time::sleep_until(next).await;
                let late = tokio::time::Instant::now().saturating_duration_since(next);
                if let Ok(mut s) = sink.lock() {
                    s.push(late.as_secs_f64() * 1000.0);
                }
                next += PROBE_PERIOD;
                let now = tokio::time::Instant::now();
                if next < now {
                    next = now + PROBE_PERIOD;
                }
            }
        });
        LoopLagProbe {
            samples,
            handle: Some(handle),
        }
    }

    /// P99 of the timer's lateness in ms (`None` with fewer than 10 samples).
    pub async fn finish(mut self) -> Option<f64> {
        if let Some(h) = self.handle.take() {
            h.abort();
            let _ = h.await;
        }
        let samples = self.samples.lock().ok()?.clone();
        if samples.len() < 10 {
            return None;
        }
        crate::stats::quantile(&samples, 0.99)
    }
}

impl Drop for LoopLagProbe {
    fn drop(&mut self) {
        if let Some(h) = self.handle.take() {
            h.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_own_cpu_time() {
        assert!(process_cpu_time().is_some());
    }

    // On the paused clock every timer fires on time: 20 periods give 20 samples of zero lag,
    // 5 periods too few for a P99.
    #[tokio::test(start_paused = true)]
    async fn loop_lag_probe_collects_samples() {
        let probe = LoopLagProbe::start();
        tokio::time::sleep(PROBE_PERIOD * 20 + PROBE_PERIOD / 2).await;
        assert_eq!(probe.finish().await, Some(0.0));
        let short = LoopLagProbe::start();
        tokio::time::sleep(PROBE_PERIOD * 5 + PROBE_PERIOD / 2).await;
        assert_eq!(short.finish().await, None);
    }
}
