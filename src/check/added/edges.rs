//! The graph's edges and groups after a task is added to a step or taken
//! out of it ([`super::added`]): renumbered, those the task made or stood in
//! out, the new ones in.

use super::{within, Own, Place, References};
use crate::check::graph::{Edge, GroupEdge};
use crate::check::PlanReuse;
use crate::span::Span;
use crate::syntax::{ast, StepTask};

/// What a step's or an instance's `after` counts towards the dependency
/// pairs (as `lower::pairs` counts it).
pub(super) fn pairs_of(g: &GroupEdge) -> u64 {
    let (a, b) = (g.dependents.len() as u64, g.dependencies.len() as u64);
    a.saturating_mul(b).saturating_add(a + b)
}

/// The graph's edges and groups after the edit, and the tasks whose
/// dependencies may have changed.
pub(super) struct EdgesAfter {
    pub(super) edges: Vec<Edge>,
    pub(super) groups: Vec<GroupEdge>,
    pub(super) changed: Vec<usize>,
    /// How many edges did not name a task directly.
    pub(super) indirect: u64,
    /// The name of the task after it in a `sequential` step (in the old
    /// text).
    next: Option<Span>,
}

impl EdgesAfter {
    /// The old edges moved and renumbered, those the task made or stood
    /// in (its `after`'s, its step's `sequential` ones around it, those to
    /// it of an `after` naming its step) out; the groups of the `after`s of
    /// its step and of those naming its step given the task or rid of it.
    /// The new ones are put in by [`new_edges`](Self::new_edges).
    pub(super) fn moved(
        kept: &PlanReuse,
        place: &Place,
        change: &StepTask,
        map: &impl Fn(Span) -> Option<Span>,
        refs: &References,
    ) -> Option<EdgesAfter> {
        let to_step = refs.to_step.as_slice();
        let sequential = change
            .old
            .items
            .iter()
            .any(|item| matches!(item, ast::StepItem::Sequential(_)));
        // The name of the task after it in the step (in the old text).
        let next_index = place.index + usize::from(!place.added);
        let next = step_tasks(&change.old)
            .nth(next_index)
            .filter(|_| sequential)
            .map(|t| t.name.span);
        let mut after = EdgesAfter {
            edges: Vec::with_capacity(kept.edges.len() + 4),
            groups: Vec::with_capacity(kept.groups.len()),
            changed: Vec::new(),
            indirect: 0,
            next,
        };
        let dropped = after.moved_edges(kept, place, map, next, to_step)?;
        after.moved_groups(kept, place, change, map, refs, &dropped)?;
        Some(after)
    }

    /// The old edges, moved and renumbered, but those the edit takes out
    /// (their indices, returned); the edges of tasks' `after`s that name
    /// the step get one to the task added.
    fn moved_edges(
        &mut self,
        kept: &PlanReuse,
        place: &Place,
        map: &impl Fn(Span) -> Option<Span>,
        next: Option<Span>,
        to_step: &[Span],
    ) -> Option<Vec<usize>> {
        let k = place.task;
        let mut dropped = Vec::new();
        let mut naming: Vec<(usize, Span)> = Vec::new();
        for (i, e) in kept.edges.iter().enumerate() {
            let gone = match place.added {
                // The `sequential` edge the new task now stands in.
                true => next == Some(e.span) && !e.direct() && e.dependent as usize == k,
                false => e.dependent as usize == k || e.dependency as usize == k,
            };
            if !place.added && e.dependency as usize == k && e.dependent as usize != k {
                self.changed.push(place.number(e.dependent as usize));
            }
            if gone {
                dropped.push(i);
                continue;
            }
            let named = place.added && !e.direct() && to_step.contains(&e.span);
            let mut e = *e;
            if e.file() == place.file {
                e.span = map(e.span)?;
            }
            e.dependent = place.number(e.dependent as usize) as u32;
            e.dependency = place.number(e.dependency as usize) as u32;
            if named && naming.last() != Some(&(e.dependent as usize, e.span)) {
                naming.push((e.dependent as usize, e.span));
            }
            self.indirect += u64::from(!e.direct());
            self.edges.push(e);
        }
        for (dependent, span) in naming {
            self.push(place, dependent, k, span);
        }
        Some(dropped)
    }

    /// An edge that did not name a task directly, added.
    fn push(&mut self, place: &Place, dependent: usize, dependency: usize, span: Span) {
        self.edges.push(Edge::new(
            dependent as u32,
            dependency as u32,
            place.file,
            span,
            false,
        ));
        self.changed.push(dependent);
        self.indirect += 1;
    }

    /// The old groups moved and renumbered; the task added to (or taken
    /// out of) the dependents of its step's `after`s and the dependencies
    /// of those naming its step.
    fn moved_groups(
        &mut self,
        kept: &PlanReuse,
        place: &Place,
        change: &StepTask,
        map: &impl Fn(Span) -> Option<Span>,
        refs: &References,
        dropped: &[usize],
    ) -> Option<()> {
        let k = place.task;
        let renumber = |list: &mut Vec<usize>| {
            list.retain(|&v| place.added || v != k);
            list.iter_mut().for_each(|v| *v = place.number(*v));
            if place.added {
                let at = list.partition_point(|&v| v < k);
                list.insert(at, k);
            }
        };
        for g in &kept.groups {
            let in_file = g.file == place.file;
            if in_file && refs.dangling.iter().any(|d| d.span == g.span) {
                // A step's `after` that named the task taken out.
                let dependents = g.dependents.iter().map(|&v| place.number(v));
                self.changed.extend(dependents);
                continue;
            }
            let own_after = in_file && within(change.old.span, g.span);
            let named = in_file && refs.to_step.contains(&g.span);
            let mut g = GroupEdge {
                span: if in_file { map(g.span)? } else { g.span },
                after_edges: g.after_edges - dropped.partition_point(|&e| e < g.after_edges),
                ..g.clone()
            };
            let number =
                |list: &mut Vec<usize>| list.iter_mut().for_each(|v| *v = place.number(*v));
            match own_after {
                true => renumber(&mut g.dependents),
                false => number(&mut g.dependents),
            }
            match named {
                true => {
                    renumber(&mut g.dependencies);
                    self.changed.extend_from_slice(&g.dependents);
                }
                false => number(&mut g.dependencies),
            }
            self.groups.push(g);
        }
        Some(())
    }

    /// The new task's own edges and the `sequential` ones around it.
    pub(super) fn new_edges(
        &mut self,
        place: &Place,
        change: &StepTask,
        map: &impl Fn(Span) -> Option<Span>,
        own: Option<&Own>,
    ) -> Option<()> {
        let k = place.task;
        let sequential = change
            .old
            .items
            .iter()
            .any(|item| matches!(item, ast::StepItem::Sequential(_)));
        let next = self.next.map(map);
        match own {
            Some(own) => {
                for e in &own.edges {
                    self.indirect += u64::from(!e.direct());
                    self.edges.push(*e);
                }
                self.changed.push(k);
                if sequential && place.index > 0 {
                    self.push(place, k, k - 1, change.task.name.span);
                }
                if let Some(span) = next {
                    self.push(place, k + 1, k, span?);
                }
            }
            None => {
                if let (Some(span), true) = (next, place.index > 0) {
                    self.push(place, k, k - 1, span?);
                }
            }
        }
        Some(())
    }
}

/// The tasks of a step, in order.
fn step_tasks(step: &ast::Step) -> impl Iterator<Item = &ast::Task> + '_ {
    step.items.iter().filter_map(|item| match item {
        ast::StepItem::Task(task) => Some(&**task),
        _ => None,
    })
}
