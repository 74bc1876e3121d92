//! The report's capacity over time, for a run `ladder logs` wrote: per group, the requests in
//! flight each minute's arrivals needed without queueing (`timeline.csv`'s `needed_in_flight`,
//! `logs::capacity`) against the cap the log's knee shows, a line per minute and the cap as a
//! level. Nothing is recomputed here: the minutes and the findings are drawn as they are.

use super::view::RunView;
use crate::findings::KneeFinding;
use crate::render::svg::{self, Body, Chart, HLine, Marker, Series, XAxis};
use std::fmt::Write;

/// One chart per group whose minutes have a need; nothing for a run without `timeline.csv`.
pub fn needs_section(s: &mut String, view: &RunView, prefix: &str) {
    let mut groups: Vec<&str> = Vec::new();
    for m in view
        .timeline
        .iter()
        .filter(|m| m.needed_in_flight.is_some())
    {
        if !groups.contains(&m.group.as_str()) {
            groups.push(&m.group);
        }
    }
    if groups.is_empty() {
        return;
    }
    let _ = write!(
        s,
        "<section class=\"needs\" id=\"{prefix}-needs\"><h3>Capacity over time</h3><p class=\"muted\">Requests in flight each minute's arrivals needed without queueing (Little's law: the minute's arrivals × the service time below the knee; <code>timeline.csv</code>), against the cap the log's knee shows.</p><div class=\"charts\">"
    );
    for (gi, group) in groups.iter().enumerate() {
        let points: Vec<(f64, f64)> = view
            .timeline
            .iter()
            .filter(|m| m.group == *group)
            .enumerate()
            .filter_map(|(i, m)| Some((i as f64, m.needed_in_flight?)))
            .collect();
        let cap = view
            .findings
            .iter()
            .find(|f| f.model == *group)
            .and_then(|f| match &f.knee {
                KneeFinding::Knee(k) => k.estimated_cap,
                _ => None,
            });
        let c = Chart {
            id: format!("{prefix}-needs-{gi}"),
            title: format!("{group} · needed vs the cap"),
            x_label: "minutes since the log's first".to_string(),
            y_label: "requests in flight".to_string(),
            y_max: cap.map(|c| c * 1.1),
            y_cap: None,
            x_ticks: vec![],
            x_range: None,
            x_categories: None,
            x_axis: XAxis::Linear,
            body: Body::Lines {
                series: vec![Series {
                    name: "needed without queueing".to_string(),
                    colour: Some(0),
                    points,
                    marker: Marker::None,
                    dashed: false,
                    kind: "",
                }],
                bands: vec![],
                vlines: vec![],
                hlines: cap
                    .map(|c| HLine {
                        y: c,
                        label: format!("cap ≈ {c:.0}"),
                    })
                    .into_iter()
                    .collect(),
                rings: vec![],
            },
            empty_note: Some("no minute to draw".to_string()),
        };
        s.push_str(&svg::render(&c));
    }
    s.push_str("</div></section>");
}
