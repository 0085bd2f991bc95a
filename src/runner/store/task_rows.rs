//! What the database stores (SQLite, PostgreSQL) share to keep tasks as
//! rows: a plan's row holds its document without its tasks and steps (the
//! header: meta, roles, state) and its summary; its steps (each step's task
//! ids, O(tasks) of text) are a row of their own, written only by a change
//! that changed a step's list (a task inserted into or removed from a
//! step, a replan); each task is a row of its own, keyed by its order key
//! (`ord`: increasing in plan order, with gaps, `runner/order.rs`). A
//! change is run in place on the plan's kept runner ([`change_in_place`]),
//! and writes the header, the summary and only the tasks it touched
//! ([`RowWrites`]): an `addTask` (at the end or after a task) the new
//! task's row and those of the tasks it rewired, a `removeTask` the
//! deletion of its row and the rows of the tasks it rewired; a replan
//! every task and the steps again. Reading a plan puts the document
//! together from the header, the steps and the rows in key order
//! ([`assemble`]); migrations move the steps out of a header
//! ([`steps_out_of_header`]). Only the SQL differs between the backends.

use crate::document::{PlanDocument, StepDoc, TaskDoc, TaskStatus};
use crate::runner::error::{ErrorCode, OpError};
use crate::runner::events::{Event, LogRecord};
use crate::runner::{Runner, Touched};

use super::plan_store::{next_revision_in_place, PlanCounts, PlanSummary};

/// What one change writes: the plan's new revision, header and summary,
/// and the tasks it touched.
#[derive(Debug)]
pub(super) struct RowWrites {
    /// The revision the change made.
    pub revision: u64,
    /// The document without its tasks and its steps.
    pub header: String,
    /// The plan's steps' text when a step's task list changed (an
    /// insertion or removal of a task in a step, a replan); `None`
    /// otherwise.
    pub steps: Option<String>,
    /// The plan's summary (as `PlanStore::list` gives it).
    pub summary: String,
    /// The tasks written.
    pub tasks: TaskRows,
}

/// The tasks a change writes, each at its order key (`tasks.ord`).
#[derive(Debug)]
pub(super) enum TaskRows {
    /// Each touched task (its key and text), and the keys whose rows go
    /// (deleted before the tasks are written).
    Some {
        /// (key, text) of each task written.
        written: Vec<(i64, String)>,
        /// Keys whose rows go: tasks removed, or moved to another key.
        gone: Vec<i64>,
    },
    /// Every task (key, text), the list having been replaced: every other
    /// row of the plan goes.
    All(Vec<(i64, String)>),
}

impl RowWrites {
    /// What the change `runner` just made writes, `touched` being the
    /// tasks it touched: O(touched), or O(tasks) for a change that
    /// replaced the list (a replan).
    pub fn of(plan_id: &str, runner: &mut Runner, touched: &Touched) -> Result<RowWrites, OpError> {
        let order = &runner.order;
        let tasks = match touched.is_everything() {
            true => TaskRows::All(
                runner
                    .doc
                    .tasks
                    .iter()
                    .enumerate()
                    .map(|(i, task)| to_text(task).map(|text| (order.key(i), text)))
                    .collect::<Result<_, _>>()?,
            ),
            false => TaskRows::Some {
                written: touched
                    .ids()
                    .filter_map(|id| runner.index.position.get(&id).copied())
                    .map(|i| to_text(&runner.doc.tasks[i]).map(|text| (order.key(i), text)))
                    .collect::<Result<_, _>>()?,
                gone: touched.gone_keys().collect(),
            },
        };
        let steps = match touched.steps_changed() {
            true => Some(to_text(&runner.doc.steps)?),
            false => None,
        };
        Ok(RowWrites {
            revision: runner.doc.state.revision,
            header: header_text(&mut runner.doc)?,
            steps,
            summary: summary_of(plan_id, runner),
            tasks,
        })
    }
}

/// A change run in place on a kept runner ([`change_in_place`]).
pub(super) struct InPlace {
    /// The revision it ran on.
    pub base: u64,
    /// What it changed (its rows and record), nothing, or why it was
    /// refused.
    pub outcome: Result<Option<(RowWrites, LogRecord)>, OpError>,
    /// The tasks it touched.
    pub touched: Touched,
    /// Whether a change that wrote nothing left a trace on the runner (a
    /// task touched, the state changed): then the runner no longer is the
    /// committed state.
    pub trace: bool,
}

/// Runs `change` on `runner` in place (leases that ran out expired first,
/// the revision sealed when it changed anything), and what it writes.
pub(super) fn change_in_place(
    plan_id: &str,
    runner: &mut Runner,
    op: &str,
    change: &mut dyn FnMut(&mut Runner) -> Result<Vec<Event>, OpError>,
) -> InPlace {
    let base = runner.doc.state.revision;
    let state = runner.doc.state.clone();
    runner.take_touched();
    let outcome = next_revision_in_place(runner, op, change);
    let touched = runner.take_touched();
    let outcome = match outcome {
        Ok(Some(record)) => {
            RowWrites::of(plan_id, runner, &touched).map(|writes| Some((writes, record)))
        }
        other => other.map(|_| None),
    };
    let trace =
        !matches!(outcome, Ok(Some(_))) && (!touched.is_empty() || runner.doc.state != state);
    InPlace {
        base,
        outcome,
        touched,
        trace,
    }
}

/// A document as rows.
pub(super) struct Split {
    /// The header's text: the document without its tasks and steps.
    pub header: String,
    /// The steps' text (`[]` for none).
    pub steps: String,
    /// Each task's text, in order (at the keys [`crate::runner::default_key`] gives).
    pub tasks: Vec<String>,
}

/// A document as rows: its header's, its steps' and each task's text.
pub(super) fn split(doc: &PlanDocument) -> Result<Split, OpError> {
    let tasks = doc.tasks.iter().map(to_text).collect::<Result<_, _>>()?;
    let mut header = PlanDocument {
        tasks: Vec::new(),
        steps: Vec::new(),
        ..doc.clone()
    };
    Ok(Split {
        header: header_text(&mut header)?,
        steps: to_text(&doc.steps)?,
        tasks,
    })
}

/// A stored header's text without its steps, and the steps' text, when it
/// parses and has steps (a migration moves them to their own row); `None`
/// otherwise (a header that does not parse stays as it is: reading the plan
/// says what is wrong with it). Parsed and written again, the header is
/// byte for byte what the store wrote, but for its steps.
pub(super) fn steps_out_of_header(text: &str) -> Option<(String, String)> {
    let mut doc = serde_json::from_str::<PlanDocument>(text).ok()?;
    if doc.steps.is_empty() {
        return None;
    }
    let steps = std::mem::take(&mut doc.steps);
    Some((to_text(&doc).ok()?, to_text(&steps).ok()?))
}

/// The document of a header's text, its steps' text (`None`: no row of
/// steps, the header's own) and its task rows' texts (in position order),
/// or what is wrong with them. A header without rows keeps its own tasks (a
/// document kept whole: it did not parse when the rows came in).
pub(super) fn assemble<'a>(
    header: &str,
    steps: Option<&str>,
    rows: impl IntoIterator<Item = &'a str>,
) -> Result<PlanDocument, String> {
    let mut doc = serde_json::from_str::<PlanDocument>(header).map_err(|e| e.to_string())?;
    if let Some(steps) = steps {
        doc.steps =
            serde_json::from_str::<Vec<StepDoc>>(steps).map_err(|e| format!("steps: {e}"))?;
    }
    let tasks = parse_tasks(rows)?;
    if !tasks.is_empty() {
        doc.tasks = tasks;
    }
    Ok(doc)
}

/// A runner over `doc` as read from a store, `keys` being its task rows'
/// order keys (none when the document kept its tasks whole: then they are
/// as first written).
pub(super) fn runner_of(doc: PlanDocument, keys: Vec<i64>) -> Result<Runner, OpError> {
    match keys.is_empty() {
        true => Runner::new(doc),
        false => Runner::with_order(doc, keys),
    }
}

/// Task rows' texts parsed, in order, or which one is not a task.
pub(super) fn parse_tasks<'a>(
    rows: impl IntoIterator<Item = &'a str>,
) -> Result<Vec<TaskDoc>, String> {
    // As many tasks as rows, without a doubling vector's slack (a quarter
    // of a 100,000-task plan's memory; docs/performance.md, "Memory").
    let rows = rows.into_iter();
    let mut tasks = Vec::with_capacity(rows.size_hint().0);
    for text in rows {
        match serde_json::from_str::<TaskDoc>(text) {
            Ok(task) => tasks.push(task),
            Err(e) => return Err(format!("task {}: {e}", tasks.len() + 1)),
        }
    }
    Ok(tasks)
}

/// Plan `plan_id`'s summary from the runner's counters: O(1).
pub(super) fn summary_of(plan_id: &str, runner: &Runner) -> String {
    let count = |status: TaskStatus| runner.index.count(status);
    let summary = PlanSummary {
        plan_id: plan_id.to_owned(),
        title: runner.doc.meta.title.clone(),
        goal: runner.doc.meta.goal.clone(),
        status: runner.doc.state.status,
        revision: runner.doc.state.revision,
        updated_at: runner.doc.meta.updated_at.clone(),
        counts: PlanCounts {
            total: runner.doc.tasks.len(),
            pending: count(TaskStatus::Pending),
            in_progress: count(TaskStatus::InProgress),
            completed: count(TaskStatus::Completed),
            failed: count(TaskStatus::Failed),
            skipped: count(TaskStatus::Skipped),
        },
    };
    serde_json::to_string(&summary).unwrap_or_else(|_| "{}".to_owned())
}

/// The document's text without its tasks and its steps (both taken out
/// and put back: O(1)).
pub(super) fn header_text(doc: &mut PlanDocument) -> Result<String, OpError> {
    let tasks = std::mem::take(&mut doc.tasks);
    let steps = std::mem::take(&mut doc.steps);
    let text = to_text(&*doc);
    doc.tasks = tasks;
    doc.steps = steps;
    text
}

/// A value's compact JSON text.
pub(super) fn to_text<T: serde::Serialize>(value: &T) -> Result<String, OpError> {
    serde_json::to_string(value)
        .map_err(|e| OpError::new(ErrorCode::StateIo, format!("cannot write a task: {e}")))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::document::{Meta, StepDoc};
    use crate::runner::{Caller, Op};

    /// Against the old path (the steps written in the header with every
    /// change): the header of each change and the steps last written put
    /// together are the header the old path wrote (the document without
    /// its tasks), byte for byte, over random changes of a plan with steps.
    #[test]
    fn steps_kept_apart_put_together_are_the_header_written_whole() {
        let tasks = (1..=12)
            .map(|id| {
                let mut task = TaskDoc::pending(id, format!("t{id}"), Vec::new());
                task.step = Some(format!("s{}", (id - 1) / 3));
                task
            })
            .collect();
        let mut doc = PlanDocument::new(Meta::new("p", "g"), tasks);
        doc.steps = (0..4)
            .map(|s| StepDoc {
                id: format!("s{s}"),
                name: format!("Step {s}"),
                tasks: (s * 3 + 1..=s * 3 + 3).collect(),
            })
            .collect();
        let mut runner = Runner::new(doc).expect("a runner");
        let mut steps = to_text(&runner.doc.steps).expect("text");
        let mut seed = 5u64;
        let mut roll = |n: u64| {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) % n
        };
        let (mut written, mut skipped) = (0, 0);
        for n in 0..300 {
            let id = runner.doc.tasks[roll(runner.doc.tasks.len() as u64) as usize].id;
            let (name, args) = match roll(8) {
                0..=2 => ("startNextTask", json!({})),
                3 | 4 => ("completeTask", json!({"task_id": id})),
                5 => (
                    "addTask",
                    json!({"name": format!("a{n}"), "after_task_id": id}),
                ),
                6 => ("removeTask", json!({"task_id": id})),
                _ => ("skipTask", json!({"task_id": id})),
            };
            runner.take_touched();
            let caller = Caller::agent(Some(format!("a{}", roll(3))));
            let op = Op::from_call(name, args).expect("an op");
            if !runner.apply_as(&op, &caller).is_ok_and(|a| a.changed()) {
                continue;
            }
            let touched = runner.take_touched();
            let whole = to_text(&PlanDocument {
                tasks: Vec::new(),
                ..runner.doc.clone()
            })
            .expect("text");
            let apart = RowWrites::of("p", &mut runner, &touched).expect("writes");
            match apart.steps {
                Some(text) => {
                    steps = text;
                    written += 1;
                }
                None => skipped += 1,
            }
            let mut header: PlanDocument = serde_json::from_str(&apart.header).expect("a header");
            assert!(header.steps.is_empty());
            header.steps = serde_json::from_str(&steps).expect("steps");
            assert_eq!(to_text(&header).expect("text"), whole, "after {name}");
            if runner.doc.tasks.is_empty() {
                break;
            }
        }
        assert!(
            written > 10 && skipped > 50,
            "{written} written, {skipped} not"
        );
    }
}
