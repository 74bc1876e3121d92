//! `ladder plan --agents N` or `--tasks-per-hour T`: sizing for agents (docs/plan.md "Sizing
//! for agents"). An agent is a closed loop of tasks: a task takes the measured task time (its
//! turns plus the tool time between them), then the agent thinks before the next one, so one
//! agent does 3,600 s ÷ (task + think) tasks an hour, and T tasks an hour take T × (task +
//! think) ÷ 3,600 agents (Little's law on tasks). From a run of an agent scenario, per model:
//! the lowest step below the knee that met the SLO with at least the agents needed (the rule
//! `plan` uses for a rate: `findings::slo::judge`, `ModelFindings::below_knee`), what those
//! agents need there (tasks/hour, requests in flight, RPM, TPM with uncached input, cached input
//! and output apart), how many copies of the service that takes (`cap::agents_fit`) and the
//! declared `limits:` against it: which binds first and the most agents they allow. Pure:
//! summary rows in, an `AgentPlan` out.

use super::limits::{binding, declared_limits, Agents, LimitCheck, LimitName};
use super::{cap, Basis, Bounds, CapFit, NO_INPUT_TOKENS};
use crate::findings::slo::judge;
use crate::findings::ModelFindings;
use crate::model::Slo;
use crate::scenario::Limits;
use crate::stats::{models_of, StepSummary};
use serde::Serialize;

/// What the plan is asked to carry.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentTarget {
    /// Concurrent agents, each doing tasks one after another.
    Agents(u32),
    /// Complete tasks per hour, all agents together.
    TasksPerHour(f64),
}

/// One agent's task as measured at a step: the figures the sizing uses.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgentStep {
    pub step: u32,
    /// The step's concurrent agents.
    pub agents: u32,
    /// Complete tasks measured at the step.
    pub tasks: u64,
    /// Mean end-to-end time of a complete task (every turn plus the tool time between them).
    pub task_ms: f64,
    /// The agent's mean think time before its next task (the scenario's `think_time`).
    pub think_ms: f64,
    /// Mean requests (turns) of a complete task.
    pub requests_per_task: f64,
    /// Mean E2E of one request.
    pub e2e_mean_ms: f64,
    pub ttft_p90_ms: Option<f64>,
    /// Input tokens read from the cache ÷ input tokens (`StepSummary::cache_hit_share`).
    pub cache_hit_share: Option<f64>,
    /// A complete task's mean tokens (`task_tokens_mean`), split by the step's shares: input
    /// not read from the cache, input read from it, output.
    pub input_uncached_per_task: f64,
    pub input_cached_per_task: f64,
    pub output_per_task: f64,
}

impl AgentStep {
    /// The step's task figures; `None` for a step without complete tasks (not an agent run,
    /// or every task failed).
    pub fn of(s: &StepSummary, think_ms: f64) -> Option<AgentStep> {
        let task_ms = s.task_e2e_mean_ms.filter(|v| v.is_finite() && *v > 0.0)?;
        let requests_per_task = s.task_turns_mean.filter(|v| *v > 0.0)?;
        let e2e_mean_ms = s.e2e_mean_ms.filter(|v| v.is_finite() && *v > 0.0)?;
        let tokens = s.task_tokens_mean.filter(|v| v.is_finite() && *v >= 0.0)?;
        if s.tasks == 0 {
            return None;
        }
        let (input, output) = (s.input_tokens as f64, s.output_tokens as f64);
        let input_share = if input + output > 0.0 {
            input / (input + output)
        } else {
            0.0
        };
        let cached_share = s.cache_hit_share().unwrap_or(0.0).clamp(0.0, 1.0);
        let input_per_task = tokens * input_share;
        Some(AgentStep {
            step: s.step,
            agents: s.concurrency,
            tasks: s.tasks,
            task_ms,
            think_ms: think_ms.max(0.0),
            requests_per_task,
            e2e_mean_ms,
            ttft_p90_ms: s.ttft_p90_ms,
            cache_hit_share: s.cache_hit_share(),
            input_uncached_per_task: input_per_task * (1.0 - cached_share),
            input_cached_per_task: input_per_task * cached_share,
            output_per_task: tokens - input_per_task,
        })
    }

    /// One task and the think time before the next, in seconds.
    pub fn cycle_s(&self) -> f64 {
        (self.task_ms + self.think_ms) / 1000.0
    }

    /// Complete tasks one agent does in an hour.
    pub fn tasks_per_hour(&self) -> f64 {
        3600.0 / self.cycle_s()
    }

    pub fn tokens_per_task(&self) -> f64 {
        self.input_uncached_per_task + self.input_cached_per_task + self.output_per_task
    }

    /// Requests one agent has in flight on average: its requests per second × mean E2E.
    pub fn in_flight(&self) -> f64 {
        self.requests_per_task / self.cycle_s() * self.e2e_mean_ms / 1000.0
    }

    /// The agents `target` takes at this step's figures: N as asked, or T ÷ tasks per hour per
    /// agent, rounded up (at least 1).
    pub fn agents_for(&self, target: AgentTarget) -> u32 {
        match target {
            AgentTarget::Agents(n) => n.max(1),
            AgentTarget::TasksPerHour(t) => (t / self.tasks_per_hour()).ceil().max(1.0) as u32,
        }
    }

    /// What `agents` agents need at this step's figures. `cached_counts`: the account's TPM
    /// limit counts input read from the cache (OpenAI's does; Anthropic's ITPM does not for
    /// most models): `tpm_counted` then includes it.
    pub fn needs(&self, agents: u32, cached_counts: bool) -> AgentNeeds {
        let n = f64::from(agents);
        let tasks_per_hour = n * self.tasks_per_hour();
        let per_min = tasks_per_hour / 60.0;
        let (uncached, cached, output) = (
            per_min * self.input_uncached_per_task,
            per_min * self.input_cached_per_task,
            per_min * self.output_per_task,
        );
        let in_flight = n * self.in_flight();
        AgentNeeds {
            agents,
            tasks_per_hour,
            rpm: per_min * self.requests_per_task,
            in_flight,
            concurrency_needed: (in_flight.ceil().max(1.0) as u32).min(agents.max(1)),
            tpm_input_uncached: uncached,
            tpm_input_cached: cached,
            tpm_output: output,
            tpm_total: uncached + cached + output,
            tpm_counted: uncached + output + if cached_counts { cached } else { 0.0 },
        }
    }
}

/// What a number of agents needs at one step's figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgentNeeds {
    pub agents: u32,
    pub tasks_per_hour: f64,
    pub rpm: f64,
    /// Requests in flight on average (agents × requests per second each × mean E2E): an agent
    /// waiting on its tool or thinking holds none.
    pub in_flight: f64,
    /// `in_flight` rounded up, at most `agents` (every agent waiting on the model at once).
    pub concurrency_needed: u32,
    /// Uncached input, cached input and output tokens per minute (JSON `uncached_input_tpm`,
    /// `cached_input_tpm`, `output_tpm`).
    #[serde(rename = "uncached_input_tpm")]
    pub tpm_input_uncached: f64,
    #[serde(rename = "cached_input_tpm")]
    pub tpm_input_cached: f64,
    #[serde(rename = "output_tpm")]
    pub tpm_output: f64,
    /// Input (uncached and cached) and output (JSON `total_tpm`).
    #[serde(rename = "total_tpm")]
    pub tpm_total: f64,
    /// What the TPM limit is checked against: `tpm_total`, less the cached input when the
    /// account does not count it (`AgentPlan::tpm_counts_cached`).
    pub tpm_counted: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgentModelPlan {
    pub model: String,
    pub basis: Basis,
    /// The step the figures come from.
    pub step: Option<AgentStep>,
    pub needs: Option<AgentNeeds>,
    /// The agents against the most one copy of the measured service held (the knee's clean
    /// agents, or the highest step without a knee).
    pub cap: Option<CapFit>,
    pub limits: Vec<LimitCheck<Agents>>,
    /// The declared limit allowing the fewest agents.
    pub binding_limit: Option<LimitName>,
    /// The fewest agents any declared limit allows (computed at `limits_at`, whatever the
    /// target: the run's, not the question's).
    pub max_agents: Option<f64>,
    /// The highest step below the knee that met the SLO: where the limits' `max_agents` are
    /// computed.
    pub limits_at: Option<AgentStep>,
    /// The most agents of a step that met the SLO in this run.
    pub measured_slo_agents: Option<u32>,
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgentPlan {
    pub target: AgentTarget,
    /// The SLO and the declared limits it was asked with.
    #[serde(flatten)]
    pub bounds: Bounds,
    /// Whether the TPM limit counts input read from the cache (the default, OpenAI's way;
    /// `--tpm-excludes-cached` for Anthropic's ITPM on most models).
    pub tpm_counts_cached: bool,
    pub models: Vec<AgentModelPlan>,
    /// What the run measured, set by the caller that read its scenario (`Plan::target_kind`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_kind: Option<crate::model::TargetKind>,
}

/// Why an agent plan cannot be made from these rows (the app says it and exits 2).
pub fn not_an_agent_run(rows: &[StepSummary]) -> Option<String> {
    (!rows.iter().any(|r| r.tasks > 0 && r.task_e2e_mean_ms.is_some())).then(|| {
        if rows.iter().any(|r| r.tasks > 0) {
            "its steps have complete tasks but no mean task time (a summary written before ladder kept it): rerun the scenario".to_string()
        } else {
            "its steps have no complete agent tasks (a run of a scenario with `load.agent` has them): size it with --rps".to_string()
        }
    })
}

/// Plans every model in `rows` (models in order of first appearance) for `target`. `think_ms`
/// is the agents' mean think time between tasks (the run's `load.agent.think_time`);
/// `findings` are the run's (`findings::analyze_run`): the plan rests on steps below the knee.
pub fn plan(
    rows: &[StepSummary],
    target: AgentTarget,
    slo: &Slo,
    limits: &Limits,
    findings: &[ModelFindings],
    think_ms: f64,
    tpm_counts_cached: bool,
) -> AgentPlan {
    AgentPlan {
        target,
        bounds: Bounds::of(slo, limits),
        tpm_counts_cached,
        models: models_of(rows)
            .into_iter()
            .map(|m| {
                let mut steps: Vec<&StepSummary> = rows.iter().filter(|r| r.model == m).collect();
                steps.sort_by_key(|r| r.ladder_order());
                let f = findings.iter().find(|f| f.model == m);
                let how = Sizing {
                    target,
                    slo,
                    limits,
                    think_ms,
                    cached_counts: tpm_counts_cached,
                };
                plan_model(m, &steps, &how, f)
            })
            .collect(),
        target_kind: None,
    }
}

/// The question and the account, the same for every model.
struct Sizing<'a> {
    target: AgentTarget,
    slo: &'a Slo,
    limits: &'a Limits,
    think_ms: f64,
    cached_counts: bool,
}

fn plan_model(
    model: &str,
    steps: &[&StepSummary],
    how: &Sizing,
    findings: Option<&ModelFindings>,
) -> AgentModelPlan {
    let met: Vec<&StepSummary> = steps
        .iter()
        .copied()
        .filter(|s| judge(s, how.slo).miss.is_none())
        .collect();
    let measured_slo_agents = met
        .iter()
        .filter(|s| AgentStep::of(s, how.think_ms).is_some())
        .map(|s| s.concurrency)
        .max();
    let below_knee = |s: &StepSummary| findings.map_or(true, |f| f.below_knee(s.concurrency));
    let clean: Vec<AgentStep> = met
        .iter()
        .filter(|s| below_knee(s))
        .filter_map(|s| AgentStep::of(s, how.think_ms))
        .collect();
    let mut notes = Vec::new();
    let chosen = clean.iter().find(|a| a.agents >= a.agents_for(how.target));
    let (basis, step) = match (chosen, clean.last()) {
        (Some(a), _) => (Basis::Measured, Some(a.clone())),
        (None, Some(best)) => {
            let n = best.agents_for(how.target);
            let holds = if findings.is_some_and(|f| cap::agents_fit(f, 1).is_some()) {
                "which holds while no copy of the service (or account) serves more agents than it did (the line after `tasks per hour`)"
            } else {
                "which is true only if the service adds capacity"
            };
            let knee =
                findings.is_some_and(|f| matches!(f.knee, crate::findings::KneeFinding::Knee(_)));
            let which = if knee {
                "No step below the knee"
            } else {
                "No measured step"
            };
            notes.push(format!(
                "{which} met the SLO with {n} agents (the most was {} agents). The figures assume each agent's task time measured at {} agents holds at {n}, {holds}; measure a ladder that reaches {n} agents to confirm.",
                best.agents, best.agents
            ));
            (Basis::Extrapolated, Some(best.clone()))
        }
        (None, None) => {
            notes.push(no_step_note(steps, &met, how));
            (Basis::NoStepMeetsSlo, None)
        }
    };
    let Some(at) = step else {
        return AgentModelPlan {
            model: model.to_string(),
            basis,
            step: None,
            needs: None,
            cap: None,
            limits: Vec::new(),
            binding_limit: None,
            max_agents: None,
            limits_at: None,
            measured_slo_agents,
            notes,
        };
    };
    let agents = at.agents_for(how.target);
    let needs = at.needs(agents, how.cached_counts);
    if at.input_uncached_per_task + at.input_cached_per_task == 0.0 {
        notes.push(NO_INPUT_TOKENS.into());
    } else if at.cache_hit_share.is_some_and(|c| c == 0.0) {
        notes.push(
            "No input was read from a cache at this step: the server reported none (or has no prefix cache), so all input is counted uncached."
                .into(),
        );
    }
    let limits_at = clean.last().cloned().unwrap_or_else(|| at.clone());
    let checks = limit_checks(&limits_at, how.limits, &needs, how.cached_counts);
    let binding = binding(&checks);
    AgentModelPlan {
        model: model.to_string(),
        basis,
        cap: findings.and_then(|f| cap::agents_fit(f, agents)),
        binding_limit: binding.map(|c| c.limit),
        max_agents: binding.map(|c| c.most),
        limits: checks,
        limits_at: Some(limits_at),
        step: Some(at),
        needs: Some(needs),
        measured_slo_agents,
        notes,
    }
}

/// Why no step can size the plan: no step met the SLO (and which bound the lowest missed), or
/// only steps past the knee did, or none of those had complete tasks.
fn no_step_note(steps: &[&StepSummary], met: &[&StepSummary], how: &Sizing) -> String {
    if met.iter().any(|s| AgentStep::of(s, how.think_ms).is_some()) {
        return "No step below the knee met the SLO: the steps that met it were already past the knee, and a plan sized from them would count the wait as the agents' task time.".into();
    }
    if !met.is_empty() {
        return "The steps that met the SLO have no complete task to size from.".into();
    }
    match steps.first() {
        Some(first) => format!(
            "No step met the SLO; even the lowest ({} agents) missed it: {}.",
            first.concurrency,
            judge(first, how.slo)
                .miss
                .unwrap_or_else(|| "no latency measured".into())
        ),
        None => "The run has no steps.".into(),
    }
}

/// Each declared limit against what the agents need, with the most agents it allows at the
/// figures of `at` (one agent's in-flight requests, counted tokens and requests per minute).
fn limit_checks(
    at: &AgentStep,
    limits: &Limits,
    needs: &AgentNeeds,
    cached_counts: bool,
) -> Vec<LimitCheck<Agents>> {
    let one = at.needs(1, cached_counts);
    declared_limits(limits)
        .into_iter()
        .map(|(limit, declared)| {
            let (needed, per_agent) = match limit {
                LimitName::Concurrency => (needs.in_flight, one.in_flight),
                LimitName::Tpm => (needs.tpm_counted, one.tpm_counted),
                LimitName::Rpm => (needs.rpm, one.rpm),
                LimitName::Itpm if limits.itpm_cached => (
                    needs.tpm_input_uncached + needs.tpm_input_cached,
                    one.tpm_input_uncached + one.tpm_input_cached,
                ),
                LimitName::Itpm => (needs.tpm_input_uncached, one.tpm_input_uncached),
                LimitName::Otpm => (needs.tpm_output, one.tpm_output),
            };
            LimitCheck::new(limit, declared, needed, per_agent)
        })
        .collect()
}
