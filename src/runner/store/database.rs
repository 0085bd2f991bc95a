//! What the database backends (SQLite, PostgreSQL) share: a change and a
//! new plan prepared the same way for both, and the JSON text and integers
//! they store.

use crate::document::PlanDocument;
use crate::runner::error::{ErrorCode, OpError};
use crate::runner::events::LogRecord;
use crate::runner::ops::Op;
use crate::runner::time::now_rfc3339;
use crate::runner::time::now_unix;
use crate::runner::{Applied, Caller, Runner};

use super::plan_store::{apply_change, validate_plan_id, PlanStore, PlanSummary};

/// Plan `plan_id`'s summary as the database backends store it.
pub(super) fn summary_json(plan_id: &str, doc: &PlanDocument) -> String {
    serde_json::to_string(&PlanSummary::of(plan_id, doc)).unwrap_or_else(|_| "{}".to_owned())
}

/// An event record as the database backends store it.
pub(super) fn record_json(record: &LogRecord) -> Result<String, OpError> {
    serde_json::to_string(record)
        .map_err(|e| OpError::new(ErrorCode::StateIo, format!("cannot write an event: {e}")))
}

/// A count or revision as a database's signed 64-bit integer.
pub(super) fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// A mutex's guard, poisoned or not (what it guards stays consistent).
pub(super) fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The most plans whose entries (lock, kept runner) a database store keeps
/// in the process: past it, a new plan's entry first drops those no change
/// or read holds (their runners are read from the database again when
/// next needed).
pub(super) const MAX_KEPT_PLANS: usize = 1024;

/// Plan `plan_id`'s entry in `entries` (made when missing); when `entries`
/// holds `max` others, the entries nobody else holds are dropped first.
pub(super) fn kept_entry<E: Default>(
    entries: &mut std::collections::HashMap<String, std::sync::Arc<E>>,
    plan_id: &str,
    max: usize,
) -> std::sync::Arc<E> {
    if entries.len() >= max && !entries.contains_key(plan_id) {
        entries.retain(|_, entry| std::sync::Arc::strong_count(entry) > 1);
    }
    std::sync::Arc::clone(entries.entry(plan_id.to_owned()).or_default())
}

/// A new plan as a database backend stores it: `meta.id` set to `plan_id`,
/// `created_at` (when missing) and `updated_at` set, revision 1, checked to
/// be a consistent state; and its `created` record.
pub(super) fn prepare_create(
    plan_id: &str,
    mut doc: PlanDocument,
) -> Result<(PlanDocument, LogRecord), OpError> {
    validate_plan_id(plan_id)?;
    crate::runner::text_limits::check_document_text(&doc)?;
    plan_id.clone_into(&mut doc.meta.id);
    let now = now_rfc3339();
    doc.meta.created_at.get_or_insert_with(|| now.clone());
    doc.meta.updated_at = Some(now);
    doc.state.revision = 1;
    let doc = Runner::new(doc)?.into_document();
    let record = super::log::init_record(&doc);
    Ok((doc, record))
}

/// [`PlanStore::apply`](super::PlanStore::apply) of a database store: a
/// change made through the store's transaction, and a query answered by the
/// plan's kept runner (`query_kept`: `None` when that is not the committed
/// state) or else by the plan loaded.
pub(super) fn apply_with_kept<S: PlanStore + ?Sized>(
    store: &S,
    plan_id: &str,
    op: &Op,
    caller: &Caller,
    query_kept: impl FnOnce() -> Result<Option<Result<Applied, OpError>>, OpError>,
) -> Result<Applied, OpError> {
    if op.is_change() {
        return apply_change(store, plan_id, op, caller).map(|(applied, _)| applied);
    }
    validate_plan_id(plan_id)?;
    if let Some(answer) = query_kept()? {
        return answer;
    }
    store
        .runner(plan_id)?
        .apply_as(op, &caller.clone().at(now_unix()))
}
