//! Ownership (docs/runner.md): a task an agent holds is changed only by
//! that agent, or by a call that takes it over.
//!
//! A task is *held* while it is in progress and its holder names an agent.
//! Completing, failing, skipping, starting, editing or resetting it by any
//! other caller — another agent, or a caller without an identity — is
//! refused with `TASK_HELD` (naming the holder and its lease), unless the
//! caller says it takes the task over ([`Caller::takeover`]): then the change
//! goes ahead and a `task_taken_over` event, naming the old and the new
//! holder, is logged before the change's own events. A task in progress
//! without a named holder (seed 001's single agent, or a caller without an
//! identity holding a lease) is anyone's, as before. An expired lease frees
//! the task ([`Runner::expire_leases`]) before any of this is asked.

use serde_json::json;

use crate::document::{Holder, TaskStatus};

use super::advice::Advice;
use super::error::{ErrorCode, OpError};
use super::events::{Event, EventKind};
use super::results::{OpResult, Started};
use super::{Applied, Caller, Runner};

impl Runner {
    /// The named holder of the task at `i` when it is someone other than
    /// `caller`: the agent whose task it is.
    pub(super) fn other_holder(&self, i: usize, caller: &Caller) -> Option<&Holder> {
        let task = self.task(i);
        if task.status != TaskStatus::InProgress {
            return None;
        }
        let holder = task.holder.as_ref()?;
        let agent = holder.agent.as_deref()?;
        (caller.agent.as_deref() != Some(agent)).then_some(holder)
    }

    /// May `caller` change the task at `i`? Yes when nobody else holds it
    /// (no event), or when the caller takes it over (the `task_taken_over`
    /// event to log first); otherwise `TASK_HELD`. Changes nothing.
    pub(super) fn check_holder(&self, i: usize, caller: &Caller) -> Result<Option<Event>, OpError> {
        let Some(holder) = self.other_holder(i, caller) else {
            return Ok(None);
        };
        let id = self.task(i).id;
        let owner = holder.agent.as_deref().unwrap_or_default();
        if !caller.takeover {
            let lease = match (&holder.since, &holder.lease_expires_at) {
                (Some(since), Some(until)) => format!(" since {since}, lease until {until}"),
                (Some(since), None) => format!(" since {since}, without a lease"),
                (None, Some(until)) => format!(" (lease until {until})"),
                (None, None) => " without a lease".to_owned(),
            };
            return Err(OpError::new(
                ErrorCode::TaskHeld,
                format!(
                    "Task {id} is held by agent {owner}{lease}; only {owner} may change it, {}",
                    Advice::TAKE_OVER.mcp
                ),
            )
            .with(json!({
                "task_id": id,
                "holder": holder,
                "agent": caller.agent,
            })));
        }
        let by = match caller.agent.as_deref() {
            Some(agent) => format!("agent {agent}"),
            None => "a caller without an identity".to_owned(),
        };
        let mut event = Event::task(
            EventKind::TaskTakenOver,
            id,
            format!("Task {id} taken over from agent {owner} by {by}"),
        );
        event.data = Some(json!({"previous_holder": holder, "new_holder": caller.agent}));
        Ok(Some(event))
    }

    /// The takeover events for every task other agents hold, when `caller`
    /// changes them all at once (`resetPlan`); `TASK_HELD` for the first
    /// such task without a takeover.
    pub(super) fn check_all_holders(&self, caller: &Caller) -> Result<Vec<Event>, OpError> {
        let mut events = Vec::new();
        for &i in &self.index.in_progress {
            events.extend(self.check_holder(i, caller)?);
        }
        Ok(events)
    }

    /// `startTask` with a takeover of a task another agent holds: the
    /// caller becomes its holder, and it becomes the current task; the event
    /// is the takeover. `INVALID_STATUS` when nobody else holds it.
    pub(super) fn take_over(&mut self, i: usize, caller: &Caller) -> Result<Applied, OpError> {
        let Some(event) = self.check_holder(i, caller)? else {
            return Err(self.wrong_status(i, "started", "pending"));
        };
        self.release(i);
        self.hold(i, caller);
        let (id, name) = (self.task(i).id, self.task(i).name.clone());
        self.doc.state.current_task_id = Some(id);
        let mut events = vec![event];
        events.extend(self.refresh_status());
        Ok(Applied {
            data: OpResult::Started(Started {
                task: Some(self.task(i).clone()),
                message: format!("Started task {id} (taken over): {name}"),
                idle: None,
            }),
            events,
        })
    }
}
