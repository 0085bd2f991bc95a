//! A task added to a step or taken out of it by an edit, the rest of the
//! step as it was: what `check::added` checks from the last check.

use std::sync::Arc;

use super::Visit;
use crate::span::Span;
use crate::syntax::ast::{PlanItem, Step, StepItem, Task};

/// A step that gained or lost one task, everything else in it the same but
/// where it stands (its name, title, `after`s, `sequential` and other
/// tasks, the text of their strings too).
#[derive(Debug)]
pub(crate) struct StepTask {
    /// The step before the edit.
    pub old: Arc<Step>,
    /// The task added (in `new`) or taken out (of `old`).
    pub task: Arc<Task>,
    /// Whether it was added.
    pub added: bool,
    /// Where it stands among the tasks of the step that holds it.
    pub index: usize,
    /// Every other span of the step, as it was and as it is.
    pub moved: Vec<(Span, Span)>,
}

/// The task an edit added to a step or took out of it, when the re-read
/// item is that step (`old` before, `new` after) and nothing else in it
/// changed.
pub(crate) fn step_task(old: &PlanItem, new: &PlanItem) -> Option<StepTask> {
    let (PlanItem::Step(old), PlanItem::Step(new)) = (old, new) else {
        return None;
    };
    let added = match new.items.len().checked_sub(old.items.len()) {
        Some(1) => true,
        Some(_) => return None,
        None if old.items.len() == new.items.len() + 1 => false,
        None => return None,
    };
    let (longer, shorter) = if added { (new, old) } else { (old, new) };
    let (long, short) = (erased(longer), erased(shorter));
    let (a, b) = (long.items.len(), short.items.len());
    // The first item that differs is the task; the rest must follow it.
    let at = (0..b)
        .find(|&i| long.items[i] != short.items[i])
        .unwrap_or(b);
    let same = long.name == short.name
        && long.title == short.title
        && long.body == short.body
        && long.items[at + 1..a] == short.items[at..b];
    let StepItem::Task(task) = longer.items.get(at)? else {
        return None;
    };
    if !same {
        return None;
    }
    let index = longer.items[..at]
        .iter()
        .filter(|item| matches!(item, StepItem::Task(_)))
        .count();
    let mut without = (**longer).clone();
    without.items.remove(at);
    let without = super::spans(&PlanItem::Step(Arc::new(without)));
    let other = super::spans(&PlanItem::Step(Arc::clone(shorter)));
    let moved = match added {
        true => other.into_iter().zip(without).collect(),
        false => without.into_iter().zip(other).collect(),
    };
    Some(StepTask {
        old: Arc::clone(old),
        task: Arc::clone(task),
        added,
        index,
        moved,
    })
}

/// A step with every span left out (the text of its strings kept).
fn erased(step: &Arc<Step>) -> Step {
    let mut step = (**step).clone();
    step.visit(&mut |at| super::erased(at, true));
    step
}
