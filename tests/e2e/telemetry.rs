//! `run --metrics-addr` and `--prometheus-remote-write` (docs/telemetry.md): the exposition a
//! scrape reads during a run, checked against the run's own requests.csv; the errors before
//! traffic; and a real Prometheus (Debian's `prometheus` package, which `.ci/run` installs)
//! scraping the endpoint and receiving the remote write, queried through its HTTP API. The
//! Prometheus test skips, saying so, when no `prometheus` binary is found.

use crate::support::{col, read_csv, sim_scenario, skip, Project};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Two steps with some 5xx answers, long enough (a few seconds) for scrapes during the run.
fn scenario(p: &Project) -> PathBuf {
    p.scenario(
        "tel",
        &sim_scenario(
            "tel",
            "    ttft: 40ms\n    tpot: 4ms\n    output_tokens: 12\n    seed: 3\n    faults:\n      http_503: 0.1",
            "  ladder: [2, 4]\n  requests_per_step: 60\n  warmup_requests: 0\n  pause_between_steps: 1s",
            12,
        ),
    )
}

/// `(step, outcome) -> count` and `step -> output tokens of successes`, from requests.csv.
fn truth(run: &Path) -> (BTreeMap<(String, String), f64>, BTreeMap<String, f64>) {
    let (h, rows) = read_csv(&run.join("requests.csv"));
    let (step, status, class, tokens) = (
        col(&h, "step"),
        col(&h, "status"),
        col(&h, "error_class"),
        col(&h, "output_tokens"),
    );
    let mut outcomes = BTreeMap::new();
    let mut toks = BTreeMap::new();
    for r in rows {
        let outcome = if r[status] == "ok" {
            "ok".to_string()
        } else {
            r[class].clone()
        };
        *outcomes.entry((r[step].clone(), outcome)).or_insert(0.0) += 1.0;
        if r[status] == "ok" {
            *toks.entry(r[step].clone()).or_insert(0.0) += r[tokens].parse::<f64>().unwrap_or(0.0);
        }
    }
    (outcomes, toks)
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A plain HTTP/1.1 GET on 127.0.0.1; `None` when nothing answers.
fn http_get(port: u16, path_and_query: &str) -> Option<(u16, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(
        s,
        "GET {path_and_query} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).ok()?;
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n")?;
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(body)
    } else {
        body.to_string()
    };
    Some((status, body))
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        body = rest[n..].trim_start_matches("\r\n");
    }
    out
}

/// Parses the text exposition: `name{labels}` -> value; panics on a line that is neither a
/// comment nor a sample (the format check).
fn parse_exposition(text: &str) -> Vec<(String, BTreeMap<String, String>, f64)> {
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with("# HELP ") || line.starts_with("# TYPE ") || line.is_empty() {
            continue;
        }
        let (series, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("{line}"));
        let value: f64 = value.parse().unwrap_or_else(|_| panic!("value of {line}"));
        let (name, labels) = match series.split_once('{') {
            Some((n, rest)) => (
                n,
                rest.strip_suffix('}').unwrap_or_else(|| panic!("{line}")),
            ),
            None => (series, ""),
        };
        assert!(
            name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
            "metric name {name}"
        );
        let mut map = BTreeMap::new();
        for pair in labels.split(',').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or_else(|| panic!("{line}"));
            let v = v.strip_prefix('"').and_then(|v| v.strip_suffix('"'));
            map.insert(
                k.to_string(),
                v.unwrap_or_else(|| panic!("{line}")).to_string(),
            );
        }
        out.push((name.to_string(), map, value));
    }
    out
}

fn ladder_bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("ladder")
}

/// Runs `ladder run` in `p` with `args`, scraping its endpoint (announced on stderr) until it
/// exits; returns the last scrape that answered and the stderr.
fn run_scraping(p: &Project, args: &[&str]) -> (String, String, i32) {
    let mut child = Command::new(ladder_bin())
        .current_dir(p.path())
        .args(["run", "scenarios/tel.yaml", "--metrics-addr", "127.0.0.1:0"])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, lines) = std::sync::mpsc::channel();
    let err = BufReader::new(child.stderr.take().unwrap());
    std::thread::spawn(move || {
        for line in err.lines() {
            if tx.send(line.unwrap_or_default()).is_err() {
                return;
            }
        }
    });
    // Scraped like Prometheus, but paced by what ladder prints instead of a timer: once per
    // stderr line (the endpoint's address, the banner, each step) while the run lasts, and
    // once more when ladder says it waits for the last scrape, which then holds the final
    // counts. No sleep decides what the test sees.
    let (mut stderr, mut port, mut last) = (String::new(), None, String::new());
    while let Ok(line) = lines.recv_timeout(Duration::from_secs(120)) {
        stderr.push_str(&line);
        stderr.push('\n');
        if let Some(rest) = line.strip_prefix("metrics: serving http://127.0.0.1:") {
            port = Some(rest.split('/').next().unwrap().parse::<u16>().unwrap());
        }
        if let Some((200, body)) = port.and_then(|port| http_get(port, "/metrics")) {
            last = body;
        }
    }
    assert!(port.is_some(), "no metrics line: {stderr}");
    let code = child.wait().unwrap().code().unwrap_or(-1);
    (last, stderr, code)
}

#[test]
fn a_scrape_during_the_run_reads_the_runs_series_and_the_last_one_its_final_counts() {
    let p = Project::new();
    scenario(&p);
    let (text, stderr, code) = run_scraping(&p, &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("waiting up to"), "{stderr}");
    let run = p.run_dirs("tel").pop().unwrap();
    let run_id = run.file_name().unwrap().to_string_lossy().into_owned();
    let samples = parse_exposition(&text);
    for name in [
        "ladder_ttft_seconds",
        "ladder_itl_seconds",
        "ladder_tpot_seconds",
        "ladder_e2e_seconds",
        "ladder_requests_total",
        "ladder_output_tokens_total",
        "ladder_input_tokens_total",
        "ladder_in_flight",
        "ladder_step_load",
    ] {
        assert!(
            text.contains(&format!("# TYPE {name} ")),
            "{name} declared:\n{text}"
        );
    }
    let (outcomes, tokens) = truth(&run);
    assert!(
        outcomes.keys().any(|(_, o)| o == "http_5xx"),
        "{outcomes:?}"
    );
    let mut seen = BTreeMap::new();
    for (name, labels, value) in &samples {
        assert_eq!(labels.get("scenario").map(String::as_str), Some("tel"));
        assert_eq!(labels.get("model").map(String::as_str), Some("sim-model"));
        assert_eq!(labels.get("run_id"), Some(&run_id));
        let step = labels["step"].clone();
        match name.as_str() {
            "ladder_requests_total" => {
                seen.insert((step, labels["outcome"].clone()), *value);
            }
            "ladder_output_tokens_total" => assert_eq!(Some(value), tokens.get(&step)),
            "ladder_ttft_seconds_count" => {
                assert_eq!(Some(value), outcomes.get(&(step, "ok".to_string())))
            }
            _ => {}
        }
    }
    assert_eq!(
        seen, outcomes,
        "the final scrape holds every request of the run"
    );
    // The run is over: its gauges went away with the steps.
    assert!(!samples.iter().any(|s| s.0 == "ladder_step_load"), "{text}");
}

#[test]
fn a_bad_metrics_address_or_an_unreachable_push_url_stops_before_traffic() {
    let p = Project::new();
    scenario(&p);
    let busy = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = busy.local_addr().unwrap().to_string();
    let out = p
        .ladder()
        .args(["run", "scenarios/tel.yaml", "--metrics-addr", &addr])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--metrics-addr") && err.contains("cannot listen"),
        "{err}"
    );
    assert!(p.run_dirs("tel").is_empty(), "nothing ran");
    let dead = free_port();
    let url = format!("http://127.0.0.1:{dead}/api/v1/write");
    let out = p
        .ladder()
        .args([
            "run",
            "scenarios/tel.yaml",
            "--prometheus-remote-write",
            &url,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--prometheus-remote-write") && err.contains("nothing was sent"),
        "{err}"
    );
    let out = p
        .ladder()
        .args([
            "run",
            "scenarios/tel.yaml",
            "--prometheus-remote-write",
            "http://user:secret-pw@127.0.0.1:9/api/v1/write",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("LADDER_REMOTE_WRITE_PASSWORD") && !err.contains("secret-pw"),
        "{err}"
    );
    assert!(p.run_dirs("tel").is_empty(), "nothing ran");
}

/// The `prometheus` binary: `$LADDER_PROMETHEUS`, else on PATH.
pub fn prometheus() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("LADDER_PROMETHEUS") {
        return Some(PathBuf::from(p));
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("prometheus"))
            .find(|p| p.is_file())
    })
}

/// A Prometheus on 127.0.0.1 with the remote-write receiver, scraping `scrape_port` every
/// second; killed on drop.
pub struct Prometheus {
    child: Child,
    pub port: u16,
    _dir: tempfile::TempDir,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Prometheus {
    pub fn start(binary: &Path, scrape_port: u16) -> Prometheus {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: ladder\n    static_configs:\n      - targets: ['127.0.0.1:{scrape_port}']\n"
            ),
        )
        .unwrap();
        let port = free_port();
        let log = std::fs::File::create(dir.path().join("prometheus.log")).unwrap();
        let child = Command::new(binary)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .arg("--web.enable-remote-write-receiver")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start prometheus");
        let prom = Prometheus {
            child,
            port,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        while http_get(port, "/-/ready").map(|r| r.0) != Some(200) {
            assert!(Instant::now() < deadline, "prometheus did not become ready");
            std::thread::sleep(Duration::from_millis(200));
        }
        // Its scrape loop starts a few seconds after it is ready: wait for the first attempt
        // (which fails: nothing listens yet), so that it scrapes while the run lasts.
        while !prom.scraping() {
            assert!(Instant::now() < deadline, "prometheus never scraped");
            std::thread::sleep(Duration::from_millis(200));
        }
        prom
    }

    fn scraping(&self) -> bool {
        let Some((200, body)) = http_get(self.port, "/api/v1/targets") else {
            return false;
        };
        let v: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
        v["data"]["activeTargets"][0]["lastScrape"]
            .as_str()
            .is_some_and(|t| !t.starts_with("0001-"))
    }

    /// An instant query: `(labels, value)` per series.
    pub fn query(&self, promql: &str) -> Vec<(BTreeMap<String, String>, f64)> {
        let (status, body) = http_get(
            self.port,
            &format!("/api/v1/query?query={}", urlencode(promql)),
        )
        .expect("prometheus answers");
        assert_eq!(status, 200, "{promql}: {body}");
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        v["data"]["result"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let labels = r["metric"]
                    .as_object()
                    .unwrap()
                    .iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
                    .collect();
                (labels, r["value"][1].as_str().unwrap().parse().unwrap())
            })
            .collect()
    }
}

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// `(step, outcome) -> value` of a query's result.
fn by_step_outcome(rows: &[(BTreeMap<String, String>, f64)]) -> BTreeMap<(String, String), f64> {
    rows.iter()
        .map(|(l, v)| ((l["step"].clone(), l["outcome"].clone()), *v))
        .collect()
}

#[test]
fn a_real_prometheus_holds_the_runs_series_scraped_and_pushed() {
    let Some(binary) = skip::require(
        prometheus(),
        "a_real_prometheus_holds_the_runs_series_scraped_and_pushed",
        "no prometheus on PATH",
        "Debian: apt-get install prometheus; or set LADDER_PROMETHEUS",
    ) else {
        return;
    };
    let p = Project::new();
    scenario(&p);
    let metrics_port = free_port();
    let prom = Prometheus::start(&binary, metrics_port);
    let out = p
        .ladder()
        .args([
            "run",
            "scenarios/tel.yaml",
            "--metrics-addr",
            &format!("127.0.0.1:{metrics_port}"),
            "--prometheus-remote-write",
            &format!("http://127.0.0.1:{}/api/v1/write", prom.port),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let run = p.run_dirs("tel").pop().unwrap();
    let run_id = run.file_name().unwrap().to_string_lossy().into_owned();
    let (outcomes, tokens) = truth(&run);
    // Pushed series carry no job label; scraped ones carry job="ladder" (and went stale when
    // the endpoint closed, so they are read over the last minutes).
    let pushed = format!("run_id=\"{run_id}\",scenario=\"tel\",model=\"sim-model\",job=\"\"");
    let scraped =
        format!("run_id=\"{run_id}\",scenario=\"tel\",model=\"sim-model\",job=\"ladder\"");
    let requests = by_step_outcome(&prom.query(&format!(
        "sum by (step, outcome) (ladder_requests_total{{{pushed}}})"
    )));
    assert_eq!(
        requests, outcomes,
        "remote write: requests by step and outcome"
    );
    let requests = by_step_outcome(&prom.query(&format!(
        "sum by (step, outcome) (max_over_time(ladder_requests_total{{{scraped}}}[10m]))"
    )));
    assert_eq!(
        requests,
        outcomes,
        "scrape: requests by step and outcome; ladder said {}; Prometheus has {:?}",
        String::from_utf8_lossy(&out.stderr),
        prom.query("count by (job, run_id) (ladder_requests_total)")
    );
    for sel in [&pushed, &scraped] {
        let toks: BTreeMap<String, f64> = prom
            .query(&format!(
                "sum by (step) (max_over_time(ladder_output_tokens_total{{{sel}}}[10m]))"
            ))
            .into_iter()
            .map(|(l, v)| (l["step"].clone(), v))
            .collect();
        assert_eq!(toks, tokens, "{sel}: output tokens");
        let ttft: BTreeMap<String, f64> = prom
            .query(&format!(
                "sum by (step) (max_over_time(ladder_ttft_seconds_count{{{sel}}}[10m]))"
            ))
            .into_iter()
            .map(|(l, v)| (l["step"].clone(), v))
            .collect();
        for (step, n) in &ttft {
            assert_eq!(
                Some(n),
                outcomes.get(&(step.clone(), "ok".into())),
                "{sel}: TTFT count"
            );
        }
        // The sim's TTFT is 40 ms: P90 from the histogram lands in its bucket's range.
        let p90 = prom.query(&format!(
            "histogram_quantile(0.9, sum by (le) (max_over_time(ladder_ttft_seconds_bucket{{{sel}}}[10m])))"
        ));
        assert!(
            p90.len() == 1 && (0.02..0.2).contains(&p90[0].1),
            "{sel}: TTFT P90 {p90:?}"
        );
        // The load gauge of each step, while it ran: 2 then 4 streams.
        let load: BTreeMap<String, f64> = prom
            .query(&format!(
                "max by (step) (max_over_time(ladder_step_load{{{sel}}}[10m]))"
            ))
            .into_iter()
            .map(|(l, v)| (l["step"].clone(), v))
            .collect();
        assert_eq!(
            load,
            BTreeMap::from([("1".to_string(), 2.0), ("2".to_string(), 4.0)]),
            "{sel}: step load"
        );
    }
    // The dashboard's queries: Prometheus accepts each one, and each series it names holds
    // this run's data.
    for q in dashboard_queries() {
        let sent = as_grafana_sends(&q);
        assert!(
            !prom.query(&sent).is_empty()
                || sent.contains("ladder_in_flight")
                || sent.contains("ladder_step_load"),
            "{sent}: no data"
        );
        for name in series_in(&q) {
            let held = prom.query(&format!(
                "count(max_over_time({name}{{run_id=\"{run_id}\"}}[10m]))"
            ));
            assert!(
                held.first().is_some_and(|r| r.1 > 0.0),
                "{name} (from {q}) holds the run"
            );
        }
    }
    // A pushed gauge was marked stale when its step ended: no current value now.
    let now = prom.query(&format!("ladder_step_load{{{pushed}}}"));
    assert!(now.is_empty(), "stale after the step: {now:?}");
}

/// Every PromQL expression of `deploy/grafana/ladder.json` (panel targets and variable
/// queries), after checking the file's shape.
fn dashboard_queries() -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/grafana/ladder.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let v: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: not JSON: {e}", path.display()));
    assert!(
        v["title"].is_string() && v["uid"].is_string(),
        "title and uid"
    );
    let panels = v["panels"].as_array().expect("panels");
    assert!(panels.len() >= 6, "panels");
    let mut out = Vec::new();
    for p in panels {
        let targets = p["targets"]
            .as_array()
            .unwrap_or_else(|| panic!("{p}: targets"));
        assert!(
            !targets.is_empty(),
            "{}: a panel without a query",
            p["title"]
        );
        assert!(
            p["gridPos"]["w"].as_u64().is_some_and(|w| w <= 24),
            "gridPos"
        );
        out.extend(
            targets
                .iter()
                .map(|t| t["expr"].as_str().unwrap().to_string()),
        );
    }
    for var in v["templating"]["list"].as_array().unwrap() {
        if let Some(q) = var["query"]["query"].as_str() {
            out.push(q.to_string());
        }
    }
    out
}

/// `$var` references replaced the way Grafana would for "All" on a short range; a variable's
/// `label_values(SERIES, LABEL)` (Grafana's, not PromQL) as the PromQL query that lists them.
fn as_grafana_sends(expr: &str) -> String {
    let expr = match expr
        .strip_prefix("label_values(")
        .and_then(|e| e.strip_suffix(')'))
        .and_then(|e| e.rsplit_once(','))
    {
        Some((series, label)) => {
            format!("count by ({}) (max_over_time({series}[10m]))", label.trim())
        }
        None => expr.to_string(),
    };
    expr.replace("$__rate_interval", "1m")
        .replace("$__range", "10m")
        .replace("$scenario", ".*")
        .replace("$model", ".*")
        .replace("$run_id", ".*")
}

/// The `ladder_*` series an expression names.
fn series_in(expr: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = expr;
    while let Some(i) = rest.find("ladder_") {
        let name: String = rest[i..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        rest = &rest[i + name.len()..];
        out.push(name);
    }
    out
}

#[test]
fn the_grafana_dashboard_parses_and_names_only_series_and_labels_ladder_exports() {
    let known = ladder::telemetry::registry::series_names();
    let labels = ["scenario", "model", "step", "run_id", "outcome", "le"];
    let queries = dashboard_queries();
    let mut used = std::collections::BTreeSet::new();
    for q in &queries {
        let names = series_in(q);
        assert!(!names.is_empty(), "{q}: names no ladder series");
        for n in names {
            assert!(
                known.contains(&n),
                "{q}: {n} is not a series ladder exports"
            );
            used.insert(n);
        }
        for (i, _) in q.match_indices("by (") {
            let inside = &q[i + 4..i + 4 + q[i + 4..].find(')').unwrap()];
            for l in inside.split(',').map(str::trim) {
                assert!(labels.contains(&l), "{q}: label {l}");
            }
        }
        for var in ["$", "${"] {
            for (i, _) in q.match_indices(var) {
                let name: String = q[i + 1..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                assert!(
                    ["scenario", "model", "run_id", "__rate_interval", "__range"]
                        .contains(&name.as_str()),
                    "{q}: unknown variable ${name}"
                );
            }
        }
    }
    // Every family is on the dashboard.
    for family in ["ttft", "itl", "tpot", "e2e"] {
        assert!(
            used.contains(&format!("ladder_{family}_seconds_bucket")),
            "{family}"
        );
    }
    for n in [
        "ladder_requests_total",
        "ladder_output_tokens_total",
        "ladder_input_tokens_total",
        "ladder_in_flight",
        "ladder_step_load",
    ] {
        assert!(used.contains(n), "{n} on the dashboard");
    }
}
