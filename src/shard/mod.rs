//! Sharded runs (`ladder run --shard I/N`): one rule for how a step's load is split over N
//! processes, used by the runner (what shard I sends) and by `merge` (which global worker a
//! shard's worker was), and the shard's identity and clock facts that `meta.json` keeps.
//! Shards count from 0, like Kubernetes' `JOB_COMPLETION_INDEX`.

pub mod clock;
pub mod merge;

use crate::scenario::{Budget, Load};
use std::fmt;
use std::str::FromStr;
use std::time::{Duration, SystemTime};

/// Shard `index` of `total` (0 ≤ index < total).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShardSpec {
    pub index: u32,
    pub total: u32,
}

impl ShardSpec {
    /// Shard `index` of `total`, or a message saying what is wrong.
    pub fn new(index: u32, total: u32) -> Result<Self, String> {
        if total == 0 {
            return Err("the number of shards must be at least 1".into());
        }
        if index >= total {
            return Err(format!(
                "shard index {index} is out of range: shards count from 0, so with {total} \
                 shard(s) the index is 0..{}",
                total - 1
            ));
        }
        Ok(ShardSpec { index, total })
    }

    /// This shard's share of `amount` (streams, requests): see [`share`].
    pub fn share(self, amount: u64) -> Share {
        share(amount, self.index, self.total)
    }
}

impl FromStr for ShardSpec {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (i, n) = s
            .split_once('/')
            .ok_or_else(|| format!("`{s}`: expected I/N, e.g. 0/4 (shards count from 0)"))?;
        let num = |x: &str, what: &str| {
            x.trim()
                .parse::<u32>()
                .map_err(|_| format!("`{s}`: {what} `{x}` is not a whole number"))
        };
        ShardSpec::new(num(i, "index")?, num(n, "total")?).map_err(|e| format!("`{s}`: {e}"))
    }
}

impl fmt::Display for ShardSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.total)
    }
}

/// The shard from the environment when `--shard` is absent: `JOB_COMPLETION_INDEX` (set by a
/// Kubernetes Indexed Job) with `LADDER_SHARDS` (the total). `env` reads a variable.
pub fn from_env(env: impl Fn(&str) -> Option<String>) -> Result<Option<ShardSpec>, String> {
    let var = |n: &str| env(n).filter(|v| !v.trim().is_empty());
    match (var("JOB_COMPLETION_INDEX"), var("LADDER_SHARDS")) {
        (None, None) => Ok(None),
        (Some(i), Some(n)) => format!("{}/{}", i.trim(), n.trim())
            .parse()
            .map(Some)
            .map_err(|e| format!("JOB_COMPLETION_INDEX/LADDER_SHARDS {e}")),
        (Some(_), None) => Err(
            "JOB_COMPLETION_INDEX is set (a Kubernetes Indexed Job) but \
             LADDER_SHARDS is not: set LADDER_SHARDS to the Job's completions so that each pod \
             runs its share of the load, or pass --shard I/N"
                .into(),
        ),
        (None, Some(_)) => {
            Err("LADDER_SHARDS is set but JOB_COMPLETION_INDEX is not: pass --shard I/N".into())
        }
    }
}

/// A shard's part of an amount: `count` units, numbered `first..first + count` globally.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Share {
    pub first: u64,
    pub count: u64,
}

/// Splits `amount` over `total` shards: each gets `amount / total`, and the first
/// `amount % total` shards one more, so the shares sum to `amount` exactly and differ by at most
/// one. A shard may get 0 (a step smaller than the number of shards): it sends nothing then.
pub fn share(amount: u64, index: u32, total: u32) -> Share {
    let (i, n) = (u64::from(index), u64::from(total.max(1)));
    let base = amount / n;
    let rem = amount % n;
    Share {
        first: i * base + i.min(rem),
        count: base + u64::from(i < rem),
    }
}

/// What shard `spec` runs of one step of `concurrency` streams: its share of the streams, and
/// of `requests` (the step's requests or warmup requests) the part its workers would have sent
/// had the requests been dealt evenly to all the step's workers. Summed over the shards both
/// are exact; a shard without streams gets no requests.
pub fn step_share(spec: ShardSpec, concurrency: u32, requests: u64) -> (u32, u64) {
    let workers = spec.share(concurrency.into());
    let c = u64::from(concurrency.max(1));
    // Requests of the first k workers when `requests` are dealt evenly over c workers.
    let dealt = |k: u64| k * (requests / c) + k.min(requests % c);
    let mine = dealt(workers.first + workers.count) - dealt(workers.first);
    (workers.count as u32, mine)
}

/// What shard `spec` runs of one open-loop step of `rate` requests/s: an exact share of the rate
/// (rates need not be whole: 5 req/s over 2 shards is 2.5 + 2.5, never 3 + 2) and of `requests`
/// dealt evenly. Every shard sends; the shares sum to the step's rate and requests.
pub fn rate_share(spec: ShardSpec, rate: f64, requests: u64) -> (f64, u64) {
    (
        rate / f64::from(spec.total.max(1)),
        spec.share(requests).count,
    )
}

/// The arrival-schedule seed of shard `spec` for a step whose unsharded seed is `step_seed`:
/// distinct per shard, so the shards' schedules are independent and their sum is the step's
/// process (independent Poisson streams of rate r / N add up to Poisson of rate r); shards that
/// shared one seed would send in lockstep bursts.
pub fn arrival_seed(spec: ShardSpec, step_seed: u64) -> u64 {
    crate::scenario::arrivals::step_seed(step_seed, spec.index + 1)
}

/// `--start-at TIME`: the common start every shard is given (RFC 3339, UTC), or a message
/// saying what to write.
pub fn parse_start_at(text: &str) -> Result<SystemTime, String> {
    humantime::parse_rfc3339_weak(text.trim()).map_err(|e| {
        format!(
            "--start-at `{text}`: {e}; expected an RFC 3339 UTC time such as 2026-11-30T12:00:00Z"
        )
    })
}

/// The time slot each model × step gets when shards share a start and `--step-every` is not
/// given: a timed step's ramp-up + duration + pause. `None` for a request budget, whose steps
/// last as long as the server takes (the user must give the slot).
pub fn step_slot(load: &Load) -> Option<Duration> {
    match load.budget {
        Budget::Duration(d) => Some(load.ramp_up + d + load.pause_between_steps),
        Budget::RequestsPerStep(_) | Budget::RequestsPerWorker(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_timed_step_slot_is_ramp_up_duration_and_pause() {
        let yaml =
            "load:\n  ladder: [1, 2]\n  duration: 60s\n  ramp_up: 5s\n  pause_between_steps: 2s\n";
        let load = crate::scenario::load_from_yaml(yaml).unwrap();
        assert_eq!(step_slot(&load), Some(Duration::from_secs(67)));
        let yaml = "load:\n  ladder: [1, 2]\n  requests_per_step: 50\n";
        let load = crate::scenario::load_from_yaml(yaml).unwrap();
        assert_eq!(step_slot(&load), None);
    }

    #[test]
    fn start_at_is_rfc3339_utc_or_says_what_to_write() {
        let t = parse_start_at(" 2026-11-30T12:00:00Z ").unwrap();
        let unix = t.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
        assert_eq!(unix, 1_796_040_000);
        let e = parse_start_at("noon").unwrap_err();
        assert!(e.starts_with("--start-at `noon`: "), "{e}");
        assert!(e.ends_with("such as 2026-11-30T12:00:00Z"), "{e}");
    }

    #[test]
    fn parses_and_refuses_with_the_fix() {
        assert_eq!(
            "2/5".parse::<ShardSpec>(),
            Ok(ShardSpec { index: 2, total: 5 })
        );
        let e = "5/5".parse::<ShardSpec>().unwrap_err();
        assert!(
            e.contains("shards count from 0") && e.contains("0..4"),
            "{e}"
        );
        assert!("3"
            .parse::<ShardSpec>()
            .unwrap_err()
            .contains("expected I/N"));
        assert!("a/3"
            .parse::<ShardSpec>()
            .unwrap_err()
            .contains("index `a`"));
        assert!("0/0"
            .parse::<ShardSpec>()
            .unwrap_err()
            .contains("at least 1"));
    }

    #[test]
    fn the_environment_selects_the_shard_of_an_indexed_job() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |n: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == n)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(from_env(env(&[])), Ok(None));
        assert_eq!(
            from_env(env(&[
                ("JOB_COMPLETION_INDEX", "3"),
                ("LADDER_SHARDS", "20")
            ])),
            Ok(Some(ShardSpec {
                index: 3,
                total: 20
            }))
        );
        let e = from_env(env(&[("JOB_COMPLETION_INDEX", "3")])).unwrap_err();
        assert!(e.contains("set LADDER_SHARDS"), "{e}");
        let e = from_env(env(&[
            ("JOB_COMPLETION_INDEX", "4"),
            ("LADDER_SHARDS", "4"),
        ]));
        assert!(e.unwrap_err().contains("shards count from 0"));
        assert!(from_env(env(&[("LADDER_SHARDS", "4")])).is_err());
    }

    #[test]
    fn small_steps_leave_some_shards_idle() {
        let shares: Vec<u64> = (0..4).map(|i| share(2, i, 4).count).collect();
        assert_eq!(shares, [1, 1, 0, 0]);
        assert_eq!(share(10, 3, 4), Share { first: 8, count: 2 });
        assert_eq!(
            share(10, 0, 1),
            Share {
                first: 0,
                count: 10
            }
        );
    }

    #[test]
    fn rate_shares_are_exact_and_every_shard_sends() {
        let spec = |i| ShardSpec::new(i, 2).unwrap();
        assert_eq!(rate_share(spec(0), 5.0, 121), (2.5, 61));
        assert_eq!(rate_share(spec(1), 5.0, 121), (2.5, 60));
        // 1 req/s over 4 shards: a quarter each, no idle shard.
        let quarter = rate_share(ShardSpec::new(3, 4).unwrap(), 1.0, 10);
        assert_eq!(quarter, (0.25, 2));
        let seeds: Vec<u64> = (0..3)
            .map(|i| arrival_seed(ShardSpec::new(i, 3).unwrap(), 42))
            .collect();
        assert!(seeds[0] != seeds[1] && seeds[1] != seeds[2] && seeds[0] != 42);
    }

    proptest! {
        #[test]
        fn rate_shares_sum_to_the_offered_rate(rate in 1u32..100_000, n in 0u64..5_000, total in 1u32..40) {
            let (mut sum, mut requests) = (0.0, 0u64);
            for i in 0..total {
                let (r, k) = rate_share(ShardSpec::new(i, total).unwrap(), f64::from(rate), n);
                prop_assert!(r > 0.0);
                sum += r;
                requests += k;
            }
            prop_assert!((sum - f64::from(rate)).abs() <= 1e-9 * f64::from(rate));
            prop_assert_eq!(requests, n);
        }

        #[test]
        fn step_shares_sum_to_the_step(c in 1u32..500, n in 0u64..5_000, total in 1u32..40) {
            let (mut streams, mut requests) = (0u64, 0u64);
            for i in 0..total {
                let (sc, sn) = step_share(ShardSpec::new(i, total).unwrap(), c, n);
                prop_assert!(sc > 0 || sn == 0, "no streams, no requests");
                streams += u64::from(sc);
                requests += sn;
            }
            prop_assert_eq!((streams, requests), (u64::from(c), n));
        }

        #[test]
        fn shares_tile_the_amount_exactly(amount in 0u64..100_000, total in 1u32..64) {
            let mut next = 0;
            for i in 0..total {
                let s = share(amount, i, total);
                prop_assert_eq!(s.first, next);
                prop_assert!(s.count + 1 >= amount / u64::from(total));
                prop_assert!(s.count <= amount / u64::from(total) + 1);
                next += s.count;
            }
            prop_assert_eq!(next, amount);
        }
    }
}
