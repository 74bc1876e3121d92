//! Marks drawn across the plot of every chart of the ladder, line or bar: the knee band and the
//! vertical markers (the rate-limit wall, each step's start), with their labels in one row above
//! the plot. The labels are laid out together so that they never cover each other or the data:
//! a band's label starts at the band, a wall's sits on the side with room, a step's to the right
//! of its line (the step runs from there); a crowded step label is left out rather than drawn
//! far from its line.

use std::fmt::Write;

use super::xaxis::XScale;
use super::{escape, Band, Frame, VLine, LEFT, MARK_LABEL_Y, PLOT_H, TOP};

/// Estimated width of a label in px (11 px text, bold for the knee and the wall).
pub(super) fn text_width(text: &str) -> f64 {
    6.3 * text.chars().count() as f64
}

/// Least room between two labels of the row.
const GAP: f64 = 8.0;
/// A step label pushed further than this from its line is left out.
const MAX_DRIFT: f64 = 24.0;

/// Draws the bands, behind everything else of the plot (their labels: `labels`).
pub(super) fn bands(s: &mut String, sx: &XScale, bands: &[Band]) {
    for b in bands {
        let (x0, x1) = (sx.px(b.x0), sx.px(b.x1));
        let _ = write!(
            s,
            r#"<g class="knee"><rect class="knee-band" x="{x0:.1}" y="{TOP}" width="{:.1}" height="{PLOT_H}"/></g>"#,
            (x1 - x0).max(2.0)
        );
    }
}

/// Draws the vertical markers' lines, each naming itself in a tooltip (their labels: `labels`).
pub(super) fn vlines(s: &mut String, f: &Frame, sx: &XScale, vlines: &[VLine]) {
    for v in vlines {
        let x = sx.px(v.x);
        let c = v.class;
        let _ = write!(
            s,
            r#"<g class="{c}"><line class="{c}-line" x1="{x:.1}" x2="{x:.1}" y1="{TOP}" y2="{}"><title>{}</title></line></g>"#,
            f.x_axis_y,
            escape(&v.label)
        );
    }
}

/// The labels of the bands and markers, in the row above the plot, none over another.
pub(super) fn labels(s: &mut String, f: &Frame, sx: &XScale, bands: &[Band], vlines: &[VLine]) {
    let (lo, hi) = (LEFT, LEFT + f.plot_w);
    let mut wants: Vec<Want> = Vec::new();
    for b in bands.iter().filter(|b| !b.label.is_empty()) {
        wants.push(Want {
            at: sx.px(b.x0),
            width: text_width(&b.label),
            class: "band-label",
            text: &b.label,
            may_drop: false,
        });
    }
    for v in vlines.iter().filter(|v| !v.label.is_empty()) {
        let x = sx.px(v.x);
        let width = text_width(&v.label);
        // A step runs to the right of its start; a wall's label goes where there is room.
        let at = if v.class != "step" && x > LEFT + f.plot_w / 2.0 {
            x - 3.0 - width
        } else {
            x + 3.0
        };
        wants.push(Want {
            at,
            width,
            class: v.class,
            text: &v.label,
            may_drop: v.class == "step",
        });
    }
    if wants.is_empty() {
        return;
    }
    s.push_str(r#"<g class="mark-labels">"#);
    for (w, x) in wants.iter().zip(lay_out(&wants, lo, hi)) {
        let Some(x) = x else { continue };
        let class = if w.class == "band-label" {
            "band-label".to_string()
        } else {
            format!("{}-label", w.class)
        };
        let _ = write!(
            s,
            r#"<text class="{class}" x="{x:.1}" y="{MARK_LABEL_Y}" text-anchor="start">{}</text>"#,
            escape(w.text)
        );
    }
    s.push_str("</g>");
}

/// A label that would like to start at `at`.
pub(super) struct Want<'a> {
    pub at: f64,
    pub width: f64,
    pub class: &'static str,
    pub text: &'a str,
    /// Left out (None) when it cannot stand near `at`.
    pub may_drop: bool,
}

/// Where each label starts, in one row from `lo` to `hi`: as near its wish as the labels before
/// it allow, then pulled back from the right edge; a droppable label that ended up far from its
/// wish is left out and gives its room back.
pub(super) fn lay_out(wants: &[Want], lo: f64, hi: f64) -> Vec<Option<f64>> {
    let mut order: Vec<usize> = (0..wants.len()).collect();
    order.sort_by(|a, b| wants[*a].at.total_cmp(&wants[*b].at));
    let mut kept: Vec<usize> = Vec::new();
    let mut x = vec![0.0; wants.len()];
    let mut end = f64::NEG_INFINITY;
    for i in order {
        let w = &wants[i];
        let start = w.at.max(end + GAP).max(lo).min(hi - w.width);
        if w.may_drop && (start - w.at).abs() > MAX_DRIFT {
            continue;
        }
        if w.may_drop && start < end + GAP {
            continue;
        }
        x[i] = start;
        end = start + w.width;
        kept.push(i);
    }
    // Pulled back from the right edge, the ones before make room in turn.
    let mut limit = hi;
    for &i in kept.iter().rev() {
        if x[i] + wants[i].width > limit {
            x[i] = (limit - wants[i].width).max(lo);
        }
        limit = x[i] - GAP;
    }
    let mut out = vec![None; wants.len()];
    for i in kept {
        out[i] = Some(x[i]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn want(at: f64, width: f64, may_drop: bool) -> Want<'static> {
        Want {
            at,
            width,
            class: "step",
            text: "",
            may_drop,
        }
    }

    fn overlaps(wants: &[Want], x: &[Option<f64>]) -> bool {
        let placed: Vec<(f64, f64)> = wants
            .iter()
            .zip(x)
            .filter_map(|(w, x)| x.map(|x| (x, x + w.width)))
            .collect();
        placed
            .iter()
            .enumerate()
            .any(|(i, a)| placed[i + 1..].iter().any(|b| a.0 < b.1 && b.0 < a.1))
    }

    #[test]
    fn a_knee_label_and_a_wall_label_at_the_same_place_both_show_side_by_side() {
        let wants = [want(200.0, 150.0, false), want(203.0, 140.0, false)];
        let x = lay_out(&wants, 64.0, 464.0);
        assert!(x.iter().all(Option::is_some), "{x:?}");
        assert!(!overlaps(&wants, &x), "{x:?}");
        // Both fit inside the row: the second pulled the first back from the right edge.
        assert!(x[1].unwrap() + 140.0 <= 464.0, "{x:?}");
    }

    #[test]
    fn crowded_step_labels_are_left_out_not_drawn_away_from_their_line() {
        let wants: Vec<Want> = (0..8)
            .map(|i| want(70.0 + i as f64 * 10.0, 20.0, true))
            .collect();
        let x = lay_out(&wants, 64.0, 464.0);
        assert!(!overlaps(&wants, &x), "{x:?}");
        for (w, x) in wants.iter().zip(&x) {
            if let Some(x) = x {
                assert!((x - w.at).abs() <= MAX_DRIFT, "{x} for {}", w.at);
            }
        }
        assert!(
            x[0].is_some() && x.iter().filter(|x| x.is_none()).count() >= 4,
            "{x:?}"
        );
    }
}
