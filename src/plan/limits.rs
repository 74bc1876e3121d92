//! A declared limit (`limits:` or `--limit-*`: concurrency, TPM, RPM, ITPM, OTPM) against a plan, the same
//! for a rate and for agents: what the plan needs of it, its headroom, the most of the target
//! it allows, and which limit binds first.

use crate::scenario::Limits;
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitName {
    Concurrency,
    Tpm,
    Rpm,
    Itpm,
    Otpm,
}

impl LimitName {
    pub const ALL: [LimitName; 5] = [
        LimitName::Concurrency,
        LimitName::Tpm,
        LimitName::Rpm,
        LimitName::Itpm,
        LimitName::Otpm,
    ];

    pub fn label(self) -> &'static str {
        match self {
            LimitName::Concurrency => "concurrency",
            LimitName::Tpm => "tpm",
            LimitName::Rpm => "rpm",
            LimitName::Itpm => "itpm",
            LimitName::Otpm => "otpm",
        }
    }
}

/// What a plan sizes: a rate (`Rate`, `--rps`) or agents (`Agents`, `--agents` or
/// `--tasks-per-hour`). The figures a limit check holds are the same for both; only what its
/// most counts differs.
pub trait TargetUnit {
    /// The JSON name of the most of the target a limit allows (`max_rps`, `max_agents`).
    const MOST: &'static str;
}

/// A plan for a rate: a limit allows at most so many requests/s.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate;

impl TargetUnit for Rate {
    const MOST: &'static str = "max_rps";
}

/// A plan for agents: a limit allows at most so many concurrent agents.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Agents;

impl TargetUnit for Agents {
    const MOST: &'static str = "max_agents";
}

/// One declared limit against what the plan needs, and the most of the target it allows at the
/// figures of the plan's `limits_at` step (whatever the target: the run's, not the question's).
#[derive(Debug, Clone, PartialEq)]
pub struct LimitCheck<U> {
    pub limit: LimitName,
    pub declared: f64,
    pub needed: f64,
    /// (declared − needed) / declared × 100; negative when the plan exceeds the limit.
    pub headroom_pct: f64,
    /// The most requests/s or agents this limit allows (JSON `max_rps`, `max_agents`).
    pub most: f64,
    unit: std::marker::PhantomData<U>,
}

impl<U> LimitCheck<U> {
    /// `limit` of `declared` against `needed`, each unit of the target taking `per_unit` of it.
    pub fn new(limit: LimitName, declared: f64, needed: f64, per_unit: f64) -> LimitCheck<U> {
        LimitCheck {
            limit,
            declared,
            needed,
            headroom_pct: headroom_pct(declared, needed),
            most: most(declared, per_unit),
            unit: std::marker::PhantomData,
        }
    }
}

/// The declared limit that allows the least of the target (the one that binds first).
pub fn binding<U>(checks: &[LimitCheck<U>]) -> Option<&LimitCheck<U>> {
    checks
        .iter()
        .filter(|c| c.most.is_finite())
        .min_by(|a, b| a.most.total_cmp(&b.most))
}

impl<U: TargetUnit> Serialize for LimitCheck<U> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("LimitCheck", 5)?;
        st.serialize_field("limit", &self.limit)?;
        st.serialize_field("declared", &self.declared)?;
        st.serialize_field("needed", &self.needed)?;
        st.serialize_field("headroom_pct", &self.headroom_pct)?;
        st.serialize_field(U::MOST, &self.most)?;
        st.end()
    }
}

/// (declared − needed) / declared × 100: a limit's headroom in %, negative when over it.
pub(crate) fn headroom_pct(declared: f64, needed: f64) -> f64 {
    (declared - needed) / declared * 100.0
}

/// The most of a target (requests/s, agents) a limit allows when each unit of it takes
/// `per_unit` of the limit; unlimited when it takes none.
pub(crate) fn most(declared: f64, per_unit: f64) -> f64 {
    if per_unit > 0.0 {
        declared / per_unit
    } else {
        f64::INFINITY
    }
}

/// The declared limits that are set (0 means none), as (name, value).
pub(crate) fn declared_limits(limits: &Limits) -> Vec<(LimitName, f64)> {
    let mut out = Vec::new();
    if let Some(c) = limits.concurrency.filter(|c| *c > 0) {
        out.push((LimitName::Concurrency, f64::from(c)));
    }
    if let Some(t) = limits.tpm.filter(|t| *t > 0) {
        out.push((LimitName::Tpm, t as f64));
    }
    if let Some(r) = limits.rpm.filter(|r| *r > 0) {
        out.push((LimitName::Rpm, r as f64));
    }
    if let Some(t) = limits.itpm.filter(|t| *t > 0) {
        out.push((LimitName::Itpm, t as f64));
    }
    if let Some(t) = limits.otpm.filter(|t| *t > 0) {
        out.push((LimitName::Otpm, t as f64));
    }
    out
}
