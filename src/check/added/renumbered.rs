//! Every number after the task moved ([`super::added`]): the plan's tasks
//! and steps, the references, the edges and the graph's memo, each a pass
//! over the plan after the task, in two halves on two threads in a large
//! plan.

use std::sync::Arc;

use super::edges::EdgesAfter;
use super::{Own, Place, References};
use crate::check::graph::Memo;
use crate::check::reuse::Definitions;
use crate::check::{Checked, PlanReuse};
use crate::ir::{self, TaskId};
use crate::span::Span;
use crate::syntax::StepTask;

/// What every later number moved makes: the plan (the new task given its
/// fields), the new task checked alone, the references, the edges and the
/// graph's memo.
pub(super) struct Renumbered {
    pub(super) plan: ir::Plan,
    pub(super) own: Option<Own>,
    pub(super) refs: References,
    pub(super) edges: EdgesAfter,
    pub(super) memo: Memo,
}

impl Renumbered {
    /// The references, the edges and the graph's memo renumbered beside
    /// the plan renumbered and the new task checked alone: each about half
    /// the work, on two threads in a large plan (the plan's many small
    /// copies on the thread that frees them with the last check).
    pub(super) fn of(
        previous: &Checked,
        (kept, memo): (&PlanReuse, &Memo),
        place: &Place,
        (map, window): (&(impl Fn(Span) -> Option<Span> + Sync), ir::Window),
        change: &StepTask,
        definitions: &Definitions,
    ) -> Option<Renumbered> {
        let old_plan = previous.plan.as_ref()?;
        let task = &*change.task;
        let gone = (!place.added).then_some(task.span);
        let planned = || {
            let mut plan = renumbered_plan(old_plan, place, change);
            let own = match place.added {
                true => Some(Own::of(definitions, &mut plan, place, task)?),
                false => None,
            };
            Some((plan, own))
        };
        let renumbered = || {
            let refs = References::moved(previous, kept, place, (map, window), gone);
            let edges = refs
                .as_ref()
                .and_then(|refs| EdgesAfter::moved(kept, place, change, map, refs));
            (refs, edges, memo.renumbered(place.task, place.added))
        };
        // (The library's tests, whose plans are small, take the two threads
        // always: what they hold to a fresh compile is the path a large
        // plan takes.)
        let parallel = cfg!(test) || crate::check::lower::side_by_side(old_plan.tasks.len());
        let ((refs, edges, memo), planned) = both(parallel, renumbered, planned);
        let (plan, own) = planned?;
        let (mut refs, mut edges) = (refs?, edges?);
        refs.used_as_before(previous, place, own.as_ref())?;
        if let Some(own) = &own {
            refs.insert(own);
        }
        edges.new_edges(place, change, map, own.as_ref())?;
        Some(Renumbered {
            plan,
            own,
            refs,
            edges,
            memo,
        })
    }
}

/// The plan with the task added (its strings and fields still to be
/// given, `Own::of`) or taken out, every later task's id and dependencies
/// and every step's tasks renumbered: the tasks shared, the plan's list of
/// dependencies made again ([`ir::Dependencies`]).
fn renumbered_plan(old: &ir::Plan, place: &Place, change: &StepTask) -> ir::Plan {
    let k = place.task;
    let mut tasks = Vec::with_capacity(old.tasks.len() + 1);
    tasks.extend(old.tasks[..k].iter().cloned());
    let mut dependencies = old.dependencies.first(k);
    let from = match place.added {
        true => {
            let task = ir::Task::new(&change.task.name.name, "", None, None);
            tasks.push(Arc::new(task));
            dependencies.push([]);
            k
        }
        false => k + 1,
    };
    let later = from..old.tasks.len().max(from);
    tasks.extend(old.tasks[later.clone()].iter().cloned());
    for index in later {
        let list = old.dependencies.of(index).iter();
        dependencies.push(list.map(|&id| place.id(id)));
    }
    dependencies.shrink_to_fit();
    let mut plan = old.with_tasks(tasks, dependencies);
    if !place.added {
        plan.steps[place.step].tasks.remove(place.index);
    }
    for step in &mut plan.steps {
        for id in &mut step.tasks {
            *id = place.id(*id);
        }
    }
    if place.added {
        plan.steps[place.step]
            .tasks
            .insert(place.index, k as TaskId + 1);
    }
    plan
}

/// `first()` and `second()`, the first on a second thread if `parallel`.
fn both<A: Send, B>(
    parallel: bool,
    first: impl FnOnce() -> A + Send,
    second: impl FnOnce() -> B,
) -> (A, B) {
    if !parallel {
        return (first(), second());
    }
    std::thread::scope(|scope| {
        let side = scope.spawn(first);
        let second = second();
        let first = side
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (first, second)
    })
}
