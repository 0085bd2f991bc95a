//! A SQLite store on read-only media (a read-only mount, a file or
//! directory this process may not write): opened read-only, immutable when
//! SQLite could not otherwise read it without writing a lock or a `-shm`.
//! Reads work; every change is refused with `STATE_IO` (`access: write`).

use std::path::Path;

use rusqlite::{Connection, OpenFlags};
use serde_json::json;

use crate::runner::error::{ErrorCode, OpError};

/// Whether the store at `path` exists but cannot be written: the file, or
/// the directory its journal files would go in, is not writable (a
/// read-only mount answers so even to root).
pub fn cannot_write(path: &Path) -> bool {
    if !path.is_file() {
        return false;
    }
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    !writable(path) || !writable(dir)
}

#[cfg(unix)]
fn writable(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(name) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: access(2) reads a NUL-terminated path and nothing else.
    unsafe { libc::access(name.as_ptr(), libc::W_OK) == 0 }
}

#[cfg(not(unix))]
fn writable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.permissions().readonly())
}

/// A read-only connection to the database at `path`: as it is, with its
/// `-wal` (which may hold the latest commits) when SQLite can read that
/// without writing; else `immutable=1`, which needs no lock, `-wal` nor
/// `-shm` (a store closed cleanly has its commits in the file itself).
pub fn connect(path: &Path) -> Result<Connection, OpError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let open = |query: &str| {
        let conn = Connection::open_with_flags(format!("file:{}?{query}", uri_path(path)), flags)?;
        conn.query_row("SELECT count(*) FROM sqlite_master", [], |row| {
            row.get::<_, i64>(0)
        })?;
        Ok::<_, rusqlite::Error>(conn)
    };
    open("mode=ro")
        .or_else(|_| open("mode=ro&immutable=1"))
        .map_err(|e| {
            OpError::new(
                ErrorCode::StateIo,
                format!("cannot read the SQLite store {}: {e}", path.display()),
            )
            .with(json!({"path": path.display().to_string(), "access": "read"}))
        })
}

/// Refuses a database whose schema is not `version` (a read-only store
/// cannot be brought up to date).
pub fn check_schema(conn: &Connection, path: &Path, version: i64) -> Result<(), OpError> {
    let found: Option<i64> = conn
        .query_row("SELECT MAX(version) FROM schema_version", [], |row| {
            row.get(0)
        })
        .unwrap_or(None);
    if found == Some(version) {
        return Ok(());
    }
    Err(OpError::new(
        ErrorCode::InvalidState,
        format!(
            "{} is read-only and has schema version {}, not {version}: open it once where it can be written, \
             with this planc, to bring it up to date",
            path.display(),
            found.map_or_else(|| "none".to_owned(), |v| v.to_string())
        ),
    )
    .with(json!({"path": path.display().to_string(), "schema_version": found, "supported": version})))
}

/// The refusal of a change to a read-only store.
pub fn refused(path: &Path) -> OpError {
    OpError::new(
        ErrorCode::StateIo,
        format!(
            "cannot write the SQLite store {}: it is read-only (the file or its directory cannot be written); \
             it can be read, not changed",
            path.display()
        ),
    )
    .with(json!({"path": path.display().to_string(), "access": "write", "read_only": true}))
}

/// `path` as the path of a `file:` URI: `%`, `?` and `#` escaped.
fn uri_path(path: &Path) -> String {
    let mut out = String::new();
    for c in path.to_string_lossy().chars() {
        match c {
            '%' => out.push_str("%25"),
            '?' => out.push_str("%3f"),
            '#' => out.push_str("%23"),
            c => out.push(c),
        }
    }
    out
}
