//! The facts every layer shares, and nothing else: one `RequestRecord` per attempted request
//! (with its `ErrorClass` and `ItlHistogram`), the unit a ladder's steps count (`LadderUnit`),
//! the SLO bounds, why a run stopped early (`StoppedBy`) and what tokens cost (`Pricing`).
//! Imports nothing of ours, so any module may use it.

pub mod itl;
pub mod ladder_unit;
pub mod pricing;
pub mod record;
pub mod slo;
pub mod stopped;
pub mod target_kind;

pub use itl::ItlHistogram;
pub use ladder_unit::LadderUnit;
pub use pricing::{cost_text, Price, Pricing};
pub use record::*;
pub use slo::Slo;
pub use stopped::StoppedBy;
pub use target_kind::TargetKind;
