//! What each group of a log (a model, or a model and key) tells: its per-minute timeline, the
//! rows shown (minutes merged to fit the screen) and the incident's sentence, judged against
//! the knee the run's findings found. Pure: `app::logs` prints and writes what this returns.

use super::capacity::{needs, Needs};
use super::ladder::LogLadder;
use super::timeline::{story, timeline, Minute};
use super::LogRequest;
use crate::findings::rise::knee_threshold_ms;
use crate::findings::{KneeFinding, ModelFindings};

/// What one group (model, or model and key) tells.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupStory {
    pub group: String,
    /// Minute by minute (`timeline.csv`).
    pub minutes: Vec<Minute>,
    /// As shown: consecutive minutes merged so that at most `rows` remain.
    pub shown: Vec<Minute>,
    /// The knee's last clean level, when the findings found a knee.
    pub knee_above: Option<u32>,
    pub sentence: String,
    /// What each minute needed in flight, against the cap.
    pub needs: Option<Needs>,
}

impl GroupStory {
    /// The sentence as a note of the group's findings.
    pub fn note(&self) -> String {
        format!("Incident: {}", self.sentence)
    }

    /// The capacity-over-time sentence, when the group has a service time to size it by.
    pub fn needs_note(&self) -> Option<String> {
        self.needs.as_ref().map(Needs::sentence)
    }
}

/// The timeline and sentence of every group, in group order; `rows` is how many timeline rows
/// may be shown per group.
pub fn stories(
    requests: &[LogRequest],
    ladder: &LogLadder,
    found: &[ModelFindings],
    sample_rate: f64,
    rows: usize,
) -> Vec<GroupStory> {
    super::inflight::groups(requests)
        .into_iter()
        .map(|(group, idx)| {
            let knee = found.iter().find(|f| f.model == group).map(|f| &f.knee);
            group_story(requests, ladder, group, &idx, knee, sample_rate, rows)
        })
        .collect()
}

fn group_story(
    requests: &[LogRequest],
    ladder: &LogLadder,
    group: String,
    idx: &[usize],
    knee: Option<&KneeFinding>,
    sample_rate: f64,
    rows: usize,
) -> GroupStory {
    let members: Vec<&LogRequest> = idx.iter().map(|&i| &requests[i]).collect();
    let counts: Vec<u32> = idx.iter().map(|&i| ladder.in_flight[i]).collect();
    let (knee_above, threshold) = match knee {
        Some(KneeFinding::Knee(k)) => (
            Some(k.max_clean_concurrency),
            Some(knee_threshold_ms(k.reference.ttft_p90_ms)),
        ),
        _ => (None, None),
    };
    let e2e_only = ladder.ttft_from_e2e;
    let ttft_of = |r: &LogRequest| {
        if e2e_only {
            Some(r.e2e_ms())
        } else {
            r.ttft_ms
        }
    };
    let knee_at = (knee_above, threshold);
    let mut minutes = timeline(&members, &counts, sample_rate, knee_at, 1, ttft_of);
    let per_row = minutes.len().div_ceil(rows.max(1)).max(1) as u32;
    let shown = if per_row > 1 {
        timeline(&members, &counts, sample_rate, knee_at, per_row, ttft_of)
    } else {
        minutes.clone()
    };
    let levels: Vec<_> = ladder
        .summaries
        .iter()
        .filter(|s| s.model == group)
        .cloned()
        .collect();
    let knee = knee.unwrap_or(&KneeFinding::NoSteps);
    let sentence = story(&minutes, knee, &levels, e2e_only);
    let needs = needs(&mut minutes, &levels, knee);
    GroupStory {
        group,
        minutes,
        shown,
        knee_above,
        sentence,
        needs,
    }
}
