//! Sizing for agents on fixed summary rows: tasks per hour from the task time, the step below
//! the knee, requests in flight, RPM, TPM by kind of token, replicas and the declared limits.

use super::agents::*;
use super::{Basis, CapSource, LimitName};
use crate::model::{LadderUnit, Slo};
use crate::scenario::Limits;
use crate::stats::StepSummary;

/// One agent step: 12 requests per agent (two 6-turn tasks), 4,000 tokens a request (3,960 in,
/// 75% of it read from the cache, 40 out), 24,000 a task, mean E2E 300 ms, a task 2.4 s.
fn agent_row(step: u32, agents: u32, ttft_p90: f64) -> StepSummary {
    let n = u64::from(agents) * 12;
    StepSummary {
        model: "m".into(),
        step,
        concurrency: agents,
        ladder_unit: LadderUnit::Agents,
        attempted: n,
        succeeded: n,
        ttft_p50_ms: Some(ttft_p90 * 0.9),
        ttft_p90_ms: Some(ttft_p90),
        ttft_mean_ms: Some(ttft_p90 * 0.9),
        tpot_p50_ms: Some(4.0),
        tpot_p90_ms: Some(4.0),
        e2e_p90_ms: Some(330.0),
        e2e_mean_ms: Some(300.0),
        input_tokens: n * 3_960,
        cached_tokens: n * 2_970,
        output_tokens: n * 40,
        rps: f64::from(agents) * 2.5,
        tasks: u64::from(agents) * 2,
        task_e2e_mean_ms: Some(2_400.0),
        task_turns_mean: Some(6.0),
        task_tokens_mean: Some(24_000.0),
        ..StepSummary::default()
    }
}

/// 2 and 4 agents clean, TTFT P90 tripled from 8 agents on: a knee in (4, 8].
fn ladder() -> (Vec<StepSummary>, Vec<crate::findings::ModelFindings>) {
    let rows = vec![
        agent_row(1, 2, 150.0),
        agent_row(2, 4, 150.0),
        agent_row(3, 8, 500.0),
        agent_row(4, 16, 500.0),
    ];
    let f = crate::findings::analyze("m", &rows, None);
    (rows, vec![f])
}

fn ttft(ms: u64) -> Slo {
    Slo {
        ttft: Some(std::time::Duration::from_millis(ms)),
        ..Slo::default()
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6 * b.abs().max(1.0)
}

#[test]
fn one_agent_does_an_hour_over_its_task_and_think_time() {
    let s = agent_row(1, 4, 150.0);
    let a = AgentStep::of(&s, 0.0).unwrap();
    assert!(close(a.tasks_per_hour(), 1_500.0), "3,600 s ÷ 2.4 s");
    assert!(close(a.tokens_per_task(), 24_000.0));
    assert!(close(a.input_uncached_per_task, 5_940.0));
    assert!(close(a.input_cached_per_task, 17_820.0));
    assert!(close(a.output_per_task, 240.0));
    assert!(close(a.in_flight(), 0.75), "6 requests ÷ 2.4 s × 0.3 s");
    let thinking = AgentStep::of(&s, 600.0).unwrap();
    assert!(close(thinking.tasks_per_hour(), 1_200.0), "3,600 s ÷ 3 s");
    assert!(close(thinking.in_flight(), 0.6));
    // Agents from tasks per hour: rounded up, at least one.
    assert_eq!(a.agents_for(AgentTarget::TasksPerHour(3_000.0)), 2);
    assert_eq!(a.agents_for(AgentTarget::TasksPerHour(3_001.0)), 3);
    assert_eq!(a.agents_for(AgentTarget::TasksPerHour(1.0)), 1);
    assert_eq!(a.agents_for(AgentTarget::Agents(40)), 40);
}

#[test]
fn what_agents_need_splits_tokens_by_kind_and_counts_cached_input_as_asked() {
    let a = AgentStep::of(&agent_row(1, 4, 150.0), 0.0).unwrap();
    let n = a.needs(40, true);
    assert!(close(n.tasks_per_hour, 60_000.0));
    assert!(close(n.rpm, 6_000.0), "1,000 tasks a minute × 6 requests");
    assert!(close(n.in_flight, 30.0));
    assert_eq!(n.concurrency_needed, 30);
    assert!(close(n.tpm_input_uncached, 5_940_000.0));
    assert!(close(n.tpm_input_cached, 17_820_000.0));
    assert!(close(n.tpm_output, 240_000.0));
    assert!(close(n.tpm_total, 24_000_000.0));
    assert!(close(n.tpm_counted, 24_000_000.0));
    let without = a.needs(40, false);
    assert!(
        close(without.tpm_counted, 6_180_000.0),
        "uncached input + output"
    );
    assert!(close(without.tpm_total, 24_000_000.0));
    // Requests in flight never exceed the agents.
    let busy = AgentStep {
        e2e_mean_ms: 400.0,
        ..a.clone()
    };
    assert_eq!(busy.needs(1, true).concurrency_needed, 1);
}

#[test]
fn a_step_without_complete_tasks_sizes_nothing() {
    let mut s = agent_row(1, 4, 150.0);
    s.tasks = 0;
    assert!(AgentStep::of(&s, 0.0).is_none());
    let mut s = agent_row(1, 4, 150.0);
    s.task_e2e_mean_ms = None;
    assert!(AgentStep::of(&s, 0.0).is_none());
    assert!(not_an_agent_run(&[s])
        .unwrap()
        .contains("no mean task time"));
    let plain = StepSummary::default();
    assert!(not_an_agent_run(&[plain]).unwrap().contains("--rps"));
    assert!(not_an_agent_run(&[agent_row(1, 4, 150.0)]).is_none());
}

#[test]
fn the_plan_rests_on_the_lowest_clean_step_with_the_agents_needed() {
    let (rows, findings) = ladder();
    let crate::findings::KneeFinding::Knee(k) = &findings[0].knee else {
        panic!("no knee: {:?}", findings[0].knee);
    };
    assert_eq!((k.max_clean_concurrency, k.concurrency), (4, 8));
    let none = Limits::default();
    let at = |t| plan(&rows, t, &ttft(1_000), &none, &findings, 0.0, true);
    let p = at(AgentTarget::Agents(3));
    let m = &p.models[0];
    assert_eq!(m.basis, Basis::Measured);
    assert_eq!(
        m.step.as_ref().unwrap().agents,
        4,
        "2 agents are fewer than 3"
    );
    assert_eq!(m.needs.as_ref().unwrap().agents, 3);
    assert_eq!(
        m.measured_slo_agents,
        Some(16),
        "every step met a 1 s bound"
    );
    assert_eq!(
        m.limits_at.as_ref().unwrap().agents,
        4,
        "the highest below the knee"
    );
    assert!(m.notes.is_empty(), "{:?}", m.notes);
    // 3,000 tasks an hour: 2 agents, measured at 2.
    let p = at(AgentTarget::TasksPerHour(3_000.0));
    let m = &p.models[0];
    assert_eq!(m.step.as_ref().unwrap().agents, 2);
    assert_eq!(m.needs.as_ref().unwrap().agents, 2);
    // Past the knee the steps met the SLO, but the plan does not rest on them.
    let p = at(AgentTarget::Agents(40));
    let m = &p.models[0];
    assert_eq!(m.basis, Basis::Extrapolated);
    assert_eq!(m.step.as_ref().unwrap().agents, 4);
    assert!(
        m.notes[0].starts_with("No step below the knee met the SLO with 40 agents"),
        "{:?}",
        m.notes
    );
    let cap = m.cap.as_ref().unwrap();
    assert_eq!(
        (cap.source, cap.per_replica, cap.replicas),
        (CapSource::MaxClean, 4.0, 10)
    );
}

#[test]
fn the_limits_say_which_binds_first_and_the_most_agents_they_allow() {
    let (rows, findings) = ladder();
    let limits = Limits {
        concurrency: Some(50),
        tpm: Some(2_000_000),
        rpm: Some(10_000),
        ..Limits::default()
    };
    let at = |n, cached| {
        plan(
            &rows,
            AgentTarget::Agents(n),
            &ttft(1_000),
            &limits,
            &findings,
            0.0,
            cached,
        )
    };
    let p = at(40, true);
    let m = &p.models[0];
    let check = |l: LimitName| m.limits.iter().find(|c| c.limit == l).unwrap();
    assert!(close(check(LimitName::Concurrency).needed, 30.0));
    assert!(close(check(LimitName::Concurrency).headroom_pct, 40.0));
    assert!(close(check(LimitName::Concurrency).most, 50.0 / 0.75));
    assert!(close(check(LimitName::Tpm).headroom_pct, -1_100.0));
    assert!(close(check(LimitName::Tpm).most, 2_000_000.0 / 600_000.0));
    assert!(close(check(LimitName::Rpm).headroom_pct, 40.0));
    assert!(close(check(LimitName::Rpm).most, 10_000.0 / 150.0));
    assert_eq!(m.binding_limit, Some(LimitName::Tpm));
    // The most agents is the run's, whatever the target.
    for n in [1, 3, 40] {
        assert!(close(at(n, true).models[0].max_agents.unwrap(), 10.0 / 3.0));
    }
    // An account whose TPM leaves out cache reads fits four times more agents here.
    let p = at(40, false);
    let tpm = p.models[0]
        .limits
        .iter()
        .find(|c| c.limit == LimitName::Tpm)
        .unwrap();
    assert!(close(tpm.most, 2_000_000.0 / 154_500.0));
    assert!(close(tpm.needed, 6_180_000.0));
}

#[test]
fn no_step_meeting_the_slo_below_the_knee_gives_no_plan_and_says_why() {
    let (rows, findings) = ladder();
    let p = plan(
        &rows,
        AgentTarget::Agents(4),
        &ttft(100),
        &Limits::default(),
        &findings,
        0.0,
        true,
    );
    let m = &p.models[0];
    assert_eq!(m.basis, Basis::NoStepMeetsSlo);
    assert!(m.needs.is_none() && m.step.is_none());
    assert!(
        m.notes[0]
            .starts_with("No step met the SLO; even the lowest (2 agents) missed it: TTFT P90"),
        "{:?}",
        m.notes
    );
    assert!(crate::plan::agent_words::agent_words(&p).contains("m: no plan"));
    // Only the steps past the knee met it.
    let mut failing = rows.clone();
    for r in failing.iter_mut().take(2) {
        r.failed = r.attempted / 2;
        r.succeeded = r.attempted - r.failed;
    }
    let p = plan(
        &failing,
        AgentTarget::Agents(4),
        &ttft(1_000),
        &Limits::default(),
        &findings,
        0.0,
        true,
    );
    assert!(
        p.models[0].notes[0].contains("past the knee"),
        "{:?}",
        p.models[0].notes
    );
}

#[test]
fn the_agent_plan_in_words_shows_its_arithmetic() {
    let (rows, findings) = ladder();
    let limits = Limits {
        tpm: Some(2_000_000),
        ..Limits::default()
    };
    let p = plan(
        &rows,
        AgentTarget::TasksPerHour(4_000.0),
        &ttft(1_000),
        &limits,
        &findings,
        0.0,
        true,
    );
    let w = crate::plan::agent_words::agent_words(&p);
    for line in [
        "plan for 4,000 tasks/hour (SLO TTFT P90 ≤ 1 s)",
        "m: measured at 4 agents (8 tasks, mean task 2.4 s, 6 requests each; mean E2E 300 ms, TTFT P90 150 ms; cache hit share 75%)",
        "  per agent           3,600 s ÷ (2.40 s task + 0.00 s think) = 1,500 tasks/hour",
        "  agents needed       4,000 ÷ 1,500 = 2.67 → 3 agents",
        "  tasks per hour      3 × 1,500 = 4,500",
        "  concurrency needed  3 agents × 6 requests × 0.300 s ÷ 2.40 s = 2.25 → 3 requests in flight",
        "  RPM needed          4,500 × 6 ÷ 60 = 450 requests/min",
        "  tokens per task     5,940 uncached input + 17,820 cached input + 240 output = 24,000",
        "  uncached input TPM  445,500 tokens/min",
        "  cached input TPM    1,336,500 tokens/min",
        "  output TPM          18,000 tokens/min",
        "  total TPM needed    1,800,000 tokens/min (4,500 ÷ 60 × 24,000; cached input counted, as OpenAI counts it)",
        "  limits              concurrency: not declared · tpm 2,000,000: headroom 10% · rpm: not declared",
        "  binds first         tpm (at 3 agents)",
        "  max sustainable     3 agents (4,500 tasks/hour) under the declared limits, at the figures measured at 4 agents",
        "  measured            up to 16 agents within the SLO in this run, past the knee included",
    ] {
        assert!(w.contains(line), "missing {line:?} in\n{w}");
    }
    let json = serde_json::to_value(&p).unwrap();
    assert_eq!(json["target"]["tasks_per_hour"], 4_000.0);
    assert_eq!(json["tpm_counts_cached"], true);
    assert_eq!(json["models"][0]["needs"]["agents"], 3);
    assert_eq!(json["models"][0]["binding_limit"], "tpm");
}
