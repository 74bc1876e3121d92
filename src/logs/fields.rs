//! Which field of a log row is which (`--map start=ts,ttft_ms=ttfb`), the presets for known
//! logs (LiteLLM, Envoy), and how a cell becomes a time or a duration: epoch seconds,
//! milliseconds, microseconds or nanoseconds told apart by magnitude, RFC 3339 (a time without
//! an offset is read as UTC), durations in the unit the mapping names.

use super::LogError;

/// The facts ladder reads from a log row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Field {
    /// Request start (a time).
    Start,
    /// Request end (a time).
    End,
    /// First token (a time).
    FirstToken,
    /// Time to first token (a duration).
    Ttft,
    /// Start to end (a duration).
    E2e,
    Model,
    /// API key, account or team: in-flight requests are counted per key when it is given.
    Key,
    /// HTTP status, or a word (`success`, `failure`, `ok`, `error`).
    Status,
    /// Error code, class or message: non-empty means the request failed.
    Error,
    InputTokens,
    OutputTokens,
    /// A numeric request sequence number: gaps mean the log lacks requests.
    Id,
}

impl Field {
    const NAMES: [(&'static str, Field); 12] = [
        ("start", Field::Start),
        ("end", Field::End),
        ("first_token", Field::FirstToken),
        ("ttft", Field::Ttft),
        ("e2e", Field::E2e),
        ("model", Field::Model),
        ("key", Field::Key),
        ("status", Field::Status),
        ("error", Field::Error),
        ("input_tokens", Field::InputTokens),
        ("output_tokens", Field::OutputTokens),
        ("id", Field::Id),
    ];

    fn is_duration(self) -> bool {
        matches!(self, Field::Ttft | Field::E2e)
    }
}

/// The unit a mapping gives a cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Times: epoch by magnitude or RFC 3339. Durations: milliseconds.
    Auto,
    Seconds,
    Millis,
}

/// One mapped field: the source column (or dotted JSON path), alternatives separated by `|`.
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    pub field: Field,
    pub unit: Unit,
    pub columns: Vec<String>,
}

/// A whole mapping: which source column gives each field.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Mapping {
    pub sources: Vec<Source>,
}

impl Mapping {
    /// The default names of a generic log: the field names themselves.
    pub fn identity() -> Mapping {
        let mut m = Mapping::default();
        for (name, field) in Field::NAMES {
            let unit = if field.is_duration() {
                Unit::Millis
            } else {
                Unit::Auto
            };
            let columns = if field.is_duration() {
                vec![format!("{name}_ms")]
            } else {
                vec![name.to_string()]
            };
            m.sources.push(Source {
                field,
                unit,
                columns,
            });
        }
        m
    }

    /// LiteLLM's `StandardLoggingPayload` (what its callbacks receive as
    /// `standard_logging_object`) and its spend-log rows: epoch-second floats or ISO times.
    pub fn litellm() -> Mapping {
        Mapping::parse(
            "start=startTime,end=endTime,first_token=completionStartTime,\
             model=model_group|model,key=metadata.user_api_key_hash|api_key,\
             status=status,error=error_information.error_code|error_str,\
             input_tokens=prompt_tokens,output_tokens=completion_tokens",
        )
        .expect("the LiteLLM preset parses")
    }

    /// Envoy's (and Envoy AI Gateway's) JSON access log with its default field names:
    /// `start_time`, `duration` (ms) and `response_duration` (ms to the first upstream response
    /// byte: the time to first token of a stream).
    pub fn envoy() -> Mapping {
        Mapping::parse(
            "start=start_time,e2e_ms=duration,ttft_ms=response_duration,\
             status=response_code,model=model|x-ai-eg-model|request_model,\
             input_tokens=input_tokens,output_tokens=output_tokens",
        )
        .expect("the Envoy preset parses")
    }

    /// `start=ts,ttft_ms=ttfb,e2e_s=duration,model=model_group|model`: each item names a field
    /// (with `_ms`/`_s` for a unit) and the column(s) it comes from.
    pub fn parse(spec: &str) -> Result<Mapping, LogError> {
        let mut m = Mapping::default();
        for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (name, cols) = item.split_once('=').ok_or_else(|| bad_map(item))?;
            let (field, unit) = field_of(name.trim()).ok_or_else(|| bad_map(item))?;
            let columns: Vec<String> = cols
                .split('|')
                .map(|c| c.trim().to_string())
                .filter(|c| !c.is_empty())
                .collect();
            if columns.is_empty() {
                return Err(bad_map(item));
            }
            m.sources.retain(|s| s.field != field);
            m.sources.push(Source {
                field,
                unit,
                columns,
            });
        }
        Ok(m)
    }

    /// This mapping with `over`'s items replacing its own for the same fields.
    pub fn with(mut self, over: Mapping) -> Mapping {
        for s in over.sources {
            self.sources.retain(|x| x.field != s.field);
            self.sources.push(s);
        }
        self
    }

    pub fn source(&self, field: Field) -> Option<&Source> {
        self.sources.iter().find(|s| s.field == field)
    }
}

fn field_of(name: &str) -> Option<(Field, Unit)> {
    let (base, unit) = if let Some(b) = name.strip_suffix("_ms") {
        (b, Unit::Millis)
    } else if let Some(b) = name.strip_suffix("_s") {
        (b, Unit::Seconds)
    } else {
        (name, Unit::Auto)
    };
    let field = Field::NAMES.iter().find(|(n, _)| *n == base)?.1;
    let unit = match (field.is_duration(), unit) {
        (true, Unit::Auto) => Unit::Millis,
        (_, u) => u,
    };
    Some((field, unit))
}

fn bad_map(item: &str) -> LogError {
    let names: Vec<&str> = Field::NAMES.iter().map(|(n, _)| *n).collect();
    LogError::Usage(format!(
        "--map: `{item}` is not FIELD=COLUMN; fields are {} (times and durations may end in _s \
         or _ms, e.g. ttft_ms=ttfb, e2e_s=duration)",
        names.join(", ")
    ))
}

/// A cell read as text or a number.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Text(String),
    Number(f64),
}

/// Epoch milliseconds of a time cell. Numbers: seconds below 1e11, milliseconds below 1e14,
/// microseconds below 1e17, else nanoseconds (unless the mapping names the unit). Text: a number
/// as above, or RFC 3339 (without an offset: UTC).
pub fn time_ms(cell: &Cell, unit: Unit) -> Option<f64> {
    let n = match cell {
        Cell::Number(n) => *n,
        Cell::Text(t) => match t.trim().parse::<f64>() {
            Ok(n) => n,
            Err(_) => return rfc3339_or_naive(t.trim()),
        },
    };
    if !n.is_finite() || n < 0.0 {
        return None;
    }
    Some(match unit {
        Unit::Seconds => n * 1000.0,
        Unit::Millis => n,
        Unit::Auto if n < 1e11 => n * 1000.0,
        Unit::Auto if n < 1e14 => n,
        Unit::Auto if n < 1e17 => n / 1000.0,
        Unit::Auto => n / 1e6,
    })
}

fn rfc3339_or_naive(t: &str) -> Option<f64> {
    crate::util::timestamp::rfc3339_ms(t).or_else(|| {
        let has_offset =
            t.ends_with(['Z', 'z']) || t.get(19..).is_some_and(|r| r.contains(['+', '-']));
        (!has_offset)
            .then(|| crate::util::timestamp::rfc3339_ms(&format!("{t}Z")))
            .flatten()
    })
}

/// Milliseconds of a duration cell in `unit` (`Auto` means milliseconds).
pub fn duration_ms(cell: &Cell, unit: Unit) -> Option<f64> {
    let n = match cell {
        Cell::Number(n) => *n,
        Cell::Text(t) => t.trim().parse::<f64>().ok()?,
    };
    n.is_finite().then_some(match unit {
        Unit::Seconds => n * 1000.0,
        Unit::Millis | Unit::Auto => n,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mapping_names_fields_units_and_alternatives() {
        let m = Mapping::parse("start=ts, ttft_s=ttfb ,model=a|b").unwrap();
        let ttft = m.source(Field::Ttft).unwrap();
        assert_eq!(
            (ttft.unit, ttft.columns.clone()),
            (Unit::Seconds, vec!["ttfb".into()])
        );
        assert_eq!(m.source(Field::Model).unwrap().columns, ["a", "b"]);
        assert_eq!(m.source(Field::Start).unwrap().unit, Unit::Auto);
        let err = Mapping::parse("begin=ts").unwrap_err().to_string();
        assert!(err.contains("`begin=ts`") && err.contains("start"), "{err}");
        assert!(Mapping::parse("start=").is_err());
        let over = Mapping::identity().with(Mapping::parse("start=ts").unwrap());
        assert_eq!(over.source(Field::Start).unwrap().columns, ["ts"]);
        assert_eq!(over.source(Field::E2e).unwrap().columns, ["e2e_ms"]);
    }

    #[test]
    fn times_are_told_apart_by_magnitude_and_text() {
        let s = 1_764_000_000.5;
        for (cell, want) in [
            (Cell::Number(s), s * 1000.0),
            (Cell::Number(s * 1000.0), s * 1000.0),
            (Cell::Number(s * 1e6), s * 1000.0),
            (Cell::Text(format!("{}", s * 1e9)), s * 1000.0),
            (Cell::Text("1970-01-01T00:00:01.5Z".into()), 1500.0),
            (Cell::Text("1970-01-01T00:00:01.5".into()), 1500.0),
            (Cell::Text("1970-01-01 01:00:01+01:00".into()), 1000.0),
        ] {
            let got = time_ms(&cell, Unit::Auto).unwrap();
            assert!((got - want).abs() < 1e-3 * want.max(1.0), "{cell:?}: {got}");
        }
        assert_eq!(time_ms(&Cell::Number(2.0), Unit::Millis), Some(2.0));
        assert_eq!(time_ms(&Cell::Text("noon".into()), Unit::Auto), None);
        assert_eq!(duration_ms(&Cell::Number(1.5), Unit::Seconds), Some(1500.0));
        assert_eq!(
            duration_ms(&Cell::Text("250".into()), Unit::Auto),
            Some(250.0)
        );
    }
}
