//! Reads `timeline.csv` back (`ladder logs` writes it through `render::timeline::csv`): what
//! `plan` needs from a log's minutes, the requests in flight each minute needed without
//! queueing. Older files without `needed_in_flight` read as minutes with no need.

use super::csv_io::read_csv;
use super::StoreError;
use std::path::Path;

/// One group's minute, as `plan` reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct TimelineMinute {
    /// The model (and key, `model [key]`) the minute belongs to.
    pub group: String,
    /// The minute as written: an RFC 3339 time.
    pub minute: String,
    pub requests: u64,
    /// Requests in flight its arrivals needed without queueing; `None` in older files.
    pub needed_in_flight: Option<f64>,
}

/// The minutes of `timeline.csv` at `path`, in file order.
pub fn read_timeline_csv(path: &Path) -> Result<Vec<TimelineMinute>, StoreError> {
    read_csv(
        path,
        "timeline CSV",
        &["model", "minute", "requests"],
        false,
        |row| {
            Ok(TimelineMinute {
                group: row.text("model"),
                minute: row.text("minute"),
                requests: row.parse("requests", "a count")?,
                needed_in_flight: row.opt("needed_in_flight", "a number")?,
            })
        },
    )
}
