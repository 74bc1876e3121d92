//! The terminal tables `ladder run` prints after a run: one table per model with a row per
//! ladder step (latency percentiles, errors, throughput, goodput), and, when a scenario has
//! several models, a side-by-side table that marks the fastest model at each step. Pure: rows in,
//! a `String` out; numbers are formatted for people, not for machines (the CSVs are for those).

use crate::model::LadderUnit;
use crate::stats::{models_of, Counted, Profile, StepSummary};
use tabled::builder::Builder;
use tabled::settings::object::{Columns, Rows};
use tabled::settings::style::{BorderSpanCorrection, HorizontalLine};
use tabled::settings::{Alignment, Span, Style};

const RUN_HEADER: [&str; 10] = [
    "streams",
    "n",
    "errors",
    "TTFT P50/P90/P99",
    "TPOT P50/P90/P99",
    "ITL P99",
    "E2E P90",
    "output TPM",
    "RPS",
    "goodput",
];
const COMPARE_METRICS: [&str; 4] = ["TTFT P90", "TPOT P50", "output TPM", "errors"];
/// The comparison's columns for embeddings (no token: E2E and the input tokens per minute).
const COMPARE_INPUT_ONLY: [&str; 4] = ["E2E P90", "E2E P50", "input TPM", "errors"];
const ERRORS_COLUMN: usize = 2;
/// Where the reasoning columns go (after TTFT) when a model's steps reasoned.
const REASONING_AT: usize = 4;
const REASONING_HEADER: [&str; 2] = ["TTFC P50/P90/P99", "reasoning"];

/// Per-model step tables: a `model: <name>` heading line, then the table; models in order of
/// first appearance, steps ascending. `color` only makes the heading bold; without it the
/// output has no ANSI codes.
pub fn run_table(rows: &[StepSummary], color: bool) -> String {
    run_table_marked(rows, color, None)
}

/// The step a run stopped in, the requests it planned there (`None` for a step that runs for a
/// duration) and why it stopped, in short (`StoppedBy::short`): its `n` cell reads
/// `26/48 (interrupted)` or `0/40 (fail-fast: connect)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interrupted<'a> {
    pub model: &'a str,
    pub step: u32,
    pub planned: Option<u64>,
    pub why: &'a str,
}

/// `run_table`, with the interrupted step marked.
pub fn run_table_marked(
    rows: &[StepSummary],
    color: bool,
    interrupted: Option<Interrupted>,
) -> String {
    run_table_priced(rows, color, interrupted, None)
}

/// `run_table_marked`, with the currency of the run's `pricing:` named in the cost columns'
/// headers (`USD/1k ok`, `USD/1M out`). A model whose steps were priced gets the two cost
/// columns (per 1,000 successful requests, per 1M output tokens) at the end; others do not.
pub fn run_table_priced(
    rows: &[StepSummary],
    color: bool,
    interrupted: Option<Interrupted>,
    currency: Option<&str>,
) -> String {
    let mut out = String::new();
    for (i, model) in models_of(rows).into_iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if color {
            out.push_str(&format!("\x1b[1mmodel: {model}\x1b[0m\n"));
        } else {
            out.push_str(&format!("model: {model}\n"));
        }
        let steps = steps_of(rows, model);
        let mut b = Builder::default();
        // What the model's steps measured decides the optional columns: rate ladders add the
        // send lag and TTFT from the scheduled time, prompt caches their share, a model that
        // reasoned the answer's wait (TTFC) and the reasoning share next to TTFT, embeddings
        // E2E's three percentiles and the input tokens they processed, a priced run its cost.
        let shown = Profile::of(steps.iter().copied());
        let mut header: Vec<String> = RUN_HEADER.iter().map(|h| h.to_string()).collect();
        header[0] = unit_header(steps.first().map(|r| r.ladder_unit)).into();
        header[TPM_COLUMN] = shown.tpm_header().into();
        if shown.counted == Counted::Input {
            header.splice(E2E_COLUMN..=TPM_COLUMN, INPUT_ONLY_HEADER.map(String::from));
        }
        if shown.reasoning {
            header.splice(
                REASONING_AT..REASONING_AT,
                REASONING_HEADER.map(String::from),
            );
        }
        if shown.scheduled {
            header.extend(["send lag P99".into(), "TTFT P90 sched".into()]);
        }
        if shown.cached {
            header.push("cached".into());
        }
        if shown.priced {
            let unit = currency.unwrap_or("cost");
            header.extend([format!("{unit}/1k ok"), format!("{unit}/1M out")]);
        }
        b.push_record(header);
        for r in steps {
            b.push_record(step_cells(r, interrupted, shown));
        }
        let mut table = b.build();
        table
            .with(Style::rounded())
            .modify(Columns::new(..), Alignment::right())
            .modify(Columns::single(ERRORS_COLUMN), Alignment::left())
            .modify(Rows::first(), Alignment::center());
        out.push_str(&table.to_string());
        out.push('\n');
        if let Some((header, cells)) = conversation_cells(&steps_of(rows, model)) {
            let mut b = Builder::default();
            b.push_record(header);
            cells.into_iter().for_each(|row| b.push_record(row));
            let mut table = b.build();
            table
                .with(Style::rounded())
                .modify(Columns::new(..), Alignment::right())
                .modify(Rows::first(), Alignment::center());
            out.push_str(&format!("conversations:\n{table}\n"));
        }
        if let Some(note) = shown.unmeasured_note() {
            out.push_str(note);
            out.push('\n');
        }
    }
    out
}

/// The E2E and TPM columns of the run table, and what an embeddings model shows there.
const E2E_COLUMN: usize = 6;
const TPM_COLUMN: usize = 7;
const INPUT_ONLY_HEADER: [&str; 3] = ["E2E P50/P90/P99", "input TPM", "input tok/s"];

/// One step's row of the run table.
fn step_cells(r: &StepSummary, interrupted: Option<Interrupted>, shown: Profile) -> Vec<String> {
    let mut extra = Vec::new();
    if shown.scheduled {
        extra.push(fmt_ms(r.send_lag_p99_ms));
        extra.push(fmt_ms(r.ttft_sched_p90_ms));
    }
    if shown.cached {
        extra.push(fmt_share(r.cache_hit_share()));
    }
    if shown.priced {
        let cost = |c: Option<f64>| c.map_or_else(|| "-".to_string(), crate::model::cost_text);
        extra.push(cost(r.cost_per_1k_ok));
        extra.push(cost(r.cost_per_1m_output));
    }
    let measured = |cell: String| {
        if shown.streamed() {
            cell
        } else {
            "–".to_string()
        }
    };
    // A shard's share of a rate step need not be whole: show the rate it offered.
    let value = match r.offered_rps {
        Some(o) if r.ladder_unit == LadderUnit::Rps && o != f64::from(r.concurrency) => {
            crate::scenario::arrivals::rate_text(o)
        }
        _ => r.concurrency.to_string(),
    };
    let mut cells: Vec<String> = [
        value,
        match interrupted {
            Some(i) if i.model == r.model && i.step == r.step => format!(
                "{}/{} ({})",
                r.succeeded,
                i.planned.map_or_else(|| "?".to_string(), |p| p.to_string()),
                i.why
            ),
            _ => format!("{}/{}", r.succeeded, r.attempted),
        },
        errors_cell(r),
        measured(triple(r.ttft_p50_ms, r.ttft_p90_ms, r.ttft_p99_ms)),
        measured(triple(r.tpot_p50_ms, r.tpot_p90_ms, r.tpot_p99_ms)),
        measured(fmt_ms(r.itl_p99_ms)),
        fmt_ms(r.e2e_p90_ms),
        fmt_tpm(shown.tpm(r)),
        fmt_rps(r.throughput(false)),
        fmt_share(r.goodput),
    ]
    .into_iter()
    .chain(extra)
    .collect();
    if shown.counted == Counted::Input {
        let in_tpm = shown.tpm(r);
        cells.splice(
            E2E_COLUMN..=TPM_COLUMN,
            [
                triple(r.e2e_p50_ms, r.e2e_p90_ms, r.e2e_p99_ms),
                fmt_tpm(in_tpm),
                fmt_tpm(in_tpm / 60.0),
            ],
        );
    }
    if shown.reasoning {
        cells.splice(
            REASONING_AT..REASONING_AT,
            [
                triple(r.ttfc_p50_ms, r.ttfc_p90_ms, r.ttfc_p99_ms),
                fmt_share(r.reasoning_share),
            ],
        );
    }
    cells
}

/// A model's steps in ladder order.
fn steps_of<'a>(rows: &'a [StepSummary], model: &str) -> Vec<&'a StepSummary> {
    let mut steps: Vec<&StepSummary> = rows.iter().filter(|r| r.model == model).collect();
    steps.sort_by_key(|r| r.ladder_order());
    steps
}

/// The conversations of a model's steps (agents, sessions: `stats::turns`): the header and a
/// row per step: the cache hit share overall and by turn, TTFT P50/P90 of first and later
/// turns, complete tasks, their end-to-end time and tokens, and for agents the share of
/// synthetic tool calls sent back. `None` when no step had turns.
pub fn conversation_cells(steps: &[&StepSummary]) -> Option<(Vec<String>, Vec<Vec<String>>)> {
    if steps
        .iter()
        .all(|r| r.cache_hit_by_turn.is_empty() && r.tasks == 0)
    {
        return None;
    }
    let mut header = vec![
        unit_header(steps.first().map(|r| r.ladder_unit)),
        "cache hit",
        "cache hit by turn",
        "TTFT 1st turn P50/P90",
        "TTFT later P50/P90",
        "tasks",
        "task E2E P50/P90",
        "tokens/task",
    ];
    // Agents: how many of the calls sent back were made up (the model made none).
    let synthetic = steps.iter().any(|r| r.synthetic_call_share.is_some());
    if synthetic {
        header.push("synthetic calls");
    }
    let pair = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (None, None) => "-".to_string(),
        _ => format!("{} / {}", fmt_ms(a), fmt_ms(b)),
    };
    let rows = steps
        .iter()
        .map(|r| {
            let turns = r.cache_hit_by_turn();
            // Long tasks: the first five turns and the last.
            let shown: Vec<String> = turns
                .iter()
                .enumerate()
                .filter(|&(i, _)| i < 5 || i + 1 == turns.len())
                .map(|(i, (t, s))| {
                    let gap = if i == 5 && turns.len() > 6 {
                        "… "
                    } else {
                        ""
                    };
                    format!("{gap}{t}: {:.0}%", s * 100.0)
                })
                .collect();
            let mut row = vec![
                r.concurrency.to_string(),
                fmt_share(r.cache_hit_share()),
                if shown.is_empty() {
                    "-".into()
                } else {
                    shown.join(" · ")
                },
                pair(r.ttft_first_p50_ms, r.ttft_first_p90_ms),
                pair(r.ttft_later_p50_ms, r.ttft_later_p90_ms),
                r.tasks.to_string(),
                pair(r.task_e2e_p50_ms, r.task_e2e_p90_ms),
                r.task_tokens_mean
                    .map_or_else(|| "-".into(), |t| thousands(t.round() as u64)),
            ];
            if synthetic {
                row.push(fmt_share(r.synthetic_call_share));
            }
            row
        })
        .collect();
    Some((header.into_iter().map(String::from).collect(), rows))
}

/// Side-by-side comparison per step (streams, then per model TTFT P90, TPOT P50, TPM, failed
/// count; for embeddings E2E P90, E2E P50, input TPM, failed count), the model with the lowest
/// TTFT P90 (embeddings: E2E P90) at each step marked `*`. `None` for fewer than 2 models.
pub fn compare_models_table(rows: &[StepSummary]) -> Option<String> {
    let models = models_of(rows);
    if models.len() < 2 {
        return None;
    }
    let profile = Profile::of(rows);
    let (mut metrics, first) = match profile.counted {
        Counted::Input => (COMPARE_INPUT_ONLY, "E2E P90"),
        Counted::Output => (COMPARE_METRICS, "TTFT P90"),
    };
    metrics[2] = profile.tpm_header();
    let lead = |r: &StepSummary| match profile.counted {
        Counted::Input => r.e2e_p90_ms,
        Counted::Output => r.ttft_p90_ms,
    };
    let mut steps: Vec<u32> = rows.iter().map(|r| r.step).collect();
    steps.sort_unstable();
    steps.dedup();

    let mut b = Builder::default();
    let mut top = vec![String::new()];
    let mut sub = vec![unit_header(rows.first().map(|r| r.ladder_unit)).to_string()];
    for m in &models {
        top.push(m.to_string());
        top.extend(std::iter::repeat(String::new()).take(metrics.len() - 1));
        sub.extend(metrics.iter().map(|s| s.to_string()));
    }
    b.push_record(top);
    b.push_record(sub);
    for step in steps {
        let at: Vec<Option<&StepSummary>> = models
            .iter()
            .map(|m| rows.iter().find(|r| r.step == step && r.model == *m))
            .collect();
        let streams = at.iter().flatten().next().map_or(0, |r| r.concurrency);
        let best = at
            .iter()
            .flatten()
            .filter_map(|r| lead(r))
            .filter(|v| v.is_finite())
            .min_by(f64::total_cmp);
        let mut record = vec![streams.to_string()];
        for r in at {
            let Some(r) = r else {
                record.extend(std::iter::repeat("-".to_string()).take(metrics.len()));
                continue;
            };
            let mut lead_cell = fmt_ms(lead(r));
            if lead(r).is_some() && lead(r) == best {
                lead_cell.push_str(" *");
            }
            let errors = if r.failed == 0 {
                "-".to_string()
            } else {
                r.failed.to_string()
            };
            let second = match profile.counted {
                Counted::Input => r.e2e_p50_ms,
                Counted::Output => r.tpot_p50_ms,
            };
            record.extend([lead_cell, fmt_ms(second), fmt_tpm(profile.tpm(r)), errors]);
        }
        b.push_record(record);
    }
    // Two header rows (model names spanning their metrics, then metric names): the rule goes
    // under the second one.
    let style = Style::rounded().horizontals([(2, HorizontalLine::full('─', '┼', '├', '┤'))]);
    let mut table = b.build();
    table
        .with(style)
        .modify(Columns::new(..), Alignment::right())
        .modify(Rows::new(..2), Alignment::center());
    for i in 0..models.len() {
        let at = 1 + i * metrics.len();
        table.modify((0, at), Span::column(metrics.len()));
    }
    table.with(BorderSpanCorrection);
    Some(format!("{table}\n* lowest {first} at that step\n"))
}

/// The first column's name: what the ladder's values count.
fn unit_header(unit: Option<LadderUnit>) -> &'static str {
    unit.unwrap_or_default().header()
}

/// `-` when nothing failed, else `3 (429×2, 5xx×1)`; short responses (possible truncation)
/// and dropped arrivals follow: `- · 4 short`, `2 (5xx×2) · 9 dropped`.
fn errors_cell(r: &StepSummary) -> String {
    let mut out = failed_cell(r);
    for (n, what) in [(r.short, "short"), (r.dropped, "dropped")] {
        if n > 0 {
            out.push_str(&format!(" · {n} {what}"));
        }
    }
    out
}

fn failed_cell(r: &StepSummary) -> String {
    if r.failed == 0 {
        return "-".to_string();
    }
    // Each class by name (`http_` dropped: `401×200, disconnect×3`), when the summary kept
    // them; else the four buckets of summaries written before.
    if !r.error_classes.is_empty() {
        let parts: Vec<String> = r
            .error_classes
            .split_whitespace()
            .filter_map(|p| p.split_once(':'))
            .map(|(class, n)| format!("{}×{n}", class.strip_prefix("http_").unwrap_or(class)))
            .collect();
        return format!("{} ({})", r.failed, parts.join(", "));
    }
    let parts: Vec<String> = [
        ("429", r.err_429),
        ("5xx", r.err_5xx),
        ("timeout", r.err_timeout),
        ("other", r.err_other),
    ]
    .into_iter()
    .filter(|&(_, n)| n > 0)
    .map(|(name, n)| format!("{name}×{n}"))
    .collect();
    if parts.is_empty() {
        r.failed.to_string()
    } else {
        format!("{} ({})", r.failed, parts.join(", "))
    }
}

/// `212 / 240 / 301`; a lone `-` when all three are missing.
fn triple(a: Option<f64>, b: Option<f64>, c: Option<f64>) -> String {
    if [a, b, c].iter().all(|v| v.map_or(true, |v| !v.is_finite())) {
        return "-".to_string();
    }
    format!("{} / {} / {}", fmt_ms(a), fmt_ms(b), fmt_ms(c))
}

/// A table cell of milliseconds (`util::duration::ms_figure`), `-` when absent.
fn fmt_ms(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), crate::util::duration::ms_figure)
}

/// Tokens per minute: `15,234` below a million, then `1.23M`.
fn fmt_tpm(v: f64) -> String {
    if !v.is_finite() {
        return "-".to_string();
    }
    if v.round() >= 1_000_000.0 {
        return format!("{:.2}M", v / 1_000_000.0);
    }
    thousands(v.round() as u64)
}

fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Requests per second: 2 decimals below 10, 1 below 100, then whole numbers.
fn fmt_rps(v: f64) -> String {
    if !v.is_finite() {
        "-".to_string()
    } else if v < 9.995 {
        format!("{v:.2}")
    } else if v < 99.95 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}

/// A share in [0, 1] as a percentage with one decimal.
fn fmt_share(v: Option<f64>) -> String {
    match v {
        Some(v) if v.is_finite() => format!("{:.1}%", v * 100.0),
        _ => "-".to_string(),
    }
}

#[cfg(test)]
#[path = "table_tests.rs"]
mod tests;
