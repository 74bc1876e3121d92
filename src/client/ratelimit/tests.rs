//! Unit tests of the rate-limit reading: headers, bodies, waits and headroom, on real providers'
//! and gateways' strings.

use super::*;

/// A response received at 2015-10-21 07:27:50 UTC by our clock.
fn received() -> SystemTime {
    httpdate::parse_http_date("Wed, 21 Oct 2015 07:27:50 GMT").unwrap()
}

fn parse_rate_limit(headers: &[(&str, &str)], body_error: Option<&InBandError>) -> RateLimitInfo {
    super::parse_rate_limit(headers, body_error, received())
}

fn err(ty: Option<&str>, msg: &str) -> InBandError {
    InBandError {
        error_type: ty.map(Into::into),
        message: msg.into(),
        status: Some(429),
        class: None,
    }
}

#[test]
fn go_durations() {
    let ms = |n: u64| Some(Duration::from_millis(n));
    assert_eq!(parse_go_duration("6m0s"), ms(360_000));
    assert_eq!(parse_go_duration("20ms"), ms(20));
    assert_eq!(parse_go_duration("1s"), ms(1_000));
    assert_eq!(parse_go_duration("59.5s"), ms(59_500));
    assert_eq!(parse_go_duration("1h2m3.25s"), ms(3_723_250));
    assert_eq!(parse_go_duration("0"), ms(0));
    assert_eq!(parse_go_duration("0s"), ms(0));
    assert_eq!(parse_go_duration(" 7.66s "), ms(7_660));
    assert_eq!(parse_go_duration("+1m"), ms(60_000));
    assert_eq!(parse_go_duration(".5s"), ms(500));
    assert_eq!(parse_go_duration("1.s"), ms(1_000));
    assert_eq!(
        parse_go_duration("1500us"),
        Some(Duration::from_micros(1_500))
    );
    assert_eq!(parse_go_duration("3µs"), Some(Duration::from_micros(3)));
    assert_eq!(parse_go_duration("3μs"), Some(Duration::from_micros(3)));
    assert_eq!(parse_go_duration("42ns"), Some(Duration::from_nanos(42)));
    assert_eq!(
        parse_go_duration("1.0000000019s"),
        Some(Duration::from_nanos(1_000_000_001))
    );
    for bad in [
        "", "s", "1", "10", "-1s", "1x", "1.5", ".s", "1s2", "ms", "1 s", "1h-1m", "1e3s",
    ] {
        assert_eq!(parse_go_duration(bad), None, "{bad:?}");
    }
    assert_eq!(
        parse_go_duration("99999999999999999999999h"),
        None,
        "overflow"
    );
    assert_eq!(
        parse_go_duration("9999999999h"),
        None,
        "beyond u64 nanoseconds"
    );
}

#[test]
fn retry_after_ms_is_preferred_over_seconds() {
    let info = parse_rate_limit(&[("Retry-After", "2"), ("retry-after-ms", "1500")], None);
    assert_eq!(info.retry_after, Some(Duration::from_millis(1_500)));
    let info = parse_rate_limit(&[("RETRY-AFTER", " 3 ")], None);
    assert_eq!(info.retry_after, Some(Duration::from_secs(3)));
    let info = parse_rate_limit(&[("retry-after", "0.5")], None);
    assert_eq!(info.retry_after, Some(Duration::from_millis(500)));
    // Without a `Date` header (or with one that cannot be read), the date is measured
    // against the time the response arrived by our clock: 10 s.
    let info = parse_rate_limit(&[("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT")], None);
    assert_eq!(info.retry_after, Some(Duration::from_secs(10)));
    let info = parse_rate_limit(
        &[
            ("date", "yesterday"),
            ("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT"),
        ],
        None,
    );
    assert_eq!(info.retry_after, Some(Duration::from_secs(10)));
    let info = parse_rate_limit(&[("retry-after", "Wed, 21 Oct 2015 07:27:00 GMT")], None);
    assert_eq!(info.retry_after, Some(Duration::ZERO), "past");
    let dated = |retry: &'static str| {
        parse_rate_limit(
            &[
                ("Date", "Wed, 21 Oct 2015 07:27:54 GMT"),
                ("retry-after", retry),
            ],
            None,
        )
        .retry_after
    };
    assert_eq!(
        dated("Wed, 21 Oct 2015 07:28:00 GMT"),
        Some(Duration::from_secs(6))
    );
    assert_eq!(
        dated("Wed, 21 Oct 2015 07:27:00 GMT"),
        Some(Duration::ZERO),
        "past"
    );
    assert_eq!(
        dated("Wednesday, 21-Oct-15 07:28:00 GMT"),
        Some(Duration::from_secs(6))
    );
    assert_eq!(dated("soon"), None);
    let info = parse_rate_limit(&[("retry-after", "-4"), ("retry-after-ms", "nan")], None);
    assert_eq!(info, RateLimitInfo::default());
}

#[test]
fn openai_headers_decide_the_kind_and_the_reset_is_a_fallback_wait() {
    let tokens = [
        ("x-ratelimit-limit-requests", "500"),
        ("x-ratelimit-limit-tokens", "30000"),
        ("x-ratelimit-remaining-requests", "499"),
        ("x-ratelimit-remaining-tokens", "0"),
        ("x-ratelimit-reset-requests", "120ms"),
        ("x-ratelimit-reset-tokens", "6m0s"),
    ];
    let info = parse_rate_limit(&tokens, None);
    assert_eq!(info.kind, Some(LimitKind::Tokens));
    assert_eq!(info.retry_after, Some(Duration::from_secs(360)));

    let requests = [
        ("X-RateLimit-Remaining-Requests", "0"),
        ("X-RateLimit-Remaining-Tokens", "29000"),
        ("X-RateLimit-Reset-Requests", "20ms"),
        ("retry-after", "1"),
    ];
    let info = parse_rate_limit(&requests, None);
    assert_eq!(info.kind, Some(LimitKind::Requests));
    assert_eq!(
        info.retry_after,
        Some(Duration::from_secs(1)),
        "retry-after wins"
    );
}

#[test]
fn headroom_is_the_smallest_share_left_of_any_limit() {
    let headers = [
        ("x-ratelimit-limit-requests", "500"),
        ("x-ratelimit-remaining-requests", "450"),
        ("x-ratelimit-limit-tokens", "30000"),
        ("x-ratelimit-remaining-tokens", "3000"),
    ];
    assert_eq!(headroom(&headers), Some(0.1));
    assert_eq!(headroom(&headers[..2]), Some(0.9));
    assert_eq!(headroom(&[("x-ratelimit-remaining-tokens", "5")]), None);
    // A 429 with room left on every limit names no limit: its headroom says so.
    let info = parse_rate_limit(&headers, Some(&err(None, "Rate limit exceeded.")));
    assert_eq!((info.kind, info.headroom), (None, Some(0.1)));
}

#[test]
fn anthropic_headers() {
    let headers = [
        ("anthropic-ratelimit-requests-limit", "50"),
        ("anthropic-ratelimit-requests-remaining", "12"),
        ("anthropic-ratelimit-requests-reset", "2025-01-01T00:00:30Z"),
        ("anthropic-ratelimit-input-tokens-remaining", "0"),
        (
            "anthropic-ratelimit-input-tokens-reset",
            "2025-01-01T00:00:10Z",
        ),
        ("anthropic-ratelimit-output-tokens-remaining", "8000"),
        ("retry-after", "10"),
    ];
    let info = parse_rate_limit(&headers, None);
    assert_eq!(info.kind, Some(LimitKind::InputTokens));
    assert_eq!(info.retry_after, Some(Duration::from_secs(10)));
    assert_eq!(
        info.headroom,
        Some(12.0 / 50.0),
        "the input limit sent no limit header"
    );
    // Anthropic's `tokens` (the tightest) is at zero with its input limit: input wins.
    let both = [
        ("anthropic-ratelimit-tokens-remaining", "0"),
        ("anthropic-ratelimit-tokens-limit", "30000"),
        ("anthropic-ratelimit-input-tokens-remaining", "0"),
        ("anthropic-ratelimit-input-tokens-limit", "30000"),
        ("anthropic-ratelimit-output-tokens-remaining", "7000"),
        ("anthropic-ratelimit-output-tokens-limit", "8000"),
    ];
    let info = parse_rate_limit(&both, None);
    assert_eq!(
        (info.kind, info.limit),
        (Some(LimitKind::InputTokens), Some(30_000))
    );
    assert_eq!(info.headroom, Some(0.0));
    let info = parse_rate_limit(&[("anthropic-ratelimit-requests-remaining", "0")], None);
    assert_eq!(info.kind, Some(LimitKind::Requests));
    assert_eq!(info.retry_after, None);
}

#[test]
fn body_decides_when_headers_do_not() {
    let tpm = err(
        Some("rate_limit_exceeded"),
        "Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): \
         Limit 30000, Used 30000, Requested 500. Please try again in 1s.",
    );
    let rpm = err(
        Some("rate_limit_exceeded"),
        "Rate limit reached for gpt-3.5-turbo in organization org-x on requests per min \
         (RPM): Limit 3, Used 3, Requested 1. You can increase your rate limit by adding a \
         payment method to your account at https://platform.openai.com/account/billing.",
    );
    assert_eq!(
        parse_rate_limit(&[], Some(&tpm)).kind,
        Some(LimitKind::Tokens)
    );
    assert_eq!(
        parse_rate_limit(&[], Some(&rpm)).kind,
        Some(LimitKind::Requests)
    );
    // Both headers at zero: the message decides.
    let both = [
        ("x-ratelimit-remaining-requests", "0"),
        ("x-ratelimit-remaining-tokens", "0"),
    ];
    assert_eq!(
        parse_rate_limit(&both, Some(&rpm)).kind,
        Some(LimitKind::Requests)
    );
    assert_eq!(parse_rate_limit(&both, None).kind, None);
    // Headers beat the message.
    let req0 = [("x-ratelimit-remaining-requests", "0")];
    assert_eq!(
        parse_rate_limit(&req0, Some(&tpm)).kind,
        Some(LimitKind::Requests)
    );

    let anthropic = err(
        Some("rate_limit_error"),
        "This request would exceed the rate limit for your organization of 50,000 input \
         tokens per minute.",
    );
    let info = parse_rate_limit(&[], Some(&anthropic));
    assert_eq!(
        (info.kind, info.limit),
        (Some(LimitKind::InputTokens), Some(50_000))
    );
    let output = err(
        Some("rate_limit_error"),
        "This request would exceed the rate limit for your organization of 8,000 output \
         tokens per minute.",
    );
    assert_eq!(
        parse_rate_limit(&[], Some(&output)).kind,
        Some(LimitKind::OutputTokens)
    );
    assert_eq!(parse_rate_limit(&[], Some(&tpm)).limit, Some(30_000));
    let concurrency = err(
        None,
        "Number of concurrent connections has exceeded your rate limit",
    );
    assert_eq!(
        parse_rate_limit(&[], Some(&concurrency)).kind,
        Some(LimitKind::Concurrency)
    );
    let in_flight = err(
        Some("rate_limit_error"),
        "Too many concurrent requests: this key allows 8 requests in flight.",
    );
    let info = parse_rate_limit(&[], Some(&in_flight));
    assert_eq!(
        (info.kind, info.limit),
        (Some(LimitKind::Concurrency), Some(8))
    );
    assert_eq!(
        parse_rate_limit(&[], Some(&err(Some("tokens"), "slow down"))).kind,
        Some(LimitKind::Tokens)
    );
    assert_eq!(
        parse_rate_limit(&[], Some(&err(None, "Too many RPM"))).kind,
        Some(LimitKind::Requests)
    );
    // Both or neither: unknown.
    assert_eq!(
        parse_rate_limit(&[], Some(&err(None, "Too Many Requests"))).kind,
        None
    );
    assert_eq!(
        parse_rate_limit(&[], Some(&err(None, "RPM and TPM exceeded"))).kind,
        None
    );
    // `rpm` must be a word, not part of one.
    assert_eq!(
        parse_rate_limit(&[], Some(&err(None, "see rpmfusion"))).kind,
        None
    );
}

/// What LiteLLM's proxy 1.108.7 sends (make compat, compat/litellm-limits.sh): a key's
/// `tpm_limit`, `rpm_limit` and `max_parallel_requests` (its parallel-request limiter) and a
/// deployment's `rpm`/`tpm`/`otpm` (`enforce_model_rate_limits`).
#[test]
fn litellm_proxy_limits() {
    let throttled = |msg: &str| err(Some("throttling_error"), msg);
    // A key's limits: the 429 has `retry-after: 60` and `rate_limit_type: tokens`, no
    // x-ratelimit-* header; the body says "Limit type".
    let key_429 = [
        ("retry-after", "60"),
        ("rate_limit_type", "tokens"),
        ("reset_at", "2026-12-07 19:28:39 UTC"),
        ("x-litellm-key-tpm-limit", "2000"),
    ];
    let tpm = throttled(
        "Rate limit exceeded for api_key: \
         82772a1f6f038557cb43f5c785af322dfea4c8a058696ab65ebb94adcc2fd141. Limit type: tokens. \
         Current limit: 2000, Remaining: 40. Limit resets at: 2026-12-07 19:28:39 UTC",
    );
    let info = parse_rate_limit(&key_429, Some(&tpm));
    assert_eq!(
        (info.kind, info.limit, info.retry_after),
        (
            Some(LimitKind::Tokens),
            Some(2000),
            Some(Duration::from_secs(60))
        )
    );
    let rpm = throttled(
        "Rate limit exceeded for api_key: \
         29a3870cc13cd98308dc9555840cef48bcceb0db1ba5a13d348371aaad3c7edb. Limit type: \
         requests. Current limit: 20, Remaining: 0. Limit resets at: 2026-12-07 19:28:49 UTC",
    );
    let info = parse_rate_limit(&[("retry-after", "60")], Some(&rpm));
    assert_eq!(
        (info.kind, info.limit),
        (Some(LimitKind::Requests), Some(20))
    );
    let parallel = throttled(
        "Rate limit exceeded for api_key: \
         37573294dc12bb4a69e8375a7534ebb60f68758f6dda6767814490425f8fbf03. Limit type: \
         max_parallel_requests. Current limit: 2, Remaining: 0. Limit resets at: \
         2026-12-07 19:28:49 UTC",
    );
    let info = parse_rate_limit(&[("retry-after", "60")], Some(&parallel));
    assert_eq!(
        (info.kind, info.limit),
        (Some(LimitKind::Concurrency), Some(2))
    );
    // Successes carry the key's limits per scope.
    let key_ok = [
        ("x-litellm-key-tpm-limit", "2000"),
        ("x-ratelimit-api_key-remaining-tokens", "1944"),
        ("x-ratelimit-api_key-limit-tokens", "2000"),
    ];
    assert_eq!(headroom(&key_ok), Some(0.972));
    assert_eq!(
        headroom(&[
            ("x-ratelimit-api_key-remaining-requests", "19"),
            ("x-ratelimit-api_key-limit-requests", "20"),
            ("x-ratelimit-team-remaining-requests", "3"),
            ("x-ratelimit-team-limit-requests", "30"),
        ]),
        Some(0.1),
        "the tightest scope"
    );
    assert_eq!(
        headroom(&[("x-ratelimit-api_key-remaining-tokens", "5")]),
        None,
        "no limit beside it"
    );
    // A deployment's limits: the body says "RPM limit=10"; the 429's retry-after comes
    // prefixed as the upstream's (`llm_provider-retry-after`), not read.
    let model_rpm = throttled(
        "litellm.RateLimitError: Model rate limit exceeded. RPM limit=10, current usage=11\n\n\
         LiteLLM: model group 'sim-rpm' failed with the error above. No fallback was attempted.",
    );
    let info = parse_rate_limit(&[("llm_provider-retry-after", "60")], Some(&model_rpm));
    assert_eq!(
        (info.kind, info.limit, info.retry_after),
        (Some(LimitKind::Requests), Some(10), None)
    );
    let model_tpm = throttled(
        "litellm.RateLimitError: Model rate limit exceeded. TPM limit=500, current usage=504",
    );
    let info = parse_rate_limit(&[], Some(&model_tpm));
    assert_eq!(
        (info.kind, info.limit),
        (Some(LimitKind::Tokens), Some(500))
    );
    let model_otpm = throttled(
        "litellm.RateLimitError: Model rate limit exceeded. OTPM limit=300, current usage=350",
    );
    let info = parse_rate_limit(&[], Some(&model_otpm));
    assert_eq!(
        (info.kind, info.limit),
        (Some(LimitKind::OutputTokens), Some(300))
    );
    // A deployment's ITPM/OTPM headers on successes, OpenAI's naming.
    let io_ok = [
        ("x-ratelimit-limit-input-tokens", "200"),
        ("x-ratelimit-remaining-input-tokens", "187"),
        ("x-ratelimit-reset-input-tokens", "27"),
        ("x-ratelimit-limit-output-tokens", "300"),
        ("x-ratelimit-remaining-output-tokens", "0"),
    ];
    assert_eq!(headroom(&io_ok), Some(0.0));
    let info = parse_rate_limit(&io_ok, None);
    assert_eq!(
        (info.kind, info.limit),
        (Some(LimitKind::OutputTokens), Some(300))
    );
}

#[test]
fn quota_errors_are_not_rate_limits() {
    let quota = err(
        Some("insufficient_quota"),
        "You exceeded your current quota, please check your plan and billing details.",
    );
    assert!(is_quota_error(&quota));
    assert!(is_quota_error(&err(
        None,
        "You exceeded your current quota"
    )));
    assert!(is_quota_error(&err(Some("billing_hard_limit_reached"), "")));
    assert!(is_quota_error(&err(
        Some("invalid_request_error"),
        "Your credit balance is too low to access the Anthropic API."
    )));
    assert!(is_quota_error(&err(
        None,
        "You have reached your specified API usage limits."
    )));
    assert!(is_quota_error(&err(None, "Insufficient Balance")));
    assert!(is_quota_error(&err(Some("INSUFFICIENT_QUOTA"), "x")));
    // A plain RPM 429 mentions billing in passing: still a rate limit.
    let rpm = err(
        Some("rate_limit_exceeded"),
        "Rate limit reached on requests per min (RPM). You can increase your rate limit by \
         adding a payment method at https://platform.openai.com/account/billing.",
    );
    assert!(!is_quota_error(&rpm));
    assert!(!is_quota_error(&err(
        Some("RESOURCE_EXHAUSTED"),
        "Quota exceeded for quota metric 'requests per minute'"
    )));
}
