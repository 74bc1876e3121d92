//! The agent plan (`ladder plan --agents N` / `--tasks-per-hour T`) in plain words: one block
//! per model with the arithmetic shown, so a reader can check every figure against the run's
//! conversations table and `summary.csv`. The rows and numbers read as the rate plan's
//! (`words`).

use super::agents::{AgentModelPlan, AgentNeeds, AgentPlan, AgentStep, AgentTarget};
use super::words::{limits_row, no_limits_row, num, row, slo_words};
use super::Basis;
use crate::model::LadderUnit;
use crate::util::duration::ms_text as ms;
use std::fmt::Write;

/// The agent plan in plain words.
pub fn agent_words(p: &AgentPlan) -> String {
    let mut s = String::new();
    let target = match p.target {
        AgentTarget::Agents(n) => count(n, "agent"),
        AgentTarget::TasksPerHour(t) => format!("{} tasks/hour", num(t)),
    };
    let slo = slo_words(&p.bounds);
    let _ = writeln!(s, "plan for {target} ({slo})");
    for m in &p.models {
        s.push('\n');
        agent_model(&mut s, p, m);
    }
    s
}

fn agent_model(s: &mut String, p: &AgentPlan, m: &AgentModelPlan) {
    let (Some(a), Some(n)) = (&m.step, &m.needs) else {
        let _ = writeln!(s, "{}: no plan", m.model);
        for note in &m.notes {
            let _ = writeln!(s, "  {note}");
        }
        return;
    };
    let how = match m.basis {
        Basis::Measured => "measured at",
        _ => "EXTRAPOLATED from",
    };
    let mut lat = format!("mean E2E {}", ms(a.e2e_mean_ms));
    if let Some(t) = a.ttft_p90_ms {
        let _ = write!(lat, ", TTFT P90 {}", ms(t));
    }
    if let Some(c) = a.cache_hit_share {
        let _ = write!(lat, "; cache hit share {:.0}%", c * 100.0);
    }
    let _ = writeln!(
        s,
        "{}: {how} {} agents ({} tasks, mean task {}, {} requests each; {lat})",
        m.model,
        a.agents,
        a.tasks,
        ms(a.task_ms),
        num(a.requests_per_task),
    );
    agent_need_rows(s, p, m, a, n);
    agent_token_rows(s, p, a, n);
    agent_limit_rows(s, m);
    for note in &m.notes {
        let _ = writeln!(s, "  note: {note}");
    }
}

/// Per agent, the agents a task rate takes, tasks per hour, replicas, requests in flight, RPM.
fn agent_need_rows(
    s: &mut String,
    p: &AgentPlan,
    m: &AgentModelPlan,
    a: &AgentStep,
    n: &AgentNeeds,
) {
    let per_agent = a.tasks_per_hour();
    row(
        s,
        "per agent",
        format!(
            "3,600 s ÷ ({:.2} s task + {:.2} s think) = {} tasks/hour",
            a.task_ms / 1000.0,
            a.think_ms / 1000.0,
            num(per_agent)
        ),
    );
    if let AgentTarget::TasksPerHour(t) = p.target {
        row(
            s,
            "agents needed",
            format!(
                "{} ÷ {} = {} → {}",
                num(t),
                num(per_agent),
                num(t / per_agent),
                count(n.agents, "agent")
            ),
        );
    }
    row(
        s,
        "tasks per hour",
        format!(
            "{} × {} = {}",
            n.agents,
            num(per_agent),
            num(n.tasks_per_hour)
        ),
    );
    if let Some(c) = &m.cap {
        let target = p.target_kind.as_ref();
        row(
            s,
            super::cap::lever_label(target),
            super::cap::words(c, n.agents, LadderUnit::Agents, target),
        );
    }
    row(
        s,
        "concurrency needed",
        format!(
            "{} × {} requests × {:.3} s ÷ {:.2} s = {} → {} in flight (at most {}, every agent waiting on the model at once)",
            count(n.agents, "agent"),
            num(a.requests_per_task),
            a.e2e_mean_ms / 1000.0,
            a.cycle_s(),
            num(n.in_flight),
            count(n.concurrency_needed, "request"),
            n.agents
        ),
    );
    row(
        s,
        "RPM needed",
        format!(
            "{} × {} ÷ 60 = {} requests/min",
            num(n.tasks_per_hour),
            num(a.requests_per_task),
            num(n.rpm)
        ),
    );
}

/// Tokens per task by kind, TPM by kind, and the TPM the limit is checked against.
fn agent_token_rows(s: &mut String, p: &AgentPlan, a: &AgentStep, n: &AgentNeeds) {
    row(
        s,
        "tokens per task",
        format!(
            "{} uncached input + {} cached input + {} output = {}",
            num(a.input_uncached_per_task),
            num(a.input_cached_per_task),
            num(a.output_per_task),
            num(a.tokens_per_task())
        ),
    );
    let per_min = |v: f64| format!("{} tokens/min", num(v));
    row(s, "uncached input TPM", per_min(n.tpm_input_uncached));
    row(s, "cached input TPM", per_min(n.tpm_input_cached));
    row(s, "output TPM", per_min(n.tpm_output));
    // The TPM the limit is checked against: total, or without the cached input.
    let (label, counted) = if p.tpm_counts_cached {
        let v = format!(
            "{} tokens/min ({} ÷ 60 × {}; cached input counted, as OpenAI counts it)",
            num(n.tpm_counted),
            num(n.tasks_per_hour),
            num(a.tokens_per_task())
        );
        ("total TPM needed", v)
    } else {
        let v = format!(
            "{} tokens/min (uncached input + output: cached input left out, as Anthropic's ITPM leaves out cache reads on most models; {} total)",
            num(n.tpm_counted),
            num(n.tpm_total)
        );
        ("TPM needed", v)
    };
    row(s, label, counted);
}

/// The declared limits with their headroom, which binds first, the most agents they allow and
/// the most this run measured within the SLO.
fn agent_limit_rows(s: &mut String, m: &AgentModelPlan) {
    limits_row(s, &m.limits);
    match (m.binding_limit, m.max_agents, &m.limits_at) {
        (Some(l), Some(max), Some(at)) => {
            let agents = max.floor();
            row(
                s,
                "binds first",
                format!("{} (at {} agents)", l.label(), num(agents)),
            );
            row(
                s,
                "max sustainable",
                format!(
                    "{} agents ({} tasks/hour) under the declared limits, at the figures measured at {} agents",
                    num(agents),
                    num(agents * at.tasks_per_hour()),
                    at.agents
                ),
            );
        }
        _ => no_limits_row(s),
    }
    if let Some(top) = m.measured_slo_agents {
        row(
            s,
            "measured",
            format!("up to {top} agents within the SLO in this run, past the knee included"),
        );
    }
}

/// "1 agent", "40 agents".
fn count(n: u32, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}
