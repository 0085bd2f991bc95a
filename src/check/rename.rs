//! The check after an edit that renames one task, from the check before it:
//! only what names the task's old or new name is looked at again.
//!
//! A rename changes which references resolve: those to the old name no
//! longer do, those to the new one now do. What depends on that is made
//! again from what the last check kept ([`PlanReuse`]): the references, the
//! unresolved names and their "did you mean" searches (all of them, in the
//! same order and budget, since the names they search among changed), the
//! dependency graph's edges and its checks (reusing its reduction), and
//! the tasks' dependencies. Everything else the check found is moved with
//! the text by the caller. Where a rename touches what this does not
//! follow (a step's `after`, a name given twice, a cycle, a role unknown),
//! it gives `None` and the file is checked again whole.

use std::sync::Arc;

use super::graph::{self, DepGraph, Edge};
use super::lower::{Unknown, Unresolved};
use super::reuse::{
    check_diagnostics, edges_after, other_after, same_name, set_dependencies, shifted,
    unknown_diagnostics,
};
use super::unparsed::Unparsed;
use super::{Checked, PlanReuse, Reuse};
use crate::diagnostic::{Code, Diagnostic};
use crate::ir;
use crate::span::{FileId, Span};
use crate::syntax::ast::{self, PlanItem, SmolStr, StepItem};

/// A task's name changed by an edit.
pub(crate) struct Renamed<'a> {
    /// The task's definition, by index in [`ir::Symbols::definitions`].
    pub definition: usize,
    pub old: &'a SmolStr,
    pub new: &'a SmolStr,
    /// The re-read item (a task, or the step that holds it), in the old
    /// text.
    pub item: Span,
}

/// The check of the edited file: `previous` is the check before the edit,
/// `moved` the same moved with the text (its definition and plan task
/// renamed, the edited task's strings interpolated again), `map` moves a
/// span of the old text to the new one, and `plan` is the edited file's
/// plan. `None` where the rename reaches beyond what this follows.
pub(crate) fn renamed(
    previous: &Checked,
    mut moved: Checked,
    map: &impl Fn(Span) -> Option<Span>,
    plan: &ast::Plan,
    file: FileId,
    rename: &Renamed<'_>,
) -> Option<Checked> {
    let kept = previous.reuse.plan.as_deref()?;
    let memo = previous.reuse.graph.as_deref()?;
    if !followed(previous, kept, file, rename) {
        return None;
    }
    let mut ir_plan = moved.plan.take()?;
    let task = ir_plan
        .tasks
        .iter()
        .position(|t| same_name(t.key(), rename.new))?;
    let (old_refs, dropped) = old_references(previous, kept, rename.definition, task)?;
    let resolved = now_resolved(kept, map, plan, file, rename, task)?;
    let new = resolved_edges(&resolved, task, file);
    let (edges, groups) = edges_after(kept, &dropped, map, file, new)?;
    let graph = DepGraph::of_tasks(&ir_plan.tasks, edges, groups);

    // The unresolved names and their searches.
    let refs = &moved.symbols.references;
    let old_spans: Vec<Span> = old_refs
        .iter()
        .map(|&i| refs.get(i).map(|r| r.span))
        .collect::<Option<_>>()?;
    let old_spans = old_spans.into_iter();
    let unresolved = unresolved_after(kept, map, &resolved, old_spans, rename.old, file)?;
    let other = other_after(kept, &[], map, file, Vec::new())?;
    let search_names = kept.search_names.renamed(
        &previous.symbols.definitions,
        file,
        rename.definition,
        rename.new,
    );
    let names = (&moved.symbols.definitions, &search_names);
    let unknown = unknown_diagnostics(&unresolved, names, file, &Unparsed::default());

    // The graph, reusing the last reduction: the tasks whose edges changed
    // are those that name either name.
    let changed: Vec<usize> = dropped
        .iter()
        .map(|&e| kept.edges[e].dependent as usize)
        .chain(resolved.iter().map(|&(_, dependent, _)| dependent))
        .collect();
    let report = graph::check_changed(&graph, memo, &changed);
    let DepGraph { edges, groups, .. } = graph;
    if report.has_cycle {
        return None;
    }
    set_dependencies(&mut ir_plan, &report);
    let diagnostics = check_diagnostics(&other, unknown, report.diagnostics);
    let references = &mut moved.symbols.references;
    let (task_references, texts_references) =
        references_after(references, kept, &old_refs, &resolved, rename, file);
    let plan_reuse = PlanReuse {
        unresolved,
        tasks_unresolved: kept.tasks_unresolved,
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

/// Whether the check before the edit is one this follows: no name declared
/// twice (the names searched among would not be the definitions), every
/// unresolved name one of a task or step outside templates (no role: its
/// search could change which roles are reported unused), and no diagnostic
/// in the re-read item but those made again here (a message could quote
/// the old name).
fn followed(previous: &Checked, kept: &PlanReuse, file: FileId, rename: &Renamed<'_>) -> bool {
    let plain =
        |u: &Unresolved| matches!(&u.kind, Unknown::TaskOrStep { prefix } if prefix.is_empty());
    let in_item = |d: &Diagnostic| {
        d.labels.iter().any(|l| {
            l.file == file
                && l.span.start() < rename.item.end()
                && l.span.end() > rename.item.start()
        })
    };
    let twice = previous
        .diagnostics
        .iter()
        .any(|d| d.code == Code::Duplicate);
    !twice && kept.unresolved.iter().all(plain) && !kept.other.iter().any(in_item)
}

/// The references to the old name (by index in the old references), and
/// the edges they made (by index, sorted): each made one edge in a task's own
/// `after` (not a step's, and not named twice there), and not of the task
/// itself.
fn old_references(
    previous: &Checked,
    kept: &PlanReuse,
    definition: usize,
    task: usize,
) -> Option<(Vec<usize>, Vec<usize>)> {
    let references = &previous.symbols.references;
    let old_refs: Vec<usize> = references
        .unmoved_named()
        .enumerate()
        .filter(|(_, r)| r.definition as usize == definition)
        .map(|(i, _)| i)
        .collect();
    let to_task: Vec<usize> = (0..kept.edges.len())
        .filter(|&e| kept.edges[e].direct() && kept.edges[e].dependency as usize == task)
        .collect();
    let mut dropped = Vec::with_capacity(old_refs.len());
    for &i in &old_refs {
        let r = references.get(i)?;
        if !kept.task_references.contains(&i) {
            return None;
        }
        let mut made = to_task.iter().filter(|&&e| {
            let e = &kept.edges[e];
            e.file() == r.file && e.span == r.span
        });
        let &edge = made.next()?;
        if made.next().is_some() || kept.edges[edge].dependent as usize == task {
            return None;
        }
        dropped.push(edge);
    }
    dropped.sort_unstable();
    Some((old_refs, dropped))
}

/// The unresolved names the edit makes resolve: `(index among the
/// unresolved, the task that names it, its span)`. Each must stand in the
/// first `after` of a task other than the renamed one, once there.
fn now_resolved(
    kept: &PlanReuse,
    map: &impl Fn(Span) -> Option<Span>,
    plan: &ast::Plan,
    file: FileId,
    rename: &Renamed<'_>,
    task: usize,
) -> Option<Vec<(usize, usize, Span)>> {
    let mut resolved = Vec::new();
    for (i, u) in kept.unresolved.iter().enumerate() {
        if u.name.name != *rename.new {
            continue;
        }
        let span = map(u.name.span)?;
        let (dependent, holder) = task_holding(plan, span)?;
        if i < kept.tasks_unresolved || u.file != file || dependent == task {
            return None;
        }
        let after = holder.fields.iter().find_map(|f| match f {
            ast::TaskField::After(after) => Some(after),
            _ => None,
        })?;
        let named = |name: &SmolStr| after.refs.iter().filter(|r| r.name == *name).count();
        let here = after.refs.iter().any(|r| r.span == span);
        if !here || named(rename.new) != 1 || named(rename.old) > 0 {
            return None;
        }
        resolved.push((i, dependent, span));
    }
    Some(resolved)
}

/// The unresolved names after the edit, in the order they are searched
/// for: those now resolved left out, the old name's references (at
/// `old_spans`, in the new text) joining the tasks' part in source order.
fn unresolved_after(
    kept: &PlanReuse,
    map: &impl Fn(Span) -> Option<Span>,
    resolved: &[(usize, usize, Span)],
    old_spans: impl Iterator<Item = Span>,
    old: &SmolStr,
    file: FileId,
) -> Option<Vec<Unresolved>> {
    let mut unresolved = Vec::with_capacity(kept.unresolved.len() + 1);
    let mut now_resolved = resolved.iter().map(|&(i, ..)| i).peekable();
    for (i, u) in kept.unresolved.iter().enumerate() {
        if now_resolved.next_if_eq(&i).is_some() {
            continue;
        }
        let mut u = u.clone();
        u.name.span = map(u.name.span)?;
        unresolved.push(u);
    }
    let tasks = kept.tasks_unresolved;
    for span in old_spans {
        let at =
            tasks + unresolved[tasks..].partition_point(|u| u.name.span.start() < span.start());
        let name = ast::Ident {
            name: old.clone(),
            span,
        };
        let kind = Unknown::TaskOrStep {
            prefix: SmolStr::default(),
        };
        unresolved.insert(at, Unresolved { file, name, kind });
    }
    Some(unresolved)
}

/// The references after the rename: the old name's left out, the new
/// name's added to the tasks' part in source order. Returns that part, and
/// the part the tasks' strings made, after it.
fn references_after(
    references: &mut ir::Shifted<ir::Reference>,
    kept: &PlanReuse,
    old_refs: &[usize],
    resolved: &[(usize, usize, Span)],
    rename: &Renamed<'_>,
    file: FileId,
) -> (std::ops::Range<usize>, std::ops::Range<usize>) {
    references.remove(old_refs);
    let mut task_references = kept.task_references.start..kept.task_references.end - old_refs.len();
    let mut new_refs: Vec<ir::Reference> = resolved
        .iter()
        .map(|&(_, _, span)| ir::Reference {
            definition: rename.definition as u32,
            file,
            span,
        })
        .collect();
    new_refs.sort_by_key(|r| r.span.start());
    // Each where it stands in the tasks' part: before the first that does
    // not start before it (the parts are in source order).
    let places: Vec<usize> = new_refs
        .iter()
        .map(|r| {
            let before = |b: &ir::Reference| b.span.start() < r.span.start();
            references.partition_point(task_references.clone(), before)
        })
        .collect();
    // From the last, so that the places before stay where they were (each
    // copies only the chunk it goes into).
    for (&place, &reference) in places.iter().zip(&new_refs).rev() {
        references.insert(place, vec![reference]);
    }
    task_references.end += new_refs.len();
    let (is, was) = (task_references.len(), kept.task_references.len());
    (task_references, shifted(&kept.texts_references, is, was))
}

/// An edge from each task that now names the renamed one (`resolved`, as
/// [`now_resolved`] gives them) to it.
fn resolved_edges(resolved: &[(usize, usize, Span)], task: usize, file: FileId) -> Vec<Edge> {
    let edge = |&(_, dependent, span): &(usize, usize, Span)| {
        Edge::new(dependent as u32, task as u32, file, span, true)
    };
    resolved.iter().map(edge).collect()
}

/// The task of `plan` whose text holds `span`, with its index among the
/// plan's tasks.
fn task_holding(plan: &ast::Plan, span: Span) -> Option<(usize, &ast::Task)> {
    let within = |outer: Span| outer.start() <= span.start() && span.end() <= outer.end();
    let mut index = 0;
    for item in &plan.items {
        match item {
            PlanItem::Task(task) if within(task.span) => return Some((index, task)),
            PlanItem::Task(_) => index += 1,
            PlanItem::Step(step) => {
                for item in &step.items {
                    if let StepItem::Task(task) = item {
                        if within(task.span) {
                            return Some((index, task));
                        }
                        index += 1;
                    }
                }
            }
            _ => {}
        }
    }
    None
}
