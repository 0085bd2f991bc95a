//! The paged reads of a plan: `GET /api/plans/{id}/tasks` and
//! `GET /api/plans/{id}/summary` (`task_pages.rs` answers them from the
//! store's kept state, or the document `doc_cache.rs` keeps), and the refusal of paging parameters on
//! `GET /api/plans/{id}`, which is the whole document (the export).

use std::sync::Arc;

use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::json;

use crate::runner::{ErrorCode, OpError};

use super::api::{blocking, ok, op_error};
use super::task_pages::{summary, task_page, TaskQuery};
use super::Shared;

/// `GET /api/plans/{id}/tasks?status=&holder=&held=&step=&q=&id=&after=&offset=&limit=&groups=`:
/// a page of the plan's tasks that pass the filters, in plan order.
pub async fn tasks(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    RawQuery(raw): RawQuery,
) -> Response {
    let query = match TaskQuery::parse(raw.as_deref()) {
        Ok(query) => query,
        Err(error) => return op_error(&shared, &error),
    };
    let cache = Arc::clone(&shared);
    let read = blocking(&shared, move |store| {
        cache
            .docs
            .answer(store, &id, |doc| task_page(&id, doc, &query))?
    });
    match read.await {
        Ok(page) => ok(StatusCode::OK, page),
        Err(error) => op_error(&shared, &error),
    }
}

/// `GET /api/plans/{id}/summary`: where the plan stands, without its tasks.
pub async fn plan_summary(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    RawQuery(raw): RawQuery,
) -> Response {
    if let Some(name) = first_parameter(raw.as_deref()) {
        let error = OpError::new(
            ErrorCode::InvalidArgument,
            format!(
                "the summary takes no query parameter (`{}`); filter tasks with GET /api/plans/{{id}}/tasks",
                crate::escape::line(&name)
            ),
        )
        .with(json!({"field": name}));
        return op_error(&shared, &error);
    }
    let cache = Arc::clone(&shared);
    let read = blocking(&shared, move |store| {
        cache.docs.answer(store, &id, |doc| summary(&id, doc))
    });
    match read.await {
        Ok(summary) => ok(StatusCode::OK, summary),
        Err(error) => op_error(&shared, &error),
    }
}

/// The first parameter of a query, if it has one.
fn first_parameter(raw: Option<&str>) -> Option<String> {
    let pairs: Vec<(String, String)> = serde_urlencoded::from_str(raw.unwrap_or("")).ok()?;
    pairs.into_iter().next().map(|(name, _)| name)
}
