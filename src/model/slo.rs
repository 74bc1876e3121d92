//! Service-level objectives: the scenario's `slo:` bounds, the one SLO type every command uses
//! (the runner's goodput, `plan`, `refine`, the report). `meta.json` keeps it in milliseconds
//! (`ttft_ms`, `ttfc_ms`, `tpot_ms`, `e2e_ms`), which its serde form reads and writes.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::time::Duration;

/// The `slo:` bounds of a scenario; a request meets the SLO when it is within every bound set.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Slo {
    #[serde(rename = "ttft_ms", default, with = "millis")]
    pub ttft: Option<Duration>,
    /// Time to the first answer token (after any streamed reasoning).
    #[serde(
        rename = "ttfc_ms",
        default,
        with = "millis",
        skip_serializing_if = "Option::is_none"
    )]
    pub ttfc: Option<Duration>,
    #[serde(rename = "tpot_ms", default, with = "millis")]
    pub tpot: Option<Duration>,
    #[serde(rename = "e2e_ms", default, with = "millis")]
    pub e2e: Option<Duration>,
}

impl Slo {
    /// No bound set.
    pub fn is_empty(&self) -> bool {
        self.ttft.is_none() && self.ttfc.is_none() && self.tpot.is_none() && self.e2e.is_none()
    }

    pub fn ttft_ms(&self) -> Option<f64> {
        self.ttft.map(as_ms)
    }

    pub fn ttfc_ms(&self) -> Option<f64> {
        self.ttfc.map(as_ms)
    }

    pub fn tpot_ms(&self) -> Option<f64> {
        self.tpot.map(as_ms)
    }

    pub fn e2e_ms(&self) -> Option<f64> {
        self.e2e.map(as_ms)
    }

    /// The bounds with their names, in the order the product shows them.
    pub fn bounds_ms(&self) -> [(&'static str, Option<f64>); 4] {
        [
            ("TTFT", self.ttft_ms()),
            ("TTFC", self.ttfc_ms()),
            ("TPOT", self.tpot_ms()),
            ("E2E", self.e2e_ms()),
        ]
    }
}

/// A step with more than this share of failed requests misses any SLO (`plan`, `search`).
pub const MAX_FAILED_SHARE: f64 = 0.01;

fn as_ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// `Option<Duration>` as a number of milliseconds (or null); a negative, NaN or infinite number
/// reads as no bound.
mod millis {
    use super::*;

    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        d.map(as_ms).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        let ms = Option::<f64>::deserialize(d)?;
        Ok(ms
            .filter(|v| v.is_finite() && *v >= 0.0)
            .map(|v| Duration::from_secs_f64(v / 1000.0)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_json_keeps_milliseconds_and_reads_older_forms() {
        let slo = Slo {
            ttft: Some(Duration::from_millis(1500)),
            ttfc: None,
            tpot: None,
            e2e: Some(Duration::from_micros(2500)),
        };
        let json = serde_json::to_value(slo).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"ttft_ms": 1500.0, "tpot_ms": null, "e2e_ms": 2.5})
        );
        assert_eq!(serde_json::from_value::<Slo>(json).unwrap(), slo);
        // Fields missing (older runs) or unusable read as no bound.
        let old: Slo = serde_json::from_str(r#"{"ttft_ms": -1, "tpot_ms": 40}"#).unwrap();
        assert_eq!(old.ttft, None);
        assert_eq!(old.tpot, Some(Duration::from_millis(40)));
        assert_eq!(old.e2e, None);
        assert!(Slo::default().is_empty() && !old.is_empty());
        assert_eq!(old.bounds_ms()[2], ("TPOT", Some(40.0)));
        // A TTFC bound is kept when set, and absent from meta.json otherwise (as before it).
        let ttfc = Slo {
            ttfc: Some(Duration::from_millis(800)),
            ..Slo::default()
        };
        let json = serde_json::to_value(ttfc).unwrap();
        assert_eq!(json["ttfc_ms"], 800.0);
        assert_eq!(serde_json::from_value::<Slo>(json).unwrap(), ttfc);
        assert_eq!(ttfc.bounds_ms()[1], ("TTFC", Some(800.0)));
    }
}
