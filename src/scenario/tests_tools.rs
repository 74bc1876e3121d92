//! Unit tests of `request.tools`, `tool_choice`, `cache` and `prompt_cache_key` (issue 38):
//! the tools file is read next to the scenario and checked item by item, each field is refused
//! with its file, line and field where the dialect has no use for it, and the workload's
//! fingerprint names the tools by file and hash.

use super::tools::ToolChoice;
use super::*;

const TOOLS: &str = r#"[
  {"type": "function",
   "function": {"name": "get_weather", "description": "Weather of a city",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}},
  {"type": "function", "function": {"name": "get_time"}}
]
"#;

/// Loads a scenario for `api` whose `request:` block adds `request` (indented two spaces),
/// with `tools.json` holding `tools` next to it.
fn load(api: &str, tools: &str, request: &str) -> Result<Scenario, ScenarioError> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tools.json"), tools).unwrap();
    let yaml = format!(
        "name: t\ntarget:\n  api: {api}\n  sim: {{}}\n  models: [m]\nrequest:\n  prompt: hi\n{request}load:\n  ladder: [1]\n"
    );
    load_str(&yaml, &dir.path().join("s.yaml"), &|_| None)
}

fn refused(api: &str, tools: &str, request: &str) -> String {
    match load(api, tools, request) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("accepted: {request}"),
    }
}

#[test]
fn tools_and_a_choice_are_read_for_every_chat_dialect() {
    for api in ["openai-chat", "anthropic-messages", "openai-responses"] {
        let s = load(
            api,
            TOOLS,
            "  tools: tools.json\n  tool_choice: {function: get_time}\n",
        )
        .unwrap();
        let tools = s.request.tools.as_ref().unwrap();
        let names: Vec<_> = tools.list.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["get_weather", "get_time"]);
        assert_eq!(
            tools.list[1].parameters["type"], "object",
            "a schema by default"
        );
        assert_eq!(
            s.request.tool_choice,
            Some(ToolChoice::Function("get_time".into()))
        );
        let w = workload_yaml(&s);
        assert!(
            w.contains("file: tools.json") && w.contains("count: 2"),
            "{w}"
        );
        assert!(w.contains("tool_choice:"), "{w}");
    }
    for (choice, want) in [
        ("auto", ToolChoice::Auto),
        ("none", ToolChoice::None),
        ("required", ToolChoice::Required),
    ] {
        let s = load(
            "openai-chat",
            TOOLS,
            &format!("  tools: tools.json\n  tool_choice: {choice}\n"),
        );
        assert_eq!(s.unwrap().request.tool_choice, Some(want));
    }
}

#[test]
fn the_tools_are_part_of_the_fingerprint() {
    let without = load("openai-chat", TOOLS, "").unwrap();
    let with = load("openai-chat", TOOLS, "  tools: tools.json\n").unwrap();
    let other = TOOLS.replace("Weather of a city", "Weather");
    let changed = load("openai-chat", &other, "  tools: tools.json\n").unwrap();
    assert_ne!(without.fingerprint, with.fingerprint);
    assert_ne!(with.fingerprint, changed.fingerprint);
    // Whitespace in the file is not the tools.
    let compact: String = TOOLS.split_whitespace().collect::<Vec<_>>().join(" ");
    let same = load("openai-chat", &compact, "  tools: tools.json\n").unwrap();
    assert_eq!(with.fingerprint, same.fingerprint);
}

#[test]
fn a_missing_or_malformed_tools_file_is_named_with_its_line_and_field() {
    let e = refused("openai-chat", TOOLS, "  tools: nope.json\n");
    assert!(e.contains("s.yaml:8") && e.contains("request.tools"), "{e}");
    assert!(
        e.contains("nope.json") && e.contains("relative to the scenario"),
        "{e}"
    );
    let e = refused(
        "openai-chat",
        "[\n  {\"type\": \"function\",\n  oops\n]\n",
        "  tools: tools.json\n",
    );
    assert!(
        e.contains("tools.json:3") && e.contains("not valid JSON"),
        "{e}"
    );
    let e = refused(
        "openai-chat",
        "{\"type\": \"function\"}",
        "  tools: tools.json\n",
    );
    assert!(e.contains("must be a JSON list"), "{e}");
    let e = refused("openai-chat", "[]", "  tools: tools.json\n");
    assert!(e.contains("holds no tool"), "{e}");
    let second_bad = "[\n  {\"type\": \"function\", \"function\": {\"name\": \"a\"}},\n  {\"type\": \"function\",\n   \"function\": {\"description\": \"x\"}}\n]";
    let e = refused("openai-chat", second_bad, "  tools: tools.json\n");
    assert!(
        e.contains("tools.json:3") && e.contains("request.tools[1].function.name"),
        "{e}"
    );
    for (tools, says) in [
        (r#"[{"type": "web_search"}]"#, "request.tools[0].type"),
        (r#"[{"type": "function"}]"#, "request.tools[0].function"),
        (
            r#"[{"type": "function", "function": {"name": "a b"}}]"#,
            "not a tool name",
        ),
        (
            r#"[{"type": "function", "function": {"name": "a", "parameters": []}}]"#,
            "JSON schema object",
        ),
        (
            r#"[{"type": "function", "function": {"name": "a"}}, {"type": "function", "function": {"name": "a"}}]"#,
            "listed twice",
        ),
    ] {
        let e = refused("openai-chat", tools, "  tools: tools.json\n");
        assert!(e.contains(says), "{says:?} not in {e}");
    }
}

#[test]
fn each_field_is_refused_where_the_dialect_has_no_use_for_it() {
    let e = refused("openai-completions", TOOLS, "  tools: tools.json\n");
    assert!(
        e.contains("request.tools") && e.contains("sends no tools"),
        "{e}"
    );
    let e = refused("openai-chat", TOOLS, "  tool_choice: auto\n");
    assert!(
        e.contains("request.tool_choice") && e.contains("add tools"),
        "{e}"
    );
    let e = refused(
        "openai-chat",
        TOOLS,
        "  tools: tools.json\n  tool_choice: {function: nope}\n",
    );
    assert!(
        e.contains("`nope` is not one of the tools") && e.contains("get_time"),
        "{e}"
    );
    let e = refused(
        "openai-chat",
        TOOLS,
        "  tools: tools.json\n  tool_choice: sometimes\n",
    );
    assert!(
        e.contains("auto, none, required or {function: NAME}"),
        "{e}"
    );
    let e = refused("openai-chat", TOOLS, "  cache: auto\n");
    assert!(
        e.contains("request.cache") && e.contains("caches long prompts on its own"),
        "{e}"
    );
    assert!(
        e.contains("prompt_cache_key") && e.contains("anthropic-messages"),
        "{e}"
    );
    let e = refused("anthropic-messages", TOOLS, "  cache: always\n");
    assert!(e.contains("write auto or off"), "{e}");
    let e = refused("anthropic-messages", TOOLS, "  prompt_cache_key: k\n");
    assert!(
        e.contains("request.prompt_cache_key") && e.contains("cache: auto"),
        "{e}"
    );
    let e = refused(
        "openai-chat",
        TOOLS,
        "  tools: tools.json\n  extra_body: {tools: []}\n",
    );
    assert!(
        e.contains("request.extra_body.tools") && e.contains("set twice"),
        "{e}"
    );
}

#[test]
fn cache_auto_and_a_cache_key_are_kept_and_fingerprinted() {
    let s = load("anthropic-messages", TOOLS, "  cache: auto\n").unwrap();
    assert!(s.request.cache_auto);
    assert!(workload_yaml(&s).contains("cache: auto"));
    let off = load("anthropic-messages", TOOLS, "  cache: off\n").unwrap();
    assert!(!off.request.cache_auto);
    assert_ne!(s.fingerprint, off.fingerprint);
    for api in ["openai-chat", "openai-responses"] {
        let s = load(api, TOOLS, "  prompt_cache_key: support-bot\n").unwrap();
        assert_eq!(s.request.prompt_cache_key.as_deref(), Some("support-bot"));
        assert!(workload_yaml(&s).contains("prompt_cache_key: support-bot"));
        assert!(normalized_yaml(&s).contains("prompt_cache_key: support-bot"));
    }
}
