//! JUnit XML for CI test dashboards: one `<testsuite>` per model, one `<testcase>` per gated
//! check ("step 20 · TTFT P90"), `<failure>` for a regression, `<skipped>` for a gate without
//! enough data or an inconclusive one (a `<failure type="inconclusive">` under `--strict`). A refused comparison is one failing "workload" test carrying the diff, and
//! models or steps present on one side only appear as skipped tests, so nothing is hidden. A
//! side that did not finish is a failing "completeness" test (`type="incomplete"`), and a step
//! whose client did not keep up a failing "client" test (`type="invalid"`): its checks are
//! skipped with the cause, and the comparison cannot pass.
//! Warnings about the inputs (a run that did not finish) are a `ladder.warning` property of
//! every suite, and warnings and notes are its `<system-out>`, which GitLab and Jenkins show.

use std::fmt::Write as _;
use std::io::{self, Write};

use crate::compare::{Check, Comparison, Verdict};

struct Case {
    name: String,
    body: CaseBody,
}

enum CaseBody {
    Pass,
    Failure {
        kind: &'static str,
        message: String,
        text: String,
    },
    Skipped {
        message: String,
    },
}

struct Suite {
    name: String,
    cases: Vec<Case>,
}

impl Suite {
    fn count(&self, f: fn(&CaseBody) -> bool) -> usize {
        self.cases.iter().filter(|c| f(&c.body)).count()
    }
}

fn is_failure(b: &CaseBody) -> bool {
    matches!(b, CaseBody::Failure { .. })
}

fn is_skipped(b: &CaseBody) -> bool {
    matches!(b, CaseBody::Skipped { .. })
}

/// Inconclusive checks fail the build under `--strict` (exit 4) and are skipped otherwise.
fn case(k: &Check, strict: bool) -> Case {
    let body = match &k.verdict {
        Verdict::Regressed => CaseBody::Failure {
            kind: "regression",
            message: format!("{} regressed", k.name()),
            text: k.detail.clone(),
        },
        Verdict::Inconclusive { .. } if strict => CaseBody::Failure {
            kind: "inconclusive",
            message: format!("{} is inconclusive", k.name()),
            text: k.detail.clone(),
        },
        Verdict::Inconclusive { .. } => CaseBody::Skipped {
            message: k.detail.clone(),
        },
        Verdict::Skipped { reason } => CaseBody::Skipped {
            message: reason.clone(),
        },
        _ => CaseBody::Pass,
    };
    Case {
        name: k.title(),
        body,
    }
}

fn suites(c: &Comparison) -> Vec<Suite> {
    if let Some(r) = &c.refused {
        let case = Case {
            name: "fingerprint".into(),
            body: CaseBody::Failure {
                kind: "workload_mismatch",
                message: format!(
                    "the workloads differ (fingerprint {} vs {})",
                    r.base_fp, r.new_fp
                ),
                text: r.unified_diff.clone(),
            },
        };
        return vec![Suite {
            name: "workload".into(),
            cases: vec![case],
        }];
    }
    let mut out: Vec<Suite> = Vec::new();
    for k in c.checks.iter().filter(|k| k.gated) {
        match out.last_mut() {
            Some(s) if s.name == k.model => s.cases.push(case(k, c.strict)),
            _ => out.push(Suite {
                name: k.model.clone(),
                cases: vec![case(k, c.strict)],
            }),
        }
    }
    if !c.unmatched.is_empty() {
        let cases = c
            .unmatched
            .iter()
            .map(|u| Case {
                name: u.clone(),
                body: CaseBody::Skipped {
                    message: "not compared".into(),
                },
            })
            .collect();
        out.push(Suite {
            name: "unmatched".into(),
            cases,
        });
    }
    // A side that did not finish fails the build (exit 1 or 3): one failing test per side, so
    // CI dashboards show why even when every gated check passed.
    if !c.incomplete.is_empty() {
        let cases = c
            .incomplete
            .iter()
            .map(|why| Case {
                name: "run complete".into(),
                body: CaseBody::Failure {
                    kind: "incomplete",
                    message: format!("the run is incomplete: {why}"),
                    text: "An unfinished run is never a pass: rerun it to the end.".into(),
                },
            })
            .collect();
        out.push(Suite {
            name: "completeness".into(),
            cases,
        });
    }
    if !c.invalid.is_empty() {
        let cases = c
            .invalid
            .iter()
            .map(|i| Case {
                name: format!("{} · client kept up {} ({} side)", i.model, i.ladder_unit.at(i.concurrency), i.side),
                body: CaseBody::Failure {
                    kind: "invalid",
                    message: i.sentence.clone(),
                    text: "A step whose client did not keep up is invalid for the gate: its checks are set aside (inconclusive), and the comparison cannot pass.".into(),
                },
            })
            .collect();
        out.push(Suite {
            name: "client".into(),
            cases,
        });
    }
    out
}

pub(super) fn render(c: &Comparison, warnings: &[String], out: &mut dyn Write) -> io::Result<()> {
    let suites = suites(c);
    let total: usize = suites.iter().map(|s| s.cases.len()).sum();
    let failures: usize = suites.iter().map(|s| s.count(is_failure)).sum();
    // `<testsuites>` carries only the attributes Jenkins' junit-10.xsd allows there (no
    // `skipped`); each `<testsuite>` carries its own skipped count.
    let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        x,
        "<testsuites name=\"ladder diff\" tests=\"{total}\" failures=\"{failures}\" errors=\"0\">"
    );
    for s in &suites {
        let _ = writeln!(
            x,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\">",
            escape(&s.name),
            s.cases.len(),
            s.count(is_failure),
            s.count(is_skipped)
        );
        if !warnings.is_empty() {
            x.push_str("    <properties>\n");
            for w in warnings {
                let _ = writeln!(
                    x,
                    "      <property name=\"ladder.warning\" value=\"{}\"/>",
                    escape(w)
                );
            }
            x.push_str("    </properties>\n");
        }
        for k in &s.cases {
            let head = format!(
                "    <testcase classname=\"ladder.{}\" name=\"{}\"",
                escape(&s.name),
                escape(&k.name)
            );
            match &k.body {
                CaseBody::Pass => {
                    let _ = writeln!(x, "{head}/>");
                }
                CaseBody::Failure {
                    kind,
                    message,
                    text,
                } => {
                    let _ = writeln!(
                        x,
                        "{head}>\n      <failure message=\"{}\" type=\"{kind}\">{}</failure>\n    </testcase>",
                        escape(message),
                        escape(text)
                    );
                }
                CaseBody::Skipped { message } => {
                    let _ = writeln!(
                        x,
                        "{head}>\n      <skipped message=\"{}\"/>\n    </testcase>",
                        escape(message)
                    );
                }
            }
        }
        let said: Vec<String> = warnings
            .iter()
            .map(|w| format!("warning: {w}"))
            .chain(c.notes.iter().cloned())
            .collect();
        if !said.is_empty() {
            let _ = writeln!(
                x,
                "    <system-out>{}</system-out>",
                escape(&said.join("\n"))
            );
        }
        x.push_str("  </testsuite>\n");
    }
    x.push_str("</testsuites>\n");
    out.write_all(x.as_bytes())
}

use crate::render::xml::escape;
