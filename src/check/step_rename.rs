//! The check after an edit that renames one step, from the check before it:
//! only the steps' `after`s that name its old or new name are looked at
//! again.
//!
//! A step's `after` that names a step makes one group of edges (each of its
//! tasks waits for each task of the step named, [`GroupEdge`]). Renaming
//! the step named drops those groups and the references that made them (the
//! old name is then unresolved, and searched for a "did you mean"), and
//! makes the groups of the `after`s that named the new name. What depends
//! on that is made again from what the last check kept ([`PlanReuse`]):
//! the references, the unresolved names and all their searches (in the same
//! order and budget), the graph's groups and its checks (reusing its
//! reduction), and the tasks' dependencies; the IR step and its tasks take
//! the new name. Everything else the check found is moved with the text by
//! the caller. Where the rename reaches beyond what this follows (a task's
//! `after` naming either name, a name given twice, a cycle, a limit, a
//! diagnostic in the step), it gives `None` and the file is checked again
//! whole. Only for a plan without templates: its steps are the file's.

use std::sync::Arc;

use super::graph::{self, DepGraph, GroupEdge};
use super::lower::{Unknown, Unresolved};
use super::reuse::{
    check_diagnostics, edges_after, other_after, set_dependencies, shifted, unknown_diagnostics,
};
use super::unparsed::Unparsed;
use super::{Checked, PlanReuse, Reuse};
use crate::diagnostic::{Code, Diagnostic};
use crate::ir;
use crate::span::{FileId, Span};
use crate::syntax::ast::{self, PlanItem, SmolStr, StepItem};

/// A step's name changed by an edit.
pub(crate) struct StepRenamed<'a> {
    /// The step's definition, by index in [`ir::Symbols::definitions`].
    pub definition: usize,
    pub old: &'a SmolStr,
    pub new: &'a SmolStr,
    /// The step's index among the plan's steps.
    pub step: usize,
    /// Whether the step has a title (else its name is its IR step's name).
    pub titled: bool,
    /// The step, in the old text.
    pub item: Span,
    /// How many dependency pairs the `after`s of steps may make in the new
    /// text ([`crate::syntax::dependency_pair_limit`]).
    pub pair_limit: u64,
}

/// The check of the edited file: `previous` is the check before the edit,
/// `moved` the same moved with the text (the step's definition renamed),
/// `map` moves a span of the old text to the new one, and `plan` is the
/// edited file's plan. `None` where the rename reaches beyond what this
/// follows.
pub(crate) fn step_renamed(
    previous: &Checked,
    mut moved: Checked,
    map: &impl Fn(Span) -> Option<Span>,
    plan: &ast::Plan,
    file: FileId,
    rename: &StepRenamed<'_>,
) -> Option<Checked> {
    let kept = previous.reuse.plan.as_deref()?;
    let memo = previous.reuse.graph.as_deref()?;
    if !followed(previous, kept, rename) {
        return None;
    }
    let mut ir_plan = moved.plan.take()?;
    let dependencies = rename_in_plan(&mut ir_plan, rename)?;
    let (old_refs, gone) = old_references(previous, kept, rename, &dependencies)?;
    let steps = Steps::of(plan);
    let resolved = now_resolved(kept, map, &steps, &ir_plan, rename)?;

    let made = (
        gone.as_slice(),
        resolved.as_slice(),
        dependencies.as_slice(),
    );
    let (edges, groups, changed) = groups_after(kept, map, file, made, &steps, &ir_plan)?;
    if pairs_bound(&groups, &edges) > rename.pair_limit {
        return None;
    }
    let graph = DepGraph::of_tasks(&ir_plan.tasks, edges, groups);

    // The unresolved names and their searches.
    let old_spans: Vec<Span> = old_refs
        .iter()
        .map(|&i| moved.symbols.references.get(i).map(|r| r.span))
        .collect::<Option<_>>()?;
    let (unresolved, tasks_unresolved) =
        unresolved_after(kept, map, &resolved, &old_spans, rename.old, file)?;
    let other = other_after(kept, &[], map, file, Vec::new())?;
    let search_names = kept.search_names.renamed(
        &previous.symbols.definitions,
        file,
        rename.definition,
        rename.new,
    );
    let names = (&moved.symbols.definitions, &search_names);
    let unknown = unknown_diagnostics(&unresolved, names, file, &Unparsed::default());

    let report = graph::check_changed(&graph, memo, &changed);
    if report.has_cycle {
        return None;
    }
    let DepGraph { edges, groups, .. } = graph;
    set_dependencies(&mut ir_plan, &report);
    let diagnostics = check_diagnostics(&other, unknown, report.diagnostics);
    let references = &mut moved.symbols.references;
    let resolved_spans: Vec<Span> = resolved.iter().map(|&(_, _, span)| span).collect();
    let old = (old_refs.as_slice(), kept.task_references.start);
    references_after(references, old, &resolved_spans, &steps, rename, file);
    let added = resolved_spans.len() as isize - old_refs.len() as isize;
    let (task_references, texts_references) = ranges_after(kept, added)?;
    let plan_reuse = PlanReuse {
        unresolved,
        tasks_unresolved,
        texts_references,
        task_references,
        withheld: kept.withheld,
        edges,
        groups,
        other,
        search_names: Arc::new(search_names),
    };
    Some(Checked {
        plan: Some(ir_plan),
        diagnostics,
        reuse: Reuse::after_edit(report.memo, plan_reuse),
        ..moved
    })
}

/// The graph's edges and groups after the edit, and the tasks whose edges
/// changed: the groups at `gone` (indices in the kept ones) left out, one
/// added where it stands for each `after` that now names the step (of
/// `resolved`), its tasks waiting for `dependencies`.
#[allow(clippy::type_complexity)]
fn groups_after(
    kept: &PlanReuse,
    map: &impl Fn(Span) -> Option<Span>,
    file: FileId,
    (gone, resolved, dependencies): (&[usize], &[(usize, usize, Span)], &[usize]),
    steps: &Steps<'_>,
    plan: &ir::Plan,
) -> Option<(Vec<graph::Edge>, Vec<GroupEdge>, Vec<usize>)> {
    let (edges, mut groups) = edges_after(kept, &[], map, file, Vec::new())?;
    let mut changed: Vec<usize> = Vec::new();
    for &g in gone.iter().rev() {
        changed.extend(groups.remove(g).dependents);
    }
    for &(_, step, span) in resolved {
        let dependents = step_tasks(plan, step)?;
        changed.extend(&dependents);
        let at = groups.partition_point(|g| g.span.start() < span.start());
        let group = GroupEdge {
            dependents,
            dependencies: dependencies.to_vec(),
            file,
            span,
            after_edges: steps.sequential_edges_before(step),
        };
        groups.insert(at, group);
    }
    Some((edges, groups, changed))
}

/// The tasks' and the strings' ranges of the references, after `added`
/// references (fewer if negative) before both.
fn ranges_after(
    kept: &PlanReuse,
    added: isize,
) -> Option<(std::ops::Range<usize>, std::ops::Range<usize>)> {
    let start = kept.task_references.start.checked_add_signed(added)?;
    let task_references = start..start + kept.task_references.len();
    let (is, was) = (task_references.end, kept.task_references.end);
    Some((task_references, shifted(&kept.texts_references, is, was)))
}

/// Whether the check before the edit is one this follows: no name declared
/// twice, no limit reached, every unresolved name one of a task or step
/// (no role), no kept diagnostic in the renamed step or quoting either name.
fn followed(previous: &Checked, kept: &PlanReuse, rename: &StepRenamed<'_>) -> bool {
    let plain =
        |u: &Unresolved| matches!(&u.kind, Unknown::TaskOrStep { prefix } if prefix.is_empty());
    let item = rename.item;
    let in_item = |d: &Diagnostic| {
        d.labels
            .iter()
            .any(|l| l.span.start() < item.end() && l.span.end() > item.start())
    };
    let quoting = |d: &Diagnostic| d.quotes(rename.old) || d.quotes(rename.new);
    let refused = |d: &Diagnostic| matches!(d.code, Code::Duplicate | Code::Limit);
    !previous.diagnostics.iter().any(refused)
        && kept.unresolved.iter().all(plain)
        && !kept.other.iter().any(|d| in_item(d) || quoting(d))
}

/// Gives the IR step the new name (its tasks' step is the plan's, so they
/// are left as they are: [`ir::Plan::step_of`]); returns its tasks (by
/// index), what an `after` naming it waits for.
fn rename_in_plan(plan: &mut ir::Plan, rename: &StepRenamed<'_>) -> Option<Vec<usize>> {
    let step = plan.steps.get_mut(rename.step)?;
    if step.id != *rename.old {
        return None;
    }
    step.id = rename.new.clone();
    if !rename.titled {
        step.name = rename.new.to_string();
    }
    Some(step.tasks.iter().map(|&id| id as usize - 1).collect())
}

/// The tasks of the plan's step `step`, by index.
fn step_tasks(plan: &ir::Plan, step: usize) -> Option<Vec<usize>> {
    let tasks = &plan.steps.get(step)?.tasks;
    Some(tasks.iter().map(|&id| id as usize - 1).collect())
}

/// The references to the old name (by index, all among the steps' own,
/// before the tasks'), and the groups they made (by index in the kept
/// groups, sorted): each made one group, of the step's tasks, from another
/// step's `after`.
fn old_references(
    previous: &Checked,
    kept: &PlanReuse,
    rename: &StepRenamed<'_>,
    dependencies: &[usize],
) -> Option<(Vec<usize>, Vec<usize>)> {
    let references = &previous.symbols.references;
    let named = |r: &ir::Reference| r.definition as usize == rename.definition;
    // What each names, not where: the spans as stored.
    let mut stored = references.unmoved_named();
    let old_refs: Vec<usize> = stored
        .by_ref()
        .take(kept.task_references.start)
        .enumerate()
        .filter(|(_, r)| named(r))
        .map(|(i, _)| i)
        .collect();
    if stored.any(|r| named(&r)) {
        return None;
    }
    let mut gone = Vec::with_capacity(old_refs.len());
    for &i in &old_refs {
        let r = references.get(i)?;
        if rename.item.start() <= r.span.start() && r.span.end() <= rename.item.end() {
            return None;
        }
        let mut made = (0..kept.groups.len())
            .filter(|&g| kept.groups[g].file == r.file && kept.groups[g].span == r.span);
        let group = made.next()?;
        if made.next().is_some() || kept.groups[group].dependencies != dependencies {
            return None;
        }
        gone.push(group);
    }
    gone.sort_unstable();
    Some((old_refs, gone))
}

/// The plan's items, told step or not without moving them, to find the
/// step that holds a span.
struct Steps<'p> {
    plan: &'p ast::Plan,
    /// For each item: its index among the steps, if it is one, and how many
    /// edges its `sequential` makes.
    items: Vec<Option<(usize, usize)>>,
}

impl<'p> Steps<'p> {
    fn of(plan: &'p ast::Plan) -> Steps<'p> {
        let mut index = 0;
        let items = plan
            .items
            .unmoved()
            .map(|item| match item {
                PlanItem::Step(step) => {
                    let sequential = step
                        .items
                        .iter()
                        .any(|i| matches!(i, StepItem::Sequential(_)));
                    let tasks = step
                        .items
                        .iter()
                        .filter(|i| matches!(i, StepItem::Task(_)))
                        .count();
                    index += 1;
                    let edges = if sequential {
                        tasks.saturating_sub(1)
                    } else {
                        0
                    };
                    Some((index - 1, edges))
                }
                _ => None,
            })
            .collect();
        Steps { plan, items }
    }

    /// The step (by index among the steps) whose text holds `span`.
    fn holding(&self, span: Span) -> Option<usize> {
        let items = &self.plan.items;
        let at = items
            .partition_point(|s| s.start() <= span.start())
            .checked_sub(1)?;
        let (step, _) = self.items.get(at).copied().flatten()?;
        (span.end() <= items.span(at).end()).then_some(step)
    }

    /// The edges the `sequential`s of the steps before `step` make: they
    /// come first among the graph's edges, step by step.
    fn sequential_edges_before(&self, step: usize) -> usize {
        self.items
            .iter()
            .flatten()
            .take_while(|(index, _)| *index < step)
            .map(|(_, edges)| edges)
            .sum()
    }
}

/// The unresolved names the edit makes resolve: `(index among the
/// unresolved, the step whose `after` names it, its span)`. Each must stand
/// in the `after` of a step other than the renamed one (the steps' part of
/// the unresolved names, before the tasks').
fn now_resolved(
    kept: &PlanReuse,
    map: &impl Fn(Span) -> Option<Span>,
    steps: &Steps<'_>,
    plan: &ir::Plan,
    rename: &StepRenamed<'_>,
) -> Option<Vec<(usize, usize, Span)>> {
    let mut resolved = Vec::new();
    for (i, u) in kept.unresolved.iter().enumerate() {
        if u.name.name != *rename.new {
            continue;
        }
        let span = map(u.name.span)?;
        let step = steps.holding(span)?;
        if i >= kept.tasks_unresolved || step == rename.step || step >= plan.steps.len() {
            return None;
        }
        resolved.push((i, step, span));
    }
    Some(resolved)
}

/// An upper bound of the dependency pairs the steps' `after`s and the
/// tasks' references to steps make (each such reference's pairs counted as
/// at most three per edge it made; a `sequential`'s edges counted too).
fn pairs_bound(groups: &[GroupEdge], edges: &[graph::Edge]) -> u64 {
    let of_groups: u64 = groups
        .iter()
        .map(|g| {
            let (a, b) = (g.dependents.len() as u64, g.dependencies.len() as u64);
            a.saturating_mul(b).saturating_add(a + b)
        })
        .sum();
    let indirect = edges.iter().filter(|e| !e.direct()).count() as u64;
    of_groups.saturating_add(indirect.saturating_mul(3))
}

/// The unresolved names after the edit, in the order they are searched
/// for, and where the tasks' part starts: those now resolved left out, the
/// old name's references (at `old_spans`, in the new text) joining the
/// steps' part in source order.
fn unresolved_after(
    kept: &PlanReuse,
    map: &impl Fn(Span) -> Option<Span>,
    resolved: &[(usize, usize, Span)],
    old_spans: &[Span],
    old: &SmolStr,
    file: FileId,
) -> Option<(Vec<Unresolved>, usize)> {
    let mut unresolved = Vec::with_capacity(kept.unresolved.len() + old_spans.len());
    let mut now_resolved = resolved.iter().map(|&(i, ..)| i).peekable();
    for (i, u) in kept.unresolved.iter().enumerate() {
        if now_resolved.next_if_eq(&i).is_some() {
            continue;
        }
        let mut u = u.clone();
        u.name.span = map(u.name.span)?;
        unresolved.push(u);
    }
    let mut steps_part = kept.tasks_unresolved - resolved.len();
    for &span in old_spans {
        let at = unresolved[..steps_part].partition_point(|u| u.name.span.start() < span.start());
        let name = ast::Ident {
            name: old.clone(),
            span,
        };
        let kind = Unknown::TaskOrStep {
            prefix: SmolStr::default(),
        };
        unresolved.insert(at, Unresolved { file, name, kind });
        steps_part += 1;
    }
    Some((unresolved, steps_part))
}

/// The references after the rename: the old name's left out (all before
/// the tasks' part, which starts at `tasks_part`), one for each `after` now
/// naming the step (at `resolved`, sorted) added where it stands among the
/// steps' own. Those are in source order, after the plan's fields' and
/// roles' (which stand in no step) and before the tasks'.
fn references_after(
    references: &mut ir::Shifted<ir::Reference>,
    (old_refs, tasks_part): (&[usize], usize),
    resolved: &[Span],
    steps: &Steps<'_>,
    rename: &StepRenamed<'_>,
    file: FileId,
) {
    references.remove(old_refs);
    for (end, &span) in (tasks_part - old_refs.len()..).zip(resolved) {
        let after_it = |r: &ir::Reference| {
            r.file == file && r.span.start() > span.start() && steps.holding(r.span).is_some()
        };
        let at = references.partition_point(0..end, |r| !after_it(r));
        let reference = ir::Reference {
            definition: rename.definition as u32,
            file,
            span,
        };
        references.insert(at, vec![reference]);
    }
}
