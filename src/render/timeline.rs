//! `ladder logs`' timeline: the terminal table (with the row where the knee's level was first
//! crossed marked) and `timeline.csv`.

use crate::logs::timeline::clock;
use crate::logs::Minute;
use std::fmt::Write;
use std::time::{Duration, UNIX_EPOCH};

fn ms(v: Option<f64>) -> String {
    match v {
        Some(v) if v >= 1000.0 => format!("{:.2} s", v / 1000.0),
        Some(v) => format!("{v:.0} ms"),
        None => "-".into(),
    }
}

fn compact(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if v >= 1e4 {
        format!("{:.0}k", v / 1e3)
    } else {
        format!("{v:.0}")
    }
}

/// The timeline as a table; `metric` names the latency column (TTFT, or E2E without one).
/// `total tok/min` counts input + output tokens, as account limits do.
pub fn table(rows: &[Minute], knee_above: Option<u32>, metric: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<6} {:>15} {:>8} {:>13} {:>10} {:>10} {:>7}",
        "time",
        "in flight avg/max",
        "req/s",
        "total tok/min",
        format!("{metric} P50"),
        format!("{metric} P90"),
        "errors"
    );
    for m in rows {
        let mark = match (m.knee_crossed, m.ttft_rose, knee_above) {
            (true, true, Some(k)) => {
                format!("  ◀ more than {k} in flight and {metric} rose from here")
            }
            (true, false, Some(k)) => format!("  ◀ more than {k} in flight from here"),
            (false, true, _) => format!("  ◀ {metric} rose from here"),
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "{:<6} {:>15} {:>8.2} {:>13} {:>10} {:>10} {:>7}{mark}",
            clock(m.minute),
            format!("{:.1} / {}", m.in_flight_mean, m.in_flight_max),
            m.rps,
            compact(m.tpm),
            ms(m.ttft_p50_ms),
            ms(m.ttft_p90_ms),
            m.errors
        );
    }
    out
}

/// `timeline.csv`: one row per group and minute, the minute as an RFC 3339 time. `total_tpm`
/// counts input + output tokens, as account limits do.
pub fn csv(groups: &[(String, Vec<Minute>)]) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let _ = w.write_record([
        "model",
        "minute",
        "in_flight_mean",
        "in_flight_max",
        "requests",
        "rps",
        "total_tpm",
        "ttft_p50_ms",
        "ttft_p90_ms",
        "errors",
        "knee_crossed",
        "ttft_rose",
        "needed_in_flight",
    ]);
    let opt = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.1}"));
    for (group, rows) in groups {
        for m in rows {
            let secs = u64::try_from(m.minute.max(0) * 60).unwrap_or(0);
            let _ = w.write_record([
                group.clone(),
                humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_secs(secs))
                    .to_string(),
                format!("{:.2}", m.in_flight_mean),
                m.in_flight_max.to_string(),
                m.requests.to_string(),
                format!("{:.3}", m.rps),
                format!("{:.0}", m.tpm),
                opt(m.ttft_p50_ms),
                opt(m.ttft_p90_ms),
                m.errors.to_string(),
                m.knee_crossed.to_string(),
                m.ttft_rose.to_string(),
                opt(m.needed_in_flight),
            ]);
        }
    }
    w.into_inner().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_crossing_row_is_marked_and_the_csv_parses() {
        let rows = vec![
            Minute {
                minute: 842,
                in_flight_mean: 30.0,
                in_flight_max: 34,
                ttft_p90_ms: Some(600.0),
                ..Minute::default()
            },
            Minute {
                minute: 843,
                in_flight_mean: 66.0,
                in_flight_max: 70,
                ttft_p90_ms: Some(2300.0),
                knee_crossed: true,
                ..Minute::default()
            },
        ];
        let t = table(&rows, Some(64), "TTFT");
        assert!(
            t.lines()
                .nth(2)
                .unwrap()
                .contains("◀ more than 64 in flight"),
            "{t}"
        );
        assert!(t.contains("14:02") && t.contains("2.30 s"));
        let bytes = csv(&[("m".into(), rows)]);
        let mut r = csv::Reader::from_reader(bytes.as_slice());
        let recs: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
        assert_eq!(&recs[1][1], "1970-01-01T14:03:00Z");
        assert_eq!(&recs[1][10], "true");
    }
}
