//! A batch's transaction in the PostgreSQL store's writer: begun with its
//! plans' advisory locks, their row versions and the rows written since
//! its kept runners' revisions read in one round trip.

use std::collections::{BTreeSet, HashMap};

use postgres::{Client, SimpleQueryMessage, SimpleQueryRow};

use super::rows::{Changed, ChangedPlan};
use super::slot::ReadAhead;
use crate::runner::store::database::to_i64;

/// A plan's row version: its id, revision and `born`.
pub(super) type Version = (String, i64, i64);

/// A plan whose rows are read once its lock is held: its id, its kept
/// runner's committed revision and the keys of the tasks to read again
/// (those the runner lost, and those its queued changes touched).
pub(super) type Behind<'a> = (&'a str, u64, BTreeSet<i64>);

/// `text` as an SQL string literal (`E'…'`, its quotes and backslashes
/// escaped; a plan id has no control character).
fn literal(text: &str) -> String {
    format!("E'{}'", text.replace('\\', "\\\\").replace('\'', "''"))
}

/// Column `i` of `row` as a number.
fn number(row: &SimpleQueryRow, i: usize) -> Option<i64> {
    row.get(i).and_then(|n| n.parse().ok())
}

/// The three statements that read what changed in plan `plan` (an SQL
/// literal) since revision `since`, with the tasks at the keys `lost`:
/// the plan's row (`revision`, `born`, `reshaped`, `doc`, `stepped`, the
/// steps when written since), the tasks (`ord`, `task`) and the keys gone.
fn read_ahead_sql(plan: &str, since: i64, lost: &BTreeSet<i64>) -> String {
    let at_keys = if lost.is_empty() {
        String::new()
    } else {
        let keys: Vec<String> = lost.iter().map(i64::to_string).collect();
        format!(
            " UNION SELECT ord, task FROM tasks WHERE plan_id = {plan} AND ord IN ({})",
            keys.join(", ")
        )
    };
    format!(
        "; SELECT revision, born, reshaped, doc, stepped,
             CASE WHEN stepped > {since} THEN (SELECT steps FROM plan_steps WHERE plan_id = {plan}) END
         FROM plans WHERE plan_id = {plan}
         ; SELECT ord, task FROM tasks WHERE plan_id = {plan} AND revision > {since}{at_keys}
           ORDER BY ord
         ; SELECT ord FROM tasks_gone WHERE plan_id = {plan} AND revision > {since} ORDER BY ord"
    )
}

/// What changed since revision `since`, from the rows of the statements
/// of [`read_ahead_sql`]: `Some(None)` without the plan, `None` when the
/// rows are not what they read.
fn read_ahead(since: i64, parts: &[Vec<&SimpleQueryRow>]) -> Option<Option<Changed>> {
    let [plan, tasks, gone] = parts else {
        return None;
    };
    let Some(row) = plan.first() else {
        return Some(None);
    };
    let plan = ChangedPlan {
        revision: number(row, 0)?,
        born: number(row, 1)?,
        reshaped: number(row, 2)?,
        header: row.get(3)?,
        stepped: number(row, 4)?,
        steps: row.get(5),
    };
    let mut keys = Vec::with_capacity(tasks.len());
    let mut texts = Vec::with_capacity(tasks.len());
    for row in tasks {
        keys.push(number(row, 0)?);
        texts.push(row.get(1)?);
    }
    let gone = gone
        .iter()
        .map(|row| number(row, 0))
        .collect::<Option<Vec<i64>>>()?;
    Some(Some(Changed::of(since, &plan, keys, texts, gone)))
}

/// A transaction begun with advisory locks taken (see
/// [`PLAN_LOCK`](super::PLAN_LOCK)), rolled back when dropped uncommitted.
pub(super) struct Open<'a> {
    pub(super) client: &'a mut Client,
    done: bool,
}

impl<'a> Open<'a> {
    /// `BEGIN`, the locks of `keys` in their order, and then the versions
    /// (plan id, revision, `born`) of plans `ids`, in one round trip. The
    /// keys are numbers; each id is spliced in as an escaped string
    /// ([`literal`]). Each statement of the round trip reads its own
    /// snapshot, so the versions are read once the locks are held.
    ///
    /// With them, for each plan of `behind`, what
    /// [`READ_CHANGED`](super::rows::READ_CHANGED) reads (the plan's
    /// header, the tasks written since the revision or at the keys given,
    /// the keys gone since, the steps when written since), as three
    /// statements: under the lock no other transaction writes the plan, so
    /// their snapshots agree.
    pub(super) fn begin(
        client: &'a mut Client,
        keys: &[i64],
        ids: &[&str],
        behind: Vec<Behind<'_>>,
    ) -> Result<(Open<'a>, Vec<Version>, HashMap<String, ReadAhead>), postgres::Error> {
        let mut sql = String::from("BEGIN");
        for key in keys {
            sql.push_str(&format!("; SELECT pg_advisory_xact_lock({key})"));
        }
        let listed: Vec<String> = ids.iter().map(|id| literal(id)).collect();
        sql.push_str(&format!(
            "; SELECT plan_id, revision, born FROM plans WHERE plan_id IN ({})",
            listed.join(", ")
        ));
        for (plan_id, since, lost) in &behind {
            sql.push_str(&read_ahead_sql(&literal(plan_id), to_i64(*since), lost));
        }
        let messages = match client.simple_query(&sql) {
            Ok(messages) => messages,
            Err(error) => {
                // Begun but not locked (a timeout, say): end it.
                let _ = client.batch_execute("ROLLBACK");
                return Err(error);
            }
        };
        // Each statement's rows, in order.
        let mut results: Vec<Vec<&SimpleQueryRow>> = vec![Vec::new()];
        for message in &messages {
            match message {
                SimpleQueryMessage::Row(row) => {
                    if let Some(rows) = results.last_mut() {
                        rows.push(row);
                    }
                }
                SimpleQueryMessage::CommandComplete(_) => results.push(Vec::new()),
                _ => {}
            }
        }
        let first_ahead = 1 + keys.len() + 1;
        let versions = results
            .get(first_ahead - 1)
            .into_iter()
            .flatten()
            .filter_map(|row| Some((row.get(0)?.to_owned(), number(row, 1)?, number(row, 2)?)))
            .collect();
        let mut ahead = HashMap::new();
        for (n, (plan_id, since, lost)) in behind.into_iter().enumerate() {
            let parts = results.get(first_ahead + 3 * n..first_ahead + 3 * n + 3);
            if let Some(changed) = parts.and_then(|parts| read_ahead(to_i64(since), parts)) {
                ahead.insert(
                    plan_id.to_owned(),
                    ReadAhead {
                        since,
                        lost,
                        changed,
                    },
                );
            }
        }
        let open = Open {
            client,
            done: false,
        };
        Ok((open, versions, ahead))
    }

    /// `COMMIT`.
    pub(super) fn commit(mut self) -> Result<(), postgres::Error> {
        self.done = true;
        self.client.batch_execute("COMMIT")
    }
}

impl Drop for Open<'_> {
    fn drop(&mut self) {
        if !self.done {
            // A connection that cannot roll back is broken: closed, and not
            // reused.
            let _ = self.client.batch_execute("ROLLBACK");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::literal;

    #[test]
    fn a_plan_id_is_spliced_as_an_escaped_string() {
        assert_eq!(literal("plan-1"), "E'plan-1'");
        assert_eq!(literal(r"o'brien\x"), r"E'o''brien\\x'");
        assert_eq!(
            literal(r"'); DROP TABLE plans; --"),
            r"E'''); DROP TABLE plans; --'"
        );
    }
}
