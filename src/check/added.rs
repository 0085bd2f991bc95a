//! The check after a task is added to a step or taken out of it (the
//! closing quote of a new task's title, a task line pasted in or deleted),
//! from the check before it: the task's own fields and strings are checked
//! alone ([`super::edited`]'s pieces), and what its coming or going changes
//! is made again from what the last check kept ([`PlanReuse`]): its step's
//! `sequential` edges, the edges of the `after`s that name its step (a
//! step's, a task's), its references, unresolved names and diagnostics, and
//! every "did you mean" search again in the same order and budget; the
//! graph is checked again from its last reduction. Every later task's
//! number moves by one: the plan's tasks, steps and dependencies, the edges
//! and the graph's memo are renumbered in one pass each; the references
//! keep the renumbering of the definitions they name per chunk, applied as
//! they are read ([`ir::Shifted::renumber`]).
//!
//! Where the change reaches beyond what this follows, it gives `None` and
//! the file is checked whole: a name something else names (an `after` that
//! names the task taken out, an unresolved name the new task's name
//! resolves), a name declared twice, a step left empty or empty before, a
//! role or parameter that becomes used or unused, a cycle, a `planc::limit`
//! (or steps named near the budget of dependency pairs).

use std::sync::Arc;

mod edges;
mod references;
mod renumbered;

use super::edited::{fields_again, followed, ir_task};
use super::graph::{self, DepGraph, Edge};
use super::lower::Unresolved;
use super::reuse::{
    check_diagnostics, same_name, set_dependencies, unknown_diagnostics, Definitions,
};
use super::unparsed::Unparsed;
use super::{Checked, PlanReuse, Reuse};
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{self, SymbolKind, TaskId};
use crate::modules::Module;
use crate::span::{FileId, SourceMap, Span};
use crate::syntax::{ast, StepTask};
use edges::pairs_of;
use references::{Dangling, References};
use renumbered::Renumbered;

/// The check of the edited file: `previous` is the check before the edit,
/// `map` moves a span of the old text outside the task to the new one
/// (`window` says what it does to most: [`ir::Shifted::moved`]),
/// `modules` and `sources` are the edited file's. `None` where the change
/// reaches beyond what this follows.
pub(crate) fn added(
    previous: &Checked,
    (map, window): (&(impl Fn(Span) -> Option<Span> + Sync), ir::Window),
    (modules, sources): (&[Module], &SourceMap),
    file: FileId,
    change: &StepTask,
) -> Option<Checked> {
    let kept = previous.reuse.plan.as_deref()?;
    let memo = previous.reuse.graph.as_deref()?;
    let unparsed = Unparsed::of(modules, sources);
    let limit = previous.diagnostics.iter().any(|d| d.code == Code::Limit);
    if limit || !followed(previous, kept, &unparsed) {
        return None;
    }
    let place = Place::of(previous, kept, file, change)?;
    let map = |span: Span| map(span);
    let task = &*change.task;
    let moved = (&map, window);
    let definitions = definitions_after(&previous.symbols.definitions, &place, moved, task)?;
    let gone = (!place.added).then_some(task.span);
    let renumbered = Renumbered::of(previous, (kept, memo), &place, moved, change, &definitions)?;
    let Renumbered {
        mut plan,
        own,
        refs,
        edges,
        memo,
    } = renumbered;
    if let Some(own) = &own {
        let groups: u64 = edges.groups.iter().map(pairs_of).sum();
        let bound = groups + 2 * edges.indirect + refs.to_steps + own.pairs;
        if bound > crate::syntax::DEPENDENCY_PAIRS_BASE as u64 {
            return None;
        }
    }
    let (new_unresolved, new_other) = match own {
        Some(own) => (own.unresolved, own.diagnostics),
        None => (Vec::new(), Vec::new()),
    };
    let at = task.span.start();
    let new = (new_unresolved, refs.dangling_names(&place, &map, task)?);
    let (unresolved, tasks_unresolved) = unresolved_after(kept, &place, &map, gone, at, new)?;
    let search_names = Arc::default();
    let unknown = unknown_diagnostics(&unresolved, (&definitions, &search_names), file, &unparsed);
    let other = other_after(kept, &place, &map, (gone, &refs.dangling), new_other)?;

    // The graph, reusing the last reduction renumbered.
    let graph = DepGraph::of_tasks(&plan.tasks, edges.edges, edges.groups);
    let report = graph::check_changed(&graph, &memo, &edges.changed);
    let DepGraph { edges, groups, .. } = graph;
    if report.has_cycle {
        return None;
    }
    set_dependencies(&mut plan, &report);
    let diagnostics = check_diagnostics(&other, unknown, report.diagnostics);
    let plan_reuse = PlanReuse {
        unresolved,
        tasks_unresolved,
        task_references: refs.tasks,
        texts_references: refs.texts,
        withheld: 0,
        edges,
        groups,
        other,
        search_names,
    };
    Some(Checked {
        task_count: Some(plan.tasks.len()),
        plan: Some(plan),
        diagnostics,
        symbols: ir::Symbols {
            definitions,
            references: refs.list,
        },
        reuse: Reuse::after_edit(report.memo, plan_reuse),
    })
}

/// Where the task stands in the plan and among the definitions, and how
/// the numbers after it move.
struct Place {
    /// The file of the plan.
    file: FileId,
    /// The task's index among the plan's tasks (in the plan that holds it).
    task: usize,
    /// Its definition's index (among the definitions that hold it).
    definition: usize,
    /// The step's definition, and the step's index among the plan's steps.
    step_definition: usize,
    step: usize,
    /// Where it stands among its step's tasks.
    index: usize,
    added: bool,
}

impl Place {
    /// The step, found in the plan and the definitions, its tasks one run;
    /// `None` where the change is not one this follows (see the module).
    fn of(previous: &Checked, kept: &PlanReuse, file: FileId, change: &StepTask) -> Option<Place> {
        let (plan, definitions) = (previous.plan.as_ref()?, &previous.symbols.definitions);
        let (step_name, task) = (&change.old.name, &change.task.name);
        // Names and kinds read as stored (they do not move), the span of a
        // step of that name as it stands.
        let step_definition = definitions
            .unmoved()
            .enumerate()
            .filter(|(_, d)| d.kind() == SymbolKind::Step && d.file() == file)
            .filter(|(_, d)| d.name() == step_name.name)
            .map(|(i, _)| i)
            .find(|&i| {
                definitions
                    .get(i)
                    .is_some_and(|d| d.span() == step_name.span)
            })?;
        let step = plan.steps.iter().position(|s| s.id == step_name.name)?;
        let ids = &plan.steps[step].tasks;
        let first = (*ids.first()? as usize).checked_sub(1)?;
        let run = ids
            .iter()
            .enumerate()
            .all(|(i, &id)| id as usize == first + 1 + i);
        let place = Place {
            file,
            task: first + change.index,
            definition: step_definition + 1 + change.index,
            step_definition,
            step,
            index: change.index,
            added: change.added,
        };
        let followed = match change.added {
            // A new name: declared nowhere, named by no unresolved name.
            true => {
                let named = |name: &str| same_name(name, &task.name);
                plan.tasks.len() + 1 < crate::syntax::MAX_TASKS
                    && !definitions.unmoved().any(|d| named(d.name()))
                    && !kept.unresolved.iter().any(|u| named(&u.name.name))
            }
            // The task itself, its step left with tasks.
            false => {
                let definition = definitions.get(place.definition)?;
                ids.len() >= 2
                    && plan.tasks.get(place.task)?.key() == task.name
                    && definition.kind() == SymbolKind::Task
                    && definition.span() == task.span
            }
        };
        (run && followed).then_some(place)
    }

    /// A number of the old plan (a task's index, an id) at or
    /// after `from`, in the new one; the task taken out's is its own.
    fn moved(&self, n: usize, from: usize) -> usize {
        match (n >= from, self.added) {
            (false, _) => n,
            (true, true) => n + 1,
            (true, false) if n == from => n,
            (true, false) => n - 1,
        }
    }

    /// A task's index in the new plan.
    fn number(&self, index: usize) -> usize {
        self.moved(index, self.task)
    }

    /// A task's id (its index plus one) in the new plan.
    fn id(&self, id: TaskId) -> TaskId {
        self.moved(id as usize, self.task + 1) as TaskId
    }
}

/// The definitions after the edit: moved with the text (the chunks wholly
/// before or after the step shared), the task's added or taken out.
fn definitions_after(
    old: &Definitions,
    place: &Place,
    (map, window): (&impl Fn(Span) -> Option<Span>, ir::Window),
    task: &ast::Task,
) -> Option<Definitions> {
    let mut list = old.clone();
    if !place.added {
        list.remove(&[place.definition]);
    }
    let mut list = list.moved(place.file, window, map)?;
    if place.added {
        let name = &task.name;
        let new = ir::Definition::new(
            SymbolKind::Task,
            &name.name,
            place.file,
            name.span,
            task.span,
        );
        list.insert(place.definition, vec![new]);
    }
    Some(list)
}

/// What the new task's fields and strings make, checked alone.
struct Own {
    references: Vec<ir::Reference>,
    text_references: Vec<ir::Reference>,
    unresolved: Vec<Unresolved>,
    diagnostics: Vec<Diagnostic>,
    edges: Vec<Edge>,
    /// What its references to steps count towards the dependency pairs.
    pairs: u64,
}

impl Own {
    /// The new task checked alone against the plan and definitions after
    /// the edit; its IR task given its strings and fields.
    fn of(
        definitions: &Definitions,
        plan: &mut ir::Plan,
        place: &Place,
        task: &ast::Task,
    ) -> Option<Own> {
        let (file, k) = (place.file, place.task);
        let (c, edges, pairs) = fields_again(definitions, plan, file, k, task)?;
        let (ir_task, text_references) = ir_task(plan, k, task, definitions, file)?;
        *plan.tasks.get_mut(place.task)? = Arc::new(ir_task);
        Some(Own {
            references: c.symbols.references,
            text_references,
            unresolved: c.unresolved,
            diagnostics: c.diagnostics,
            edges,
            pairs,
        })
    }
}

/// The unresolved names after the edit, and how many of them the steps'
/// `after`s gave: moved, the task's out (`gone`) or its new ones (`new.0`,
/// met in its fields) in the tasks' part where it stands (`at`), and the
/// references to the task taken out (`new.1`, steps' and tasks') in their
/// parts in source order.
fn unresolved_after(
    kept: &PlanReuse,
    place: &Place,
    map: &impl Fn(Span) -> Option<Span>,
    gone: Option<Span>,
    at: usize,
    (new, dangling): (Vec<Unresolved>, Vec<(Unresolved, bool)>),
) -> Option<(Vec<Unresolved>, usize)> {
    let mut unresolved = Vec::with_capacity(kept.unresolved.len() + new.len());
    for (i, u) in kept.unresolved.iter().enumerate() {
        let in_file = u.file == place.file;
        if in_file && gone.is_some_and(|span| within(span, u.name.span)) {
            if i < kept.tasks_unresolved {
                return None;
            }
            continue;
        }
        let mut u = u.clone();
        if in_file {
            u.name.span = map(u.name.span)?;
        }
        unresolved.push(u);
    }
    let mut tasks = kept.tasks_unresolved;
    let at = tasks + unresolved[tasks..].partition_point(|u| u.name.span.start() < at);
    unresolved.splice(at..at, new);
    if !dangling.is_empty() {
        let by_place = |u: &Unresolved| u.name.span.start();
        for (u, step) in dangling {
            match step {
                true => {
                    unresolved.insert(tasks, u);
                    tasks += 1;
                }
                false => unresolved.push(u),
            }
        }
        unresolved[..tasks].sort_by_key(by_place);
        unresolved[tasks..].sort_by_key(by_place);
    }
    Some((unresolved, tasks))
}

/// The diagnostics kept after the edit (all but those of the unresolved
/// names and of the graph): moved, the task's out (`gone`: those of its
/// fields) or its new ones in; `None` if the task taken out had another.
fn other_after(
    kept: &PlanReuse,
    place: &Place,
    map: &impl Fn(Span) -> Option<Span>,
    (gone, dangling): (Option<Span>, &[Dangling]),
    new: Vec<Diagnostic>,
) -> Option<Vec<Diagnostic>> {
    let mut other = Vec::with_capacity(kept.other.len() + new.len());
    for d in &kept.other {
        // A name given twice in an `after`, the task taken out: which
        // repeat is reported could change.
        let at_dangling = |l: &crate::diagnostic::Label| dangling.iter().any(|g| g.span == l.span);
        if d.code == Code::RedundantDependency && d.labels.iter().any(at_dangling) {
            return None;
        }
        let inside = |l: &&crate::diagnostic::Label| {
            l.file == place.file && gone.is_some_and(|s| within(s, l.span))
        };
        let labels_inside = d.labels.iter().filter(inside).count();
        if labels_inside > 0 {
            let fields = matches!(
                d.code,
                Code::DuplicateField | Code::InvalidValue | Code::RedundantDependency
            );
            if !fields || labels_inside < d.labels.len() {
                return None;
            }
            continue;
        }
        other.push(d.moved(place.file, map)?);
    }
    other.extend(new);
    Some(other)
}

/// Whether `inner` lies within `outer`.
fn within(outer: Span, inner: Span) -> bool {
    outer.start() <= inner.start() && inner.end() <= outer.end()
}
