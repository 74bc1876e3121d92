//! Validation of `load:`: the ladder and what its values are (streams, requests/s or prompt
//! tokens), closed or open loop with its arrival process and cap, and the step budget.

use super::errors::{did_you_mean, Ctx};
use super::raw::{dur_or, pos, RawArrivals, RawLoad};
use super::{
    ArrivalProcess, Budget, LadderOver, Load, LoadMode, ScenarioError, MAX_REQUESTS_PER_STEP,
};
use std::time::Duration;

/// `bail!(cx, "load.ladder", "the ladder is empty; ...")`: returns a located error.
macro_rules! bail {
    ($cx:expr, $path:expr, $($msg:tt)+) => {
        return Err($cx.err($path, format!($($msg)+)))
    };
}

pub(super) fn build_load(cx: &Ctx, raw: Option<RawLoad>) -> Result<Load, ScenarioError> {
    let Some(l) = raw else {
        bail!(
            cx,
            "load",
            "missing; add e.g. load: {{ladder: [1, 2, 4, 8], requests_per_step: 100}}"
        )
    };
    let ladder: Vec<u32> = l
        .ladder
        .unwrap_or_default()
        .into_iter()
        .map(|c| c.0)
        .collect();
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
    let rate_mode = match l.mode.as_deref() {
        None | Some("concurrency") => false,
        Some("rate") => true,
        Some(other) => {
            let hint = did_you_mean(other, &["concurrency", "rate"]);
            bail!(
                cx,
                "load.mode",
                "unknown mode `{other}`{hint}; use concurrency (ladder = streams) or rate \
                 (ladder = requests/s)"
            )
        }
    };
    let mode = if rate_mode {
        let arrivals = match l.arrivals {
            None => ArrivalProcess::Poisson,
            Some(RawArrivals::Name(n)) if n == "poisson" => ArrivalProcess::Poisson,
            Some(RawArrivals::Name(n)) => bail!(
                cx,
                "load.arrivals",
                "unknown arrivals `{n}`; write poisson or {{gamma: {{burstiness: 0.5}}}}"
            ),
            Some(RawArrivals::Map(m)) => match m.gamma.and_then(|g| g.burstiness) {
                Some(b) if b.is_finite() && b > 0.0 => ArrivalProcess::Gamma { burstiness: b },
                _ => bail!(
                    cx,
                    "load.arrivals",
                    "gamma needs a burstiness above 0 (1 = Poisson, below 1 burstier), \
                     e.g. {{gamma: {{burstiness: 0.5}}}}"
                ),
            },
        };
        LoadMode::Rate {
            arrivals,
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
    let ladder_over = match l.ladder_over.as_deref() {
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
    };
    let chosen: Vec<(&str, Budget)> = [
        (
            "requests_per_step",
            pos(l.requests_per_step).map(Budget::RequestsPerStep),
        ),
        (
            "requests_per_worker",
            pos(l.requests_per_worker).map(Budget::RequestsPerWorker),
        ),
        ("duration", l.duration.map(|d| Budget::Duration(d.0))),
    ]
    .into_iter()
    .filter_map(|(k, b)| b.map(|b| (k, b)))
    .collect();
    let budget = match chosen.as_slice() {
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
    if rate_mode && matches!(budget, Budget::RequestsPerWorker(_)) {
        bail!(
            cx,
            "load.requests_per_worker",
            "rate mode has no workers; write requests_per_step: (arrivals per step) or duration:"
        )
    }
    let streams = match ladder_over {
        LadderOver::Load if !rate_mode => ladder.iter().copied().max().unwrap_or(1),
        LadderOver::PromptTokens { level } if !rate_mode => level,
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
    })
}
