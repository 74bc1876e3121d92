//! The body of a stacked bar chart: a categorical x axis and one bar of coloured segments per
//! category. Split from `svg` beside the line charts' body (`lines`).

use std::fmt::Write;

use super::{empty, escape, fmt_num, Bar, Body, Chart, Frame, LEFT};

/// Draws a `Body::Stacked` chart's x axis and bars (the y axis is drawn already).
pub(super) fn draw(s: &mut String, chart: &Chart, f: &Frame, bars: &[Bar]) {
    let (x_axis_y, plot_w) = (f.x_axis_y, f.plot_w);
    let n = bars.len().max(1) as f64;
    let slot = plot_w / n;
    let bw = (slot * 0.6).min(48.0);
    s.push_str(r#"<g class="axis x-axis">"#);
    for (i, b) in bars.iter().enumerate() {
        let cx = LEFT + slot * (i as f64 + 0.5);
        let _ = write!(
            s,
            r#"<text class="tick" x="{cx:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            x_axis_y + 16.0,
            escape(&b.label)
        );
    }
    let _ = write!(
        s,
        r#"<line class="axis-line" x1="{LEFT}" x2="{:.1}" y1="{x_axis_y}" y2="{x_axis_y}"/><text class="axis-label" x="{:.1}" y="{:.1}" text-anchor="middle">{}</text></g>"#,
        LEFT + plot_w,
        LEFT + plot_w / 2.0,
        x_axis_y + 34.0,
        escape(&chart.x_label)
    );
    for (i, b) in bars.iter().enumerate() {
        bar(s, chart, f, LEFT + slot * (i as f64 + 0.5), bw, b);
    }
    if bars.iter().all(|b| b.segments.iter().all(|x| x.1 <= 0.0)) {
        empty(s, chart, plot_w);
    }
}

/// One bar centred on `cx`, `bw` wide: its positive segments stacked from 0, each with a
/// tooltip naming its legend entry.
fn bar(s: &mut String, chart: &Chart, f: &Frame, cx: f64, bw: f64, b: &Bar) {
    let mut acc = 0.0;
    s.push_str(r#"<g class="bar">"#);
    for (c, v) in &b.segments {
        if *v <= 0.0 {
            continue;
        }
        let (y0, y1) = (f.py(acc), f.py(acc + v));
        let label = match &chart.body {
            Body::Stacked { legend, .. } => legend
                .iter()
                .find(|l| l.0 == *c)
                .map(|l| l.1.clone())
                .unwrap_or_default(),
            Body::Lines { .. } => String::new(),
        };
        let _ = write!(
            s,
            r#"<rect class="segment c{}" x="{:.1}" y="{y1:.1}" width="{bw:.1}" height="{:.1}"><title>{} at {}: {}</title></rect>"#,
            c % 8,
            cx - bw / 2.0,
            (y0 - y1).max(0.5),
            escape(&label),
            escape(&b.label),
            fmt_num(*v)
        );
        acc += v;
    }
    s.push_str("</g>");
}
