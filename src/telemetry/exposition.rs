//! The Prometheus text exposition format (version 0.0.4) of the live metrics: what
//! `--metrics-addr` answers on `/metrics`. Pure: families in, text out.

use super::registry::Family;
use std::fmt::Write as _;

/// The `Content-Type` of the text format.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Renders `families`: `# HELP` and `# TYPE` lines, then one line per sample. Families without
/// samples keep their `# HELP`/`# TYPE` lines, so a scrape before the first request still says
/// which series will come.
pub fn render(families: &[Family]) -> String {
    let mut out = String::new();
    for f in families {
        let _ = writeln!(out, "# HELP {} {}", f.name, escape_help(f.help));
        let _ = writeln!(out, "# TYPE {} {}", f.name, f.kind.as_str());
        for s in &f.samples {
            out.push_str(&s.name);
            if !s.labels.is_empty() {
                out.push('{');
                for (i, (k, v)) in s.labels.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    let _ = write!(out, "{k}=\"{}\"", escape_label(v));
                }
                out.push('}');
            }
            let _ = writeln!(out, " {}", number(s.value));
        }
    }
    out
}

/// A label value: backslash, double quote and line feed escaped.
fn escape_label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn escape_help(v: &str) -> String {
    v.replace('\\', "\\\\").replace('\n', "\\n")
}

/// A sample value as Prometheus parses it (`+Inf`, `NaN`, shortest round-trip decimal).
fn number(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::super::registry::{Kind, Sample};
    use super::*;

    #[test]
    fn renders_help_type_and_escaped_labels() {
        let f = Family {
            name: "ladder_requests_total",
            help: "Requests.",
            kind: Kind::Counter,
            samples: vec![Sample {
                name: "ladder_requests_total".into(),
                labels: vec![("model", "a\"b\\c\nd".into()), ("outcome", "ok".into())],
                value: 3.0,
            }],
        };
        let text = render(&[f]);
        assert_eq!(
            text,
            "# HELP ladder_requests_total Requests.\n\
             # TYPE ladder_requests_total counter\n\
             ladder_requests_total{model=\"a\\\"b\\\\c\\nd\",outcome=\"ok\"} 3\n"
        );
        assert_eq!(number(0.25), "0.25");
        assert_eq!(number(f64::INFINITY), "+Inf");
    }
}
