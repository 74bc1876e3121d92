//! Service-level objectives: the scenario's bounds as durations (`Slo`) and the milliseconds
//! form `meta.json` keeps (`SloMs`).

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The `slo:` bounds of a scenario; a request meets the SLO when it is within every bound set.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Slo {
    pub ttft: Option<Duration>,
    pub tpot: Option<Duration>,
    pub e2e: Option<Duration>,
}

/// An SLO in milliseconds, as `meta.json` keeps it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SloMs {
    pub ttft_ms: Option<f64>,
    pub tpot_ms: Option<f64>,
    pub e2e_ms: Option<f64>,
}

impl From<&Slo> for SloMs {
    fn from(s: &Slo) -> Self {
        let ms = |d: Option<Duration>| d.map(|d| d.as_secs_f64() * 1000.0);
        SloMs {
            ttft_ms: ms(s.ttft),
            tpot_ms: ms(s.tpot),
            e2e_ms: ms(s.e2e),
        }
    }
}

impl From<&SloMs> for Slo {
    fn from(s: &SloMs) -> Self {
        let d = |ms: Option<f64>| {
            ms.filter(|v| v.is_finite() && *v >= 0.0)
                .map(|v| Duration::from_secs_f64(v / 1000.0))
        };
        Slo {
            ttft: d(s.ttft_ms),
            tpot: d(s.tpot_ms),
            e2e: d(s.e2e_ms),
        }
    }
}
