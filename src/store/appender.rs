//! `requests.csv` written as a run goes: each record is appended when its request ends, so a run
//! killed at any moment (`kill -9`, OOM, CI timeout) leaves every record older than about a
//! second on disk. Rows are buffered in memory and written whole (a crash can tear at most the
//! last row, which readers of incomplete runs drop) at least every second and at each step end.

use super::csv_io::Records;
use super::requests_csv::{append_request_row, requests_csv_header};
use super::StoreError;
use crate::model::RequestRecord;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;
// tokio's clock (the std clock outside a runtime), so a paused test clock drives flushing too.
use tokio::time::Instant;

/// Longest time a finished record waits in memory before it is written.
pub const FLUSH_EVERY: Duration = Duration::from_secs(1);

/// Appends rows to a run's `requests.csv`.
pub struct RequestsAppender {
    path: PathBuf,
    file: File,
    rows: Records,
    last_flush: Instant,
}

impl RequestsAppender {
    /// Creates `path` (which must not exist) with the header line already on disk.
    pub fn create(path: &Path) -> Result<Self, StoreError> {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| StoreError::io("create", path, e))?;
        file.write_all(&requests_csv_header())
            .map_err(|e| StoreError::io("write", path, e))?;
        Ok(RequestsAppender {
            path: path.to_path_buf(),
            file,
            rows: Records::new(),
            last_flush: Instant::now(),
        })
    }

    /// Buffers one row; writes the buffer when the last write is [`FLUSH_EVERY`] old.
    pub fn push(&mut self, r: &RequestRecord) -> Result<(), StoreError> {
        append_request_row(&mut self.rows, r);
        self.flush_if_due()
    }

    /// Writes the buffer if the last write is [`FLUSH_EVERY`] old.
    pub fn flush_if_due(&mut self) -> Result<(), StoreError> {
        if self.last_flush.elapsed() >= FLUSH_EVERY {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes every buffered row (whole rows only, in one write).
    pub fn flush(&mut self) -> Result<(), StoreError> {
        self.last_flush = Instant::now();
        let buf = self.rows.take();
        if buf.is_empty() {
            return Ok(());
        }
        let result = self.file.write_all(&buf);
        result.map_err(|e| StoreError::io("append to", &self.path, e))
    }

    /// Flushes and makes the file durable (end of run).
    pub fn finish(mut self) -> Result<(), StoreError> {
        self.flush()?;
        self.file
            .sync_all()
            .map_err(|e| StoreError::io("sync", &self.path, e))
    }
}

#[cfg(test)]
mod tests {
    use super::super::{read_requests_csv, requests_csv};
    use super::*;
    use crate::store::requests_csv::tests::request;

    #[test]
    fn appended_rows_read_back_and_a_torn_last_row_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("requests.csv");
        let mut a = RequestsAppender::create(&path).unwrap();
        let records: Vec<RequestRecord> = (0..3).map(|i| request("m", 1, 0, i)).collect();
        for r in &records {
            a.push(r).unwrap();
        }
        a.flush().unwrap();
        // Same bytes as the whole-file writer (one model, one step, in order).
        assert_eq!(std::fs::read(&path).unwrap(), requests_csv(&records));
        assert!(RequestsAppender::create(&path).is_err(), "never overwrites");
        a.finish().unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        let full = bytes.len();
        bytes.truncate(full - 30);
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(read_requests_csv(&path, true).unwrap().len(), 2);
        assert!(read_requests_csv(&path, false).is_err());
    }

    /// The crash-safety promise in pretend time (the e2e kill tests wait for the rows instead):
    /// a record waits in memory less than `FLUSH_EVERY`, then the next push or tick writes it.
    #[tokio::test(start_paused = true)]
    async fn a_record_reaches_the_disk_within_flush_every() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("requests.csv");
        let rows = || read_requests_csv(&path, true).unwrap().len();
        let mut a = RequestsAppender::create(&path).unwrap();
        a.push(&request("m", 1, 0, 0)).unwrap();
        tokio::time::advance(FLUSH_EVERY - Duration::from_millis(1)).await;
        a.flush_if_due().unwrap();
        assert_eq!(rows(), 0, "buffered until the interval is up");
        tokio::time::advance(Duration::from_millis(1)).await;
        a.flush_if_due().unwrap();
        assert_eq!(rows(), 1, "a tick at FLUSH_EVERY writes it");
        // A push after a quiet second writes at once, itself included.
        tokio::time::advance(FLUSH_EVERY).await;
        a.push(&request("m", 1, 0, 1)).unwrap();
        assert_eq!(rows(), 2);
    }
}
