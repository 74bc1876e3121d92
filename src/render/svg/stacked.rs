//! The body of a stacked bar chart: one bar of coloured segments per step, standing at the
//! step's value on the same x axis as the line charts (`xaxis`: the ladder's ticks, logarithmic
//! over 16× or more), with the knee band and the wall marked as they are there (`marks`).
//! Split from `svg` beside the line charts' body (`lines`).

use std::fmt::Write;

use super::xaxis::{self, XScale};
use super::{empty, escape, fmt_num, marks, Bar, Body, Chart, Frame, LEFT};

/// Draws a `Body::Stacked` chart's marks and bars (the y axis is drawn already), back to front.
pub(super) fn draw(s: &mut String, chart: &Chart, f: &Frame) {
    let Body::Stacked {
        bars,
        bands,
        vlines,
        ..
    } = &chart.body
    else {
        return;
    };
    let xs: Vec<f64> = bars.iter().map(|b| b.x).filter(|v| v.is_finite()).collect();
    let sx = xaxis::scale(chart, &xs, f.plot_w);
    marks::bands(s, &sx, bands);
    xaxis::draw(s, chart, f, &sx, &xs);
    // The wall behind the bars, so that it does not cut the bar at its step in two.
    marks::vlines(s, f, &sx, vlines);
    let bw = bar_width(&sx, &xs);
    for b in bars.iter().filter(|b| b.x.is_finite()) {
        bar(s, chart, f, sx.px(b.x), bw, b);
    }
    marks::labels(s, f, &sx, bands, vlines);
    if bars.iter().all(|b| b.segments.iter().all(|x| x.1 <= 0.0)) {
        empty(s, chart, f.plot_w);
    }
}

/// Bars as wide as their closest neighbours allow (at most 48 px, 60% of the gap), never
/// reaching past the frame, and at least 3 px.
fn bar_width(sx: &XScale, xs: &[f64]) -> f64 {
    let mut px: Vec<f64> = xs.iter().map(|x| sx.px(*x)).collect();
    px.sort_by(f64::total_cmp);
    px.dedup();
    let mut room = 48.0f64;
    for w in px.windows(2) {
        room = room.min((w[1] - w[0]) * 0.6);
    }
    if let (Some(first), Some(last)) = (px.first(), px.last()) {
        room = room
            .min((first - LEFT) * 2.0)
            .min((LEFT + sx.width - last) * 2.0);
    }
    room.max(3.0)
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
