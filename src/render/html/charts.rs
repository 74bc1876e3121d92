//! The report's charts for one run, built from summary rows, findings and the verdicts: per
//! model (TTFT and TPOT percentiles, TTFC when the model reasoned, TPM and RPS against the
//! ideal linear line, the error mix, goodput) and, with several models, one chart per metric
//! with every model on shared axes.
//! Values come straight from `summary.csv` rows; nothing is recomputed here.

use super::error_bars::error_bars;
use super::marks::{knee_band, wall_line};
use super::view::RunView;
use crate::compare::{Comparison, Metric, Percentile, Verdict};
use crate::findings::ModelFindings;
use crate::model::LadderUnit;
use crate::model::Slo;
use crate::render::svg::{Band, Body, Chart, HLine, Marker, Ring, Series, VLine};
use crate::stats::{models_of, Counted, Profile, StepSummary};
use crate::util::duration::ms_text as fmt_ms;

/// The x axis: what the ladder's values count.
pub fn x_label(unit: LadderUnit) -> String {
    match unit {
        LadderUnit::Streams => "concurrent streams".into(),
        LadderUnit::Agents => "concurrent agents".into(),
        LadderUnit::Rps => "offered requests/s".into(),
        LadderUnit::PromptTokens => "prompt tokens".into(),
        LadderUnit::Speed => "multiple of the trace's arrival rate".into(),
    }
}

/// One model's rows, ascending by step.
pub fn model_rows<'a>(rows: &'a [StepSummary], model: &str) -> Vec<&'a StepSummary> {
    let mut v: Vec<&StepSummary> = rows.iter().filter(|r| r.model == model).collect();
    v.sort_by_key(|r| r.step);
    v
}

/// `model`'s steps in the run and in the baseline (none without one), steps ascending.
fn both_sides<'a>(view: &'a RunView, model: &str) -> (Vec<&'a StepSummary>, Vec<&'a StepSummary>) {
    let base = view.baseline.as_ref();
    let base_rows = base.map(|b| model_rows(&b.summaries, model));
    (
        model_rows(&view.result.summaries, model),
        base_rows.unwrap_or_default(),
    )
}

pub fn models(rows: &[StepSummary]) -> Vec<String> {
    models_of(rows).into_iter().map(String::from).collect()
}

/// Shared axes: the x range and each metric's y maximum over every model and the baseline.
struct Axes {
    x: (f64, f64),
    /// Every concurrency of the ladder (both sides).
    ticks: Vec<f64>,
    unit: LadderUnit,
    ttft: f64,
    ttfc: f64,
    tpot: f64,
    tpm: f64,
    rps: f64,
}

fn axes(view: &RunView) -> Axes {
    let all = view
        .result
        .summaries
        .iter()
        .chain(view.baseline.iter().flat_map(|b| b.summaries.iter()));
    let mut a = Axes {
        x: (f64::INFINITY, f64::NEG_INFINITY),
        ticks: Vec::new(),
        unit: view
            .result
            .summaries
            .first()
            .map(|r| r.ladder_unit)
            .unwrap_or_default(),
        ttft: 0.0,
        ttfc: 0.0,
        tpot: 0.0,
        tpm: 0.0,
        rps: 0.0,
    };
    let m = |acc: &mut f64, v: Option<f64>| {
        if let Some(v) = v.filter(|v| v.is_finite()) {
            *acc = acc.max(v);
        }
    };
    for r in all {
        let c = f64::from(r.concurrency);
        a.x = (a.x.0.min(c), a.x.1.max(c));
        if !a.ticks.contains(&c) {
            a.ticks.push(c);
        }
        m(&mut a.ttft, r.ttft_p99_ms.or(r.ttft_p90_ms));
        m(&mut a.ttfc, r.ttfc_p99_ms.or(r.ttfc_p90_ms));
        m(&mut a.tpot, r.tpot_p90_ms);
        m(&mut a.tpm, Some(Profile::of_step(r).tpm(r)));
        m(&mut a.rps, Some(r.throughput(false)));
    }
    // The ideal line may reach above the measured points.
    for model in models(&view.result.summaries) {
        let rows = model_rows(&view.result.summaries, &model);
        if let (Some(first), Some(last)) = (rows.first(), rows.last()) {
            let k = f64::from(last.concurrency) / f64::from(first.concurrency.max(1));
            a.tpm = a.tpm.max(Profile::of_step(first).tpm(first) * k);
            a.rps = a.rps.max(first.throughput(false) * k);
        }
    }
    a
}

fn series(name: &str, colour: usize, marker: Marker, points: Vec<(f64, f64)>) -> Series {
    Series {
        name: name.to_string(),
        colour: Some(colour),
        points,
        marker,
        dashed: false,
        kind: "",
    }
}

fn points(rows: &[&StepSummary], f: impl Fn(&StepSummary) -> Option<f64>) -> Vec<(f64, f64)> {
    rows.iter()
        .filter_map(|r| f(r).map(|v| (f64::from(r.concurrency), v)))
        .collect()
}

fn baseline_series(s: Series) -> Series {
    Series {
        name: format!("baseline {}", s.name),
        dashed: true,
        kind: "baseline",
        ..s
    }
}

/// Regressed checks of `model` × `metric` (× percentile), ringed at the new value.
fn rings(view: &RunView, model: &str, metric: Metric, pct: &[Percentile]) -> Vec<Ring> {
    let Some(c) = &view.comparison else {
        return Vec::new();
    };
    regressed(c, model, metric, pct)
}

fn regressed(c: &Comparison, model: &str, metric: Metric, pct: &[Percentile]) -> Vec<Ring> {
    c.checks
        .iter()
        .filter(|k| k.model == model && k.metric == metric && k.verdict == Verdict::Regressed)
        .filter(|k| k.percentile.map_or(true, |p| pct.contains(&p)))
        .filter_map(|k| {
            Some(Ring {
                x: f64::from(k.concurrency?),
                y: k.new?,
                label: format!("regressed: {} · {}", k.title(), k.detail),
            })
        })
        .collect()
}

fn slo_line(bound: Option<f64>, what: &str) -> Vec<HLine> {
    bound
        .map(|b| HLine {
            y: b,
            label: format!("SLO {what} ≤ {}", fmt_ms(b)),
        })
        .into_iter()
        .collect()
}

fn chart(id: String, title: String, y_label: &str, y_max: f64, ax: &Axes, body: Body) -> Chart {
    let (x, ticks) = (ax.x, &ax.ticks);
    Chart {
        id,
        title,
        x_label: x_label(ax.unit),
        y_label: y_label.to_string(),
        y_max: Some(y_max),
        // Shares (failed %, goodput %) stop at 100%.
        y_cap: y_label.contains('%').then_some(100.0),
        x_ticks: ticks.to_vec(),
        x_range: Some(x),
        x_categories: None,
        x_axis: Default::default(),
        body,
        empty_note: None,
    }
}

/// A chart drawn against the ladder on the page's shared x axis (range, every step's tick, the
/// unit), its y axis from its data: for charts built outside this file (`evidence`).
pub fn on_ladder(view: &RunView, id: String, title: String, y_label: &str, body: Body) -> Chart {
    chart(id, title, y_label, 0.0, &axes(view), body)
}

fn lines(
    series: Vec<Series>,
    bands: Vec<Band>,
    vlines: Vec<VLine>,
    hlines: Vec<HLine>,
    rings: Vec<Ring>,
) -> Body {
    Body::Lines {
        series,
        bands,
        vlines,
        hlines,
        rings,
    }
}

/// The six charts of one model: TTFT, TPOT, TPM, RPS, error mix, goodput; and after TTFT, when
/// the model reasoned on either side, TTFC and the reasoning share.
pub fn model_charts(view: &RunView, f: &ModelFindings, prefix: &str) -> Vec<Chart> {
    let mut charts = ladder_charts(view, f, prefix);
    let reasoning = reasoning_charts(view, f, prefix);
    charts.splice(1..1, reasoning);
    charts
}

/// A model that reasoned (on either side): the answer's wait (TTFC), drawn like TTFT (its
/// percentiles, the baseline's dashed, the knee and the wall, the SLO's TTFC bound, regressed
/// TTFC checks ringed), and the reasoning share of its output tokens when the server counted
/// them. None when no step reasoned.
fn reasoning_charts(view: &RunView, f: &ModelFindings, prefix: &str) -> Vec<Chart> {
    let model = f.model.as_str();
    let (rows, base_rows) = both_sides(view, model);
    if !rows.iter().chain(&base_rows).any(|r| r.any_reasoning()) {
        return Vec::new();
    }
    let ax = axes(view);
    let both = |make: fn(&[&StepSummary]) -> Vec<Series>| {
        let mut v = make(&rows);
        v.extend(make(&base_rows).into_iter().map(baseline_series));
        v.retain(|s| !s.points.is_empty());
        v
    };
    let all_p = [Percentile::P50, Percentile::P90, Percentile::P99];
    let mut charts = vec![chart(
        format!("{prefix}-ttfc"),
        format!("{model} · time to the first answer token (after reasoning)"),
        "TTFC (ms)",
        ax.ttfc,
        &ax,
        lines(
            both(ttfc_series),
            knee_band(f),
            wall_line(f),
            slo_line(view.slo.ttfc_ms(), "TTFC"),
            rings(view, model, Metric::Ttfc, &all_p),
        ),
    )];
    let share = both(|rs| {
        let pct = points(rs, |r| r.reasoning_share.map(|v| v * 100.0));
        vec![series("reasoning", 3, Marker::Circle, pct)]
    });
    if !share.is_empty() {
        let body = lines(share, knee_band(f), wall_line(f), vec![], vec![]);
        let title = format!("{model} · reasoning share of the output tokens");
        let id = format!("{prefix}-reasoning");
        charts.push(chart(
            id,
            title,
            "reasoning (% of output tokens)",
            100.0,
            &ax,
            body,
        ));
    }
    charts
}

/// A model's TTFC percentiles per step.
fn ttfc_series(rs: &[&StepSummary]) -> Vec<Series> {
    percentile_series(rs, |r| [r.ttfc_p50_ms, r.ttfc_p90_ms, r.ttfc_p99_ms])
}

/// The six charts every model has.
fn ladder_charts(view: &RunView, f: &ModelFindings, prefix: &str) -> Vec<Chart> {
    let ax = axes(view);
    let model = f.model.as_str();
    let (rows, base_rows) = both_sides(view, model);
    let with_base = |mut v: Vec<Series>, make: &dyn Fn(&[&StepSummary]) -> Vec<Series>| {
        if !base_rows.is_empty() {
            v.extend(make(&base_rows).into_iter().map(baseline_series));
        }
        v
    };
    // Embeddings generate no token: their TPM is the input tokens they embedded.
    let profile = Profile::of(rows.iter().copied());
    let (tpm_title, tpm_axis) = tpm_words(profile);
    let tpm = |rs: &[&StepSummary]| tpm_series(rs, profile);
    let (ttft, tpot, rps, goodput) = (ttft_series, tpot_series, rps_series, goodput_series);
    let id = |what: &str| format!("{prefix}-{what}");
    // Every chart of the ladder carries the knee band and the wall.
    let marked = |s, slo, rings| lines(s, knee_band(f), wall_line(f), slo, rings);
    let all_p = [Percentile::P50, Percentile::P90, Percentile::P99];
    let mut ttft_s = with_base(ttft(&rows), &ttft);
    let mut tpm_s = with_base(tpm(&rows), &tpm);
    tpm_s.push(ideal(&rows, |r| profile.tpm(r), "ideal linear"));
    let mut rps_s = with_base(rps(&rows), &rps);
    rps_s.push(ideal(&rows, |r| r.throughput(false), "ideal linear"));
    ttft_s.retain(|s| !s.points.is_empty());
    vec![
        chart(
            id("ttft"),
            format!("{model} · time to first token"),
            "TTFT (ms)",
            ax.ttft,
            &ax,
            marked(
                ttft_s,
                slo_line(view.slo.ttft_ms(), "TTFT"),
                rings(view, model, Metric::Ttft, &all_p),
            ),
        ),
        chart(
            id("tpot"),
            format!("{model} · time per output token"),
            "TPOT (ms)",
            ax.tpot,
            &ax,
            marked(
                with_base(tpot(&rows), &tpot),
                slo_line(view.slo.tpot_ms(), "TPOT"),
                rings(view, model, Metric::Tpot, &all_p),
            ),
        ),
        chart(
            id("tpm"),
            format!("{model} · {tpm_title}"),
            tpm_axis,
            ax.tpm,
            &ax,
            marked(tpm_s, vec![], rings(view, model, Metric::Tpm, &[])),
        ),
        chart(
            id("rps"),
            format!("{model} · requests per second"),
            "RPS (requests/s)",
            ax.rps,
            &ax,
            marked(rps_s, vec![], rings(view, model, Metric::Rps, &[])),
        ),
        error_chart(view, f, &rows, &ax, id("errors")),
        chart(
            id("goodput"),
            format!("{model} · goodput ({})", slo_words(&view.slo)),
            "goodput (% of attempts)",
            100.0,
            &ax,
            marked(with_base(goodput(&rows), &goodput), vec![], vec![]),
        ),
    ]
}

/// A model's TTFT percentiles per step.
fn ttft_series(rs: &[&StepSummary]) -> Vec<Series> {
    percentile_series(rs, |r| [r.ttft_p50_ms, r.ttft_p90_ms, r.ttft_p99_ms])
}

/// P50, P90 and P99 per step, as `pick` reads them from a row.
fn percentile_series(
    rs: &[&StepSummary],
    pick: fn(&StepSummary) -> [Option<f64>; 3],
) -> Vec<Series> {
    let at = |i: usize| points(rs, |r| pick(r)[i]);
    vec![
        series("P50", 0, Marker::Circle, at(0)),
        series("P90", 1, Marker::Square, at(1)),
        series("P99", 5, Marker::Triangle, at(2)),
    ]
}

/// A model's TPOT percentiles per step.
fn tpot_series(rs: &[&StepSummary]) -> Vec<Series> {
    vec![
        series("P50", 0, Marker::Circle, points(rs, |r| r.tpot_p50_ms)),
        series("P90", 1, Marker::Square, points(rs, |r| r.tpot_p90_ms)),
    ]
}

/// Output tokens per minute per step (the steady-window throughput every check judges), or,
/// for embeddings, the input tokens per minute (`Profile::tpm`).
fn tpm_series(rs: &[&StepSummary], profile: Profile) -> Vec<Series> {
    let tpm = points(rs, |r| Some(profile.tpm(r)));
    vec![series(profile.tpm_header(), 2, Marker::Circle, tpm)]
}

/// The TPM chart's title and axis: output tokens, or input tokens for embeddings.
fn tpm_words(profile: Profile) -> (&'static str, &'static str) {
    match profile.counted {
        Counted::Input => ("input tokens per minute", "input TPM (tokens/min)"),
        Counted::Output => ("output tokens per minute", "output TPM (tokens/min)"),
    }
}

/// Requests per second per step (steady window).
fn rps_series(rs: &[&StepSummary]) -> Vec<Series> {
    let rps = points(rs, |r| Some(r.throughput(false)));
    vec![series("RPS", 4, Marker::Diamond, rps)]
}

/// Goodput per step, in percent of attempts.
fn goodput_series(rs: &[&StepSummary]) -> Vec<Series> {
    let goodput = points(rs, |r| r.goodput.map(|g| g * 100.0));
    vec![series("goodput", 3, Marker::Circle, goodput)]
}

/// "TTFT ≤ 1 s, TPOT ≤ 50 ms", or what goodput means without an SLO.
pub fn slo_words(slo: &Slo) -> String {
    let parts: Vec<String> = slo
        .bounds_ms()
        .iter()
        .filter_map(|(n, v)| v.map(|v| format!("{n} ≤ {}", fmt_ms(v))))
        .collect();
    if parts.is_empty() {
        "no SLO: share of successes".to_string()
    } else {
        format!("SLO {}", parts.join(", "))
    }
}

/// Perfect scaling from the first step: value(first) / concurrency(first) × concurrency.
fn ideal(rows: &[&StepSummary], f: impl Fn(&StepSummary) -> f64, name: &str) -> Series {
    let points = match rows.first() {
        Some(first) if first.concurrency > 0 => {
            let per = f(first) / f64::from(first.concurrency);
            rows.iter()
                .map(|r| (f64::from(r.concurrency), per * f64::from(r.concurrency)))
                .collect()
        }
        _ => Vec::new(),
    };
    Series {
        name: name.to_string(),
        colour: None,
        points,
        marker: Marker::None,
        dashed: true,
        kind: "ideal",
    }
}

/// Failed requests per step as % of attempts, stacked by class, on the ladder's shared x axis,
/// with the knee band and the 429 wall marked as on the line charts.
fn error_chart(
    view: &RunView,
    f: &ModelFindings,
    rows: &[&StepSummary],
    ax: &Axes,
    id: String,
) -> Chart {
    let model = f.model.as_str();
    let (bars, legend) = error_bars(view, model, rows);
    // Only name the classes that occur.
    let used: Vec<usize> = legend
        .iter()
        .map(|l| l.0)
        .filter(|c| {
            bars.iter()
                .any(|b| b.segments.iter().any(|s| s.0 == *c && s.1 > 0.0))
        })
        .collect();
    let legend = legend.into_iter().filter(|l| used.contains(&l.0)).collect();
    let body = Body::Stacked {
        bars,
        legend,
        bands: knee_band(f),
        vlines: wall_line(f),
    };
    Chart {
        empty_note: Some("no failed requests".to_string()),
        ..chart(
            id,
            format!("{model} · failed requests by class"),
            "failed (% of attempts)",
            1.0,
            ax,
            body,
        )
    }
}

/// With several models: one chart per metric with every model on the same axes.
pub fn comparison_charts(view: &RunView, prefix: &str) -> Vec<Chart> {
    let ax = axes(view);
    let models = models(&view.result.summaries);
    let per_model = |f: &dyn Fn(&StepSummary) -> Option<f64>| -> Vec<Series> {
        models
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let rows = model_rows(&view.result.summaries, m);
                series(m, i % 8, Marker::CYCLE[i % 4], points(&rows, f))
            })
            .collect()
    };
    let error_max = view
        .result
        .summaries
        .iter()
        .map(|r| {
            if r.attempted == 0 {
                0.0
            } else {
                r.failed as f64 * 100.0 / r.attempted as f64
            }
        })
        .fold(1.0, f64::max);
    let make = |what: &str, title: &str, y: &str, y_max: f64, s: Vec<Series>, h: Vec<HLine>| {
        chart(
            format!("{prefix}-all-{what}"),
            format!("all models · {title}"),
            y,
            y_max,
            &ax,
            lines(s, vec![], vec![], h, vec![]),
        )
    };
    let profile = Profile::of(view.result.summaries.iter());
    let (tpm_title, tpm_axis) = tpm_words(profile);
    vec![
        make(
            "ttft",
            "TTFT P90",
            "TTFT P90 (ms)",
            ax.ttft,
            per_model(&|r| r.ttft_p90_ms),
            slo_line(view.slo.ttft_ms(), "TTFT"),
        ),
        make(
            "tpot",
            "TPOT P50",
            "TPOT P50 (ms)",
            ax.tpot,
            per_model(&|r| r.tpot_p50_ms),
            slo_line(view.slo.tpot_ms(), "TPOT"),
        ),
        make(
            "tpm",
            tpm_title,
            tpm_axis,
            ax.tpm,
            per_model(&|r| Some(profile.tpm(r))),
            vec![],
        ),
        make(
            "rps",
            "requests per second",
            "RPS (requests/s)",
            ax.rps,
            per_model(&|r| Some(r.rps)),
            vec![],
        ),
        make(
            "errors",
            "failed requests",
            "failed (% of attempts)",
            error_max,
            per_model(&|r| (r.attempted > 0).then(|| r.failed as f64 * 100.0 / r.attempted as f64)),
            vec![],
        ),
        make(
            "goodput",
            &format!("goodput ({})", slo_words(&view.slo)),
            "goodput (% of attempts)",
            100.0,
            per_model(&|r| r.goodput.map(|g| g * 100.0)),
            vec![],
        ),
    ]
}
