//! The trend, drawn and tabled: per model, P90 TTFT (and TTFC, when the model reasoned) and P90
//! TPOT of every step (one series per concurrency) across the versions of a baseline or a set
//! of runs; and the TTFT and TPOT numbers as a markdown table for a weekly job summary.

use super::charts::models;
use super::{page_end, page_start};
use crate::render::svg::{self, escape, Body, Chart, Marker, Series};
use crate::stats::StepSummary;
use std::fmt::Write;

/// One version of the results.
#[derive(Debug, Clone, PartialEq)]
pub struct TrendPoint {
    /// `2026-11-30 1a2b3c4` or the run directory's name.
    pub label: String,
    pub summaries: Vec<StepSummary>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Trend {
    /// What the points are versions of.
    pub source: String,
    /// Oldest first.
    pub points: Vec<TrendPoint>,
    pub notes: Vec<String>,
}

/// The concurrencies `model` was measured at, over every point, ascending.
fn steps(t: &Trend, model: &str) -> Vec<u32> {
    let mut c: Vec<u32> = t
        .points
        .iter()
        .flat_map(|p| p.summaries.iter())
        .filter(|r| r.model == model)
        .map(|r| r.concurrency)
        .collect();
    c.sort_unstable();
    c.dedup();
    c
}

/// What the model's ladder values count (its latest point's rows; streams for older files).
fn unit(t: &Trend, model: &str) -> crate::model::LadderUnit {
    t.points
        .iter()
        .rev()
        .flat_map(|p| p.summaries.iter())
        .find(|r| r.model == model)
        .map(|r| r.ladder_unit)
        .unwrap_or_default()
}

fn all_models(t: &Trend) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for p in &t.points {
        for m in models(&p.summaries) {
            if !out.contains(&m) {
                out.push(m);
            }
        }
    }
    out
}

fn value(
    t: &Trend,
    i: usize,
    model: &str,
    c: u32,
    f: fn(&StepSummary) -> Option<f64>,
) -> Option<f64> {
    t.points[i]
        .summaries
        .iter()
        .find(|r| r.model == model && r.concurrency == c)
        .and_then(f)
}

fn chart(
    t: &Trend,
    model: &str,
    id: String,
    what: &str,
    f: fn(&StepSummary) -> Option<f64>,
) -> Chart {
    let series = steps(t, model)
        .into_iter()
        .enumerate()
        .map(|(k, c)| Series {
            name: unit(t, model).describe(c),
            colour: Some(k % 8),
            points: (0..t.points.len())
                .filter_map(|i| value(t, i, model, c, f).map(|v| (i as f64, v)))
                .collect(),
            marker: Marker::CYCLE[k % 4],
            dashed: false,
            kind: "",
        })
        .collect();
    Chart {
        id,
        title: format!("{model} · {what} P90 per step over time"),
        x_label: "version (commit date and hash, or run)".into(),
        y_label: format!("{what} P90 (ms)"),
        y_max: None,
        y_cap: None,
        x_ticks: vec![],
        x_range: None,
        x_categories: Some(t.points.iter().map(|p| p.label.clone()).collect()),
        x_axis: Default::default(),
        body: Body::Lines {
            series,
            bands: vec![],
            vlines: vec![],
            hlines: vec![],
            rings: vec![],
        },
        empty_note: None,
    }
}

pub fn page(t: &Trend, generator: &str) -> String {
    let mut s = page_start("ladder trend");
    let _ = write!(
        s,
        "<header><h1>ladder trend</h1><p class=\"muted\">{} · {} point(s) from {}</p>",
        escape(generator),
        t.points.len(),
        escape(&t.source)
    );
    for n in &t.notes {
        let _ = write!(s, "<p class=\"note\">{}</p>", escape(n));
    }
    s.push_str("</header>");
    for (mi, m) in all_models(t).iter().enumerate() {
        let _ = write!(
            s,
            "<section class=\"model\"><h3>model: {}</h3><div class=\"charts\">",
            escape(m)
        );
        s.push_str(&svg::render(&chart(
            t,
            m,
            format!("t-m{mi}-ttft"),
            "TTFT",
            |r| r.ttft_p90_ms,
        )));
        // The answer's wait, when the model reasoned in any version.
        let reasoned = t
            .points
            .iter()
            .flat_map(|p| p.summaries.iter())
            .any(|r| r.model == *m && r.any_reasoning());
        if reasoned {
            s.push_str(&svg::render(&chart(
                t,
                m,
                format!("t-m{mi}-ttfc"),
                "TTFC",
                |r| r.ttfc_p90_ms,
            )));
        }
        s.push_str(&svg::render(&chart(
            t,
            m,
            format!("t-m{mi}-tpot"),
            "TPOT",
            |r| r.tpot_p90_ms,
        )));
        s.push_str("</div>");
        s.push_str(&table_html(t, m));
        s.push_str("</section>");
    }
    s.push_str(page_end());
    s
}

fn cell(t: &Trend, i: usize, m: &str, c: u32) -> String {
    let f = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1}"));
    match (
        value(t, i, m, c, |r| r.ttft_p90_ms),
        value(t, i, m, c, |r| r.tpot_p90_ms),
    ) {
        (None, None) => "-".into(),
        (a, b) => format!("{} / {}", f(a), f(b)),
    }
}

fn table_html(t: &Trend, m: &str) -> String {
    let cs = steps(t, m);
    let mut s = String::from("<table class=\"steps\"><thead><tr><th>version</th>");
    for c in &cs {
        let _ = write!(
            s,
            "<th>{}: TTFT / TPOT P90 (ms)</th>",
            unit(t, m).describe(*c)
        );
    }
    s.push_str("</tr></thead><tbody>");
    for (i, p) in t.points.iter().enumerate() {
        let _ = write!(s, "<tr><td>{}</td>", escape(&p.label));
        for c in &cs {
            let _ = write!(s, "<td>{}</td>", escape(&cell(t, i, m, *c)));
        }
        s.push_str("</tr>");
    }
    s.push_str("</tbody></table>");
    s
}

/// One table per model: a row per version, a column per step, cells `TTFT P90 / TPOT P90` in ms.
pub fn markdown(t: &Trend) -> String {
    let mut s = format!(
        "### ladder trend: {} ({} point(s))\n\n",
        t.source.replace('|', "\\|"),
        t.points.len()
    );
    for n in &t.notes {
        let _ = writeln!(s, "> {n}\n");
    }
    for m in all_models(t) {
        let cs = steps(t, &m);
        let _ = writeln!(s, "**{m}**: P90 TTFT / TPOT in ms per step\n");
        let mut head = String::from("| version |");
        let mut rule = String::from("|---|");
        for c in &cs {
            let _ = write!(head, " {} |", unit(t, &m).describe(*c));
            rule.push_str("---:|");
        }
        let _ = writeln!(s, "{head}\n{rule}");
        for (i, p) in t.points.iter().enumerate() {
            let _ = write!(s, "| {} |", p.label.replace('|', "\\|"));
            for c in &cs {
                let _ = write!(s, " {} |", cell(t, i, &m, *c));
            }
            s.push('\n');
        }
        s.push('\n');
    }
    s
}
