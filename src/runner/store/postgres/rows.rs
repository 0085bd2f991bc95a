//! Tasks as rows in the PostgreSQL store (schema version 7): the SQL of
//! `tasks`, of a plan's header and steps beside them (`plans`,
//! `plan_steps`), and of the one statement that writes changes. The row
//! encoding and the change logic are the SQLite store's (`task_rows.rs`):
//! the header is written by every change, the steps only by a change of a
//! step's list, and task rows are keyed by their order key `ord`
//! (increasing in plan order, with gaps), so an insertion in the middle of
//! the plan writes one row.
//!
//! Besides its header, a plan's row keeps `born` (the id of the
//! transaction that created the plan: a plan started over or created
//! again is another plan), `reshaped` (the revision of the last change
//! that wrote every task: a replan) and `stepped` (the revision of the
//! last change that wrote the steps). Each task row keeps the revision
//! that last wrote it, indexed, and each row that went (a task removed, or
//! moved to another key) leaves its key and revision in `tasks_gone`, so
//! that a process whose kept runner is at revision `r` reads only the rows
//! written and gone after `r` (and the steps when written after `r`).

use std::collections::BTreeMap;

use postgres::types::ToSql;
use postgres::{GenericClient, Row, Statement, Transaction};

use crate::document::{PlanDocument, StepDoc, TaskDoc};
use crate::runner::error::OpError;
use crate::runner::store::database::to_i64;
use crate::runner::store::task_rows::{self, RowWrites, Split, TaskRows};
use crate::runner::ORDER_GAP;

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
        tx.execute(V5_INSERT_TASKS, &[&plan_id, &revision, &tasks])?;
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

/// Version 7: task rows keyed by an order key with gaps (`ord`), not by
/// their position (the key of the task at position `p` is
/// `(p + 1) × ORDER_GAP`, renumbered through negative keys so that no key
/// meets another on the way); the keys of rows gone (`tasks_gone`) and the
/// revision that last wrote a plan's steps (`plans.stepped`), so that
/// another process catches up with an insertion or a removal by reading
/// what it wrote.
pub(super) fn migrate_to_7(tx: &mut Transaction<'_>) -> Result<(), postgres::Error> {
    tx.batch_execute(
        "ALTER TABLE tasks RENAME COLUMN position TO ord;
         ALTER TABLE plans ADD COLUMN stepped BIGINT NOT NULL DEFAULT 0;
         CREATE TABLE tasks_gone (
             plan_id  TEXT NOT NULL,
             ord      BIGINT NOT NULL,
             revision BIGINT NOT NULL,
             PRIMARY KEY (plan_id, ord)
         );
         CREATE INDEX tasks_gone_written ON tasks_gone (plan_id, revision);",
    )?;
    tx.execute("UPDATE tasks SET ord = -(ord + 1) * $1", &[&ORDER_GAP])?;
    tx.batch_execute("UPDATE tasks SET ord = -ord")
}

/// Inserts plan `$1`'s tasks `$3` (texts, in order) written at revision
/// `$2`, by position (schemas 5 and 6).
const V5_INSERT_TASKS: &str = "INSERT INTO tasks (plan_id, position, revision, task)
     SELECT $1, n - 1, $2, t FROM unnest($3::text[]) WITH ORDINALITY AS x(t, n)";

/// Inserts plan `$1`'s tasks `$3` (texts, in order) written at revision
/// `$2`, at the keys they are first given (`(position + 1) × $4`).
pub(super) const INSERT_TASKS: &str = "INSERT INTO tasks (plan_id, ord, revision, task)
     SELECT $1, n * $4, $2, t FROM unnest($3::text[]) WITH ORDINALITY AS x(t, n)";

/// Plan `$1`'s version, header and steps, and its tasks in order:
/// `revision`, `born`, `doc`, the steps' text (null without a row), the
/// tasks' keys and texts. One statement: one snapshot.
pub(super) const READ_PLAN: &str = "SELECT revision, born, doc,
         (SELECT steps FROM plan_steps WHERE plan_id = $1),
         ARRAY(SELECT ord FROM tasks WHERE plan_id = $1 ORDER BY ord),
         ARRAY(SELECT task FROM tasks WHERE plan_id = $1 ORDER BY ord)
     FROM plans WHERE plan_id = $1";

/// Plan `$1`'s version and header, the tasks written after revision `$2`
/// or at the keys `$3`, the keys gone after `$2`, and the steps when they
/// were written after `$2`: `revision`, `born`, `reshaped`, `doc`, the
/// tasks' keys, their texts, the keys gone, `stepped`, the steps' text
/// (null when not written after `$2`, or when there are none). One
/// statement: one snapshot; each part reads an index (`tasks_written`,
/// the primary key, `tasks_gone_written`).
pub(super) const READ_CHANGED: &str = "WITH changed AS MATERIALIZED (
         SELECT ord, task FROM tasks WHERE plan_id = $1 AND revision > $2
         UNION
         SELECT ord, task FROM tasks WHERE plan_id = $1 AND ord = ANY($3)
     )
     SELECT revision, born, reshaped, doc,
         ARRAY(SELECT ord FROM changed ORDER BY ord),
         ARRAY(SELECT task FROM changed ORDER BY ord),
         ARRAY(SELECT ord FROM tasks_gone WHERE plan_id = $1 AND revision > $2 ORDER BY ord),
         stepped,
         CASE WHEN stepped > $2 THEN (SELECT steps FROM plan_steps WHERE plan_id = $1) END
     FROM plans WHERE plan_id = $1";

/// Plan `$1`'s version: `revision`, `born`.
pub(super) const READ_VERSION: &str = "SELECT revision, born FROM plans WHERE plan_id = $1";

/// The common table expressions of [`WRITE`] and [`WRITE_ALL`].
macro_rules! write_ctes {
    () => {
        "WITH locked AS MATERIALIZED (
         SELECT count(*) AS n
         FROM (SELECT pg_advisory_xact_lock(k) FROM unnest($1::bigint[]) AS k) l
     ), updated AS (
         UPDATE plans p SET revision = u.revision, doc = u.doc, summary = u.summary,
             reshaped = CASE WHEN u.count >= 0 THEN u.revision ELSE p.reshaped END,
             stepped = CASE WHEN u.plan_id = ANY($15::text[]) THEN u.revision ELSE p.stepped END
         FROM unnest($2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::text[], $7::text[],
                     $8::bigint[])
             AS u(plan_id, base, born, revision, doc, summary, count)
         WHERE (SELECT n FROM locked) = cardinality($1::bigint[])
           AND p.plan_id = u.plan_id AND p.revision = u.base AND p.born = u.born
         RETURNING p.plan_id, u.revision, u.count
     ), trimmed AS (
         DELETE FROM tasks t USING updated d
         WHERE t.plan_id = d.plan_id AND d.count >= 0
           AND NOT EXISTS (
               SELECT 1 FROM unnest($9::text[], $10::bigint[]) AS w(plan_id, ord)
               WHERE w.plan_id = t.plan_id AND w.ord = t.ord)
     ), unburied AS (
         DELETE FROM tasks_gone g USING updated d
         WHERE g.plan_id = d.plan_id AND d.count >= 0
     ), removed AS (
         DELETE FROM tasks t
         USING unnest($17::text[], $18::bigint[]) AS g(plan_id, ord), updated d
         WHERE t.plan_id = g.plan_id AND t.ord = g.ord AND d.plan_id = g.plan_id
     ), buried AS (
         INSERT INTO tasks_gone (plan_id, ord, revision)
         SELECT g.plan_id, g.ord, d.revision
         FROM unnest($17::text[], $18::bigint[]) AS g(plan_id, ord)
         JOIN updated d ON d.plan_id = g.plan_id
         ON CONFLICT (plan_id, ord) DO UPDATE SET revision = EXCLUDED.revision
     ), written AS (
         INSERT INTO tasks (plan_id, ord, revision, task)
         SELECT w.plan_id, w.ord, d.revision, w.task
         FROM unnest($9::text[], $10::bigint[], $11::text[]) AS w(plan_id, ord, task)
         JOIN updated d ON d.plan_id = w.plan_id
         ON CONFLICT (plan_id, ord)
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
     "
    };
}

/// The writes of a batch of changes in one statement (the writer sends it
/// in a transaction that holds the plans' locks, with `$1` empty): the
/// advisory locks of `$1` (in order) first; then each plan's row (`$2`–`$8`) only if it is
/// still the version its first change was computed on (revision `$3`,
/// `born` `$4`), and, of those plans only, the tasks (`$9`–`$11`: plan,
/// key, text; when the count `$8` is not negative the list was replaced
/// and every other row of the plan goes), the keys whose rows go
/// (`$17`–`$18`: plan, key; each left in `tasks_gone` at the revision),
/// the steps (`$15`–`$16`: those of the plans whose steps changed; `[]`
/// deletes the row) and the events (`$12`–`$14`, in order). Gives the
/// plans written and the transaction's id.
///
/// The locks are the update's one-time condition, so they are all held
/// before it touches a row (and takes its transaction id). Its snapshot
/// may predate a change committed while it waited for a lock: the update
/// then checks the version against the row as that change left it
/// (PostgreSQL re-reads an updated row before updating it), and writes no
/// task of that plan. A key is either written or gone, never both
/// ([`PlanWrite`] merges a plan's changes), so no two parts touch a row.
pub(super) const WRITE: &str = concat!(
    write_ctes!(),
    "SELECT ARRAY(SELECT plan_id FROM updated), pg_current_xact_id()::text::bigint"
);

/// [`WRITE`] for the writer, whose `COMMIT` is sent with it (pipelined,
/// [`super::pipe`]): every plan's row must be written, or the statement
/// fails — and the transaction with it, so that the `COMMIT` behind it
/// commits nothing (a subquery's text cast to a number is the failure: an
/// SQL statement has no `RAISE`; the subquery keeps it from being
/// evaluated when the statement is planned).
pub(super) const WRITE_ALL: &str = concat!(
    write_ctes!(),
    "SELECT ARRAY(SELECT plan_id FROM updated),
         CASE WHEN (SELECT count(*) FROM updated) = cardinality($2::text[])
             THEN pg_current_xact_id()::text::bigint
             ELSE (SELECT 'a plan''s row moved under its lock: ' || count(*) || ' of '
                       || cardinality($2::text[]) || ' written' FROM updated)::bigint
         END"
);

/// The changes of one plan in a batch, merged: written as one row update.
#[derive(Clone)]
pub(super) struct PlanWrite<'a> {
    pub plan_id: &'a str,
    /// The revision and `born` the first change was computed on.
    pub base: u64,
    pub born: i64,
    /// The last change's writes (revision, header, summary).
    pub last: &'a RowWrites,
    /// Each key written (the last text of each) or gone (`None`).
    pub tasks: BTreeMap<i64, Option<&'a str>>,
    /// The task count when a change replaced the list (every row of the
    /// plan not written goes).
    pub count: Option<usize>,
    /// The steps' text the last change of the steps wrote.
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
            TaskRows::Some { written, gone } => {
                for key in gone {
                    match self.count {
                        // After a replacement of the list, a key gone is
                        // simply not written.
                        Some(_) => self.tasks.remove(key),
                        None => self.tasks.insert(*key, None),
                    };
                }
                for (key, text) in written {
                    self.tasks.insert(*key, Some(text));
                }
            }
            TaskRows::All(tasks) => {
                self.tasks = tasks
                    .iter()
                    .map(|(key, text)| (*key, Some(text.as_str())))
                    .collect();
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
    let args = WriteArgs::new(keys, plans, events);
    let row = client.query_one(statement, &args.params())?;
    Ok((row.get(0), row.get(1)))
}

/// The parameters of [`WRITE`] and [`WRITE_ALL`] (in the order of their
/// numbers).
pub(super) struct WriteArgs<'a> {
    keys: &'a [i64],
    ids: Vec<&'a str>,
    bases: Vec<i64>,
    borns: Vec<i64>,
    revisions: Vec<i64>,
    headers: Vec<&'a str>,
    summaries: Vec<&'a str>,
    counts: Vec<i64>,
    task_plans: Vec<&'a str>,
    task_keys: Vec<i64>,
    texts: Vec<&'a str>,
    event_plans: Vec<&'a str>,
    seqs: Vec<i64>,
    records: Vec<&'a str>,
    step_plans: Vec<&'a str>,
    steps: Vec<&'a str>,
    gone_plans: Vec<&'a str>,
    gone_keys: Vec<i64>,
}

impl<'a> WriteArgs<'a> {
    /// The parameters that write `plans` and `events` (in order), taking
    /// the locks `keys` (none when they are held).
    pub(super) fn new(
        keys: &'a [i64],
        plans: &'a [PlanWrite<'a>],
        events: &[EventWrite<'a>],
    ) -> WriteArgs<'a> {
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
        let (mut task_plans, mut task_keys, mut texts) = (Vec::new(), Vec::new(), Vec::new());
        let (mut gone_plans, mut gone_keys) = (Vec::new(), Vec::new());
        for plan in plans {
            for (key, text) in &plan.tasks {
                match text {
                    Some(text) => {
                        task_plans.push(plan.plan_id);
                        task_keys.push(*key);
                        texts.push(*text);
                    }
                    None => {
                        gone_plans.push(plan.plan_id);
                        gone_keys.push(*key);
                    }
                }
            }
        }
        let (step_plans, steps): (Vec<&str>, Vec<&str>) = plans
            .iter()
            .filter_map(|p| p.steps.map(|steps| (p.plan_id, steps)))
            .unzip();
        let event_plans: Vec<&str> = events.iter().map(|e| e.0).collect();
        let seqs: Vec<i64> = events.iter().map(|e| to_i64(e.1)).collect();
        let records: Vec<&str> = events.iter().map(|e| e.2).collect();
        WriteArgs {
            keys,
            ids,
            bases,
            borns,
            revisions,
            headers,
            summaries,
            counts,
            task_plans,
            task_keys,
            texts,
            event_plans,
            seqs,
            records,
            step_plans,
            steps,
            gone_plans,
            gone_keys,
        }
    }

    /// The parameters, `$1` to `$18`.
    pub(super) fn params(&self) -> [&(dyn ToSql + Sync); 18] {
        [
            &self.keys,
            &self.ids,
            &self.bases,
            &self.borns,
            &self.revisions,
            &self.headers,
            &self.summaries,
            &self.counts,
            &self.task_plans,
            &self.task_keys,
            &self.texts,
            &self.event_plans,
            &self.seqs,
            &self.records,
            &self.step_plans,
            &self.steps,
            &self.gone_plans,
            &self.gone_keys,
        ]
    }
}

/// What brings a kept runner up to the rows reads with: a connection or
/// transaction of the `postgres` client, or the writer's
/// [`Pipe`](super::pipe::Pipe).
pub(super) trait Query {
    /// The row `statement` gives with `params`, if any.
    fn query_opt(
        &mut self,
        statement: &Statement,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Row>, postgres::Error>;
}

/// A `postgres` client or transaction.
impl<C: GenericClient> Query for C {
    fn query_opt(
        &mut self,
        statement: &Statement,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Row>, postgres::Error> {
        GenericClient::query_opt(self, statement, params)
    }
}

/// A plan as stored: its version (revision, `born`) and document.
pub(super) struct Stored {
    pub revision: u64,
    pub born: i64,
    pub doc: Result<PlanDocument, String>,
    /// The task rows' order keys, in order.
    pub keys: Vec<i64>,
}

/// Plan `plan_id` as stored, put together from its header and task rows;
/// `None` when there is no such plan.
pub(super) fn read_plan(
    client: &mut impl Query,
    statement: &Statement,
    plan_id: &str,
) -> Result<Option<Stored>, postgres::Error> {
    let Some(row) = client.query_opt(statement, &[&plan_id])? else {
        return Ok(None);
    };
    let (revision, born, header, steps): (i64, i64, &str, Option<&str>) =
        (row.get(0), row.get(1), row.get(2), row.get(3));
    let (keys, tasks): (Vec<i64>, Vec<&str>) = (row.get(4), row.get(5));
    Ok(Some(Stored {
        revision: revision as u64,
        born,
        doc: task_rows::assemble(header, steps, tasks),
        keys,
    }))
}

/// What changed in a plan since a revision ([`READ_CHANGED`]).
pub(super) struct Changed {
    pub revision: u64,
    pub born: i64,
    pub reshaped: u64,
    pub header: Result<PlanDocument, String>,
    /// The rows written since (key, task).
    pub tasks: Result<Vec<(i64, TaskDoc)>, String>,
    /// The keys whose rows went since.
    pub gone: Vec<i64>,
    /// The steps, when written since.
    pub steps: Option<Result<Vec<StepDoc>, String>>,
}

/// Plan `plan_id`'s header, the tasks written after `revision` or at the
/// keys `lost`, the keys gone after it and the steps when written after
/// it; `None` when there is no such plan.
pub(super) fn read_changed(
    client: &mut impl Query,
    statement: &Statement,
    plan_id: &str,
    revision: u64,
    lost: &[i64],
) -> Result<Option<Changed>, postgres::Error> {
    let since = to_i64(revision);
    let Some(row) = client.query_opt(statement, &[&plan_id, &since, &lost])? else {
        return Ok(None);
    };
    let (revision, born, reshaped, header): (i64, i64, i64, &str) =
        (row.get(0), row.get(1), row.get(2), row.get(3));
    let (keys, texts, gone): (Vec<i64>, Vec<&str>, Vec<i64>) = (row.get(4), row.get(5), row.get(6));
    let (stepped, steps): (i64, Option<&str>) = (row.get(7), row.get(8));
    let tasks = task_rows::parse_tasks(texts).map(|tasks| keys.into_iter().zip(tasks).collect());
    let steps = (stepped > since).then(|| match steps {
        Some(text) => serde_json::from_str(text).map_err(|e| format!("steps: {e}")),
        None => Ok(Vec::new()),
    });
    Ok(Some(Changed {
        revision: revision as u64,
        born,
        reshaped: reshaped as u64,
        header: serde_json::from_str(header).map_err(|e| e.to_string()),
        tasks,
        gone,
        steps,
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
    client.execute(
        INSERT_TASKS,
        &[&plan_id, &to_i64(revision), &rows.tasks, &ORDER_GAP],
    )?;
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
    client.execute("DELETE FROM tasks_gone WHERE plan_id = $1", &[&plan_id])?;
    client.execute("DELETE FROM plan_steps WHERE plan_id = $1", &[&plan_id])?;
    Ok(())
}

/// A plan's document as rows, or why it cannot be written.
pub(super) fn split(doc: &PlanDocument) -> Result<Split, OpError> {
    task_rows::split(doc)
}
