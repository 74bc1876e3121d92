//! Unit tests of the chart primitives: ticks, number labels, marks present, text escaped.
use super::*;

fn line_chart() -> Chart {
    Chart {
        id: "t".into(),
        title: "TTFT <p90> & co".into(),
        x_label: "concurrent streams".into(),
        y_label: "TTFT (ms)".into(),
        y_max: None,
        y_cap: None,
        x_ticks: vec![],
        x_range: None,
        x_categories: None,
        x_axis: Default::default(),
        body: Body::Lines {
            series: vec![Series {
                name: "P90".into(),
                colour: Some(1),
                points: vec![(5.0, 150.0), (10.0, 151.0), (20.0, 400.0), (50.0, f64::NAN)],
                marker: Marker::Square,
                dashed: false,
                kind: "",
            }],
            bands: vec![Band {
                x0: 10.0,
                x1: 20.0,
                label: "knee".into(),
            }],
            vlines: vec![VLine {
                class: "wall",
                x: 20.0,
                label: "wall".into(),
            }],
            hlines: vec![HLine {
                y: 1000.0,
                label: "SLO 1 s".into(),
            }],
            rings: vec![Ring {
                x: 20.0,
                y: 400.0,
                label: "regressed".into(),
            }],
        },
        empty_note: None,
    }
}

#[test]
fn nice_ticks_cover_the_maximum_with_round_steps() {
    assert_eq!(
        nice_ticks(95.0, 5),
        vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]
    );
    assert_eq!(
        nice_ticks(0.0, 5),
        vec![0.0, 0.2, 0.4, 0.6000000000000001, 0.8, 1.0]
    );
    let t = nice_ticks(123_456.0, 5);
    assert!(*t.last().unwrap() >= 123_456.0 && t.len() <= 7, "{t:?}");
}

#[test]
fn numbers_are_compact() {
    assert_eq!(fmt_num(150.0), "150");
    assert_eq!(fmt_num(15.04), "15");
    assert_eq!(fmt_num(2.5), "2.5");
    assert_eq!(fmt_num(32_540.0), "32.5k");
    assert_eq!(fmt_num(2_000_000.0), "2M");
    assert_eq!(fmt_num(0.25), "0.25");
}

#[test]
fn line_chart_has_labelled_axes_series_band_wall_and_escapes_text() {
    let svg = render(&line_chart());
    for needle in [
        r#"class="axis x-axis""#,
        r#"class="axis y-axis""#,
        ">concurrent streams</text>",
        ">TTFT (ms)</text>",
        r#"class="knee-band""#,
        r#"class="wall-line""#,
        r#"class="slo-line""#,
        r#"class="regressed""#,
        r#"data-series="P90""#,
        "TTFT &lt;p90&gt; &amp; co",
    ] {
        assert!(svg.contains(needle), "{needle} missing in {svg}");
    }
    assert!(!svg.contains("NaN"), "{svg}");
    // Three finite points: a polyline and three markers.
    assert_eq!(svg.matches(r#"<rect class="point""#).count(), 3);
}

#[test]
fn wide_ladders_use_a_log_axis_and_say_so() {
    let mut c = line_chart();
    if let Body::Lines { series, .. } = &mut c.body {
        series[0].points = vec![(1.0, 1.0), (256.0, 2.0)];
    }
    assert!(render(&c).contains("concurrent streams (log scale)"));
}

#[test]
fn empty_charts_say_so() {
    let c = Chart {
        body: Body::Stacked {
            bars: vec![Bar {
                x: 5.0,
                label: "5".into(),
                segments: vec![(0, 0.0)],
            }],
            legend: vec![(0, "http_429".into())],
            bands: vec![],
            vlines: vec![],
        },
        empty_note: Some("no failed requests".into()),
        ..line_chart()
    };
    let svg = render(&c);
    assert!(svg.contains("no failed requests"), "{svg}");
    assert!(svg.contains(">5</text>"), "{svg}");
}

#[test]
fn percentages_stop_at_100_and_wall_labels_stay_inside_the_plot() {
    let mut c = line_chart();
    c.y_cap = Some(100.0);
    c.x_ticks = vec![5.0, 10.0, 20.0, 50.0, 100.0];
    if let Body::Lines {
        series,
        hlines,
        vlines,
        ..
    } = &mut c.body
    {
        series[0].points = vec![(5.0, 100.0), (10.0, 40.0)];
        hlines.clear();
        vlines[0].x = 5.0;
    }
    let svg = render(&c);
    assert!(
        svg.contains(">100</text>") && !svg.contains(">120</text>"),
        "{svg}"
    );
    // A wall near the left edge is labelled to its right.
    assert!(svg.contains(r#"text-anchor="start">wall</text>"#), "{svg}");
    // Steps without a value still get a tick.
    assert!(svg.contains(">50</text>"), "{svg}");
}

/// The `x` attribute of the first `<text>` whose content is `label` inside the part of `svg`
/// starting at `from`.
fn text_x(svg: &str, from: &str, label: &str) -> f64 {
    let svg = &svg[svg
        .find(from)
        .unwrap_or_else(|| panic!("no {from} in {svg}"))..];
    let at = svg
        .find(&format!(">{label}</text>"))
        .unwrap_or_else(|| panic!("no text {label} in {svg}"));
    let tag = &svg[svg[..at].rfind("<text").unwrap()..at];
    attr(tag, "x")
}

fn attr(tag: &str, name: &str) -> f64 {
    let v = &tag[tag.find(&format!(" {name}=\"")).unwrap() + name.len() + 3..];
    v[..v.find('"').unwrap()].parse().unwrap()
}

fn stacked(bars: &[f64], vlines: Vec<VLine>) -> Chart {
    Chart {
        body: Body::Stacked {
            bars: bars
                .iter()
                .map(|x| Bar {
                    x: *x,
                    label: fmt_num(*x),
                    segments: vec![(0, 10.0)],
                })
                .collect(),
            legend: vec![(0, "429 rate limit".into())],
            bands: vec![Band {
                x0: 1.0,
                x1: 16.0,
                label: "knee (1, 16]: rate-limited".into(),
            }],
            vlines,
        },
        x_range: Some((1.0, 256.0)),
        x_ticks: vec![1.0, 16.0, 256.0],
        ..line_chart()
    }
}

/// Stacked bars stand on the same x axis as the line charts: a bar at each step's value, the
/// ladder's ticks at the same places, logarithmic over a wide ladder.
#[test]
fn stacked_bars_share_the_line_charts_x_axis() {
    let svg = render(&stacked(&[1.0, 16.0, 256.0], vec![]));
    assert!(svg.contains("concurrent streams (log scale)"), "{svg}");
    let mut lines = line_chart();
    lines.x_range = Some((1.0, 256.0));
    lines.x_ticks = vec![1.0, 16.0, 256.0];
    if let Body::Lines { series, .. } = &mut lines.body {
        series[0].points = vec![(1.0, 1.0), (16.0, 2.0), (256.0, 3.0)];
    }
    let line_svg = render(&lines);
    let axis = "<g class=\"axis x-axis\">";
    for label in ["1", "16", "256"] {
        assert_eq!(
            text_x(&svg, axis, label),
            text_x(&line_svg, axis, label),
            "tick {label}"
        );
    }
    // Each bar is centred on its step's tick (log axis: 16 is half way between 1 and 256).
    let centres: Vec<f64> = svg
        .match_indices("<g class=\"bar\"><rect class=\"segment c0\"")
        .map(|(i, _)| {
            let i = i + "<g class=\"bar\">".len();
            let tag = &svg[i..i + svg[i..].find('>').unwrap()];
            attr(tag, "x") + attr(tag, "width") / 2.0
        })
        .collect();
    assert_eq!(centres.len(), 3, "{svg}");
    for (centre, label) in centres.iter().zip(["1", "16", "256"]) {
        let t = text_x(&svg, axis, label);
        assert!(
            (centre - t).abs() < 0.2,
            "bar {label} at {centre}, its tick at {t}"
        );
    }
    // The bars keep clear of each other.
    let width = attr(&svg[svg.find("class=\"segment c0\"").unwrap()..], "width");
    assert!(width <= centres[1] - centres[0], "{width} {centres:?}");
}

/// The failed-requests chart marks the 429 wall and the knee as the line charts do, the wall
/// behind the bars, its label and the knee's side by side above the plot.
#[test]
fn stacked_bars_mark_the_wall_and_the_knee_with_labels_that_do_not_collide() {
    let wall = VLine {
        x: 16.0,
        label: "429 wall (request limit)".into(),
        class: "wall",
    };
    let svg = render(&stacked(&[1.0, 16.0, 256.0], vec![wall]));
    for needle in [
        r#"class="knee-band""#,
        r#"class="wall-line""#,
        ">knee (1, 16]: rate-limited</text>",
        ">429 wall (request limit)</text>",
    ] {
        assert!(svg.contains(needle), "{needle} missing in {svg}");
    }
    assert!(
        svg.find("wall-line").unwrap() < svg.find("<g class=\"bar\">").unwrap(),
        "the wall is drawn behind the bars"
    );
    let marks = "<g class=\"mark-labels\">";
    let knee = text_x(&svg, marks, "knee (1, 16]: rate-limited");
    let wall = text_x(&svg, marks, "429 wall (request limit)");
    let knee_end = knee + marks::text_width("knee (1, 16]: rate-limited");
    assert!(
        knee_end < wall,
        "knee label {knee}..{knee_end}, wall at {wall}"
    );
    assert!(wall + marks::text_width("429 wall (request limit)") <= W - RIGHT);
}

/// An SLO label goes where it covers no data: not at the right end above the line when a
/// series runs there, nor over a wall at the right edge.
#[test]
fn slo_labels_keep_off_the_data_and_the_wall() {
    let mut c = line_chart();
    if let Body::Lines {
        series,
        vlines,
        bands,
        rings,
        ..
    } = &mut c.body
    {
        // A series a hair above the SLO line at the right, the wall at the last step.
        series[0].points = vec![(5.0, 150.0), (20.0, 150.0), (30.0, 1040.0), (50.0, 1040.0)];
        vlines[0].x = 50.0;
        bands.clear();
        rings.clear();
    }
    let svg = render(&c);
    let slo = &svg[svg.find("class=\"slo-label\"").unwrap()..];
    let x = attr(slo, "x");
    assert!(
        slo.starts_with(r#"class="slo-label" x=""#)
            && slo.contains(r#"text-anchor="start">SLO 1 s<"#),
        "labelled at the left end, where the plot is free: {slo:.200}"
    );
    assert!(x < LEFT + 10.0, "{x}");
}

/// A step's label stands to the right of its dashed line (the step runs from there), even in
/// the right half of the plot.
#[test]
fn step_labels_stand_right_of_their_line() {
    let mut c = line_chart();
    c.x_axis = XAxis::Linear;
    if let Body::Lines { vlines, bands, .. } = &mut c.body {
        *vlines = [5.0, 20.0, 40.0]
            .iter()
            .map(|x| VLine {
                x: *x,
                label: fmt_num(*x),
                class: "step",
            })
            .collect();
        bands.clear();
    }
    let svg = render(&c);
    for label in ["5", "20", "40"] {
        let line = svg
            .match_indices("class=\"step-line\"")
            .map(|(i, _)| attr(&svg[i..], "x1"))
            .find(|x| {
                let t = text_x(&svg, "<g class=\"mark-labels\">", label);
                t > *x && t - x < 6.0
            });
        assert!(
            line.is_some(),
            "label {label} not just right of a step line: {svg}"
        );
    }
}
