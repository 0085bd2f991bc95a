//! Tasks as rows in the SQLite store (schema version 5): a plan's row in
//! `plans` keeps its document without its tasks and steps (the header:
//! meta, roles, state), `plan_steps` its steps (when it has any: each
//! step's task ids, O(tasks) of text) and `tasks` a row per task, keyed by
//! its order key `ord` (increasing in plan order, with gaps: a task
//! inserted in the middle takes a key between its neighbours'). A change
//! writes the header and only the tasks it touched ([`Runner::take_touched`]):
//! an `addTask` the new task's row and those of the tasks it rewired, a
//! `removeTask` the deletion of its row and the rewired tasks' rows, the
//! steps only when a step's list changed; a replan every task and the
//! steps again. Reading a plan puts the document together from the header,
//! the steps and the rows in key order, in one read transaction.

use rusqlite::{params, Connection, OptionalExtension, Transaction};

use crate::document::{PlanDocument, TaskDoc};

use crate::runner::{default_key, ORDER_GAP};

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
            insert_tasks(tx, &plan_id, &tasks, V3_INSERT, |i| to_i64(i as u64))?;
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

/// Version 5: task rows keyed by an order key with gaps (`ord`), not by
/// their position: the key of the task at position `p` is
/// `(p + 1) × ORDER_GAP`, so the plan reads as before and a task inserted
/// later between two others takes a key between theirs. The rows are
/// renumbered through negative keys, so no key meets another on the way.
pub(super) fn migrate_to_5(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute(
        "UPDATE tasks SET position = -(position + 1) * ?1",
        [ORDER_GAP],
    )?;
    tx.execute_batch(
        "UPDATE tasks SET position = -position;
         ALTER TABLE tasks RENAME COLUMN position TO ord;",
    )
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
        TaskRows::Some { written, gone } => {
            if !gone.is_empty() {
                let mut delete = tx.prepare("DELETE FROM tasks WHERE plan_id = ?1 AND ord = ?2")?;
                for key in gone {
                    delete.execute(params![plan_id, key])?;
                }
            }
            // A task inserted has no row yet.
            let mut upsert = tx.prepare(
                "INSERT INTO tasks (plan_id, ord, task) VALUES (?2, ?3, ?1)
                 ON CONFLICT (plan_id, ord) DO UPDATE SET task = excluded.task",
            )?;
            for (key, text) in written {
                upsert.execute(params![text, plan_id, key])?;
            }
            Ok(())
        }
        TaskRows::All(tasks) => {
            tx.execute("DELETE FROM tasks WHERE plan_id = ?1", [plan_id])?;
            let mut insert = tx.prepare(INSERT)?;
            for (key, text) in tasks {
                insert.execute(params![plan_id, key, text])?;
            }
            Ok(())
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
    insert_tasks(tx, plan_id, &doc.tasks, INSERT, default_key)
}

/// Plan `plan_id`'s committed document, put together from its header, its
/// steps and its task rows in one read transaction, and the rows' order
/// keys; `None` when there is no plan. What is wrong is given back when the
/// texts are not a document.
#[allow(clippy::type_complexity)]
pub(super) fn read_plan(
    conn: &Connection,
    plan_id: &str,
) -> rusqlite::Result<Option<Result<(PlanDocument, Vec<i64>), String>>> {
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
    let mut select = tx.prepare("SELECT ord, task FROM tasks WHERE plan_id = ?1 ORDER BY ord")?;
    let (keys, rows): (Vec<i64>, Vec<String>) = select
        .query_map([plan_id], |row| Ok((row.get(0)?, row.get(1)?)))?
        .collect::<rusqlite::Result<Vec<(i64, String)>>>()?
        .into_iter()
        .unzip();
    drop(select);
    tx.finish()?;
    let doc = task_rows::assemble(&header, steps.as_deref(), rows.iter().map(String::as_str));
    Ok(Some(doc.map(|doc| (doc, keys))))
}

/// Inserts a task row at its position (schema 3 and 4).
const V3_INSERT: &str = "INSERT INTO tasks (plan_id, position, task) VALUES (?1, ?2, ?3)";
/// Inserts a task row at its order key.
const INSERT: &str = "INSERT INTO tasks (plan_id, ord, task) VALUES (?1, ?2, ?3)";

/// Inserts `tasks` with `insert`, the task at position `i` at key `key(i)`.
fn insert_tasks(
    tx: &Transaction<'_>,
    plan_id: &str,
    tasks: &[TaskDoc],
    insert: &str,
    key: fn(usize) -> i64,
) -> rusqlite::Result<()> {
    let mut insert = tx.prepare(insert)?;
    for (i, task) in tasks.iter().enumerate() {
        insert.execute(params![plan_id, key(i), to_text(task)?])?;
    }
    Ok(())
}

fn to_text<T: serde::Serialize>(value: &T) -> rusqlite::Result<String> {
    serde_json::to_string(value).map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))
}
