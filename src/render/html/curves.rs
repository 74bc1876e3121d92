//! The report's overview: every run and model of the page on shared axes, so runs are compared
//! by overlay rather than by scrolling. The serving curve (TTFT P90 and E2E P90 against output
//! tokens/s and against requests/s, a point per step, the knee marked), TTFT and ITL
//! distributions per step (CDFs on a log axis: a bimodal step shows as a step in the curve),
//! per-request TTFT over the run with the step boundaries, and ITL and E2E percentiles against
//! the ladder. Element ids are stable (`docs/report.md`): `serving-curve`, `ttft-cdf`,
//! `itl-cdf`, `ttft-over-time`, `itl-chart`, `e2e-chart`.
//!
//! Points come from `summary.csv` rows and `requests.csv` records as loaded; percentiles of the
//! distributions use the one type-7 rule (`stats::quantile_sorted`) and the one ITL pooling
//! (`stats::PooledGaps`).

use super::view::RunView;
use crate::findings::KneeFinding;
use crate::model::LadderUnit;
use crate::model::RequestRecord;
use crate::render::svg::{self, Body, Chart, Marker, Series, VLine, XAxis};
use crate::stats::{PooledGaps, StepSummary};
use std::fmt::Write;

/// At most this many points per scatter (every k-th request beyond it, said in the title).
const SCATTER_MAX: usize = 2500;
/// The CDFs' percentile grid: every 1% up to 99, then 99.5 and 99.9.
fn cdf_grid() -> Vec<f64> {
    let mut g: Vec<f64> = (0..=99).map(f64::from).collect();
    g.extend([99.5, 99.9, 100.0]);
    g
}

/// A step's CDF points `(value, percentile %)` of a line.
type StepCdf = dyn Fn(&Line, u32) -> Vec<(f64, f64)>;

/// One line of the overview: a model of a run (or of the baseline).
struct Line<'a> {
    name: String,
    rows: Vec<&'a StepSummary>,
    records: Vec<&'a RequestRecord>,
    knee_step: Option<u32>,
    baseline: bool,
}

fn lines(views: &[RunView]) -> Vec<Line<'_>> {
    let many_runs = views.len() > 1;
    let mut out = Vec::new();
    let mut seen_baseline = false;
    for (ri, v) in views.iter().enumerate() {
        let models = super::charts::models(&v.result.summaries);
        let many_models = models.len() > 1;
        for m in &models {
            let knee_step = v
                .findings
                .iter()
                .find(|f| &f.model == m)
                .and_then(|f| match &f.knee {
                    KneeFinding::Knee(k) => Some(k.step),
                    _ => None,
                });
            let name = match (many_runs, many_models) {
                (false, false) => String::new(),
                (false, true) => m.clone(),
                (true, false) => format!("run {}", ri + 1),
                (true, true) => format!("run {} · {m}", ri + 1),
            };
            out.push(Line {
                name,
                rows: super::charts::model_rows(&v.result.summaries, m),
                records: v
                    .result
                    .requests
                    .iter()
                    .flatten()
                    .filter(|r| &r.model == m)
                    .collect(),
                knee_step,
                baseline: false,
            });
        }
        // The baseline once (every run of a page is judged against the same one).
        if let (Some(b), false) = (&v.baseline, seen_baseline) {
            seen_baseline = true;
            for m in super::charts::models(&b.summaries) {
                out.push(Line {
                    name: if many_models {
                        format!("baseline · {m}")
                    } else {
                        "baseline".into()
                    },
                    rows: super::charts::model_rows(&b.summaries, &m),
                    records: b
                        .requests
                        .iter()
                        .flatten()
                        .filter(|r| r.model == m)
                        .collect(),
                    knee_step: None,
                    baseline: true,
                });
            }
        }
    }
    out
}

fn named(line: &Line, what: &str) -> String {
    if line.name.is_empty() {
        what.to_string()
    } else {
        format!("{} · {what}", line.name)
    }
}

fn series(
    name: String,
    colour: usize,
    marker: Marker,
    points: Vec<(f64, f64)>,
    dashed: bool,
    kind: &'static str,
) -> Series {
    Series {
        name,
        colour: Some(colour % 8),
        points,
        marker,
        dashed,
        kind,
    }
}

fn base_chart(
    id: &str,
    title: String,
    x_label: String,
    y_label: &str,
    x_axis: XAxis,
    body: Body,
) -> Chart {
    Chart {
        id: id.to_string(),
        title,
        x_label,
        y_label: y_label.to_string(),
        y_max: None,
        y_cap: y_label.contains('%').then_some(100.0),
        x_ticks: Vec::new(),
        x_range: None,
        x_categories: None,
        x_axis,
        body,
        empty_note: None,
    }
}

fn body(series: Vec<Series>, vlines: Vec<VLine>) -> Body {
    Body::Lines {
        series,
        bands: Vec::new(),
        vlines,
        hlines: Vec::new(),
        rings: Vec::new(),
    }
}

/// Whether the page shows one run's model (with or without its baseline): then colours tell
/// metrics, percentiles or steps apart and the baseline is the same colours dashed; with more,
/// colours tell the lines apart.
fn single(lines: &[Line]) -> bool {
    lines.iter().filter(|l| !l.baseline).count() <= 1
}

/// The colour of line `i`, or of `metric` (a metric, percentile or step slot) for one line.
fn colour(lines: &[Line], i: usize, metric: usize) -> usize {
    if single(lines) {
        metric
    } else {
        [0, 1, 2, 3, 4, 5, 7, 6][i % 8]
    }
}

/// The serving curve: TTFT P90 and E2E P90 against a throughput, one point per step in step
/// order, the knee step as a triangle.
fn serving(lines: &[Line], id: &str, x_label: &str, x: fn(&StepSummary) -> f64) -> Chart {
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let pts = |y: fn(&StepSummary) -> Option<f64>| -> Vec<(f64, f64)> {
            l.rows
                .iter()
                .filter_map(|r| y(r).map(|v| (x(r), v)))
                .collect()
        };
        out.push(series(
            named(l, "TTFT P90"),
            colour(lines, i, 0),
            Marker::Circle,
            pts(|r| r.ttft_p90_ms),
            l.baseline,
            "",
        ));
        out.push(series(
            named(l, "E2E P90"),
            colour(lines, i, 1),
            Marker::Square,
            pts(|r| r.e2e_p90_ms),
            l.baseline,
            "alt",
        ));
        if let Some(k) = l
            .knee_step
            .and_then(|s| l.rows.iter().find(|r| r.step == s))
        {
            if let Some(y) = k.ttft_p90_ms {
                out.push(series(
                    named(l, &format!("knee at {}", k.concurrency)),
                    5,
                    Marker::Triangle,
                    vec![(x(k), y)],
                    false,
                    "knee-point",
                ));
            }
        }
    }
    base_chart(
        id,
        format!("serving curve · latency against {x_label}"),
        x_label.to_string(),
        "latency P90 (ms)",
        XAxis::Linear,
        body(out, Vec::new()),
    )
}

fn unit_words(unit: LadderUnit, v: u32) -> String {
    unit.describe(v)
}

/// Per step, `(percentile %, value)` points of a CDF from sorted values (values ≤ 0 dropped: the
/// axis is logarithmic).
fn cdf_points(quantile: impl Fn(f64) -> Option<f64>) -> Vec<(f64, f64)> {
    cdf_grid()
        .into_iter()
        .filter_map(|p| quantile(p / 100.0).filter(|v| *v > 0.0).map(|v| (v, p)))
        .collect()
}

fn cdf_chart(lines: &[Line], id: &str, what: &str, per_step: &StepCdf) -> Chart {
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        for (si, r) in l.rows.iter().enumerate() {
            let pts = per_step(l, r.step);
            if pts.is_empty() {
                continue;
            }
            let c = colour(lines, i, si);
            let dashed = l.baseline || (!single(lines) && i % 2 == 1);
            out.push(series(
                named(l, &unit_words(r.ladder_unit, r.concurrency)),
                c,
                Marker::None,
                pts,
                dashed,
                "",
            ));
        }
    }
    let mut c = base_chart(
        id,
        format!("{what} distribution per step (CDF)"),
        format!("{what} (ms)"),
        "requests ≤ x (%)",
        XAxis::Log,
        body(out, Vec::new()),
    );
    c.y_max = Some(100.0);
    c.empty_note = Some("no per-request records (requests.csv)".into());
    c
}

fn ttft_cdf(lines: &[Line]) -> Chart {
    cdf_chart(lines, "ttft-cdf-chart", "TTFT", &|l, step| {
        let mut v: Vec<f64> = l
            .records
            .iter()
            .filter(|r| r.step == step && r.is_ok())
            .filter_map(|r| r.ttft_ms)
            .filter(|v| v.is_finite())
            .collect();
        v.sort_by(f64::total_cmp);
        cdf_points(|q| crate::stats::quantile_sorted(&v, q))
    })
}

fn itl_cdf(lines: &[Line]) -> Chart {
    cdf_chart(lines, "itl-cdf-chart", "ITL", &|l, step| {
        let pooled = PooledGaps::of(
            l.records
                .iter()
                .filter(|r| r.step == step && r.is_ok())
                .filter_map(|r| r.itl.as_ref()),
        );
        cdf_points(|q| pooled.quantile(q))
    })
}

/// Every request's TTFT at its start time, coloured by step (one run and model) or by line, the
/// step boundaries marked (one run).
fn ttft_over_time(lines: &[Line]) -> Chart {
    let total: usize = lines.iter().map(|l| l.records.len()).sum();
    let every = total.div_ceil(SCATTER_MAX).max(1);
    let mut out = Vec::new();
    let mut vlines = Vec::new();
    let live: Vec<&Line> = lines.iter().filter(|l| !l.baseline).collect();
    for (i, l) in live.iter().enumerate() {
        for (si, r) in l.rows.iter().enumerate() {
            let recs: Vec<&&RequestRecord> =
                l.records.iter().filter(|x| x.step == r.step).collect();
            let pts: Vec<(f64, f64)> = recs
                .iter()
                .enumerate()
                .filter(|(k, _)| k % every == 0)
                .filter_map(|(_, x)| {
                    x.ttft_ms
                        .filter(|_| x.is_ok())
                        .map(|t| (x.started_at_ms / 1000.0, t))
                })
                .collect();
            if live.len() == 1 {
                if let Some(t0) = recs.iter().map(|x| x.started_at_ms).min_by(f64::total_cmp) {
                    if si > 0 {
                        vlines.push(VLine {
                            x: t0 / 1000.0,
                            label: String::new(),
                            class: "step",
                        });
                    }
                }
            }
            if pts.is_empty() {
                continue;
            }
            let c = if live.len() == 1 {
                si
            } else {
                colour(lines, i, 0)
            };
            let name = if live.len() == 1 {
                named(l, &unit_words(r.ladder_unit, r.concurrency))
            } else if si == 0 {
                l.name.clone()
            } else {
                String::new()
            };
            out.push(series(name, c, Marker::Circle, pts, false, "scatter"));
        }
    }
    out.retain(|s| !s.points.is_empty());
    let sampled = if every > 1 {
        format!(" (every {every}th request)")
    } else {
        String::new()
    };
    let mut c = base_chart(
        "ttft-over-time-chart",
        format!("TTFT of each request over the run{sampled}"),
        "time since the run started (s)".into(),
        "TTFT (ms)",
        XAxis::Linear,
        body(out, vlines),
    );
    c.empty_note = Some("no per-request records (requests.csv)".into());
    c
}

/// P50/P90/P99 of a metric against the ladder, every line on the same axes.
fn percentile_chart(
    lines: &[Line],
    id: &str,
    what: &str,
    pick: [fn(&StepSummary) -> Option<f64>; 3],
) -> Chart {
    let mut out = Vec::new();
    let unit = lines
        .first()
        .and_then(|l| l.rows.first())
        .map(|r| r.ladder_unit)
        .unwrap_or_default();
    let mut ticks = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        for (pi, (p, f)) in ["P50", "P90", "P99"].iter().zip(pick).enumerate() {
            let pts: Vec<(f64, f64)> = l
                .rows
                .iter()
                .filter_map(|r| f(r).map(|v| (f64::from(r.concurrency), v)))
                .collect();
            ticks.extend(pts.iter().map(|p| p.0));
            let c = colour(lines, i, [0, 1, 5][pi]);
            let marker = Marker::CYCLE[pi];
            let alt = if !single(lines) && pi == 0 { "alt" } else { "" };
            out.push(series(named(l, p), c, marker, pts, l.baseline, alt));
        }
    }
    out.retain(|s| !s.points.is_empty());
    let mut c = base_chart(
        id,
        format!("{what} P50 / P90 / P99 per step"),
        super::charts::x_label(unit),
        &format!("{what} (ms)"),
        XAxis::Steps,
        body(out, Vec::new()),
    );
    ticks.sort_by(f64::total_cmp);
    ticks.dedup();
    c.x_ticks = ticks;
    c
}

/// The overview section of the page.
pub fn overview(views: &[RunView]) -> String {
    let lines = lines(views);
    let mut s = String::new();
    if lines.is_empty() {
        return s;
    }
    s.push_str(
        "<section class=\"overview\" id=\"overview\"><h2>Serving curve and distributions</h2>",
    );
    if views.len() > 1 {
        s.push_str("<ol class=\"runs-legend muted\">");
        for v in views {
            let _ = write!(s, "<li>{}</li>", svg::escape(&v.result.label));
        }
        s.push_str("</ol>");
    }
    let figure = |s: &mut String, id: &str, charts: &[Chart]| {
        let _ = write!(s, "<div class=\"charts\" id=\"{id}\">");
        for c in charts {
            s.push_str(&svg::render(c));
        }
        s.push_str("</div>");
    };
    figure(
        &mut s,
        "serving-curve",
        &[
            serving(&lines, "serving-curve-tokens", "output tokens/s", |r| {
                r.tpm / 60.0
            }),
            serving(&lines, "serving-curve-rps", "requests/s", |r| r.rps),
        ],
    );
    s.push_str("<div class=\"charts\">");
    let _ = write!(
        s,
        "<div id=\"ttft-cdf\">{}</div>",
        svg::render(&ttft_cdf(&lines))
    );
    let _ = write!(
        s,
        "<div id=\"itl-cdf\">{}</div>",
        svg::render(&itl_cdf(&lines))
    );
    let _ = write!(
        s,
        "<div id=\"ttft-over-time\">{}</div>",
        svg::render(&ttft_over_time(&lines))
    );
    let _ = write!(
        s,
        "<div id=\"itl-chart\">{}</div>",
        svg::render(&percentile_chart(
            &lines,
            "itl-chart-svg",
            "ITL",
            [|r| r.itl_p50_ms, |r| r.itl_p90_ms, |r| r.itl_p99_ms]
        ))
    );
    let _ = write!(
        s,
        "<div id=\"e2e-chart\">{}</div>",
        svg::render(&percentile_chart(
            &lines,
            "e2e-chart-svg",
            "E2E",
            [|r| r.e2e_p50_ms, |r| r.e2e_p90_ms, |r| r.e2e_p99_ms]
        ))
    );
    s.push_str("</div></section>");
    s
}
