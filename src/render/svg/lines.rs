//! The body of a line chart: the x scale (steps, linear or logarithmic, or categories), the
//! knee bands, the x axis, SLO lines, vertical markers, the series with their markers and the
//! ringed regressions. Split from `svg` so that each mark is drawn by a function of its own.

use std::fmt::Write;

use super::{
    empty, escape, fmt_num, log_ticks, marker, nice_ticks, series_class, Band, Body, Chart, Frame,
    HLine, Ring, Series, VLine, XAxis, LEFT, MARK_LABEL_Y, PLOT_H, TOP,
};

/// The x scale of a line chart: value range, linear or logarithmic, plot width in pixels.
struct XScale {
    lo: f64,
    hi: f64,
    log: bool,
    width: f64,
}

impl XScale {
    fn px(&self, x: f64) -> f64 {
        let (lo, hi, x) = if self.log {
            (self.lo.ln(), self.hi.ln(), x.max(self.lo).ln())
        } else {
            (self.lo, self.hi, x)
        };
        let span = if hi > lo { hi - lo } else { 1.0 };
        LEFT + (x - lo) / span * self.width
    }
}

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
    let sx = x_scale(chart, &xs, f.plot_w);
    knee_bands(s, &sx, bands);
    x_axis(s, chart, f, &sx, &xs);
    slo_lines(s, f, hlines);
    markers(s, f, &sx, vlines);
    for ser in series {
        one_series(s, f, &sx, ser);
    }
    regression_rings(s, f, &sx, rings);
    if series.iter().all(|x| x.points.is_empty()) {
        empty(s, chart, f.plot_w);
    }
}

/// The x range (categories, the shared range, or the data's) and whether it is logarithmic:
/// always for `XAxis::Log`, for steps spanning 16× or more; linear axes are padded so the
/// first and last points are not on the frame.
fn x_scale(chart: &Chart, xs: &[f64], plot_w: f64) -> XScale {
    let categories = chart.x_categories.as_ref();
    let (lo, hi) = match (chart.x_range, categories) {
        (_, Some(c)) => (-0.5, c.len().max(1) as f64 - 0.5),
        (Some(r), None) => r,
        (None, None) => (
            xs.iter().copied().fold(f64::INFINITY, f64::min),
            xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        ),
    };
    let (lo, hi) = if lo.is_finite() && hi.is_finite() {
        (lo, hi)
    } else {
        (0.0, 1.0)
    };
    let log = categories.is_none()
        && lo > 0.0
        && match chart.x_axis {
            XAxis::Steps => hi / lo >= 16.0,
            XAxis::Linear => false,
            XAxis::Log => true,
        };
    // Pad linear axes so the first and last points are not on the frame.
    let pad = if log || categories.is_some() {
        0.0
    } else {
        ((hi - lo) * 0.04).max(0.5)
    };
    let (lo, hi) = if log {
        (lo / 1.15, hi * 1.15)
    } else {
        (
            (lo - pad).max(if lo >= 0.0 { 0.0 } else { lo - pad }),
            hi + pad,
        )
    };
    XScale {
        lo,
        hi,
        log,
        width: plot_w,
    }
}

fn knee_bands(s: &mut String, sx: &XScale, bands: &[Band]) {
    for b in bands {
        let (x0, x1) = (sx.px(b.x0), sx.px(b.x1));
        let _ = write!(
            s,
            r#"<g class="knee"><rect class="knee-band" x="{x0:.1}" y="{TOP}" width="{:.1}" height="{PLOT_H}"/><text class="band-label" x="{:.1}" y="{:.1}">{}</text></g>"#,
            (x1 - x0).max(2.0),
            x0,
            MARK_LABEL_Y,
            escape(&b.label)
        );
    }
}

/// The x axis: a tick at every distinct x (ladder steps, categories) or at round values, labels
/// that would collide skipped, and the axis label ("(log scale)" when it is).
fn x_axis(s: &mut String, chart: &Chart, f: &Frame, sx: &XScale, xs: &[f64]) {
    let (x_axis_y, plot_w) = (f.x_axis_y, f.plot_w);
    let categories = chart.x_categories.as_ref();
    s.push_str(r#"<g class="axis x-axis">"#);
    let mut tick_xs: Vec<f64> = match (categories, chart.x_axis) {
        (Some(c), _) => (0..c.len()).map(|i| i as f64).collect(),
        (None, XAxis::Steps) => xs.iter().chain(&chart.x_ticks).copied().collect(),
        (None, XAxis::Linear) => nice_ticks(sx.hi, 6)
            .into_iter()
            .filter(|t| *t >= sx.lo && *t <= sx.hi)
            .collect(),
        (None, XAxis::Log) => log_ticks(sx.lo, sx.hi),
    };
    tick_xs.sort_by(f64::total_cmp);
    tick_xs.dedup();
    let mut last_label_end = f64::NEG_INFINITY;
    for t in &tick_xs {
        let x = sx.px(*t);
        let label = match categories {
            Some(c) => c.get(*t as usize).cloned().unwrap_or_default(),
            None => fmt_num(*t),
        };
        let half = 3.2 * label.chars().count() as f64;
        let _ = write!(
            s,
            r#"<line class="tick-mark" x1="{x:.1}" x2="{x:.1}" y1="{x_axis_y}" y2="{:.1}"/>"#,
            x_axis_y + 4.0
        );
        if x - half > last_label_end + 4.0 {
            let _ = write!(
                s,
                r#"<text class="tick" x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                x_axis_y + 16.0,
                escape(&label)
            );
            last_label_end = x + half;
        }
    }
    let _ = write!(
        s,
        r#"<line class="axis-line" x1="{LEFT}" x2="{:.1}" y1="{x_axis_y}" y2="{x_axis_y}"/><text class="axis-label" x="{:.1}" y="{:.1}" text-anchor="middle">{}</text></g>"#,
        LEFT + plot_w,
        LEFT + plot_w / 2.0,
        x_axis_y + 34.0,
        escape(&if sx.log {
            format!("{} (log scale)", chart.x_label)
        } else {
            chart.x_label.clone()
        })
    );
}

/// Horizontal SLO bounds, labelled at the right end.
fn slo_lines(s: &mut String, f: &Frame, hlines: &[HLine]) {
    let plot_w = f.plot_w;
    for h in hlines {
        let y = f.py(h.y);
        let _ = write!(
            s,
            r#"<g class="slo"><line class="slo-line" x1="{LEFT}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}"/><text class="slo-label" x="{:.1}" y="{:.1}" text-anchor="end">{}</text></g>"#,
            LEFT + plot_w,
            LEFT + plot_w - 2.0,
            y - 3.0,
            escape(&h.label)
        );
    }
}

/// Vertical markers (the wall, step boundaries), labelled above the plot.
fn markers(s: &mut String, f: &Frame, sx: &XScale, vlines: &[VLine]) {
    let (x_axis_y, plot_w) = (f.x_axis_y, f.plot_w);
    for v in vlines {
        let x = sx.px(v.x);
        // The label goes on the side with room: left of the line in the right half.
        let (lx, anchor) = if x > LEFT + plot_w / 2.0 {
            (x - 3.0, "end")
        } else {
            (x + 3.0, "start")
        };
        let c = v.class;
        let _ = write!(
            s,
            r#"<g class="{c}"><line class="{c}-line" x1="{x:.1}" x2="{x:.1}" y1="{TOP}" y2="{x_axis_y}"/>"#
        );
        if !v.label.is_empty() {
            let _ = write!(
                s,
                r#"<text class="{c}-label" x="{lx:.1}" y="{:.1}" text-anchor="{anchor}">{}</text>"#,
                MARK_LABEL_Y,
                escape(&v.label)
            );
        }
        s.push_str("</g>");
    }
}

/// One series: its line through the finite points and a marker with a tooltip at each.
fn one_series(s: &mut String, f: &Frame, sx: &XScale, ser: &Series) {
    let pts: Vec<(f64, f64)> = ser
        .points
        .iter()
        .filter(|p| p.0.is_finite() && p.1.is_finite())
        .map(|p| (sx.px(p.0), f.py(p.1)))
        .collect();
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
    for (i, (x, y)) in pts.iter().enumerate() {
        let tip = ser.points.get(i).map_or(String::new(), |p| {
            format!("{}: {} at {}", ser.name, fmt_num(p.1), fmt_num(p.0))
        });
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
