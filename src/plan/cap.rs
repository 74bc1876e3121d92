//! The concurrency a plan needs against what one copy of the measured service holds before its
//! requests queue, as the run's knee says it (`findings`): the knee's estimated cap ("estimated
//! cap ≈ 16" in the knee line), else the knee's highest clean step, else (no knee on a streams
//! ladder) the highest step measured, which only bounds the cap from below. "Needs 40 concurrent
//! streams; the run's knee shows a cap ≈ 31 per replica → 2 replicas."

use crate::findings::{Knee, KneeFinding, ModelFindings};
use crate::model::{LadderUnit, TargetKind};
use serde::Serialize;

/// Where the per-replica concurrency came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CapSource {
    /// The knee's estimated cap (a queueing knee): requests in flight one copy serves at once.
    KneeCap,
    /// A knee without a cap estimate (saturation, rate limits, cause unclear): its highest
    /// clean step, the most streams one copy was seen to hold without TTFT rising.
    MaxClean,
    /// No knee up to the highest step: one copy held at least that many streams.
    NoKnee,
}

/// How many copies of the measured service the needed concurrency takes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CapFit {
    /// Requests in flight one copy holds before they queue (see `source`).
    pub per_replica: f64,
    pub source: CapSource,
    /// The knee's cause ("queueing", "saturation", …) and its interval (max clean, knee], when
    /// the run has a knee.
    pub knee_kind: Option<String>,
    pub knee_interval: Option<(u32, u32)>,
    /// The concurrency needed over `per_replica`, rounded up (at least 1).
    pub replicas: u32,
    /// `replicas` is an upper bound (no knee: each copy holds at least `per_replica`).
    pub at_most: bool,
}

/// The copies `needed` concurrent requests take, from the model's findings; `None` when the run
/// cannot say (a prompt-size ladder, a rate ladder without a cap estimate, a knee not analysed).
pub fn cap_fit(f: &ModelFindings, needed: u32) -> Option<CapFit> {
    if f.ladder_unit == LadderUnit::PromptTokens {
        return None;
    }
    let streams = f.ladder_unit == LadderUnit::Streams;
    let (per_replica, source, knee) = match &f.knee {
        KneeFinding::Knee(k) => match k.estimated_cap {
            Some(cap) => (cap, CapSource::KneeCap, Some(k)),
            None if streams => (
                f64::from(k.max_clean_concurrency),
                CapSource::MaxClean,
                Some(k),
            ),
            None => return None,
        },
        KneeFinding::None {
            highest_concurrency,
            ..
        } if streams => (f64::from(*highest_concurrency), CapSource::NoKnee, None),
        _ => return None,
    };
    Some(fit(per_replica, source, knee.map(|k| &**k), needed)).filter(|c| c.per_replica > 0.0)
}

/// The copies `agents` concurrent agents take, from the findings of an agent ladder: the
/// knee's highest clean step (the most agents one copy served before TTFT rose; a knee's cap
/// estimate counts requests in flight, not agents), else, with no knee, the highest step (one
/// copy held at least that many). `None` for another ladder.
pub fn agents_fit(f: &ModelFindings, agents: u32) -> Option<CapFit> {
    if f.ladder_unit != LadderUnit::Agents {
        return None;
    }
    let c = match &f.knee {
        KneeFinding::Knee(k) => fit(
            f64::from(k.max_clean_concurrency),
            CapSource::MaxClean,
            Some(k),
            agents,
        ),
        KneeFinding::None {
            highest_concurrency,
            ..
        } => fit(
            f64::from(*highest_concurrency),
            CapSource::NoKnee,
            None,
            agents,
        ),
        _ => return None,
    };
    Some(c).filter(|c| c.per_replica > 0.0)
}

/// `needed` over what one copy holds, rounded up (at least 1).
fn fit(per_replica: f64, source: CapSource, knee: Option<&Knee>, needed: u32) -> CapFit {
    // A cap estimate is a count of requests: the plan sizes in whole ones.
    let per_replica = if source == CapSource::KneeCap {
        per_replica.round().max(1.0)
    } else {
        per_replica
    };
    let replicas = if per_replica > 0.0 {
        (f64::from(needed) / per_replica).ceil().max(1.0) as u32
    } else {
        1
    };
    CapFit {
        per_replica,
        source,
        knee_kind: knee.map(|k| k.kind.name().to_string()),
        knee_interval: knee.map(|k| (k.max_clean_concurrency, k.concurrency)),
        replicas,
        at_most: source == CapSource::NoKnee && replicas > 1,
    }
}

/// The plan's row for the lever it names: "replicas" for a server the user runs, "account
/// limit" for a hosted API, both when the target's kind is unknown (`model::target_kind`).
pub fn lever_label(target: Option<&TargetKind>) -> &'static str {
    match target {
        Some(TargetKind::SelfRun { .. }) => "replicas",
        Some(TargetKind::Hosted { .. }) => "account limit",
        _ => "replicas or limit",
    }
}

/// "needs 23 concurrent streams; the run's knee shows a cap ≈ 16 per replica → 2 replicas"
/// (`unit`: the ladder's; an agent ladder's plan needs agents, any other streams). Against a
/// hosted API the cap is the account's, and the lever is a limit to ask for (or more keys);
/// against a target of unknown kind both are said.
pub fn words(c: &CapFit, needed: u32, unit: LadderUnit, target: Option<&TargetKind>) -> String {
    let noun = match (unit, needed) {
        (LadderUnit::Agents, 1) => "agent",
        (LadderUnit::Agents, _) => "agents",
        (_, 1) => "stream",
        _ => "streams",
    };
    let needs = format!("needs {needed} concurrent {noun}");
    let per = c.per_replica;
    let hosted = match target {
        Some(TargetKind::Hosted { provider }) => Some(provider.as_str()),
        _ => None,
    };
    // Where the cap lives: one copy of the service, or the account.
    let at = if hosted.is_some() {
        "on this account"
    } else {
        "per replica"
    };
    let basis = match (c.source, c.knee_interval) {
        (CapSource::KneeCap, _) => format!("the run's knee shows a cap ≈ {per:.0} {at}"),
        (CapSource::MaxClean, Some((lo, hi))) => format!(
            "the run's knee ({}) is in ({lo}, {hi}] {}, clean up to {per:.0} {at}",
            c.knee_kind.as_deref().unwrap_or("cause unclear"),
            unit.plural(),
        ),
        _ => format!("no knee up to {}", unit.describe(per as u32)),
    };
    let copies = |n: u32| {
        if n == 1 {
            "1 replica".to_string()
        } else {
            format!("{n} replicas")
        }
    };
    let replicas = if c.at_most {
        format!(
            "at most {} (each held {per:.0} without queueing)",
            copies(c.replicas)
        )
    } else {
        copies(c.replicas)
    };
    let limit = if c.replicas <= 1 {
        "within what the account held".to_string()
    } else {
        format!(
            "a concurrency limit of at least {needed}, or the load spread over {} keys or accounts like this one",
            c.replicas
        )
    };
    let limit = if c.at_most && c.replicas > 1 {
        format!(
            "perhaps {limit} (no knee showed the cap: the account held {per:.0} without queueing)"
        )
    } else {
        limit
    };
    match (hosted, target) {
        (Some(_), _) if c.replicas <= 1 => format!("{needs}; {basis} → {limit}"),
        (Some(provider), _) => format!("{needs}; {basis} → ask {provider} for {limit}"),
        (None, Some(TargetKind::SelfRun { .. })) => format!("{needs}; {basis} → {replicas}"),
        _ if c.replicas <= 1 => format!(
            "{needs}; {basis} → {replicas} if you run the server; on a hosted API or a gateway, {limit}"
        ),
        _ => format!(
            "{needs}; {basis} → {replicas} if you run the server; on a hosted API or a gateway, {limit}"
        ),
    }
}
