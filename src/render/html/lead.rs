//! The top of the report, before any chart: what happened, as the terminal says it. With a
//! baseline, the verdict of `ladder diff`'s short form: the outcome, the headline sentences
//! (`compare::headline`: capacity and lengths before any percentile), the counts, and the grid
//! of regressed and inconclusive checks (`render::diff::short::grid`, the same rows and cells
//! as the terminal's); the run's own model comparisons the same way; then each model's findings
//! (knee, wall). Every check, with its CI, stays in the run's section further down.

use super::view::RunView;
use super::{outcome_class, verdict_id};
use crate::compare::Comparison;
use crate::render::diff::short::{grid, judged_line, run_level, Grid, LEGEND};
use crate::render::diff::{invalid_lines, summary_line, APPROX_NOTE};
use crate::render::svg::escape;
use std::fmt::Write;

/// The page's opening section: each run's verdicts and findings.
pub fn lead(s: &mut String, views: &[RunView]) {
    s.push_str("<section class=\"lead\" id=\"lead\">");
    for (i, v) in views.iter().enumerate() {
        s.push_str("<div class=\"lead-run\">");
        if views.len() > 1 {
            let _ = write!(s, "<h2>run {}: {}</h2>", i + 1, escape(&v.result.label));
        }
        if let Some(c) = &v.comparison {
            let base = v.baseline.as_ref().map_or("", |b| b.label.as_str());
            verdict(
                s,
                c,
                (&format!("Against baseline {base}"), None),
                &verdict_id(i, None),
            );
        }
        for (pi, (p, c)) in v.pairs.iter().enumerate() {
            let (heading, informs) = super::pair_heading(p, v.ab);
            verdict(s, c, (&heading, informs), &verdict_id(i, Some(pi)));
        }
        findings(s, v);
        s.push_str("</div>");
    }
    s.push_str("</section>");
}

/// One comparison's short verdict; `full` is the id of the section holding every check. A pair
/// of one run informs, and says so instead of an outcome (`pair_heading`).
fn verdict(
    s: &mut String,
    c: &Comparison,
    (heading, pair): (&str, Option<&crate::compare::Pair>),
    full: &str,
) {
    let outcome = c.outcome();
    let said = pair.map_or_else(
        || outcome.label().to_string(),
        |p| crate::render::diff::pair_heading(p, outcome),
    );
    let _ = write!(
        s,
        "<div class=\"verdict-lead\"><h2>{}: <span class=\"outcome {}\">{}</span></h2>",
        escape(heading),
        outcome_class(outcome),
        escape(&said)
    );
    if !c.headline.is_empty() {
        s.push_str("<ul class=\"headline\">");
        for line in &c.headline {
            let _ = write!(s, "<li>{}</li>", escape(line));
        }
        s.push_str("</ul>");
    }
    if let Some(r) = &c.refused {
        let _ = write!(
            s,
            "<p class=\"warning\">Not judged: the two sides ran different workloads (fingerprints {} and {}); what changed is below.</p></div>",
            escape(&r.base_fp),
            escape(&r.new_fp)
        );
        return;
    }
    let _ = write!(
        s,
        "<p class=\"counts\">{}</p>",
        escape(&summary_line(&c.counts()))
    );
    let reasons = [
        c.inconclusive_reason()
            .map(|why| format!("inconclusive: {why}")),
        c.incomplete_reason()
            .map(|why| format!("incomplete: {why}")),
    ];
    let invalid = invalid_lines(c)
        .into_iter()
        .map(|l| format!("invalid: {l}"));
    for line in reasons.into_iter().flatten().chain(invalid) {
        let _ = write!(s, "<p>{}</p>", escape(&line));
    }
    let _ = write!(s, "<p class=\"muted\">{}</p>", escape(&judged_line(c)));
    if let Some(g) = grid(c) {
        grid_table(s, &g);
    }
    let level = run_level(c);
    if !level.is_empty() {
        s.push_str("<ul class=\"run-level\">");
        for line in level {
            let _ = write!(s, "<li>{}</li>", escape(&line));
        }
        s.push_str("</ul>");
    }
    let _ = write!(
        s,
        "<p class=\"muted\"><a href=\"#{full}\">Every check</a>, with its CI and the gates applied, follows the charts.</p></div>"
    );
}

/// The grid of verdicts (rows of models and metrics, columns of steps), its legend and, when a
/// check was judged the approximate way, the note that says so.
fn grid_table(s: &mut String, g: &Grid) {
    s.push_str("<table class=\"verdict-grid\"><thead><tr>");
    for h in &g.header {
        let _ = write!(s, "<th>{}</th>", escape(h));
    }
    s.push_str("</tr></thead><tbody>");
    for row in &g.rows {
        s.push_str("<tr>");
        for (ci, cell) in row.iter().enumerate() {
            if ci == 0 {
                let _ = write!(s, "<th>{}</th>", escape(cell));
            } else {
                let _ = write!(
                    s,
                    "<td class=\"{}\">{}</td>",
                    mark_class(cell),
                    escape(cell)
                );
            }
        }
        s.push_str("</tr>");
    }
    let _ = write!(
        s,
        "</tbody></table><p class=\"muted legend\">{}</p>",
        escape(LEGEND)
    );
    if g.approximate {
        let _ = write!(s, "<p class=\"muted\">{}</p>", escape(APPROX_NOTE));
    }
}

/// A grid cell's class from its verdict mark (the grid's cells begin with it).
fn mark_class(cell: &str) -> &'static str {
    match cell.chars().next() {
        Some('✗') => "m-regressed",
        Some('?') => "m-inconclusive",
        Some('✓') => "m-improved",
        _ => "m-ok",
    }
}

/// Each model's findings in sentences: the knee line, the wall, the notes.
fn findings(s: &mut String, v: &RunView) {
    if v.findings.is_empty() {
        return;
    }
    s.push_str("<h3>Findings</h3><ul class=\"findings\">");
    let many = v.findings.len() > 1;
    for f in &v.findings {
        for line in f.sentences() {
            let line = if many {
                format!("{}: {line}", f.model)
            } else {
                line
            };
            let _ = write!(s, "<li>{}</li>", escape(&line));
        }
    }
    s.push_str("</ul>");
}
