//! Shared or per key, decided by the log. Account limits are usually shared by an
//! organisation's keys, per-key limits exist too, and a log with keys can tell them apart: behind
//! an account-wide limit of 48, a request waits when 48 of the *account's* requests are in
//! flight, whatever its own key has; behind a limit of 24 per key, when 24 of its *key's* are.
//! So each model with several keys is judged both ways (in-flight counted per key, and across
//! its keys), and the count whose knee predicts better which requests waited wins: a request is
//! predicted to wait when the count it met at its start exceeds the cap, and to have waited
//! when its TTFT reached the knee's threshold. The other count blurs the rise (at every per-key
//! level some requests waited and some did not). Pure.

use super::ladder::LogLadder;
use super::LogRequest;
use crate::findings::rise::knee_threshold_ms;
use crate::findings::{KneeFinding, ModelFindings};
use std::collections::BTreeMap;

/// How a model's limit looks from its log.
#[derive(Debug, Clone, PartialEq)]
pub enum Sharing {
    /// The TTFT rise follows the in-flight count across keys.
    Shared {
        keys: usize,
        cap: Option<f64>,
        /// Share of successful requests the per-key caps mispredict, and the shared cap.
        per_key_miss: f64,
        shared_miss: f64,
    },
    /// The rise follows each key's own count.
    PerKey {
        keys: usize,
        per_key_miss: f64,
        shared_miss: f64,
    },
}

impl Sharing {
    /// The sentence for the model's notes.
    pub fn sentence(&self, model: &str) -> String {
        let pct = |v: f64| format!("{:.0}%", v * 100.0);
        match self {
            Sharing::Shared {
                keys,
                cap,
                per_key_miss,
                shared_miss,
            } => format!(
                "The limit looks account-wide: {}across {keys} keys of {model} (counted across keys, in-flight predicts which requests waited for all but {} of them; per key the rise is blurred, {} mispredicted). Its levels count every key's requests.",
                cap.map_or(String::new(), |c| format!("cap ≈ {c:.0} ")),
                pct(*shared_miss),
                pct(*per_key_miss)
            ),
            Sharing::PerKey {
                keys,
                per_key_miss,
                shared_miss,
            } => format!(
                "The limit looks per key: each of the {keys} keys of {model} queues at its own in-flight count (per key, in-flight predicts which requests waited for all but {} of them; across keys the rise is blurred, {} mispredicted).",
                pct(*per_key_miss),
                pct(*shared_miss)
            ),
        }
    }
}

/// Models the log shows with several keys, and how many.
pub fn keyed_models(requests: &[LogRequest]) -> BTreeMap<String, usize> {
    let mut keys: BTreeMap<String, std::collections::BTreeSet<&str>> = BTreeMap::new();
    for r in requests {
        if let Some(k) = &r.key {
            keys.entry(r.model.clone()).or_default().insert(k);
        }
    }
    keys.into_iter()
        .filter(|(_, k)| k.len() > 1)
        .map(|(m, k)| (m, k.len()))
        .collect()
}

/// Mispredicted successes and successes of the groups `groups` picks: a success is mispredicted
/// when "the in-flight count it met exceeded the group's cap" and "its TTFT reached the knee's
/// threshold" disagree. A group without a knee predicts that nothing waited.
fn misses(
    requests: &[LogRequest],
    ladder: &LogLadder,
    found: &[ModelFindings],
    picks: impl Fn(&LogRequest) -> bool,
) -> (u64, u64) {
    let knees: BTreeMap<&str, (f64, f64)> = found
        .iter()
        .filter_map(|f| match &f.knee {
            KneeFinding::Knee(k) => {
                let cap = k
                    .estimated_cap
                    .unwrap_or(f64::from(k.max_clean_concurrency));
                Some((
                    f.model.as_str(),
                    (cap.round(), knee_threshold_ms(k.reference.ttft_p90_ms)),
                ))
            }
            _ => None,
        })
        .collect();
    let (mut miss, mut n) = (0, 0);
    for (i, r) in requests.iter().enumerate() {
        if !picks(r) || r.error_class.is_some() {
            continue;
        }
        let ttft = if ladder.ttft_from_e2e {
            Some(r.e2e_ms())
        } else {
            r.ttft_ms
        };
        let Some(ttft) = ttft else { continue };
        let group = r.group();
        let (predicted, waited) = match knees.get(group.as_str()) {
            Some(&(cap, threshold)) => (f64::from(ladder.in_flight[i]) > cap, ttft >= threshold),
            // No knee: nothing predicted to wait; a request "waited" against no threshold is
            // judged by the model's other grouping, so count only the prediction.
            None => (false, false),
        };
        n += 1;
        miss += u64::from(predicted != waited);
    }
    (miss, n)
}

/// For each model with several keys: whether its limit looks shared, from the per-key analysis
/// (`keyed`: the requests with keys, their ladder and findings) and the one across keys
/// (`pooled`: the same requests with keys dropped). Models whose knees are missing on both
/// sides are left out (no cap, nothing to say).
pub fn judge(
    keyed: (&[LogRequest], &LogLadder, &[ModelFindings]),
    pooled: (&[LogRequest], &LogLadder, &[ModelFindings]),
) -> BTreeMap<String, Sharing> {
    let mut out = BTreeMap::new();
    for (model, keys) in keyed_models(keyed.0) {
        let has_knee = |found: &[ModelFindings], pick: &dyn Fn(&str) -> bool| {
            found
                .iter()
                .any(|f| pick(&f.model) && matches!(f.knee, KneeFinding::Knee(_)))
        };
        let prefix = format!("{model} [");
        let keyed_knee = has_knee(keyed.2, &|g| g.starts_with(&prefix));
        let pooled_knee = has_knee(pooled.2, &|g| g == model);
        if !keyed_knee && !pooled_knee {
            continue;
        }
        let ratio = |(m, n): (u64, u64)| if n == 0 { 1.0 } else { m as f64 / n as f64 };
        let of_model = |r: &LogRequest| r.model == model;
        let per_key_miss = ratio(misses(keyed.0, keyed.1, keyed.2, of_model));
        let shared_miss = ratio(misses(pooled.0, pooled.1, pooled.2, of_model));
        // A side without a knee predicts nothing: it can only win when nothing waited.
        let shared = match (keyed_knee, pooled_knee) {
            (false, true) => true,
            (true, false) => false,
            _ => shared_miss <= per_key_miss,
        };
        let sharing = if shared {
            let cap = pooled
                .2
                .iter()
                .find(|f| f.model == model)
                .and_then(|f| match &f.knee {
                    KneeFinding::Knee(k) => k.estimated_cap,
                    _ => None,
                });
            Sharing::Shared {
                keys,
                cap,
                per_key_miss,
                shared_miss,
            }
        } else {
            Sharing::PerKey {
                keys,
                per_key_miss,
                shared_miss,
            }
        };
        out.insert(model, sharing);
    }
    out
}
