//! Which fault (if any) one request gets: a single uniform draw per request walked through the
//! cumulative fault rates in a fixed order, so a rate of 1.0 always fires and a seed reproduces
//! the same sequence. Pure.

use super::params::FaultRates;

/// One kind of injected fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FaultKind {
    Http500,
    Http502,
    Http503,
    Overloaded529,
    Disconnect,
    Stall,
    Malformed,
    InbandError,
    NoDone,
    JsonBody,
}

impl FaultKind {
    /// All kinds, in draw order (the order of [`FaultRates::rates`]).
    pub const ALL: [FaultKind; 10] = [
        FaultKind::Http500,
        FaultKind::Http502,
        FaultKind::Http503,
        FaultKind::Overloaded529,
        FaultKind::Disconnect,
        FaultKind::Stall,
        FaultKind::Malformed,
        FaultKind::InbandError,
        FaultKind::NoDone,
        FaultKind::JsonBody,
    ];

    /// The parameter name (`faults.<name>`), also the key in `/sim/stats`.
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::Http500 => "http_500",
            FaultKind::Http502 => "http_502",
            FaultKind::Http503 => "http_503",
            FaultKind::Overloaded529 => "overloaded_529",
            FaultKind::Disconnect => "disconnect",
            FaultKind::Stall => "stall",
            FaultKind::Malformed => "malformed",
            FaultKind::InbandError => "inband_error",
            FaultKind::NoDone => "no_done",
            FaultKind::JsonBody => "json_body",
        }
    }

    /// Index into [`FaultKind::ALL`] (for counter arrays).
    pub fn index(self) -> usize {
        self as usize
    }

    /// The HTTP status answered instead of a completion, for the status-code faults.
    pub fn status(self) -> Option<u16> {
        match self {
            FaultKind::Http500 => Some(500),
            FaultKind::Http502 => Some(502),
            FaultKind::Http503 => Some(503),
            FaultKind::Overloaded529 => Some(529),
            _ => None,
        }
    }
}

/// The fault for a request whose uniform draw is `u` in [0, 1). Rates are stacked in draw order;
/// if they sum past 1 the later kinds get only what is left.
pub fn pick(u: f64, rates: &FaultRates) -> Option<FaultKind> {
    let mut acc = 0.0;
    for (kind, (_, rate)) in FaultKind::ALL.iter().zip(rates.rates()) {
        acc += rate.clamp(0.0, 1.0);
        if u < acc {
            return Some(*kind);
        }
    }
    None
}

/// After how many of `n` tokens a mid-stream fault strikes: half way, at least after the first.
pub fn strike_after(n: u32) -> u32 {
    (n / 2).max(1).min(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_indices_follow_rates_order() {
        let rates = FaultRates::default().rates();
        for (i, kind) in FaultKind::ALL.iter().enumerate() {
            assert_eq!(kind.index(), i);
            assert_eq!(kind.name(), rates[i].0);
        }
        assert_eq!(FaultKind::Overloaded529.status(), Some(529));
        assert_eq!(FaultKind::Stall.status(), None);
    }

    #[test]
    fn no_rates_no_faults() {
        let r = FaultRates::default();
        for u in [0.0, 0.3, 0.999_999] {
            assert_eq!(pick(u, &r), None);
        }
    }

    #[test]
    fn rate_one_always_fires_for_every_kind() {
        for kind in FaultKind::ALL {
            let mut r = FaultRates::default();
            let mut p = crate::sim::SimParams::default();
            p.set(&format!("faults.{}", kind.name()), "1").unwrap();
            r.clone_from(&p.faults);
            for u in [0.0, 0.5, 0.999_999] {
                assert_eq!(pick(u, &r), Some(kind));
            }
        }
    }

    #[test]
    fn rates_stack_in_order() {
        let r = FaultRates {
            http_500: 0.1,
            stall: 0.2,
            json_body: 0.3,
            ..FaultRates::default()
        };
        assert_eq!(pick(0.05, &r), Some(FaultKind::Http500));
        assert_eq!(pick(0.1, &r), Some(FaultKind::Stall));
        assert_eq!(pick(0.29, &r), Some(FaultKind::Stall));
        assert_eq!(pick(0.301, &r), Some(FaultKind::JsonBody));
        assert_eq!(pick(0.59, &r), Some(FaultKind::JsonBody));
        assert_eq!(pick(0.601, &r), None);
    }

    #[test]
    fn strike_point() {
        assert_eq!(strike_after(0), 0);
        assert_eq!(strike_after(1), 1);
        assert_eq!(strike_after(2), 1);
        assert_eq!(strike_after(3), 1);
        assert_eq!(strike_after(10), 5);
    }
}
