//! How `request.max_tokens` reaches the server: which body field carries it
//! (`request.max_tokens_field`), what `max_tokens: null` means (no limit sent), and what a limit
//! written in `request.extra_body` does (it becomes the request's limit and its field, so the body
//! never carries two limits). OpenAI's reasoning models refuse `max_tokens` on chat completions
//! and want `max_completion_tokens`, which vLLM, SGLang and llama.cpp's server accept as well.

use super::errors::Ctx;
use super::scalars::Pos;
use super::{Api, ScenarioError};
use serde_json::{Map, Value};

/// The body field that carries the output-token limit: one of the fields the dialects list
/// (`dialect::Spec::max_tokens_fields`, the only place the field names are written), so a new
/// dialect's limit field is known here, to `request.max_tokens_field` and to
/// `--max-tokens-field` without another list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LimitField(&'static str);

impl LimitField {
    /// Every dialect's limit fields, each once, in the order they are listed to users (the
    /// dialects' order, then each dialect's own): `max_completion_tokens`, `max_tokens`,
    /// `max_output_tokens`.
    pub fn all() -> Vec<LimitField> {
        let mut all: Vec<LimitField> = Vec::new();
        for f in Api::ALL.iter().flat_map(|a| a.spec().max_tokens_fields) {
            if !all.iter().any(|k| k.0 == *f) {
                all.push(LimitField(f));
            }
        }
        all
    }

    /// The fields' JSON keys, in [`LimitField::all`]'s order (`--max-tokens-field`'s values).
    pub fn names() -> Vec<&'static str> {
        LimitField::all().into_iter().map(LimitField::key).collect()
    }

    /// The JSON key, which is also the value written in `request.max_tokens_field`.
    pub fn key(self) -> &'static str {
        self.0
    }

    /// The field sent when the scenario does not say: the dialect's first limit field
    /// (`dialect::Spec::max_tokens_fields`), `max_completion_tokens` for chat completions (every
    /// current OpenAI model takes it), `max_tokens` for a dialect that has none.
    pub fn default_for(api: Api) -> LimitField {
        LimitField::allowed(api)
            .first()
            .copied()
            .unwrap_or(LimitField("max_tokens"))
    }

    /// The fields `api` has, in the dialect's order.
    pub fn allowed(api: Api) -> Vec<LimitField> {
        api.spec()
            .max_tokens_fields
            .iter()
            .map(|f| LimitField(f))
            .collect()
    }

    /// The limit field a scenario or the command line names, if some dialect has it.
    pub fn parse(s: &str) -> Option<LimitField> {
        LimitField::all().into_iter().find(|f| f.key() == s.trim())
    }
}

/// `max_tokens` when the scenario does not set it.
pub const DEFAULT_MAX_TOKENS: u32 = 256;

/// The request's limit (`None`: no limit is sent) and its field, from `request.max_tokens`,
/// `request.max_tokens_field` and a limit key in `extra_body`, which is taken out of it.
pub(super) fn resolve(
    cx: &Ctx,
    api: Api,
    max_tokens: Option<Option<Pos<u32>>>,
    field: Option<&str>,
    extra_body: &mut Map<String, Value>,
) -> Result<(Option<u32>, LimitField), ScenarioError> {
    let allowed = LimitField::allowed(api);
    let written = written_field(cx, api, field)?;
    let in_extra: Vec<LimitField> = allowed
        .iter()
        .copied()
        .filter(|f| extra_body.contains_key(f.key()))
        .collect();
    let from_extra = match in_extra.as_slice() {
        [] => None,
        [f] => {
            let v = extra_body.remove(f.key()).unwrap_or(Value::Null);
            Some((*f, extra_limit(cx, *f, &v)?))
        }
        _ => {
            return Err(cx.err(
                "request.extra_body",
                "sets both max_tokens and max_completion_tokens; keep neither and write \
                 request.max_tokens (with request.max_tokens_field if the server wants the \
                 other field)"
                    .into(),
            ))
        }
    };
    let limit = max_tokens.map(|n| n.map(|p| p.0));
    let (limit, field) = match from_extra {
        None => (
            limit.unwrap_or(Some(DEFAULT_MAX_TOKENS)),
            written.unwrap_or(LimitField::default_for(api)),
        ),
        Some((f, n)) => {
            if written.is_some_and(|w| w != f) {
                return Err(cx.err(
                    "request.extra_body",
                    format!(
                        "sets {} while request.max_tokens_field says {}; remove it from \
                         extra_body and write request.max_tokens",
                        f.key(),
                        written.map_or("", LimitField::key)
                    ),
                ));
            }
            if limit.is_some_and(|l| l != n) {
                return Err(cx.err(
                    "request.extra_body",
                    format!(
                        "sets {} to {} while request.max_tokens is {}; remove it from \
                         extra_body (request.max_tokens is sent as {})",
                        f.key(),
                        shown(n),
                        shown(limit.flatten()),
                        f.key()
                    ),
                ));
            }
            (n, f)
        }
    };
    if limit.is_none() && api.spec().limit_required {
        return Err(cx.err(
            "request.max_tokens",
            format!(
                "is null, but {} requires a limit; write a number, e.g. max_tokens: 1024",
                api.as_str()
            ),
        ));
    }
    Ok((limit, field))
}

/// `request.max_tokens_field` as written, checked against the fields `api` has.
fn written_field(
    cx: &Ctx,
    api: Api,
    field: Option<&str>,
) -> Result<Option<LimitField>, ScenarioError> {
    let allowed = LimitField::allowed(api);
    let names = |fs: &[LimitField]| fs.iter().map(|f| f.key()).collect::<Vec<_>>().join(" or ");
    Ok(match field {
        None => None,
        Some(f) => match LimitField::parse(f) {
            Some(f) if allowed.contains(&f) => Some(f),
            Some(_) => {
                return Err(cx.err(
                    "request.max_tokens_field",
                    format!(
                        "{} has no `{f}`; it takes {}",
                        api.as_str(),
                        names(&allowed)
                    ),
                ))
            }
            None => {
                return Err(cx.err(
                    "request.max_tokens_field",
                    format!("`{f}` is not a limit field; write {}", names(&allowed)),
                ))
            }
        },
    })
}

/// A limit written in `extra_body`: a whole number of 1 or more, or `null` (no limit).
fn extra_limit(cx: &Ctx, f: LimitField, v: &Value) -> Result<Option<u32>, ScenarioError> {
    match v {
        Value::Null => Ok(None),
        Value::Number(n) => match n.as_u64().map(u32::try_from) {
            Some(Ok(n)) if n >= 1 => Ok(Some(n)),
            _ => Err(cx.err(
                "request.extra_body",
                format!("{} is {n}; write a whole number of 1 or more", f.key()),
            )),
        },
        other => Err(cx.err(
            "request.extra_body",
            format!("{} is {other}; write a whole number of 1 or more", f.key()),
        )),
    }
}

fn shown(n: Option<u32>) -> String {
    n.map_or_else(|| "null".into(), |n| n.to_string())
}
