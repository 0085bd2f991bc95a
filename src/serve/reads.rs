//! The paged reads of a plan: `GET /api/plans/{id}/tasks` and
//! `GET /api/plans/{id}/summary` (`task_pages_kept.rs` answers them from
//! the store's kept runner and its indexes, `task_pages.rs` from the
//! document `doc_cache.rs` keeps), and the refusal of paging parameters on
//! `GET /api/plans/{id}`, which is the whole document (the export).

use std::sync::{Arc, OnceLock};

use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::json;

use crate::runner::{ErrorCode, OpError};

use super::api::{blocking, ok, op_error};
use super::task_pages::{summary, task_page, TaskQuery};
use super::task_pages_kept::{kept_page, kept_summary};
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
        let page = cache.docs.answer_kept(
            store,
            &id,
            |kept| {
                let (page, pass) = kept_page(&id, kept, &query);
                (page, pass && kept.doc().tasks.len() >= LARGE_PLAN)
            },
            |doc| (task_page(&id, doc, &query), doc.tasks.len() >= LARGE_PLAN),
        );
        given_back(page, |page| matches!(page, Ok((_, true)))).and_then(|(page, _)| page)
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
        let answer = cache.docs.answer_kept(
            store,
            &id,
            |kept| (kept_summary(&id, kept), false),
            |doc| (summary(&id, doc), doc.tasks.len() >= LARGE_PLAN),
        );
        given_back(answer, |answer| matches!(answer, Ok((_, true)))).map(|(summary, _)| summary)
    });
    match read.await {
        Ok(summary) => ok(StatusCode::OK, summary),
        Err(error) => op_error(&shared, &error),
    }
}

/// How many tasks make a plan whose whole reads give their memory back.
pub(super) const LARGE_PLAN: usize = 10_000;

/// What gives the calling thread's freed memory back to the system
/// ([`on_large_read`]).
static GIVE_BACK: OnceLock<fn()> = OnceLock::new();

/// Sets what a server thread calls once it has read a large plan whole (a
/// page or the summary of a plan of [`LARGE_PLAN`] tasks or more, a large
/// export): the binary's allocator giving that thread's freed memory back
/// to the system. mimalloc keeps a thread's last freed page of each size
/// in reserve until that thread allocates again, and a read of a
/// 100,000-task plan frees pages of up to a megabyte on whichever of
/// tokio's blocking threads ran it: tens of megabytes held by idle threads
/// (docs/performance.md, "Memory of a 100,000-task plan"). Set once.
pub fn on_large_read(give_back: fn()) {
    let _ = GIVE_BACK.set(give_back);
}

/// `read` as it is, the calling thread's freed memory given back first
/// when `large` says it was a large read.
pub(super) fn given_back<T>(read: T, large: impl FnOnce(&T) -> bool) -> T {
    if large(&read) {
        if let Some(give_back) = GIVE_BACK.get() {
            give_back();
        }
    }
    read
}

/// The first parameter of a query, if it has one.
fn first_parameter(raw: Option<&str>) -> Option<String> {
    let pairs: Vec<(String, String)> = serde_urlencoded::from_str(raw.unwrap_or("")).ok()?;
    pairs.into_iter().next().map(|(name, _)| name)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    static CALLED: AtomicUsize = AtomicUsize::new(0);

    fn count() {
        CALLED.fetch_add(1, Ordering::SeqCst);
    }

    /// The hook set runs after a large read, not after a small one, and
    /// the read's answer is handed on as it was.
    #[test]
    fn a_large_read_gives_its_memory_back_a_small_one_does_not() {
        on_large_read(count);
        let before = CALLED.load(Ordering::SeqCst);
        assert_eq!(given_back(7, |_| false), 7);
        assert_eq!(CALLED.load(Ordering::SeqCst), before);
        assert_eq!(given_back("page", |_| true), "page");
        assert_eq!(CALLED.load(Ordering::SeqCst), before + 1);
    }
}
