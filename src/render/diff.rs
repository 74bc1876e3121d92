//! Renders a `compare::Comparison` for people and for CI: a terminal table, markdown for PR
//! comments and `$GITHUB_STEP_SUMMARY`, JSON for scripts, and JUnit XML for test dashboards.
//! Pure formatting: every decision (verdicts, outcome, exit code) was already taken by
//! `compare`; this module only chooses words and layout, and writes into any `io::Write`.

mod junit;
mod markdown;
pub(crate) mod short;
#[cfg(test)]
mod tests;

use std::io::{self, Write};

use serde::Serialize;
use tabled::builder::Builder;
use tabled::settings::object::Columns;
use tabled::settings::{Alignment, Style};

use crate::compare::{Check, Comparison, Counts, Method, Metric, Outcome, Verdict};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffFormat {
    Table,
    Markdown,
    Json,
    Junit,
}

/// Version of the JSON document below; bumped on any incompatible change.
pub const JSON_SCHEMA_VERSION: u32 = 3;

pub fn render(c: &Comparison, format: DiffFormat, out: &mut dyn Write) -> io::Result<()> {
    render_with(c, &DiffContext::default(), format, out)
}

/// What the caller knows beyond the comparison itself: the new run's directory and which gates
/// were applied (both also in the JSON document as `run_dir` and `gates`), and warnings about
/// the inputs (a run that did not finish). Gates are shown as notes; warnings come right after
/// the heading in the table and markdown, in `warnings` in the JSON, and as a `ladder.warning`
/// property and in `<system-out>` of every JUnit suite. `full`: the terminal and markdown
/// formats print every check (`--full`) rather than the short verdict (`short`); JSON and JUnit
/// always hold every check.
#[derive(Debug, Clone, Default)]
pub struct DiffContext {
    pub run_dir: Option<String>,
    pub gates: Option<String>,
    pub warnings: Vec<String>,
    pub full: bool,
    /// Two models of one run compared (`run --pair A=B`, `compare: {baseline: A}`): the
    /// comparison informs and never changes the exit code, so its heading says so
    /// (`pair_heading`) instead of an outcome the exit code does not carry.
    pub informs: Option<crate::compare::Pair>,
}

/// The heading of a comparison that informs: "pair old → new (information, exit 0): new
/// regressed against old". The rule it states lives in `app::run::render` (an in-run pair's
/// comparison is printed, its exit code never used: the run's exit code is the run's own);
/// `ladder diff --pair` gates like any diff and is headed by its outcome.
pub fn pair_heading(pair: &crate::compare::Pair, outcome: Outcome) -> String {
    let (old, new) = (&pair.old, &pair.new);
    let what = match outcome {
        Outcome::Pass => format!("no regression of {new} against {old}"),
        Outcome::Regression => format!("{new} regressed against {old}"),
        Outcome::Inconclusive => format!("{new} against {old} is inconclusive"),
        Outcome::Refused => format!("{new} and {old} ran different workloads"),
        Outcome::Incomplete => format!("{new} against {old} is incomplete"),
    };
    format!("pair {old} → {new} (information, exit 0): {what}")
}

/// The first words of a table or markdown verdict: the outcome, or what an informing pair found.
fn heading(c: &Comparison, ctx: &DiffContext) -> String {
    match &ctx.informs {
        Some(p) => pair_heading(p, c.outcome()),
        None => c.outcome().label().to_string(),
    }
}

pub fn render_with(
    c: &Comparison,
    ctx: &DiffContext,
    format: DiffFormat,
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut shown;
    let c = if ctx.gates.is_some() {
        shown = c.clone();
        let mut notes: Vec<String> = ctx.gates.iter().map(|g| format!("gates: {g}")).collect();
        notes.append(&mut shown.notes);
        shown.notes = notes;
        &shown
    } else {
        c
    };
    match format {
        DiffFormat::Table => table(c, ctx, out),
        DiffFormat::Markdown => markdown::markdown(c, ctx, out),
        DiffFormat::Json => json(c, ctx, out),
        DiffFormat::Junit => junit::render(c, &ctx.warnings, out),
    }
}

/// "2 regressions, 1 improvement, 28 no change, 2 below gate, 1 inconclusive, 4 skipped"
/// (gated checks only).
pub fn summary_line(k: &Counts) -> String {
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    format!(
        "{}, {}, {} no change, {} below gate, {} inconclusive, {} skipped",
        plural(k.regressed, "regression", "regressions"),
        plural(k.improved, "improvement", "improvements"),
        k.no_change,
        k.below_gate,
        k.inconclusive,
        k.skipped
    )
}

/// Inconclusive gated checks, one line each with what would decide them; the ones set aside
/// at a step whose client did not keep up are `set_aside_lines`.
fn inconclusive_lines(c: &Comparison) -> Vec<String> {
    check_lines(c, false)
}

/// Checks set aside because they rest on a step whose client did not keep up, one line each.
fn set_aside_lines(c: &Comparison) -> Vec<String> {
    check_lines(c, true)
}

fn check_lines(c: &Comparison, set_aside: bool) -> Vec<String> {
    c.checks
        .iter()
        .filter(|k| k.gated && matches!(k.verdict, Verdict::Inconclusive { .. }))
        .filter(|k| k.is_set_aside() == set_aside)
        .map(|k| format!("{} · {}: {}", k.model, k.title(), k.detail))
        .collect()
}

/// The steps whose client did not keep up, one line each: "sim-model · the client did not
/// keep up at 8 streams in the new run: …; fix: …". Every format prints them near the top.
pub(crate) fn invalid_lines(c: &Comparison) -> Vec<String> {
    c.invalid
        .iter()
        .map(|i| format!("{} · {}", i.model, i.sentence))
        .collect()
}

const APPROX_MARK: &str = "~";
pub(crate) const APPROX_NOTE: &str =
    "~ approximate rule (summary percentiles, no bootstrap CI); see each check's detail";

fn is_skipped(c: &Check) -> bool {
    matches!(c.verdict, Verdict::Skipped { .. })
}

/// The value of a check in the unit of its metric.
pub(crate) fn value(c: &Check, v: Option<f64>) -> String {
    let Some(v) = v else {
        return match c.metric {
            Metric::Knee | Metric::Wall | Metric::Capacity | Metric::Cap => "none".into(),
            _ => "-".into(),
        };
    };
    match c.metric {
        Metric::ErrorRate | Metric::ShortRate => format!("{:.2}%", v * 100.0),
        Metric::CacheHit => format!("{:.1}%", v * 100.0),
        Metric::Tpm => format!("{v:.0}/min"),
        Metric::Rps => format!("{v:.2}/s"),
        Metric::DecodeRate => format!("{v:.1} tok/s"),
        Metric::Cost => format!("{}/1k", crate::model::cost_text(v)),
        Metric::Knee | Metric::Wall | Metric::Capacity | Metric::Cap => {
            c.ladder_unit.describe(v.round() as u32)
        }
        _ => format!("{v:.1} ms"),
    }
}

pub(crate) fn change(c: &Check) -> String {
    match (c.metric, c.base, c.new, c.ratio) {
        (Metric::ErrorRate | Metric::ShortRate, Some(b), Some(n), _) => {
            format!("{:+.2} pp", (n - b) * 100.0)
        }
        (Metric::CacheHit, Some(b), Some(n), _) => format!("{:+.1} pp", (n - b) * 100.0),
        (_, _, _, Some(r)) => format!("{:+.1}%", r * 100.0),
        _ => String::new(),
    }
}

pub(crate) fn ci(c: &Check) -> String {
    if c.metric == Metric::CacheHit {
        return c.ci.map_or_else(String::new, |(lo, hi)| {
            format!("[{:+.1}, {:+.1}] pp", lo * 100.0, hi * 100.0)
        });
    }
    c.ci.map_or_else(String::new, |(lo, hi)| {
        format!("[{:+.1}%, {:+.1}%]", lo * 100.0, hi * 100.0)
    })
}

pub(crate) fn verdict(c: &Check) -> String {
    match c.method {
        Method::Approximate => format!("{} {APPROX_MARK}", c.verdict.label()),
        _ => c.verdict.label().to_string(),
    }
}

/// The step column's header, as the run table names it (`streams`, `req/s`, `prompt tok`).
fn step_header<'a>(checks: impl IntoIterator<Item = &'a Check>) -> &'static str {
    checks
        .into_iter()
        .next()
        .map_or("streams", |k| k.ladder_unit.header())
}

fn step_cell(c: &Check) -> String {
    c.concurrency.map_or_else(|| "-".into(), |s| s.to_string())
}

fn models(c: &Comparison) -> Vec<&str> {
    let mut seen: Vec<&str> = Vec::new();
    for k in &c.checks {
        if !seen.contains(&k.model.as_str()) {
            seen.push(&k.model);
        }
    }
    seen
}

/// Gated, not skipped: regressions first, then improvements, then the rest, each in check order.
pub(crate) fn gated_ranked(c: &Comparison) -> Vec<&Check> {
    let rank = |k: &Check| match k.verdict {
        Verdict::Regressed => 0,
        Verdict::Improved => 1,
        _ => 2,
    };
    let mut v: Vec<&Check> = c
        .checks
        .iter()
        .filter(|k| k.gated && !is_skipped(k))
        .collect();
    v.sort_by_key(|k| rank(k));
    v
}

/// One model's checks as a table (`--full`); whether any was judged the approximate way.
fn model_table(c: &Comparison, model: &str, out: &mut dyn Write) -> io::Result<bool> {
    let mut any_approx = false;
    writeln!(out, "\nmodel: {model}")?;
    let mut b = Builder::default();
    let head = step_header(c.checks.iter().filter(|k| k.model == model));
    b.push_record([
        head, "metric", "pct", "base", "new", "change", "99% CI", "verdict",
    ]);
    for k in c
        .checks
        .iter()
        .filter(|k| k.model == model && !is_skipped(k))
    {
        any_approx |= k.method == Method::Approximate;
        b.push_record([
            step_cell(k),
            k.metric.label().to_string(),
            k.percentile
                .map_or_else(String::new, |p| p.label().to_string()),
            value(k, k.base),
            value(k, k.new),
            change(k),
            ci(k),
            verdict(k),
        ]);
    }
    let mut t = b.build();
    t.with(Style::rounded())
        .modify(Columns::new(3..6), Alignment::right());
    writeln!(out, "{t}")?;
    Ok(any_approx)
}

fn table(c: &Comparison, ctx: &DiffContext, out: &mut dyn Write) -> io::Result<()> {
    let (warnings, full) = (&ctx.warnings, ctx.full);
    writeln!(out, "ladder diff: {}", heading(c, ctx))?;
    writeln!(
        out,
        "baseline: {} (fingerprint {})",
        c.base_label, c.base_fingerprint
    )?;
    writeln!(
        out,
        "new:      {} (fingerprint {})",
        c.new_label, c.new_fingerprint
    )?;
    for w in warnings {
        writeln!(out, "warning: {w}")?;
    }
    for line in &c.headline {
        writeln!(out, "{line}")?;
    }
    if let Some(r) = &c.refused {
        writeln!(
            out,
            "\nThe workloads differ, so the results are not comparable. What changed:\n"
        )?;
        out.write_all(r.unified_diff.as_bytes())?;
        writeln!(out, "\nRerun with the baseline's scenario, or pass --allow-different-workload to compare anyway.")?;
        return Ok(());
    }
    writeln!(out, "{}", summary_line(&c.counts()))?;
    if let Some(why) = c.inconclusive_reason() {
        writeln!(out, "inconclusive: {why}")?;
    }
    if let Some(why) = c.incomplete_reason() {
        writeln!(out, "incomplete: {why}")?;
    }
    for line in invalid_lines(c) {
        writeln!(out, "invalid: {line}")?;
    }
    if !full {
        return short::table(c, out);
    }
    for k in c
        .checks
        .iter()
        .filter(|k| k.gated && k.verdict == Verdict::Regressed)
    {
        writeln!(out, "  REGRESSED {} · {}: {}", k.model, k.title(), k.detail)?;
    }
    let mut any_approx = false;
    for model in models(c) {
        any_approx |= model_table(c, model, out)?;
    }
    if any_approx {
        writeln!(out, "{APPROX_NOTE}")?;
    }
    list(
        out,
        "\ninconclusive (the CI spans 0 and reaches past the gate):",
        &inconclusive_lines(c),
        "  ",
    )?;
    list(
        out,
        "\nset aside (the client did not keep up):",
        &set_aside_lines(c),
        "  ",
    )?;
    let skipped = grouped_skips(c);
    if !skipped.is_empty() {
        writeln!(out, "\nskipped:")?;
        for line in skipped {
            writeln!(out, "  {line}")?;
        }
    }
    list(out, "\nonly on one side:", &c.unmatched, "  ")?;
    list(out, "\nnotes:", &c.notes, "  ")
}

/// Skipped gates, one line per model × reason: "sim-model · P99 at 5 and 10 streams (TTFT, TPOT):
/// needs ≥ 400 samples per side (have 120 / 120): use requests_per_step ≥ 400". Reasons that do
/// not start with the check's name stay one line per check.
pub(crate) fn grouped_skips(c: &Comparison) -> Vec<String> {
    struct Group {
        model: String,
        pct: String,
        reason: String,
        unit: crate::model::LadderUnit,
        steps: Vec<u32>,
        metrics: Vec<String>,
    }
    let mut groups: Vec<Group> = Vec::new();
    let mut singles = Vec::new();
    for k in c.checks.iter().filter(|k| is_skipped(k)) {
        let name = k.name();
        let (Some(pct), Some(step), Some(reason)) = (
            k.percentile,
            k.concurrency,
            k.detail.strip_prefix(name.as_str()),
        ) else {
            singles.push(format!("{} · {}: {}", k.model, k.title(), k.detail));
            continue;
        };
        let pct = pct.label().to_string();
        let reason = reason.trim().to_string();
        let metric = k.metric.label().to_string();
        let pos = groups
            .iter()
            .position(|g| g.model == k.model && g.pct == pct && g.reason == reason);
        let g = match pos {
            Some(i) => &mut groups[i],
            None => {
                groups.push(Group {
                    model: k.model.clone(),
                    pct,
                    reason,
                    unit: k.ladder_unit,
                    steps: Vec::new(),
                    metrics: Vec::new(),
                });
                groups.last_mut().expect("just pushed")
            }
        };
        if !g.steps.contains(&step) {
            g.steps.push(step);
        }
        if !g.metrics.contains(&metric) {
            g.metrics.push(metric);
        }
    }
    let mut lines: Vec<String> = groups
        .into_iter()
        .map(|g| {
            format!(
                "{} · {} at {} ({}): {}",
                g.model,
                g.pct,
                g.unit.describe_all(&g.steps),
                g.metrics.join(", "),
                g.reason
            )
        })
        .collect();
    lines.extend(singles);
    lines
}

fn list(out: &mut dyn Write, heading: &str, items: &[String], bullet: &str) -> io::Result<()> {
    if items.is_empty() {
        return Ok(());
    }
    writeln!(out, "{heading}")?;
    for i in items {
        writeln!(out, "{bullet}{i}")?;
    }
    Ok(())
}

/// Markdown text: `<`, `>` and `&` as entities so that names are not taken for HTML, one line.
fn md_text(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace(['\n', '\r'], " ")
}

/// Markdown table cell: additionally, no pipe may leak into the table syntax.
fn cell(s: &str) -> String {
    md_text(&s.replace('\\', "\\\\").replace('|', "\\|"))
}

/// Inline code span that survives backticks in the content.
fn code(s: &str) -> String {
    let fence = "`".repeat(longest_backtick_run(s) + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{}{pad}{fence}", s.replace(['\n', '\r'], " "))
}

fn longest_backtick_run(s: &str) -> usize {
    s.split(|ch| ch != '`').map(str::len).max().unwrap_or(0)
}

/// A markdown table row's first cells, the same in every table of checks: model, step, check,
/// base, new and change, up to the bar before the next cell.
pub(super) fn md_check_cells(k: &Check) -> String {
    format!(
        "| {} | {} | {} | {} | {} | {} |",
        cell(&k.model),
        step_cell(k),
        k.name(),
        value(k, k.base),
        value(k, k.new),
        change(k)
    )
}

/// Every check that was not skipped, with its explanation, folded into a `<details>` block.
pub(super) fn md_all_checks(c: &Comparison, out: &mut dyn Write) -> io::Result<()> {
    let rest: Vec<&Check> = c.checks.iter().filter(|k| !is_skipped(k)).collect();
    if rest.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "<details><summary>All checks with explanations ({})</summary>\n",
        rest.len()
    )?;
    writeln!(
        out,
        "| model | {} | check | base | new | change | verdict | detail |",
        step_header(c.checks.iter())
    )?;
    writeln!(out, "|---|---:|---|---:|---:|---:|---|---|")?;
    for k in rest {
        writeln!(
            out,
            "{} {} | {} |",
            md_check_cells(k),
            verdict(k),
            cell(&k.detail)
        )?;
    }
    writeln!(out, "\n</details>")
}

fn md_list(out: &mut dyn Write, heading: &str, items: &[String]) -> io::Result<()> {
    if items.is_empty() {
        return Ok(());
    }
    writeln!(out, "{heading}\n")?;
    for i in items {
        writeln!(out, "- {}", md_text(i))?;
    }
    writeln!(out)
}

/// The JSON document (`--format json`), one object:
/// `schema_version` (u32), `outcome` ("pass" | "regression" | "inconclusive" | "refused" |
/// "incomplete": a side did not finish and no regression showed, exit 1),
/// `exit_code` (0 | 1 | 3 | 4), `counts` {regressed, improved, below_gate, no_change,
/// inconclusive, skipped} over gated checks,
/// then the `Comparison` fields: `base_label`, `new_label`, `base_fingerprint`,
/// `new_fingerprint`, `run_dir` (the new run's directory, when it is one), `gates` (which gates
/// were applied, in words), `warnings`, `strict`, `refused` (null or {base_fp, new_fp, unified_diff}),
/// `checks` (array of {model, step, concurrency, ladder_unit, title, metric, percentile, gated,
/// base, new, ratio, ci: [lo, hi] | null, method, verdict: {kind, reason? (skipped),
/// requests_per_step? (inconclusive)}, detail, set_aside? (true: at a step whose client did
/// not keep up)}), `unmatched`, `notes`, `incomplete` (the sides that did not finish, in words;
/// empty when both did), `invalid_steps` (array of {model, concurrency, ladder_unit, side:
/// "baseline" | "new", shortfalls: [{kind: "thin_load" | "late_sends" | "late_loop", …}],
/// sentence}: steps whose client did not keep up; empty when none).
/// `step` is the new run's 1-based step index (as in `summary.csv`); `concurrency` is the
/// ladder value the sides were matched on, counted in `ladder_unit` (`streams`, `rps`,
/// `prompt_tokens`); `title` names the check for people ("TTFT P90 at 20 streams").
/// Units: latencies ms, error rate a fraction, TPM per minute, RPS per second, knee/wall a
/// ladder value in `ladder_unit`; `ratio` and `ci` are relative changes (0.25 = +25%).
#[derive(Serialize)]
struct JsonDoc<'a> {
    schema_version: u32,
    outcome: Outcome,
    exit_code: u8,
    counts: Counts,
    run_dir: Option<&'a str>,
    gates: Option<&'a str>,
    warnings: &'a [String],
    base_label: &'a str,
    new_label: &'a str,
    base_fingerprint: &'a str,
    new_fingerprint: &'a str,
    strict: bool,
    refused: &'a Option<crate::compare::WorkloadMismatch>,
    /// What happened, capacity first: one sentence per model (the cap, the knee, the wall, the
    /// SLO capacity, with the strongest latency change as evidence).
    headline: &'a [String],
    checks: Vec<JsonCheck<'a>>,
    unmatched: &'a [String],
    notes: &'a [String],
    incomplete: &'a [String],
    /// Steps whose client did not keep up: their checks are set aside (inconclusive).
    invalid_steps: &'a [crate::compare::InvalidStep],
    /// Which part of TTFT moved in each TTFT P90 regression, and its cause (seen or inferred).
    ttft_causes: &'a [crate::compare::TtftCause],
}

/// A check with its human name beside its fields, so scripts need not rebuild it.
#[derive(Serialize)]
struct JsonCheck<'a> {
    #[serde(flatten)]
    check: &'a Check,
    title: String,
    /// Set aside at a step whose client did not keep up.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    set_aside: bool,
}

fn json(c: &Comparison, ctx: &DiffContext, out: &mut dyn Write) -> io::Result<()> {
    let doc = JsonDoc {
        schema_version: JSON_SCHEMA_VERSION,
        outcome: c.outcome(),
        exit_code: c.exit_code().code(),
        counts: c.counts(),
        run_dir: ctx.run_dir.as_deref(),
        gates: ctx.gates.as_deref(),
        warnings: &ctx.warnings,
        base_label: &c.base_label,
        new_label: &c.new_label,
        base_fingerprint: &c.base_fingerprint,
        new_fingerprint: &c.new_fingerprint,
        strict: c.strict,
        refused: &c.refused,
        headline: &c.headline,
        checks: c
            .checks
            .iter()
            .map(|check| JsonCheck {
                check,
                title: check.title(),
                set_aside: check.is_set_aside(),
            })
            .collect(),
        unmatched: &c.unmatched,
        notes: &c.notes,
        incomplete: &c.incomplete,
        invalid_steps: &c.invalid,
        ttft_causes: &c.ttft_causes,
    };
    serde_json::to_writer_pretty(&mut *out, &doc).map_err(io::Error::other)?;
    writeln!(out)
}
