//! A batch's write and its `COMMIT` in one round trip: the writer holds
//! its plans' locks from the write until the commit's WAL flush, and on a
//! loaded machine each round trip under the locks is a wait for a core
//! (docs/performance.md, "planc serve: a change at scale (PostgreSQL)").
//! So the batch's [`WRITE`](super::rows::WRITE) is sent as text, its
//! parameters spliced in as literals (numbers, and strings escaped as the
//! plan ids of `BEGIN` are: [`literal`]), followed by `COMMIT`, in one
//! simple query. The statement fails — and the `COMMIT` after it is not
//! run — when it did not write every plan it was given (each plan's row
//! is checked against the version the batch read under the locks, so this
//! never happens while every writer takes them).

use postgres::SimpleQueryMessage;

use super::begin::{literal, Open};
use super::rows::{EventWrite, PlanWrite, WRITE};
use crate::runner::store::database::to_i64;

/// A parameter of [`WRITE`] as an SQL literal: an array of numbers or of
/// strings (`'{}'`, cast by the statement, when empty).
enum Param {
    Numbers(Vec<i64>),
    Texts(Vec<String>),
}

impl Param {
    fn texts<'a>(texts: impl IntoIterator<Item = &'a str>) -> Param {
        Param::Texts(texts.into_iter().map(literal).collect())
    }

    fn sql(&self) -> String {
        let items: Vec<String> = match self {
            Param::Numbers(numbers) => numbers.iter().map(i64::to_string).collect(),
            Param::Texts(texts) => texts.clone(),
        };
        match items.is_empty() {
            true => "'{}'".to_owned(),
            false => format!("ARRAY[{}]", items.join(",")),
        }
    }
}

/// [`WRITE`]'s sixteen parameters for `plans` and `events`, the locks
/// already held (`$1` empty), in order.
fn params(plans: &[PlanWrite<'_>], events: &[EventWrite<'_>]) -> Vec<Param> {
    let numbers = |f: &dyn Fn(&PlanWrite<'_>) -> i64| Param::Numbers(plans.iter().map(f).collect());
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
    let stepped: Vec<(&str, &str)> = plans
        .iter()
        .filter_map(|p| p.steps.map(|steps| (p.plan_id, steps)))
        .collect();
    vec![
        Param::Numbers(Vec::new()),
        Param::texts(plans.iter().map(|p| p.plan_id)),
        numbers(&|p| to_i64(p.base)),
        numbers(&|p| p.born),
        numbers(&|p| to_i64(p.last.revision)),
        Param::texts(plans.iter().map(|p| p.last.header.as_str())),
        Param::texts(plans.iter().map(|p| p.last.summary.as_str())),
        numbers(&|p| p.count.map_or(-1, |n| to_i64(n as u64))),
        Param::texts(task_plans),
        Param::Numbers(positions),
        Param::texts(texts),
        Param::texts(events.iter().map(|e| e.0)),
        Param::Numbers(events.iter().map(|e| to_i64(e.1)).collect()),
        Param::texts(events.iter().map(|e| e.2)),
        Param::texts(stepped.iter().map(|s| s.0)),
        Param::texts(stepped.iter().map(|s| s.1)),
    ]
}

/// [`WRITE`] as text for `plans` and `events`, ending in a check that
/// every plan was written (a division by zero otherwise) and giving the
/// transaction's id.
pub(super) fn write_sql(plans: &[PlanWrite<'_>], events: &[EventWrite<'_>]) -> String {
    let (body, _) = WRITE.rsplit_once("SELECT ARRAY(").unwrap_or((WRITE, ""));
    let params: Vec<String> = params(plans, events).iter().map(Param::sql).collect();
    // One pass: a literal spliced in may hold `$1` of its own.
    let mut sql = String::with_capacity(body.len() + params.iter().map(String::len).sum::<usize>());
    let mut rest = body;
    while let Some(at) = rest.find('$') {
        sql.push_str(&rest[..at]);
        let digits = rest[at + 1..]
            .find(|c: char| !c.is_ascii_digit())
            .map_or(rest.len() - at - 1, |n| n);
        let number = rest[at + 1..at + 1 + digits].parse::<usize>().ok();
        match number.and_then(|n| params.get(n.wrapping_sub(1))) {
            Some(param) => sql.push_str(param),
            None => sql.push_str(&rest[at..at + 1 + digits]),
        }
        rest = &rest[at + 1 + digits..];
    }
    sql.push_str(rest);
    sql.push_str(&format!(
        "SELECT pg_current_xact_id()::text::bigint,
             CASE WHEN (SELECT count(*) FROM updated) = {n} THEN 0
                  ELSE 1 / ((SELECT count(*) FROM updated) - (SELECT count(*) FROM updated))
             END",
        n = plans.len()
    ));
    sql
}

/// Runs `sql` ([`write_sql`]) and commits `tx`, in one round trip: the
/// transaction's id. An error (a plan not written among those given)
/// leaves nothing committed.
pub(super) fn write_and_commit(tx: Open<'_>, sql: &str) -> Result<i64, postgres::Error> {
    let messages = tx.commit_after(sql)?;
    let xid = messages.iter().find_map(|message| match message {
        SimpleQueryMessage::Row(row) => row.get(0).and_then(|id| id.parse::<i64>().ok()),
        _ => None,
    });
    Ok(xid.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::store::task_rows::{RowWrites, TaskRows};

    /// Every placeholder becomes its literal in one pass: a task's text
    /// holding `$1`, quotes and backslashes goes in as it is; empty arrays
    /// are `'{}'`.
    #[test]
    fn the_write_is_spliced_in_one_pass_its_texts_escaped() {
        let writes = RowWrites {
            revision: 8,
            header: "{\"h\":1}".to_owned(),
            steps: None,
            summary: "{}".to_owned(),
            tasks: TaskRows::Some(vec![(2, r#"{"name":"costs $1 'x' \\"}"#.to_owned())]),
        };
        let plans = [PlanWrite::new("p'1", 7, 3, &writes)];
        let sql = write_sql(&plans, &[("p'1", 8, "{\"op\":\"x\"}")]);
        assert!(
            sql.contains(r#"ARRAY[E'{"name":"costs $1 ''x'' \\\\"}']"#),
            "{sql}"
        );
        assert!(sql.contains("unnest(ARRAY[E'p''1']::text[], ARRAY[7]::bigint[], ARRAY[3]::bigint[], ARRAY[8]::bigint[]"), "{sql}");
        assert!(sql.contains("unnest('{}'::bigint[]) AS k"), "{sql}");
        assert!(sql.contains("= 1 THEN 0"), "{sql}");
        let outside_literals: String = sql.split('\'').step_by(2).collect();
        assert!(!outside_literals.contains('$'), "{outside_literals}");
    }
}
