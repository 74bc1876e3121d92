//! The body of a line chart: the knee bands, the x axis (`xaxis`), SLO lines with labels placed
//! off the data, vertical markers (`marks`), the series with their markers and the ringed
//! regressions. Split from `svg` so that each mark is drawn by a function of its own.

use std::fmt::Write;

use super::xaxis::{self, XScale};
use super::{
    empty, escape, fmt_num, marker, marks, series_class, Body, Chart, Frame, HLine, Ring, Series,
    VLine, LEFT, PLOT_H, TOP,
};

/// Draws a `Body::Lines` chart's marks (the y axis is drawn already), back to front.
pub(super) fn draw(s: &mut String, chart: &Chart, f: &Frame) {
    let Body::Lines {
        series,
        bands,
        vlines,
        hlines,
        rings,
    } = &chart.body
    else {
        return;
    };
    let xs: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .filter(|v| v.is_finite())
        .collect();
    let sx = xaxis::scale(chart, &xs, f.plot_w);
    marks::bands(s, &sx, bands);
    xaxis::draw(s, chart, f, &sx, &xs);
    slo_lines(s, f, hlines, &Ink::of(f, &sx, series, vlines));
    marks::vlines(s, f, &sx, vlines);
    marks::labels(s, f, &sx, bands, vlines);
    for ser in series {
        one_series(s, f, &sx, ser);
    }
    regression_rings(s, f, &sx, rings);
    if series.iter().all(|x| x.points.is_empty()) {
        empty(s, chart, f.plot_w);
    }
}

/// Horizontal SLO bounds, each labelled just above or below its line at the right or the left
/// end, wherever the label covers no series, no marker line and no other SLO label (the right
/// end above the line when it is free; the least covered place when none is).
fn slo_lines(s: &mut String, f: &Frame, hlines: &[HLine], ink: &Ink) {
    let mut taken: Vec<Rect> = Vec::new();
    for h in hlines {
        let y = f.py(h.y);
        let w = marks::text_width(&h.label);
        let (l, r) = (LEFT + 4.0, LEFT + f.plot_w - 2.0);
        // (text x, anchor, box): above the line the baseline is 3 px over it, below 11 px under.
        let candidates = [
            (r, "end", r - w, y - 13.0),
            (r, "end", r - w, y + 1.0),
            (l, "start", l, y - 13.0),
            (l, "start", l, y + 1.0),
        ];
        let inside = |b: &Rect| b.y0 >= TOP && b.y1 <= f.x_axis_y;
        let best = candidates
            .iter()
            .map(|&(tx, anchor, x0, y0)| {
                let b = Rect {
                    x0,
                    x1: x0 + w,
                    y0,
                    y1: y0 + 12.0,
                };
                let cost = ink.hits(&b) + taken.iter().filter(|t| t.meets(&b)).count() * 100;
                let cost = if inside(&b) { cost } else { cost + 1000 };
                (cost, tx, anchor, b)
            })
            .min_by_key(|c| c.0)
            .expect("four candidates");
        let (_, tx, anchor, b) = best;
        let ty = b.y1 - 3.0;
        taken.push(b);
        let _ = write!(
            s,
            r#"<g class="slo"><line class="slo-line" x1="{LEFT}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}"/><text class="slo-label" x="{tx:.1}" y="{ty:.1}" text-anchor="{anchor}">{}</text></g>"#,
            LEFT + f.plot_w,
            escape(&h.label)
        );
    }
}

/// A box in px.
#[derive(Debug, Clone, Copy)]
struct Rect {
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
}

impl Rect {
    fn meets(&self, o: &Rect) -> bool {
        self.x0 < o.x1 && o.x0 < self.x1 && self.y0 < o.y1 && o.y0 < self.y1
    }

    fn holds(&self, (x, y): (f64, f64), margin: f64) -> bool {
        x >= self.x0 - margin
            && x <= self.x1 + margin
            && y >= self.y0 - margin
            && y <= self.y1 + margin
    }
}

/// Where the series and the vertical markers put ink, in px: the series' markers and, every
/// 2 px, their lines and the markers' lines.
struct Ink {
    points: Vec<(f64, f64)>,
}

impl Ink {
    fn of(f: &Frame, sx: &XScale, series: &[Series], vlines: &[VLine]) -> Ink {
        let mut points = Vec::new();
        for v in vlines {
            let x = sx.px(v.x);
            let n = (PLOT_H / 2.0) as usize;
            points.extend((0..=n).map(|i| (x, TOP + i as f64 * 2.0)));
        }
        for ser in series {
            let px: Vec<(f64, f64)> = ser
                .points
                .iter()
                .filter(|p| p.0.is_finite() && p.1.is_finite())
                .map(|p| (sx.px(p.0), f.py(p.1)))
                .collect();
            points.extend(&px);
            // A scatter draws no line between its points.
            if ser.kind.contains("scatter") {
                continue;
            }
            for w in px.windows(2) {
                let (a, b) = (w[0], w[1]);
                let n = ((b.0 - a.0).hypot(b.1 - a.1) / 2.0).ceil().max(1.0) as usize;
                points.extend((1..n).map(|i| {
                    let t = i as f64 / n as f64;
                    (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t)
                }));
            }
        }
        Ink { points }
    }

    /// How many inked places the box covers (a line's width and a marker's size around each).
    fn hits(&self, b: &Rect) -> usize {
        self.points.iter().filter(|p| b.holds(**p, 3.0)).count()
    }
}

/// One series: its line through the finite points and a marker with a tooltip at each.
fn one_series(s: &mut String, f: &Frame, sx: &XScale, ser: &Series) {
    let finite: Vec<&(f64, f64)> = ser
        .points
        .iter()
        .filter(|p| p.0.is_finite() && p.1.is_finite())
        .collect();
    let pts: Vec<(f64, f64)> = finite.iter().map(|p| (sx.px(p.0), f.py(p.1))).collect();
    let _ = write!(
        s,
        r#"<g class="{}" data-series="{}">"#,
        series_class(ser),
        escape(&ser.name)
    );
    if pts.len() > 1 {
        let d: Vec<String> = pts.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
        let _ = write!(s, r#"<polyline points="{}"/>"#, d.join(" "));
    }
    for ((x, y), p) in pts.iter().zip(&finite) {
        let tip = format!("{}: {} at {}", ser.name, fmt_num(p.1), fmt_num(p.0));
        marker(s, ser.marker, *x, *y, &tip);
    }
    s.push_str("</g>");
}

fn regression_rings(s: &mut String, f: &Frame, sx: &XScale, rings: &[Ring]) {
    for r in rings {
        let _ = write!(
            s,
            r#"<circle class="regressed" cx="{:.1}" cy="{:.1}" r="8"><title>{}</title></circle>"#,
            sx.px(r.x),
            f.py(r.y),
            escape(&r.label)
        );
    }
}
