//! A chart's x axis, shared by line charts and stacked bars so that every chart of the ladder has
//! the same kind of x axis: the scale (the ladder's steps, linear, logarithmic, or a trend's
//! categories) and its drawing (ticks, labels that would collide skipped, the axis label).

use std::fmt::Write;

use super::{escape, fmt_num, log_ticks, nice_ticks, Chart, Frame, XAxis, LEFT};

/// The x scale of a chart: value range, linear or logarithmic, plot width in pixels.
pub(super) struct XScale {
    pub lo: f64,
    pub hi: f64,
    pub log: bool,
    pub width: f64,
}

impl XScale {
    pub fn px(&self, x: f64) -> f64 {
        let (lo, hi, x) = if self.log {
            (self.lo.ln(), self.hi.ln(), x.max(self.lo).ln())
        } else {
            (self.lo, self.hi, x)
        };
        let span = if hi > lo { hi - lo } else { 1.0 };
        LEFT + (x - lo) / span * self.width
    }
}

/// The x range (categories, the shared range, or the data's) and whether it is logarithmic:
/// always for `XAxis::Log`, for steps spanning 16× or more; linear axes are padded so the
/// first and last points are not on the frame.
pub(super) fn scale(chart: &Chart, xs: &[f64], plot_w: f64) -> XScale {
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

/// The x axis: a tick at every distinct x (ladder steps, categories) or at round values, labels
/// that would collide skipped, and the axis label ("(log scale)" when it is).
pub(super) fn draw(s: &mut String, chart: &Chart, f: &Frame, sx: &XScale, xs: &[f64]) {
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
