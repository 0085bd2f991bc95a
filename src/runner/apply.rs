//! Status transitions: starting, completing, failing and skipping tasks;
//! pausing, resuming and resetting the plan. Each checks everything first and
//! only then changes the document, so a refused operation changes nothing.

use serde_json::json;

use crate::document::statuses::set_aside;
use crate::document::{PlanStatus, TaskStatus, DEFAULT_RETRY};

use super::error::{ErrorCode, OpError};
use super::events::{Event, EventKind};
use super::index::{satisfies, Index};
use super::ops::{CompleteArgs, FailArgs, LogArgs, LogKind, SkipArgs, TaskRef};
use super::results::{
    FailedTask, Finished, IdleReason, Logged, Message, NothingStarted, OpResult, Reset, Resumed,
    Retried, Started,
};
use super::{Applied, Caller, Runner};

impl Runner {
    /// `startNextTask`: the first executable task by priority, then plan
    /// order (for `assignee`, if given).
    pub(super) fn start_next_task(
        &mut self,
        assignee: Option<&str>,
        caller: &Caller,
    ) -> Result<Applied, OpError> {
        self.require_active()?;
        let next = self
            .index
            .ready
            .iter()
            .copied()
            .find(|&i| assignee.is_none() || self.task(i).assignee.as_deref() == assignee);
        match next {
            Some(i) => Ok(self.start_at(i, caller)),
            None => Ok(Applied {
                data: self.nothing_to_start(assignee),
                events: Vec::new(),
            }),
        }
    }

    /// `startTask`: a given pending task whose dependencies are all done.
    pub(super) fn start_task(
        &mut self,
        task: &TaskRef,
        caller: &Caller,
    ) -> Result<Applied, OpError> {
        self.require_active()?;
        let i = self.find(task)?;
        let t = self.task(i);
        if t.status == TaskStatus::InProgress && self.other_holder(i, caller).is_some() {
            // Another agent's task: refused (TASK_HELD), or taken over.
            return self.take_over(i, caller);
        }
        if t.status != TaskStatus::Pending {
            return Err(self.wrong_status(i, "started", "pending"));
        }
        if self.index.unmet[i] > 0 {
            let waiting: Vec<u32> = t
                .dependencies
                .iter()
                .filter(|d| !satisfies(self.task(self.index.position[d])))
                .copied()
                .collect();
            return Err(OpError::new(
                ErrorCode::DependenciesNotMet,
                format!(
                    "Task {} cannot start: it waits for task(s) {}",
                    t.id,
                    join(&waiting)
                ),
            )
            .with(json!({"task_id": t.id, "waiting_for": waiting})));
        }
        Ok(self.start_at(i, caller))
    }

    fn start_at(&mut self, i: usize, caller: &Caller) -> Applied {
        let from = self.set_status(i, TaskStatus::InProgress);
        debug_assert_eq!(from, TaskStatus::Pending);
        self.hold(i, caller);
        let t = self.task(i);
        let id = t.id;
        let message = format!("Started task {id}: {}", t.name);
        self.doc.state.current_task_id = Some(id);
        let mut events = vec![Event::task(EventKind::Started, id, message.clone())];
        events.extend(self.refresh_status());
        Applied {
            data: OpResult::Started(Started {
                task: Some(self.task(i).clone()),
                message,
                idle: None,
            }),
            events,
        }
    }

    /// Why `startNextTask` found nothing: done, waiting, blocked or failed.
    fn nothing_to_start(&self, assignee: Option<&str>) -> OpResult {
        let total = self.doc.tasks.len();
        let status = self.doc.state.status;
        let (reason, message) = if self.index.all_settled(total) {
            (
                IdleReason::Completed,
                "All tasks are completed (or skipped).".to_owned(),
            )
        } else if total == 0 {
            (
                IdleReason::Empty,
                format!(
                    "The plan has no tasks; {}.",
                    super::advice::Advice::ADD_TASK.mcp
                ),
            )
        } else if let (Some(role), false) = (assignee, self.index.ready.is_empty()) {
            (
                IdleReason::NoTaskForAssignee,
                format!(
                    "No executable task is assigned to `{role}`; {} executable task(s) are assigned to others.",
                    self.index.ready.len()
                ),
            )
        } else if self.index.count(TaskStatus::InProgress) > 0 {
            let running = self.ids_with(TaskStatus::InProgress, 10);
            (
                IdleReason::Waiting,
                format!(
                    "No task is executable yet: waiting for task(s) {} in progress.",
                    join(&running)
                ),
            )
        } else if self.index.failed_required > 0 {
            (
                IdleReason::Blocked,
                format!(
                    "The plan is blocked: task(s) {} failed; skip them, or replan.",
                    self.failed_required_ids().join(", ")
                ),
            )
        } else if let Some(aside) = self.set_aside_ids(10) {
            (
                IdleReason::Blocked,
                format!(
                    "No task is executable: task(s) {} are set aside (deferred, blocked or in review); start one by its id to take it up.",
                    join(&aside)
                ),
            )
        } else {
            (IdleReason::Blocked, "No task is executable.".to_owned())
        };
        OpResult::Started(Started {
            task: None,
            message,
            idle: Some(NothingStarted {
                reason,
                plan_status: status,
                in_progress: self.ids_with(TaskStatus::InProgress, 10),
                failed: self.failed_required_ids_raw(10),
            }),
        })
    }

    /// The ids of up to `limit` executable tasks set aside, in plan order
    /// (`None` when there are none).
    fn set_aside_ids(&self, limit: usize) -> Option<Vec<u32>> {
        let ids: Vec<u32> = self
            .doc
            .tasks
            .iter()
            .enumerate()
            .filter(|(i, t)| set_aside(t) && self.index.unmet[*i] == 0)
            .take(limit)
            .map(|(_, t)| t.id)
            .collect();
        (!ids.is_empty()).then_some(ids)
    }

    /// `completeTask`: an in-progress task (or a pending, executable one) is done.
    pub(super) fn complete_task(
        &mut self,
        args: &CompleteArgs,
        caller: &Caller,
    ) -> Result<Applied, OpError> {
        let attachments = args
            .attachments
            .as_deref()
            .map(check_attachments)
            .transpose()?;
        self.require_active()?;
        let i = self.target(args.task_id.as_ref(), caller)?;
        self.require_workable(i, "completed")?;
        let taken = self.check_holder(i, caller)?;
        self.set_status(i, TaskStatus::Completed);
        let id = self.task(i).id;
        self.touch(i);
        self.doc.tasks[i].result = args.result.clone();
        if let Some(attachments) = attachments {
            self.doc.tasks[i]
                .extra
                .insert("attachments".to_owned(), attachments);
        }
        self.clear_current(id);
        let message = format!("Task {id} completed");
        let mut events: Vec<Event> = taken.into_iter().collect();
        events.push(Event::task(EventKind::Completed, id, message.clone()));
        events.extend(self.refresh_status());
        Ok(Applied {
            data: OpResult::Finished(Finished {
                task_id: id,
                message,
                plan_status: self.doc.state.status,
            }),
            events,
        })
    }

    /// `failTask`: back to pending while retries are left (and wanted), else failed.
    pub(super) fn fail_task(
        &mut self,
        args: &FailArgs,
        caller: &Caller,
    ) -> Result<Applied, OpError> {
        self.require_active()?;
        let i = self.target(args.task_id.as_ref(), caller)?;
        self.require_workable(i, "failed")?;
        let taken = self.check_holder(i, caller)?;
        let retry = self.task(i).retry;
        let budget = self.retry_budget(i);
        let will_retry = args.should_retry && retry.count < budget;
        let id = self.task(i).id;
        self.touch(i);
        self.doc.tasks[i].result = args.error_message.clone();
        let (message, event) = if will_retry {
            self.doc.tasks[i].retry.count += 1;
            self.set_status(i, TaskStatus::Pending);
            let count = self.task(i).retry.count;
            let message = format!(
                "Task {id} failed, will retry (attempt {} of {})",
                u64::from(count) + 1,
                u64::from(budget) + 1
            );
            (
                message.clone(),
                Event::task(EventKind::Retried, id, message),
            )
        } else {
            self.set_status(i, TaskStatus::Failed);
            let message = if self.task(i).optional {
                format!("Task {id} failed (optional: the tasks after it may still run)")
            } else {
                format!("Task {id} failed")
            };
            (message.clone(), Event::task(EventKind::Failed, id, message))
        };
        self.clear_current(id);
        let mut events: Vec<Event> = taken.into_iter().collect();
        events.push(event);
        events.extend(self.refresh_status());
        Ok(Applied {
            data: OpResult::Failed(FailedTask {
                task_id: id,
                will_retry,
                retry_count: self.task(i).retry.count,
                retry_budget: budget,
                message,
                plan_status: self.doc.state.status,
            }),
            events,
        })
    }

    /// How often the task at `i` may be retried: its own `retry N`, else
    /// the plan's (`meta.retry`), else [`DEFAULT_RETRY`].
    pub(super) fn retry_budget(&self, i: usize) -> u32 {
        self.task(i)
            .retry
            .max
            .or(self.doc.meta.retry)
            .unwrap_or(DEFAULT_RETRY)
    }

    /// `retryTask`: a failed task back to `pending`, to be tried again. Its
    /// retry count is kept; its error stays in `result` until it is done.
    pub(super) fn retry_task(
        &mut self,
        task: &TaskRef,
        caller: &Caller,
    ) -> Result<Applied, OpError> {
        self.require_active()?;
        let i = self.find(task)?;
        // A failed task has no holder; an in-progress one may (TASK_HELD first).
        self.check_holder(i, caller)?;
        if self.task(i).status != TaskStatus::Failed {
            return Err(self.wrong_status(i, "retried", "failed"));
        }
        self.set_status(i, TaskStatus::Pending);
        let id = self.task(i).id;
        let message = format!("Task {id} is pending again, to be retried");
        let mut events = vec![Event::task(EventKind::Retried, id, message.clone())];
        events.extend(self.refresh_status());
        Ok(Applied {
            data: OpResult::Retried(Retried {
                task: self.task(i).clone(),
                executable: self.index.ready.contains(&i),
                message,
                plan_status: self.doc.state.status,
            }),
            events,
        })
    }

    /// `skipTask`: a pending, in-progress or failed task will not be done.
    pub(super) fn skip_task(
        &mut self,
        args: &SkipArgs,
        caller: &Caller,
    ) -> Result<Applied, OpError> {
        self.require_active()?;
        let i = self.find(&args.task_id)?;
        if self.task(i).status.is_done() {
            return Err(self.wrong_status(i, "skipped", "pending, in_progress or failed"));
        }
        let taken = self.check_holder(i, caller)?;
        self.set_status(i, TaskStatus::Skipped);
        let id = self.task(i).id;
        self.touch(i);
        self.doc.tasks[i].result = args.reason.clone();
        self.clear_current(id);
        let message = match &args.reason {
            Some(reason) => format!("Task {id} skipped: {reason}"),
            None => format!("Task {id} skipped"),
        };
        let mut events: Vec<Event> = taken.into_iter().collect();
        events.push(Event::task(EventKind::Skipped, id, message.clone()));
        events.extend(self.refresh_status());
        Ok(Applied {
            data: OpResult::Finished(Finished {
                task_id: id,
                message,
                plan_status: self.doc.state.status,
            }),
            events,
        })
    }

    /// `pausePlan`: refuse changes until resumed.
    pub(super) fn pause_plan(&mut self) -> Result<Applied, OpError> {
        self.require_active()?;
        self.doc.state.status = PlanStatus::Paused;
        let message = "Plan paused successfully".to_owned();
        Ok(Applied {
            data: OpResult::Message(Message {
                message: message.clone(),
            }),
            events: vec![Event::plan(EventKind::Paused, message)],
        })
    }

    /// `resumePlan`: accept changes again.
    pub(super) fn resume_plan(&mut self, caller: &Caller) -> Result<Applied, OpError> {
        if self.doc.state.status != PlanStatus::Paused {
            return Err(OpError::new(
                ErrorCode::InvalidStatus,
                format!("The plan is {}, not paused", self.doc.state.status.as_str()),
            )
            .with(json!({"status": self.doc.state.status.as_str()})));
        }
        // Work out the status afresh, as if it had never been paused.
        let untouched = self.index.count(TaskStatus::Pending) == self.doc.tasks.len();
        self.doc.state.status = if untouched {
            PlanStatus::Idle
        } else {
            PlanStatus::Running
        };
        let message = "Plan resumed successfully".to_owned();
        let mut events = vec![Event::plan(EventKind::Resumed, message.clone())];
        events.extend(self.refresh_status());
        Ok(Applied {
            data: OpResult::Resumed(Resumed {
                message,
                plan_status: self.doc.state.status,
                summary: super::prompt::summary(
                    self,
                    caller,
                    super::prompt::SummaryReason::Resumed,
                ),
            }),
            events,
        })
    }

    /// `resetPlan`: every task back to pending, results and retries cleared.
    /// Allowed while paused (it is how a stuck plan starts over); the plan is idle after.
    pub(super) fn reset_plan(&mut self, caller: &Caller) -> Result<Applied, OpError> {
        let mut events = self.check_all_holders(caller)?;
        let reset_tasks = self
            .doc
            .tasks
            .iter()
            .filter(|t| t.status != TaskStatus::Pending)
            .count();
        // Only the tasks it changes are marked: a store writes those rows
        // alone (the tasks that never left pending are as they were).
        for task in &mut self.doc.tasks {
            let changes = task.status != TaskStatus::Pending
                || task.holder.is_some()
                || task.result.is_some()
                || task.retry.count != 0;
            if changes {
                self.touched.task(task.id);
                task.status = TaskStatus::Pending;
                task.holder = None;
                task.result = None;
                task.retry.count = 0;
            }
        }
        self.doc.state.current_task_id = None;
        self.doc.state.status = PlanStatus::Idle;
        self.doc.state.iteration_count = 0;
        self.index = Index::build(&self.doc)?;
        let message = "Plan reset successfully".to_owned();
        Ok(Applied {
            data: OpResult::Reset(Reset {
                message: message.clone(),
                reset_tasks,
            }),
            events: {
                events.push(Event::plan(EventKind::Reset, message));
                events
            },
        })
    }

    /// A task may be completed or failed when it is in progress, or pending and executable.
    fn require_workable(&self, i: usize, verb: &str) -> Result<(), OpError> {
        match self.task(i).status {
            TaskStatus::InProgress => Ok(()),
            TaskStatus::Pending if self.index.unmet[i] == 0 => Ok(()),
            TaskStatus::Pending => Err(OpError::new(
                ErrorCode::DependenciesNotMet,
                format!(
                    "Task {} cannot be {verb}: its dependencies are not done",
                    self.task(i).id
                ),
            )
            .with(json!({"task_id": self.task(i).id}))),
            _ => Err(self.wrong_status(i, verb, "in_progress (or pending and executable)")),
        }
    }

    pub(super) fn wrong_status(&self, i: usize, verb: &str, expected: &str) -> OpError {
        let t = self.task(i);
        OpError::new(
            ErrorCode::InvalidStatus,
            format!(
                "Task {} is {}, so it cannot be {verb}",
                t.id,
                t.status.as_str()
            ),
        )
        .with(json!({"task_id": t.id, "status": t.status.as_str(), "expected": expected}))
    }

    /// Sets the status of the task at `i`, keeping the indexes in step; returns the old status.
    pub(super) fn set_status(&mut self, i: usize, status: TaskStatus) -> TaskStatus {
        let from = self.doc.tasks[i].status;
        let was_satisfying = satisfies(&self.doc.tasks[i]);
        if from == TaskStatus::InProgress && status != TaskStatus::InProgress {
            self.release(i);
        }
        self.touch(i);
        self.doc.tasks[i].status = status;
        if from != status {
            // A peer's word for the old status (task-master's `deferred`…) no
            // longer describes the task.
            self.doc.tasks[i].extra.shift_remove("status");
        }
        self.index.moved(&self.doc.tasks, i, from, was_satisfying);
        from
    }

    pub(super) fn clear_current(&mut self, id: u32) {
        if self.doc.state.current_task_id == Some(id) {
            self.doc.state.current_task_id = None;
        }
    }
}

/// `1, 2, 3`
pub(super) fn join(ids: &[u32]) -> String {
    ids.iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The most attachments one task keeps, and the longest one, in bytes.
pub const MAX_ATTACHMENTS: usize = 100;
/// The longest attachment (a path or URL), in bytes.
pub const MAX_ATTACHMENT_BYTES: usize = 4096;
/// The largest `data` a logged event carries, as JSON text.
pub const MAX_LOG_DATA_BYTES: usize = 64 * 1024;

/// `attachments` as the JSON array `extra.attachments` keeps, or why not.
fn check_attachments(attachments: &[String]) -> Result<serde_json::Value, OpError> {
    if attachments.len() > MAX_ATTACHMENTS {
        return Err(OpError::new(
            ErrorCode::InvalidArgument,
            format!(
                "{} attachments given; a task keeps at most {MAX_ATTACHMENTS}",
                attachments.len()
            ),
        )
        .with(json!({"field": "attachments"})));
    }
    for (n, attachment) in attachments.iter().enumerate() {
        if attachment.trim().is_empty() || attachment.len() > MAX_ATTACHMENT_BYTES {
            return Err(OpError::new(
                ErrorCode::InvalidArgument,
                format!(
                    "attachment {} is {}; an attachment is a path or URL of 1 to {MAX_ATTACHMENT_BYTES} bytes",
                    n + 1,
                    if attachment.trim().is_empty() { "blank".to_owned() } else { format!("{} bytes", attachment.len()) }
                ),
            )
            .with(json!({"field": "attachments", "index": n})));
        }
    }
    Ok(json!(attachments))
}

/// What a logged event keeps of `data`: a string holding a JSON object or
/// array (what a client with strict schemas sends) as that value; anything
/// else as given.
pub(crate) fn logged_data(data: &serde_json::Value) -> serde_json::Value {
    if let serde_json::Value::String(text) = data {
        let trimmed = text.trim_start();
        if trimmed.starts_with('{') || trimmed.starts_with('[') {
            if let Ok(value) = serde_json::from_str(text) {
                return value;
            }
        }
    }
    data.clone()
}

impl Runner {
    /// `logEvent`: appends a tool, message or error event (Plan-Act's
    /// ToolEvent, MessageEvent, ErrorEvent) about a task — the one named,
    /// else the caller's current task, else none. Allowed while paused: it
    /// records, it changes no task.
    pub(super) fn log_event(
        &mut self,
        args: &LogArgs,
        caller: &Caller,
    ) -> Result<Applied, OpError> {
        let data = logged_data(&args.data);
        let size = serde_json::to_string(&data).map_or(0, |text| text.len());
        if size > MAX_LOG_DATA_BYTES {
            return Err(OpError::new(
                ErrorCode::InvalidArgument,
                format!(
                    "{}{size} bytes as JSON; a logged event carries at most {MAX_LOG_DATA_BYTES} (64 KiB)",
                    super::advice::Advice::LOG_DATA.mcp
                ),
            )
            .with(json!({"field": "data", "bytes": size, "max": MAX_LOG_DATA_BYTES})));
        }
        let task = match &args.task_id {
            Some(task) => Some(self.find(task)?),
            None => self.current_of(caller),
        };
        let (kind, what) = match args.kind {
            LogKind::Tool => (EventKind::Tool, "a tool call"),
            LogKind::Message => (EventKind::Message, "a message"),
            LogKind::Error => (EventKind::Error, "an error"),
        };
        let task_id = task.map(|i| self.task(i).id);
        let message = match task_id {
            Some(id) => format!("Logged {what} for task {id}"),
            None => format!("Logged {what}"),
        };
        let mut event = match task_id {
            Some(id) => Event::task(kind, id, message.clone()),
            None => Event::plan(kind, message.clone()),
        };
        event.data = Some(data);
        Ok(Applied {
            data: OpResult::Logged(Logged {
                kind: args.kind,
                task_id,
                message,
            }),
            events: vec![event],
        })
    }
}
