//! A run that did not finish, as one side of a diff (docs/gate.md): a run killed
//! before it ended (`meta.json` says `complete: false`) or stopped with Ctrl-C (`interrupted:
//! true`). It says where the run stopped and which steps got fewer requests than the scenario
//! planned, as a warning that every diff format carries, and it restates the "requests per step
//! that would decide it" advice of inconclusive checks at those steps for the planned count: a
//! truncated step's count says when the run was stopped, not what the scenario asks for.
//!
//! Pure: `of` takes the facts of a run, still in memory (`run --against`) or as the store loaded
//! it (`app::side` reads them from its typed `meta.json` and recorded scenario).

use crate::compare::{gate_for, requests_to_decide, Check, Comparison, Verdict};
use crate::model::stopped::STOPPED_UNKNOWN;
use crate::model::{LadderUnit, StoppedBy};
use crate::scenario::{Budget, Gates, Load};
use crate::stats::StepSummary;
use crate::store::Meta;

/// A step that ended before it sent what the scenario planned.
#[derive(Debug, Clone, PartialEq)]
pub struct ShortStep {
    pub model: String,
    /// The step's ladder value (`summary.csv`'s `concurrency`).
    pub value: u32,
    pub unit: LadderUnit,
    pub attempted: u64,
    pub succeeded: u64,
    /// Requests the scenario planned for the step (estimated from the step's rate for
    /// duration-based steps: then `estimated` is set).
    pub planned: u64,
    pub estimated: bool,
}

/// One side of a diff that is an unfinished run.
#[derive(Debug, Clone, PartialEq)]
pub struct Partial {
    /// "the new run" or "the baseline".
    pub side: &'static str,
    /// The path shown to users.
    pub label: String,
    /// Killed (no `complete: true` in `meta.json`) rather than stopped early.
    pub killed: bool,
    /// Why it stopped early (`meta.json`'s `stopped_by`): a signal, or the fail-fast rule and
    /// the failure it saw. `None` for a killed run, or one written before it was kept.
    pub stopped_by: Option<StoppedBy>,
    /// Where it stopped, in words: `stopped in step 3 of 4 (at 20 streams)`.
    pub stopped: Option<String>,
    pub short: Vec<ShortStep>,
    /// Steps of the ladder the run never reached, named by their load, per model.
    pub never_ran: Vec<String>,
}

/// The unfinished-run facts of a run that did not finish: `killed` (it never wrote
/// `complete: true`) or interrupted; `meta` gives its models and ladder, `load` the plan its
/// steps are measured against, `stopped` where it stopped when known; `summaries` are its rows.
/// The one rule for `ladder diff` and `run --against`.
pub fn of(
    side: &'static str,
    label: String,
    killed: bool,
    meta: &Meta,
    load: Option<&Load>,
    stopped: Option<&str>,
    summaries: &[StepSummary],
) -> Partial {
    let mut short = Vec::new();
    let mut never_ran = Vec::new();
    let unit = summaries
        .first()
        .map_or(meta.ladder_unit, |s| s.ladder_unit);
    for model in &meta.models {
        let mut missing = Vec::new();
        for &value in &meta.ladder {
            let row = summaries
                .iter()
                .find(|s| &s.model == model && s.concurrency == value);
            let Some(row) = row else {
                missing.push(value);
                continue;
            };
            if let Some(s) = load.and_then(|l| short_step(l, row)) {
                short.push(s);
            }
        }
        if !missing.is_empty() {
            let whose = if meta.models.len() > 1 {
                format!("{model} ")
            } else {
                String::new()
            };
            never_ran.push(format!("{whose}at {}", unit.describe_all(&missing)));
        }
    }
    let stopped = stopped.map(str::to_string).or_else(|| {
        let last = short.last()?;
        let row = summaries
            .iter()
            .find(|s| s.model == last.model && s.concurrency == last.value)?;
        Some(format!(
            "stopped in step {} of {} ({})",
            row.step,
            meta.ladder.len(),
            last.unit.at(last.value)
        ))
    });
    Partial {
        side,
        label,
        killed,
        stopped_by: meta.stopped_by.clone().filter(|_| !killed),
        stopped,
        short,
        never_ran,
    }
}

/// Requests the scenario plans for a step with ladder value `value` (`None` for steps sized by
/// duration, whose count depends on the server): [`Load::planned_requests`].
pub fn planned_requests(load: &Load, value: u32) -> Option<u64> {
    load.planned_requests(value)
}

/// The step as a [`ShortStep`] when it sent fewer requests than planned. Duration-based steps
/// count as short when they lasted under 95% of the planned time; their planned count is the
/// measured rate over the planned duration.
fn short_step(load: &Load, row: &StepSummary) -> Option<ShortStep> {
    let (planned, estimated) = match (planned_requests(load, row.concurrency), load.budget) {
        (Some(p), _) => (p, false),
        (None, Budget::Duration(d)) => {
            let planned_s = d.as_secs_f64();
            if row.duration_s <= 0.0 || row.duration_s >= 0.95 * planned_s {
                return None;
            }
            let rate = row.attempted as f64 / row.duration_s;
            ((rate * planned_s).round() as u64, true)
        }
        (None, _) => return None,
    };
    (row.attempted < planned).then(|| ShortStep {
        model: row.model.clone(),
        value: row.concurrency,
        unit: row.ladder_unit,
        attempted: row.attempted,
        succeeded: row.succeeded,
        planned,
        estimated,
    })
}

impl Partial {
    /// One line for the verdict, naming the cause: "the new run (runs/x) stopped early: the
    /// first 5 requests to m all failed with connect (…)", "… was interrupted by SIGTERM".
    pub fn unfinished(&self) -> String {
        let how = if self.killed {
            "was killed before it finished".to_string()
        } else {
            self.how()
        };
        format!("{} ({}) {how}", self.side, self.label)
    }

    /// Why it stopped, in the words of [`StoppedBy::how`].
    fn how(&self) -> String {
        self.stopped_by
            .as_ref()
            .map_or_else(|| STOPPED_UNKNOWN.to_string(), StoppedBy::how)
    }

    /// The warning shown in every diff format.
    pub fn warning(&self) -> String {
        let how = if self.killed {
            "was killed before it finished (meta.json says complete: false)".to_string()
        } else {
            self.how()
        };
        let mut w = format!(
            "{} ({}) is an incomplete run: it {how}",
            self.side, self.label
        );
        if let Some(s) = &self.stopped {
            w.push_str(&format!(" and {s}"));
        }
        w.push('.');
        let steps: Vec<String> = self
            .short
            .iter()
            .map(|s| {
                let about = if s.estimated { "about " } else { "" };
                format!(
                    "{} {} has {} of {about}{} planned requests",
                    s.model,
                    s.unit.at(s.value),
                    s.attempted,
                    s.planned
                )
            })
            .collect();
        if !steps.is_empty() {
            w.push_str(&format!(
                " Cut short: {}; checks there rest on fewer requests than planned, and the requests per step that would decide an inconclusive one are counted against the planned number.",
                steps.join("; ")
            ));
        }
        if !self.never_ran.is_empty() {
            w.push_str(&format!(
                " Never ran: {} (listed as only on one side).",
                self.never_ran.join("; ")
            ));
        }
        w
    }

    fn short_at(&self, model: &str, value: u32) -> Option<&ShortStep> {
        self.short
            .iter()
            .find(|s| s.model == model && s.value == value)
    }
}

/// Restates the advice of inconclusive checks at steps that one side cut short, for the
/// scenario's planned count. The check's CI was measured with the truncated counts; with the
/// planned count on the short side its half-width shrinks like √(1/n_base + 1/n_new) (the
/// same 1/√n scaling the advice itself uses), and the advice is then computed from that CI and
/// the planned count with the one rule (`compare::requests_to_decide`).
pub fn restate_advice(
    c: &mut Comparison,
    gates: &Gates,
    (base, base_rows): (Option<&Partial>, &[StepSummary]),
    (new, new_rows): (Option<&Partial>, &[StepSummary]),
) {
    if base.is_none() && new.is_none() {
        return;
    }
    let succeeded = |rows: &[StepSummary], model: &str, value: u32| {
        rows.iter()
            .find(|s| s.model == model && s.concurrency == value)
            .map(|s| s.succeeded)
    };
    for k in c.checks.iter_mut() {
        let (Verdict::Inconclusive { requests_per_step }, Some(value)) =
            (&k.verdict, k.concurrency)
        else {
            continue;
        };
        let model = k.model.as_str();
        let bs = base.and_then(|p| p.short_at(model, value));
        let ns = new.and_then(|p| p.short_at(model, value));
        let Some(plan) = ns.or(bs) else { continue };
        let planned = plan.planned;
        let got = plan.attempted;
        let (Some(bn), Some(nn)) = (
            succeeded(base_rows, model, value),
            succeeded(new_rows, model, value),
        ) else {
            continue;
        };
        let (bf, nf) = (planned_successes(bs, bn), planned_successes(ns, nn));
        let gate = check_gate(gates, k);
        let about = if plan.estimated { "about " } else { "" };
        let stopped = format!(
            "the scenario plans {about}{planned} requests per step; {} got {got} {}",
            plan_side(bs.is_some(), ns.is_some()),
            plan.unit.at(value)
        );
        let (advice, need) = match (k.ci, gate) {
            (Some((lo, hi)), Some(g)) if bn > 0 && nn > 0 && bf > 0 && nf > 0 && g > 0.0 => {
                let inv = |n: u64| 1.0 / n as f64;
                let shrink = ((inv(bf) + inv(nf)) / (inv(bn) + inv(nn))).sqrt();
                let half = (hi - lo) / 2.0 * shrink;
                if half <= g {
                    (
                        format!("the planned {planned} requests per step may decide it ({stopped}): rerun the whole ladder"),
                        Some(planned),
                    )
                } else {
                    let need = requests_to_decide(planned, half, g);
                    let said = need.map_or_else(
                        || "more requests per step would be needed".to_string(),
                        |n| format!("about {n} requests per step would decide it"),
                    );
                    (format!("{said} ({stopped})"), need)
                }
            }
            _ => {
                let need = requests_per_step.map(|n| n.max(planned + 10));
                let said = need.map_or_else(
                    || "rerun the whole ladder first".to_string(),
                    |n| format!("about {n} requests per step would decide it"),
                );
                (format!("{said} ({stopped})"), need)
            }
        };
        let old_tail =
            requests_per_step.map(|n| format!("; about {n} requests per step would decide it"));
        match old_tail.filter(|t| k.detail.contains(t.as_str())) {
            Some(t) => k.detail = k.detail.replace(&t, &format!("; {advice}")),
            None => k.detail = format!("{}; {advice}", k.detail),
        }
        k.verdict = Verdict::Inconclusive {
            requests_per_step: need,
        };
    }
}

/// Successes the planned step would have had, at the step's measured success share (`n`, the
/// successes measured, when the side was not cut short).
fn planned_successes(s: Option<&ShortStep>, n: u64) -> u64 {
    match s {
        Some(s) if s.attempted > 0 => {
            ((s.planned as f64 * s.succeeded as f64 / s.attempted as f64).round() as u64).max(n)
        }
        _ => n,
    }
}

/// The gate a check is judged against: its percentile's for a latency, the throughput gate.
fn check_gate(gates: &Gates, k: &Check) -> Option<f64> {
    match (k.metric, k.percentile) {
        (m, Some(p)) if m.is_latency() => Some(p.gate(gate_for(gates, m))),
        (m, _) if m.is_throughput() => Some(gates.throughput),
        _ => None,
    }
}

fn plan_side(base: bool, new: bool) -> &'static str {
    match (base, new) {
        (true, true) => "both runs",
        (true, false) => "the baseline",
        _ => "the new run",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{Check, Method, Metric, Percentile};

    fn row(model: &str, value: u32, attempted: u64, succeeded: u64) -> StepSummary {
        StepSummary {
            model: model.into(),
            step: 2,
            concurrency: value,
            attempted,
            succeeded,
            ..StepSummary::default()
        }
    }

    fn inconclusive(value: u32, ci: (f64, f64), need: u64) -> Check {
        Check {
            model: "m".into(),
            step: Some(2),
            concurrency: Some(value),
            ladder_unit: LadderUnit::Streams,
            metric: Metric::Ttft,
            percentile: Some(Percentile::P90),
            gated: true,
            base: Some(100.0),
            new: Some(105.0),
            ratio: Some(0.05),
            ci: Some(ci),
            method: Method::Bootstrap,
            verdict: Verdict::Inconclusive {
                requests_per_step: Some(need),
            },
            detail: format!(
                "inconclusive: TTFT P90 +5.0%; about {need} requests per step would decide it"
            ),
        }
    }

    fn comparison(checks: Vec<Check>) -> Comparison {
        Comparison::of_checks(checks)
    }

    fn killed_at_4() -> Partial {
        Partial {
            side: "the new run",
            label: "runs/x/t".into(),
            killed: true,
            stopped_by: None,
            stopped: Some("stopped in step 2 of 3 (at 4 streams)".into()),
            short: vec![ShortStep {
                model: "m".into(),
                value: 4,
                unit: LadderUnit::Streams,
                attempted: 50,
                succeeded: 50,
                planned: 200,
                estimated: false,
            }],
            never_ran: vec!["at 8 streams".into()],
        }
    }

    #[test]
    fn advice_at_a_cut_step_counts_the_planned_requests() {
        let p = killed_at_4();
        let base = [row("m", 2, 200, 200), row("m", 4, 200, 200)];
        let new = [row("m", 2, 200, 200), row("m", 4, 50, 50)];
        // Wide CI: with 200 on both sides it shrinks by √((1/200+1/200)/(1/200+1/50)) = 0.632,
        // half-width 0.4 → 0.253 > 10%: about 200 × (0.253/0.1)² = 1280 per step.
        let mut c = comparison(vec![
            inconclusive(4, (-0.3, 0.5), 900),
            inconclusive(2, (-0.3, 0.5), 900),
        ]);
        restate_advice(&mut c, &Gates::default(), (None, &base), (Some(&p), &new));
        let k = &c.checks[0];
        assert_eq!(
            k.verdict,
            Verdict::Inconclusive {
                requests_per_step: Some(1280)
            }
        );
        assert!(
            k.detail.ends_with("; about 1280 requests per step would decide it (the scenario plans 200 requests per step; the new run got 50 at 4 streams)"),
            "{}",
            k.detail
        );
        assert!(!k.detail.contains("900"), "{}", k.detail);
        // A step that ran in full keeps its advice.
        assert_eq!(c.checks[1], inconclusive(2, (-0.3, 0.5), 900));

        // Narrow CI: the planned count itself may decide it.
        let mut c = comparison(vec![inconclusive(4, (-0.12, 0.15), 400)]);
        restate_advice(&mut c, &Gates::default(), (None, &base), (Some(&p), &new));
        let k = &c.checks[0];
        assert_eq!(
            k.verdict,
            Verdict::Inconclusive {
                requests_per_step: Some(200)
            }
        );
        assert!(
            k.detail
                .contains("the planned 200 requests per step may decide it")
                && k.detail.ends_with("rerun the whole ladder"),
            "{}",
            k.detail
        );
    }

    #[test]
    fn the_warning_says_how_it_ended_where_and_what_is_missing() {
        let w = killed_at_4().warning();
        for part in [
            "the new run (runs/x/t) is an incomplete run",
            "meta.json says complete: false",
            "stopped in step 2 of 3 (at 4 streams)",
            "m at 4 streams has 50 of 200 planned requests",
            "Never ran: at 8 streams",
        ] {
            assert!(w.contains(part), "{part:?} not in {w}");
        }
        let mut p = killed_at_4();
        p.killed = false;
        p.short[0].estimated = true;
        let w = p.warning();
        assert!(w.contains("does not say which"), "{w}");
        assert!(w.contains("50 of about 200 planned"), "{w}");
        p.stopped_by = Some(StoppedBy::Interrupted {
            signal: Some("SIGTERM".into()),
        });
        assert!(p
            .warning()
            .contains("it was interrupted by SIGTERM and stopped in step 2"));
        assert!(p
            .unfinished()
            .ends_with("(runs/x/t) was interrupted by SIGTERM"));
        p.stopped_by = Some(StoppedBy::FailFast {
            class: "connect".into(),
            model: "m".into(),
            requests: 5,
            message: "Connection refused".into(),
        });
        let why =
            "stopped early: the first 5 requests to m all failed with connect (Connection refused)";
        assert!(
            p.warning().contains(&format!("it {why}")),
            "{}",
            p.warning()
        );
        assert!(p.unfinished().ends_with(why), "{}", p.unfinished());
    }

    #[test]
    fn planned_counts_follow_the_budget_and_the_recorded_scenario() {
        let yaml = "load:\n  ladder: [2, 4]\n  requests_per_worker: 10\n";
        let load = crate::scenario::load_from_yaml(yaml).unwrap();
        assert_eq!(planned_requests(&load, 4), Some(40));
        let yaml = "load:\n  ladder: [256, 1024]\n  ladder_over: prompt_tokens\n  concurrency: 3\n  requests_per_worker: 10\n";
        let load = crate::scenario::load_from_yaml(yaml).unwrap();
        assert_eq!(planned_requests(&load, 1024), Some(30));
        let yaml = "load:\n  ladder: [1, 2]\n  duration: 10s\n";
        let load = crate::scenario::load_from_yaml(yaml).unwrap();
        assert_eq!(planned_requests(&load, 2), None);
        // A duration step cut at 4 s of 10 s, 20 requests sent: about 50 planned.
        let mut r = row("m", 2, 20, 20);
        r.duration_s = 4.0;
        let s = short_step(&load, &r).unwrap();
        assert_eq!((s.planned, s.estimated), (50, true));
        r.duration_s = 9.9;
        assert_eq!(short_step(&load, &r), None);
    }

    #[test]
    fn the_recorded_load_of_a_rate_scenario_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("p.txt"), "hi\n").unwrap();
        let yaml = "name: r\ntarget:\n  api: openai-chat\n  sim: {}\n  models: [m]\nrequest:\n  prompt_file: p.txt\n  max_tokens: 8\nload:\n  mode: rate\n  ladder: [2, 4]\n  requests_per_step: 30\n  max_concurrency: 8\n";
        let path = dir.path().join("r.yaml");
        let s = crate::scenario::load_str(yaml, &path, &|_| None).unwrap();
        let recorded = crate::scenario::normalized_yaml(&s);
        let load = crate::scenario::load_from_yaml(&recorded).unwrap();
        assert_eq!(load, s.load);
        assert_eq!(planned_requests(&load, 4), Some(30));
    }
}
