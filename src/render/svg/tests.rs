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
                label: "5".into(),
                segments: vec![(0, 0.0)],
            }],
            legend: vec![(0, "http_429".into())],
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
