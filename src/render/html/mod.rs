//! The self-contained HTML report (`ladder report`): inline SVG charts and CSS, no script, no
//! network, so it opens from a CI artifact or an e-mail attachment. Light and dark mode follow
//! `prefers-color-scheme`; the palette is Okabe–Ito (colour-blind safe) and series also differ by
//! marker and dash; print CSS puts each model on its own page. The markup is well-formed XML
//! (polyglot XHTML), so any XML parser can check it. Pure: data in, a `String` out.

pub mod charts;
pub mod curves;
mod error_bars;
pub mod evidence;
mod lead;
mod marks;
mod needs;
mod style;
pub mod trend;
pub mod view;

use crate::compare::{Comparison, Outcome};
use crate::findings::ModelFindings;
use crate::render::diff::{change, ci, gated_ranked, grouped_skips, summary_line, value, verdict};
use crate::render::svg::{self, escape};
use crate::stats::{Profile, StepSummary};
use std::fmt::Write;
use view::RunView;

/// Page head with the stylesheet, up to and including `<body>`.
pub fn page_start(title: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\"><head><meta charset=\"utf-8\"/><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/><meta name=\"color-scheme\" content=\"light dark\"/><title>{}</title><style>{}</style></head><body>",
        escape(title),
        style::CSS
    )
}

pub fn page_end() -> &'static str {
    "</body></html>\n"
}

/// The whole report for one or more runs: what happened first (`lead`: the verdicts and
/// findings, as the terminal says them), then the overview of every run on shared axes
/// (`curves`), then each run's details. Notes about how the command resolved its inputs go to
/// stderr, not into the page.
pub fn report(views: &[RunView], generator: &str) -> String {
    let mut s = page_start("ladder report");
    let _ = write!(
        s,
        "<header><h1>ladder report</h1><p class=\"muted\">{} · {} run(s)</p>",
        escape(generator),
        views.len()
    );
    s.push_str("</header>");
    lead::lead(&mut s, views);
    s.push_str(&curves::overview(views));
    for (i, v) in views.iter().enumerate() {
        run_section(&mut s, v, i);
    }
    s.push_str(page_end());
    s
}

fn run_section(s: &mut String, v: &RunView, index: usize) {
    let scenario = v
        .result
        .summaries
        .first()
        .map_or("", |r| r.scenario.as_str());
    let _ = write!(
        s,
        "<section class=\"run\" id=\"run-{index}\"><h2>{} <span class=\"muted\">{}</span></h2>",
        escape(scenario),
        escape(&v.result.label)
    );
    for w in &v.warnings {
        let _ = write!(s, "<p class=\"warning\" role=\"alert\">{}</p>", escape(w));
    }
    if let Some(c) = &v.comparison {
        let _ = write!(
            s,
            "<p class=\"verdict-line\">Against baseline {}: <span class=\"outcome {}\">{}</span> ({}). Dashed lines are the baseline; ringed points regressed; every check is below the charts.</p>",
            escape(v.baseline.as_ref().map_or("", |b| b.label.as_str())),
            outcome_class(c.outcome()),
            c.outcome().label(),
            escape(&summary_line(&c.counts()))
        );
    }
    let models = charts::models(&v.result.summaries);
    let prefix = format!("r{index}");
    if models.len() > 1 {
        s.push_str("<section class=\"model all-models\"><h3>All models, same axes</h3><div class=\"charts\">");
        for c in charts::comparison_charts(v, &prefix) {
            s.push_str(&svg::render(&c));
        }
        s.push_str("</div></section>");
    }
    for (mi, f) in v.findings.iter().enumerate() {
        model_section(s, v, f, &format!("{prefix}-m{mi}"));
    }
    evidence::server_section(s, v, &prefix);
    needs::needs_section(s, v, &prefix);
    if let Some(c) = &v.comparison {
        let base = v.baseline.as_ref().map_or("", |b| b.label.as_str());
        verdict_section(
            s,
            c,
            (&format!("Against baseline {base}"), None),
            v.gates.as_deref(),
            &verdict_id(index, None),
        );
    }
    for (pi, (p, c)) in v.pairs.iter().enumerate() {
        let (heading, informs) = pair_heading(p, v.ab);
        let gates = v.ab.then_some(v.gates.as_deref()).flatten();
        verdict_section(
            s,
            c,
            (&heading, informs),
            gates,
            &verdict_id(index, Some(pi)),
        );
    }
    about_section(s, v);
    s.push_str("</section>");
}

/// "Scenario and run": the run's `meta.json`, what the scenario changes from the defaults, and
/// the scenario as run.
fn about_section(s: &mut String, v: &RunView) {
    s.push_str("<section class=\"about\"><h3>Scenario and run</h3>");
    if let Some(meta) = v.meta.as_ref().and_then(|m| serde_json::to_value(m).ok()) {
        meta_table(s, &meta);
    }
    if let Some(changes) = &v.scenario_changes {
        let _ = write!(
            s,
            "<h4>Scenario: what differs from the defaults</h4><pre class=\"scenario changes\">{}</pre>",
            escape(changes)
        );
    }
    if let Some(yaml) = &v.scenario_yaml {
        let _ = write!(
            s,
            "<details class=\"scenario\"><summary>Scenario as run, every value (secrets redacted)</summary><pre class=\"scenario\">{}</pre></details>",
            escape(yaml)
        );
    }
    s.push_str("</section>");
}

/// One model's section: its charts, its steps, the TTFT parts.
fn model_section(s: &mut String, v: &RunView, f: &ModelFindings, id: &str) {
    let _ = write!(
        s,
        "<section class=\"model\" id=\"{id}\"><h3>model: {}</h3><div class=\"charts\">",
        escape(&f.model)
    );
    for c in charts::model_charts(v, f, id) {
        s.push_str(&svg::render(&c));
    }
    s.push_str("</div>");
    let currency = v.result.recorded.as_ref().and_then(|r| r.pricing.as_ref());
    steps_table(
        s,
        &charts::model_rows(&v.result.summaries, &f.model),
        currency.map(|p| p.currency.as_str()),
    );
    evidence::ttft_parts_section(s, v, f, id);
    s.push_str("</section>");
}

fn outcome_class(o: Outcome) -> &'static str {
    match o {
        Outcome::Pass => "pass",
        Outcome::Regression => "regression",
        Outcome::Inconclusive | Outcome::Refused | Outcome::Incomplete => "inconclusive",
    }
}

/// The element id of run `run`'s verdict against its baseline (`pair: None`) or of its
/// `pair`-th model comparison: the page's top links there for every check.
fn verdict_id(run: usize, pair: Option<usize>) -> String {
    match pair {
        None => format!("run-{run}-verdict"),
        Some(p) => format!("run-{run}-pair-{p}"),
    }
}

/// A pair's heading, and the pair when it informs: an A/B run's pair is its verdict, headed by
/// its outcome; another in-run pair says it informs (`pair_heading`).
fn pair_heading(p: &crate::compare::Pair, ab: bool) -> (String, Option<&crate::compare::Pair>) {
    if ab {
        (
            format!(
                "A/B: {} against {} (interleaved, the run's verdict)",
                p.new, p.old
            ),
            None,
        )
    } else {
        (format!("{} against {} (same run)", p.new, p.old), Some(p))
    }
}

/// A comparison's verdicts under `heading` (`Against baseline B`, `B against A (same run)`):
/// every check, folded (the page's top shows the short verdict), in a section of id `id`; a
/// pair of one run informs, and says so instead of an outcome (`pair_heading`).
fn verdict_section(
    s: &mut String,
    c: &Comparison,
    (heading, pair): (&str, Option<&crate::compare::Pair>),
    gates: Option<&str>,
    id: &str,
) {
    let outcome = c.outcome();
    let class = outcome_class(outcome);
    let said = pair.map_or_else(
        || outcome.label().to_string(),
        |p| crate::render::diff::pair_heading(p, outcome),
    );
    let _ = write!(
        s,
        "<section class=\"verdict\" id=\"{id}\"><h3>{}: <span class=\"outcome {class}\">{}</span></h3><p>{}. The verdicts <code>ladder diff</code> gives for these two sides; gates {}.</p>",
        escape(heading),
        escape(&said),
        escape(&summary_line(&c.counts())),
        escape(gates.unwrap_or("the defaults"))
    );
    // The same document `ladder diff --format json` prints, for scripts reading the page.
    let mut json = Vec::new();
    let ctx = crate::render::diff::DiffContext {
        run_dir: None,
        gates: gates.map(str::to_string),
        warnings: Vec::new(),
        full: true,
        informs: None,
    };
    if crate::render::diff::render_with(c, &ctx, crate::render::diff::DiffFormat::Json, &mut json)
        .is_ok()
    {
        let _ = write!(
            s,
            "<pre class=\"ladder-diff\" hidden=\"hidden\">{}</pre>",
            escape(String::from_utf8_lossy(&json).trim())
        );
    }
    if let Some(r) = &c.refused {
        let _ = write!(
            s,
            "<p class=\"warning\">Not judged: the two sides ran different workloads (fingerprints {} and {}).</p><pre>{}</pre>",
            escape(&r.base_fp),
            escape(&r.new_fp),
            escape(&r.unified_diff)
        );
    }
    let checks = gated_ranked(c);
    if !checks.is_empty() {
        let _ = write!(
            s,
            "<details class=\"all-checks\"><summary>Every check ({} rows): model, check, baseline, new, change, 99% CI, verdict</summary>",
            checks.len()
        );
        s.push_str("<table class=\"verdicts\"><thead><tr><th>model</th><th>check</th><th>baseline</th><th>new</th><th>change</th><th>99% CI</th><th>verdict</th></tr></thead><tbody>");
        for k in checks {
            let _ = write!(
                s,
                "<tr class=\"v-{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td title=\"{}\">{}</td></tr>",
                k.verdict.label().replace(' ', "-"),
                escape(&k.model),
                escape(&k.title()),
                escape(&value(k, k.base)),
                escape(&value(k, k.new)),
                escape(&change(k)),
                escape(&ci(k)),
                escape(&k.detail),
                escape(&verdict(k))
            );
        }
        s.push_str("</tbody></table></details>");
    }
    let mut extra: Vec<String> = grouped_skips(c)
        .into_iter()
        .map(|l| format!("skipped: {l}"))
        .collect();
    extra.extend(c.unmatched.iter().map(|u| format!("unmatched: {u}")));
    extra.extend(c.notes.iter().cloned());
    if !extra.is_empty() {
        s.push_str("<ul class=\"muted\">");
        for l in extra {
            let _ = write!(s, "<li>{}</li>", escape(&l));
        }
        s.push_str("</ul>");
    }
    s.push_str("</section>");
}

fn opt_ms(v: Option<f64>) -> String {
    v.map_or("-".into(), crate::util::duration::ms_figure)
}

/// One model's steps; a priced run (`currency`, or cost figures in its rows) adds the cost per
/// 1,000 successful requests and per 1M output tokens.
fn steps_table(s: &mut String, rows: &[&StepSummary], currency: Option<&str>) {
    let unit = rows.first().map(|r| r.ladder_unit).unwrap_or_default();
    let _ = write!(
        s,
        "<table class=\"steps\"><thead><tr><th>{}</th>",
        unit.header()
    );
    // A model that reasoned: the answer's wait and the reasoning share, after TTFT.
    let reasoning = rows.iter().any(|r| r.any_reasoning());
    let ttfc_head = if reasoning {
        "<th>TTFC P50 / P90 / P99 (ms)</th><th>reasoning</th>"
    } else {
        ""
    };
    let priced = rows.iter().any(|r| r.cost_per_1k_ok.is_some());
    let cost_head = if priced {
        let unit = escape(currency.unwrap_or("cost"));
        format!("<th>{unit} per 1,000 ok</th><th>{unit} per 1M output tokens</th>")
    } else {
        String::new()
    };
    // Embeddings generate no token: their TPM is the input tokens they embedded.
    let profile = Profile::of(rows.iter().copied());
    let tpm_head = profile.tpm_header();
    let _ = write!(s, "<th>ok / sent</th><th>TTFT P50 / P90 / P99 (ms)</th>{ttfc_head}<th>TPOT P50 / P90 (ms)</th><th>E2E mean (ms)</th><th>{tpm_head}</th><th>RPS</th><th>failed</th><th>goodput</th>{cost_head}</tr></thead><tbody>");
    for r in rows {
        let cost = |c: Option<f64>| c.map_or_else(|| "-".to_string(), crate::model::cost_text);
        let costs = if priced {
            format!(
                "<td>{}</td><td>{}</td>",
                cost(r.cost_per_1k_ok),
                cost(r.cost_per_1m_output)
            )
        } else {
            String::new()
        };
        let ttfc = if reasoning {
            format!(
                "<td>{} / {} / {}</td><td>{}</td>",
                opt_ms(r.ttfc_p50_ms),
                opt_ms(r.ttfc_p90_ms),
                opt_ms(r.ttfc_p99_ms),
                r.reasoning_share
                    .map_or("-".into(), |g| format!("{:.1}%", g * 100.0))
            )
        } else {
            String::new()
        };
        let _ = write!(
            s,
            "<tr><td>{}</td><td>{} / {}</td><td>{} / {} / {}</td>{ttfc}<td>{} / {}</td><td>{}</td><td>{:.0}</td><td>{:.2}</td><td>{}</td><td>{}</td>{costs}</tr>",
            r.concurrency,
            r.succeeded,
            r.attempted,
            opt_ms(r.ttft_p50_ms),
            opt_ms(r.ttft_p90_ms),
            opt_ms(r.ttft_p99_ms),
            opt_ms(r.tpot_p50_ms),
            opt_ms(r.tpot_p90_ms),
            opt_ms(r.e2e_mean_ms),
            profile.tpm(r),
            r.throughput(false),
            r.failed,
            r.goodput.map_or("-".into(), |g| format!("{:.1}%", g * 100.0))
        );
    }
    s.push_str("</tbody></table>");
}

fn meta_table(s: &mut String, meta: &serde_json::Value) {
    let Some(obj) = meta.as_object() else { return };
    s.push_str("<table class=\"meta\"><tbody>");
    for (k, v) in obj {
        let text = meta_text(v);
        if text.is_empty() {
            continue;
        }
        let _ = write!(
            s,
            "<tr><th>{}</th><td>{}</td></tr>",
            escape(&k.replace('_', " ")),
            escape(&text)
        );
    }
    s.push_str("</tbody></table>");
}

/// A `meta.json` value in words: strings as they are, lists of words joined, an object as
/// `key: value` pairs, a list of records counted (the steps are in the tables above), never
/// raw JSON.
fn meta_text(v: &serde_json::Value) -> String {
    use serde_json::Value;
    match v {
        Value::Null => String::new(),
        Value::String(x) => x.clone(),
        Value::Bool(b) => if *b { "yes" } else { "no" }.to_string(),
        Value::Number(n) => n.to_string(),
        Value::Array(items) if items.iter().all(|i| !i.is_object() && !i.is_array()) => {
            items.iter().map(meta_text).collect::<Vec<_>>().join(" ")
        }
        Value::Array(items) => format!("{} entries", items.len()),
        Value::Object(o) => o
            .iter()
            .map(|(k, v)| (k, meta_text(v)))
            .filter(|(_, v)| !v.is_empty())
            .map(|(k, v)| format!("{}: {v}", k.replace('_', " ")))
            .collect::<Vec<_>>()
            .join(", "),
    }
}
