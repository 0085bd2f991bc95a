//! Many plans behind one trait: [`PlanStore`], keyed by plan id, with three
//! kinds of backend (JSON state files, SQLite, PostgreSQL) chosen by a URL
//! ([`open_store`](super::open_store)). Every backend runs the same [`Runner`] underneath; what
//! differs is only where a state and its events are kept and how a change
//! is made durable.

use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::document::{PlanDocument, PlanStatus, TaskStatus};
use crate::runner::error::{ErrorCode, OpError};
use crate::runner::events::{Event, LogRecord};
use crate::runner::ops::Op;
use crate::runner::time::{now_rfc3339, now_unix};
use crate::runner::{Applied, Caller, KeptPlan, Runner};

/// The longest plan id, in bytes.
pub const MAX_PLAN_ID_BYTES: usize = 128;

/// A store of plans keyed by plan id, shared by every agent that reaches it.
///
/// A change ([`PlanStore::apply`], [`PlanStore::transact`]) reads the plan's
/// state, runs the runner on it, and commits the new state together with
/// one event record (the same record the JSON event log holds, its `revision`
/// the new state's) — acknowledged only once durable. Concurrent changes to
/// one plan are serialised; none is lost.
pub trait PlanStore: Send + Sync + std::fmt::Debug {
    /// The store's URL, as [`open_store`](super::open_store) reads it (`sqlite:PATH`,
    /// `postgres://…` without its password, `dir:PATH`, a state file).
    fn url(&self) -> String;

    /// Creates plan `plan_id` from `doc` (revision 1, `meta.id` set to
    /// `plan_id`, `created_at` set when missing) with its `created` event.
    /// An existing plan is refused (`PLAN_EXISTS`) unless `force`, which
    /// starts it over (its events too).
    fn create(
        &self,
        plan_id: &str,
        doc: PlanDocument,
        force: bool,
    ) -> Result<PlanDocument, OpError>;

    /// Every plan, by plan id.
    fn list(&self) -> Result<Vec<PlanSummary>, OpError>;

    /// The state of plan `plan_id` (`PLAN_NOT_FOUND` when there is none).
    fn load(&self, plan_id: &str) -> Result<PlanDocument, OpError>;

    /// Runs `read` on plan `plan_id`'s committed state when the store keeps
    /// it in memory, without a copy: `true`; `false` (`read` not run)
    /// when it does not, for the caller to [`load`](PlanStore::load) it.
    fn read_kept(
        &self,
        plan_id: &str,
        read: &mut dyn FnMut(&PlanDocument),
    ) -> Result<bool, OpError> {
        let _ = (plan_id, read);
        Ok(false)
    }

    /// Runs `read` on plan `plan_id`'s committed state as the paged reads
    /// see it ([`KeptPlan`]: the document, its read order and counts, the
    /// runner's indexes) when the store keeps it in memory: `true`; `false`
    /// (`read` not run) when it does not (see [`PlanStore::read_kept`]).
    fn read_kept_plan(
        &self,
        plan_id: &str,
        read: &mut dyn FnMut(&KeptPlan<'_>),
    ) -> Result<bool, OpError> {
        let _ = (plan_id, read);
        Ok(false)
    }

    /// Plan `plan_id`'s state as JSON (the export), appended to `out`: the
    /// bytes of [`PlanStore::load`]'s document serialised, written from the
    /// state the store keeps when it keeps one (no copy of the document).
    fn export_json(&self, plan_id: &str, out: &mut Vec<u8>) -> Result<(), OpError> {
        let mut written = Ok(());
        if self.read_kept(plan_id, &mut |doc| written = write_json(doc, out))? {
            return written;
        }
        write_json(&self.load(plan_id)?, out)
    }

    /// Deletes plan `plan_id` (`PLAN_NOT_FOUND` when there is none).
    fn delete(&self, plan_id: &str) -> Result<(), OpError>;

    /// Whether plan `plan_id` exists: its state loads (`PLAN_NOT_FOUND`
    /// means no; any other error is the answer). A state file says whether
    /// the file is there.
    fn contains(&self, plan_id: &str) -> Result<bool, OpError> {
        found(self.load(plan_id))
    }

    /// Deletes plan `plan_id` when `check` accepts its state (the Plan
    /// Tool's `delete_plan`). A JSON state is checked under its lock; a
    /// database's is read, checked, then deleted.
    fn delete_checked(
        &self,
        plan_id: &str,
        check: &mut dyn FnMut(&PlanDocument) -> Result<(), OpError>,
    ) -> Result<(), OpError> {
        check(&self.load(plan_id)?)?;
        self.delete(plan_id)
    }

    /// Runs `change` on plan `plan_id`'s state under the plan's lock, after
    /// expiring the leases that ran out; when it (or the expiry) returns
    /// events, commits the state as the next revision (`meta.updated_at`
    /// set) with one record of them, named `op`, and gives that record back.
    /// A refused change (`Err`) changes nothing. `change` may be called more
    /// than once (a backend may retry on a conflict): it must start afresh.
    fn transact(
        &self,
        plan_id: &str,
        op: &str,
        change: &mut dyn FnMut(&mut Runner) -> Result<Vec<Event>, OpError>,
    ) -> Result<Option<StoredEvent>, OpError>;

    /// The committed events of plan `plan_id` with `seq` (revision) above
    /// `after_seq`, oldest first, at most `limit`.
    fn events(
        &self,
        plan_id: &str,
        after_seq: u64,
        limit: usize,
    ) -> Result<Vec<StoredEvent>, OpError>;

    /// The committed events of every plan with `position` above `after`, in
    /// the store's global order, at most `limit`.
    fn feed(&self, after: u64, limit: usize) -> Result<Vec<StoredEvent>, OpError>;

    /// Every event committed from now on, in the order of [`PlanStore::feed`],
    /// as it is committed (by this handle or, where the backend can tell,
    /// by any other process on the same store). Dropping the receiver ends
    /// the subscription.
    fn subscribe(&self) -> Receiver<StoredEvent>;

    /// How many changes wait for a writer that commits them in batches
    /// (PostgreSQL's), not yet taken into a batch; 0 for the others.
    fn queued_changes(&self) -> usize {
        0
    }

    /// A runner over plan `plan_id`'s state, with the leases that ran out
    /// by now expired (in memory: the next change records it).
    fn runner(&self, plan_id: &str) -> Result<Runner, OpError> {
        let mut runner = Runner::new(self.load(plan_id)?)?;
        runner.expire_leases(now_unix());
        Ok(runner)
    }

    /// Applies one runner operation for `caller` at the clock's time: a
    /// query reads, a change goes through [`PlanStore::transact`].
    fn apply(&self, plan_id: &str, op: &Op, caller: &Caller) -> Result<Applied, OpError> {
        if !op.is_change() {
            return self
                .runner(plan_id)?
                .apply_as(op, &caller.clone().at(now_unix()));
        }
        apply_change(self, plan_id, op, caller).map(|(applied, _)| applied)
    }

    /// [`PlanStore::apply`], and the plan's revision after the change:
    /// the revision it made, `None` for a query or a change that changed
    /// nothing.
    fn apply_revised(
        &self,
        plan_id: &str,
        op: &Op,
        caller: &Caller,
    ) -> Result<(Applied, Option<u64>), OpError> {
        if !op.is_change() {
            return self
                .apply(plan_id, op, caller)
                .map(|applied| (applied, None));
        }
        apply_change(self, plan_id, op, caller)
            .map(|(applied, event)| (applied, event.map(|event| event.seq)))
    }
}

/// Change `op` made for `caller` at the clock's time through
/// [`PlanStore::transact`]: what it answered, and its committed event
/// (none when it changed nothing).
pub(super) fn apply_change<S: PlanStore + ?Sized>(
    store: &S,
    plan_id: &str,
    op: &Op,
    caller: &Caller,
) -> Result<(Applied, Option<StoredEvent>), OpError> {
    transact_with(store, plan_id, op.name(), |runner| {
        let applied = runner.apply_as(op, &caller.clone().at(now_unix()))?;
        let events = applied.events.clone();
        Ok((applied, events))
    })
}

/// [`PlanStore::transact`] with a change that also returns a value: the
/// value of the call whose change was committed, and the committed event.
pub fn transact_with<S, T>(
    store: &S,
    plan_id: &str,
    op: &str,
    mut change: impl FnMut(&mut Runner) -> Result<(T, Vec<Event>), OpError>,
) -> Result<(T, Option<StoredEvent>), OpError>
where
    S: PlanStore + ?Sized,
{
    let mut value = None;
    let event = store.transact(plan_id, op, &mut |runner| {
        let (v, events) = change(runner)?;
        value = Some(v);
        Ok(events)
    })?;
    let value = value.ok_or_else(|| {
        OpError::new(
            ErrorCode::StateIo,
            "the store committed a change without running it",
        )
    })?;
    Ok((value, event))
}

/// One plan, as [`PlanStore::list`] shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanSummary {
    /// The plan's key in the store.
    pub plan_id: String,
    /// The plan's title, if it has one.
    pub title: Option<String>,
    /// The plan's goal.
    pub goal: String,
    /// The plan's status.
    pub status: PlanStatus,
    /// The state's revision.
    pub revision: u64,
    /// When it was last changed (RFC 3339 UTC).
    pub updated_at: Option<String>,
    /// How many tasks are in each status.
    pub counts: PlanCounts,
}

/// How many tasks a plan has, in all and in each status.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanCounts {
    /// Every task.
    pub total: usize,
    /// `pending` tasks.
    pub pending: usize,
    /// `in_progress` tasks.
    pub in_progress: usize,
    /// `completed` tasks.
    pub completed: usize,
    /// `failed` tasks.
    pub failed: usize,
    /// `skipped` tasks.
    pub skipped: usize,
}

impl PlanSummary {
    /// The summary of plan `plan_id`, whose state is `doc`.
    pub fn of(plan_id: &str, doc: &PlanDocument) -> PlanSummary {
        let mut counts = PlanCounts {
            total: doc.tasks.len(),
            ..PlanCounts::default()
        };
        for task in &doc.tasks {
            *match task.status {
                TaskStatus::Pending => &mut counts.pending,
                TaskStatus::InProgress => &mut counts.in_progress,
                TaskStatus::Completed => &mut counts.completed,
                TaskStatus::Failed => &mut counts.failed,
                TaskStatus::Skipped => &mut counts.skipped,
            } += 1;
        }
        PlanSummary {
            plan_id: plan_id.to_owned(),
            title: doc.meta.title.clone(),
            goal: doc.meta.goal.clone(),
            status: doc.state.status,
            revision: doc.state.revision,
            updated_at: doc.meta.updated_at.clone(),
            counts,
        }
    }
}

/// One committed change of one plan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoredEvent {
    /// The plan it changed.
    pub plan_id: String,
    /// Its place among the plan's events: the revision it made (1 for the
    /// plan's creation).
    pub seq: u64,
    /// Its place in the store's global order ([`PlanStore::feed`]): SQLite's
    /// row id, PostgreSQL's transaction id times 1,024 plus the event's place in
    /// its transaction, a single state file's revision,
    /// a directory's line in its feed index (see docs/serve.md). Never given
    /// to another event, even of the same plan started over — except in a
    /// single state file, whose revisions count from 1 again.
    pub position: u64,
    /// The record, as the JSON event log has it.
    pub record: LogRecord,
}

/// Checks a plan id: 1 to 128 bytes, no path separator (`/`, `\`), no
/// control character, not `.` or `..` and not starting with a dot (a plan
/// id names a file in a directory store). `INVALID_PLAN_ID` otherwise.
pub fn validate_plan_id(plan_id: &str) -> Result<(), OpError> {
    let why = if plan_id.is_empty() {
        Some("is empty")
    } else if plan_id.len() > MAX_PLAN_ID_BYTES {
        Some("is longer than 128 bytes")
    } else if plan_id.contains(['/', '\\']) {
        Some("contains a path separator")
    } else if plan_id.chars().any(char::is_control) {
        Some("contains a control character")
    } else if plan_id.starts_with('.') {
        Some("starts with a dot")
    } else if plan_id.trim() != plan_id {
        Some("starts or ends with white space")
    } else {
        None
    };
    match why {
        None => Ok(()),
        Some(why) => Err(OpError::new(
            ErrorCode::InvalidPlanId,
            format!(
                "plan id `{}` {why}; use 1 to 128 bytes without `/`, `\\`, control \
                 characters or a leading dot (letters, digits, `-`, `_`, `.`)",
                crate::escape::line(plan_id)
            ),
        )
        .with(json!({"plan_id": plan_id}))),
    }
}

/// `PLAN_NOT_FOUND` for `plan_id`.
/// Whether a read of a plan found it: `PLAN_NOT_FOUND` means no; any
/// other error is the answer.
pub(crate) fn found<T>(read: Result<T, OpError>) -> Result<bool, OpError> {
    match read {
        Ok(_) => Ok(true),
        Err(error) if error.code == ErrorCode::PlanNotFound => Ok(false),
        Err(error) => Err(error),
    }
}

pub(crate) fn plan_not_found(plan_id: &str) -> OpError {
    OpError::new(
        ErrorCode::PlanNotFound,
        format!("no plan `{}` in this store", crate::escape::line(plan_id)),
    )
    .with(json!({"plan_id": plan_id}))
}

/// `PLAN_EXISTS` for `plan_id`.
pub(crate) fn plan_exists(plan_id: &str) -> OpError {
    OpError::new(
        ErrorCode::PlanExists,
        format!(
            "plan `{}` exists already; {}",
            crate::escape::line(plan_id),
            crate::runner::advice::Advice::START_OVER.mcp
        ),
    )
    .with(json!({"plan_id": plan_id}))
}

/// The subscribers of a store: each committed event is sent to every live
/// one whose subscription began before it.
#[derive(Clone, Debug, Default)]
pub(crate) struct Subscribers {
    senders: Arc<Mutex<Vec<Subscriber>>>,
}

/// A live subscription: where its events go, and the position it began at.
type Subscriber = (Sender<StoredEvent>, u64);

impl Subscribers {
    /// A new subscription to every event.
    pub fn subscribe(&self) -> Receiver<StoredEvent> {
        self.subscribe_after(0)
    }

    /// A new subscription to the events with a position above `floor`.
    pub fn subscribe_after(&self, floor: u64) -> Receiver<StoredEvent> {
        let (sender, receiver) = channel();
        self.lock().push((sender, floor));
        receiver
    }

    /// Sends `event` to every subscriber, forgetting those that hung up.
    pub fn send(&self, event: &StoredEvent) {
        self.lock().retain(|(sender, floor)| {
            event.position <= *floor || sender.send(event.clone()).is_ok()
        });
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(Sender<StoredEvent>, u64)>> {
        self.senders
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// One change of a plan, the same for every store: runs `change` on `doc`
/// (after expiring the leases that ran out, events carrying their task and
/// plan) and, when anything changed, gives the next revision's state and
/// its log record; a store commits the two together.
pub(super) fn next_revision<T>(
    doc: PlanDocument,
    op: &str,
    change: impl FnOnce(&mut Runner) -> Result<(T, Vec<Event>), OpError>,
) -> Result<(T, Option<(PlanDocument, LogRecord)>), OpError> {
    let revision = doc.state.revision;
    let mut runner = Runner::new(doc)?;
    let mut events = runner.expire_leases(now_unix());
    runner.attach(&mut events);
    let (value, changed) = change(&mut runner)?;
    events.extend(changed);
    if events.is_empty() {
        return Ok((value, None));
    }
    let record = seal(&mut runner, revision, op, events)?;
    Ok((value, Some((runner.into_document(), record))))
}

/// [`next_revision`] on a runner kept between changes: `change` runs on
/// `runner` in place (no copy of the document, no new index) and, when
/// anything changed, the runner is left at the next revision and the record
/// is given back. On `Err`, or when nothing changed, the runner may still
/// hold what the expiry or a part of `change` did: a caller that keeps it
/// checks [`Runner::take_touched`] and the state.
pub(super) fn next_revision_in_place(
    runner: &mut Runner,
    op: &str,
    change: &mut dyn FnMut(&mut Runner) -> Result<Vec<Event>, OpError>,
) -> Result<Option<LogRecord>, OpError> {
    let revision = runner.doc.state.revision;
    let mut events = runner.expire_leases(now_unix());
    runner.attach(&mut events);
    events.extend(change(runner)?);
    if events.is_empty() {
        return Ok(None);
    }
    seal(runner, revision, op, events).map(Some)
}

/// Puts `runner`'s state at the revision after `revision` (one record per
/// revision, whatever the change did to the counter), stamps
/// `meta.updated_at`, and gives the change's log record of `events`.
fn seal(
    runner: &mut Runner,
    revision: u64,
    op: &str,
    events: Vec<Event>,
) -> Result<LogRecord, OpError> {
    let now = now_rfc3339();
    runner.doc.state.revision = revision.checked_add(1).ok_or_else(|| {
        OpError::overflow(
            "state.revision",
            u64::MAX,
            "this state accepts no more changes",
        )
    })?;
    runner.doc.meta.updated_at = Some(now.clone());
    Ok(LogRecord {
        revision: runner.doc.state.revision,
        at: now,
        op: op.to_owned(),
        plan_status: runner.doc.state.status,
        events,
    })
}

/// `doc` serialised as JSON, appended to `out`. The bytes are counted
/// first and reserved at once (with room for a closing byte after them,
/// an envelope's `}`): a 20 MB export then takes 20 MB, not a doubling
/// buffer's 32 MB and the copies on its way there.
fn write_json(doc: &PlanDocument, out: &mut Vec<u8>) -> Result<(), OpError> {
    let refused = |e: serde_json::Error| {
        OpError::new(
            ErrorCode::StateIo,
            format!("the plan's state does not serialise: {e}"),
        )
    };
    let mut counted = ByteCount(0);
    serde_json::to_writer(&mut counted, doc).map_err(refused)?;
    out.reserve_exact(counted.0 + 1);
    serde_json::to_writer(out, doc).map_err(refused)
}

/// A writer that only counts the bytes written to it.
struct ByteCount(usize);

impl std::io::Write for ByteCount {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0 += bytes.len();
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_ids_that_cannot_name_a_file_are_refused() {
        for good in ["jd", "jd-1", "a.b", "plan_2026", "计划", "a b"] {
            assert_eq!(validate_plan_id(good), Ok(()), "{good}");
        }
        for bad in [
            "", ".", "..", ".hidden", "a/b", "a\\b", "../x", "a\nb", "a\0b", " a",
        ] {
            let error = validate_plan_id(bad).unwrap_err();
            assert_eq!(error.code, ErrorCode::InvalidPlanId, "{bad:?}");
            assert_eq!(error.details, json!({"plan_id": bad}));
        }
        assert!(validate_plan_id(&"x".repeat(128)).is_ok());
        assert!(validate_plan_id(&"x".repeat(129)).is_err());
    }
}
