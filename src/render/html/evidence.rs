//! The report's server evidence: per model, TTFT split into its parts per step (headers, the
//! server's queue, prefill, the rest: `findings::ttft_parts`) as stacked mean bars with a table
//! of each part's P50 / P90 and source; per run, the server's own series from
//! `server_metrics.csv` (waiting, running, KV-cache use) over the run, each step's start marked.
//! Nothing is recomputed here: the findings and the scraped rows are drawn as they are.

use super::view::RunView;
use crate::findings::ttft_parts::{Part, PROCESSING};
use crate::findings::{ModelFindings, TtftParts};
use crate::model::MetricRow;
use crate::render::svg::{self, escape, Bar, Body, Chart, Marker, Series, VLine, XAxis};
use std::fmt::Write;

/// Colour slots of the parts, in timeline order (the legend and the table use the same names).
const PARTS: [(usize, &str); 5] = [
    (4, "headers"),
    (5, "server queue"),
    (2, "prefill"),
    (3, PROCESSING),
    (7, "rest"),
];

/// The parts a model's chart and table show: a server that reports queue and prefill only as
/// one time gets that column instead of two empty ones.
fn shown_parts(f: &ModelFindings) -> Vec<(usize, &'static str)> {
    let any = |name: &str| f.ttft_parts.iter().any(|p| part_of(p, name).is_some());
    let split = any("server queue") || any("prefill");
    let unsplit = any(PROCESSING);
    PARTS
        .into_iter()
        .filter(|(_, name)| match *name {
            "server queue" | "prefill" => split || !unsplit,
            PROCESSING => unsplit,
            _ => true,
        })
        .collect()
}

/// Whether a model has a decomposition worth showing: the client split TTFT (headers) at
/// some step. Runs from before the split have none and show nothing.
fn has_parts(f: &ModelFindings) -> bool {
    f.ttft_parts.iter().any(|p| p.headers.is_some())
}

/// One model's TTFT decomposition: the stacked chart and the table, or nothing.
pub fn ttft_parts_section(s: &mut String, view: &RunView, f: &ModelFindings, prefix: &str) {
    if !has_parts(f) {
        return;
    }
    let anchor = stable_id(s, "ttft-parts");
    let _ = write!(
        s,
        "<section class=\"ttft-parts\" id=\"{prefix}-ttft-parts\"><h4>Where TTFT went</h4><p class=\"muted\">Headers: request start to the response headers, less what the server says it spent (network and admission). Server queue and prefill: the server's own timings (a server that reports only their sum, as OpenAI's <code>openai-processing-ms</code>, gets one part, queue + prefill, not split). Rest: TTFT less the others (first decode, tokenization, the gap to the first token).</p><div class=\"charts\"{}>",
        anchor
    );
    s.push_str(&svg::render(&ttft_parts_chart(view, f, prefix)));
    s.push_str("</div>");
    ttft_parts_table(s, f);
    s.push_str("</section>");
}

/// ` id="ID"` for the page's first chart group of its kind, so that `report.html#ttft-parts`
/// and `#server-series` (docs/report.md) open at the first run's first model; the others keep
/// only their run- and model-prefixed section ids.
fn stable_id(page: &str, id: &str) -> String {
    if page.contains(&format!(" id=\"{id}\"")) {
        String::new()
    } else {
        format!(" id=\"{id}\"")
    }
}

fn part_of<'a>(p: &'a TtftParts, name: &str) -> Option<&'a Part> {
    match name {
        "headers" => p.headers.as_ref(),
        "server queue" => p.server_queue.as_ref(),
        "prefill" => p.prefill.as_ref(),
        PROCESSING => p.server_processing.as_ref(),
        _ => Some(&p.rest),
    }
}

/// Mean TTFT per step stacked by part (the means of a request's parts add up to its TTFT;
/// percentiles would not), on the ladder's shared x axis with the knee and the wall marked, as
/// the model's other charts.
pub fn ttft_parts_chart(view: &RunView, f: &ModelFindings, prefix: &str) -> Chart {
    let shown = shown_parts(f);
    let bars: Vec<Bar> = f
        .ttft_parts
        .iter()
        .map(|p| Bar {
            x: f64::from(p.concurrency),
            label: p.concurrency.to_string(),
            segments: shown
                .iter()
                .map(|(c, name)| (*c, part_of(p, name).map_or(0.0, |x| x.mean_ms)))
                .collect(),
        })
        .collect();
    let legend = shown
        .iter()
        .filter(|(_, name)| f.ttft_parts.iter().any(|p| part_of(p, name).is_some()))
        .map(|(c, name)| (*c, name.to_string()))
        .collect();
    let body = Body::Stacked {
        bars,
        legend,
        bands: super::marks::knee_band(f),
        vlines: super::marks::wall_line(f),
    };
    Chart {
        empty_note: Some("no successful requests".to_string()),
        ..super::charts::on_ladder(
            view,
            format!("{prefix}-ttft-parts-chart"),
            format!("{} · mean TTFT by part", f.model),
            "TTFT (ms)",
            body,
        )
    }
}

fn ttft_parts_table(s: &mut String, f: &ModelFindings) {
    let _ = write!(
        s,
        "<table class=\"steps ttft-parts\"><thead><tr><th>{}</th><th>TTFT P50 / P90 (ms)</th>",
        f.ladder_unit.header()
    );
    let shown = shown_parts(f);
    for (_, name) in &shown {
        let _ = write!(s, "<th>{name} P50 / P90 (ms)</th>");
    }
    s.push_str("</tr></thead><tbody>");
    for p in &f.ttft_parts {
        let _ = write!(
            s,
            "<tr><td>{}</td><td>{}</td>",
            p.concurrency,
            cell(Some(&p.ttft))
        );
        for (_, name) in &shown {
            let part = part_of(p, name);
            let _ = write!(
                s,
                "<td title=\"{}\">{}</td>",
                escape(&part.map_or("not reported".to_string(), |x| format!(
                    "source: {} ({} requests)",
                    x.source, x.n
                ))),
                cell(part)
            );
        }
        s.push_str("</tr>");
    }
    s.push_str("</tbody></table>");
    let _ = write!(
        s,
        "<p class=\"muted sources\">Sources: {}.</p>",
        escape(&sources(&f.ttft_parts))
    );
}

fn cell(p: Option<&Part>) -> String {
    p.map_or("-".to_string(), |x| {
        format!("{:.0} / {:.0}", x.p50_ms, x.p90_ms)
    })
}

/// `headers: client; server queue: sim; …`, each part's source at the step that knows the
/// most parts.
fn sources(parts: &[TtftParts]) -> String {
    let Some(best) = parts.iter().max_by_key(|p| p.named().len()) else {
        return String::new();
    };
    let named: Vec<String> = best
        .named()
        .iter()
        .map(|(name, p)| format!("{name}: {}", p.source))
        .collect();
    let mut out = named.join("; ");
    if best.server_queue.is_none() && best.prefill.is_none() && best.server_processing.is_none() {
        out.push_str(" (the server sent no timings of its own)");
    }
    out
}

/// The server's series over the run (one run's section): requests waiting and running, and
/// KV-cache use (%), each step's start dashed and labelled with its load. Nothing when the run
/// scraped no metrics; a note when it scraped but no scrape succeeded.
pub fn server_section(s: &mut String, view: &RunView, prefix: &str) {
    let rows = &view.server_metrics;
    if rows.is_empty() {
        return;
    }
    let anchor = stable_id(s, "server-series");
    let _ = write!(
        s,
        "<section class=\"server-series\" id=\"{prefix}-server\"><h3>The server during the run</h3><p class=\"muted\">From the server's own <code>/metrics</code> (<code>server_metrics.csv</code>), scraped while the ladder ran; a failed scrape is a gap. Dashed lines: each step's start.</p><div class=\"charts\"{}>",
        anchor
    );
    let marks = step_marks(view, rows);
    let requests = vec![
        line("waiting", 5, points(rows, "waiting", 1.0)),
        line("running", 0, points(rows, "running", 1.0)),
    ];
    let kv = vec![line(
        "KV-cache use",
        2,
        points(rows, "kv_cache_usage", 100.0),
    )];
    for (id, title, y, series) in [
        (
            "server-requests",
            "requests waiting and running",
            "requests",
            requests,
        ),
        ("server-kv", "KV-cache use", "KV-cache use (%)", kv),
    ] {
        let mut c = Chart {
            id: format!("{prefix}-{id}"),
            title: format!("server · {title}"),
            x_label: "time since the run started (s)".to_string(),
            y_label: y.to_string(),
            y_max: None,
            y_cap: y.contains('%').then_some(100.0),
            x_ticks: vec![],
            x_range: None,
            x_categories: None,
            x_axis: XAxis::Linear,
            body: Body::Lines {
                series: series
                    .into_iter()
                    .filter(|s| !s.points.is_empty())
                    .collect(),
                bands: vec![],
                vlines: marks.clone(),
                hlines: vec![],
                rings: vec![],
            },
            empty_note: Some("the server reported no such series".to_string()),
        };
        if !rows.iter().any(|r| r.value.is_some()) {
            c.empty_note = Some("no scrape succeeded".to_string());
        }
        s.push_str(&svg::render(&c));
    }
    s.push_str("</div></section>");
}

fn line(name: &str, colour: usize, points: Vec<(f64, f64)>) -> Series {
    Series {
        name: name.to_string(),
        colour: Some(colour),
        points,
        marker: Marker::None,
        dashed: false,
        kind: "",
    }
}

/// (seconds, value × scale) of one mapped series, time order; gaps left out.
fn points(rows: &[MetricRow], series: &str, scale: f64) -> Vec<(f64, f64)> {
    rows.iter()
        .filter(|r| r.series == series)
        .filter_map(|r| r.value.map(|v| (r.t_ms / 1000.0, v * scale)))
        .collect()
}

/// A dashed line at the first scrape of each (model, step), labelled with the step's load
/// from the summary (`8 streams`), the model named when the run has several.
fn step_marks(view: &RunView, rows: &[MetricRow]) -> Vec<VLine> {
    let several = super::charts::models(&view.result.summaries).len() > 1;
    let mut seen: Vec<(&str, u32)> = Vec::new();
    let mut out = Vec::new();
    for r in rows {
        let (Some(model), Some(step)) = (r.model.as_deref(), r.step) else {
            continue;
        };
        if seen.contains(&(model, step)) {
            continue;
        }
        seen.push((model, step));
        let load = view
            .result
            .summaries
            .iter()
            .find(|x| x.model == model && x.step == step)
            .map_or(format!("step {step}"), |x| x.concurrency.to_string());
        out.push(VLine {
            x: r.t_ms / 1000.0,
            label: if several {
                format!("{model} {load}")
            } else {
                load
            },
            class: "step",
        });
    }
    out
}
