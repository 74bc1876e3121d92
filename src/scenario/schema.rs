//! The JSON Schema of the scenario format, committed as `scenarios/scenario.schema.json` and
//! printed by `ladder schema`, so editors (yaml-language-server) complete and validate scenarios.
//! The tests below keep it honest against the loader: same field names at every level, same
//! `api` and `retry_on` names, same defaults.

pub const SCENARIO_SCHEMA: &str = include_str!("../../scenarios/scenario.schema.json");

#[cfg(test)]
mod tests {
    use super::SCENARIO_SCHEMA;
    use crate::model::ErrorClass;
    use crate::scenario::{load_str, RetryPolicy, Timeouts};
    use crate::sim::SimParams;
    use serde_json::Value;
    use std::collections::BTreeSet;
    use std::path::Path;
    use std::time::Duration;

    fn schema() -> Value {
        serde_json::from_str(SCENARIO_SCHEMA).expect("scenario.schema.json is valid JSON")
    }

    /// Follows local `#/definitions/name` references.
    fn resolve<'a>(root: &'a Value, node: &'a Value) -> &'a Value {
        match node.get("$ref").and_then(Value::as_str) {
            Some(r) => {
                let name = r.strip_prefix("#/definitions/").expect("local ref");
                resolve(root, &root["definitions"][name])
            }
            None => node,
        }
    }

    /// The object schema with `properties` that `node` is, or offers as an `anyOf` alternative.
    fn object_schema<'a>(root: &'a Value, node: &'a Value) -> Option<&'a Value> {
        let node = resolve(root, node);
        if node.get("properties").is_some() {
            return Some(node);
        }
        let alternatives = node.get("anyOf").and_then(Value::as_array)?;
        alternatives.iter().find_map(|a| object_schema(root, a))
    }

    /// The loader's error for `yaml`, which must not load.
    fn load_error(yaml: &str) -> String {
        match load_str(yaml, Path::new("probe.yaml"), &|_| None) {
            Ok(_) => panic!("expected an error for:\n{yaml}"),
            Err(e) => e.to_string(),
        }
    }

    /// Field names the loader accepts at `path`, read from its unknown-field message.
    fn loader_fields(path: &[String]) -> BTreeSet<String> {
        let mut yaml = String::new();
        for (depth, key) in path.iter().enumerate() {
            yaml += &format!("{}{key}:\n", "  ".repeat(depth));
        }
        yaml += &format!("{}zz_not_a_field: 1\n", "  ".repeat(path.len()));
        let msg = load_error(&yaml);
        let list = msg
            .split_once("the fields allowed here are: ")
            .unwrap_or_else(|| panic!("no field list in: {msg}"))
            .1;
        list.split(", ").map(|s| s.trim().to_string()).collect()
    }

    /// Compares the schema's properties with the loader's fields at `path`, then descends into
    /// every nested object (and into map values such as `sim.models.<name>`).
    fn walk(root: &Value, node: &Value, path: Vec<String>, visited: &mut Vec<String>) {
        let obj = object_schema(root, node).expect("an object schema");
        let props = obj["properties"].as_object().expect("properties");
        let in_schema: BTreeSet<String> = props.keys().cloned().collect();
        let joined = path.join(".");
        assert_eq!(
            in_schema,
            loader_fields(&path),
            "schema properties at `{joined}` differ from the fields the loader accepts \
             (left: schema, right: loader); update scenarios/scenario.schema.json"
        );
        visited.push(joined);
        for (name, sub) in props {
            let child = [path.clone(), vec![name.clone()]].concat();
            if object_schema(root, sub).is_some() {
                walk(root, sub, child.clone(), visited);
            }
            let values = resolve(root, sub).get("additionalProperties");
            if let Some(v) = values.filter(|v| object_schema(root, v).is_some()) {
                walk(root, v, [child, vec!["m".into()]].concat(), visited);
            }
        }
    }

    #[test]
    fn schema_fields_match_the_loader_fields_at_every_level() {
        let root = schema();
        let mut visited = Vec::new();
        walk(&root, &root, Vec::new(), &mut visited);
        visited.sort();
        let expected = [
            "",
            "baselines",
            "compare",
            "gates",
            "gates.cost",
            "gates.e2e",
            "gates.itl",
            "gates.tpot",
            "gates.ttfc",
            "gates.ttft",
            "limits",
            "load",
            "load.agent",
            "load.agent.think_time",
            "load.agent.tool_latency",
            "load.agent.tool_result_tokens",
            "load.agent.turns",
            "load.arrivals",
            "load.arrivals.gamma",
            "load.search",
            "load.search.slo",
            "pricing",
            "pricing.models.m",
            "request",
            "request.prompt",
            "request.session",
            "retry",
            "slo",
            "target",
            "target.sim",
            "target.sim.faults",
            "target.sim.models.m",
            "target.timeouts",
            "target.tls",
            "telemetry",
            "telemetry.otlp",
        ];
        assert_eq!(visited, expected, "objects compared with the loader");
    }

    #[test]
    fn api_names_match_the_loader() {
        let root = schema();
        let api = &root["definitions"]["target"]["properties"]["api"]["anyOf"][0]["enum"];
        let in_schema: Vec<&str> = api
            .as_array()
            .unwrap()
            .iter()
            .flat_map(Value::as_str)
            .collect();
        let msg = load_error("name: t\ntarget:\n  api: zz\n  sim: {}\n  models: [m]\n");
        let listed = msg.split_once("use one of ").expect("api list").1;
        assert_eq!(in_schema, listed.trim().split(", ").collect::<Vec<_>>());
    }

    #[test]
    fn retry_classes_match_error_class_all() {
        let root = schema();
        let items = &root["definitions"]["retry"]["properties"]["retry_on"]["items"];
        let names: Vec<&str> = items["anyOf"][0]["enum"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(Value::as_str)
            .collect();
        let all: Vec<&str> = ErrorClass::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(names, all);
    }

    /// Every property of every object in the schema carries a description.
    fn assert_described(root: &Value, node: &Value, at: &str) {
        let Some(props) = node.get("properties").and_then(Value::as_object) else {
            return;
        };
        for (name, sub) in props {
            let described = sub.get("description").is_some()
                || object_schema(root, sub).is_some_and(|o| o.get("description").is_some());
            assert!(described, "`{at}.{name}` has no description");
        }
    }

    #[test]
    fn every_field_has_a_description() {
        let root = schema();
        assert_described(&root, &root, "");
        for (name, def) in root["definitions"].as_object().unwrap() {
            assert!(def.get("description").is_some(), "definition `{name}`");
            assert_described(&root, def, name);
        }
    }

    fn default_of<'a>(root: &'a Value, def: &str, field: &str) -> &'a Value {
        &root["definitions"][def]["properties"][field]["default"]
    }

    fn as_duration(v: &Value) -> Duration {
        match v {
            Value::String(s) => crate::util::duration::parse(s).expect("a duration"),
            other => panic!("not a duration default: {other}"),
        }
    }

    #[test]
    fn documented_defaults_match_the_code() {
        let root = schema();
        let sim = serde_json::to_value(SimParams::default()).unwrap();
        let mut compared = 0;
        for (def, actual) in [("sim", &sim), ("faults", &sim["faults"])] {
            for (field, want) in actual.as_object().unwrap() {
                let doc = default_of(&root, def, field);
                match (doc, want) {
                    (Value::Null, _) => continue,
                    (Value::String(_), Value::String(_)) => {
                        assert_eq!(as_duration(doc), as_duration(want), "{def}.{field}")
                    }
                    _ => assert_eq!(doc.as_f64(), want.as_f64(), "{def}.{field}"),
                }
                compared += 1;
            }
        }
        let t = Timeouts::default();
        let r = RetryPolicy::default();
        let durations = [
            ("target", "connect", t.connect),
            ("target", "first_token", t.first_token),
            ("target", "idle", t.idle),
            ("target", "total", t.total),
            ("retry", "initial_backoff", r.initial_backoff),
            ("retry", "max_backoff", r.max_backoff),
            ("retry", "max_retry_after", r.max_retry_after),
        ];
        for (def, field, want) in durations {
            let props = if def == "target" {
                &root["definitions"]["target"]["properties"]["timeouts"]["properties"]
            } else {
                &root["definitions"][def]["properties"]
            };
            assert_eq!(as_duration(&props[field]["default"]), want, "{def}.{field}");
            compared += 1;
        }
        let attempts = default_of(&root, "retry", "max_attempts");
        assert_eq!(attempts.as_u64(), Some(u64::from(r.max_attempts)));
        assert!(compared >= 15, "only {compared} defaults compared");
    }
}
