//! Unit tests of scenario loading: the example of docs/scenarios.md, defaults, interpolation, every
//! validation message with its line and field, secrecy, the fingerprint and the output YAML.

use super::errors::strip_marks;
use super::lines::{first_alias, locate_span, path_at_line};
use super::normalize::fingerprint_of;
use super::scalars::parse_fraction;
use super::*;
use proptest::prelude::*;

/// The example of docs/scenarios.md, verbatim.
const FULL: &str = r#"# scenarios/support-chat.yaml
name: support-chat                 # used for file names; [a-z0-9-]
description: customer-support answers, short prompt
target:
  api: openai-chat                 # openai-chat | openai-completions | anthropic-messages
  base_url: ${LADDER_BASE_URL:-https://api.openai.com/v1}
  api_key: ${OPENAI_API_KEY}       # only from the environment; never written anywhere
  models: [gpt-4o, deepseek-chat]  # one ladder per model, same everything else
  headers: {}                      # extra headers (values may use ${VAR})
  timeouts: {connect: 10s, first_token: 60s, idle: 30s, total: 300s}
request:
  prompt_file: prompts/support.txt # relative to this file
  system_file: prompts/system.txt  # optional
  max_tokens: 200
  temperature: 0
  extra_body: {}                   # merged into the JSON body (e.g. top_p, seed)
load:
  ladder: [5, 10, 20, 50]          # concurrent streams per step (closed loop)
  requests_per_step: 200           # or requests_per_worker: 5, or duration: 60s
  warmup_requests: 5               # per step, not counted
  ramp_up: 1s                      # spread the workers' first requests evenly over this time
  pause_between_steps: 2s
retry:                             # default: none, so 429s are measured, not hidden
  max_attempts: 1
gates:                             # overrides of the default gates
  ttft: {p90: 10%, p99: 20%, floor: 50ms}
  tpot: {p90: 10%, p99: 20%, floor: 1ms}
  error_rate: 1pp
slo:                               # optional: goodput = share of requests meeting all of these
  ttft: 1s
  tpot: 50ms
limits:                            # optional: account limits for walls and `plan`
  concurrency: 50
  tpm: 2000000
"#;

const MIN: &str = "name: t\ntarget:\n  sim: {}\n  models: [m]\nrequest:\n  \
                   prompt_file: prompts/support.txt\nload:\n  ladder: [1, 2]\n";
const KEY: &str = "sk-test-0123456789abcdef";

/// Loads `yaml` as `<tmp>/s.yaml` next to `prompts/support.txt` and `prompts/system.txt`.
fn load_env(yaml: &str, vars: &[(&str, &str)]) -> Result<Scenario, ScenarioError> {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("prompts")).expect("mkdir");
    let prompt = "How do I reset my password?\n";
    std::fs::write(dir.path().join("prompts/support.txt"), prompt).expect("write");
    std::fs::write(dir.path().join("prompts/system.txt"), "You are helpful.").expect("write");
    let env = |name: &str| {
        vars.iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.to_string())
    };
    load_str(yaml, &dir.path().join("s.yaml"), &env)
}

fn ok(yaml: &str) -> Scenario {
    load_env(yaml, &[("OPENAI_API_KEY", KEY)]).unwrap_or_else(|e| panic!("{e}"))
}

/// The error's line, field and message.
fn err(yaml: &str) -> (Option<usize>, String, String) {
    match load_env(yaml, &[("OPENAI_API_KEY", KEY)]) {
        Err(ScenarioError::Invalid {
            line,
            field,
            message,
            ..
        }) => (line, field, message),
        other => panic!("expected an Invalid error, got {other:?} for\n{yaml}"),
    }
}

#[test]
fn full_design_example_loads_every_field() {
    let s = ok(FULL);
    assert_eq!(s.name, "support-chat");
    assert_eq!(
        s.description.as_deref(),
        Some("customer-support answers, short prompt")
    );
    let t = &s.target;
    assert_eq!(t.api, Api::OpenAiChat);
    assert_eq!(
        t.endpoint,
        Endpoint::Url("https://api.openai.com/v1".into())
    );
    assert_eq!(t.api_key.as_ref().map(Secret::expose), Some(KEY));
    assert_eq!(t.models, ["gpt-4o", "deepseek-chat"]);
    assert!(t.headers.is_empty());
    assert_eq!(t.timeouts, Timeouts::default());
    let r = &s.request;
    assert_eq!(r.prompt, "How do I reset my password?\n");
    assert!(r.prompt_file.ends_with("prompts/support.txt"));
    assert_eq!(r.system.as_deref(), Some("You are helpful."));
    assert!(r
        .system_file
        .as_ref()
        .is_some_and(|p| p.ends_with("prompts/system.txt")));
    assert_eq!((r.max_tokens, r.temperature), (Some(200), Some(0.0)));
    assert!(r.extra_body.is_empty());
    let l = &s.load;
    assert_eq!(
        (l.ladder.as_slice(), l.budget),
        ([5, 10, 20, 50].as_slice(), Budget::RequestsPerStep(200))
    );
    assert_eq!(l.warmup_requests, 5);
    assert_eq!(
        (l.ramp_up, l.pause_between_steps),
        (Duration::from_secs(1), Duration::from_secs(2))
    );
    assert_eq!(
        (&s.retry, &s.gates),
        (&RetryPolicy::default(), &Gates::default())
    );
    let slo = Slo {
        ttft: Some(Duration::from_secs(1)),
        ttfc: None,
        tpot: Some(Duration::from_millis(50)),
        e2e: None,
    };
    assert_eq!(s.slo, slo);
    assert_eq!(
        s.limits,
        Limits {
            concurrency: Some(50),
            rpm: None,
            tpm: Some(2_000_000),
            max_tokens: s.request.max_tokens,
            ..Limits::default()
        }
    );
    assert!(s.fingerprint.len() == 16 && s.fingerprint.chars().all(|c| c.is_ascii_hexdigit()));
}

#[test]
fn defaults_fill_everything_optional() {
    let s = ok(MIN);
    assert_eq!(s.target.endpoint, Endpoint::Sim(SimParams::default()));
    assert_eq!(
        (s.target.api, s.target.api_key.clone()),
        (Api::OpenAiChat, None)
    );
    assert_eq!(
        (s.request.max_tokens, s.request.temperature),
        (Some(256), None)
    );
    assert_eq!(
        s.request.max_tokens_field,
        LimitField::parse("max_completion_tokens").unwrap()
    );
    assert_eq!(s.request.system, None);
    assert_eq!(s.load.budget, Budget::RequestsPerStep(100));
    assert_eq!(
        (s.load.warmup_requests, s.load.ramp_up),
        (0, Duration::ZERO)
    );
    assert_eq!(s.load.pause_between_steps, Duration::ZERO);
    assert_eq!(
        (&s.retry, &s.gates),
        (&RetryPolicy::default(), &Gates::default())
    );
    let limits = Limits {
        max_tokens: s.request.max_tokens,
        ..Limits::default()
    };
    assert_eq!((&s.slo, &s.limits), (&Slo::default(), &limits));
    assert!(!s.limits.any(), "no limit is declared");
}

#[test]
fn other_forms_and_overrides() {
    let target = "api: anthropic-messages\n  base_url: http://localhost:8000/v1/\n  model: c";
    let extra = "\nretry: {max_attempts: 3, retry_on: [http_429, timeout_idle]}\n\
                 gates: {tpot: {p99: 0.5}, error_rate: 2pp, throughput: 5%}";
    let yaml = MIN
        .replace("sim: {}\n  models: [m]", target)
        .replace("[1, 2]", "[1, 2]\n  duration: 1m30s")
        + extra;
    let s = ok(&yaml);
    assert_eq!(s.target.api, Api::AnthropicMessages);
    assert_eq!(
        s.target.endpoint,
        Endpoint::Url("http://localhost:8000/v1".into())
    );
    assert_eq!(s.target.models, ["c"]);
    assert_eq!(s.load.budget, Budget::Duration(Duration::from_secs(90)));
    assert_eq!(s.retry.max_attempts, 3);
    assert_eq!(
        s.retry.retry_on,
        [ErrorClass::Http429, ErrorClass::TimeoutIdle]
    );
    assert_eq!(
        s.gates.tpot,
        MetricGate {
            p90: 0.10,
            p99: 0.5,
            floor_ms: 1.0
        }
    );
    assert!((s.gates.error_rate - 0.02).abs() < 1e-12);
    assert!((s.gates.throughput - 0.05).abs() < 1e-12);
    assert_eq!(s.gates.ttft, Gates::default().ttft);
}

#[test]
fn the_ttfc_gate_follows_ttfts_unless_set_and_ttfc_is_an_slo_bound() {
    let s = ok(&(MIN.to_string() + "gates: {ttft: {p90: 25%, floor: 10ms}}\nslo: {ttfc: 800ms}"));
    assert_eq!(s.gates.ttfc, s.gates.ttft);
    assert_eq!(s.slo.ttfc, Some(Duration::from_millis(800)));
    // Named in the gates line only when it is not TTFT's.
    assert!(
        !s.gates.describe().contains("TTFC"),
        "{}",
        s.gates.describe()
    );
    let s = ok(&(MIN.to_string() + "gates: {ttft: {p90: 25%}, ttfc: {p99: 40%}}"));
    assert_eq!(
        s.gates.ttfc,
        MetricGate {
            p90: 0.25,
            p99: 0.40,
            floor_ms: 50.0
        }
    );
    assert!(
        s.gates
            .describe()
            .contains("; TTFC P90 +25% P99 +40% (floor 50 ms); TPOT"),
        "{}",
        s.gates.describe()
    );
    // The normalized scenario keeps both, and reads back the same.
    let yaml = crate::scenario::normalized_yaml(&s);
    assert!(yaml.contains("ttfc:"), "{yaml}");
    let (line, field, message) = err(&(MIN.to_string() + "gates:\n  ttfc: {p90: fast}"));
    assert_eq!(
        (line, field.as_str()),
        (Some(10), "gates.ttfc.p90"),
        "{message}"
    );
    let (_, field, message) = err(&(MIN.to_string() + "slo: {ttfc_p90: 1s}"));
    assert!(message.contains("ttfc"), "{field}: {message}");
}

#[test]
fn interpolation_defaults_escapes_and_quoting() {
    let desc = "name: ${NAME:-x}\ndescription: \"cost $$5 ${D}\" # ${NOT_IN_COMMENTS}";
    let s = load_env(&MIN.replace("name: t", desc), &[("D", "say \"hi\"\nbye")]).expect("loads");
    assert_eq!(s.name, "x");
    assert_eq!(s.description.as_deref(), Some("cost $5 say \"hi\"\nbye"));
    // empty with a default -> the default; plain values YAML would misread get quoted
    let yaml = MIN.replace("name: t", "name: ${NAME:-y}\ndescription: ${D}");
    let s = load_env(&yaml, &[("NAME", ""), ("D", "a: b # c")]).expect("loads");
    assert_eq!(
        (s.name.as_str(), s.description.as_deref()),
        ("y", Some("a: b # c"))
    );
    let s = load_env(
        &MIN.replace("name: t", "name: t\ndescription: 'it''s ${D}'"),
        &[("D", "a'b")],
    );
    assert_eq!(s.expect("loads").description.as_deref(), Some("it's a'b"));
    let yaml = MIN.replace("name: t", "name: t\ndescription: |\n  # ${D}\n  x");
    assert_eq!(
        load_env(&yaml, &[("D", "v")])
            .expect("loads")
            .description
            .as_deref(),
        Some("# v\nx\n")
    );
    assert_eq!(
        load_env(&MIN.replace("[1, 2]", "[1, ${N:-4}]"), &[])
            .expect("ok")
            .load
            .ladder,
        [1, 4]
    );
    let (line, _, msg) = err(&MIN.replace("name: t", "name: t\ndescription: a ${X"));
    assert_eq!(line, Some(2));
    assert!(msg.starts_with("unterminated `${`"), "{msg}");
}

#[test]
fn unset_variable_names_it_and_the_line() {
    let yaml = FULL.replace("OPENAI_API_KEY}", "MISSING_KEY}");
    let e = load_env(&yaml, &[]).expect_err("unset").to_string();
    let want = ":7: target.api_key: environment variable MISSING_KEY is not set; export it, \
                or write ${MISSING_KEY:-default} to give a default";
    assert!(e.ends_with(want), "{e}");
    assert!(
        e.starts_with(&std::env::temp_dir().display().to_string()),
        "{e}"
    );
}

#[test]
fn an_empty_key_variable_is_named_as_set_but_empty() {
    let e = load_env(FULL, &[("OPENAI_API_KEY", "")])
        .expect_err("empty")
        .to_string();
    assert!(
        e.contains(":7: target.api_key: OPENAI_API_KEY is set but empty"),
        "{e}"
    );
    assert!(e.contains("${OPENAI_API_KEY:-}"), "{e}");
    // A default says an empty key is meant (a local server); so does a key written out.
    let optional = FULL.replace("${OPENAI_API_KEY}", "${OPENAI_API_KEY:-}");
    let s = load_env(&optional, &[("OPENAI_API_KEY", "")]).expect("loads");
    assert_eq!(s.target.api_key, None);
    // Another variable on the key's line that is empty does not matter when the key is not.
    let joined = FULL.replace("${OPENAI_API_KEY}", "\"${PREFIX}${OPENAI_API_KEY}\"");
    let s = load_env(&joined, &[("OPENAI_API_KEY", KEY), ("PREFIX", "")]).expect("loads");
    assert_eq!(
        s.target.api_key.map(|k| k.expose().to_string()),
        Some(KEY.into())
    );
    // An empty variable elsewhere is not a key problem.
    let elsewhere = FULL.replace(
        "description: customer-support answers, short prompt",
        "description: \"${NOTE}\"",
    );
    assert!(load_env(&elsewhere, &[("OPENAI_API_KEY", KEY), ("NOTE", "")]).is_ok());
}

#[test]
fn unknown_field_suggests_the_right_name_at_its_line() {
    let (line, field, msg) = err(&FULL.replace("requests_per_step: 200", "requests_per_stp: 2"));
    assert_eq!((line, field.as_str()), (Some(19), "load.requests_per_stp"));
    assert!(msg.contains("(did you mean `requests_per_step`?)"), "{msg}");
    let (line, field, msg) = err(&MIN.replace("name: t", "name: t\nconcurrency: 5"));
    assert_eq!((line, field.as_str()), (Some(2), "concurrency"));
    assert!(msg.starts_with("unknown field `concurrency`;"), "{msg}");
    let (line, _, msg) = err(&MIN.replace("sim: {}", "sim: {speed: 2}"));
    assert_eq!(line, Some(3));
    assert!(msg.contains("unknown field `speed`"), "{msg}");
    let (line, field, _) = err(&MIN.replace("[1, 2]", "[1, 2]\n  ramp_up: 5"));
    assert_eq!((line, field.as_str()), (Some(9), "load.ramp_up"));
    let (line, field, msg) = err(&format!("{MIN}load: {{}}\n"));
    assert_eq!(
        (line, field.as_str(), msg.as_str()),
        (
            Some(9),
            "load",
            "`load` is set twice (lines 7 and 9); keep one"
        )
    );
}

#[test]
fn malformed_yaml_reports_its_line() {
    let (line, _, msg) = err(&MIN.replace("prompt_file: prompts/support.txt", "prompt_file: a: b"));
    assert_eq!(line, Some(6));
    assert!(msg.contains("mapping values are not allowed"), "{msg}");
    let (line, field, msg) = err(&MIN.replace("[1, 2]", "[1, 2.5]"));
    assert_eq!((line, field.as_str()), (Some(8), "load.ladder[1]"));
    assert!(msg.contains("2.5"), "{msg}");
    assert!(err("").2.contains("the file is empty"));
    assert!(err("- a\n- b\n").2.contains("expected a mapping"));
    assert!(err(&MIN.replace("[m]", "m")).2.contains("expected a list"));
}

#[test]
fn ladder_and_budget_errors_name_the_fix() {
    let (line, field, msg) = err(&MIN.replace("[1, 2]", "[]"));
    assert_eq!((line, field.as_str()), (Some(8), "load.ladder"));
    assert_eq!(
        msg,
        "the ladder is empty; list at least one concurrency, e.g. ladder: [5, 10, 20]"
    );
    let (line, field, msg) = err(&MIN.replace("ladder: [1, 2]", "ladder:\n  - 1\n  - 0"));
    assert_eq!((line, field.as_str()), (Some(10), "load.ladder[1]"));
    assert!(msg.starts_with("step 0 is not allowed"), "{msg}");
    assert!(err(&MIN.replace("[1, 2]", "[-5]"))
        .2
        .starts_with("step -5 is not allowed"));
    assert!(err(&MIN.replace("[1, 2]", "[2, 1]"))
        .2
        .contains("must increase"));
    assert!(err(&MIN.replace("[1, 2]", "[1, 200]"))
        .2
        .contains("than the 200 streams"));
    let both = MIN.replace("[1, 2]", "[1, 2]\n  requests_per_step: 10\n  duration: 1m");
    let (line, field, msg) = err(&both);
    assert_eq!((line, field.as_str()), (Some(10), "load.duration"));
    assert!(
        msg.contains("both `requests_per_step` and `duration`"),
        "{msg}"
    );
    let (line, field, msg) = err(&MIN.replace("[1, 2]", "[1, 2]\n  requests_per_step: 0"));
    assert_eq!((line, field.as_str()), (Some(9), "load.requests_per_step"));
    assert!(msg.contains("1 or more"), "{msg}");
    assert!(err(&MIN.replace("[1, 2]", "[1, 2]\n  duration: 0"))
        .2
        .contains("measures nothing"));
}

#[test]
fn target_errors() {
    let (line, field, msg) = err(&MIN.replace("sim: {}", "base_url: htp//nowhere"));
    assert_eq!((line, field.as_str()), (Some(3), "target.base_url"));
    assert!(msg.contains("is not a URL"), "{msg}");
    assert!(err(&MIN.replace("sim: {}", "base_url: ftp://x.org"))
        .2
        .contains("http://"));
    // Issue 19 §5: a CR/LF inside the URL (the URL parser would drop it silently).
    let (_, field, msg) = err(&MIN.replace("sim: {}", "base_url: \"http://x/v1\\r\\nX-Evil: 1\""));
    assert_eq!(field, "target.base_url");
    assert!(msg.contains("line break"), "{msg}");
    let both = err(&MIN.replace("sim: {}", "sim: {}\n  base_url: http://x"));
    assert!(both.2.starts_with("both base_url and sim"), "{both:?}");
    assert!(err(&MIN.replace("  sim: {}\n", ""))
        .2
        .starts_with("no endpoint"));
    let (line, field, msg) = err(&MIN.replace("sim: {}", "sim: {}\n  api: openai"));
    assert_eq!((line, field.as_str()), (Some(4), "target.api"));
    assert!(
        msg.contains("unknown api `openai` (did you mean `openai-chat`?)"),
        "{msg}"
    );
    assert!(err(&MIN.replace("[m]", "[]"))
        .2
        .contains("at least one model"));
    assert!(err(&MIN.replace("[m]", "[m, m]"))
        .2
        .contains("listed twice"));
    assert!(err(&MIN.replace("name: t", "name: Support Chat"))
        .2
        .contains("`support-chat`"));
    let (_, field, _) = err(&MIN.replace("sim: {}", "sim: {}\n  timeouts: {idle: 0}"));
    assert_eq!(field, "target.timeouts.idle");
    let (_, field, msg) = err(&MIN.replace("name: t", "name: t\nretry: {retry_on: [http429]}"));
    assert_eq!(
        (field.as_str(), msg.as_str()),
        (
            "retry.retry_on",
            "unknown error class `http429` (did you mean `http_429`?)"
        )
    );
}

#[test]
fn missing_prompt_file_names_the_resolved_path() {
    let (line, field, msg) = err(&MIN.replace("support.txt", "nope.txt"));
    assert_eq!((line, field.as_str()), (Some(6), "request.prompt_file"));
    assert!(msg.contains("prompts/nope.txt (") && msg.contains("relative to the scenario"));
}

#[test]
fn sim_block_may_be_null_or_a_mapping() {
    for form in ["sim:", "sim: {}", "sim: ~"] {
        let s = ok(&MIN.replace("sim: {}", form));
        assert_eq!(s.target.endpoint, Endpoint::Sim(SimParams::default()));
    }
}

#[test]
fn headers_from_variables_or_with_credential_names_are_secret() {
    let headers = "sim: {}\n  headers:\n    X-Team: ${TEAM}\n    X-Trace: on\n    X-Api-Key: plain";
    let s = load_env(&MIN.replace("sim: {}", headers), &[("TEAM", "blue")]).expect("loads");
    let secret: Vec<(&str, bool)> = s
        .target
        .headers
        .iter()
        .map(|h| (h.name.as_str(), h.secret))
        .collect();
    assert_eq!(
        secret,
        [("X-Api-Key", true), ("X-Team", true), ("X-Trace", false)]
    );
    let n = normalized_yaml(&s);
    assert!(
        n.contains("X-Trace: on") && !n.contains("blue") && !n.contains("plain"),
        "{n}"
    );
}

/// Every YAML file a run writes parses back, with each secret a quoted `***redacted***` string:
/// an unquoted `*` would be read as an alias and break `ladder diff` later.
#[test]
fn written_yaml_with_secrets_parses_back() {
    let yaml = FULL.replace(
        "extra_body: {}",
        "extra_body: {user: \"${OPENAI_API_KEY}\", org: ${ORG_TOKEN}, n: ${NUM_SECRET}}",
    );
    let vars = [
        ("OPENAI_API_KEY", KEY),
        ("ORG_TOKEN", "org-token-abcdef123"),
        ("NUM_SECRET", "987654321"),
    ];
    let mut s = load_env(&yaml, &vars).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = SimParams::default();
    sim.set("require_api_key", "sk-sim-key-5555").unwrap();
    s.target.endpoint = Endpoint::Sim(sim);
    for text in [normalized_yaml(&s), workload_yaml(&s)] {
        for secret in [KEY, "org-token-abcdef123", "987654321", "sk-sim-key-5555"] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
        let v: serde_yaml::Value =
            serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let body = v
            .get("extra_body")
            .or_else(|| v["request"].get("extra_body"));
        let body = body.expect("extra_body");
        for k in ["user", "org", "n"] {
            assert_eq!(
                body[k].as_str(),
                Some(crate::util::redact::FILE_MARK),
                "{k}: {text}"
            );
        }
    }
    let n: serde_yaml::Value = serde_yaml::from_str(&normalized_yaml(&s)).unwrap();
    let sim_key = &n["target"]["sim"]["require_api_key"];
    assert_eq!(sim_key.as_str(), Some(crate::util::redact::FILE_MARK));
}

#[test]
fn api_key_never_leaks() {
    let s = ok(&FULL.replace(
        "extra_body: {}",
        "extra_body: {user: \"${OPENAI_API_KEY}\"}",
    ));
    for text in [
        normalized_yaml(&s),
        workload_yaml(&s),
        format!("{:?}", ok(FULL)),
    ] {
        assert!(!text.contains(KEY), "{text}");
    }
    assert!(normalized_yaml(&s).contains("api_key: '***redacted***'"));
    let bad_url = "base_url: http://x/${OPENAI_API_KEY}?q";
    let bad = FULL.replace(
        "base_url: ${LADDER_BASE_URL:-https://api.openai.com/v1}",
        bad_url,
    );
    let e = load_env(&bad, &[("OPENAI_API_KEY", KEY)]).expect_err("query in URL");
    assert!(
        !e.to_string().contains(KEY) && !format!("{e:?}").contains(KEY),
        "{e}"
    );
    let s = load_env(
        &FULL.replace("${OPENAI_API_KEY}", "${OPENAI_API_KEY:-}"),
        &[],
    );
    assert_eq!(s.expect("loads").target.api_key, None);
}

#[test]
fn fingerprint_ignores_server_side_and_formatting() {
    let base = ok(FULL).fingerprint;
    let same = [
        FULL.replace("# scenarios/support-chat.yaml", "# another comment"),
        FULL.replace("https://api.openai.com/v1", "http://localhost:9000"),
        FULL.replace("name: support-chat", "name: renamed"),
        FULL.replace("max_attempts: 1", "max_attempts: 4")
            .replace("tpm: 2000000", "tpm: 10"),
        FULL.replace("ramp_up: 1s", "ramp_up: 5s")
            .replace("idle: 30s", "idle: 5s"),
        FULL.replace("  api: openai-chat                 #", "  #"),
    ];
    for yaml in &same {
        assert_eq!(ok(yaml).fingerprint, base, "{yaml}");
    }
    let other_key = load_env(FULL, &[("OPENAI_API_KEY", "sk-other-key-99999")]).expect("loads");
    assert_eq!(other_key.fingerprint, base);
    let flow = ok(&FULL.replace("extra_body: {}", "extra_body: {a: 1, b: 2}")).fingerprint;
    let block = ok(&FULL.replace("extra_body: {}", "extra_body:\n    b: 2\n    a: 1"));
    assert_eq!(block.fingerprint, flow);
    let different = [
        FULL.replace("max_tokens: 200", "max_tokens: 201"),
        FULL.replace("[5, 10, 20, 50]", "[5, 10, 20]"),
        FULL.replace("prompts/system.txt", "prompts/support.txt"),
        FULL.replace("temperature: 0", "temperature: 0.7"),
        FULL.replace("warmup_requests: 5", "warmup_requests: 6"),
        FULL.replace("deepseek-chat]", "deepseek-chat, o3]"),
        FULL.replace("requests_per_step: 200", "requests_per_worker: 200"),
        FULL.replace("api: openai-chat", "api: openai-completions"),
    ];
    for yaml in &different {
        assert_ne!(ok(yaml).fingerprint, base, "{yaml}");
    }
    assert_ne!(flow, base);
    let mut changed = ok(FULL);
    changed.request.prompt.push('!');
    assert_ne!(fingerprint_of(&workload_yaml(&changed)), base);
}

#[test]
fn workload_yaml_is_canonical_and_readable() {
    let s = ok(&FULL.replace("extra_body: {}", "extra_body: {z: [1], a: {y: 2, b: true}}"));
    let w = workload_yaml(&s);
    let head = "api: openai-chat\nmodels:\n- gpt-4o\n- deepseek-chat\nmax_tokens: 200\n";
    assert!(w.starts_with(head), "{w}");
    assert!(
        w.contains("extra_body:\n  a:\n    b: true\n    y: 2\n  z:\n  - 1\n"),
        "{w}"
    );
    assert!(
        w.contains("requests_per_step: 200\nwarmup_requests: 5\n"),
        "{w}"
    );
    // Prompts by file name and content hash, never their text (issue 12).
    assert!(
        w.contains("prompt:\n  file: support.txt\n  sha256: "),
        "{w}"
    );
    assert!(w.contains("system:\n  file: system.txt\n  sha256: "), "{w}");
    assert!(
        !w.contains("reset my password") && !w.contains("helpful"),
        "{w}"
    );
    assert!(!w.contains("openai.com") && !w.contains("timeouts"), "{w}");
}

#[test]
fn normalized_yaml_has_every_default() {
    let n = normalized_yaml(&ok(MIN));
    let parts = [
        "name: t\n",
        "  sim:\n",
        "api_key: null",
        "max_tokens: 256",
        "requests_per_step: 100",
        "p90: 10%",
        "floor: 50ms",
        "error_rate: 1pp",
        "connect: 10s",
        "prompt:\n    file: support.txt\n    sha256: ",
        "short_below: 10%",
        "retry_on:\n  - http_429\n  - http_5xx",
    ];
    for part in parts {
        assert!(n.contains(part), "missing {part:?} in\n{n}");
    }
    assert!(!n.contains("How do I"), "no prompt text in run files:\n{n}");
}

#[test]
fn finds_lines_and_paths() {
    let text = "a:\n  b:\n    c: 1\n  # b: 2\n  d: {e: 1}\nf:\n- x\n";
    assert_eq!(locate_span(text, &["a", "b", "c"]), Some((3, 4, true)));
    assert_eq!(locate_span(text, &["a", "d", "e"]), Some((5, 5, true)));
    assert_eq!(locate_span(text, &["a", "z"]), Some((1, 5, false)));
    assert_eq!(locate_span(text, &["z"]), None);
    assert_eq!(
        (path_at_line(text, 3), path_at_line(text, 7)),
        ("a.b.c".into(), "f".into())
    );
    assert_eq!(path_at_line(text, 99), "");
    assert_eq!(
        (parse_fraction("10%"), parse_fraction("0.5")),
        (Ok(0.1), Ok(0.5))
    );
    assert!(parse_fraction("10").unwrap_err().contains("`10%`"));
    assert_eq!(
        strip_marks("x at line 3 column 5, y at line 1 column 1"),
        "x, y"
    );
}

proptest! {
    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,200}") {
        let _ = load_str(&text, Path::new("/nonexistent/s.yaml"), &|_| Some("v".into()));
    }

    #[test]
    fn yaml_like_text_never_panics(lines in proptest::collection::vec((
        "[ ]{0,4}",
        "(name|target|load|ladder|sim|base_url|-|\\$\\{X\\}|\\$\\{X:-a\\}|\"|'|#|\\|)",
        "[:\\-\\[\\]{}, 0-9a-z$'\"#|]{0,12}",
    ), 0..12)) {
        let text: String = lines.iter().map(|(i, k, v)| format!("{i}{k}{v}\n")).collect();
        let path = Path::new("/nonexistent/s.yaml");
        let _ = load_str(&text, path, &|_| Some("a: \"b\n".into()));
        let _ = load_str(&format!("{MIN}{text}"), path, &|_| None);
    }
}

#[test]
fn request_id_header_defaults_to_x_request_id_and_can_be_renamed_or_turned_off() {
    let s = load_env(MIN, &[]).expect("loads");
    assert_eq!(s.target.request_id_header.as_deref(), Some("x-request-id"));
    let renamed = MIN.replace(
        "  models:",
        "  request_id_header: X-Correlation-Id\n  models:",
    );
    let s = load_env(&renamed, &[]).expect("loads");
    assert_eq!(
        s.target.request_id_header.as_deref(),
        Some("x-correlation-id")
    );
    assert!(normalized_yaml(&s).contains("request_id_header: x-correlation-id"));
    let off = MIN.replace("  models:", "  request_id_header: none\n  models:");
    let s = load_env(&off, &[]).expect("loads");
    assert_eq!(s.target.request_id_header, None);
    assert!(normalized_yaml(&s).contains("request_id_header: none"));
    // Not part of the workload: the numbers do not depend on it.
    assert_eq!(s.fingerprint, load_env(MIN, &[]).unwrap().fingerprint);
}

#[test]
fn request_id_header_must_be_a_header_name_and_not_clash_with_target_headers() {
    let bad = MIN.replace("  models:", "  request_id_header: \"x id\"\n  models:");
    let (line, field, msg) = err(&bad);
    assert_eq!(
        (line, field.as_str()),
        (Some(4), "target.request_id_header")
    );
    assert!(msg.contains("none to send no request id"), "{msg}");
    let clash = MIN.replace("  models:", "  headers: {X-Request-Id: mine}\n  models:");
    let (_, field, msg) = err(&clash);
    assert_eq!(field, "target.headers.X-Request-Id");
    assert!(msg.contains("request_id_header: none"), "{msg}");
    let ok = clash.replace("  models:", "  request_id_header: none\n  models:");
    assert!(load_env(&ok, &[]).is_ok());
}

#[test]
fn numbers_may_be_quoted_strings_after_interpolation() {
    // Flow-style YAML forces quotes around `${VAR:-8}`.
    let yaml = MIN.replace(
        "load:\n  ladder: [1, 2]\n",
        "  max_tokens: \"${MAX:-8}\"\n  temperature: \"${TEMP:-0.5}\"\nload: {ladder: [\"${C:-1}\", 2], requests_per_step: \"${N:-10}\", warmup_requests: \"${W:-3}\"}\n",
    );
    let s = load_env(&yaml, &[]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.request.max_tokens, Some(8));
    assert_eq!(s.request.temperature, Some(0.5));
    assert_eq!(s.load.ladder, vec![1, 2]);
    assert_eq!(s.load.budget, Budget::RequestsPerStep(10));
    assert_eq!(s.load.warmup_requests, 3);
}

#[test]
fn out_of_range_numbers_say_the_range() {
    let big = MIN.replace("load:", "  max_tokens: 100000000000\nload:");
    let (_, field, msg) = err(&big);
    assert_eq!(field, "request.max_tokens");
    assert!(
        msg.contains("too large") && msg.contains("4294967295"),
        "{msg}"
    );
    let huge = MIN.replace("load:", "  max_tokens: 99999999999999999999999\nload:");
    assert!(err(&huge).2.contains("too large"), "{}", err(&huge).2);
    let neg = MIN.replace(
        "  ladder: [1, 2]\n",
        "  ladder: [1, 2]\n  warmup_requests: -1\n",
    );
    let (line, field, msg) = err(&neg);
    assert_eq!((line, field.as_str()), (Some(9), "load.warmup_requests"));
    assert!(msg.contains("whole number of 0 or more"), "{msg}");
    assert!(!msg.contains("u32"), "{msg}");
    let step = MIN.replace("ladder: [1, 2]", "ladder: [5, 4294967297]");
    let (_, field, msg) = err(&step);
    assert!(field.starts_with("load.ladder"), "{field}");
    assert!(msg.contains("from 1 to 4294967295"), "{msg}");
    let many = MIN.replace(
        "ladder: [1, 2]",
        "ladder: [1, 2]\n  requests_per_step: 10000001",
    );
    let (_, field, msg) = err(&many);
    assert_eq!(field, "load.requests_per_step");
    assert!(msg.contains("at most 10000000"), "{msg}");
    let most = MIN.replace(
        "ladder: [1, 2]",
        "ladder: [1, 2]\n  requests_per_step: 10000000",
    );
    assert!(load_env(&most, &[]).is_ok());
    let frac = MIN.replace("load:", "  max_tokens: 1.5\nload:");
    assert!(
        err(&frac).2.contains("not a whole number"),
        "{}",
        err(&frac).2
    );
}

#[test]
fn extra_body_cannot_turn_streaming_off() {
    let off = MIN.replace("load:", "  extra_body: {stream: false}\nload:");
    let (_, field, msg) = err(&off);
    assert_eq!(field, "request.extra_body.stream");
    assert!(msg.contains("request.stream: false"), "{msg}");
    let on = MIN.replace("load:", "  extra_body: {stream: true}\nload:");
    assert!(load_env(&on, &[]).is_ok());
}

#[test]
fn a_scenario_without_streaming_cannot_bound_what_only_a_stream_measures() {
    let off = |extra: &str| MIN.replace("load:", &format!("  stream: false\n{extra}load:"));
    let s = load_env(&off(""), &[]).unwrap();
    assert!(!s.request.stream);
    assert!(load_env(MIN, &[]).unwrap().request.stream);
    // E2E bounds are fine.
    assert!(load_env(&off("slo: {e2e: 2s}\ngates: {e2e: {p90: 10%}}\n"), &[]).is_ok());
    for (extra, field, line) in [
        ("slo:\n  e2e: 2s\n  ttft: 500ms\n", "slo.ttft", 10),
        ("slo: {tpot: 50ms}\n", "slo.tpot", 8),
        ("gates:\n  ttfc: {p90: 10%}\n", "gates.ttfc", 9),
        ("gates: {itl: {p99: 20%}}\n", "gates.itl", 8),
    ] {
        let (at, f, msg) = err(&off(extra));
        assert_eq!((at, f.as_str()), (Some(line), field), "{msg}");
        assert!(
            msg.contains("request.stream is false") && msg.contains("E2E"),
            "{msg}"
        );
    }
    let search = MIN.replace(
        "load:\n  ladder: [1, 2]\n",
        "  stream: false\nload:\n  search: {slo: {ttft_p90: 1s}, max: 8}\n  duration: 5s\n",
    );
    let (_, f, msg) = err(&search);
    assert_eq!(f, "load.search.slo.ttft_p90", "{msg}");
    assert!(msg.contains("e2e_p90"), "{msg}");
}

#[test]
fn keys_are_masked_to_at_most_four_characters() {
    assert_eq!(Secret::new("sk-abcdefghijklmnop1234").masked(), "…1234");
    assert_eq!(Secret::new("sk-abcd1234").masked(), "…");
    assert_eq!(Secret::new("short").masked(), "…");
}

#[test]
fn azure_hosts_send_the_key_as_api_key_and_deployment_urls_take_an_api_version() {
    let url = |base: &str, extra: &str| {
        MIN.replace("  sim: {}\n", &format!("  base_url: {base}\n{extra}"))
    };
    let azure = url("https://res.openai.azure.com/openai/v1", "");
    assert_eq!(ok(&azure).target.auth, Auth::ApiKey);
    assert_eq!(
        ok(&url("https://api.openai.com/v1", "")).target.auth,
        Auth::Bearer
    );
    let forced = url("https://gw.example.com/v1", "  auth: api-key\n");
    assert_eq!(ok(&forced).target.auth, Auth::ApiKey);
    let s = ok(&url(
        "https://res.openai.azure.com/openai/deployments/d1",
        "  api_version: \"2024-10-21\"\n",
    ));
    assert_eq!(s.target.api_version.as_deref(), Some("2024-10-21"));
    assert!(normalized_yaml(&s).contains("api_version: 2024-10-21"));
    assert!(normalized_yaml(&s).contains("auth: api-key"));
    let two = url("https://res.openai.azure.com/openai/deployments/d1", "")
        .replace("models: [m]", "models: [a, b]");
    let (_, field, msg) = err(&two);
    assert_eq!(field, "target.models");
    assert!(msg.contains("/openai/v1"), "{msg}");
    let (_, field, _) = err(&url("https://h/v1", "  auth: basic\n"));
    assert_eq!(field, "target.auth");
    let (_, field, _) = err(&url("https://h/v1", "  api_version: \"a&b\"\n"));
    assert_eq!(field, "target.api_version");
}

#[test]
fn compare_baseline_must_be_one_of_several_models() {
    let two = MIN.replace("models: [m]", "models: [a, b]");
    let s = ok(&format!("{two}compare: {{baseline: a}}\n"));
    assert_eq!(s.compare_baseline.as_deref(), Some("a"));
    assert!(normalized_yaml(&s).contains("baseline: a"));
    let (_, field, msg) = err(&format!("{two}compare: {{baseline: c}}\n"));
    assert_eq!(field, "compare.baseline");
    assert!(msg.contains("a, b"), "{msg}");
    let (_, field, _) = err(&format!("{MIN}compare: {{baseline: m}}\n"));
    assert_eq!(field, "compare.baseline");
}

#[test]
fn baselines_keep_is_a_run_count_from_1_to_50_outside_the_workload() {
    let s = ok(&format!("{MIN}baselines: {{keep: 5}}\n"));
    assert_eq!(s.baselines_keep, Some(5));
    assert_eq!(s.fingerprint, ok(MIN).fingerprint);
    assert_eq!(ok(MIN).baselines_keep, None);
    let (line, field, msg) = err(&format!("{MIN}baselines: {{keep: 51}}\n"));
    assert_eq!(field, "baselines.keep");
    assert!(line.is_some() && msg.contains("from 1 to 50"), "{msg}");
    let (_, _, msg) = err(&format!("{MIN}baselines: {{keep: 0}}\n"));
    assert!(msg.contains("1 or more"), "{msg}");
    let (_, _, msg) = err(&format!("{MIN}baselines: {{kept: 3}}\n"));
    assert!(msg.contains("keep"), "{msg}");
}

/// Issue 19 §5: bounded input and YAML-level errors in words.
#[test]
fn hostile_scenario_text_is_refused_quickly_and_clearly() {
    // 100,000 levels of flow nesting: refused before the (quadratic) YAML scanner runs.
    let deep = format!(
        "{MIN}  extra: {}1{}\n",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let t = std::time::Instant::now();
    let (line, _, msg) = err(&deep);
    assert!(
        t.elapsed() < std::time::Duration::from_secs(10),
        "{:?}",
        t.elapsed()
    );
    assert_eq!(line, Some(9));
    assert!(msg.contains("nested more than 64 levels"), "{msg}");
    // A UTF-8 byte order mark is accepted.
    ok(&format!("\u{feff}{MIN}"));
    // Two documents: the line of the second and the fix.
    let (line, _, msg) = err(&format!("{MIN}---\nname: other\n"));
    assert_eq!(line, Some(9), "{msg}");
    assert!(msg.contains("more than one YAML document"), "{msg}");
    // A billion laughs, inside extra_body (any value is allowed there).
    let mut laughs = String::from("  extra_body:\n    a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n");
    let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
    for w in names.windows(2) {
        let refs = vec![format!("*{}", w[0]); 9].join(",");
        laughs.push_str(&format!("    {}: &{} [{refs}]\n", w[1], w[1]));
    }
    let bomb = MIN.replace("load:\n", &format!("{laughs}load:\n"));
    let (line, field, msg) = err(&bomb);
    assert!(msg.contains("billion laughs"), "{msg}");
    // Issue 39 §5: the message names the line and field of the first alias.
    let fuse = bomb.lines().position(|l| l.contains("b: &b")).unwrap() + 1;
    assert_eq!(line, Some(fuse), "{msg}");
    assert_eq!(field, "request.extra_body.b", "{msg}");
    assert!(msg.contains(&format!("`*a` from line {fuse} on")), "{msg}");
    // A name too long for a folder.
    let (_, field, msg) = err(&MIN.replace("name: t", &format!("name: {}", "a".repeat(300))));
    assert_eq!(field, "name");
    assert!(msg.contains("at most 100"), "{msg}");
}

#[cfg(unix)]
#[test]
fn prompt_files_must_be_regular_files_under_the_cap() {
    let (_, field, msg) = err(&MIN.replace("prompts/support.txt", "/dev/zero"));
    assert_eq!(field, "request.prompt_file");
    assert!(msg.contains("not a regular file"), "{msg}");
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success()));
    let (_, _, msg) = err(&MIN.replace("prompts/support.txt", fifo.to_str().unwrap()));
    assert!(
        msg.contains("not a regular file"),
        "a FIFO never blocks the load: {msg}"
    );
    let (_, _, msg) = err(&MIN.replace("prompt_file: prompts/support.txt", "prompts: /dev/zero"));
    assert!(msg.contains("not a regular file"), "{msg}");
}

#[test]
fn the_first_alias_is_found_outside_quotes_and_comments() {
    let text = "a: &x 1\nb: \"*x\" # *x\nc: 2*x\nd: [1, *x]\ne: *x\n";
    assert_eq!(first_alias(text), Some((4, "*x")));
    assert_eq!(first_alias("- *first\n"), Some((1, "*first")));
    assert_eq!(first_alias("a: '*x'\nb: \"a * b\"\n"), None);
}
