//! Validation of `load:`: the ladder and what its values are (streams, requests/s or prompt
//! tokens, trace speeds), closed or open loop with its arrival process and cap, a replayed
//! trace, and the step budget.

use super::errors::{did_you_mean, Ctx};
use super::raw::{RawArrivals, RawLoad};
use super::scalars::{dur_or, pos};
use super::trace::{read_trace, Trace};
use super::{
    ArrivalProcess, Budget, LadderOver, Load, LoadMode, ScenarioError, Search, Slo,
    DEFAULT_SEARCH_MAX, DEFAULT_SEARCH_STEPS, MAX_REQUESTS_PER_STEP,
};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// `bail!(cx, "load.ladder", "the ladder is empty; ...")`: returns a located error.
macro_rules! bail {
    ($cx:expr, $path:expr, $($msg:tt)+) => {
        return Err($cx.err($path, format!($($msg)+)))
    };
}

pub(super) fn build_load(cx: &Ctx, raw: Option<RawLoad>) -> Result<Load, ScenarioError> {
    let Some(mut l) = raw else {
        bail!(
            cx,
            "load",
            "missing; add e.g. load: {{ladder: [1, 2, 4, 8], requests_per_step: 100}}"
        )
    };
    let replay = l.mode.as_deref() == Some("replay");
    let replayed = replay_trace(cx, &l, replay)?;
    let search = build_search(cx, &l)?;
    let ladder = ladder_of(cx, &mut l, replay, search.is_some())?;
    let (mode, rate_mode) = load_mode(cx, &l, replay)?;
    let ladder_over = ladder_over_of(cx, &l, rate_mode)?;
    let open_loop = rate_mode || replay;
    let budget = budget_of(cx, &l, replay, replayed.as_ref().map(|r| r.1))?;
    if open_loop && matches!(budget, Budget::RequestsPerWorker(_)) {
        bail!(
            cx,
            "load.requests_per_worker",
            "rate mode has no workers; write requests_per_step: (arrivals per step) or duration:"
        )
    }
    let closed = !open_loop && matches!(ladder_over, LadderOver::Load);
    let agent = super::agent::build_agent(cx, l.agent.take(), closed)?;
    let top = ladder.iter().copied().max().unwrap_or(1);
    let top = search.map_or(top, |s| top.max(s.max));
    let streams = match ladder_over {
        LadderOver::Load if !open_loop => top,
        LadderOver::PromptTokens { level } if !open_loop => level,
        _ => 1,
    };
    if matches!(budget, Budget::RequestsPerStep(n) if n < u64::from(streams)) {
        bail!(
            cx,
            "load.requests_per_step",
            "fewer requests than the {streams} streams of the top step; write at least {streams}"
        )
    }
    Ok(Load {
        ladder,
        mode,
        ladder_over,
        seed: l.seed.unwrap_or(1),
        budget,
        warmup_requests: l.warmup_requests.map_or(0, |w| w.0),
        ramp_up: dur_or(l.ramp_up, Duration::ZERO),
        pause_between_steps: dur_or(l.pause_between_steps, Duration::ZERO),
        refine: l.refine.map_or(0, |r| r.0),
        trace: replayed.and_then(|r| r.0),
        search,
        agent,
    })
}

/// The ladder (or a replay's speeds): present, increasing; a search without one starts at 1.
fn ladder_of(
    cx: &Ctx,
    l: &mut RawLoad,
    replay: bool,
    search: bool,
) -> Result<Vec<u32>, ScenarioError> {
    let mut ladder: Vec<u32> = l
        .ladder
        .take()
        .or(l.speed.take())
        .unwrap_or_default()
        .into_iter()
        .map(|c| c.0)
        .collect();
    if ladder.is_empty() && search {
        ladder.push(1);
    }
    if ladder.is_empty() && replay {
        bail!(
            cx,
            "load.speed",
            "missing; list the multiples of the trace's rate to replay, e.g. speed: [1, 2, 4]"
        )
    }
    if ladder.is_empty() {
        bail!(
            cx,
            "load.ladder",
            "the ladder is empty; list at least one concurrency, e.g. ladder: [5, 10, 20]"
        )
    }
    if let Some(w) = ladder.windows(2).find(|w| w[1] <= w[0]) {
        bail!(
            cx,
            "load.ladder",
            "steps must increase ({} after {}), e.g. ladder: [5, 10, 20]",
            w[1],
            w[0]
        )
    }
    Ok(ladder)
}

/// Closed loop, rate (with its arrival process) or replay; and whether it is rate mode.
fn load_mode(cx: &Ctx, l: &RawLoad, replay: bool) -> Result<(LoadMode, bool), ScenarioError> {
    let rate_mode = match l.mode.as_deref() {
        None | Some("concurrency" | "replay") => false,
        Some("rate") => true,
        Some(other) => {
            let hint = did_you_mean(other, &["concurrency", "rate", "replay"]);
            bail!(
                cx,
                "load.mode",
                "unknown mode `{other}`{hint}; use concurrency (ladder = streams), rate \
                 (ladder = requests/s) or replay (speed = multiples of a trace's rate)"
            )
        }
    };
    let mode = if replay {
        LoadMode::Replay {
            max_concurrency: pos(l.max_concurrency),
        }
    } else if rate_mode {
        LoadMode::Rate {
            arrivals: arrivals_of(cx, l)?,
            max_concurrency: pos(l.max_concurrency),
        }
    } else {
        for (key, set) in [
            ("arrivals", l.arrivals.is_some()),
            ("max_concurrency", l.max_concurrency.is_some()),
            ("rate", l.rate.is_some()),
        ] {
            if set {
                bail!(
                    cx,
                    &format!("load.{key}"),
                    "only applies to open-loop load; add load.mode: rate or remove it"
                )
            }
        }
        LoadMode::Concurrency
    };
    if rate_mode && l.concurrency.is_some() {
        bail!(
            cx,
            "load.concurrency",
            "rate mode sets a rate, not streams; write load.rate: <requests/s> (with \
             ladder_over: prompt_tokens) or max_concurrency: to cap streams"
        )
    }
    Ok((mode, rate_mode))
}

/// Rate mode's arrival process: Poisson unless a gamma burstiness is given.
fn arrivals_of(cx: &Ctx, l: &RawLoad) -> Result<ArrivalProcess, ScenarioError> {
    Ok(match &l.arrivals {
        None => ArrivalProcess::Poisson,
        Some(RawArrivals::Name(n)) if n == "poisson" => ArrivalProcess::Poisson,
        Some(RawArrivals::Name(n)) => bail!(
            cx,
            "load.arrivals",
            "unknown arrivals `{n}`; write poisson or {{gamma: {{burstiness: 0.5}}}}"
        ),
        Some(RawArrivals::Map(m)) => match m.gamma.as_ref().and_then(|g| g.burstiness) {
            Some(b) if b.is_finite() && b > 0.0 => ArrivalProcess::Gamma { burstiness: b },
            _ => bail!(
                cx,
                "load.arrivals",
                "gamma needs a burstiness above 0 (1 = Poisson, below 1 burstier), \
                 e.g. {{gamma: {{burstiness: 0.5}}}}"
            ),
        },
    })
}

/// What the ladder's values are: the load itself, or prompt sizes at a fixed load.
fn ladder_over_of(cx: &Ctx, l: &RawLoad, rate_mode: bool) -> Result<LadderOver, ScenarioError> {
    Ok(match l.ladder_over.as_deref() {
        None | Some("load") => {
            if let Some(key) = [
                ("concurrency", l.concurrency.is_some()),
                ("rate", l.rate.is_some()),
            ]
            .into_iter()
            .find_map(|(k, set)| set.then_some(k))
            {
                bail!(
                    cx,
                    &format!("load.{key}"),
                    "fixes the load of a prompt-size ladder; add ladder_over: prompt_tokens \
                     or remove it (the ladder gives the load)"
                )
            }
            LadderOver::Load
        }
        Some("prompt_tokens") => {
            let level = if rate_mode {
                pos(l.rate)
            } else {
                pos(l.concurrency)
            };
            LadderOver::PromptTokens {
                level: level.unwrap_or(1),
            }
        }
        Some(other) => {
            let hint = did_you_mean(other, &["load", "prompt_tokens"]);
            bail!(
                cx,
                "load.ladder_over",
                "unknown value `{other}`{hint}; use load (the default) or prompt_tokens"
            )
        }
    })
}

/// How a step ends: one of requests_per_step, requests_per_worker or duration (a replay step
/// replays the whole trace of `trace_len` requests by default), within the limits.
fn budget_of(
    cx: &Ctx,
    l: &RawLoad,
    replay: bool,
    trace_len: Option<u64>,
) -> Result<Budget, ScenarioError> {
    let chosen: Vec<(&str, Budget)> = [
        (
            "requests_per_step",
            pos(l.requests_per_step).map(Budget::RequestsPerStep),
        ),
        (
            "requests_per_worker",
            pos(l.requests_per_worker).map(Budget::RequestsPerWorker),
        ),
        (
            "duration",
            l.duration.as_ref().map(|d| Budget::Duration(d.0)),
        ),
    ]
    .into_iter()
    .filter_map(|(k, b)| b.map(|b| (k, b)))
    .collect();
    let budget = match chosen.as_slice() {
        [] if replay => Budget::RequestsPerStep(trace_len.unwrap_or(0)),
        [] => Budget::RequestsPerStep(100),
        [(_, b)] => *b,
        [(a, _), (b, _), ..] => bail!(
            cx,
            &format!("load.{b}"),
            "both `{a}` and `{b}` are set; a step ends one way: keep one"
        ),
    };
    let over = match budget {
        Budget::RequestsPerStep(n) if n > MAX_REQUESTS_PER_STEP => Some(n),
        _ => None,
    };
    if let Some(n) = over {
        bail!(
            cx,
            "load.requests_per_step",
            "{n} requests per step is more than one step may send; write at most \
             {MAX_REQUESTS_PER_STEP} (or use duration: for long steps)"
        )
    }
    if budget == Budget::Duration(Duration::ZERO) {
        bail!(
            cx,
            "load.duration",
            "a step of 0s measures nothing; write e.g. duration: 60s"
        )
    }
    if let (Some(len), Budget::RequestsPerStep(n)) = (trace_len, budget) {
        if n > len {
            bail!(
                cx,
                "load.requests_per_step",
                "the trace holds {len} requests; a replay step sends at most the whole trace: \
                 write at most {len} (or leave it out)"
            )
        }
    }
    Ok(budget)
}

/// `load.search`: at least one SLO bound, a `max` no lower than the ladder's top.
fn build_search(cx: &Ctx, l: &RawLoad) -> Result<Option<Search>, ScenarioError> {
    let Some(raw) = &l.search else {
        return Ok(None);
    };
    let slo = raw.slo.as_ref().map_or_else(Slo::default, |s| Slo {
        ttft: s.ttft_p90.as_ref().map(|d| d.0),
        ttfc: s.ttfc_p90.as_ref().map(|d| d.0),
        tpot: s.tpot_p90.as_ref().map(|d| d.0),
        e2e: s.e2e_p90.as_ref().map(|d| d.0),
    });
    if slo.is_empty() {
        bail!(
            cx,
            "load.search.slo",
            "the search needs an SLO to meet; write e.g. search: {{slo: {{ttft_p90: 1s, \
             tpot_p90: 50ms}}, max: 512}}"
        )
    }
    if l.ladder_over.as_deref() == Some("prompt_tokens") {
        bail!(
            cx,
            "load.search",
            "searches the load; a prompt-size ladder keeps the load fixed: remove one of them"
        )
    }
    let max = raw.max.as_ref().map_or(DEFAULT_SEARCH_MAX, |m| m.0);
    let top = l
        .ladder
        .iter()
        .chain(&l.speed)
        .flatten()
        .map(|c| c.0)
        .max()
        .unwrap_or(1);
    if top > max {
        bail!(
            cx,
            "load.search.max",
            "{max} is below the ladder's top step {top}; write max: {top} or more"
        )
    }
    Ok(Some(Search {
        slo,
        max,
        steps: raw.steps.as_ref().map_or(DEFAULT_SEARCH_STEPS, |s| s.0),
    }))
}

/// A replay's trace (`None` when read back from a run's record) and its number of requests.
type Replayed = (Option<Arc<Trace>>, u64);

/// `mode: replay`'s trace (read and checked, relative to the scenario; `None` when the load is
/// a run's recorded one, which names the trace by hash) and how many requests it holds. Keys
/// that only replay reads are refused elsewhere, and keys replay has no use for are refused
/// here.
fn replay_trace(cx: &Ctx, l: &RawLoad, replay: bool) -> Result<Option<Replayed>, ScenarioError> {
    if !replay {
        for (key, set) in [("trace", l.trace.is_some()), ("speed", l.speed.is_some())] {
            if set {
                bail!(
                    cx,
                    &format!("load.{key}"),
                    "only applies to trace replay; add load.mode: replay or remove it"
                )
            }
        }
        return Ok(None);
    }
    if l.ladder.is_some() && l.speed.is_some() {
        bail!(
            cx,
            "load.speed",
            "both `ladder` and `speed` are set; in replay mode they are one list: keep speed"
        )
    }
    for (key, set) in [
        ("arrivals", l.arrivals.is_some()),
        ("rate", l.rate.is_some()),
        ("concurrency", l.concurrency.is_some()),
        ("ladder_over", l.ladder_over.is_some()),
        ("requests_per_worker", l.requests_per_worker.is_some()),
    ] {
        if set {
            bail!(
                cx,
                &format!("load.{key}"),
                "does not apply to replay: the trace gives the arrivals and the sizes, the \
                 speed their multiple; remove it"
            )
        }
    }
    let fix = "write the trace file, e.g. trace: traces/prod.jsonl (relative to the scenario)";
    match &l.trace {
        None => bail!(cx, "load.trace", "missing: replay needs a trace; {fix}"),
        Some(serde_yaml::Value::String(rel)) if !rel.trim().is_empty() => {
            let path = cx.file.parent().unwrap_or(Path::new("")).join(rel);
            let raise = format!(
                "raise the cap with {}=N (MiB) if the trace is meant to be that large",
                super::bounded::PROMPT_CAP_VAR
            );
            match read_trace(&path, cx.prompt_cap, &raise) {
                Ok(t) => {
                    let n = t.requests.len() as u64;
                    Ok(Some((Some(Arc::new(t)), n)))
                }
                Err(e) if e.line.is_none() => {
                    bail!(cx, "load.trace", "{}: {}", path.display(), e.message)
                }
                Err(e) => Err(ScenarioError::Invalid {
                    file: path,
                    line: e.line,
                    field: "load.trace".into(),
                    message: e.message,
                }),
            }
        }
        // A run's recorded scenario: `{file, sha256, requests}`.
        Some(serde_yaml::Value::Mapping(m)) => {
            let n = m.get("requests").and_then(serde_yaml::Value::as_u64);
            match n {
                Some(n) => Ok(Some((None, n))),
                None => bail!(cx, "load.trace", "{fix}"),
            }
        }
        Some(_) => bail!(cx, "load.trace", "{fix}"),
    }
}
