//! What a scenario that measures no first token may not ask for: with `request.stream: false`,
//! or with an API that never streams (embeddings), TTFT, TTFC, TPOT and ITL are not measured, so
//! an SLO, a search bound or a gate on one of them could never be judged. Each is refused at its
//! field, with the E2E bound to write instead.

use super::errors::Ctx;
use super::{ScenarioError, Slo};
use crate::dialect::Api;

/// Refuses a first-token bound in a scenario that does not stream (`request.stream: false`);
/// `api` says why (embeddings never stream, so streaming is not offered as the way out).
pub(super) fn check_unstreamed(
    cx: &Ctx,
    api: Api,
    slo: &Slo,
    search: Option<&super::Search>,
    gates: Option<&super::raw::RawGates>,
) -> Result<(), ScenarioError> {
    let (reason, or_stream) = if api.embeds() {
        (
            format!(
                "which {} does not measure (its answer is one body of vectors: no token, no \
                 first token)",
                api.as_str()
            ),
            "",
        )
    } else {
        (
            "which is not measured when request.stream is false (a whole answer has no first \
             token)"
                .to_string(),
            ", or stream (request.stream: true)",
        )
    };
    let why = |field: &str, what: &str, instead: &str| {
        cx.err(
            field,
            format!(
                "bounds {what}, {reason}; remove it and bound E2E instead ({instead}){or_stream}"
            ),
        )
    };
    let slo_fields = [
        ("slo.ttft", "TTFT", slo.ttft.is_some()),
        ("slo.ttfc", "TTFC", slo.ttfc.is_some()),
        ("slo.tpot", "TPOT", slo.tpot.is_some()),
    ];
    if let Some((field, what, _)) = slo_fields.into_iter().find(|f| f.2) {
        return Err(why(field, what, "slo.e2e"));
    }
    if let Some(s) = search {
        let bounds = [
            ("load.search.slo.ttft_p90", "TTFT", s.slo.ttft.is_some()),
            ("load.search.slo.ttfc_p90", "TTFC", s.slo.ttfc.is_some()),
            ("load.search.slo.tpot_p90", "TPOT", s.slo.tpot.is_some()),
        ];
        if let Some((field, what, _)) = bounds.into_iter().find(|f| f.2) {
            return Err(why(field, what, "load.search.slo.e2e_p90"));
        }
    }
    if let Some(g) = gates {
        let set = [
            ("gates.ttft", "TTFT", g.ttft.is_some()),
            ("gates.ttfc", "TTFC", g.ttfc.is_some()),
            ("gates.tpot", "TPOT", g.tpot.is_some()),
            ("gates.itl", "ITL", g.itl.is_some()),
        ];
        if let Some((field, what, _)) = set.into_iter().find(|f| f.2) {
            return Err(why(field, what, "gates.e2e"));
        }
    }
    Ok(())
}
