//! Tasks as rows in the PostgreSQL store (schema version 6): the SQL of
//! `tasks`, of a plan's header and steps beside them (`plans`,
//! `plan_steps`), and of the one statement that writes changes. The row
//! encoding and the change logic are the SQLite store's (`task_rows.rs`):
//! the header is written by every change, the steps only by a change of the
//! task list.
//!
//! Besides its header, a plan's row keeps `born` (the id of the
//! transaction that created the plan: a plan started over or created
//! again is another plan) and `reshaped` (the revision of the last change
//! that wrote every task: the list may have changed). Each task row keeps
//! the revision that last wrote it, indexed, so that a process whose kept
//! runner is at revision `r` reads only the rows written after `r`.

use std::collections::BTreeMap;

use postgres::{GenericClient, Statement, Transaction};

use crate::document::{PlanDocument, TaskDoc};
use crate::runner::error::OpError;
use crate::runner::store::database::to_i64;
use crate::runner::store::task_rows::{self, RowWrites, Split, TaskRows};

/// Version 5: a row per task; each plan's `doc` keeps the rest (its steps
/// too, until version 6).
pub(super) fn migrate_to_5(tx: &mut Transaction<'_>) -> Result<(), postgres::Error> {
    tx.batch_execute(
        "ALTER TABLE plans ADD COLUMN born BIGINT NOT NULL DEFAULT 0;
         ALTER TABLE plans ADD COLUMN reshaped BIGINT NOT NULL DEFAULT 0;
         CREATE TABLE tasks (
             plan_id  TEXT NOT NULL,
             position BIGINT NOT NULL,
             revision BIGINT NOT NULL,
             task     TEXT NOT NULL,
             PRIMARY KEY (plan_id, position)
         );
         CREATE INDEX tasks_written ON tasks (plan_id, revision);",
    )?;
    let rows = tx.query("SELECT plan_id, revision, doc FROM plans", &[])?;
    for row in rows {
        let (plan_id, revision, text): (String, i64, String) = (row.get(0), row.get(1), row.get(2));
        // A document that does not parse stays whole; reading the plan
        // says what is wrong with it.
        let Ok(mut doc) = serde_json::from_str::<PlanDocument>(&text) else {
            continue;
        };
        let Ok(tasks) = doc
            .tasks
            .iter()
            .map(task_rows::to_text)
            .collect::<Result<Vec<_>, _>>()
        else {
            continue;
        };
        doc.tasks = Vec::new();
        let Ok(header) = task_rows::to_text(&doc) else {
            continue;
        };
        tx.execute(
            "UPDATE plans SET doc = $2 WHERE plan_id = $1",
            &[&plan_id, &header],
        )?;
        tx.execute(INSERT_TASKS, &[&plan_id, &revision, &tasks])?;
    }
    Ok(())
}

/// Version 6: each plan's steps (each step's task ids: O(tasks) of text)
/// in a row of their own, `plan_steps`, out of its header: the header is
/// written by every change, the steps only by a change of the task list.
/// A header that does not parse, or has no steps, stays as it is.
pub(super) fn migrate_to_6(tx: &mut Transaction<'_>) -> Result<(), postgres::Error> {
    tx.batch_execute(
        "CREATE TABLE plan_steps (
             plan_id TEXT PRIMARY KEY,
             steps   TEXT NOT NULL
         )",
    )?;
    let rows = tx.query("SELECT plan_id, doc FROM plans", &[])?;
    for row in rows {
        let (plan_id, text): (String, String) = (row.get(0), row.get(1));
        if let Some((header, steps)) = task_rows::steps_out_of_header(&text) {
            tx.execute(
                "UPDATE plans SET doc = $2 WHERE plan_id = $1",
                &[&plan_id, &header],
            )?;
            tx.execute(
                "INSERT INTO plan_steps (plan_id, steps) VALUES ($1, $2)",
                &[&plan_id, &steps],
            )?;
        }
    }
    Ok(())
}

/// Inserts plan `$1`'s tasks `$3` (texts, in order) written at revision `$2`.
pub(super) const INSERT_TASKS: &str = "INSERT INTO tasks (plan_id, position, revision, task)
     SELECT $1, n - 1, $2, t FROM unnest($3::text[]) WITH ORDINALITY AS x(t, n)";

/// Plan `$1`'s version, header and steps, and its tasks in order:
/// `revision`, `born`, `doc`, the steps' text (null without a row), the
/// tasks' texts. One statement: one snapshot.
pub(super) const READ_PLAN: &str = "SELECT revision, born, doc,
         (SELECT steps FROM plan_steps WHERE plan_id = $1),
         ARRAY(SELECT task FROM tasks WHERE plan_id = $1 ORDER BY position)
     FROM plans WHERE plan_id = $1";

/// Plan `$1`'s version and header, and the tasks written after revision
/// `$2` or at the positions `$3`: `revision`, `born`, `reshaped`, `doc`,
/// their positions, their texts. One statement: one snapshot; each half of
/// the union reads an index (`tasks_written`, the primary key). Not the
/// steps: only a change of the list (`reshaped`) writes them, and then the
/// whole plan is read ([`READ_PLAN`]).
pub(super) const READ_CHANGED: &str = "WITH changed AS MATERIALIZED (
         SELECT position, task FROM tasks WHERE plan_id = $1 AND revision > $2
         UNION
         SELECT position, task FROM tasks WHERE plan_id = $1 AND position = ANY($3)
     )
     SELECT revision, born, reshaped, doc,
         ARRAY(SELECT position FROM changed ORDER BY position),
         ARRAY(SELECT task FROM changed ORDER BY position)
     FROM plans WHERE plan_id = $1";

/// Plan `$1`'s version: `revision`, `born`.
pub(super) const READ_VERSION: &str = "SELECT revision, born FROM plans WHERE plan_id = $1";

/// The writes of a batch of changes in one statement (the writer sends it
/// in a transaction that holds the plans' locks, with `$1` empty): the
/// advisory locks of `$1` (in order) first; then each plan's row (`$2`–`$8`) only if it is
/// still the version its first change was computed on (revision `$3`,
/// `born` `$4`), and, of those plans only, the tasks (`$9`–`$11`; every
/// position from the count `$8` on deleted when it is not negative), the
/// steps (`$15`–`$16`: those of the plans whose list changed; `[]`
/// deletes the row) and the events (`$12`–`$14`, in order). Gives the
/// plans written and the transaction's id.
///
/// The locks are the update's one-time condition, so they are all held
/// before it touches a row (and takes its transaction id). Its snapshot
/// may predate a change committed while it waited for a lock: the update
/// then checks the version against the row as that change left it
/// (PostgreSQL re-reads an updated row before updating it), and writes no
/// task of that plan.
pub(super) const WRITE: &str = "WITH locked AS MATERIALIZED (
         SELECT count(*) AS n
         FROM (SELECT pg_advisory_xact_lock(k) FROM unnest($1::bigint[]) AS k) l
     ), updated AS (
         UPDATE plans p SET revision = u.revision, doc = u.doc, summary = u.summary,
             reshaped = CASE WHEN u.count >= 0 THEN u.revision ELSE p.reshaped END
         FROM unnest($2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::text[], $7::text[],
                     $8::bigint[])
             AS u(plan_id, base, born, revision, doc, summary, count)
         WHERE (SELECT n FROM locked) = cardinality($1::bigint[])
           AND p.plan_id = u.plan_id AND p.revision = u.base AND p.born = u.born
         RETURNING p.plan_id, u.revision, u.count
     ), trimmed AS (
         DELETE FROM tasks t USING updated d
         WHERE t.plan_id = d.plan_id AND d.count >= 0 AND t.position >= d.count
     ), written AS (
         INSERT INTO tasks (plan_id, position, revision, task)
         SELECT w.plan_id, w.position, d.revision, w.task
         FROM unnest($9::text[], $10::bigint[], $11::text[]) AS w(plan_id, position, task)
         JOIN updated d ON d.plan_id = w.plan_id
         ON CONFLICT (plan_id, position)
             DO UPDATE SET revision = EXCLUDED.revision, task = EXCLUDED.task
     ), stepped AS (
         INSERT INTO plan_steps (plan_id, steps)
         SELECT s.plan_id, s.steps
         FROM unnest($15::text[], $16::text[]) AS s(plan_id, steps)
         JOIN updated d ON d.plan_id = s.plan_id
         WHERE s.steps <> '[]'
         ON CONFLICT (plan_id) DO UPDATE SET steps = EXCLUDED.steps
     ), unstepped AS (
         DELETE FROM plan_steps p
         USING unnest($15::text[], $16::text[]) AS s(plan_id, steps), updated d
         WHERE p.plan_id = s.plan_id AND d.plan_id = s.plan_id AND s.steps = '[]'
     ), inserted AS (
         INSERT INTO events (plan_id, seq, pos, record)
         SELECT e.plan_id, e.seq, pg_current_xact_id()::text::bigint * 1024 + e.n, e.record
         FROM unnest($12::text[], $13::bigint[], $14::text[]) WITH ORDINALITY
             AS e(plan_id, seq, record, n)
         WHERE e.plan_id IN (SELECT plan_id FROM updated)
     )
     SELECT ARRAY(SELECT plan_id FROM updated), pg_current_xact_id()::text::bigint";

/// The changes of one plan in a batch, merged: written as one row update.
#[derive(Clone)]
pub(super) struct PlanWrite<'a> {
    pub plan_id: &'a str,
    /// The revision and `born` the first change was computed on.
    pub base: u64,
    pub born: i64,
    /// The last change's writes (revision, header, summary).
    pub last: &'a RowWrites,
    /// Each task written, by position (the last text of each).
    pub tasks: BTreeMap<usize, &'a str>,
    /// The task count when a change wrote every task (rows past it go).
    pub count: Option<usize>,
    /// The steps' text the last change of the list wrote.
    pub steps: Option<&'a str>,
}

impl<'a> PlanWrite<'a> {
    /// The first change of plan `plan_id`, computed on (`base`, `born`).
    pub fn new(plan_id: &'a str, base: u64, born: i64, writes: &'a RowWrites) -> PlanWrite<'a> {
        let mut plan = PlanWrite {
            plan_id,
            base,
            born,
            last: writes,
            tasks: BTreeMap::new(),
            count: None,
            steps: None,
        };
        plan.add(writes);
        plan
    }

    /// The plan's next change.
    pub fn add(&mut self, writes: &'a RowWrites) {
        self.last = writes;
        if let Some(steps) = &writes.steps {
            self.steps = Some(steps);
        }
        match &writes.tasks {
            TaskRows::Some(tasks) => {
                for (i, text) in tasks {
                    self.tasks.insert(*i, text);
                }
            }
            TaskRows::All(tasks) => {
                self.tasks = tasks.iter().map(String::as_str).enumerate().collect();
                self.count = Some(tasks.len());
            }
        }
    }
}

/// One event to write: its plan, revision and record's text.
pub(super) type EventWrite<'a> = (&'a str, u64, &'a str);

/// Runs [`WRITE`] (prepared as `statement`) for `plans` and `events` (in
/// order), taking the locks `keys` (none when they are held): the plans
/// written and the transaction's id.
pub(super) fn write(
    client: &mut impl GenericClient,
    statement: &Statement,
    keys: &[i64],
    plans: &[PlanWrite<'_>],
    events: &[EventWrite<'_>],
) -> Result<(Vec<String>, i64), postgres::Error> {
    let ids: Vec<&str> = plans.iter().map(|p| p.plan_id).collect();
    let bases: Vec<i64> = plans.iter().map(|p| to_i64(p.base)).collect();
    let borns: Vec<i64> = plans.iter().map(|p| p.born).collect();
    let revisions: Vec<i64> = plans.iter().map(|p| to_i64(p.last.revision)).collect();
    let headers: Vec<&str> = plans.iter().map(|p| p.last.header.as_str()).collect();
    let summaries: Vec<&str> = plans.iter().map(|p| p.last.summary.as_str()).collect();
    let counts: Vec<i64> = plans
        .iter()
        .map(|p| p.count.map_or(-1, |n| to_i64(n as u64)))
        .collect();
    let mut task_plans = Vec::new();
    let mut positions = Vec::new();
    let mut texts = Vec::new();
    for plan in plans {
        for (i, text) in &plan.tasks {
            task_plans.push(plan.plan_id);
            positions.push(to_i64(*i as u64));
            texts.push(*text);
        }
    }
    let (step_plans, steps): (Vec<&str>, Vec<&str>) = plans
        .iter()
        .filter_map(|p| p.steps.map(|steps| (p.plan_id, steps)))
        .unzip();
    let event_plans: Vec<&str> = events.iter().map(|e| e.0).collect();
    let seqs: Vec<i64> = events.iter().map(|e| to_i64(e.1)).collect();
    let records: Vec<&str> = events.iter().map(|e| e.2).collect();
    let row = client.query_one(
        statement,
        &[
            &keys,
            &ids,
            &bases,
            &borns,
            &revisions,
            &headers,
            &summaries,
            &counts,
            &task_plans,
            &positions,
            &texts,
            &event_plans,
            &seqs,
            &records,
            &step_plans,
            &steps,
        ],
    )?;
    Ok((row.get(0), row.get(1)))
}

/// A plan as stored: its version (revision, `born`) and document.
pub(super) struct Stored {
    pub revision: u64,
    pub born: i64,
    pub doc: Result<PlanDocument, String>,
}

/// Plan `plan_id` as stored, put together from its header and task rows;
/// `None` when there is no such plan.
pub(super) fn read_plan(
    client: &mut impl GenericClient,
    statement: &Statement,
    plan_id: &str,
) -> Result<Option<Stored>, postgres::Error> {
    let Some(row) = client.query_opt(statement, &[&plan_id])? else {
        return Ok(None);
    };
    let (revision, born, header, steps, tasks): (i64, i64, &str, Option<&str>, Vec<&str>) =
        (row.get(0), row.get(1), row.get(2), row.get(3), row.get(4));
    Ok(Some(Stored {
        revision: revision as u64,
        born,
        doc: task_rows::assemble(header, steps, tasks),
    }))
}

/// What changed in a plan since a revision ([`READ_CHANGED`]).
pub(super) struct Changed {
    pub revision: u64,
    pub born: i64,
    pub reshaped: u64,
    pub header: Result<PlanDocument, String>,
    pub tasks: Result<Vec<(usize, TaskDoc)>, String>,
}

/// Plan `plan_id`'s header and the tasks written after `revision` or at
/// `positions`; `None` when there is no such plan.
pub(super) fn read_changed(
    client: &mut impl GenericClient,
    statement: &Statement,
    plan_id: &str,
    revision: u64,
    positions: &[i64],
) -> Result<Option<Changed>, postgres::Error> {
    let Some(row) = client.query_opt(statement, &[&plan_id, &to_i64(revision), &positions])? else {
        return Ok(None);
    };
    let (revision, born, reshaped, header): (i64, i64, i64, &str) =
        (row.get(0), row.get(1), row.get(2), row.get(3));
    let (at, texts): (Vec<i64>, Vec<&str>) = (row.get(4), row.get(5));
    let tasks = task_rows::parse_tasks(texts)
        .map(|tasks| at.iter().map(|&i| i as usize).zip(tasks).collect());
    Ok(Some(Changed {
        revision: revision as u64,
        born,
        reshaped: reshaped as u64,
        header: serde_json::from_str(header).map_err(|e| e.to_string()),
        tasks,
    }))
}

/// Writes plan `plan_id`'s tasks and steps anew (the plan's row is written
/// by the caller), at revision `revision`.
pub(super) fn insert_rows(
    client: &mut impl GenericClient,
    plan_id: &str,
    revision: u64,
    rows: &Split,
) -> Result<(), postgres::Error> {
    delete_rows(client, plan_id)?;
    client.execute(INSERT_TASKS, &[&plan_id, &to_i64(revision), &rows.tasks])?;
    if rows.steps != "[]" {
        client.execute(
            "INSERT INTO plan_steps (plan_id, steps) VALUES ($1, $2)",
            &[&plan_id, &rows.steps],
        )?;
    }
    Ok(())
}

/// Deletes plan `plan_id`'s tasks and steps.
pub(super) fn delete_rows(
    client: &mut impl GenericClient,
    plan_id: &str,
) -> Result<(), postgres::Error> {
    client.execute("DELETE FROM tasks WHERE plan_id = $1", &[&plan_id])?;
    client.execute("DELETE FROM plan_steps WHERE plan_id = $1", &[&plan_id])?;
    Ok(())
}

/// A plan's document as rows, or why it cannot be written.
pub(super) fn split(doc: &PlanDocument) -> Result<Split, OpError> {
    task_rows::split(doc)
}
