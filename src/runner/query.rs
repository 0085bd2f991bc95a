//! Queries: the current task, one task, lists, the executable tasks and the
//! plan status. They never change the state.

use serde_json::json;

use crate::document::{PlanStatus, TaskStatus};

use super::error::{ErrorCode, OpError};
use super::events::Event;
use super::ops::{ListArgs, TaskRef};
use super::results::{ExecutableTasks, FoundTask, OpResult, PlanReport, TaskList};
use super::Caller;
use super::{Applied, Runner};

fn query(data: OpResult) -> Applied {
    Applied {
        data,
        events: Vec::<Event>::new(),
    }
}

impl Runner {
    /// `getCurrentTask`: the current task object, or `null` when there is none.
    /// For an agent, the task it holds (see [`Runner::current_of`]).
    pub(super) fn get_current_task(&self, caller: &Caller) -> Result<Applied, OpError> {
        let task = self.current_of(caller).map(|i| self.task(i).clone());
        Ok(query(OpResult::CurrentTask(task)))
    }

    /// `getTaskById`: `{task}`.
    pub(super) fn get_task_by_id(&self, task: &TaskRef) -> Result<Applied, OpError> {
        let i = self.find(task)?;
        Ok(query(OpResult::Task(FoundTask {
            task: self.task(i).clone(),
        })))
    }

    /// `getTaskList`: `{tasks, total, filtered}`; the status may also be `executable`.
    pub(super) fn get_task_list(&self, args: &ListArgs) -> Result<Applied, OpError> {
        enum Filter {
            Any,
            Status(TaskStatus),
            Executable,
            Blocked,
        }
        let filter =
            match args.status.as_deref() {
                None | Some("") | Some("all") => Filter::Any,
                Some("executable") | Some("ready") => Filter::Executable,
                Some("blocked") => Filter::Blocked,
                Some(name) => match TaskStatus::from_name(name) {
                    Some(status) => Filter::Status(status),
                    None => return Err(OpError::new(
                        ErrorCode::InvalidStatus,
                        format!("unknown task status `{name}`"),
                    )
                    .with(
                        json!({"statuses": TaskStatus::NAMES, "also": ["executable", "blocked"]}),
                    )),
                },
            };
        let tasks: Vec<_> = self
            .doc
            .tasks
            .iter()
            .enumerate()
            .filter(|(i, t)| match filter {
                Filter::Any => true,
                Filter::Status(s) => t.status == s,
                Filter::Executable => self.index.ready.contains(i),
                Filter::Blocked => t.status == TaskStatus::Pending && !self.index.ready.contains(i),
            })
            .filter(|(_, t)| args.assignee.is_none() || t.assignee == args.assignee)
            .map(|(_, t)| t.clone())
            .collect();
        Ok(query(OpResult::TaskList(TaskList {
            filtered: tasks.len(),
            tasks,
            total: self.doc.tasks.len(),
        })))
    }

    /// `getExecutableTaskList`: `{executable_tasks, count}`, by priority, then in plan order.
    pub(super) fn get_executable_task_list(
        &self,
        assignee: Option<&str>,
    ) -> Result<Applied, OpError> {
        let tasks: Vec<_> = self
            .index
            .ready
            .iter()
            .map(|&i| self.task(i))
            .filter(|t| assignee.is_none() || t.assignee.as_deref() == assignee)
            .cloned()
            .collect();
        Ok(query(OpResult::Executable(ExecutableTasks {
            count: tasks.len(),
            executable_tasks: tasks,
        })))
    }

    /// `getPlanStatus`: the PlanManager API's fields, more counts, and a `reason` when
    /// the plan is failed, paused, or waiting with nothing executable.
    pub(super) fn get_plan_status(&self) -> Applied {
        let total = self.doc.tasks.len();
        let done = self.index.done();
        let progress = if total == 0 {
            0.0
        } else {
            ((done as f64 / total as f64) * 1000.0).round() / 1000.0
        };
        let status = self.doc.state.status;
        let mut data = PlanReport {
            status,
            progress,
            current_task_id: self.doc.state.current_task_id,
            total_tasks: total,
            completed_tasks: self.index.count(TaskStatus::Completed),
            failed_tasks: self.index.count(TaskStatus::Failed),
            pending_tasks: self.index.count(TaskStatus::Pending),
            in_progress_tasks: self.index.count(TaskStatus::InProgress),
            skipped_tasks: self.index.count(TaskStatus::Skipped),
            executable_tasks: self.index.ready.len(),
            blocked_tasks: self.index.count(TaskStatus::Pending) - self.index.ready.len(),
            revision: self.doc.state.revision,
            iteration_count: self.doc.state.iteration_count,
            reason: None,
            blocked_by: None,
        };
        let reason = match status {
            PlanStatus::Failed => Some(format!(
                "Nothing can run: required task(s) {} failed",
                self.failed_required_ids().join(", ")
            )),
            PlanStatus::Paused => Some(format!(
                "The plan is paused; {}",
                super::advice::Advice::RESUME_STATUS.mcp
            )),
            _ if self.index.failed_required > 0 => Some(format!(
                "Task(s) {} failed; the tasks after them are blocked",
                self.failed_required_ids().join(", ")
            )),
            _ => None,
        };
        if let Some(reason) = reason {
            data.reason = Some(reason);
            data.blocked_by = Some(self.failed_required_ids_raw(usize::MAX));
        }
        query(OpResult::Status(data))
    }

    /// The ids of up to `limit` tasks with `status`, in plan order.
    pub(super) fn ids_with(&self, status: TaskStatus, limit: usize) -> Vec<u32> {
        if self.index.count(status) == 0 {
            return Vec::new();
        }
        self.doc
            .tasks
            .iter()
            .filter(|t| t.status == status)
            .take(limit)
            .map(|t| t.id)
            .collect()
    }

    /// The ids of up to `limit` failed required tasks, in plan order.
    pub(super) fn failed_required_ids_raw(&self, limit: usize) -> Vec<u32> {
        if self.index.failed_required == 0 {
            return Vec::new();
        }
        self.doc
            .tasks
            .iter()
            .filter(|t| t.status == TaskStatus::Failed && !t.optional)
            .take(limit)
            .map(|t| t.id)
            .collect()
    }

    /// The failed required tasks as `#4 (error)` for messages.
    pub(super) fn failed_required_ids(&self) -> Vec<String> {
        self.failed_required_ids_raw(10)
            .into_iter()
            .map(|id| {
                let t = &self.doc.tasks[self.index.position[&id]];
                match &t.result {
                    Some(error) => format!("{id} ({error})"),
                    None => id.to_string(),
                }
            })
            .collect()
    }
}
