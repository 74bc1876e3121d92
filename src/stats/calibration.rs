//! The arithmetic `make calibrate` reports with, in one place for its two halves (the
//! pretend-time test and the real-simulator bench): a Wilson interval for a false-alarm rate and
//! the two-sided exact test of whether two such rates differ (the scaling-independence check).

use super::inference::fisher_p_rise;

/// Wilson 95% interval of `k` events in `n` trials, in percent (0–100). `n = 0` reads as 1.
pub fn wilson_pct(k: u64, n: u64) -> (f64, f64) {
    let (k, n, z) = (k as f64, n.max(1) as f64, 1.959_964);
    let p = k / n;
    let centre = (p + z * z / (2.0 * n)) / (1.0 + z * z / n);
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / (1.0 + z * z / n);
    (
        100.0 * (centre - half).max(0.0),
        100.0 * (centre + half).min(1.0),
    )
}

/// Two-sided Fisher exact p-value of k1/n1 vs k2/n2: twice the smaller one-sided p (the
/// one-sided test is the one the gate's error-rate check uses), capped at 1.
pub fn fisher_two_sided(k1: u64, n1: u64, k2: u64, n2: u64) -> f64 {
    (2.0 * fisher_p_rise(k1, n1, k2, n2).min(fisher_p_rise(k2, n2, k1, n1))).min(1.0)
}

/// The scaling check's sentence: the two rows' false alarms with their intervals, the p-value,
/// and whether the rate depends on the scaling (p < 0.05).
pub fn scaling_sentence(a: (&str, u64, u64), b: (&str, u64, u64)) -> String {
    let ((la, ka, na), (lb, kb, nb)) = (a, b);
    let (wa, wb) = (wilson_pct(ka, na), wilson_pct(kb, nb));
    let p = fisher_two_sided(ka, na, kb, nb);
    format!(
        "scaling check: {la}: {ka}/{na} (95% interval {:.0}–{:.0}%); {lb}: {kb}/{nb} ({:.0}–{:.0}%); two-sided Fisher p = {p:.2}: {}",
        wa.0,
        wa.1,
        wb.0,
        wb.1,
        if p < 0.05 {
            "the false-alarm rate DEPENDS on the scaling"
        } else {
            "no evidence that the false-alarm rate depends on the scaling"
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_matches_known_intervals() {
        // 12/400: the gate's A/A figure in benches/RESULTS.md (1.7–5.2%).
        let (lo, hi) = wilson_pct(12, 400);
        assert!(
            (lo - 1.73).abs() < 0.02 && (hi - 5.17).abs() < 0.02,
            "{lo} {hi}"
        );
        let (lo, hi) = wilson_pct(0, 50);
        assert_eq!(lo, 0.0);
        assert!((hi - 7.13).abs() < 0.02, "{hi}");
        assert_eq!(wilson_pct(0, 0).0, 0.0);
    }

    #[test]
    fn fisher_two_sided_is_symmetric_and_decides() {
        assert_eq!(fisher_two_sided(1, 20, 1, 20), 1.0);
        let p = fisher_two_sided(6, 200, 4, 200);
        assert!((p - fisher_two_sided(4, 200, 6, 200)).abs() < 1e-12);
        assert!(p > 0.5, "{p}");
        assert!(fisher_two_sided(0, 50, 15, 50) < 0.001);
    }

    #[test]
    fn scaling_sentence_says_which_way() {
        let same = scaling_sentence(("10x", 1, 20), ("5x", 1, 20));
        assert!(
            same.contains("p = 1.00") && same.contains("no evidence"),
            "{same}"
        );
        let differs = scaling_sentence(("10x", 0, 50), ("5x", 15, 50));
        assert!(differs.contains("DEPENDS"), "{differs}");
    }
}
