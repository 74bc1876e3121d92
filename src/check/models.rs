//! Model names in `ladder check`: telling an "unknown model" error from other 404s/400s across
//! providers, reading the model list a server offers at `GET {base_url}/models` (OpenAI,
//! Anthropic, vLLM, Ollama and Gemini shapes), and the "did you mean" suggestion. Also whether a
//! probe answer looks like an API at all (JSON, 2xx), which is how a corrected base URL is
//! confirmed. Pure: no I/O.

use serde_json::Value;

/// What a `GET` probe got back (no answer at all: `status: None`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProbeAnswer {
    pub status: Option<u16>,
    /// Lower-cased `content-type`, empty when absent.
    pub content_type: String,
    /// The first bytes of the body.
    pub body: Vec<u8>,
}

/// A 2xx JSON answer: there is an API at that path.
pub fn answers_like_api(a: &ProbeAnswer) -> bool {
    a.status.is_some_and(|s| (200..300).contains(&s))
        && serde_json::from_slice::<Value>(&a.body).is_ok_and(|v| v.is_object() || v.is_array())
}

/// Model ids from a model-list body: `{"data": [{"id"}]}` (OpenAI, Anthropic, vLLM, llama.cpp),
/// `{"models": [{"name"|"id"|"model"}]}` (Ollama `/api/tags`, Gemini) or a bare list. `None`
/// when the body is not such a list.
pub fn parse_model_ids(body: &[u8]) -> Option<Vec<String>> {
    let v: Value = serde_json::from_slice(body).ok()?;
    let list = match &v {
        Value::Array(a) => a,
        Value::Object(o) => o
            .get("data")
            .or_else(|| o.get("models"))
            .and_then(Value::as_array)?,
        _ => return None,
    };
    let ids: Vec<String> = list
        .iter()
        .filter_map(|m| match m {
            Value::String(s) => Some(s.clone()),
            Value::Object(o) => ["id", "name", "model"]
                .iter()
                .find_map(|k| o.get(*k).and_then(Value::as_str))
                .map(|s| s.trim_start_matches("models/").to_string()),
            _ => None,
        })
        .collect();
    Some(ids)
}

/// Whether an error says that the model is unknown (rather than the path or something else).
pub fn says_unknown_model(status: u16, error_type: Option<&str>, message: &str) -> bool {
    let t = error_type.unwrap_or("").to_ascii_lowercase();
    if matches!(
        t.as_str(),
        "model_not_found" | "model_not_available" | "invalid_model" | "unknown_model"
    ) {
        return true;
    }
    let m = message.to_ascii_lowercase();
    if t == "not_found_error" && m.starts_with("model") {
        return true;
    }
    let phrases = [
        "does not exist",
        "not found",
        "not exist",
        "unknown model",
        "no such model",
        "invalid model",
        "not available",
        "unsupported model",
        "not a valid model",
    ];
    matches!(status, 400 | 404 | 422)
        && m.contains("model")
        && phrases.iter().any(|p| m.contains(p))
}

fn score(wanted: &str, id: &str) -> f64 {
    let (w, i) = (wanted.to_lowercase(), id.to_lowercase());
    if w == i {
        return 1.0;
    }
    let related = (i.starts_with(&w) || w.starts_with(&i))
        || i.ends_with(&format!("/{w}"))
        || w.ends_with(&format!("/{i}"));
    let s = strsim::jaro_winkler(&w, &i);
    if related {
        s.max(0.95)
    } else {
        s
    }
}

/// The offered model closest to `wanted`, when one is close enough to be a likely typo.
pub fn did_you_mean(wanted: &str, offered: &[String]) -> Option<String> {
    let mut best: Option<(f64, &String)> = None;
    for id in offered {
        let s = score(wanted, id);
        let better = match best {
            None => true,
            Some((b, bid)) => s > b || (s == b && id.len() < bid.len()),
        };
        if better {
            best = Some((s, id));
        }
    }
    best.filter(|(s, _)| *s >= 0.85).map(|(_, id)| id.clone())
}

/// At most `limit` offered models to show, closest to `wanted` first, and how many were left out.
pub fn shown_models(wanted: &str, offered: &[String], limit: usize) -> (Vec<String>, usize) {
    let mut all: Vec<(f64, &String)> = offered.iter().map(|id| (score(wanted, id), id)).collect();
    if all.len() <= limit {
        let mut names: Vec<String> = offered.to_vec();
        names.sort();
        names.dedup();
        return (names, 0);
    }
    all.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    let names = all
        .iter()
        .take(limit)
        .map(|(_, id)| (*id).clone())
        .collect();
    (names, offered.len() - limit)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn api_like_answers() {
        let ok = ProbeAnswer {
            status: Some(200),
            content_type: "application/json".into(),
            body: br#"{"data":[]}"#.to_vec(),
        };
        assert!(answers_like_api(&ok));
        let html = ProbeAnswer {
            body: b"<html></html>".to_vec(),
            ..ok.clone()
        };
        assert!(!answers_like_api(&html));
        let missing = ProbeAnswer {
            status: Some(404),
            ..ok.clone()
        };
        assert!(!answers_like_api(&missing));
        assert!(!answers_like_api(&ProbeAnswer::default()));
        let scalar = ProbeAnswer {
            body: b"42".to_vec(),
            ..ok
        };
        assert!(!answers_like_api(&scalar));
    }

    #[test]
    fn model_lists_in_every_known_shape() {
        assert_eq!(
            parse_model_ids(br#"{"object":"list","data":[{"id":"gpt-4o"},{"id":"gpt-4o-mini"}]}"#),
            Some(ids(&["gpt-4o", "gpt-4o-mini"]))
        );
        assert_eq!(
            parse_model_ids(br#"{"models":[{"name":"llama3:latest","model":"llama3:latest"}]}"#),
            Some(ids(&["llama3:latest"]))
        );
        assert_eq!(
            parse_model_ids(br#"{"models":[{"name":"models/gemini-1.5-pro"}]}"#),
            Some(ids(&["gemini-1.5-pro"]))
        );
        assert_eq!(
            parse_model_ids(br#"["a", {"id": "b"}, 3]"#),
            Some(ids(&["a", "b"]))
        );
        assert_eq!(parse_model_ids(br#"{"data": 3}"#), None);
        assert_eq!(parse_model_ids(b"<html>"), None);
        assert_eq!(parse_model_ids(b"7"), None);
    }

    #[test]
    fn unknown_model_errors_across_providers() {
        // OpenAI / the simulator.
        assert!(says_unknown_model(
            404,
            Some("model_not_found"),
            "The model `x` does not exist or you do not have access to it."
        ));
        // Anthropic.
        assert!(says_unknown_model(
            404,
            Some("not_found_error"),
            "model: claude-9"
        ));
        // vLLM.
        assert!(says_unknown_model(
            404,
            Some("NotFoundError"),
            "The model `foo` does not exist."
        ));
        // Ollama.
        assert!(says_unknown_model(
            404,
            None,
            "model \"llama9\" not found, try pulling it first"
        ));
        // DeepSeek-style 400.
        assert!(says_unknown_model(
            400,
            Some("invalid_request_error"),
            "Model Not Exist"
        ));
        // A 404 on the path is not about the model.
        assert!(!says_unknown_model(
            404,
            Some("invalid_request_error"),
            "Invalid URL (POST /chat/completions)"
        ));
        assert!(!says_unknown_model(404, None, "404 page not found"));
        // A 500 mentioning a model is a server error, not an unknown model.
        assert!(!says_unknown_model(500, None, "model not found in cache"));
        assert!(!says_unknown_model(
            400,
            None,
            "max_tokens must be at least 1"
        ));
    }

    #[test]
    fn did_you_mean_picks_close_names_only() {
        let offered = ids(&["gpt-4o", "gpt-4o-mini", "o3-mini", "sim-model"]);
        assert_eq!(
            did_you_mean("gpt-4o-mnii", &offered).as_deref(),
            Some("gpt-4o-mini")
        );
        assert_eq!(did_you_mean("GPT-4O", &offered).as_deref(), Some("gpt-4o"));
        assert_eq!(did_you_mean("gpt4o", &offered).as_deref(), Some("gpt-4o"));
        assert_eq!(did_you_mean("claude-3-opus", &offered), None);
        assert_eq!(did_you_mean("x", &[]), None);
        let dated = ids(&["claude-3-5-sonnet-20241022", "claude-3-5-haiku-20241022"]);
        assert_eq!(
            did_you_mean("claude-3-5-sonnet", &dated).as_deref(),
            Some("claude-3-5-sonnet-20241022")
        );
        let ollama = ids(&["llama3:latest", "mistral:7b"]);
        assert_eq!(
            did_you_mean("llama3", &ollama).as_deref(),
            Some("llama3:latest")
        );
        let routed = ids(&["openai/gpt-4o", "anthropic/claude-3.5-sonnet"]);
        assert_eq!(
            did_you_mean("gpt-4o", &routed).as_deref(),
            Some("openai/gpt-4o")
        );
    }

    #[test]
    fn shown_models_are_sorted_or_nearest_first() {
        let few = ids(&["b", "a", "a"]);
        assert_eq!(shown_models("x", &few, 5), (ids(&["a", "b"]), 0));
        let many = ids(&["zeta", "gpt-4o", "alpha", "gpt-4o-mini", "beta"]);
        let (names, more) = shown_models("gpt-4o-mni", &many, 2);
        assert_eq!(names, ids(&["gpt-4o-mini", "gpt-4o"]));
        assert_eq!(more, 3);
    }
}
