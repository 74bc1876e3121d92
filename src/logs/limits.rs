//! What a log cannot be trusted for, said instead of hidden: clock skew between the hosts that
//! wrote it (an end before its start, a first token before the start or after the end) and
//! requests it lacks (gaps in its own request numbers: sampling, or traffic through another
//! gateway), which make every in-flight count low.

use super::LogRequest;

/// Requests whose times contradict each other.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SkewReport {
    /// End before start: left out (the interval has no length to count).
    pub end_before_start: usize,
    /// TTFT below zero or above E2E: kept without their TTFT.
    pub bad_ttft: usize,
    /// The largest contradiction, in ms.
    pub worst_ms: f64,
    /// Lines of the first few.
    pub lines: Vec<usize>,
}

impl SkewReport {
    pub fn any(&self) -> bool {
        self.end_before_start + self.bad_ttft > 0
    }

    /// The report in words, or `None` when the times agree.
    pub fn sentence(&self) -> Option<String> {
        if !self.any() {
            return None;
        }
        let lines: Vec<String> = self.lines.iter().map(usize::to_string).collect();
        Some(format!(
            "Clock skew: {} request(s) end before they start (left out) and {} have a first token before the start or after the end (kept without TTFT); worst by {:.0} ms; first at line(s) {}. The hosts' clocks disagree: compare with one host's log, or fix NTP.",
            self.end_before_start,
            self.bad_ttft,
            self.worst_ms,
            lines.join(", ")
        ))
    }
}

/// Tolerance for rounding in a log's own times.
const SLACK_MS: f64 = 1.0;

/// The requests that can be placed in time, and what was wrong with the others.
pub fn screen(requests: Vec<LogRequest>) -> (Vec<LogRequest>, SkewReport) {
    let mut report = SkewReport::default();
    let mut kept = Vec::with_capacity(requests.len());
    for mut r in requests {
        let e2e = r.e2e_ms();
        let note = |report: &mut SkewReport, by: f64, line: usize| {
            report.worst_ms = report.worst_ms.max(by);
            if report.lines.len() < 5 {
                report.lines.push(line);
            }
        };
        if e2e < -SLACK_MS || !e2e.is_finite() {
            report.end_before_start += 1;
            note(&mut report, -e2e, r.line);
            continue;
        }
        if let Some(t) = r.ttft_ms {
            if t < -SLACK_MS || t > e2e.max(0.0) + SLACK_MS {
                report.bad_ttft += 1;
                note(&mut report, if t < 0.0 { -t } else { t - e2e }, r.line);
                r.ttft_ms = None;
            }
        }
        r.end_ms = r.end_ms.max(r.start_ms);
        kept.push(r);
    }
    (kept, report)
}

/// Share of requests present by the log's own request numbers (`None` without numbers).
pub fn present_share(requests: &[LogRequest]) -> Option<(f64, u64)> {
    let seqs: Vec<u64> = requests.iter().filter_map(|r| r.seq).collect();
    let (lo, hi) = (*seqs.iter().min()?, *seqs.iter().max()?);
    let mut unique = seqs.clone();
    unique.sort_unstable();
    unique.dedup();
    let span = hi - lo + 1;
    Some((unique.len() as f64 / span as f64, span))
}

/// Notes on requests the log lacks, given the sample rate the user declared.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Honesty {
    pub notes: Vec<String>,
}

/// Below this share of its own request numbers, a log is said to lack requests.
const PRESENT_MIN: f64 = 0.98;

impl Honesty {
    pub fn of(requests: &[LogRequest], sample_rate: f64) -> Honesty {
        let mut notes = Vec::new();
        if let Some((share, span)) = present_share(requests) {
            let expected = sample_rate;
            if share < PRESENT_MIN * expected || share > (2.0 - PRESENT_MIN) * expected {
                notes.push(format!(
                    "The log's own request numbers span {span} requests but it holds {:.0}% of them{}: the rest went unlogged (sampling, another gateway), so every in-flight count here is low by that share; pass --sample-rate {:.2} to scale counts and rates.",
                    share * 100.0,
                    if expected < 1.0 { format!(" (--sample-rate says {:.0}%)", expected * 100.0) } else { String::new() },
                    share
                ));
            }
        }
        if sample_rate < 1.0 {
            notes.push(format!(
                "In-flight counts, requests/s and tokens/min are the logged requests' divided by the sample rate {sample_rate}; a sampled log shows bursts less sharply than they were."
            ));
        }
        Honesty { notes }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(line: usize, start: f64, end: f64, ttft: Option<f64>, seq: Option<u64>) -> LogRequest {
        LogRequest {
            line,
            start_ms: start,
            end_ms: end,
            ttft_ms: ttft,
            seq,
            ..LogRequest::default()
        }
    }

    #[test]
    fn skew_is_reported_and_nothing_vanishes_silently() {
        let (kept, rep) = screen(vec![
            req(2, 100.0, 50.0, None, None),
            req(3, 100.0, 200.0, Some(-30.0), None),
            req(4, 100.0, 200.0, Some(150.0), None),
            req(5, 100.0, 200.0, Some(50.0), None),
        ]);
        assert_eq!(kept.len(), 3);
        assert_eq!(
            (rep.end_before_start, rep.bad_ttft, rep.worst_ms),
            (1, 2, 50.0)
        );
        assert_eq!(rep.lines, [2, 3, 4]);
        assert_eq!(kept[2].ttft_ms, Some(50.0));
        assert!(kept[0].ttft_ms.is_none());
        assert!(rep.sentence().unwrap().contains("line(s) 2, 3, 4"));
    }

    #[test]
    fn gaps_in_the_logs_own_numbers_say_it_lacks_requests() {
        let rs: Vec<LogRequest> = (0..100)
            .step_by(10)
            .map(|i| req(1, 0.0, 1.0, None, Some(i)))
            .collect();
        let h = Honesty::of(&rs, 1.0);
        assert!(h.notes[0].contains("--sample-rate 0.11"), "{:?}", h.notes);
        assert!(Honesty::of(&rs, 0.11)
            .notes
            .iter()
            .all(|n| !n.contains("span")));
        let all: Vec<LogRequest> = (0..100).map(|i| req(1, 0.0, 1.0, None, Some(i))).collect();
        assert!(Honesty::of(&all, 1.0).notes.is_empty());
    }
}
