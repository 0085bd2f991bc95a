//! Bringing a kept runner up to rows read from its store: another process
//! changed some tasks (or this one computed changes that were not
//! committed), and only those tasks are put in, the runner's indexes
//! (counters, ready set, holders, leases, unmet dependencies) updated for
//! each, in O(tasks put in + their dependents) — not rebuilt. A pending
//! task past the runner's last (an `addTask` at the end) is appended to
//! the indexes the same way. Rows gone (a task removed) and rows at keys
//! the runner does not hold (a task inserted in the middle) change the
//! list where it stands (by key: no read of the other tasks), and the
//! indexes are then built again in memory.

use crate::document::{Meta, PlanDocument, StepDoc, TaskDoc, TaskStatus};
use crate::runner::error::OpError;
use crate::runner::index::{holder_key, satisfies, takes_work};
use crate::runner::time::parse_rfc3339;
use crate::runner::Runner;

/// What a process reads of a plan to bring its kept runner up.
pub(super) struct Rows {
    /// The document without its tasks and steps.
    pub header: PlanDocument,
    /// The steps, when they were written since.
    pub steps: Option<Vec<StepDoc>>,
    /// The keys whose rows went since.
    pub gone: Vec<i64>,
    /// The rows written since: (key, task).
    pub tasks: Vec<(i64, TaskDoc)>,
}

/// Puts `rows` into `runner`: the header; the steps when given (else the
/// runner keeps its own); the rows gone taken out; each task at its key. A
/// pending task at a key after the last is appended. Any other task whose
/// identity, dependencies or priority differ from the one at its key, a
/// task at a new key, a row gone, or a lease that does not read has the
/// runner's indexes built again from the whole document (what `Runner::new`
/// says of it is the answer).
pub(super) fn put_rows(runner: &mut Runner, rows: Rows) -> Result<(), OpError> {
    let tasks = std::mem::take(&mut runner.doc.tasks);
    let steps = std::mem::take(&mut runner.doc.steps);
    runner.doc = PlanDocument {
        tasks,
        steps: rows.steps.unwrap_or(steps),
        ..rows.header
    };
    let mut rebuild = false;
    for key in rows.gone {
        runner.touched.gone(key);
        if let Ok(i) = runner.order.find(key) {
            runner.doc.tasks.remove(i);
            runner.order.remove(i);
            rebuild = true;
        }
    }
    for (key, task) in rows.tasks {
        // Marked, for what follows the tasks' changes (the paged reads'
        // view, `task_view.rs`); the marks are taken below.
        let i = match runner.order.find(key) {
            Ok(i) => {
                runner.touched.task(task.id);
                i
            }
            Err(i) => {
                runner.touched.inserted(task.id);
                let last = i == runner.doc.tasks.len();
                runner.doc.tasks.insert(i, task);
                runner.order.insert_key(i, key);
                // A task appended (`addTask` at the end) since: the indexes
                // take it in, not built again.
                rebuild = rebuild
                    || !last
                    || !is_new(&runner.doc.tasks[i])
                    || runner.index.appended(&runner.doc.tasks).is_err();
                continue;
            }
        };
        let same_shape = runner.doc.tasks.get(i).is_some_and(|old| {
            old.id == task.id
                && old.key == task.key
                && old.dependencies == task.dependencies
                && old.priority == task.priority
        });
        if rebuild || !same_shape {
            rebuild = true;
            runner.doc.tasks[i] = task;
            continue;
        }
        leave(runner, i);
        runner.doc.tasks[i] = task;
        if !enter(runner, i) {
            rebuild = true;
        }
    }
    runner.take_touched();
    if rebuild {
        let order = std::mem::take(&mut runner.order);
        let empty = PlanDocument::new(Meta::new("", ""), Vec::new());
        *runner = Runner::new(std::mem::replace(&mut runner.doc, empty))?;
        runner.order = order;
    }
    Ok(())
}

/// Whether `task` is as `addTask` makes one: pending, held by no one.
fn is_new(task: &TaskDoc) -> bool {
    task.status == TaskStatus::Pending && task.holder.is_none()
}

/// Takes the task at `i` out of the indexes (it stays in the document).
fn leave(runner: &mut Runner, i: usize) {
    let (tasks, index) = (&runner.doc.tasks, &mut runner.index);
    let task = &tasks[i];
    index.counts[task.status as usize] -= 1;
    if task.status == TaskStatus::Failed && !task.optional {
        index.failed_required -= 1;
    }
    if task.status == TaskStatus::InProgress {
        index.in_progress.remove(&i);
        if let Some(holder) = &task.holder {
            let key = holder_key(holder.agent.as_deref());
            if let Some(held) = index.held.get_mut(key) {
                held.remove(&i);
                if held.is_empty() {
                    index.held.remove(key);
                }
            }
            if let Some(secs) = holder.lease_expires_at.as_deref().and_then(parse_rfc3339) {
                index.leases.remove(&(secs, i));
            }
        }
    }
    index.ready.remove(&i);
    if satisfies(task) {
        for &d in &index.dependents[i] {
            index.unmet[d] += 1;
            index.ready.remove(&d);
        }
    }
}

/// Puts the task at `i` into the indexes; `false` when its lease does not
/// read (the runner is to be built again).
fn enter(runner: &mut Runner, i: usize) -> bool {
    let (tasks, index) = (&runner.doc.tasks, &mut runner.index);
    let task = &tasks[i];
    index.counts[task.status as usize] += 1;
    if task.status == TaskStatus::Failed && !task.optional {
        index.failed_required += 1;
    }
    let mut lease_read = true;
    if task.status == TaskStatus::InProgress {
        index.in_progress.insert(i);
        if let Some(holder) = &task.holder {
            let key = holder_key(holder.agent.as_deref());
            index.held.entry(key.to_owned()).or_default().insert(i);
            if let Some(until) = &holder.lease_expires_at {
                match parse_rfc3339(until) {
                    Some(secs) => {
                        index.leases.insert((secs, i));
                    }
                    None => lease_read = false,
                }
            }
        }
    }
    if takes_work(task) && index.unmet[i] == 0 {
        index.ready.insert(i);
    }
    if satisfies(task) {
        for &d in &index.dependents[i] {
            index.unmet[d] -= 1;
            if index.unmet[d] == 0 && takes_work(&tasks[d]) {
                index.ready.insert(d);
            }
        }
    }
    lease_read
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::ops::{AddArgs, Op, SkipArgs, TaskIdArgs, TaskRef};
    use crate::runner::Caller;

    /// A plan of `n` tasks, each after the one two before it.
    fn chain(n: u32) -> PlanDocument {
        let tasks = (1..=n)
            .map(|id| {
                let deps = if id > 2 { vec![id - 2] } else { Vec::new() };
                TaskDoc::pending(id, format!("t{id}"), deps)
            })
            .collect();
        PlanDocument::new(crate::document::Meta::new("p", "g"), tasks)
    }

    /// What the indexes say, comparable.
    fn view(runner: &Runner) -> String {
        let index = &runner.index;
        let mut held: Vec<_> = index.held.iter().collect();
        held.sort();
        format!(
            "{:?} {} {:?} {:?} {:?} {:?} {:?}",
            index.counts,
            index.failed_required,
            index.in_progress,
            held,
            index.leases,
            index.ready.iter().collect::<Vec<_>>(),
            index.unmet,
        )
    }

    /// The operations the test below runs, with the agent of each: status
    /// changes, and two adds at the end of the plan.
    fn operations() -> Vec<(Op, &'static str)> {
        let task = |id: u32| TaskIdArgs {
            task_id: TaskRef::Id(id),
        };
        vec![
            (Op::StartNextTask(Default::default()), "a"),
            (Op::StartNextTask(Default::default()), "b"),
            (Op::CompleteTask(Default::default()), "a"),
            (Op::FailTask(Default::default()), "b"),
            (Op::RetryTask(task(2)), "c"),
            (Op::StartNextTask(Default::default()), "c"),
            (
                Op::SkipTask(SkipArgs {
                    task_id: TaskRef::Id(5),
                    reason: None,
                }),
                "d",
            ),
            (Op::StartNextTask(Default::default()), "a"),
            (
                Op::AddTask(AddArgs {
                    name: "appended".to_owned(),
                    dependencies: Some(vec![TaskRef::Id(3), TaskRef::Id(12)]),
                    ..AddArgs::default()
                }),
                "b",
            ),
            (Op::StartNextTask(Default::default()), "c"),
            (
                Op::AddTask(AddArgs {
                    name: "inserted".to_owned(),
                    after_task_id: Some(TaskRef::Id(8)),
                    ..AddArgs::default()
                }),
                "a",
            ),
            (Op::RemoveTask(task(10)), "b"),
            (
                Op::AddTask(AddArgs {
                    name: "appended again".to_owned(),
                    dependencies: Some(vec![TaskRef::Id(13)]),
                    ..AddArgs::default()
                }),
                "d",
            ),
        ]
    }

    /// The rows a change that touched `touched` writes, as `put_rows`
    /// takes them back.
    fn rows_of(runner: &Runner, touched: &crate::runner::Touched) -> Rows {
        let tasks = (0..runner.doc.tasks.len())
            .filter(|&i| touched.contains(runner.doc.tasks[i].id))
            .map(|i| (runner.order.key(i), runner.doc.tasks[i].clone()))
            .collect();
        Rows {
            header: PlanDocument {
                tasks: Vec::new(),
                steps: Vec::new(),
                ..runner.doc.clone()
            },
            steps: touched.steps_changed().then(|| runner.doc.steps.clone()),
            gone: touched.gone_keys().collect(),
            tasks,
        }
    }

    /// A runner brought up to another's touched rows has the same indexes
    /// as one built from the document (a task appended taken in too, and
    /// a task inserted in the middle or removed, with the tasks rewired).
    #[test]
    fn rows_put_in_keep_the_indexes_as_built() {
        let doc = chain(12);
        let mut ahead = Runner::new(doc.clone()).expect("runner");
        let mut kept = Runner::new(doc).expect("runner");
        let agent = |name: &str| Caller::agent(Some(name.to_owned()));
        let mut reshaped = 0;
        for (op, name) in operations() {
            let previous = ahead.doc.clone();
            ahead.take_touched();
            let _ = ahead.apply_as(&op, &agent(name));
            let touched = ahead.take_touched();
            put_rows(&mut kept, rows_of(&ahead, &touched)).expect("rows put in");
            let built = Runner::new(ahead.doc.clone()).expect("runner");
            assert_eq!(kept.doc.to_json(), ahead.doc.to_json(), "after {op:?}");
            assert_eq!(kept.order, ahead.order, "after {op:?}");
            assert_eq!(view(&kept), view(&built), "after {op:?}");
            assert_eq!(kept.index.position, built.index.position);
            assert_eq!(kept.index.dependents, built.index.dependents);
            if touched.is_reshaped() {
                // Not undone from rows: the stores read the plan whole.
                reshaped += 1;
                continue;
            }
            // And back: a change not committed, undone by the rows as they
            // were (tasks that were done no longer are).
            let mut back = Runner::new(ahead.doc.clone()).expect("runner");
            back.order = ahead.order.clone();
            let before = Runner::new(previous.clone()).expect("runner");
            let mut rows = rows_of(&before, &touched);
            rows.header.steps = Vec::new();
            put_rows(&mut back, rows).expect("rows put back");
            let built = Runner::new(previous).expect("runner");
            assert_eq!(view(&back), view(&built), "undoing {op:?}");
        }
        assert_eq!(
            reshaped, 4,
            "the adds and the removal ran and were put in as rows"
        );
    }
}
