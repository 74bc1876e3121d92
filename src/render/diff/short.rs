//! The short verdict, what `diff` and `run --against` print by default in the terminal and in
//! markdown (`--full` prints every check instead): the outcome, what was judged (how many checks
//! of which models, at which steps, on which metrics), what could not be decided and why (one
//! line per group of skipped or inconclusive checks), and the regressed and inconclusive checks
//! as rows of a grid: one row per check name, one column per step, so 22 regressions read as 6
//! rows. JSON and JUnit always hold every check.

use std::io::{self, Write};

use tabled::builder::Builder;
use tabled::settings::Style;

use super::{
    cell, change, grouped_skips, is_skipped, list, md_list, md_text, APPROX_MARK, APPROX_NOTE,
};
use crate::compare::{Check, Comparison, Method, Metric, Percentile, Verdict};
use crate::model::LadderUnit;

/// A regressed check's mark in the grid.
const REGRESSED: &str = "✗";
/// An inconclusive check's mark.
const INCONCLUSIVE: &str = "?";
/// An improved check's mark.
const IMPROVED: &str = "✓";
/// A check that passed (no change, or a change within the gate).
const PASSED: &str = "ok";

/// What the marks of the grid mean.
pub(crate) const LEGEND: &str = "✗ regressed, ? inconclusive, ✓ improved (change from the baseline); ok: no change or within the gate";

/// Gated checks that were judged (not skipped).
fn judged(c: &Comparison) -> impl Iterator<Item = &Check> {
    c.checks.iter().filter(|k| k.gated && !is_skipped(k))
}

fn flagged(k: &Check) -> bool {
    k.gated && matches!(k.verdict, Verdict::Regressed | Verdict::Inconclusive { .. })
}

fn distinct<T: PartialEq>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut out = Vec::new();
    for i in items {
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

/// The steps of `checks` in ladder order, with the unit they count.
fn steps<'a>(checks: impl IntoIterator<Item = &'a Check>) -> (Vec<u32>, LadderUnit) {
    let checks: Vec<&Check> = checks.into_iter().collect();
    let mut steps = distinct(checks.iter().filter_map(|k| k.concurrency));
    steps.sort_unstable();
    let unit = checks
        .first()
        .map_or(LadderUnit::Streams, |k| k.ladder_unit);
    (steps, unit)
}

/// "judged: 34 checks of sim-model at 5, 10, 20 and 50 streams: TTFT P90, TPOT P90, …, knee".
pub(crate) fn judged_line(c: &Comparison) -> String {
    let checks: Vec<&Check> = judged(c).collect();
    if checks.is_empty() {
        return "judged: nothing (every gate was skipped)".into();
    }
    let models = distinct(checks.iter().map(|k| k.model.as_str()));
    let models = match models.as_slice() {
        [one] => (*one).to_string(),
        many => format!("{} models ({})", many.len(), many.join(", ")),
    };
    let (steps, unit) = steps(checks.iter().copied());
    let at = if steps.is_empty() {
        String::new()
    } else {
        format!(" at {}", unit.describe_all(&steps))
    };
    let names = distinct(checks.iter().map(|k| k.name()));
    let n = checks.len();
    format!(
        "judged: {n} {} of {models}{at}: {}",
        if n == 1 { "check" } else { "checks" },
        names.join(", ")
    )
}

/// The inconclusive gated checks, one line per model × percentile (or per model and metric
/// when the check has no percentile): "sim-model · P90 at 20 and 50 streams (TTFT, E2E): about
/// 990 to 85,970 requests per step would decide them".
pub(crate) fn inconclusive_groups(c: &Comparison) -> Vec<String> {
    struct Group {
        model: String,
        pct: Option<&'static str>,
        unit: LadderUnit,
        steps: Vec<u32>,
        metrics: Vec<&'static str>,
        requests: Vec<u64>,
        n: usize,
    }
    let mut groups: Vec<Group> = Vec::new();
    // Checks set aside at a step whose client did not keep up are the `invalid:` lines' to
    // explain: no number of requests would decide them.
    for k in c.checks.iter().filter(|k| {
        k.gated && matches!(k.verdict, Verdict::Inconclusive { .. }) && !k.is_set_aside()
    }) {
        // On queued steps P50 and the mean are judged together: one line for both.
        let pct = k.percentile.map(|p| match p {
            Percentile::P50 | Percentile::Mean => "P50 and mean",
            p => p.label(),
        });
        let metric = k.metric.label();
        let pos = groups.iter().position(|g| {
            g.model == k.model && g.pct == pct && (pct.is_some() || g.metrics == [metric])
        });
        let g = match pos {
            Some(i) => &mut groups[i],
            None => {
                groups.push(Group {
                    model: k.model.clone(),
                    pct,
                    unit: k.ladder_unit,
                    steps: Vec::new(),
                    metrics: Vec::new(),
                    requests: Vec::new(),
                    n: 0,
                });
                groups.last_mut().expect("just pushed")
            }
        };
        g.n += 1;
        g.steps
            .extend(k.concurrency.filter(|s| !g.steps.contains(s)));
        if !g.metrics.contains(&metric) {
            g.metrics.push(metric);
        }
        if let Verdict::Inconclusive {
            requests_per_step: Some(r),
        } = k.verdict
        {
            g.requests.push(r);
        }
    }
    groups
        .into_iter()
        .map(|mut g| {
            g.steps.sort_unstable();
            let at = if g.steps.is_empty() {
                String::new()
            } else {
                format!(" at {}", g.unit.describe_all(&g.steps))
            };
            let what = match g.pct {
                Some(p) => format!("{p}{at} ({})", g.metrics.join(", ")),
                None => format!("{}{at}", g.metrics.join(", ")),
            };
            let them = if g.n == 1 { "it" } else { "them" };
            let decide = match (g.requests.iter().min(), g.requests.iter().max()) {
                (Some(lo), Some(hi)) if lo == hi => {
                    format!(
                        "about {} requests per step would decide {them}",
                        grouped(*lo)
                    )
                }
                (Some(lo), Some(hi)) => format!(
                    "about {} to {} requests per step would decide {them}",
                    grouped(*lo),
                    grouped(*hi)
                ),
                _ => "more requests per step would narrow the CI".to_string(),
            };
            format!("{} · {what}: {decide}", g.model)
        })
        .collect()
}

/// 85970 -> "85,970".
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// The regressed and inconclusive checks of the steps as a grid: a row per model × check name
/// that regressed or was inconclusive at some step, a column per step, each cell that check's
/// verdict mark and change there. `None` when nothing regressed at a step: then the
/// grid would only repeat the inconclusive list above it (an unchanged rerun whose queued steps
/// need more requests to decide would show a grid of "? +0.0%").
pub(crate) struct Grid {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// Whether a cell's verdict came from the approximate rule.
    pub approximate: bool,
}

pub(crate) fn grid(c: &Comparison) -> Option<Grid> {
    let at_steps = |k: &&Check| k.concurrency.is_some();
    let flagged_checks: Vec<&Check> = c
        .checks
        .iter()
        .filter(at_steps)
        .filter(|k| flagged(k))
        .collect();
    if !flagged_checks
        .iter()
        .any(|k| k.verdict == Verdict::Regressed)
    {
        return None;
    }
    // Rows by model and metric in the checks' order, then by percentile (P50, P90, P99, mean),
    // whichever step flagged them first.
    let metrics = distinct(c.checks.iter().map(|k| k.metric));
    let model_order = distinct(c.checks.iter().map(|k| k.model.as_str()));
    let mut keyed = distinct(flagged_checks.iter().map(|k| {
        let key = (
            model_order.iter().position(|m| *m == k.model),
            metrics.iter().position(|m| *m == k.metric),
            k.percentile.map(|p| p as u8),
        );
        (key, (k.model.as_str(), k.name()))
    }));
    keyed.sort_by_key(|(key, _)| *key);
    let names: Vec<(&str, String)> = keyed.into_iter().map(|(_, n)| n).collect();
    if names.is_empty() {
        return None;
    }
    // The steps at which the grid's rows were checked, judged or not.
    let (steps, unit) = steps(
        c.checks
            .iter()
            .filter(at_steps)
            .filter(|k| names.contains(&(k.model.as_str(), k.name()))),
    );
    let models = distinct(c.checks.iter().map(|k| k.model.as_str()));
    let mut header = vec!["check".to_string()];
    header.extend(steps.iter().map(|s| unit.describe(*s)));
    let rows = names
        .iter()
        .map(|(model, name)| {
            let label = if models.len() > 1 {
                format!("{model} · {name}")
            } else {
                name.clone()
            };
            let mut row = vec![label];
            row.extend(steps.iter().map(|s| {
                c.checks
                    .iter()
                    .find(|k| k.model == *model && &k.name() == name && k.concurrency == Some(*s))
                    .map_or_else(String::new, grid_cell)
            }));
            row
        })
        .collect();
    let approximate = c.checks.iter().any(|k| {
        k.method == Method::Approximate
            && k.concurrency.is_some_and(|s| steps.contains(&s))
            && names.contains(&(k.model.as_str(), k.name()))
    });
    Some(Grid {
        header,
        rows,
        approximate,
    })
}

fn grid_cell(k: &Check) -> String {
    let mark = match k.verdict {
        Verdict::Regressed => REGRESSED,
        Verdict::Inconclusive { .. } => INCONCLUSIVE,
        Verdict::Improved => IMPROVED,
        Verdict::Skipped { .. } => return "skipped".into(),
        Verdict::Info => return String::new(),
        Verdict::NoChange | Verdict::BelowGate => return PASSED.into(),
    };
    let approx = if k.method == Method::Approximate {
        format!(" {APPROX_MARK}")
    } else {
        String::new()
    };
    match change(k) {
        c if c.is_empty() => format!("{mark}{approx}"),
        c => format!("{mark} {c}{approx}"),
    }
}

/// Regressed or inconclusive checks that belong to no step (knee, wall, capacity), one line each.
/// The cap and the SLO capacity are the headline's to say (and an undecided one is listed with
/// the inconclusive checks), so they get no second line here.
pub(crate) fn run_level(c: &Comparison) -> Vec<String> {
    c.checks
        .iter()
        .filter(|k| k.concurrency.is_none() && flagged(k))
        .filter(|k| !matches!(k.metric, Metric::Cap | Metric::Capacity))
        .map(|k| {
            let mark = if k.verdict == Verdict::Regressed {
                REGRESSED
            } else {
                INCONCLUSIVE
            };
            format!("{mark} {} · {}: {}", k.model, k.title(), k.detail)
        })
        .collect()
}

/// How many rows `--full` would print (every check that was not skipped).
fn full_rows(c: &Comparison) -> usize {
    c.checks.iter().filter(|k| !is_skipped(k)).count()
}

/// The terminal's short verdict, after the heading, warnings and outcome lines.
pub(super) fn table(c: &Comparison, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "{}", judged_line(c))?;
    let skipped = grouped_skips(c);
    list(out, "skipped:", &skipped, "  ")?;
    list(
        out,
        "inconclusive (the CI spans 0 and reaches past the gate):",
        &inconclusive_groups(c),
        "  ",
    )?;
    if let Some(g) = grid(c) {
        let mut b = Builder::default();
        b.push_record(g.header);
        for r in g.rows {
            b.push_record(r);
        }
        let mut t = b.build();
        t.with(Style::rounded());
        writeln!(out, "{t}")?;
        writeln!(out, "{LEGEND}")?;
        if g.approximate {
            writeln!(out, "{APPROX_NOTE}")?;
        }
    }
    for line in run_level(c) {
        writeln!(out, "{line}")?;
    }
    list(out, "only on one side:", &c.unmatched, "  ")?;
    match c.notes.as_slice() {
        [] => {}
        [one] => writeln!(out, "{one}")?,
        many => list(out, "notes:", many, "  ")?,
    }
    let n = full_rows(c);
    if n > 0 {
        writeln!(out, "every check ({n} rows, with the reasons): --full")?;
    }
    Ok(())
}

/// The markdown short verdict, after the heading, warnings and outcome lines: what was judged,
/// what was not decided, the grid, and every check folded into a `<details>` block.
pub(super) fn markdown(c: &Comparison, out: &mut dyn Write) -> io::Result<()> {
    let judged = judged_line(c);
    let judged = judged.strip_prefix("judged: ").unwrap_or(&judged);
    writeln!(out, "Judged {}.\n", md_text(judged))?;
    let grid = grid(c);
    let run_level = run_level(c);
    if grid.is_some() || !run_level.is_empty() {
        writeln!(out, "### Regressed and inconclusive checks\n")?;
    }
    if let Some(g) = grid {
        let cells = |r: &[String]| r.iter().map(|s| cell(s)).collect::<Vec<_>>().join(" | ");
        writeln!(out, "| {} |", cells(&g.header))?;
        writeln!(out, "|---|{}", "---:|".repeat(g.header.len() - 1))?;
        for r in &g.rows {
            writeln!(out, "| {} |", cells(r))?;
        }
        writeln!(out, "\n{}\n", md_text(LEGEND))?;
        if g.approximate {
            writeln!(out, "{}\n", md_text(APPROX_NOTE))?;
        }
    }
    for line in &run_level {
        writeln!(out, "- {}", md_text(line))?;
    }
    if !run_level.is_empty() {
        writeln!(out)?;
    }
    let mut undecided: Vec<String> = grouped_skips(c)
        .into_iter()
        .map(|l| format!("skipped: {l}"))
        .collect();
    undecided.extend(
        inconclusive_groups(c)
            .into_iter()
            .map(|l| format!("inconclusive (the CI spans 0 and reaches past the gate): {l}")),
    );
    md_list(out, "### Not decided", &undecided)?;
    md_list(out, "### Only on one side", &c.unmatched)?;
    md_list(out, "### Notes", &c.notes)?;
    super::md_all_checks(c, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(grouped(7), "7");
        assert_eq!(grouped(990), "990");
        assert_eq!(grouped(85_970), "85,970");
        assert_eq!(grouped(1_234_567), "1,234,567");
    }
}
