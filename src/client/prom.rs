//! A server's Prometheus `/metrics` text, read into ladder's three series (requests waiting,
//! running, KV-cache use 0-1) plus the raw series of the serving engine, and counters turned
//! into rates. Pure: text and times in, rows out.
//!
//! The exposition parser is written here: the crates for it do not fit. `prometheus-parse`
//! (0.2.5) matches metric names with `\w+`, so the names of vLLM (`vllm:num_requests_waiting`),
//! SGLang and llama.cpp (`llamacpp:requests_deferred`), which contain colons as the format
//! allows, are dropped; `openmetrics-parser` is LGPL-3.0. The format's sample line is small:
//! `name{label="value",...} value [timestamp]`, `# TYPE name kind`, comments otherwise.

use std::collections::BTreeMap;

/// One sample of a scrape.
#[derive(Debug, Clone, PartialEq)]
pub struct PromSample {
    pub name: String,
    /// `{a="1",b="x"}` as written (labels in the server's order), or empty.
    pub labels: String,
    pub value: f64,
    pub counter: bool,
}

/// Parses exposition text; malformed lines are skipped (a scrape is evidence, not input to
/// validate).
pub fn parse(text: &str) -> Vec<PromSample> {
    let mut counters: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix('#') {
            let mut w = rest.split_whitespace();
            if let (Some("TYPE"), Some(name), Some(kind)) = (w.next(), w.next(), w.next()) {
                if kind == "counter" {
                    counters.push(name.to_string());
                }
            }
            continue;
        }
        if line.is_empty() {
            continue;
        }
        let (name, labels, rest) = match line.find(['{', ' ', '\t']) {
            Some(i) if line[i..].starts_with('{') => match closing_brace(&line[i..]) {
                Some(j) => (&line[..i], &line[i..i + j + 1], &line[i + j + 1..]),
                None => continue,
            },
            Some(i) => (&line[..i], "", &line[i..]),
            None => continue,
        };
        let Some(value) = rest.split_whitespace().next().and_then(parse_value) else {
            continue;
        };
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
        {
            continue;
        }
        let counter = counters
            .iter()
            .any(|c| name == c || name.strip_suffix("_total") == Some(c.as_str()));
        out.push(PromSample {
            name: name.to_string(),
            labels: labels.to_string(),
            value,
            counter,
        });
    }
    out
}

fn closing_brace(s: &str) -> Option<usize> {
    let (mut quoted, mut escaped) = (false, false);
    for (i, c) in s.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            '}' if !quoted => return Some(i),
            _ => {}
        }
    }
    None
}

fn parse_value(v: &str) -> Option<f64> {
    match v {
        "+Inf" => Some(f64::INFINITY),
        "-Inf" => Some(f64::NEG_INFINITY),
        _ => v.parse().ok(),
    }
}

/// Which server's name a series of ladder's comes from.
const WAITING: [&str; 4] = [
    "vllm:num_requests_waiting",
    "sglang:num_queue_reqs",
    "tgi_queue_size",
    "llamacpp:requests_deferred",
];
const RUNNING: [&str; 4] = [
    "vllm:num_requests_running",
    "sglang:num_running_reqs",
    "tgi_batch_current_size",
    "llamacpp:requests_processing",
];
const KV: [&str; 4] = [
    "vllm:kv_cache_usage_perc",
    "vllm:gpu_cache_usage_perc",
    "sglang:token_usage",
    "llamacpp:kv_cache_usage_ratio",
];
/// Raw series are kept for the serving engines' own families only (not process or Python
/// runtime metrics).
const RAW_PREFIXES: [&str; 4] = ["vllm:", "sglang:", "tgi_", "llamacpp:"];

/// ladder's three series of one scrape (summed over labels: one value per server), and the raw
/// engine series by `name{labels}`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Mapped {
    pub waiting: Option<f64>,
    pub running: Option<f64>,
    pub kv_cache_usage: Option<f64>,
    /// `name{labels}` -> (value, is a counter).
    pub raw: BTreeMap<String, (f64, bool)>,
}

pub fn map(samples: &[PromSample]) -> Mapped {
    let mut m = Mapped::default();
    let sum = |names: &[&str]| -> Option<f64> {
        let name = names
            .iter()
            .find(|n| samples.iter().any(|s| s.name == **n))?;
        Some(
            samples
                .iter()
                .filter(|s| s.name == *name)
                .map(|s| s.value)
                .sum(),
        )
    };
    m.waiting = sum(&WAITING);
    m.running = sum(&RUNNING);
    m.kv_cache_usage = sum(&KV).or_else(|| {
        // TGI: tokens in the current batch over the most it can hold.
        let used = sum(&["tgi_batch_current_max_tokens"])?;
        let max = sum(&["tgi_batch_max_total_tokens"]).filter(|m| *m > 0.0)?;
        Some(used / max)
    });
    for s in samples {
        if RAW_PREFIXES.iter().any(|p| s.name.starts_with(p)) {
            m.raw
                .insert(format!("{}{}", s.name, s.labels), (s.value, s.counter));
        }
    }
    m
}

/// One row of `server_metrics.csv` without its step (the caller knows it).
#[derive(Debug, Clone, PartialEq)]
pub struct SeriesPoint {
    pub series: String,
    /// `None`: the scrape failed (a gap).
    pub value: Option<f64>,
}

/// The points of one scrape at `t_ms`: the three series, gauges as they are, counters as a
/// per-second rate since `prev` (none when a counter went down: the server restarted, and two
/// servers' counters are never subtracted).
pub fn points(now: &Mapped, t_ms: f64, prev: Option<(&Mapped, f64)>) -> Vec<SeriesPoint> {
    let mut out = Vec::new();
    for (name, v) in [
        ("waiting", now.waiting),
        ("running", now.running),
        ("kv_cache_usage", now.kv_cache_usage),
    ] {
        if v.is_some() {
            out.push(SeriesPoint {
                series: name.into(),
                value: v,
            });
        }
    }
    for (key, (value, counter)) in &now.raw {
        let value = if *counter {
            let Some((before, t0)) = prev else { continue };
            let Some((old, _)) = before.raw.get(key) else {
                continue;
            };
            let dt = (t_ms - t0) / 1000.0;
            if *value < *old || dt <= 0.0 {
                continue;
            }
            (value - old) / dt
        } else {
            *value
        };
        out.push(SeriesPoint {
            series: format!("raw:{key}"),
            value: Some(value),
        });
    }
    out
}

/// The points of a failed scrape: the three series with no value.
pub fn gap() -> Vec<SeriesPoint> {
    ["waiting", "running", "kv_cache_usage"]
        .into_iter()
        .map(|s| SeriesPoint {
            series: s.into(),
            value: None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As llama.cpp's `server-task.cpp` writes it.
    const LLAMA: &str = "# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed.
# TYPE llamacpp:prompt_tokens_total counter
llamacpp:prompt_tokens_total 120
# HELP llamacpp:requests_processing Number of requests processing
# TYPE llamacpp:requests_processing gauge
llamacpp:requests_processing 2
# HELP llamacpp:requests_deferred Number of requests deferred
# TYPE llamacpp:requests_deferred gauge
llamacpp:requests_deferred 6
";

    #[test]
    fn names_with_colons_labels_with_braces_and_counters() {
        let text = r#"# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="m{1}, \"q\""} 3
vllm:num_requests_waiting{engine="1",model_name="m"} 2.5
vllm:kv_cache_usage_perc{model_name="m"} 0.25 1712345678000
# TYPE vllm:request_success counter
vllm:request_success_total{finished_reason="stop"} 7
process_cpu_seconds_total 1.5
broken{ 1
nan_one NaN
"#;
        let s = parse(text);
        assert_eq!(s.len(), 6, "{s:?}");
        assert_eq!(s[0].labels, r#"{engine="0",model_name="m{1}, \"q\""}"#);
        assert!(s[3].counter && !s[0].counter);
        let m = map(&s);
        assert_eq!(m.waiting, Some(5.5));
        assert_eq!(m.kv_cache_usage, Some(0.25));
        assert_eq!(m.running, None);
        assert!(m.raw.keys().all(|k| k.starts_with("vllm:")), "{:?}", m.raw);
        let m = map(&parse(LLAMA));
        assert_eq!((m.waiting, m.running), (Some(6.0), Some(2.0)));
    }

    #[test]
    fn counters_become_rates_and_a_restart_gives_none() {
        let at = |n: f64| map(&parse(&LLAMA.replace("120", &n.to_string())));
        let (a, b, restarted) = (at(120.0), at(420.0), at(10.0));
        let rate = |p: &[SeriesPoint]| {
            p.iter()
                .find(|p| p.series == "raw:llamacpp:prompt_tokens_total")
                .and_then(|p| p.value)
        };
        assert_eq!(
            rate(&points(&a, 0.0, None)),
            None,
            "no rate without a previous scrape"
        );
        assert_eq!(rate(&points(&b, 1500.0, Some((&a, 0.0)))), Some(200.0));
        assert_eq!(rate(&points(&restarted, 3000.0, Some((&b, 1500.0)))), None);
        let p = points(&b, 1500.0, Some((&a, 0.0)));
        assert!(p
            .iter()
            .any(|p| p.series == "waiting" && p.value == Some(6.0)));
        assert!(gap().iter().all(|p| p.value.is_none()));
        // TGI's KV use is a ratio of two gauges.
        let tgi = map(&parse(
            "tgi_batch_current_max_tokens 512\ntgi_batch_max_total_tokens 2048\n",
        ));
        assert_eq!(tgi.kv_cache_usage, Some(0.25));
    }
}
