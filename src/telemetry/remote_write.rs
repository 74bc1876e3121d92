//! Prometheus remote write (protocol 1.0, as k6's output speaks it): the live metrics as a
//! protobuf `prometheus.WriteRequest`, snappy-compressed (block format), POSTed with
//! `Content-Encoding: snappy` and `X-Prometheus-Remote-Write-Version: 0.1.0`. Histograms go as
//! their classic `_bucket{le}`/`_sum`/`_count` series, so `histogram_quantile` works on them.
//!
//! The messages are declared here with `prost`'s derive (field numbers of Prometheus'
//! `prompb/types.proto` and `remote.proto`); no code generation step.

use super::registry::{Family, Sample};

/// `prometheus.Label`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Label {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub value: String,
}

/// `prometheus.Sample`: value and timestamp (ms since the Unix epoch).
#[derive(Clone, PartialEq, prost::Message)]
pub struct PbSample {
    #[prost(double, tag = "1")]
    pub value: f64,
    #[prost(int64, tag = "2")]
    pub timestamp: i64,
}

/// `prometheus.TimeSeries`: labels sorted by name, `__name__` among them.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TimeSeries {
    #[prost(message, repeated, tag = "1")]
    pub labels: Vec<Label>,
    #[prost(message, repeated, tag = "2")]
    pub samples: Vec<PbSample>,
}

/// `prometheus.WriteRequest` (field 3, metadata, is not sent).
#[derive(Clone, PartialEq, prost::Message)]
pub struct WriteRequest {
    #[prost(message, repeated, tag = "1")]
    pub timeseries: Vec<TimeSeries>,
}

/// Prometheus' staleness marker: the NaN that tells a series ended (`value.StaleNaN`).
pub const STALE_NAN: u64 = 0x7ff0_0000_0000_0002;

/// The headers of a push, besides `Content-Type: application/x-protobuf`.
pub const HEADERS: [(&str, &str); 3] = [
    ("Content-Type", "application/x-protobuf"),
    ("Content-Encoding", "snappy"),
    ("X-Prometheus-Remote-Write-Version", "0.1.0"),
];

/// One series per sample of `families`, and one staleness marker per sample of `ended`, all at
/// `timestamp_ms`.
pub fn write_request(families: &[Family], ended: &[Sample], timestamp_ms: i64) -> WriteRequest {
    let series = |s: &Sample, value: f64| {
        let mut labels: Vec<Label> = std::iter::once(("__name__", s.name.clone()))
            .chain(s.labels.iter().map(|(k, v)| (*k, v.clone())))
            .map(|(name, value)| Label {
                name: name.to_string(),
                value,
            })
            .collect();
        labels.sort_by(|a, b| a.name.cmp(&b.name));
        TimeSeries {
            labels,
            samples: vec![PbSample {
                value,
                timestamp: timestamp_ms,
            }],
        }
    };
    let timeseries = families
        .iter()
        .flat_map(|f| &f.samples)
        .map(|s| series(s, s.value))
        .chain(ended.iter().map(|s| series(s, f64::from_bits(STALE_NAN))))
        .collect();
    WriteRequest { timeseries }
}

/// The request body: the protobuf encoding, snappy-compressed in the block format.
pub fn body(request: &WriteRequest) -> Vec<u8> {
    let raw = prost::Message::encode_to_vec(request);
    // Compressing into a Vec cannot fail but for inputs over 2^32 bytes, far beyond a push.
    snap::raw::Encoder::new()
        .compress_vec(&raw)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::super::registry::Kind;
    use super::*;

    #[test]
    fn encodes_sorted_labels_with_the_name_and_round_trips_through_snappy() {
        let fam = Family {
            name: "ladder_in_flight",
            help: "",
            kind: Kind::Gauge,
            samples: vec![Sample {
                name: "ladder_in_flight".into(),
                labels: vec![("step", "2".into()), ("model", "m".into())],
                value: 7.0,
            }],
        };
        let req = write_request(std::slice::from_ref(&fam), &fam.samples, 1_700_000_000_000);
        assert_eq!(req.timeseries.len(), 2);
        let names: Vec<&str> = req.timeseries[0]
            .labels
            .iter()
            .map(|l| l.name.as_str())
            .collect();
        assert_eq!(names, ["__name__", "model", "step"]);
        assert_eq!(req.timeseries[1].samples[0].value.to_bits(), STALE_NAN);
        let bytes = body(&req);
        let raw = snap::raw::Decoder::new().decompress_vec(&bytes).unwrap();
        let back: WriteRequest = prost::Message::decode(raw.as_slice()).unwrap();
        assert_eq!(back.timeseries[0].samples[0].value, 7.0);
        assert_eq!(back.timeseries[0].samples[0].timestamp, 1_700_000_000_000);
        assert_eq!(back.timeseries[0].labels[0].value, "ladder_in_flight");
        // Field 1 (timeseries), wire type 2: the first byte of a WriteRequest.
        assert_eq!(raw[0], 0x0a);
    }
}
