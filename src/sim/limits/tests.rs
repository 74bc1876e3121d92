//! Unit tests of the account limits: each rule's charge, refusals and settling.

use super::*;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[test]
fn go_durations() {
    assert_eq!(go_duration(Duration::ZERO), "0s");
    assert_eq!(go_duration(ms(20)), "20ms");
    assert_eq!(go_duration(Duration::from_micros(1)), "1ms");
    assert_eq!(go_duration(ms(999)), "999ms");
    assert_eq!(go_duration(ms(1000)), "1s");
    assert_eq!(go_duration(ms(1500)), "1.5s");
    assert_eq!(go_duration(ms(1250)), "1.25s");
    assert_eq!(go_duration(ms(59_999)), "59.999s");
    assert_eq!(go_duration(ms(360_000)), "6m0s");
    assert_eq!(go_duration(ms(61_500)), "1m1.5s");
    assert_eq!(go_duration(ms(3_600_000)), "1h0m0s");
    assert_eq!(go_duration(ms(3_723_000)), "1h2m3s");
}

#[test]
fn retry_after_rounds_up() {
    assert_eq!(retry_after_secs(Duration::ZERO), 0);
    assert_eq!(retry_after_secs(ms(1)), 1);
    assert_eq!(retry_after_secs(ms(1000)), 1);
    assert_eq!(retry_after_secs(ms(1001)), 2);
    assert_eq!(retry_after_ms(Duration::from_micros(1500)), 2);
}

use crate::sim::SimParams;

fn limiter(set: &[(&str, &str)]) -> Limiter {
    let mut p = SimParams::default();
    for (k, v) in set {
        p.set(k, v).unwrap();
    }
    Limiter::new(Rules::of(&p))
}

fn ask(input: u64, cached: u64, max: u64) -> Ask {
    Ask {
        input_tokens: input,
        cached_tokens: cached,
        max_tokens: max,
    }
}

fn refused(d: Decision) -> Option<LimitKind> {
    match d {
        Decision::Allowed(..) => None,
        Decision::Limited { kind, .. } => Some(kind),
    }
}

fn admitted(d: Decision) -> Admission {
    match d {
        Decision::Allowed(_, a) => a,
        other => panic!("refused: {other:?}"),
    }
}

#[test]
fn rpm_bucket_refuses_then_refills() {
    let t0 = Instant::now();
    let mut l = limiter(&[("rpm", "2")]);
    assert!(l.is_active());
    admitted(l.admit(t0, None, ask(100, 0, 0)));
    match l.admit(t0, None, ask(100, 0, 0)) {
        Decision::Allowed(s, _) => {
            let r = s.requests.unwrap();
            assert_eq!((r.limit, r.remaining), (2, 0));
            assert_eq!(r.reset, ms(60_000)); // 2 per minute: 30 s per request
            assert!(s.tokens.is_none());
        }
        other => panic!("{other:?}"),
    }
    match l.admit(t0, None, ask(100, 0, 0)) {
        Decision::Limited {
            kind,
            limit,
            retry_after,
            ..
        } => {
            assert_eq!((kind, limit), (LimitKind::Requests, 2));
            assert_eq!(retry_after, ms(30_000));
        }
        other => panic!("{other:?}"),
    }
    admitted(l.admit(t0 + ms(30_000), None, ask(1, 0, 0)));
}

#[test]
fn tpm_reserves_prompt_plus_max_tokens_and_refuses_oversized() {
    let t0 = Instant::now();
    let mut l = limiter(&[("tpm", "600")]);
    admitted(l.admit(t0, None, ask(400, 0, 100)));
    match l.admit(t0, None, ask(150, 0, 50)) {
        Decision::Limited {
            kind,
            retry_after,
            snapshot,
            ..
        } => {
            assert_eq!(kind, LimitKind::Tokens);
            // 100 left, 10 tokens/s: 100 more need 10 s.
            assert_eq!(retry_after, ms(10_000));
            let t = snapshot.tokens.unwrap();
            assert_eq!((t.limit, t.remaining), (600, 100));
            assert_eq!(t.reset, ms(50_000));
        }
        other => panic!("{other:?}"),
    }
    // A refused request is not charged.
    admitted(l.admit(t0, None, ask(50, 0, 50)));
    // Larger than the whole bucket: never fits.
    let late = t0 + ms(600_000);
    assert_eq!(
        refused(l.admit(late, None, ask(501, 0, 100))),
        Some(LimitKind::Tokens)
    );
    admitted(l.admit(late, None, ask(500, 0, 100)));
}

#[test]
fn openai_charges_the_larger_of_prompt_and_max_tokens() {
    let t0 = Instant::now();
    let mut l = limiter(&[("tpm", "1000"), ("tpm_counts", "larger")]);
    admitted(l.admit(t0, None, ask(100, 0, 400)));
    admitted(l.admit(t0, None, ask(500, 0, 100)));
    // 1000 - 400 - 500 = 100 left: a prompt of 100 with max_tokens 101 does not fit.
    assert_eq!(
        refused(l.admit(t0, None, ask(100, 0, 101))),
        Some(LimitKind::Tokens)
    );
    admitted(l.admit(t0, None, ask(100, 0, 100)));
}

#[test]
fn a_gateway_charges_after_the_answer_and_overshoots() {
    let t0 = Instant::now();
    let mut l = limiter(&[("tpm", "100"), ("tpm_counts", "after")]);
    let first = admitted(l.admit(t0, None, ask(80, 0, 500)));
    let second = admitted(l.admit(t0, None, ask(80, 0, 500)));
    l.settle(t0, first, 40);
    l.settle(t0, second, 40);
    // 240 charged against 100: overspent until it refills above zero.
    assert_eq!(
        refused(l.admit(t0, None, ask(1, 0, 1))),
        Some(LimitKind::Tokens)
    );
    admitted(l.admit(t0 + ms(84_100), None, ask(1, 0, 1)));
}

#[test]
fn input_tokens_count_cache_reads_only_when_told() {
    let t0 = Instant::now();
    let mut free = limiter(&[("itpm", "1000")]);
    for _ in 0..5 {
        admitted(free.admit(t0, None, ask(1000, 800, 10)));
    }
    assert_eq!(
        refused(free.admit(t0, None, ask(1000, 800, 10))),
        Some(LimitKind::InputTokens),
        "5 × 200 uncached tokens fill 1000"
    );
    let mut counted = limiter(&[("itpm", "1000"), ("itpm_cached", "counted")]);
    admitted(counted.admit(t0, None, ask(1000, 800, 10)));
    assert_eq!(
        refused(counted.admit(t0, None, ask(1000, 800, 10))),
        Some(LimitKind::InputTokens)
    );
}

#[test]
fn output_tokens_reserve_max_tokens_then_settle_to_what_was_generated() {
    let t0 = Instant::now();
    let mut l = limiter(&[("otpm", "1000")]);
    let a = admitted(l.admit(t0, None, ask(10, 0, 600)));
    assert_eq!(
        refused(l.admit(t0, None, ask(10, 0, 600))),
        Some(LimitKind::OutputTokens),
        "600 reserved of 1000"
    );
    l.settle(t0, a, 100);
    admitted(l.admit(t0, None, ask(10, 0, 600)));
}

#[test]
fn a_concurrency_limit_refuses_past_it_until_an_answer_ends() {
    let t0 = Instant::now();
    let mut l = limiter(&[("concurrency_limit", "2")]);
    let a = admitted(l.admit(t0, None, ask(1, 0, 1)));
    admitted(l.admit(t0, None, ask(1, 0, 1)));
    match l.admit(t0, None, ask(1, 0, 1)) {
        Decision::Limited { kind, limit, .. } => {
            assert_eq!((kind, limit), (LimitKind::Concurrency, 2));
        }
        other => panic!("{other:?}"),
    }
    l.settle(t0, a, 1);
    admitted(l.admit(t0, None, ask(1, 0, 1)));
}

#[test]
fn limits_per_key_count_each_key_alone() {
    let t0 = Instant::now();
    let mut shared = limiter(&[("rpm", "1")]);
    admitted(shared.admit(t0, Some("a"), ask(1, 0, 1)));
    assert!(refused(shared.admit(t0, Some("b"), ask(1, 0, 1))).is_some());
    let mut per_key = limiter(&[("rpm", "1"), ("limits_per", "key")]);
    admitted(per_key.admit(t0, Some("a"), ask(1, 0, 1)));
    admitted(per_key.admit(t0, Some("b"), ask(1, 0, 1)));
    assert!(refused(per_key.admit(t0, Some("a"), ask(1, 0, 1))).is_some());
}

#[test]
fn an_acceleration_limit_refuses_a_sudden_ramp_while_the_buckets_have_room() {
    let t0 = Instant::now();
    let mut l = limiter(&[("accel", "3"), ("accel_floor", "1"), ("rpm", "100000")]);
    // 10 s at 2 requests/s: under the floor's 3 × 1/s.
    for i in 0..20 {
        admitted(l.admit(t0 + ms(500 * i), None, ask(1, 0, 1)));
    }
    // Then 20 requests/s for a minute: the last 10 s may hold 3 × what the 10 s before held.
    let ramp = t0 + ms(10_000);
    let mut refused_at = Vec::new();
    for i in 0..1200u64 {
        match l.admit(ramp + ms(50 * i), None, ask(1, 0, 1)) {
            Decision::Limited { kind, snapshot, .. } => {
                assert_eq!(kind, LimitKind::Acceleration);
                let r = snapshot.requests.unwrap();
                assert!(r.remaining > r.limit / 2, "headroom left: {r:?}");
                refused_at.push(i * 50);
            }
            Decision::Allowed(..) => {}
        }
    }
    let first_10s = refused_at.iter().filter(|&&t| t < 10_000).count();
    assert!((100..=160).contains(&first_10s), "{first_10s}");
    // The admitted rate may triple every 10 s: 30 s on, the ramp is absorbed.
    assert!(refused_at.iter().all(|&t| t < 30_000), "{refused_at:?}");
}

#[test]
fn presets_fill_only_what_is_left_unset() {
    let mut p = SimParams::default();
    p.set("limits", "anthropic").unwrap();
    p.set("otpm", "500").unwrap();
    let r = Rules::of(&p);
    assert_eq!((r.rpm, r.itpm, r.otpm), (Some(50), Some(30_000), Some(500)));
    assert_eq!(r.cached_input, CachedInput::Free);
    assert!(r.accel.is_some() && r.any());
    assert!(!Rules::of(&SimParams::default()).any());
    p.set("limits", "openai").unwrap();
    assert_eq!(Rules::of(&p).tpm_counts, TpmCounts::Larger);
    p.set("limits", "aggregator").unwrap();
    let r = Rules::of(&p);
    assert!(r.per_key && r.concurrency == Some(8) && r.tpm_counts == TpmCounts::After);
}

#[test]
fn no_limits_always_allows() {
    let t0 = Instant::now();
    let mut l = limiter(&[]);
    assert!(!l.is_active());
    match l.admit(t0, None, ask(u64::MAX / 4, 0, 1)) {
        Decision::Allowed(s, _) => assert_eq!(s, Snapshot::default()),
        other => panic!("{other:?}"),
    }
}

#[test]
fn time_going_backwards_does_not_refill() {
    let t0 = Instant::now() + ms(1000);
    let mut l = limiter(&[("rpm", "1")]);
    admitted(l.admit(t0, None, ask(0, 0, 0)));
    assert!(refused(l.admit(t0 - ms(500), None, ask(0, 0, 0))).is_some());
}
