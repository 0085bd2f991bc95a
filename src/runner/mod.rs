//! The runner: the state machine of the planManager and the PlanManager API over a plan document (docs/runner.md).
//!
//! [`Runner`] holds a [`PlanDocument`] with indexes and applies [`Op`]s to it;
//! it does no IO and reads no clock. [`Store`] is the edge: it loads a state
//! file under a lock, applies one operation, writes the new state atomically
//! and appends the change to the event log. The CLI (`planc run`) and the MCP
//! server (`planc mcp`) are thin faces over these two.

#![warn(missing_docs)]

pub mod access;
mod advice;
mod agents;
mod apply;
mod edit;
mod edit_list;
mod error;
mod events;
mod index;
mod index_shift;
mod observe;
mod ops;
mod order;
mod ownership;
mod prompt;
mod query;
mod ready;
pub mod reply;
mod reply_plan;
pub mod results;
mod session;
mod step_actions;
mod step_done;
pub mod step_markers;
mod step_text;
mod step_turn;
mod step_words;
mod store;
mod task_view;
pub mod text_limits;
pub mod time;
mod touched;

use serde_json::{json, Value};

use crate::document::{PlanDocument, PlanStatus, TaskDoc, TaskStatus};

pub use advice::{respell, Advice, Face};
pub use agents::{parse_lease, Caller, MAX_LEASE_SECONDS};
#[cfg(feature = "mcp")]
pub(crate) use apply::logged_data;
pub use error::{ErrorCode, OpError};
pub use events::{Event, EventKind, LogRecord, PlanHeader};
pub use observe::{observe, observe_reply};
pub use ops::{
    AddArgs, CompleteArgs, FailArgs, ListArgs, LogArgs, LogKind, NoArgs, Op, ReplanArgs,
    ReplanStep, ReplanTask, SkipArgs, StartNextArgs, TaskIdArgs, TaskRef, TaskUpdates, UpdateArgs,
};
pub use order::{default_key, Order, ORDER_GAP};
pub use prompt::{prompt, prompt_as, summary, SummaryReason};
pub use reply::{Reply, ToolCall};
pub use reply_plan::{
    plan_for_message, plan_for_reply, step_lines, MAX_STEPS_PER_MESSAGE,
    MESSAGE_PLAN_MAX_ITERATIONS,
};
pub use results::{result_schema, OpResult};
pub use session::{session_path, MAX_SESSION_KEY_BYTES, SESSIONS_DIR, SESSION_STATE};
pub use step_markers::{find_word, TRANSITION_WORDS};
pub use store::{
    open_store, transact_with, validate_plan_id, LogReader, PlanCounts, PlanStore, PlanSummary,
    Store, StoredEvent, DEFAULT_LOCK_TIMEOUT,
};
#[cfg(feature = "postgres")]
pub use store::{CommitCounts, PostgresStore};
pub use task_view::{KeptPlan, TaskView, ViewGroup};
pub use touched::Touched;

use index::Index;

/// What a successful operation produced.
#[derive(Clone, Debug, PartialEq)]
pub struct Applied {
    /// The operation's result: the `data` of the success envelope.
    pub data: OpResult,
    /// What changed (empty for queries).
    pub events: Vec<Event>,
}

impl Applied {
    /// Whether the operation changed the state.
    pub fn changed(&self) -> bool {
        !self.events.is_empty()
    }

    /// The PlanManager API's success envelope: `{"success": true, "data": …}`.
    pub fn envelope(&self) -> Value {
        json!({"success": true, "data": self.data})
    }
}

/// Applies one operation to a plan document: the runner as a pure function.
///
/// Indexes the document first (O(tasks + edges)); to apply many operations,
/// keep a [`Runner`] instead.
pub fn apply(doc: PlanDocument, op: &Op) -> Result<(PlanDocument, Applied), OpError> {
    let mut runner = Runner::new(doc)?;
    let applied = runner.apply(op)?;
    Ok((runner.into_document(), applied))
}

/// A plan document being run: the document and the indexes that keep every
/// operation cheap.
#[derive(Clone, Debug)]
pub struct Runner {
    doc: PlanDocument,
    index: Index,
    /// Each task's order key, by position (`order.rs`): what the database
    /// stores key their task rows by.
    order: Order,
    /// The tasks changed since [`Runner::take_touched`] last ran.
    touched: Touched,
    /// The paged reads' order and counts, kept once a read asked for them
    /// (`task_view.rs`).
    view: TaskView,
}

impl Runner {
    /// Takes a plan document, or says why it is not a consistent state
    /// (duplicate ids, unknown dependencies, a cycle): `INVALID_STATE`.
    pub fn new(mut doc: PlanDocument) -> Result<Runner, OpError> {
        // A document read with a growing vector holds up to twice its
        // tasks' room; a kept runner holds the tasks alone.
        doc.tasks.shrink_to_fit();
        let index = Index::build(&doc)?;
        Ok(Runner {
            order: Order::dense(doc.tasks.len()),
            doc,
            index,
            touched: Touched::default(),
            view: TaskView::default(),
        })
    }

    /// [`Runner::new`] with the tasks' order keys as a store read them
    /// (one a task, increasing); keys that are not are `INVALID_STATE`.
    pub fn with_order(doc: PlanDocument, keys: Vec<i64>) -> Result<Runner, OpError> {
        let count = doc.tasks.len();
        let order = Order::from_keys(keys).filter(|order| order.len() == count);
        let Some(order) = order else {
            return Err(OpError::new(
                ErrorCode::InvalidState,
                format!("the order keys of the plan's {count} task rows do not increase"),
            ));
        };
        let mut runner = Runner::new(doc)?;
        runner.order = order;
        Ok(runner)
    }

    /// Each task's order key, by position.
    pub fn order(&self) -> &Order {
        &self.order
    }

    /// Marks the task at position `i` touched.
    fn touch(&mut self, i: usize) {
        self.touched.task(self.doc.tasks[i].id);
    }

    /// The tasks changed since the last call (or since [`Runner::new`]),
    /// and a fresh set.
    pub fn take_touched(&mut self) -> Touched {
        let touched = std::mem::take(&mut self.touched);
        self.keep_view(&touched);
        touched
    }

    /// The document as it stands.
    pub fn document(&self) -> &PlanDocument {
        &self.doc
    }

    /// Gives the document back.
    pub fn into_document(self) -> PlanDocument {
        self.doc
    }

    /// Applies one operation for a caller without an identity and without
    /// a clock. On error nothing has changed. A change bumps
    /// `state.revision` by one and returns at least one event; at the largest
    /// revision every change is refused (`COUNTER_OVERFLOW`).
    pub fn apply(&mut self, op: &Op) -> Result<Applied, OpError> {
        self.apply_as(op, &Caller::default())
    }

    /// Applies one operation for `caller` (see [`Runner::apply`]): an
    /// id-less complete or fail acts on the caller's task, a started task
    /// records the caller as its holder, and a change by an agent renews the
    /// leases it holds. Leases that ran out are not expired here: call
    /// [`Runner::expire_leases`] first (the store does).
    pub fn apply_as(&mut self, op: &Op, caller: &Caller) -> Result<Applied, OpError> {
        caller.check()?;
        if op.is_change() {
            self.next_revision()?;
        }
        let mut applied = self.apply_unrevised(op, caller)?;
        if applied.changed() {
            if caller.agent.is_some() && !matches!(op, Op::Heartbeat(_)) {
                self.renew(caller);
            }
            for event in &mut applied.events {
                if event.agent.is_none() {
                    event.agent.clone_from(&caller.agent);
                }
            }
            self.doc.state.revision += 1;
        }
        Ok(applied)
    }

    /// The revision after one more change, or `COUNTER_OVERFLOW` (checked
    /// before anything changes, so a refused change changes nothing).
    fn next_revision(&self) -> Result<u64, OpError> {
        self.doc.state.revision.checked_add(1).ok_or_else(|| {
            OpError::overflow(
                "state.revision",
                u64::MAX,
                "this state accepts no more changes (start a new one with `planc run init`)",
            )
        })
    }

    /// Applies one operation without bumping the revision (for composite
    /// changes such as `observe`, which count as one revision).
    fn apply_unrevised(&mut self, op: &Op, caller: &Caller) -> Result<Applied, OpError> {
        text_limits::check_op_text(op)?;
        let mut applied = self.dispatch(op, caller)?;
        self.attach(&mut applied.events);
        Ok(applied)
    }

    /// Gives each event the object it is about, as it is now: a task event
    /// its task, a plan event the plan's header.
    fn attach(&self, events: &mut [Event]) {
        for event in events {
            match event.task_id {
                Some(id) => {
                    if event.task.is_none() {
                        event.task = self
                            .index
                            .position
                            .get(&id)
                            .map(|&i| Box::new(self.doc.tasks[i].clone()));
                    }
                }
                None => {
                    if event.plan.is_none() {
                        event.plan = Some(self.header());
                    }
                }
            }
        }
    }

    /// The plan's header for plan events.
    fn header(&self) -> PlanHeader {
        PlanHeader {
            id: self.doc.meta.id.clone(),
            title: self.doc.meta.title.clone(),
            goal: self.doc.meta.goal.clone(),
            language: self.doc.meta.language.clone(),
            status: self.doc.state.status,
            done: self.index.done(),
            total: self.doc.tasks.len(),
        }
    }

    fn dispatch(&mut self, op: &Op, caller: &Caller) -> Result<Applied, OpError> {
        match op {
            Op::GetCurrentTask(_) => self.get_current_task(caller),
            Op::GetTaskById(args) => self.get_task_by_id(&args.task_id),
            Op::GetTaskList(args) => self.get_task_list(args),
            Op::GetExecutableTaskList(args) => {
                self.get_executable_task_list(args.assignee.as_deref())
            }
            Op::GetPlanStatus(_) => Ok(self.get_plan_status()),
            Op::StartNextTask(args) => self.start_next_task(args.assignee.as_deref(), caller),
            Op::StartTask(args) => self.start_task(&args.task_id, caller),
            Op::CompleteTask(args) => self.complete_task(args, caller),
            Op::FailTask(args) => self.fail_task(args, caller),
            Op::RetryTask(args) => self.retry_task(&args.task_id, caller),
            Op::Heartbeat(_) => self.heartbeat(caller),
            Op::LogEvent(args) => self.log_event(args, caller),
            Op::SkipTask(args) => self.skip_task(args, caller),
            Op::AddTask(args) => self.add_task(args),
            Op::UpdateTask(args) => self.update_task(args, caller),
            Op::RemoveTask(args) => self.remove_task(&args.task_id, caller),
            Op::PausePlan(_) => self.pause_plan(),
            Op::ResumePlan(_) => self.resume_plan(caller),
            Op::ResetPlan(_) => self.reset_plan(caller),
            Op::Replan(args) => self.replan(args),
        }
    }

    /// The position of the task `task` names, or `TASK_NOT_FOUND`.
    fn find(&self, task: &TaskRef) -> Result<usize, OpError> {
        let id = match task {
            TaskRef::Id(id) => Some(*id),
            TaskRef::Key(key) => self
                .index
                .keys
                .get(key)
                .copied()
                .or_else(|| key.trim().strip_prefix('#').unwrap_or(key).parse().ok()),
        };
        id.and_then(|id| self.index.position.get(&id).copied())
            .ok_or_else(|| {
                OpError::new(
                    ErrorCode::TaskNotFound,
                    format!("Task with ID {task} not found"),
                )
                .with(json!({"task_id": task}))
            })
    }

    /// The task at position `i`.
    fn task(&self, i: usize) -> &TaskDoc {
        &self.doc.tasks[i]
    }

    /// Refuses changes while the plan is paused.
    fn require_active(&self) -> Result<(), OpError> {
        if self.doc.state.status == PlanStatus::Paused {
            return Err(OpError::new(
                ErrorCode::PlanNotActive,
                format!("The plan is paused; {}", advice::Advice::RESUME.mcp),
            )
            .with(json!({"status": "paused"})));
        }
        Ok(())
    }

    /// Recomputes the plan status from the counters (O(1)); a paused plan stays paused.
    fn refresh_status(&mut self) -> Option<Event> {
        let before = self.doc.state.status;
        if before == PlanStatus::Paused {
            return None;
        }
        let total = self.doc.tasks.len();
        let untouched = self.index.count(TaskStatus::Pending) == total;
        let after = if self.index.all_settled(total) {
            PlanStatus::Completed
        } else if self.index.ready.is_empty()
            && self.index.count(TaskStatus::InProgress) == 0
            && self.index.failed_required > 0
        {
            PlanStatus::Failed
        } else if (before == PlanStatus::Idle || total == 0) && untouched {
            // A plan whose last task was removed holds nothing that ran: idle.
            PlanStatus::Idle
        } else {
            PlanStatus::Running
        };
        self.doc.state.status = after;
        match (before == after, after) {
            (false, PlanStatus::Completed) => Some(Event::plan(
                EventKind::PlanCompleted,
                "Every task is completed or skipped (or failed but optional)",
            )),
            (false, PlanStatus::Failed) => Some(Event::plan(
                EventKind::PlanFailed,
                format!(
                    "Nothing can run: failed task(s) {}",
                    self.failed_required_ids().join(", ")
                ),
            )),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests;
