//! A batch's transaction in the PostgreSQL store's writer: begun with its
//! plans' advisory locks and their row versions read in one round trip.

use postgres::SimpleQueryMessage;

use super::pipe::Pipe;
use super::rows::{self, PlanWrite, WriteArgs};

/// A plan's row version: its id, revision and `born`.
pub(super) type Version = (String, i64, i64);

/// `text` as an SQL string literal (`E'…'`, its quotes and backslashes
/// escaped; a plan id has no control character).
fn literal(text: &str) -> String {
    format!("E'{}'", text.replace('\\', "\\\\").replace('\'', "''"))
}

/// A transaction begun with advisory locks taken (see
/// [`PLAN_LOCK`](super::PLAN_LOCK)), rolled back when dropped uncommitted.
pub(super) struct Open<'a> {
    pub(super) client: &'a mut Pipe,
    done: bool,
}

impl<'a> Open<'a> {
    /// `BEGIN`, the locks of `keys` in their order, and then the versions
    /// (plan id, revision, `born`) of plans `ids`, in one round trip. The
    /// keys are numbers; each id is spliced in as an escaped string
    /// ([`literal`]). Each statement of the round trip reads its own
    /// snapshot, so the versions are read once the locks are held.
    pub(super) fn begin(
        client: &'a mut Pipe,
        keys: &[i64],
        ids: &[&str],
    ) -> Result<(Open<'a>, Vec<Version>), postgres::Error> {
        let mut sql = String::from("BEGIN");
        for key in keys {
            sql.push_str(&format!("; SELECT pg_advisory_xact_lock({key})"));
        }
        let listed: Vec<String> = ids.iter().map(|id| literal(id)).collect();
        sql.push_str(&format!(
            "; SELECT plan_id, revision, born FROM plans WHERE plan_id IN ({})",
            listed.join(", ")
        ));
        let messages = match client.simple_query(&sql) {
            Ok(messages) => messages,
            Err(error) => {
                // Begun but not locked (a timeout, say): end it.
                let _ = client.batch_execute("ROLLBACK");
                return Err(error);
            }
        };
        let versions = messages
            .iter()
            .filter_map(|message| match message {
                SimpleQueryMessage::Row(row) if row.len() == 3 => {
                    let number = |i| row.get(i).and_then(|n: &str| n.parse::<i64>().ok());
                    Some((row.get(0)?.to_owned(), number(1)?, number(2)?))
                }
                _ => None,
            })
            .collect();
        let open = Open {
            client,
            done: false,
        };
        Ok((open, versions))
    }

    /// The write of `plans` and `events` ([`rows::WRITE_ALL`], prepared as
    /// `statement`) and `COMMIT`, sent together: the transaction's id once
    /// committed. `Err` when either failed (nothing was committed when the
    /// write failed: every plan's row written, or none).
    pub(super) fn write_and_commit(
        mut self,
        statement: &postgres::Statement,
        plans: &[PlanWrite<'_>],
        events: &[rows::EventWrite<'_>],
    ) -> Result<i64, postgres::Error> {
        self.done = true;
        let args = WriteArgs::new(&[], plans, events);
        let row = self
            .client
            .query_one_and_commit(statement, &args.params())?;
        Ok(row.get(1))
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
