//! Tasks as rows in the SQLite store (schema version 4): a plan's row in
//! `plans` keeps its document without its tasks and steps (the header:
//! meta, roles, state), `plan_steps` its steps (when it has any: each
//! step's task ids, O(tasks) of text) and `tasks` a row per task, keyed by
//! its position in the plan. A change writes the header and only the tasks
//! it touched ([`Runner::take_touched`]), an `addTask` at the end of the
//! plan the new task's row (inserted); a change of the task list itself
//! (an insertion after a task, remove, update that moves a task between
//! steps, replan) writes every task and the steps again. Reading a plan puts the document together from the header, the
//! steps and the rows, in one read transaction.

use rusqlite::{params, Connection, OptionalExtension, Transaction};

use crate::document::{PlanDocument, TaskDoc};

use super::database::to_i64;
use super::task_rows::{self, RowWrites, TaskRows};

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
    for (plan_id, text) in plan_headers(tx)? {
        // A document that does not parse stays whole; reading the plan
        // says what is wrong with it.
        if let Ok(mut doc) = serde_json::from_str::<PlanDocument>(&text) {
            let tasks = std::mem::take(&mut doc.tasks);
            write_migrated_header(tx, &plan_id, &doc)?;
            insert_tasks(tx, &plan_id, &tasks)?;
        }
    }
    Ok(())
}

/// Every plan's id and stored header (its document as the `plans` row holds it).
fn plan_headers(tx: &Transaction<'_>) -> rusqlite::Result<Vec<(String, String)>> {
    let mut select = tx.prepare("SELECT plan_id, doc FROM plans")?;
    let rows = select.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
    rows.collect()
}

/// Writes a migrated header in place of the plan's row.
fn write_migrated_header(
    tx: &Transaction<'_>,
    plan_id: &str,
    doc: &PlanDocument,
) -> rusqlite::Result<()> {
    tx.execute(
        "UPDATE plans SET doc = ?1 WHERE plan_id = ?2",
        params![to_text(doc)?, plan_id],
    )?;
    Ok(())
}

/// Version 4: each plan's steps in a row of their own, out of its header
/// (the header is written by every change; the steps only by a change of
/// the task list).
pub(super) fn migrate_to_4(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute_batch(
        "CREATE TABLE plan_steps (
             plan_id TEXT PRIMARY KEY NOT NULL,
             steps   TEXT NOT NULL
         )",
    )?;
    for (plan_id, text) in plan_headers(tx)? {
        if let Some((header, steps)) = task_rows::steps_out_of_header(&text) {
            tx.execute(
                "UPDATE plans SET doc = ?1 WHERE plan_id = ?2",
                params![header, plan_id],
            )?;
            write_steps(tx, &plan_id, &steps)?;
        }
    }
    Ok(())
}

/// What one change writes (shared with PostgreSQL: `task_rows.rs`).
pub(super) type Writes = RowWrites;

/// Writes the tasks of plan `plan_id` that `writes` holds, and its steps
/// when the change wrote them.
pub(super) fn write_tasks(
    writes: &Writes,
    tx: &Transaction<'_>,
    plan_id: &str,
) -> rusqlite::Result<()> {
    if let Some(steps) = &writes.steps {
        write_steps(tx, plan_id, steps)?;
    }
    match &writes.tasks {
        TaskRows::Some(tasks) => {
            // A task appended (`addTask` at the end) has no row yet.
            let mut upsert = tx.prepare(
                "INSERT INTO tasks (plan_id, position, task) VALUES (?2, ?3, ?1)
                 ON CONFLICT (plan_id, position) DO UPDATE SET task = excluded.task",
            )?;
            for (i, text) in tasks {
                upsert.execute(params![text, plan_id, to_i64(*i as u64)])?;
            }
            Ok(())
        }
        TaskRows::All(tasks) => {
            tx.execute("DELETE FROM tasks WHERE plan_id = ?1", [plan_id])?;
            insert_texts(tx, plan_id, tasks.iter().map(String::as_str))
        }
    }
}

/// Writes plan `plan_id`'s steps (their text: a JSON list; no row for
/// none).
fn write_steps(tx: &Transaction<'_>, plan_id: &str, steps: &str) -> rusqlite::Result<()> {
    if steps == "[]" {
        tx.execute("DELETE FROM plan_steps WHERE plan_id = ?1", [plan_id])?;
    } else {
        tx.execute(
            "INSERT OR REPLACE INTO plan_steps (plan_id, steps) VALUES (?1, ?2)",
            params![plan_id, steps],
        )?;
    }
    Ok(())
}

/// Deletes plan `plan_id`'s tasks and steps.
pub(super) fn delete_rows(tx: &Transaction<'_>, plan_id: &str) -> rusqlite::Result<()> {
    tx.execute("DELETE FROM tasks WHERE plan_id = ?1", [plan_id])?;
    tx.execute("DELETE FROM plan_steps WHERE plan_id = ?1", [plan_id])?;
    Ok(())
}

/// Writes plan `plan_id`'s revision, header and summary.
pub(super) fn write_header(
    writes: &Writes,
    tx: &Transaction<'_>,
    plan_id: &str,
) -> rusqlite::Result<()> {
    tx.prepare("UPDATE plans SET revision = ?1, doc = ?2, summary = ?3 WHERE plan_id = ?4")?
        .execute(params![
            to_i64(writes.revision),
            writes.header,
            writes.summary,
            plan_id
        ])
        .map(drop)
}

/// Writes plan `plan_id` anew (its row in `plans` and every task), at
/// revision `doc.state.revision`.
pub(super) fn insert_plan(
    tx: &Transaction<'_>,
    plan_id: &str,
    doc: &PlanDocument,
    summary: &str,
) -> rusqlite::Result<()> {
    delete_rows(tx, plan_id)?;
    let header = PlanDocument {
        tasks: Vec::new(),
        steps: Vec::new(),
        ..doc.clone()
    };
    write_steps(tx, plan_id, &to_text(&doc.steps)?)?;
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

/// Plan `plan_id`'s committed document, put together from its header, its
/// steps and its task rows in one read transaction; `None` when there is no
/// plan. What is wrong is given back when the texts are not a document.
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
    let steps: Option<String> = tx
        .query_row(
            "SELECT steps FROM plan_steps WHERE plan_id = ?1",
            [plan_id],
            |row| row.get(0),
        )
        .optional()?;
    let mut select = tx.prepare("SELECT task FROM tasks WHERE plan_id = ?1 ORDER BY position")?;
    let rows: Vec<String> = select
        .query_map([plan_id], |row| row.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    drop(select);
    tx.finish()?;
    Ok(Some(task_rows::assemble(
        &header,
        steps.as_deref(),
        rows.iter().map(String::as_str),
    )))
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
