//! Tasks as rows in the SQLite store (schema version 3): a plan's row in
//! `plans` keeps its document without its tasks (the header: meta, steps,
//! roles, state) and `tasks` a row per task, keyed by its position in the
//! plan. A change writes the header and only the tasks it touched
//! ([`Runner::take_touched`]); a change of the task list itself (add,
//! remove, update, replan, reset) writes every task again. Reading a plan
//! puts the document together from the header and the rows, in one read
//! transaction.

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

/// What one change writes (shared with PostgreSQL: `task_rows.rs`).
pub(super) type Writes = RowWrites;

/// Writes the tasks of plan `plan_id` that `writes` holds.
pub(super) fn write_tasks(
    writes: &Writes,
    tx: &Transaction<'_>,
    plan_id: &str,
) -> rusqlite::Result<()> {
    match &writes.tasks {
        TaskRows::Some(tasks) => {
            let mut update =
                tx.prepare("UPDATE tasks SET task = ?1 WHERE plan_id = ?2 AND position = ?3")?;
            for (i, text) in tasks {
                update.execute(params![text, plan_id, to_i64(*i as u64)])?;
            }
            Ok(())
        }
        TaskRows::All(tasks) => {
            tx.execute("DELETE FROM tasks WHERE plan_id = ?1", [plan_id])?;
            insert_texts(tx, plan_id, tasks.iter().map(String::as_str))
        }
    }
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
    let mut select = tx.prepare("SELECT task FROM tasks WHERE plan_id = ?1 ORDER BY position")?;
    let rows: Vec<String> = select
        .query_map([plan_id], |row| row.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    drop(select);
    tx.finish()?;
    Ok(Some(task_rows::assemble(
        &header,
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
