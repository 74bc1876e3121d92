//! What account limits cost a step besides its 429s: the time its requests waited before
//! retrying (kept out of every latency figure, so said apart) and the least headroom the
//! providers' rate-limit headers reported, the warning before a wall.

use super::StepSummary;
use crate::model::RequestRecord;

/// Fills `retry_wait_s`, `retry_wait_share` and `ratelimit_headroom_min` from the step's records.
pub(super) fn wait_columns(s: &mut StepSummary, records: &[RequestRecord]) {
    let waited: f64 = records
        .iter()
        .map(|r| r.retry_wait_ms)
        .filter(|w| w.is_finite() && *w > 0.0)
        .sum();
    if waited > 0.0 {
        let attempts: f64 = records
            .iter()
            .filter_map(|r| r.e2e_ms)
            .filter(|e| e.is_finite())
            .sum();
        s.retry_wait_s = Some(waited / 1000.0);
        s.retry_wait_share = Some(waited / (waited + attempts));
    }
    s.ratelimit_headroom_min = records
        .iter()
        .filter_map(|r| r.ratelimit_headroom)
        .filter(|h| h.is_finite())
        .min_by(f64::total_cmp);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(wait: f64, e2e: f64, headroom: Option<f64>) -> RequestRecord {
        RequestRecord {
            retry_wait_ms: wait,
            e2e_ms: Some(e2e),
            ratelimit_headroom: headroom,
            ..RequestRecord::default()
        }
    }

    #[test]
    fn waits_and_headroom_of_a_step() {
        let mut s = StepSummary::default();
        wait_columns(
            &mut s,
            &[
                rec(0.0, 500.0, Some(0.4)),
                rec(1500.0, 500.0, Some(0.05)),
                rec(0.0, 500.0, None),
            ],
        );
        assert_eq!(s.retry_wait_s, Some(1.5));
        assert_eq!(s.retry_wait_share, Some(0.5));
        assert_eq!(s.ratelimit_headroom_min, Some(0.05));
        let mut none = StepSummary::default();
        wait_columns(&mut none, &[rec(0.0, 500.0, None)]);
        assert_eq!(
            (
                none.retry_wait_s,
                none.retry_wait_share,
                none.ratelimit_headroom_min
            ),
            (None, None, None)
        );
    }
}
