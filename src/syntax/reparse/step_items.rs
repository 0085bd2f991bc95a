//! A step whose own `after`s and `sequential` an edit changed, its tasks
//! the same but at most one (its name kept): a new task's body opened or
//! closed at the start of a step takes the step's `sequential` and `after`
//! in (a bad run and a field of the task) or gives them back. What
//! `check::step_items` checks from the last check.

use std::sync::Arc;

use super::Visit;
use crate::span::Span;
use crate::syntax::ast::{PlanItem, Step, StepItem, Task};

/// A step re-read with its own items changed, or one of its tasks, or
/// both; its name, title and the names of its tasks in order the same.
#[derive(Debug)]
pub(crate) struct StepItems {
    /// The step before the edit and after it.
    pub old: Arc<Step>,
    pub new: Arc<Step>,
    /// The one task that changed (its name kept), as it was and as it is,
    /// and where it stands among the step's tasks.
    pub task: Option<(Arc<Task>, Arc<Task>, usize)>,
    /// Every other span of the step (not of its own `after`s and
    /// `sequential`, nor inside the task that changed), as it was and as
    /// it is; the task's name and whole span too.
    pub moved: Vec<(Span, Span)>,
}

/// The change of the re-read step (`old` before, `new` after), when it
/// holds the same tasks in the same order, all but at most one unchanged
/// but where they stand, and that one keeps its name; its own `after`s and
/// `sequential` may differ.
pub(crate) fn step_items(old: &PlanItem, new: &PlanItem) -> Option<StepItems> {
    let (PlanItem::Step(old), PlanItem::Step(new)) = (old, new) else {
        return None;
    };
    let (old_tasks, new_tasks) = (tasks(old), tasks(new));
    if old_tasks.len() != new_tasks.len() || old_tasks.is_empty() {
        return None;
    }
    let mut changed = None;
    for (k, (a, b)) in old_tasks.iter().zip(&new_tasks).enumerate() {
        if erased(a) == erased(b) {
            continue;
        }
        if a.name.name != b.name.name || changed.replace(k).is_some() {
            return None;
        }
    }
    // The steps reduced to what must be the same: their name, title and
    // braces, and the tasks that did not change.
    let kept = |step: &Step| {
        let mut step = step.clone();
        let mut k = 0;
        step.items.retain(|item| match item {
            StepItem::Task(_) => {
                k += 1;
                Some(k - 1) != changed
            }
            _ => false,
        });
        step
    };
    let (old_kept, new_kept) = (kept(old), kept(new));
    let (a, b) = (
        PlanItem::Step(Arc::new(old_kept)),
        PlanItem::Step(Arc::new(new_kept)),
    );
    let (old_spans, new_spans) = (super::spans(&a), super::spans(&b));
    if old_spans.len() != new_spans.len() || erased_item(&a) != erased_item(&b) {
        return None;
    }
    let mut moved: Vec<(Span, Span)> = old_spans.into_iter().zip(new_spans).collect();
    let task = changed.map(|k| {
        let (a, b) = (old_tasks[k], new_tasks[k]);
        moved.push((a.name.span, b.name.span));
        moved.push((a.span, b.span));
        (Arc::clone(a), Arc::clone(b), k)
    });
    Some(StepItems {
        old: Arc::clone(old),
        new: Arc::clone(new),
        task,
        moved,
    })
}

/// The tasks of a step, in order.
fn tasks(step: &Step) -> Vec<&Arc<Task>> {
    step.items
        .iter()
        .filter_map(|item| match item {
            StepItem::Task(task) => Some(task),
            _ => None,
        })
        .collect()
}

/// A task with every span left out (the text of its strings kept).
fn erased(task: &Task) -> Task {
    let mut task = task.clone();
    task.visit(&mut |at| super::erased(at, true));
    task
}

/// An item with every span left out (the text of its strings kept).
fn erased_item(item: &PlanItem) -> PlanItem {
    let mut item = item.clone();
    item.visit(&mut |at| super::erased(at, true));
    item
}
