//! `ladder logs` against logs whose truth is known (`provider_model`): with default options
//! the cap within 10% of the provider's slots, the onset within 2 minutes of the minute the
//! queue first formed, and shared limits told from per-key ones.

use super::provider_model::{Generated, Provider, Slots};
use super::*;
use crate::findings::KneeFinding;
use crate::model::Slo;

/// The log analysed with `ladder logs`' default options.
fn analyzed(g: &Generated) -> Analysis {
    let mut requests = g.requests.clone();
    keys_where_several(&mut requests);
    let opts = LogOptions {
        sample_rate: 1.0,
        min_per_level: 40,
        max_levels: 12,
        slo: Slo::default(),
        scenario: "logs".into(),
        fingerprint: "production-log".into(),
        splits: Default::default(),
    };
    analyze(requests, &opts)
}

/// A group's conclusion: its name, knee interval, cap, onset minute and sentence, and what
/// its minutes needed in flight.
type Conclusion = (
    String,
    Option<(u32, u32)>,
    Option<f64>,
    Option<i64>,
    String,
    Option<capacity::Needs>,
);

/// What `ladder logs` concludes per group.
fn conclude(a: &Analysis) -> Vec<Conclusion> {
    let (requests, ladder, found) = (&a.requests, &a.ladder, &a.found);
    let stories = stories(requests, ladder, found, 1.0, 24);
    found
        .iter()
        .map(|f| {
            let (knee, cap) = match &f.knee {
                KneeFinding::Knee(k) => (
                    Some((k.max_clean_concurrency, k.concurrency)),
                    k.estimated_cap,
                ),
                _ => (None, None),
            };
            let story = stories.iter().find(|s| s.group == f.model);
            let onset =
                story.and_then(|s| s.minutes.iter().find(|m| m.ttft_rose).map(|m| m.minute));
            (
                f.model.clone(),
                knee,
                cap,
                onset,
                story.map(|s| s.sentence.clone()).unwrap_or_default(),
                story.and_then(|s| s.needs.clone()),
            )
        })
        .collect()
}

fn provider(slots: usize, sharing: Slots, keys: Vec<&'static str>, seed: u64) -> Generated {
    Provider {
        slots,
        sharing,
        keys,
        // The widest provider serves 50,000 requests in 20 minutes: enough, and cheaper.
        minutes: if slots > 100 { 20.0 } else { 40.0 },
        peak_load: 1.1,
        seed,
    }
    .generate()
}

#[test]
fn default_options_find_the_cap_within_10_percent_and_the_onset_within_2_minutes() {
    for slots in [16, 48, 200] {
        for seed in [1, 2] {
            let g = provider(slots, Slots::Shared, vec!["team-a"], seed);
            assert!(g.requests.len() > 5_000, "{}", g.requests.len());
            let c = conclude(&analyzed(&g));
            assert_eq!(c.len(), 1, "{c:?}");
            let (group, knee, cap, onset, sentence, needs) = &c[0];
            let truth = slots as f64;
            let cap = cap.unwrap_or_else(|| panic!("N={slots} seed={seed}: no cap: {sentence}"));
            assert!(
                (cap / truth - 1.0).abs() <= 0.10,
                "N={slots} seed={seed}: cap ≈ {cap:.1}, knee {knee:?}: {sentence}"
            );
            let onset =
                onset.unwrap_or_else(|| panic!("N={slots} seed={seed}: no onset: {sentence}"));
            assert!(
                (onset - g.queue_formed).abs() <= 2,
                "N={slots} seed={seed}: onset {} min, the queue formed at {} min: {sentence}",
                onset % 60,
                g.queue_formed % 60
            );
            assert_eq!(group, "gpt-4o");
            // The ramp reached 1.1 × the capacity: its peak minutes needed more than the cap,
            // its quiet ones a third of it.
            let needs = needs.as_ref().expect("capacity over time");
            assert!(needs.peak.1 > cap && needs.over > 0, "{}", needs.sentence());
            assert!(needs.over < needs.minutes / 2, "{}", needs.sentence());
            assert!(
                sentence.contains("TTFT first rose at") || sentence.contains("first at"),
                "{sentence}"
            );
        }
    }
}

#[test]
fn a_shared_limit_is_one_cap_across_keys_and_per_key_limits_are_per_key() {
    let keys = || vec!["team-a", "team-b"];
    for seed in [3, 4] {
        let a = analyzed(&provider(32, Slots::Shared, keys(), seed));
        let c = conclude(&a);
        assert_eq!(c.len(), 1, "one group across keys: {c:?}");
        let cap = c[0].2.expect("a cap");
        assert!((cap / 32.0 - 1.0).abs() <= 0.10, "seed {seed}: {c:?}");
        assert!(
            matches!(
                a.sharing.get("gpt-4o"),
                Some(Sharing::Shared { keys: 2, .. })
            ),
            "{:?}",
            a.sharing
        );
        assert!(a.sharing["gpt-4o"]
            .sentence("gpt-4o")
            .starts_with("The limit looks account-wide: cap ≈ 32 across 2 keys"));

        let a = analyzed(&provider(32, Slots::PerKey, keys(), seed));
        let c = conclude(&a);
        assert_eq!(c.len(), 2, "a group per key: {c:?}");
        for (group, _, cap, _, sentence, _) in &c {
            assert!(group.starts_with("gpt-4o ["), "{group}");
            let cap = cap.expect("a cap per key");
            assert!(
                (cap / 32.0 - 1.0).abs() <= 0.10,
                "seed {seed} {group}: {sentence}"
            );
        }
        assert!(
            matches!(
                a.sharing.get("gpt-4o"),
                Some(Sharing::PerKey { keys: 2, .. })
            ),
            "{:?}",
            a.sharing
        );
    }
}
