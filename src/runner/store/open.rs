//! The store factory: which [`PlanStore`] backend a URL names. It lives
//! beside the backends (it names each of them), not in the trait's file,
//! so the trait depends on no backend.

use std::path::Path;
use std::sync::Arc;

use serde_json::json;

use crate::runner::error::{ErrorCode, OpError};

use super::json::{JsonDirStore, JsonFileStore};
use super::plan_store::PlanStore;

/// Opens the store a URL names:
///
/// - `sqlite:PATH` (or `sqlite://PATH`): many plans in one SQLite file
///   (created when missing);
/// - `postgres://…` or `postgresql://…`: many plans in a PostgreSQL
///   database, shared by every process that opens it;
/// - `dir:PATH`, or the path of an existing directory: one JSON state
///   file per plan (`PLAN_ID.json`, its lock and event log beside it);
/// - any other path (or `file:PATH`): one JSON state file holding one plan.
pub fn open_store(url: &str) -> Result<Arc<dyn PlanStore>, OpError> {
    if let Some(path) = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))
    {
        return open_sqlite(path);
    }
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        return open_postgres(url);
    }
    if let Some(path) = url.strip_prefix("dir:") {
        return Ok(Arc::new(JsonDirStore::open(Path::new(path))?));
    }
    if let Some(path) = url.strip_prefix("file:") {
        return Ok(Arc::new(JsonFileStore::new(Path::new(path))));
    }
    if let Some((scheme, _)) = url.split_once("://") {
        return Err(OpError::new(
            ErrorCode::InvalidArgument,
            format!(
                "unknown store URL scheme `{}`: give sqlite:PATH, postgres://…, dir:PATH or a state file",
                crate::escape::line(scheme)
            ),
        )
        .with(json!({"url": url})));
    }
    if url.is_empty() {
        return Err(OpError::new(
            ErrorCode::InvalidArgument,
            "the store URL is empty; give sqlite:PATH, postgres://…, dir:PATH or a state file",
        ));
    }
    let path = Path::new(url);
    if path.is_dir() {
        return Ok(Arc::new(JsonDirStore::open(path)?));
    }
    Ok(Arc::new(JsonFileStore::new(path)))
}

#[cfg(feature = "sqlite")]
fn open_sqlite(path: &str) -> Result<Arc<dyn PlanStore>, OpError> {
    if path.is_empty() {
        return Err(OpError::new(
            ErrorCode::InvalidArgument,
            "the SQLite store needs a file: sqlite:PATH",
        ));
    }
    Ok(Arc::new(super::sqlite::SqliteStore::open(Path::new(path))?))
}

#[cfg(feature = "postgres")]
fn open_postgres(url: &str) -> Result<Arc<dyn PlanStore>, OpError> {
    Ok(Arc::new(super::postgres::PostgresStore::open(url)?))
}

#[cfg(not(feature = "sqlite"))]
fn open_sqlite(_path: &str) -> Result<Arc<dyn PlanStore>, OpError> {
    Err(not_built("SQLite", "sqlite"))
}

#[cfg(not(feature = "postgres"))]
fn open_postgres(_url: &str) -> Result<Arc<dyn PlanStore>, OpError> {
    Err(not_built("PostgreSQL", "postgres"))
}

/// The refusal of a backend this build of planc leaves out.
#[cfg(not(all(feature = "sqlite", feature = "postgres")))]
fn not_built(backend: &str, feature: &str) -> OpError {
    OpError::new(
        ErrorCode::InvalidArgument,
        format!(
            "this build of planc has no {backend} store: build it with the `{feature}` feature"
        ),
    )
}
