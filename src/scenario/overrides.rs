//! Command-line overrides of a scenario (`ladder run --model … --ladder … --base-url …`) and
//! ad-hoc scenarios built from flags alone. Every override is an edit of the scenario's YAML
//! document (set or remove a field), applied before validation: an override therefore changes
//! the run, the recorded `scenario.yaml` and the workload fingerprint exactly as the same edit of
//! the file would. `--save-scenario` writes the edited document.

use serde_yaml::{Mapping, Value as Yaml};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What the command line sets. Empty (`Default`) changes nothing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overrides {
    /// `target.base_url` (replaces `target.sim`).
    pub base_url: Option<String>,
    /// `target.models`; over a scenario, a subset of its models.
    pub models: Vec<String>,
    /// `target.api`, e.g. `openai-chat`.
    pub api: Option<String>,
    /// `load.ladder`.
    pub ladder: Option<Vec<u32>>,
    /// `load.requests_per_step` (replaces the scenario's budget).
    pub requests_per_step: Option<u64>,
    /// `load.duration` (replaces the scenario's budget).
    pub duration: Option<Duration>,
    /// `request.max_tokens`.
    pub max_tokens: Option<u32>,
    /// `request.max_tokens_field`, e.g. `max_tokens`.
    pub max_tokens_field: Option<String>,
    /// `request.prompt_file`: absolute, or relative to the scenario's folder (the binary
    /// resolves the flag against the working directory).
    pub prompt_file: Option<PathBuf>,
    /// `request.prompt: {text: …}`: one inline prompt.
    pub prompt: Option<String>,
    /// `request.stream: false`: whole answers, no streaming.
    pub no_stream: bool,
    /// `--ab A=B`: `target.models: [A, B]` and `compare: {baseline: A, interleave: true}`, an
    /// A/B run (B need not be one of the scenario's models: it is the candidate).
    pub ab: Option<(String, String)>,
}

/// An override that cannot apply (exit 2 in the binary).
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum OverrideError {
    #[error("--model {model}: not one of the scenario's models ({}); --model picks a subset of target.models", .known.join(", "))]
    UnknownModel { model: String, known: Vec<String> },
    #[error("{0}")]
    Flags(String),
    #[error("the scenario is not a YAML mapping; overrides need `target:`, `request:` and `load:` blocks")]
    NotAMapping,
}

impl Overrides {
    pub fn is_empty(&self) -> bool {
        *self == Overrides::default()
    }

    /// The flags that conflict: both budgets, or both prompt sources.
    fn check(&self) -> Result<(), OverrideError> {
        if self.ab.is_some() && !self.models.is_empty() {
            return Err(OverrideError::Flags(
                "--ab A=B names the run's two models; drop --model".into(),
            ));
        }
        if let Some((a, b)) = self.ab.as_ref().filter(|(a, b)| a == b) {
            return Err(OverrideError::Flags(format!(
                "--ab {a}={b} names one model twice; an A/B run needs two: --ab CURRENT=CANDIDATE"
            )));
        }
        if self.requests_per_step.is_some() && self.duration.is_some() {
            return Err(OverrideError::Flags(
                "--requests-per-step and --duration both set a step's budget; keep one".into(),
            ));
        }
        if self.prompt.is_some() && self.prompt_file.is_some() {
            return Err(OverrideError::Flags(
                "--prompt and --prompt-file both set the prompt; keep one".into(),
            ));
        }
        if self.ladder.as_ref().is_some_and(|l| l.is_empty()) {
            return Err(OverrideError::Flags(
                "--ladder is empty; give levels, e.g. --ladder 1,8,32".into(),
            ));
        }
        Ok(())
    }

    /// Applies the overrides to a scenario document. `prompt_dir` is the folder that relative
    /// paths in the document are resolved against (the scenario's folder): `--prompt-file` is
    /// written relative to it when it lies inside, else as given.
    pub fn apply(&self, doc: &mut Yaml, prompt_dir: &Path) -> Result<(), OverrideError> {
        self.check()?;
        let Yaml::Mapping(root) = doc else {
            return Err(OverrideError::NotAMapping);
        };
        if let Some(url) = &self.base_url {
            let t = block(root, "target")?;
            t.remove("sim");
            t.insert("base_url".into(), url.as_str().into());
        }
        if let Some(api) = &self.api {
            block(root, "target")?.insert("api".into(), api.as_str().into());
        }
        if !self.models.is_empty() {
            let t = block(root, "target")?;
            let known: Vec<String> = match (t.get("models"), t.get("model")) {
                (Some(Yaml::Sequence(s)), _) => s
                    .iter()
                    .filter_map(|m| m.as_str().map(str::to_string))
                    .collect(),
                (_, Some(Yaml::String(m))) => vec![m.clone()],
                _ => Vec::new(),
            };
            // A scenario that names its models is narrowed; an ad-hoc one takes them as given.
            if !known.is_empty() && self.base_url.is_none() {
                if let Some(m) = self.models.iter().find(|m| !known.contains(m)) {
                    return Err(OverrideError::UnknownModel {
                        model: m.clone(),
                        known,
                    });
                }
            }
            t.remove("model");
            let models = self.models.iter().map(|m| Yaml::from(m.as_str())).collect();
            t.insert("models".into(), Yaml::Sequence(models));
        }
        if let Some((a, b)) = &self.ab {
            let t = block(root, "target")?;
            t.remove("model");
            t.insert("models".into(), Yaml::from(vec![a.as_str(), b.as_str()]));
            let c = block(root, "compare")?;
            c.insert("baseline".into(), a.as_str().into());
            c.insert("interleave".into(), true.into());
        }
        if let Some(ladder) = &self.ladder {
            let l = block(root, "load")?;
            l.insert("ladder".into(), Yaml::from(ladder.clone()));
        }
        let budget = match (self.requests_per_step, self.duration) {
            (Some(n), _) => Some(("requests_per_step", Yaml::from(n))),
            (_, Some(d)) => Some(("duration", Yaml::from(crate::util::duration::format(d)))),
            _ => None,
        };
        if let Some((key, value)) = budget {
            let l = block(root, "load")?;
            for k in ["requests_per_step", "requests_per_worker", "duration"] {
                l.remove(k);
            }
            l.insert(key.into(), value);
        }
        if let Some(n) = self.max_tokens {
            block(root, "request")?.insert("max_tokens".into(), n.into());
        }
        if let Some(f) = &self.max_tokens_field {
            block(root, "request")?.insert("max_tokens_field".into(), f.as_str().into());
        }
        if self.no_stream {
            block(root, "request")?.insert("stream".into(), false.into());
        }
        let prompt = match (&self.prompt_file, &self.prompt) {
            (Some(file), _) => Some(("prompt_file", Yaml::from(relative_to(file, prompt_dir)))),
            (_, Some(text)) => {
                let mut m = Mapping::new();
                m.insert("text".into(), text.as_str().into());
                Some(("prompt", Yaml::Mapping(m)))
            }
            _ => None,
        };
        if let Some((key, value)) = prompt {
            let r = block(root, "request")?;
            for k in ["prompt_file", "prompts", "prompt", "prompt_order"] {
                r.remove(k);
            }
            r.insert(key.into(), value);
        }
        Ok(())
    }

    /// A scenario from flags alone (no file): `target.base_url` and at least one `--model` are
    /// needed; the key comes from `$OPENAI_API_KEY` (`$ANTHROPIC_API_KEY` for
    /// anthropic-messages) when set, written as `${VAR:-}` so that no secret reaches the file.
    /// Defaults: ladder [1, 8, 32], 32 requests per step, a 256-token synthetic prompt.
    /// `prompt_dir` is where the document will live (the `--save-scenario` file's folder).
    pub fn adhoc(&self, name: &str, prompt_dir: &Path) -> Result<String, OverrideError> {
        let ab: Vec<String> = self
            .ab
            .iter()
            .flat_map(|(a, b)| [a.clone(), b.clone()])
            .collect();
        let models = if ab.is_empty() { &self.models } else { &ab };
        match (&self.base_url, models.as_slice()) {
            (None, []) => return Err(OverrideError::Flags(FLAGS_ONLY.into())),
            (None, models) => {
                let models: Vec<String> = models.iter().map(|m| format!("--model {m}")).collect();
                return Err(OverrideError::Flags(format!(
                    "{} without a scenario file needs the server's base URL, e.g.\n  \
                     ladder run --base-url http://localhost:8000/v1 {0}",
                    models.join(" ")
                )));
            }
            (Some(url), []) => {
                return Err(OverrideError::Flags(format!(
                    "--base-url without a scenario file needs --model (repeatable), e.g.\n  \
                     ladder run --base-url {url} --model MODEL"
                )))
            }
            _ => {}
        }
        let api = self.api.as_deref().unwrap_or("openai-chat");
        let key_var = if api == "anthropic-messages" {
            "ANTHROPIC_API_KEY"
        } else {
            "OPENAI_API_KEY"
        };
        let text = format!(
            "name: {name}\n\
             description: ad-hoc run from the command line\n\
             target:\n  api: {api}\n  api_key: ${{{key_var}:-}}\n\
             request:\n  prompt:\n    synthetic_tokens: 256\n\
             load:\n  ladder: [1, 8, 32]\n  requests_per_step: 32\n"
        );
        let mut doc: Yaml = serde_yaml::from_str(&text).map_err(|_| OverrideError::NotAMapping)?;
        self.apply(&mut doc, prompt_dir)?;
        Ok(to_text(&doc))
    }
}

/// The mapping under `key`, created when missing.
fn block<'a>(root: &'a mut Mapping, key: &str) -> Result<&'a mut Mapping, OverrideError> {
    let entry = root
        .entry(key.into())
        .or_insert_with(|| Yaml::Mapping(Mapping::new()));
    if entry.is_null() {
        *entry = Yaml::Mapping(Mapping::new());
    }
    match entry {
        Yaml::Mapping(m) => Ok(m),
        _ => Err(OverrideError::Flags(format!(
            "`{key}:` is not a block in the scenario; cannot override its fields"
        ))),
    }
}

/// `path` relative to `dir` when inside it, else as is (absolute).
fn relative_to(path: &Path, dir: &Path) -> String {
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let full = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    full.strip_prefix(&dir)
        .map(Path::to_path_buf)
        .unwrap_or(full)
        .display()
        .to_string()
}

/// What `ladder run` without a scenario file or flags says: the two forms, each ready to paste.
const FLAGS_ONLY: &str = "no scenario file: `ladder run` takes scenario files \
(ladder run scenarios/demo.yaml) or, without a file, the server's base URL and a model:
  ladder run --base-url http://localhost:8000/v1 --model my-model
  ladder run --base-url https://api.openai.com/v1 --model gpt-4o-mini --ladder 1,4 --requests-per-step 20
Against the built-in simulator, nothing else needed:
  ladder sim --port 8080 & sleep 1; ladder run --base-url http://127.0.0.1:8080/v1 --model sim-model
The key comes from $OPENAI_API_KEY ($ANTHROPIC_API_KEY with --api anthropic-messages); \
--ladder, --requests-per-step, --max-tokens, --prompt and --prompt-file shape the run \
(docs/workloads.md), and --save-scenario FILE keeps it as a scenario.";

/// A document as scenario text.
pub fn to_text(doc: &Yaml) -> String {
    serde_yaml::to_string(doc).unwrap_or_default()
}

/// A name for an ad-hoc scenario: the `--save-scenario` file's stem made `[a-z0-9-]`, else
/// `adhoc`.
pub fn adhoc_name(save: Option<&Path>) -> String {
    let stem = save
        .and_then(|p| p.file_stem())
        .map(|s| s.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let slug: String = stem
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let slug = slug.trim_matches('-').to_string();
    if slug.is_empty() {
        "adhoc".into()
    } else {
        slug
    }
}

/// A scenario file's text with the overrides applied, for `--save-scenario`: the document as
/// written (`${VAR}` kept, so no secret is copied; comments are not kept).
pub fn rewrite(text: &str, o: &Overrides, prompt_dir: &Path) -> Result<String, OverrideError> {
    let mut doc: Yaml = serde_yaml::from_str(text).map_err(|e| {
        OverrideError::Flags(format!(
            "cannot rewrite the scenario with the overrides ({e}); edit the file instead"
        ))
    })?;
    o.apply(&mut doc, prompt_dir)?;
    Ok(to_text(&doc))
}
