//! File-system primitives of the store: atomic writes (temp file, fsync, rename), JSON files,
//! UTC timestamps and the host name recorded in `meta.json`.

use super::StoreError;
use serde::Serialize;
use std::fs;
use std::io::{self, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Writes `bytes` to `path` atomically: parent directories are created, the bytes go to
/// `.{file}.tmp.{pid}.{counter}` in the same directory, are fsynced, then renamed over `path`.
/// On any error the temp file is removed and `path` keeps its previous content (if any).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let file_name = path.file_name().ok_or_else(|| {
        let e = io::Error::new(io::ErrorKind::InvalidInput, "the path has no file name");
        StoreError::io("write", path, e)
    })?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    fs::create_dir_all(dir).map_err(|e| StoreError::io("create directory", dir, e))?;
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let tmp = dir.join(format!(
        ".{}.tmp.{}.{n}",
        file_name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| {
        let mut f = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| StoreError::io("create temporary file", &tmp, e))?;
        f.write_all(bytes)
            .map_err(|e| StoreError::io("write", &tmp, e))?;
        f.sync_all().map_err(|e| StoreError::io("sync", &tmp, e))?;
        drop(f);
        fs::rename(&tmp, path).map_err(|e| StoreError::io("replace", path, e))
    })();
    match result {
        Ok(()) => {
            // Best effort: make the rename itself durable (not supported everywhere).
            if let Ok(d) = fs::File::open(dir) {
                let _ = d.sync_all();
            }
            Ok(())
        }
        Err(e) => {
            let _ = fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// `2026-11-29T18:30:05Z`; times outside 1970..=9999 are clamped (humantime panics on them).
pub fn rfc3339_utc(t: SystemTime) -> String {
    const MAX_SECS: u64 = 253_402_300_799; // last second of year 9999
    let secs = t
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
        .min(MAX_SECS);
    humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_secs(secs)).to_string()
}

/// Host name from `/etc/hostname`, else `$HOSTNAME`, else `unknown`.
pub fn host_name() -> String {
    let from_file = fs::read_to_string("/etc/hostname").ok();
    let from_env = std::env::var("HOSTNAME").ok();
    [from_file, from_env]
        .into_iter()
        .flatten()
        .map(|s| s.trim().to_string())
        .find(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".to_string())
}

pub(super) fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), StoreError> {
    let mut bytes = serde_json::to_vec_pretty(value).map_err(|e| StoreError::Json {
        path: path.to_path_buf(),
        error: e.to_string(),
    })?;
    bytes.push(b'\n');
    write_atomic(path, &bytes)
}
