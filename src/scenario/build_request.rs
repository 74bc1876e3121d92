//! Validation of `request:`: where the prompts come from (one prompt file, a prompt set, or
//! synthetic text of a given size), how they are used (order, cache-busting, sessions), the
//! truncation threshold, and the body options. Prompt files are read next to the scenario.

use super::errors::{dialects, did_you_mean, Ctx};
use super::prompts::{read_prompt_set, synthetic_prompt, PromptContent};
use super::raw::{RawRequest, RawSession, PROMPT_FORMS};
use super::scalars::pos;
use super::{LadderOver, Load, LoadMode, PromptOrder, PromptSource, RequestSpec, ScenarioError};
use crate::dialect::Api;
use serde_yaml::Value as Yaml;
use std::path::{Path, PathBuf};

/// `bail!(cx, "load.ladder", "the ladder is empty; ...")`: returns a located error.
use super::bounded::read_capped;

macro_rules! bail {
    ($cx:expr, $path:expr, $($msg:tt)+) => {
        return Err($cx.err($path, format!($($msg)+)))
    };
}

/// A path or text that is set and not blank.
fn given(o: &Option<String>) -> Option<String> {
    o.as_ref().filter(|p| !p.trim().is_empty()).cloned()
}

/// How to read a prompt file over the cap.
fn raise_prompt_cap() -> String {
    format!(
        "raise the cap with {}=N (MiB) if the file is meant to be that large",
        super::bounded::PROMPT_CAP_VAR
    )
}

/// Reads a prompt/system file relative to the scenario's directory: a regular file under the
/// prompt cap (`bounded`).
fn read_text(cx: &Ctx, key: &str, rel: &str) -> Result<(PathBuf, String), ScenarioError> {
    let path = cx.file.parent().unwrap_or(Path::new("")).join(rel);
    let shown = path.display();
    let read = read_capped(&path, cx.prompt_cap, &raise_prompt_cap()).and_then(|b| {
        String::from_utf8(b).map_err(|_| "is not UTF-8 text; save it as UTF-8".to_string())
    });
    match read {
        Err(why) if why.starts_with("cannot read it") => bail!(
            cx,
            &format!("request.{key}"),
            "cannot read {shown}{}; the path is relative to the scenario file",
            &why["cannot read it".len()..]
        ),
        Err(why) => bail!(cx, &format!("request.{key}"), "{shown} {why}"),
        Ok(t) if t.trim().is_empty() => {
            bail!(
                cx,
                &format!("request.{key}"),
                "{shown} is empty; put the text to send in it"
            )
        }
        Ok(t) => Ok((path, t)),
    }
}

/// A trace with chat messages needs a chat API.
fn check_trace_api(cx: &Ctx, load: &Load, api: Api) -> Result<(), ScenarioError> {
    let chat = load.trace.iter().flat_map(|t| &t.requests).any(|r| {
        matches!(
            r.input,
            super::trace::TraceInput::Prompt(PromptContent::Messages(_))
        )
    });
    if chat && !api.takes_messages() {
        bail!(
            cx,
            "load.trace",
            "the trace holds chat messages, which {} cannot send; use api: {} or prompts as text",
            api.as_str(),
            Api::default().as_str()
        )
    }
    Ok(())
}

pub(super) fn build_request(
    cx: &Ctx,
    raw: Option<RawRequest>,
    load: &Load,
    api: Api,
) -> Result<RequestSpec, ScenarioError> {
    let Some(r) = raw else {
        bail!(
            cx,
            "request",
            "missing; add e.g. request: {{prompt_file: prompts/support.txt}}"
        )
    };
    if api.embeds() {
        check_embeddings(cx, &r, load)?;
    }
    let batch = batch_of(cx, &r, api)?;
    let (prompt, prompt_file, prompts) = prompt_of(cx, &r, load, api)?;
    let prompt_order = prompt_order_of(cx, r.prompt_order.as_deref(), &prompts)?;
    let chain = r.session.as_ref().and_then(|s| s.chain.clone());
    let session_turns = session_turns_of(cx, r.session, load, api)?;
    let (system_file, system) = match r.system_file.filter(|p| !p.trim().is_empty()) {
        Some(sf) => read_text(cx, "system_file", &sf).map(|(p, t)| (Some(p), Some(t)))?,
        None => (None, None),
    };
    let short_below = r.short_below.map_or(super::DEFAULT_SHORT_BELOW, |f| f.0);
    if short_below > 1.0 {
        bail!(cx, "request.short_below", "must be at most 100%, e.g. 10%")
    }
    let temperature = r.temperature.map(|t| t.0);
    if let Some(t) = temperature.filter(|t| !t.is_finite() || *t < 0.0) {
        bail!(
            cx,
            "request.temperature",
            "{t} is not allowed; write 0 or more, e.g. 0.7"
        )
    }
    let mut extra_body = extra_body_of(cx, r.extra_body)?;
    let (max_tokens, max_tokens_field) = if api.embeds() {
        (None, super::LimitField::default_for(api))
    } else {
        super::token_limit::resolve(
            cx,
            api,
            r.max_tokens,
            r.max_tokens_field.as_deref(),
            &mut extra_body,
        )?
    };
    // Embeddings are answered whole: they are never streamed.
    let stream = r.stream.unwrap_or(!api.embeds());
    let session_chain = session_chain_of(cx, chain.as_deref(), session_turns, api, &extra_body)?;
    let (tools, tool_choice) = super::tools::tools_of(
        cx,
        r.tools.as_deref(),
        r.tool_choice.as_ref(),
        api,
        &extra_body,
    )?;
    let cache_auto = super::tools::cache_of(cx, r.cache.as_deref(), api)?;
    let prompt_cache_key =
        super::tools::prompt_cache_key_of(cx, r.prompt_cache_key.as_deref(), api, &extra_body)?;
    Ok(RequestSpec {
        prompt,
        messages: Vec::new(),
        prompt_file,
        prompts,
        prompt_order,
        cache_bust: r.cache_bust.unwrap_or(false),
        stream,
        batch,
        inputs: Vec::new(),
        session_turns,
        session_chain,
        short_below,
        system,
        system_file,
        max_tokens,
        max_tokens_field,
        temperature,
        extra_body,
        tools,
        tool_choice,
        cache_auto,
        prompt_cache_key,
    })
}

/// The most inputs one embeddings request may carry (OpenAI's limit).
pub const MAX_BATCH: u32 = 2048;

/// `request.batch`: texts per request, 1 or more, for embeddings only (elsewhere a request
/// carries one prompt, and several would be several requests).
fn batch_of(cx: &Ctx, r: &RawRequest, api: Api) -> Result<u32, ScenarioError> {
    let Some(batch) = r.batch.as_ref().map(|b| b.0) else {
        return Ok(1);
    };
    if !api.embeds() {
        let embeds = dialects(|a| a.embeds(), " or ");
        bail!(
            cx,
            "request.batch",
            "sends several texts in one request, which only {} does; {} sends one prompt per \
             request (for more load, raise the ladder): remove it",
            embeds,
            api.as_str()
        )
    }
    if batch > MAX_BATCH {
        bail!(
            cx,
            "request.batch",
            "{batch} texts per request is more than an embeddings request takes; write 1 to \
             {MAX_BATCH}"
        )
    }
    Ok(batch)
}

/// What an embeddings request cannot carry or measure, refused at its field: there is no output
/// (no limit, no stream, no system prompt) and no conversation.
fn check_embeddings(cx: &Ctx, r: &RawRequest, load: &Load) -> Result<(), ScenarioError> {
    let why = "an embeddings answer generates no tokens";
    let refused = [
        (
            // `max_tokens: null` (no limit) is what an embedding has, as a recorded run says.
            matches!(r.max_tokens, Some(Some(_))),
            "request.max_tokens",
            format!("{why}, so there is no output limit: remove it"),
        ),
        (
            r.max_tokens_field.is_some(),
            "request.max_tokens_field",
            format!("{why}, so there is no output limit: remove it"),
        ),
        (
            r.stream == Some(true),
            "request.stream",
            format!(
                "{why} and is answered as one JSON body; it cannot be streamed: remove it \
                 (E2E is measured, TTFT and TPOT are not)"
            ),
        ),
        (
            r.session.is_some(),
            "request.session",
            "embeddings have no conversation; remove session (each request embeds its own \
             texts)"
                .to_string(),
        ),
        (
            r.system_file.as_ref().is_some_and(|f| !f.trim().is_empty()),
            "request.system_file",
            "embeddings take no system prompt; remove it".to_string(),
        ),
        (
            r.short_below.is_some(),
            "request.short_below",
            format!("{why}, so no answer can be short: remove it"),
        ),
        (
            r.temperature.is_some(),
            "request.temperature",
            "embeddings are not sampled; remove it".to_string(),
        ),
        (
            matches!(load.mode, LoadMode::Replay { .. }),
            "load.mode",
            "a replayed trace holds generation requests (their output lengths); replay is for \
             chat or completions: use concurrency or rate"
                .to_string(),
        ),
    ];
    if let Some((_, field, message)) = refused.into_iter().find(|(set, ..)| *set) {
        return Err(cx.err(field, message));
    }
    Ok(())
}

/// Where the prompts come from, checked: one source at most, none where the load generates
/// them (a prompt-size sweep) or a trace carries them (replay). Returns the synthetic size and
/// the inline text, when given.
fn prompt_sources(
    cx: &Ctx,
    r: &RawRequest,
    load: &Load,
) -> Result<(Option<u32>, Option<String>), ScenarioError> {
    let synthetic = r
        .prompt
        .as_ref()
        .and_then(|p| p.synthetic_tokens.as_ref().map(|t| t.0));
    let inline = r.prompt.as_ref().and_then(|p| given(&p.text));
    if r.prompt.is_some() && synthetic.is_none() && inline.is_none() {
        bail!(
            cx,
            "request.prompt",
            "says nothing; write one of: {PROMPT_FORMS}"
        )
    }
    if synthetic.is_some() && inline.is_some() {
        bail!(
            cx,
            "request.prompt",
            "both `synthetic_tokens` and `text` are set; keep one"
        )
    }
    let sources: Vec<&str> = [
        given(&r.prompt_file).map(|_| "prompt_file"),
        given(&r.prompts).map(|_| "prompts"),
        synthetic.or(inline.as_ref().map(|_| 0)).map(|_| "prompt"),
    ]
    .into_iter()
    .flatten()
    .collect();
    let sweep = matches!(load.ladder_over, LadderOver::PromptTokens { .. });
    if let [a, b, ..] = sources.as_slice() {
        bail!(
            cx,
            &format!("request.{b}"),
            "both `{a}` and `{b}` are set; the prompts come from one place: keep one"
        )
    }
    if sweep && !sources.is_empty() {
        bail!(
            cx,
            &format!("request.{}", sources[0]),
            "load.ladder_over: prompt_tokens generates the prompts (the ladder gives their \
             sizes); remove it"
        )
    }
    let replay = matches!(load.mode, LoadMode::Replay { .. });
    if let (true, Some(source)) = (replay, sources.first()) {
        bail!(
            cx,
            &format!("request.{source}"),
            "load.mode: replay sends each request of the trace with its own prompt (or size); \
             remove it"
        )
    }
    Ok((synthetic, inline))
}

/// The prompt (text, file, source) from the one source given.
fn prompt_of(
    cx: &Ctx,
    r: &RawRequest,
    load: &Load,
    api: Api,
) -> Result<(String, PathBuf, PromptSource), ScenarioError> {
    let (synthetic, inline) = prompt_sources(cx, r, load)?;
    let sweep = matches!(load.ladder_over, LadderOver::PromptTokens { .. });
    let replay = matches!(load.mode, LoadMode::Replay { .. });
    Ok(if replay {
        check_trace_api(cx, load, api)?;
        (String::new(), PathBuf::new(), PromptSource::Trace)
    } else if let Some(pf) = given(&r.prompt_file) {
        let (path, text) = read_text(cx, "prompt_file", &pf)?;
        (text, path, PromptSource::File)
    } else if let Some(ps) = given(&r.prompts) {
        prompt_set(cx, &ps, api)?
    } else if let Some(text) = inline {
        (text, PathBuf::new(), PromptSource::Inline)
    } else if let Some(tokens) = synthetic {
        (
            synthetic_prompt(tokens),
            PathBuf::new(),
            PromptSource::Synthetic { tokens },
        )
    } else if sweep {
        let tokens = load.ladder[0];
        (
            synthetic_prompt(tokens),
            PathBuf::new(),
            PromptSource::Synthetic { tokens },
        )
    } else {
        bail!(
            cx,
            "request.prompt_file",
            "missing; put the prompt in a file, e.g. prompt_file: prompts/support.txt \
             (or a prompt set: prompts: prompts/set.jsonl)"
        )
    })
}

/// A prompt set (`request.prompts`, JSONL next to the scenario): read within the cap, chat
/// messages only where the API can send them.
fn prompt_set(
    cx: &Ctx,
    ps: &str,
    api: Api,
) -> Result<(String, PathBuf, PromptSource), ScenarioError> {
    let path = cx.file.parent().unwrap_or(Path::new("")).join(ps);
    let set = match read_prompt_set(&path, cx.prompt_cap, &raise_prompt_cap()) {
        Ok(set) => set,
        Err(e) if e.line.is_none() => {
            bail!(cx, "request.prompts", "{}: {}", path.display(), e.message)
        }
        Err(e) => {
            return Err(ScenarioError::Invalid {
                file: path.clone(),
                line: e.line,
                field: "request.prompts".into(),
                message: e.message,
            })
        }
    };
    let chat = set
        .items
        .iter()
        .any(|i| matches!(i.content, PromptContent::Messages(_)));
    if chat && !api.takes_messages() {
        bail!(
            cx,
            "request.prompts",
            "{} holds chat messages, which {} cannot send; use api: {} or plain \
             {{\"prompt\": ...}} lines",
            path.display(),
            api.as_str(),
            Api::default().as_str()
        )
    }
    Ok((
        String::new(),
        path,
        PromptSource::Set(std::sync::Arc::new(set)),
    ))
}

/// `request.prompt_order`: round-robin by default, only for a prompt set.
fn prompt_order_of(
    cx: &Ctx,
    raw: Option<&str>,
    prompts: &PromptSource,
) -> Result<PromptOrder, ScenarioError> {
    let prompt_order = match raw {
        None | Some("round-robin") => PromptOrder::RoundRobin,
        Some("random") => PromptOrder::Random,
        Some(other) => {
            let hint = did_you_mean(other, &["round-robin", "random"]);
            bail!(
                cx,
                "request.prompt_order",
                "unknown order `{other}`{hint}; use round-robin or random"
            )
        }
    };
    if raw.is_some() && !matches!(prompts, PromptSource::Set(_)) {
        bail!(
            cx,
            "request.prompt_order",
            "orders the prompts of a set; add prompts: <file.jsonl> or remove it"
        )
    }
    Ok(prompt_order)
}

/// `request.session`: turns per session (1 without one), where the API and load allow it.
fn session_turns_of(
    cx: &Ctx,
    raw: Option<RawSession>,
    load: &Load,
    api: Api,
) -> Result<u32, ScenarioError> {
    let raw_given = raw.is_some();
    let session_turns = match raw {
        None => 1,
        Some(s) => match pos(s.turns) {
            None => bail!(
                cx,
                "request.session",
                "says nothing; write e.g. session: {{turns: 4}}"
            ),
            Some(t) => t,
        },
    };
    if load.agent.is_some() {
        if raw_given {
            bail!(
                cx,
                "request.session",
                "an agent's tasks are its conversations (load.agent.turns); remove session"
            )
        }
        if !api.takes_messages() {
            let chat = dialects(|a| a.takes_messages(), " or ");
            bail!(cx, "load.agent", "agents need a chat API ({})", chat)
        }
    }
    if session_turns > 1 && !api.takes_messages() {
        let chat = dialects(|a| a.takes_messages(), " or ");
        bail!(cx, "request.session", "sessions need a chat API ({})", chat)
    }
    if session_turns > 1 && load.mode.open_loop() {
        bail!(
            cx,
            "request.session",
            "sessions need closed-loop workers; use load.mode: concurrency or remove session"
        )
    }
    Ok(session_turns)
}

/// `request.session.chain`: the dialect's field that continues a stored response, when the
/// dialect has one and the server keeps responses (`store: true` in `extra_body`).
fn session_chain_of(
    cx: &Ctx,
    chain: Option<&str>,
    turns: u32,
    api: Api,
    extra_body: &serde_json::Map<String, serde_json::Value>,
) -> Result<Option<&'static str>, ScenarioError> {
    let Some(chain) = chain else {
        return Ok(None);
    };
    let Some(field) = api.spec().chain_field else {
        let chaining = dialects(|a| a.spec().chain_field.is_some(), " or ");
        bail!(
            cx,
            "request.session.chain",
            "{} has no chained responses; use {} or remove chain (each turn then sends the history)",
            api.as_str(),
            chaining
        )
    };
    if chain != field {
        bail!(
            cx,
            "request.session.chain",
            "`{chain}` is not a chain of {}; write chain: {field}",
            api.as_str()
        )
    }
    if turns < 2 {
        bail!(
            cx,
            "request.session.chain",
            "chains the turns of a session; write turns: 2 or more"
        )
    }
    if extra_body.get("store") != Some(&serde_json::Value::Bool(true)) {
        bail!(
            cx,
            "request.session.chain",
            "{field} needs the server to keep each response: add store: true to \
             request.extra_body (ladder sends store: false, and then there is no response to \
             chain to; stored responses stay in the account, 30 days on OpenAI)"
        )
    }
    Ok(Some(field))
}

/// `request.extra_body`: a mapping, turned into JSON, without `stream` (that is `request.stream`).
fn extra_body_of(
    cx: &Ctx,
    raw: Option<Yaml>,
) -> Result<serde_json::Map<String, serde_json::Value>, ScenarioError> {
    let extra_body = match raw {
        None | Some(Yaml::Null) => serde_json::Map::new(),
        Some(v @ Yaml::Mapping(_)) => match serde_json::to_value(&v) {
            Ok(serde_json::Value::Object(m)) => m,
            Ok(_) => serde_json::Map::new(),
            Err(e) => bail!(cx, "request.extra_body", "cannot turn it into JSON: {e}"),
        },
        Some(_) => {
            bail!(
                cx,
                "request.extra_body",
                "must be a mapping, e.g. extra_body: {{seed: 1}}"
            )
        }
    };
    if let Some(v) = extra_body
        .get("stream")
        .filter(|v| **v != serde_json::Value::Bool(true))
    {
        bail!(
            cx,
            "request.extra_body.stream",
            "`stream: {v}` does not belong in extra_body; to ask for whole answers write request.stream: false (E2E and tokens are measured, TTFT and TPOT are not)"
        )
    }
    Ok(extra_body)
}
