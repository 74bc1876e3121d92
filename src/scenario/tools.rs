//! `request.tools` (a JSON file of function tools in OpenAI's chat shape, next to the scenario),
//! `request.tool_choice`, `request.cache` and `request.prompt_cache_key` (issue 38): read and
//! checked against the dialect's facts (`dialect::Spec::tools`, `caching`). The client sends
//! them in each dialect's shape (`client::openai`, `anthropic`, `responses`); the tools are read
//! once, so every request of a run sends them byte for byte the same (a cacheable prefix).

use super::bounded::read_capped;
use super::errors::{dialects, Ctx};
use super::ScenarioError;
use crate::dialect::{Api, PromptCaching};
use serde_json::Value;
use serde_yaml::Value as Yaml;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One function tool.
#[derive(Debug, Clone, PartialEq)]
pub struct Tool {
    pub name: String,
    pub description: Option<String>,
    /// Its arguments' JSON schema (`{"type": "object", "properties": {}}` when the file has
    /// none: Anthropic requires one).
    pub parameters: Value,
    /// The tool as the file wrote it (OpenAI chat sends it as it is).
    pub raw: Value,
}

/// The tools of `request.tools`.
#[derive(Debug, Clone, PartialEq)]
pub struct Tools {
    pub file: PathBuf,
    pub list: Vec<Tool>,
    /// SHA-256 of the list as sent (canonical JSON): the workload's fingerprint names the
    /// tools by file name and this hash.
    pub sha256: String,
}

/// `request.tool_choice`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolChoice {
    /// The model decides (the APIs' default).
    Auto,
    /// No tool call.
    None,
    /// Some tool call (Anthropic's `any`).
    Required,
    /// A call of this tool.
    Function(String),
}

impl ToolChoice {
    /// As written in a scenario (`auto`, `none`, `required`, `{function: NAME}`).
    pub fn to_yaml(&self) -> Yaml {
        match self {
            ToolChoice::Auto => "auto".into(),
            ToolChoice::None => "none".into(),
            ToolChoice::Required => "required".into(),
            ToolChoice::Function(name) => {
                let mut m = serde_yaml::Mapping::new();
                m.insert("function".into(), name.as_str().into());
                Yaml::Mapping(m)
            }
        }
    }
}

macro_rules! bail {
    ($cx:expr, $path:expr, $($msg:tt)+) => {
        return Err($cx.err($path, format!($($msg)+)))
    };
}

/// `request.tools` and `request.tool_choice`, read and checked.
pub(super) fn tools_of(
    cx: &Ctx,
    file: Option<&str>,
    choice: Option<&Yaml>,
    api: Api,
    extra_body: &serde_json::Map<String, Value>,
) -> Result<(Option<Arc<Tools>>, Option<ToolChoice>), ScenarioError> {
    let file = file.filter(|f| !f.trim().is_empty());
    if file.is_some() && !api.spec().tools {
        bail!(
            cx,
            "request.tools",
            "{} sends no tools; use one of {}",
            api.as_str(),
            dialects(|a| a.spec().tools, ", ")
        )
    }
    for (key, set) in [("tools", file.is_some()), ("tool_choice", choice.is_some())] {
        if set && extra_body.contains_key(key) {
            bail!(
                cx,
                &format!("request.extra_body.{key}"),
                "`{key}` is set twice (request.{key} and extra_body); keep request.{key}, \
                 which ladder sends in the dialect's shape"
            )
        }
    }
    let tools = match file {
        Some(rel) => Some(Arc::new(read_tools(cx, rel)?)),
        None => None,
    };
    let choice = match choice {
        None | Some(Yaml::Null) => None,
        Some(c) => Some(choice_of(cx, c, tools.as_deref())?),
    };
    Ok((tools, choice))
}

/// The forms `tool_choice` takes.
const CHOICES: &str = "auto, none, required or {function: NAME}";

fn choice_of(cx: &Ctx, c: &Yaml, tools: Option<&Tools>) -> Result<ToolChoice, ScenarioError> {
    let Some(tools) = tools else {
        bail!(
            cx,
            "request.tool_choice",
            "chooses among request.tools; add tools: tools.json or remove it"
        )
    };
    let choice = match c {
        Yaml::String(s) => match s.as_str() {
            "auto" => ToolChoice::Auto,
            "none" => ToolChoice::None,
            "required" | "any" => ToolChoice::Required,
            other => bail!(
                cx,
                "request.tool_choice",
                "`{other}` is not a tool choice; write {CHOICES}"
            ),
        },
        Yaml::Mapping(m) if m.len() == 1 => match m.get("function").and_then(Yaml::as_str) {
            Some(name) => ToolChoice::Function(name.to_string()),
            None => bail!(cx, "request.tool_choice", "write {CHOICES}"),
        },
        _ => bail!(cx, "request.tool_choice", "write {CHOICES}"),
    };
    if let ToolChoice::Function(name) = &choice {
        if !tools.list.iter().any(|t| &t.name == name) {
            let names: Vec<_> = tools.list.iter().map(|t| t.name.as_str()).collect();
            bail!(
                cx,
                "request.tool_choice.function",
                "`{name}` is not one of the tools of {} ({})",
                tools.file.display(),
                names.join(", ")
            )
        }
    }
    Ok(choice)
}

/// An error inside the tools file (its own line when known).
fn in_file(path: &Path, line: Option<usize>, field: String, message: String) -> ScenarioError {
    ScenarioError::Invalid {
        file: path.to_path_buf(),
        line,
        field,
        message,
    }
}

/// Reads the tools file: a JSON list of `{"type": "function", "function": {"name", ...}}`.
fn read_tools(cx: &Ctx, rel: &str) -> Result<Tools, ScenarioError> {
    let path = cx.file.parent().unwrap_or(Path::new("")).join(rel);
    let shown = path.display();
    let raise = format!(
        "raise the cap with {}=N (MiB) if the file is meant to be that large",
        super::bounded::PROMPT_CAP_VAR
    );
    let bytes = match read_capped(&path, cx.prompt_cap, &raise) {
        Ok(b) => b,
        Err(why) => bail!(
            cx,
            "request.tools",
            "{shown}: {why}; the path is relative to the scenario file"
        ),
    };
    let value: Value = serde_json::from_slice(&bytes).map_err(|e| {
        in_file(
            &path,
            Some(e.line()).filter(|l| *l > 0),
            "request.tools".into(),
            format!("is not valid JSON ({e}); write a list of tools in OpenAI's shape, e.g. [{{\"type\": \"function\", \"function\": {{\"name\": \"get_weather\", \"parameters\": {{\"type\": \"object\"}}}}}}]"),
        )
    })?;
    let Value::Array(items) = value else {
        return Err(in_file(
            &path,
            Some(1),
            "request.tools".into(),
            "must be a JSON list of tools, e.g. [{\"type\": \"function\", \"function\": {\"name\": \"get_weather\"}}]".into(),
        ));
    };
    if items.is_empty() {
        return Err(in_file(
            &path,
            Some(1),
            "request.tools".into(),
            "holds no tool; list at least one, or remove request.tools".into(),
        ));
    }
    let text = String::from_utf8_lossy(&bytes);
    let mut list: Vec<Tool> = Vec::with_capacity(items.len());
    for (i, raw) in items.into_iter().enumerate() {
        let tool = tool_of(&raw).map_err(|(field, message)| {
            in_file(
                &path,
                item_line(&text, i),
                format!("request.tools[{i}]{field}"),
                message,
            )
        })?;
        if list.iter().any(|t| t.name == tool.name) {
            return Err(in_file(
                &path,
                item_line(&text, i),
                format!("request.tools[{i}].function.name"),
                format!("`{}` is listed twice; tool names must differ", tool.name),
            ));
        }
        list.push(Tool { raw, ..tool });
    }
    let canonical: Vec<&Value> = list.iter().map(|t| &t.raw).collect();
    let sha256 =
        super::normalize::fingerprint_of(&serde_json::to_string(&canonical).unwrap_or_default());
    Ok(Tools {
        file: path,
        list,
        sha256,
    })
}

/// The line (1-based) where the `i`-th item of the file's top-level list starts: the `i`-th
/// opening brace at depth 1, outside strings.
fn item_line(text: &str, i: usize) -> Option<usize> {
    let (mut depth, mut in_str, mut escaped, mut seen, mut line) = (0u32, false, false, 0, 1);
    for c in text.chars() {
        match c {
            '\n' => line += 1,
            _ if in_str => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == '"' {
                    in_str = false;
                }
            }
            '"' => in_str = true,
            '[' | '{' => {
                if depth == 1 && c == '{' {
                    if seen == i {
                        return Some(line);
                    }
                    seen += 1;
                }
                depth += 1;
            }
            ']' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// One tool of the file, checked: `(field under the item, message)` when it is not one.
fn tool_of(raw: &Value) -> Result<Tool, (String, String)> {
    let shape = "write {\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \
                 \"description\": \"…\", \"parameters\": {\"type\": \"object\", …}}}";
    let err = |field: &str, what: String| Err((field.to_string(), what));
    if raw.get("type").and_then(Value::as_str) != Some("function") {
        return err(".type", format!("ladder sends function tools: {shape}"));
    }
    let Some(f) = raw.get("function").filter(|f| f.is_object()) else {
        return err(".function", format!("is missing; {shape}"));
    };
    let name = match f.get("name").and_then(Value::as_str) {
        Some(n) if valid_name(n) => n.to_string(),
        Some(n) => {
            return err(
                ".function.name",
                format!("`{n}` is not a tool name: 1 to 64 letters, digits, `_` or `-`"),
            )
        }
        None => return err(".function.name", format!("is missing; {shape}")),
    };
    let description = match f.get("description") {
        None | Some(Value::Null) => None,
        Some(Value::String(d)) => Some(d.clone()),
        Some(_) => return err(".function.description", "must be text".into()),
    };
    let parameters = match f.get("parameters") {
        None | Some(Value::Null) => serde_json::json!({"type": "object", "properties": {}}),
        Some(p @ Value::Object(_)) => p.clone(),
        Some(_) => {
            return err(
                ".function.parameters",
                "must be a JSON schema object, e.g. {\"type\": \"object\", \"properties\": {}}"
                    .into(),
            )
        }
    };
    Ok(Tool {
        name,
        description,
        parameters,
        raw: Value::Null,
    })
}

/// A name every dialect takes: 1 to 64 of `[A-Za-z0-9_-]`.
fn valid_name(n: &str) -> bool {
    (1..=64).contains(&n.len())
        && n.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// `request.cache`: `auto` (breakpoints where the dialect takes them) or `off` (the default).
pub(super) fn cache_of(cx: &Ctx, raw: Option<&str>, api: Api) -> Result<bool, ScenarioError> {
    let auto = match raw.map(str::trim) {
        None | Some("off") => false,
        Some("auto") => true,
        Some(other) => bail!(
            cx,
            "request.cache",
            "`{other}` is not a cache mode; write auto or off"
        ),
    };
    if auto {
        if let PromptCaching::Automatic { key } = api.spec().caching {
            let hint = if key {
                "; request.prompt_cache_key routes requests that share a prefix to the same cache"
            } else {
                ""
            };
            bail!(
                cx,
                "request.cache",
                "{} caches long prompts on its own, with no breakpoints to mark{hint}; \
                 cache: auto is for {}",
                api.as_str(),
                dialects(|a| a.spec().caching == PromptCaching::Breakpoints, ", ")
            )
        }
    }
    Ok(auto)
}

/// `request.prompt_cache_key`, where the dialect takes one.
pub(super) fn prompt_cache_key_of(
    cx: &Ctx,
    raw: Option<&str>,
    api: Api,
    extra_body: &serde_json::Map<String, Value>,
) -> Result<Option<String>, ScenarioError> {
    let Some(key) = raw else {
        return Ok(None);
    };
    if key.trim().is_empty() {
        bail!(
            cx,
            "request.prompt_cache_key",
            "is empty; write a key, e.g. prompt_cache_key: support-bot"
        )
    }
    if api.spec().caching != (PromptCaching::Automatic { key: true }) {
        bail!(
            cx,
            "request.prompt_cache_key",
            "{} takes no prompt_cache_key; it is for {}{}",
            api.as_str(),
            dialects(
                |a| a.spec().caching == PromptCaching::Automatic { key: true },
                ", ",
            ),
            if api.spec().caching == PromptCaching::Breakpoints {
                " (here request.cache: auto marks what to cache)"
            } else {
                ""
            }
        )
    }
    if extra_body.contains_key("prompt_cache_key") {
        bail!(
            cx,
            "request.extra_body.prompt_cache_key",
            "`prompt_cache_key` is set twice (request.prompt_cache_key and extra_body); keep one"
        )
    }
    Ok(Some(key.to_string()))
}

#[cfg(test)]
impl Tools {
    /// Tools from a JSON list as a file would hold it (for tests of the bodies).
    pub fn of_json(list: &Value) -> Tools {
        let list = list
            .as_array()
            .expect("a list")
            .iter()
            .map(|raw| Tool {
                raw: raw.clone(),
                ..tool_of(raw).expect("a valid tool")
            })
            .collect();
        Tools {
            file: PathBuf::from("tools.json"),
            list,
            sha256: String::new(),
        }
    }

    /// Two tools: `get_weather` (with a description and a schema) and `get_time` (neither).
    pub fn sample() -> Arc<Tools> {
        Arc::new(Tools::of_json(&serde_json::json!([
            {"type": "function", "function": {"name": "get_weather", "description": "Weather of a city",
             "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
            {"type": "function", "function": {"name": "get_time"}}
        ])))
    }
}
