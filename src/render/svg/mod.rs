//! Hand-written SVG charts for the HTML report: line charts (with a shaded interval, vertical
//! markers, horizontal reference lines and ringed points) and stacked bar charts on the same
//! kind of x axis. Pure: a `Chart` in, an `<svg>` string out.
//!
//! Why hand-written and not `plotters`: the report needs CSS classes on every element (so one
//! stylesheet switches light/dark mode and print styles, and tests find axes, series and the knee
//! band in the DOM), text that the browser lays out with the page's font, and a few kinds of
//! marks. plotters' SVG backend writes fixed inline colours and fonts with no classes, and would
//! add a dependency tree for ~400 lines of straightforward drawing.
//!
//! Colours are never set here: elements carry classes (`c0`..`c7`, the Okabe–Ito palette in the
//! page's CSS), and series also differ by marker shape and dash, so nothing depends on colour.

use std::fmt::Write;

mod lines;
mod marks;
mod stacked;
mod xaxis;

const W: f64 = 480.0;
const PLOT_H: f64 = 230.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 16.0;
/// Room above the plot: the title, then one row for the knee and wall labels, which sit above
/// the data rather than on it.
const TOP: f64 = 42.0;
/// The baseline of the knee and wall labels (above the plot frame).
const MARK_LABEL_Y: f64 = TOP - 5.0;
const LEGEND_ROW: f64 = 16.0;

/// Point shapes, so series differ without colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    Circle,
    Square,
    Triangle,
    Diamond,
    None,
}

impl Marker {
    pub const CYCLE: [Marker; 4] = [
        Marker::Circle,
        Marker::Square,
        Marker::Triangle,
        Marker::Diamond,
    ];
}

#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    /// Colour slot 0..=7 (`c0`..`c7`), or `None` for the neutral reference colour.
    pub colour: Option<usize>,
    pub points: Vec<(f64, f64)>,
    pub marker: Marker,
    /// Dashed and lighter: a baseline or an ideal line.
    pub dashed: bool,
    /// Extra CSS class (`baseline`, `ideal`).
    pub kind: &'static str,
}

/// A shaded x interval (the knee).
#[derive(Debug, Clone, PartialEq)]
pub struct Band {
    pub x0: f64,
    pub x1: f64,
    pub label: String,
}

/// A vertical marker line (the rate-limit wall, a step boundary).
#[derive(Debug, Clone, PartialEq)]
pub struct VLine {
    pub x: f64,
    pub label: String,
    /// CSS class of the group; its line and label get `-line` and `-label` (`wall`, `step`).
    pub class: &'static str,
}

/// How a line chart's x axis is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum XAxis {
    /// The ladder's steps: a tick at every step value; logarithmic when the values span 16× or
    /// more (every ladder chart of a page shares this rule and its range).
    #[default]
    Steps,
    /// A continuous quantity (throughput, seconds): round ticks, linear.
    Linear,
    /// A continuous quantity over decades (latency distributions): logarithmic, ticks at
    /// 1, 2 and 5 × 10^k.
    Log,
}

/// A horizontal reference line (an SLO bound).
#[derive(Debug, Clone, PartialEq)]
pub struct HLine {
    pub y: f64,
    pub label: String,
}

/// A ringed point (a regression), with a tooltip.
#[derive(Debug, Clone, PartialEq)]
pub struct Ring {
    pub x: f64,
    pub y: f64,
    pub label: String,
}

/// One bar of a stacked bar chart: where it stands on the x axis (its step's ladder value), its
/// name in tooltips and its `(colour slot, value)` segments.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    pub x: f64,
    pub label: String,
    pub segments: Vec<(usize, f64)>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    Lines {
        series: Vec<Series>,
        bands: Vec<Band>,
        vlines: Vec<VLine>,
        hlines: Vec<HLine>,
        rings: Vec<Ring>,
    },
    /// Stacked bars on the same kind of x axis as the line charts, with the same knee bands and
    /// markers; `legend` names the colour slots used by the segments.
    Stacked {
        bars: Vec<Bar>,
        legend: Vec<(usize, String)>,
        bands: Vec<Band>,
        vlines: Vec<VLine>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// Used for element ids (`{id}-title`); [a-z0-9-].
    pub id: String,
    pub title: String,
    /// Axis labels with units, e.g. `concurrent streams`, `TTFT (ms)`.
    pub x_label: String,
    pub y_label: String,
    /// Shared y range across charts of the same metric (`None`: from this chart's data).
    pub y_max: Option<f64>,
    /// The y axis never goes above this when the data fits (100 for percentages).
    pub y_cap: Option<f64>,
    /// Extra x ticks: every step of the ladder, even one without a value here.
    pub x_ticks: Vec<f64>,
    /// Shared x range (every chart of the ladder on a page has the same one).
    pub x_range: Option<(f64, f64)>,
    /// Category labels for line charts (trends): x values are indices into this list.
    pub x_categories: Option<Vec<String>>,
    pub x_axis: XAxis,
    pub body: Body,
    /// Shown inside the plot when there is nothing to draw.
    pub empty_note: Option<String>,
}

pub use crate::render::xml::escape;

/// 1, 2 or 5 × 10^k steps, about `n` of them from 0 to at least `max`.
pub fn nice_ticks(max: f64, n: usize) -> Vec<f64> {
    let max = if max.is_finite() && max > 0.0 {
        max
    } else {
        1.0
    };
    let raw = max / n.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let count = (max / step).ceil() as usize;
    (0..=count).map(|i| i as f64 * step).collect()
}

/// Ticks of a logarithmic axis from `lo` to `hi` (both > 0): 1, 2 and 5 × 10^k, or only the
/// powers of ten when the range spans more than three decades.
pub fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    if !(lo > 0.0 && hi > lo && hi.is_finite()) {
        return Vec::new();
    }
    let (k0, k1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let steps: &[f64] = if k1 - k0 > 3 {
        &[1.0]
    } else {
        &[1.0, 2.0, 5.0]
    };
    (k0..=k1)
        .flat_map(|k| steps.iter().map(move |m| m * 10f64.powi(k)))
        .filter(|v| *v >= lo && *v <= hi)
        .collect()
}

/// Compact tick label: 950, 1.5k, 2M, 0.25.
pub fn fmt_num(v: f64) -> String {
    let a = v.abs();
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if a >= 1e6 {
        format!("{}M", trim(format!("{:.2}", v / 1e6)))
    } else if a >= 1e4 {
        format!("{}k", trim(format!("{:.1}", v / 1e3)))
    } else if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        trim(format!("{v:.1}"))
    } else {
        trim(format!("{v:.3}"))
    }
}

fn legend_items(chart: &Chart) -> Vec<(String, String)> {
    // (css classes, label)
    match &chart.body {
        Body::Lines { series, .. } => series
            .iter()
            .map(|s| (series_class(s), s.name.clone()))
            .collect(),
        Body::Stacked { legend, .. } => legend
            .iter()
            .map(|(c, l)| (format!("c{c}"), l.clone()))
            .collect(),
    }
}

fn series_class(s: &Series) -> String {
    let colour = s
        .colour
        .map_or("ref".to_string(), |c| format!("c{}", c % 8));
    let mut class = format!("series {colour}");
    if s.dashed {
        class.push_str(" dashed");
    }
    if !s.kind.is_empty() {
        class.push(' ');
        class.push_str(s.kind);
    }
    class
}

/// Lays legend items out in rows; returns (x, row) per item and the number of rows.
fn legend_layout(items: &[(String, String)]) -> (Vec<(f64, usize)>, usize) {
    let mut pos = Vec::new();
    let (mut x, mut row) = (LEFT, 0usize);
    for (_, label) in items {
        let w = 26.0 + 6.2 * label.chars().count() as f64 + 12.0;
        if x + w > W - RIGHT && x > LEFT {
            x = LEFT;
            row += 1;
        }
        pos.push((x, row));
        x += w;
    }
    (pos, if items.is_empty() { 0 } else { row + 1 })
}

pub fn render(chart: &Chart) -> String {
    let items = legend_items(chart);
    let (legend_pos, legend_rows) = legend_layout(&items);
    let y_ticks = y_ticks(chart);
    let frame = Frame {
        plot_w: W - LEFT - RIGHT,
        x_axis_y: TOP + PLOT_H,
        y_top: *y_ticks.last().unwrap_or(&1.0),
    };
    let height = frame.x_axis_y + 44.0 + legend_rows as f64 * LEGEND_ROW + 4.0;
    let id = &chart.id;
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="{id}" viewBox="0 0 {W} {height}" role="img" aria-labelledby="{id}-title"><title id="{id}-title">{}</title>"#,
        escape(&chart.title)
    );
    let _ = write!(
        s,
        r#"<text class="chart-title" x="{LEFT}" y="18">{}</text>"#,
        escape(&chart.title)
    );
    y_axis(&mut s, chart, &frame, &y_ticks);
    match &chart.body {
        Body::Lines { .. } => lines::draw(&mut s, chart, &frame),
        Body::Stacked { .. } => stacked::draw(&mut s, chart, &frame),
    }
    legend(&mut s, &items, &legend_pos, frame.x_axis_y);
    s.push_str("</svg>");
    s
}

/// Where the plot sits in the chart, and its y scale.
struct Frame {
    plot_w: f64,
    /// The pixel y of the x axis (the plot's bottom).
    x_axis_y: f64,
    /// The value at the top of the y axis (its highest tick).
    y_top: f64,
}

impl Frame {
    /// The pixel y of value `y` (a little room above the top tick, nothing below 0).
    fn py(&self, y: f64) -> f64 {
        self.x_axis_y - (y / self.y_top).clamp(0.0, 1.05) * PLOT_H
    }
}

/// The y axis's ticks from 0: up to the data (with headroom) or the shared range, whichever is
/// higher, and not above the cap when the data fits under it.
fn y_ticks(chart: &Chart) -> Vec<f64> {
    let data_max = match &chart.body {
        Body::Lines { series, hlines, .. } => series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .chain(hlines.iter().map(|h| h.y))
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max),
        Body::Stacked { bars, .. } => bars
            .iter()
            .map(|b| b.segments.iter().map(|x| x.1).sum::<f64>())
            .fold(0.0, f64::max),
    };
    // Headroom above the data, but a hint such as 100% is not exceeded when the data fits.
    let hint = chart.y_max.unwrap_or(0.0);
    let target = if data_max <= hint {
        hint
    } else {
        hint.max(data_max) * 1.05
    };
    // Percentages stop at 100%.
    let target = match chart.y_cap {
        Some(cap) if data_max <= cap => target.min(cap),
        _ => target,
    };
    nice_ticks(target, 5)
}

/// The y axis: grid lines and tick labels, the axis line and its label.
fn y_axis(s: &mut String, chart: &Chart, f: &Frame, ticks: &[f64]) {
    s.push_str(r#"<g class="axis y-axis">"#);
    for t in ticks {
        let y = f.py(*t);
        let _ = write!(
            s,
            r#"<line class="grid" x1="{LEFT}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}"/><text class="tick" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            LEFT + f.plot_w,
            LEFT - 6.0,
            y + 4.0,
            fmt_num(*t)
        );
    }
    let _ = write!(
        s,
        r#"<line class="axis-line" x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{}"/><text class="axis-label" transform="translate(14 {:.1}) rotate(-90)" text-anchor="middle">{}</text></g>"#,
        f.x_axis_y,
        TOP + PLOT_H / 2.0,
        escape(&chart.y_label)
    );
}

/// The legend under the x axis: a line swatch for a series, a box for a bar segment.
fn legend(s: &mut String, items: &[(String, String)], pos: &[(f64, usize)], x_axis_y: f64) {
    if items.is_empty() {
        return;
    }
    s.push_str(r#"<g class="legend">"#);
    for ((class, label), (x, row)) in items.iter().zip(pos) {
        let y = x_axis_y + 52.0 + *row as f64 * LEGEND_ROW;
        let swatch = if class.starts_with("series") {
            format!(
                r#"<g class="{class}"><line x1="{x:.1}" x2="{:.1}" y1="{:.1}" y2="{:.1}"/></g>"#,
                x + 20.0,
                y - 4.0,
                y - 4.0
            )
        } else {
            format!(
                r#"<rect class="segment {class}" x="{x:.1}" y="{:.1}" width="14" height="10"/>"#,
                y - 10.0
            )
        };
        let _ = write!(
            s,
            r#"{swatch}<text class="legend-label" x="{:.1}" y="{y:.1}">{}</text>"#,
            x + 24.0,
            escape(label)
        );
    }
    s.push_str("</g>");
}

fn empty(s: &mut String, chart: &Chart, plot_w: f64) {
    let note = chart.empty_note.as_deref().unwrap_or("no data");
    let _ = write!(
        s,
        r#"<text class="empty-note" x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
        LEFT + plot_w / 2.0,
        TOP + PLOT_H / 2.0,
        escape(note)
    );
}

fn marker(s: &mut String, m: Marker, x: f64, y: f64, tip: &str) {
    let tip = format!("<title>{}</title>", escape(tip));
    let _ = match m {
        Marker::Circle => write!(
            s,
            r#"<circle class="point" cx="{x:.1}" cy="{y:.1}" r="3.5">{tip}</circle>"#
        ),
        Marker::Square => write!(
            s,
            r#"<rect class="point" x="{:.1}" y="{:.1}" width="7" height="7">{tip}</rect>"#,
            x - 3.5,
            y - 3.5
        ),
        Marker::Triangle => write!(
            s,
            r#"<polygon class="point" points="{x:.1},{:.1} {:.1},{:.1} {:.1},{:.1}">{tip}</polygon>"#,
            y - 4.5,
            x - 4.5,
            y + 3.5,
            x + 4.5,
            y + 3.5
        ),
        Marker::Diamond => write!(
            s,
            r#"<polygon class="point" points="{x:.1},{:.1} {:.1},{y:.1} {x:.1},{:.1} {:.1},{y:.1}">{tip}</polygon>"#,
            y - 4.5,
            x + 4.5,
            y + 4.5,
            x - 4.5
        ),
        Marker::None => Ok(()),
    };
}

#[cfg(test)]
mod tests;
