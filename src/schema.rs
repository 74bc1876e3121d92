//! The JSON Schema of the scenario format, committed as `scenarios/scenario.schema.json` and
//! printed by `ladder schema`, so editors (yaml-language-server) complete and validate scenarios.

pub const SCENARIO_SCHEMA: &str = include_str!("../scenarios/scenario.schema.json");
