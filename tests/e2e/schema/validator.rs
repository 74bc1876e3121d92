//! A small JSON Schema validator for exactly the keywords `scenarios/scenario.schema.json` uses
//! (draft-07 subset: type, properties, required, additionalProperties, enum, items, minItems,
//! uniqueItems, anyOf/oneOf/allOf/not, pattern, minimum/maximum, local `$ref`). Any other
//! keyword panics, so the schema cannot quietly grow a rule these tests do not enforce.
//! Patterns use the `regex` crate through `predicates` (already a dev-dependency).

use predicates::prelude::*;
use serde_json::Value;

/// Keywords that only annotate (never change a verdict).
const ANNOTATIONS: &[&str] = &["$schema", "title", "description", "default", "definitions"];

/// Every violation of `schema` by `instance`, each as `path: what` (empty when valid).
pub fn validate(schema: &Value, instance: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    check(schema, schema, instance, "$", &mut errors);
    errors
}

/// Follows a local `#/definitions/name` reference.
fn resolve<'a>(root: &'a Value, reference: &str) -> &'a Value {
    let name = reference
        .strip_prefix("#/definitions/")
        .unwrap_or_else(|| panic!("only local #/definitions/ refs are supported: {reference}"));
    root.get("definitions")
        .and_then(|d| d.get(name))
        .unwrap_or_else(|| panic!("dangling $ref {reference}"))
}

fn type_matches(ty: &str, v: &Value) -> bool {
    match ty {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|f| f.fract() == 0.0),
        other => panic!("unknown type `{other}` in schema"),
    }
}

fn sub_errors(root: &Value, schema: &Value, v: &Value, path: &str) -> Vec<String> {
    let mut e = Vec::new();
    check(root, schema, v, path, &mut e);
    e
}

fn check(root: &Value, schema: &Value, v: &Value, path: &str, errors: &mut Vec<String>) {
    let Some(rules) = schema.as_object() else {
        match schema {
            Value::Bool(true) => return,
            Value::Bool(false) => return errors.push(format!("{path}: nothing is allowed here")),
            other => panic!("schema node is not an object: {other}"),
        }
    };
    for (key, rule) in rules {
        let mut fail = |msg: String| errors.push(format!("{path}: {msg}"));
        match key.as_str() {
            k if ANNOTATIONS.contains(&k) => {}
            "$ref" => {
                let target = resolve(root, rule.as_str().expect("$ref is a string"));
                check(root, target, v, path, errors);
            }
            "type" => {
                let types: Vec<&str> = match rule {
                    Value::String(s) => vec![s.as_str()],
                    Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
                    other => panic!("bad type rule {other}"),
                };
                if !types.iter().any(|t| type_matches(t, v)) {
                    fail(format!("expected {types:?}, got {v}"));
                }
            }
            "enum" => {
                let options = rule.as_array().expect("enum is an array");
                if !options.contains(v) {
                    fail(format!("{v} is not one of {rule}"));
                }
            }
            "pattern" => {
                let pattern = rule.as_str().expect("pattern is a string");
                let re = predicates::str::is_match(pattern)
                    .unwrap_or_else(|e| panic!("bad pattern {pattern}: {e}"));
                if let Some(s) = v.as_str().filter(|s| !re.eval(s)) {
                    fail(format!("`{s}` does not match {pattern}"));
                }
            }
            "minimum" | "maximum" => {
                let bound = rule.as_f64().expect("bound is a number");
                let out = v.as_f64().is_some_and(|x| {
                    if key == "minimum" {
                        x < bound
                    } else {
                        x > bound
                    }
                });
                if out {
                    fail(format!("{v} is outside the {key} {bound}"));
                }
            }
            "required" => {
                if let Some(obj) = v.as_object() {
                    for name in rule.as_array().expect("required is an array") {
                        let name = name.as_str().expect("required names are strings");
                        if !obj.contains_key(name) {
                            fail(format!("missing required field `{name}`"));
                        }
                    }
                }
            }
            "properties" => {
                let (Some(obj), Some(props)) = (v.as_object(), rule.as_object()) else {
                    continue;
                };
                for (name, value) in obj {
                    if let Some(sub) = props.get(name) {
                        check(root, sub, value, &format!("{path}.{name}"), errors);
                    }
                }
            }
            "additionalProperties" => {
                let Some(obj) = v.as_object() else { continue };
                let known = rules.get("properties").and_then(Value::as_object);
                for (name, value) in obj {
                    if known.is_some_and(|p| p.contains_key(name)) {
                        continue;
                    }
                    match rule {
                        Value::Bool(false) => {
                            errors.push(format!("{path}: unknown field `{name}`"))
                        }
                        sub => check(root, sub, value, &format!("{path}.{name}"), errors),
                    }
                }
            }
            "items" => {
                if let Some(items) = v.as_array() {
                    for (i, item) in items.iter().enumerate() {
                        check(root, rule, item, &format!("{path}[{i}]"), errors);
                    }
                }
            }
            "minItems" => {
                let min = rule.as_u64().expect("minItems is a number") as usize;
                if v.as_array().is_some_and(|a| a.len() < min) {
                    fail(format!("fewer than {min} items"));
                }
            }
            "uniqueItems" => {
                if let Some(a) = v.as_array().filter(|_| rule == &Value::Bool(true)) {
                    if a.iter().enumerate().any(|(i, x)| a[..i].contains(x)) {
                        fail("items are not unique".into());
                    }
                }
            }
            "allOf" | "anyOf" | "oneOf" => {
                let branches = rule.as_array().expect("a list of schemas");
                let results: Vec<Vec<String>> = branches
                    .iter()
                    .map(|b| sub_errors(root, b, v, path))
                    .collect();
                let passed = results.iter().filter(|e| e.is_empty()).count();
                let ok = match key.as_str() {
                    "allOf" => passed == branches.len(),
                    "anyOf" => passed >= 1,
                    _ => passed == 1,
                };
                if !ok {
                    let why: Vec<String> = results.into_iter().flatten().collect();
                    fail(format!(
                        "{key}: {passed} of {} alternatives match ({})",
                        branches.len(),
                        why.join("; ")
                    ));
                }
            }
            "not" => {
                if sub_errors(root, rule, v, path).is_empty() {
                    fail(format!("must not match {rule}"));
                }
            }
            other => panic!("the test validator does not support the keyword `{other}`"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::validate;
    use serde_json::json;

    #[test]
    fn validator_enforces_each_keyword() {
        let schema = json!({
            "type": "object", "additionalProperties": false, "required": ["a"],
            "properties": {
                "a": {"type": "integer", "minimum": 1, "maximum": 3},
                "b": {"type": "array", "minItems": 1, "uniqueItems": true,
                      "items": {"type": "string", "pattern": "^x+$"}},
                "c": {"anyOf": [{"enum": ["p"]}, {"$ref": "#/definitions/n"}]},
                "d": {"oneOf": [{"type": "number"}, {"type": "integer"}]},
                "e": {"type": "object", "additionalProperties": {"type": "string"},
                      "not": {"required": ["z"]}}
            },
            "definitions": {"n": {"type": "null"}}
        });
        let ok = json!({"a": 2, "b": ["x", "xx"], "c": null, "d": 1.5, "e": {"k": "v"}});
        assert_eq!(validate(&schema, &ok), Vec::<String>::new());
        let cases = [
            (json!({"b": ["x"]}), "missing required field `a`"),
            (json!({"a": 0}), "minimum"),
            (json!({"a": 4}), "maximum"),
            (json!({"a": 1.5}), "expected [\"integer\"]"),
            (json!({"a": 1, "zz": 1}), "unknown field `zz`"),
            (json!({"a": 1, "b": []}), "fewer than 1 items"),
            (json!({"a": 1, "b": ["x", "x"]}), "not unique"),
            (json!({"a": 1, "b": ["y"]}), "does not match"),
            (json!({"a": 1, "c": "q"}), "anyOf: 0 of 2"),
            (json!({"a": 1, "d": 2}), "oneOf: 2 of 2"),
            (json!({"a": 1, "e": {"k": 5}}), "$.e.k"),
            (json!({"a": 1, "e": {"z": "v"}}), "must not match"),
        ];
        for (instance, needle) in cases {
            let errors = validate(&schema, &instance).join("\n");
            assert!(
                errors.contains(needle),
                "{instance}: `{needle}` not in {errors:?}"
            );
        }
    }

    #[test]
    #[should_panic(expected = "does not support the keyword `maxLength`")]
    fn unsupported_keywords_are_refused() {
        validate(&json!({"maxLength": 3}), &json!("abcd"));
    }
}
