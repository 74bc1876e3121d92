//! `ladder report` as a person sees it: the demo's report parsed by a real XML parser, rendered
//! in headless Chromium (screenshot not blank, axes, series and the knee band in the DOM), and a
//! multi-model run whose report puts every model on shared axes and says the run was cut short;
//! a lower concurrency cap whose report opens with `diff`'s headline and grid, before any chart.

use crate::support::{sim_scenario, skip, Project};
use std::path::{Path, PathBuf};
use std::process::Command as Std;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Renders the committed demo baseline as a report, overlaid on itself as the baseline.
fn demo_report(p: &Project) -> PathBuf {
    let out = p.path().join("demo-report.html");
    let baseline = repo().join("baselines/demo.csv");
    let assert = p
        .ladder()
        .args(["report", "-o"])
        .arg(&out)
        .arg("--baseline")
        .arg(&baseline)
        .arg(&baseline)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).to_string();
    assert_eq!(stdout.trim(), out.display().to_string(), "prints the path");
    out
}

/// Every element whose `class` attribute contains `class` as a word.
fn with_class<'a>(doc: &'a roxmltree::Document, class: &str) -> Vec<roxmltree::Node<'a, 'a>> {
    doc.descendants()
        .filter(|n| {
            n.attribute("class")
                .is_some_and(|c| c.split_whitespace().any(|w| w == class))
        })
        .collect()
}

fn parse(html: &str) -> roxmltree::Document<'_> {
    let opts = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    roxmltree::Document::parse_with_options(html, opts)
        .unwrap_or_else(|e| panic!("the report is not well-formed XML: {e}"))
}

#[test]
fn demo_report_is_well_formed_self_contained_and_has_every_chart() {
    let p = Project::new();
    let html = std::fs::read_to_string(demo_report(&p)).unwrap();
    let doc = parse(&html);
    let svgs: Vec<_> = doc
        .descendants()
        .filter(|n| n.tag_name().name() == "svg")
        .collect();
    assert_eq!(
        svgs.len(),
        6 + 7,
        "per model TTFT, TPOT, TPM, RPS, errors, goodput; the overview's two serving curves, two CDFs, TTFT over time, ITL, E2E"
    );
    // One kind of x axis: every chart drawn against the ladder (the failed-requests bars
    // included) has the same ticks at the same places.
    let ladder_axes: Vec<(String, Vec<(String, String)>)> = svgs
        .iter()
        .filter_map(|svg| {
            let axis = svg
                .descendants()
                .find(|n| n.attribute("class") == Some("axis x-axis"))?;
            let label = axis
                .descendants()
                .find(|n| n.attribute("class") == Some("axis-label"))?
                .text()?;
            label.starts_with("concurrent streams").then(|| {
                let ticks = axis
                    .descendants()
                    .filter(|n| n.attribute("class") == Some("tick"))
                    .map(|n| {
                        (
                            n.text().unwrap_or_default().to_string(),
                            n.attribute("x").unwrap_or_default().to_string(),
                        )
                    })
                    .collect();
                (svg.attribute("id").unwrap_or_default().to_string(), ticks)
            })
        })
        .collect();
    assert!(
        ladder_axes.iter().any(|(id, _)| id.ends_with("-errors")),
        "the failed-requests chart is on the ladder's axis: {ladder_axes:?}"
    );
    assert!(ladder_axes.len() >= 8, "{ladder_axes:?}");
    for (id, ticks) in &ladder_axes {
        assert_eq!(
            ticks, &ladder_axes[0].1,
            "#{id} against #{}",
            ladder_axes[0].0
        );
    }
    // The overview's charts, by the ids people link to, each with drawn series.
    for id in OVERVIEW_IDS {
        let node = doc
            .descendants()
            .find(|n| n.attribute("id") == Some(id))
            .unwrap_or_else(|| panic!("#{id} missing"));
        let drawn = node
            .descendants()
            .filter(|n| n.attribute("class") == Some("point") || n.tag_name().name() == "polyline")
            .count();
        assert!(drawn > 0, "#{id} draws nothing");
    }
    let curve = doc
        .descendants()
        .find(|n| n.attribute("id") == Some("serving-curve"))
        .unwrap();
    let names: Vec<&str> = curve
        .descendants()
        .filter_map(|n| n.attribute("data-series"))
        .collect();
    assert!(
        names.contains(&"TTFT P90") && names.contains(&"E2E P90"),
        "{names:?}"
    );
    assert!(names.contains(&"knee at 20"), "knee marked: {names:?}");
    assert!(
        names.contains(&"baseline · TTFT P90"),
        "baseline overlaid: {names:?}"
    );
    let cdf = doc
        .descendants()
        .find(|n| n.attribute("id") == Some("ttft-cdf"))
        .unwrap();
    assert!(
        cdf.descendants()
            .any(|n| n.text() == Some("TTFT (ms) (log scale)")),
        "CDF on a log axis"
    );
    let steps: Vec<&str> = cdf
        .descendants()
        .filter_map(|n| n.attribute("data-series"))
        .collect();
    assert_eq!(
        &steps[..4],
        ["5 streams", "10 streams", "20 streams", "50 streams"]
    );
    let over_time = doc
        .descendants()
        .find(|n| n.attribute("id") == Some("ttft-over-time"))
        .unwrap();
    assert_eq!(
        over_time
            .descendants()
            .filter(|n| n.attribute("class") == Some("step-line"))
            .count(),
        3,
        "boundaries between the four steps"
    );
    // No CLI notes in the page; metadata as a table of words, not JSON.
    assert!(!html.contains("class=\"note\""));
    for svg in &svgs {
        let labels: Vec<&str> = svg
            .descendants()
            .filter(|n| n.attribute("class") == Some("axis-label"))
            .filter_map(|n| n.text())
            .collect();
        assert_eq!(labels.len(), 2, "two labelled axes: {labels:?}");
        assert!(
            labels.iter().any(|l| l.contains('(') && l.contains(')')),
            "a unit on the value axis: {labels:?}"
        );
    }
    assert_eq!(
        with_class(&doc, "knee-band").len(),
        6,
        "knee band on every chart of the model, the failed-requests bars included"
    );
    let band_label = with_class(&doc, "band-label")[0].text().unwrap();
    assert_eq!(band_label, "knee (10, 20]: queueing");
    assert!(with_class(&doc, "baseline").len() >= 5, "baseline overlaid");
    assert!(!with_class(&doc, "ideal").is_empty(), "ideal linear line");
    // Self-contained: no script, no external resource of any kind.
    for n in doc.descendants() {
        assert_ne!(n.tag_name().name(), "script");
        assert_ne!(n.tag_name().name(), "link");
        for a in n.attributes() {
            if a.name() != "xmlns" {
                assert!(!a.value().contains("://"), "external reference {a:?}");
            }
        }
    }
    assert!(html.contains("prefers-color-scheme:dark"));
    assert!(html.contains("@media print"));
    assert!(html.contains("PASS"), "verdict shown");
    assert!(
        html.contains("TTFT knee in (10, 20] streams"),
        "findings in sentences"
    );
}

/// The overview's element ids (docs/report.md), for the browser test and for links.
const OVERVIEW_IDS: [&str; 6] = [
    "serving-curve",
    "ttft-cdf",
    "itl-cdf",
    "ttft-over-time",
    "itl-chart",
    "e2e-chart",
];

/// A Chromium on PATH, or the test's skip (a failure under `CI=true`).
fn chromium(test: &str) -> Option<PathBuf> {
    skip::require(
        skip::on_path(&[
            "chromium",
            "chromium-browser",
            "google-chrome",
            "google-chrome-stable",
        ]),
        test,
        "no chromium on PATH",
        "Debian: apt-get install chromium",
    )
}

fn headless(browser: &Path, profile: &Path, size: &str) -> Std {
    let mut c = Std::new(browser);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--hide-scrollbars",
    ]);
    c.arg(format!("--window-size={size}"));
    c.arg(format!("--user-data-dir={}", profile.display()));
    c
}

#[test]
fn demo_report_renders_in_headless_chromium() {
    let Some(browser) = chromium("demo_report_renders_in_headless_chromium") else {
        return;
    };
    let p = Project::new();
    let page = demo_report(&p);
    let url = format!("file://{}", page.display());

    let dom = headless(&browser, &p.path().join("profile-dom"), "1400,1600")
        .arg("--dump-dom")
        .arg(&url)
        .output()
        .expect("run chromium");
    assert!(dom.status.success(), "chromium --dump-dom failed: {dom:?}");
    let dom = String::from_utf8_lossy(&dom.stdout);
    // What the browser built, not what we wrote: the elements a reader looks at are in the DOM.
    for needle in [
        "<svg",
        "class=\"axis x-axis\"",
        "class=\"axis y-axis\"",
        "class=\"series c1\" data-series=\"P90\"",
        "class=\"knee-band\"",
        "knee (10, 20]: queueing",
        "concurrent streams",
        "TTFT (ms)",
    ] {
        assert!(dom.contains(needle), "{needle} not in the browser's DOM");
    }
    for id in OVERVIEW_IDS {
        let at = dom
            .find(&format!("id=\"{id}\""))
            .unwrap_or_else(|| panic!("#{id} not in the browser's DOM"));
        assert!(dom[at..].contains("<svg"), "#{id} holds a chart");
    }
    // At 1,500 px the page does not scroll sideways: a copy of the page with a probe script
    // (the report itself has none) records the document's width.
    let probe = p.path().join("probe.html");
    let html = std::fs::read_to_string(&page).unwrap();
    std::fs::write(
        &probe,
        html.replace(
            "</body>",
            "<script>document.body.setAttribute('data-width', document.documentElement.scrollWidth + ' ' + window.innerWidth)</script></body>",
        ),
    )
    .unwrap();
    let probed = headless(&browser, &p.path().join("profile-probe"), "1500,1300")
        .arg("--dump-dom")
        .arg(format!("file://{}", probe.display()))
        .output()
        .expect("run chromium");
    let probed = String::from_utf8_lossy(&probed.stdout);
    let width = probed
        .split("data-width=\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .unwrap_or_else(|| panic!("no probe result in {probed:.300}"));
    let (scroll, inner) = width.split_once(' ').unwrap();
    let (scroll, inner): (u32, u32) = (scroll.parse().unwrap(), inner.parse().unwrap());
    assert!(
        scroll <= inner,
        "horizontal scroll at 1,500 px: document {scroll} px wide, window {inner} px"
    );

    let shot = p.path().join("shot.png");
    let out = headless(&browser, &p.path().join("profile-shot"), "1400,1600")
        .arg(format!("--screenshot={}", shot.display()))
        .arg(&url)
        .output()
        .expect("run chromium");
    assert!(
        out.status.success(),
        "chromium --screenshot failed: {out:?}"
    );
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (1400, 1600));
    let bytes = &buf[..info.buffer_size()];
    let channels = info.color_type.samples();
    let pixels: Vec<&[u8]> = bytes.chunks(channels).collect();
    let background = pixels[0];
    let drawn = pixels.iter().filter(|px| *px != &background).count();
    let share = drawn as f64 / pixels.len() as f64;
    assert!(
        share > 0.03,
        "screenshot looks blank: {:.2}% drawn",
        share * 100.0
    );
    let mut colours: Vec<&[u8]> = pixels.clone();
    colours.sort();
    colours.dedup();
    assert!(
        colours.len() > 50,
        "only {} colours: charts did not render",
        colours.len()
    );
    // The Okabe–Ito orange of the P90 series is on screen (allowing for anti-aliasing).
    let near = |px: &[u8], rgb: [u8; 3]| {
        px.iter()
            .zip(rgb)
            .all(|(a, b)| (i16::from(*a) - i16::from(b)).abs() <= 6)
    };
    assert!(
        pixels.iter().any(|px| near(px, [0xE6, 0x9F, 0x00])),
        "no P90 series colour in the screenshot"
    );
}

/// A run that scraped the server's /metrics and split TTFT: the browser finds the evidence
/// charts by their stable ids (`#ttft-parts`, `#server-series`, docs/report.md), each holding
/// drawn charts, the steps labelled right of their lines.
#[test]
fn evidence_charts_render_by_their_ids_in_headless_chromium() {
    let Some(browser) = chromium("evidence_charts_render_by_their_ids_in_headless_chromium") else {
        return;
    };
    let p = Project::new();
    let yaml = sim_scenario(
        "ev",
        "    ttft: 30ms\n    tpot: 2ms\n    tpot_jitter: 0\n    output_tokens: 10\n    concurrency_cap: 2\n    seed: 5",
        "  ladder: [1, 4]\n  requests_per_step: 16",
        10,
    )
    .replace(
        "  models: [sim-model]\n",
        "  models: [sim-model]\n  metrics: {every: 100ms}\n",
    );
    let f = p.scenario("ev", &yaml);
    p.ladder()
        .args(["run", "--quiet"])
        .arg(&f)
        .assert()
        .success();
    let run = p.run_dirs("ev").pop().unwrap();
    p.ladder().arg("report").arg(&run).assert().success();
    let page = run.join("report.html");
    let dom = headless(&browser, &p.path().join("profile-ev"), "1500,1300")
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("run chromium");
    assert!(dom.status.success(), "chromium --dump-dom failed: {dom:?}");
    let dom = String::from_utf8_lossy(&dom.stdout).to_string();
    for (id, drawn) in [
        ("ttft-parts", "class=\"segment c2\""),
        ("server-series", "<polyline"),
    ] {
        assert_eq!(
            dom.matches(&format!("id=\"{id}\"")).count(),
            1,
            "#{id} once"
        );
        let at = dom.find(&format!("id=\"{id}\"")).unwrap();
        let group = &dom[at..at + dom[at..].find("</div>").unwrap()];
        assert!(group.contains("<svg"), "#{id} holds a chart");
        assert!(group.contains(drawn), "#{id} draws {drawn}");
        if id == "server-series" {
            assert!(group.contains("class=\"step-label\""), "steps labelled");
        }
    }
}

#[test]
fn multi_model_report_shares_axes_and_flags_an_interrupted_run() {
    let p = Project::new();
    let sim = "    ttft: 30ms\n    tpot: 2ms\n    tpot_jitter: 0\n    output_tokens: 8\n    models:\n      fast: {ttft: 10ms}\n      slow: {ttft: 60ms}";
    let yaml = sim_scenario("two", sim, "  ladder: [1, 2]\n  requests_per_step: 6", 8)
        .replace("models: [sim-model]", "models: [fast, slow]")
        + "slo:\n  ttft: 50ms\ncompare: {baseline: fast}\n";
    let f = p.scenario("two", &yaml);
    p.ladder()
        .args(["run", "--quiet"])
        .arg(&f)
        .assert()
        .success();
    let run = p.run_dirs("two").pop().unwrap();
    // Pretend the run was cut short, as a killed or interrupted run records it.
    let meta_path = run.join("meta.json");
    let mut meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&meta_path).unwrap()).unwrap();
    meta["interrupted"] = true.into();
    meta["complete"] = false.into();
    std::fs::write(&meta_path, meta.to_string()).unwrap();

    // `runs/two` means its latest run; the page goes into the run directory by default.
    let out = p.ladder().args(["report", "runs/two"]).assert().success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(stderr.contains("using the latest"), "{stderr}");
    assert!(
        stderr.contains("Stopped early: the run was stopped before its plan ended"),
        "{stderr}"
    );
    let html = std::fs::read_to_string(run.join("report.html")).unwrap();
    // A second report keeps the first and says where the new one went; --trend writes next to
    // the runs, never into the working directory.
    let again = p.ladder().args(["report", "runs/two"]).assert().success();
    let stdout = String::from_utf8_lossy(&again.get_output().stdout).to_string();
    let stderr = String::from_utf8_lossy(&again.get_output().stderr).to_string();
    assert!(
        p.path().join(stdout.trim()) == run.join("report-2.html"),
        "{stdout}"
    );
    assert!(stderr.contains("kept it and wrote"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(run.join("report.html")).unwrap(),
        html
    );
    p.ladder()
        .arg("report")
        .arg("--trend")
        .arg(&run)
        .assert()
        .success();
    assert!(run.join("trend.html").is_file());
    assert!(!p.path().join("trend.html").exists() && !p.path().join("report.html").exists());
    let doc = parse(&html);
    let all = doc
        .descendants()
        .filter(|n| n.tag_name().name() == "svg")
        .filter(|n| {
            n.attribute("id")
                .is_some_and(|id| id.starts_with("r0-all-"))
        })
        .count();
    assert_eq!(all, 6, "one chart per metric with every model");
    let ttft = doc
        .descendants()
        .find(|n| n.attribute("id") == Some("r0-all-ttft"))
        .unwrap();
    let names: Vec<&str> = ttft
        .descendants()
        .filter_map(|n| n.attribute("data-series"))
        .collect();
    assert_eq!(names, ["fast", "slow"]);
    assert_eq!(
        doc.descendants()
            .filter(|n| n.attribute("class") == Some("model"))
            .count(),
        2,
        "a section per model"
    );
    assert!(html.contains("Incomplete run"), "complete: false shown");
    assert!(html.contains("Stopped early"));
    assert!(html.contains("SLO TTFT ≤ 50 ms"));
    assert!(
        html.contains("slow against fast (same run)"),
        "the run's compare: verdicts"
    );
    assert!(html.contains("Scenario as run, every value (secrets redacted)"));
    // The scenario collapsed to what its author chose: the ladder and the SLO, not the
    // timeouts or the fault rates it left at their defaults.
    let changes = doc
        .descendants()
        .find(|n| n.attribute("class") == Some("scenario changes"))
        .and_then(|n| n.text())
        .expect("the scenario's non-default values");
    assert!(
        changes.contains("ladder:") && changes.contains("slo:"),
        "{changes}"
    );
    assert!(
        !changes.contains("timeouts") && !changes.contains("http_500"),
        "{changes}"
    );
}

/// Where in document order the first node matching `pred` is.
fn first_at(doc: &roxmltree::Document, pred: impl Fn(&roxmltree::Node) -> bool) -> Option<usize> {
    doc.descendants().position(|n| pred(&n))
}

/// Where the first chart is: an `<svg>` (the report draws no canvas).
fn first_chart(doc: &roxmltree::Document) -> usize {
    first_at(doc, |n| {
        matches!(n.tag_name().name(), "svg" | "canvas" | "img")
    })
    .expect("the page has charts")
}

/// The page opens with what happened: against a baseline whose provider served 45 requests at
/// once, a run capped at 35 reads first the headline `diff` prints ("capacity: cap ≈ 47 → 37
/// streams …") and the grid of regressed checks, then the charts; every check stays below, in
/// a `<details>`.
#[test]
fn the_verdict_headline_and_grid_come_before_the_first_chart() {
    use crate::capacity_verdict::{LOAD, SIM};
    let p = Project::new();
    let f = p.scenario("capdrop", &sim_scenario("capdrop", SIM, LOAD, 40));
    p.ladder()
        .args(["run", "--quiet", "--save-baseline"])
        .arg(&f)
        .assert()
        .success();
    p.ladder()
        .args(["run", "--quiet", "--no-step-summary"])
        .args(["--sim-set", "concurrency_cap=35"])
        .arg(&f)
        .assert()
        .success();
    let run = p.run_dirs("capdrop").pop().unwrap();
    p.ladder()
        .args(["report", "--baseline", "baselines/capdrop.csv"])
        .arg(&run)
        .assert()
        .success();
    let diff = p
        .ladder()
        .args(["diff", "--format", "json", "baselines/capdrop.csv"])
        .arg(&run)
        .assert()
        .code(3);
    let diff: serde_json::Value = serde_json::from_slice(&diff.get_output().stdout).unwrap();
    let html = std::fs::read_to_string(run.join("report.html")).unwrap();
    let doc = parse(&html);
    let chart = first_chart(&doc);

    // The same sentences as `diff`, in the same order, before the first chart.
    let headline: Vec<&str> = with_class(&doc, "headline")
        .first()
        .expect("a headline list")
        .children()
        .filter_map(|li| li.text())
        .collect();
    assert_eq!(
        serde_json::json!(headline),
        diff["headline"],
        "the page's headline is diff's"
    );
    assert!(headline[0].starts_with("capacity: cap ≈ "), "{headline:?}");
    let at_headline = first_at(&doc, |n| n.attribute("class") == Some("headline")).unwrap();
    assert!(
        at_headline < chart,
        "headline at {at_headline}, first chart at {chart}"
    );

    // The grid: a row per regressed check, a column per step, before the first chart.
    let grid = with_class(&doc, "verdict-grid");
    let grid = grid.first().expect("the grid of regressed checks");
    let at_grid = first_at(&doc, |n| n.attribute("class") == Some("verdict-grid")).unwrap();
    assert!(
        at_headline < at_grid && at_grid < chart,
        "grid at {at_grid}, first chart at {chart}"
    );
    let cells: Vec<&str> = grid
        .descendants()
        .filter(|n| n.tag_name().name() == "td")
        .filter_map(|n| n.text())
        .collect();
    assert!(cells.iter().any(|c| c.starts_with("✗ +")), "{cells:?}");
    let rows: Vec<&str> = grid
        .descendants()
        .filter(|n| n.tag_name().name() == "th")
        .filter_map(|n| n.text())
        .collect();
    assert!(
        rows.contains(&"60 streams") && rows.contains(&"TTFT P50"),
        "a column per step, a row per check: {rows:?}"
    );
    // A row per check that regressed or was inconclusive at some step in `diff`, no more.
    let mut flagged: Vec<(String, String)> = Vec::new();
    for c in diff["checks"].as_array().unwrap() {
        let kind = c["verdict"]["kind"].as_str().unwrap();
        if c["gated"] == true
            && matches!(kind, "regressed" | "inconclusive")
            && c["concurrency"].is_u64()
        {
            let key = (c["metric"].to_string(), c["percentile"].to_string());
            if !flagged.contains(&key) {
                flagged.push(key);
            }
        }
    }
    let body_rows = grid
        .descendants()
        .filter(|n| n.tag_name().name() == "tr")
        .count()
        - 1;
    assert_eq!(body_rows, flagged.len(), "{flagged:?} against {rows:?}");

    // Every check is still on the page, folded, after the charts.
    let all = first_at(&doc, |n| n.attribute("class") == Some("all-checks"))
        .expect("every check, folded");
    assert!(all > chart);
    assert_eq!(
        doc.descendants()
            .find(|n| n.attribute("class") == Some("all-checks"))
            .unwrap()
            .tag_name()
            .name(),
        "details"
    );
}

/// Without a baseline the page still opens with the run's own findings: the demo's knee line
/// comes before the first chart.
#[test]
fn a_report_without_a_baseline_opens_with_the_knee_line() {
    let p = Project::new();
    let out = p.path().join("demo.html");
    p.ladder()
        .args(["report", "-o"])
        .arg(&out)
        .arg(repo().join("baselines/demo.csv"))
        .assert()
        .success();
    let html = std::fs::read_to_string(&out).unwrap();
    let doc = parse(&html);
    let knee = first_at(&doc, |n| {
        n.tag_name().name() == "li"
            && n.text()
                .is_some_and(|t| t.starts_with("TTFT knee in (10, 20] streams"))
    })
    .expect("the knee line");
    assert!(knee < first_chart(&doc), "the knee line comes first");
    assert!(
        with_class(&doc, "verdict-grid").is_empty(),
        "no baseline, no grid"
    );
}

#[test]
fn report_input_errors_exit_2_and_write_nothing() {
    let p = Project::new();
    p.ladder()
        .args(["report", "nope"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("nope does not exist"));
    p.ladder()
        .args(["report", "--format", "markdown"])
        .arg(repo().join("baselines/demo.csv"))
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--trend"));
    assert!(!p.path().join("report.html").exists());
}
