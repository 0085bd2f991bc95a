//! Tasks as rows in the SQLite store (schema version 3): a plan's row in
//! `plans` keeps its document without its tasks (the header: meta, steps,
//! roles, state) and `tasks` a row per task, keyed by its position in the
//! plan. A change writes the header and only the tasks it touched
//! ([`Runner::take_touched`]); a change of the task list itself (add,
//! remove, update, replan, reset) writes every task again. Reading a plan
//! puts the document together from the header and the rows, in one read
//! transaction.

use rusqlite::{params, Connection, OptionalExtension, Transaction};

use crate::document::{PlanDocument, TaskDoc, TaskStatus};
use crate::runner::error::{ErrorCode, OpError};
use crate::runner::{Runner, Touched};

use super::database::to_i64;
use super::plan_store::{PlanCounts, PlanSummary};

/// Version 3: a row per task; each plan's `doc` keeps the rest.
pub(super) fn migrate_to_3(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute_batch(
        "CREATE TABLE tasks (
             plan_id  TEXT NOT NULL,
             position INTEGER NOT NULL,
             task     TEXT NOT NULL,
             PRIMARY KEY (plan_id, position)
         ) WITHOUT ROWID",
    )?;
    let rows: Vec<(String, String)> = {
        let mut select = tx.prepare("SELECT plan_id, doc FROM plans")?;
        let rows = select.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    for (plan_id, text) in rows {
        // A document that does not parse stays whole; reading the plan
        // says what is wrong with it.
        if let Ok(mut doc) = serde_json::from_str::<PlanDocument>(&text) {
            let tasks = std::mem::take(&mut doc.tasks);
            tx.execute(
                "UPDATE plans SET doc = ?1 WHERE plan_id = ?2",
                params![to_text(&doc)?, plan_id],
            )?;
            insert_tasks(tx, &plan_id, &tasks)?;
        }
    }
    Ok(())
}

/// What one change writes: the plan's new revision, header and summary,
/// and the tasks it touched.
pub(super) struct Writes {
    /// The revision the change made.
    pub revision: u64,
    /// The document without its tasks.
    header: String,
    summary: String,
    tasks: TaskWrites,
}

/// The tasks a change writes.
enum TaskWrites {
    /// Each touched task: its position and text.
    Some(Vec<(usize, String)>),
    /// Every task, the list having changed.
    All(Vec<String>),
}

impl Writes {
    /// What the change `runner` just made writes, `touched` being the
    /// tasks it touched: O(touched), or O(tasks) for a change of the list.
    pub fn of(plan_id: &str, runner: &mut Runner, touched: &Touched) -> Result<Writes, OpError> {
        let summary = summary_of(plan_id, runner);
        let tasks = match touched.is_everything() {
            true => TaskWrites::All(
                runner
                    .doc
                    .tasks
                    .iter()
                    .map(to_text)
                    .collect::<rusqlite::Result<_>>()
                    .map_err(cannot_write)?,
            ),
            false => TaskWrites::Some(
                touched
                    .positions()
                    .filter_map(|i| runner.doc.tasks.get(i).map(|task| (i, task)))
                    .map(|(i, task)| to_text(task).map(|text| (i, text)))
                    .collect::<rusqlite::Result<_>>()
                    .map_err(cannot_write)?,
            ),
        };
        Ok(Writes {
            revision: runner.doc.state.revision,
            header: header_text(&mut runner.doc).map_err(cannot_write)?,
            summary,
            tasks,
        })
    }

    /// Writes the touched tasks of plan `plan_id`.
    pub fn write_tasks(&self, tx: &Transaction<'_>, plan_id: &str) -> rusqlite::Result<()> {
        match &self.tasks {
            TaskWrites::Some(tasks) => {
                let mut update =
                    tx.prepare("UPDATE tasks SET task = ?1 WHERE plan_id = ?2 AND position = ?3")?;
                for (i, text) in tasks {
                    update.execute(params![text, plan_id, to_i64(*i as u64)])?;
                }
                Ok(())
            }
            TaskWrites::All(tasks) => {
                tx.execute("DELETE FROM tasks WHERE plan_id = ?1", [plan_id])?;
                insert_texts(tx, plan_id, tasks.iter().map(String::as_str))
            }
        }
    }

    /// Writes plan `plan_id`'s revision, header and summary.
    pub fn write_header(&self, tx: &Transaction<'_>, plan_id: &str) -> rusqlite::Result<()> {
        tx.prepare("UPDATE plans SET revision = ?1, doc = ?2, summary = ?3 WHERE plan_id = ?4")?
            .execute(params![
                to_i64(self.revision),
                self.header,
                self.summary,
                plan_id
            ])
            .map(drop)
    }
}

/// Writes plan `plan_id` anew (its row in `plans` and every task), at
/// revision `doc.state.revision`.
pub(super) fn insert_plan(
    tx: &Transaction<'_>,
    plan_id: &str,
    doc: &PlanDocument,
    summary: &str,
) -> rusqlite::Result<()> {
    tx.execute("DELETE FROM tasks WHERE plan_id = ?1", [plan_id])?;
    let mut header = doc.clone();
    header.tasks = Vec::new();
    tx.execute(
        "INSERT OR REPLACE INTO plans (plan_id, revision, doc, summary) VALUES (?1, ?2, ?3, ?4)",
        params![
            plan_id,
            to_i64(doc.state.revision),
            to_text(&header)?,
            summary
        ],
    )?;
    insert_tasks(tx, plan_id, &doc.tasks)
}

/// Plan `plan_id`'s committed document, put together from its header and
/// its task rows in one read transaction; `None` when there is no plan.
/// The header's text is given back when it is not a document.
pub(super) fn read_plan(
    conn: &Connection,
    plan_id: &str,
) -> rusqlite::Result<Option<Result<PlanDocument, String>>> {
    let tx = conn.unchecked_transaction()?;
    let header: Option<String> = tx
        .query_row(
            "SELECT doc FROM plans WHERE plan_id = ?1",
            [plan_id],
            |row| row.get(0),
        )
        .optional()?;
    let Some(header) = header else {
        return Ok(None);
    };
    let mut doc = match serde_json::from_str::<PlanDocument>(&header) {
        Ok(doc) => doc,
        Err(e) => return Ok(Some(Err(e.to_string()))),
    };
    let mut select = tx.prepare("SELECT task FROM tasks WHERE plan_id = ?1 ORDER BY position")?;
    let mut rows = select.query([plan_id])?;
    let mut tasks = Vec::new();
    while let Some(row) = rows.next()? {
        let text: String = row.get(0)?;
        match serde_json::from_str::<TaskDoc>(&text) {
            Ok(task) => tasks.push(task),
            Err(e) => return Ok(Some(Err(format!("task {}: {e}", tasks.len() + 1)))),
        }
    }
    drop(rows);
    drop(select);
    tx.finish()?;
    // A document kept whole (it did not parse when the rows came in) has
    // its tasks in its header.
    if !tasks.is_empty() {
        doc.tasks = tasks;
    }
    Ok(Some(Ok(doc)))
}

/// Plan `plan_id`'s summary from the runner's counters: O(1).
fn summary_of(plan_id: &str, runner: &Runner) -> String {
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

/// The document's text without its tasks (taken out and put back: O(1)).
fn header_text(doc: &mut PlanDocument) -> rusqlite::Result<String> {
    let tasks = std::mem::take(&mut doc.tasks);
    let text = to_text(&*doc);
    doc.tasks = tasks;
    text
}

fn insert_tasks(tx: &Transaction<'_>, plan_id: &str, tasks: &[TaskDoc]) -> rusqlite::Result<()> {
    let texts: Vec<String> = tasks.iter().map(to_text).collect::<rusqlite::Result<_>>()?;
    insert_texts(tx, plan_id, texts.iter().map(String::as_str))
}

fn insert_texts<'a>(
    tx: &Transaction<'_>,
    plan_id: &str,
    texts: impl Iterator<Item = &'a str>,
) -> rusqlite::Result<()> {
    let mut insert =
        tx.prepare("INSERT INTO tasks (plan_id, position, task) VALUES (?1, ?2, ?3)")?;
    for (i, text) in texts.enumerate() {
        insert.execute(params![plan_id, to_i64(i as u64), text])?;
    }
    Ok(())
}

fn to_text<T: serde::Serialize>(value: &T) -> rusqlite::Result<String> {
    serde_json::to_string(value).map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))
}

fn cannot_write(error: rusqlite::Error) -> OpError {
    OpError::new(ErrorCode::StateIo, format!("cannot write a task: {error}"))
}
