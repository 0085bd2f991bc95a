//! The check after an edit that changed a step's own `after`s or
//! `sequential`, and at most one of its tasks (its name kept), from the
//! check before it: a new task's `{` typed at the start of a step takes the
//! step's `sequential` and `after` into its body (a bad run and a field of
//! the task) until its `}` gives them back. The step's tasks and their
//! numbers stay; what the step's own items made is made again (the
//! references and unresolved names of its `after`s, their groups of edges,
//! its `sequential` edges), and the task that changed is checked again
//! alone ([`super::edited`]'s pieces). The unresolved names' "did you mean"
//! searches are made again in the same order and budget, and the graph is
//! checked again from its last reduction for the step's tasks.
//!
//! Where the change reaches beyond what this follows, it gives `None` and
//! the file is checked whole: what [`super::edited`] refuses, a step with
//! `sequential` twice, an `after` of the step naming a step whose tasks are
//! not where their ids say, the budget of dependency pairs near, a cycle.

use std::sync::Arc;

use super::edited::{
    fields_again, followed, insert_at, ir_task, plain_name, steps_among, used_by, used_elsewhere,
    within_pair_budget, Gone, PlanNames,
};
use super::graph::{self, DepGraph, Edge, GroupEdge};
use super::lower::finish::Names;
use super::lower::Unresolved;
use super::reuse::{check_diagnostics, other_after, set_dependencies, unknown_diagnostics};
use super::unparsed::Unparsed;
use super::{Checked, Checker, PlanReuse, Reuse};
use crate::diagnostic::Code;
use crate::ir;
use crate::modules::Module;
use crate::span::{FileId, SourceMap, Span};
use crate::syntax::ast::{self, Step, StepItem};
use crate::syntax::StepItems;

/// The check of the edited file: `previous` is the check before the edit,
/// `(map, window)` move a span of the old text outside the step's own items
/// and the task that changed to the new one, `modules` and `sources` are
/// the edited file's. `None` where the change reaches beyond what this
/// follows.
pub(crate) fn step_items(
    previous: &Checked,
    (map, window): (&impl Fn(Span) -> Option<Span>, ir::Window),
    (modules, sources): (&[Module], &SourceMap),
    file: FileId,
    change: &StepItems,
) -> Option<Checked> {
    let kept = previous.reuse.plan.as_deref()?;
    let memo = previous.reuse.graph.as_deref()?;
    let unparsed = Unparsed::of(modules, sources);
    let limit = previous.diagnostics.iter().any(|d| d.code == Code::Limit);
    let once = |step: &Step| sequentials(step) <= 1;
    if limit || !followed(previous, kept, &unparsed) || !once(&change.old) || !once(&change.new) {
        return None;
    }
    let definitions = &previous.symbols.definitions;
    let mut plan = previous.plan.clone()?;
    let ids = step_tasks(&plan, &change.old)?;

    // The task that changed, checked again alone.
    let task = Task::of_change(previous, kept, &mut plan, (change, &ids), file)?;
    // The step's own `after`s, resolved again; its `sequential` edges.
    let made = Made::of(definitions, &plan, file, &change.new, &ids)?;
    let pairs =
        made.groups.iter().map(pairs_of).sum::<u64>() + task.as_ref().map_or(0, |t| t.pairs);
    if !within_pair_budget(previous, kept, true, pairs) {
        return None;
    }
    let old_own: Vec<Span> = own(&change.old).map(item_span).collect();
    let in_own = |f: FileId, s: Span| f == file && old_own.iter().any(|o| within(*o, s));
    let made_by = (&*change.old, ids.as_slice(), task.as_ref(), &made);
    let (edges, groups) = graph_after(kept, made_by, (&in_own, map), file)?;

    // The references: the step's `after`s' in the steps' part, the task's
    // in the tasks' and the strings' parts.
    let (with, moves) = ((&made, task.as_ref()), (&in_own, map, window));
    let refs = References::after(previous, kept, &change.old, moves, file, with)?;
    let unresolved = unresolved_after(kept, &in_own, map, file, with)?;
    if !unresolved.0.iter().all(plain_name) {
        return None;
    }
    let names = (definitions, &*kept.search_names);
    let unknown = unknown_diagnostics(&unresolved.0, names, file, &unparsed);
    let (gone, new) = task.as_ref().map_or((&[][..], Vec::new()), |t| {
        (t.gone.other.as_slice(), t.diagnostics.clone())
    });
    let other = other_after(kept, gone, map, file, new)?;
    let definitions = definitions.moved(file, window, map)?;

    // The graph, reusing the last reduction: the step's tasks' lists.
    let graph = DepGraph::of_tasks(&plan.tasks, edges, groups);
    let report = graph::check_changed(&graph, memo, &ids);
    let DepGraph { edges, groups, .. } = graph;
    if report.has_cycle {
        return None;
    }
    set_dependencies(&mut plan, &report);
    let diagnostics = check_diagnostics(&other, unknown, report.diagnostics);
    let plan_reuse = PlanReuse {
        unresolved: unresolved.0,
        tasks_unresolved: unresolved.1,
        task_references: refs.tasks,
        texts_references: refs.texts,
        withheld: 0,
        edges,
        groups,
        other,
        search_names: Arc::clone(&kept.search_names),
    };
    Some(Checked {
        plan: Some(plan),
        task_count: previous.task_count,
        diagnostics,
        symbols: ir::Symbols {
            definitions,
            references: refs.list,
        },
        reuse: Reuse::after_edit(report.memo, plan_reuse),
    })
}

/// How many times a step says `sequential`.
fn sequentials(step: &Step) -> usize {
    own(step)
        .filter(|i| matches!(i, StepItem::Sequential(_)))
        .count()
}

/// The step's own items (its `after`s and `sequential`).
fn own(step: &Step) -> impl Iterator<Item = &StepItem> + '_ {
    step.items
        .iter()
        .filter(|item| !matches!(item, StepItem::Task(_)))
}

fn item_span(item: &StepItem) -> Span {
    match item {
        StepItem::After(a) => a.span,
        StepItem::Sequential(span) => *span,
        StepItem::Task(t) => t.span,
    }
}

/// The step's tasks by index in the plan, checked against the tree: the
/// step found among the plan's steps by its name (declared once: a name
/// declared twice is refused), each of its tasks where its id says and
/// named as the tree names it.
fn step_tasks(plan: &ir::Plan, step: &Step) -> Option<Vec<usize>> {
    let name = &step.name;
    let ir_step = plan.steps.iter().find(|s| s.id == name.name)?;
    let tasks = step.items.iter().filter_map(|item| match item {
        StepItem::Task(task) => Some(task),
        _ => None,
    });
    let mut ids = Vec::with_capacity(ir_step.tasks.len());
    let mut count = 0;
    for (&id, task) in ir_step.tasks.iter().zip(tasks) {
        let at = (id as usize).checked_sub(1)?;
        let ir_task = plan.tasks.get(at)?;
        if ir_task.key() != task.name.name {
            return None;
        }
        ids.push(at);
        count += 1;
    }
    (count == ir_step.tasks.len() && count == own_tasks(step)).then_some(ids)
}

fn own_tasks(step: &Step) -> usize {
    step.items
        .iter()
        .filter(|i| matches!(i, StepItem::Task(_)))
        .count()
}

/// The task that changed, checked again alone: what it made before
/// ([`Gone`]), what its fields make now, its IR task put in the plan.
struct Task {
    gone: Gone,
    span: Span,
    references: Vec<ir::Reference>,
    text_references: Vec<ir::Reference>,
    unresolved: Vec<Unresolved>,
    diagnostics: Vec<crate::diagnostic::Diagnostic>,
    edges: Vec<Edge>,
    pairs: u64,
}

impl Task {
    /// The task `change` changed, if any (`ids`: the step's tasks), checked
    /// again alone; `Some(None)` if none did.
    fn of_change(
        previous: &Checked,
        kept: &PlanReuse,
        plan: &mut ir::Plan,
        (change, ids): (&StepItems, &[usize]),
        file: FileId,
    ) -> Option<Option<Task>> {
        match &change.task {
            Some((old, new, k)) => {
                let index = *ids.get(*k)?;
                Task::of(previous, kept, plan, (old, new, index), file).map(Some)
            }
            None => Some(None),
        }
    }

    fn of(
        previous: &Checked,
        kept: &PlanReuse,
        plan: &mut ir::Plan,
        (old, new, index): (&ast::Task, &ast::Task, usize),
        file: FileId,
    ) -> Option<Task> {
        let definitions = &previous.symbols.definitions;
        let gone = Gone::of(previous, kept, file, old, index)?;
        let (c, edges, pairs) = fields_again(definitions, plan, file, index, new)?;
        let (ir_task, text_references) = ir_task(plan, index, new, definitions, file)?;
        *plan.tasks.get_mut(index)? = Arc::new(ir_task);
        // Which roles and parameters are used stays as it was.
        let old_refs = &previous.symbols.references;
        let was = used_by(
            gone.references.iter().filter_map(|&i| old_refs.get(i)),
            &[],
            definitions,
        );
        let now = used_by(
            c.symbols.references.iter().copied(),
            &text_references,
            definitions,
        );
        if !used_elsewhere(old_refs, &gone.references, &was, &now) {
            return None;
        }
        Some(Task {
            gone,
            span: new.span,
            references: c.symbols.references,
            text_references,
            unresolved: c.unresolved,
            diagnostics: c.diagnostics,
            edges,
            pairs,
        })
    }
}

/// What the step's own items make after the edit: its `after`s'
/// references, unresolved names and groups, and its `sequential` edges.
struct Made {
    references: Vec<ir::Reference>,
    unresolved: Vec<Unresolved>,
    groups: Vec<GroupEdge>,
    sequential: Vec<Edge>,
}

impl Made {
    fn of(
        definitions: &super::reuse::Definitions,
        plan: &ir::Plan,
        file: FileId,
        step: &Step,
        ids: &[usize],
    ) -> Option<Made> {
        let afters = || {
            own(step).flat_map(|item| match item {
                StepItem::After(after) => &after.refs[..],
                _ => &[],
            })
        };
        let names = PlanNames {
            definitions,
            file,
            steps: steps_among(plan, afters())?,
            step_missing: std::cell::Cell::new(false),
        };
        let mut c = Checker::new(file, true);
        let mut groups = Vec::new();
        for reference in afters() {
            let Some(member) = names.resolve(&mut c, "", reference) else {
                continue;
            };
            groups.push(GroupEdge {
                dependents: ids.to_vec(),
                dependencies: names.tasks_of(&member).to_vec(),
                file,
                span: reference.span,
                // Given its place among the edges by `graph_after`.
                after_edges: 0,
            });
        }
        if names.step_missing.get() || !c.diagnostics.is_empty() {
            return None;
        }
        let sequential = match own(step).any(|i| matches!(i, StepItem::Sequential(_))) {
            true => {
                let tasks: Vec<&ast::Task> = step
                    .items
                    .iter()
                    .filter_map(|item| match item {
                        StepItem::Task(task) => Some(&**task),
                        _ => None,
                    })
                    .collect();
                (1..ids.len())
                    .map(|j| {
                        Edge::new(
                            ids[j] as u32,
                            ids[j - 1] as u32,
                            file,
                            tasks[j].name.span,
                            false,
                        )
                    })
                    .collect()
            }
            false => Vec::new(),
        };
        Some(Made {
            references: c.symbols.references,
            unresolved: c.unresolved,
            groups,
            sequential,
        })
    }
}

/// What a step's `after` counts towards the dependency pairs.
fn pairs_of(g: &GroupEdge) -> u64 {
    let (a, b) = (g.dependents.len() as u64, g.dependencies.len() as u64);
    a.saturating_mul(b).saturating_add(a + b)
}

/// The kept edges the edit takes out (by index, sorted): the step's
/// `sequential` ones (each labelled with the name of the later task) and
/// those of the task that changed; `None` if the step's `sequential` edges
/// are not all there.
fn gone_edges(
    kept: &PlanReuse,
    file: FileId,
    old: &Step,
    ids: &[usize],
    task: Option<&Task>,
) -> Option<Vec<usize>> {
    let mut gone: Vec<usize> = task.map_or_else(Vec::new, |t| t.gone.edges.clone());
    let sequential = own(old).any(|i| matches!(i, StepItem::Sequential(_)));
    if sequential {
        let names: Vec<Span> = old
            .items
            .iter()
            .filter_map(|item| match item {
                StepItem::Task(task) => Some(task.name.span),
                _ => None,
            })
            .collect();
        let before = gone.len();
        for (i, e) in kept.edges.iter().enumerate() {
            if e.direct() || e.file() != file {
                continue;
            }
            // Labelled with the later task's name (the names in order).
            let j = names.partition_point(|s| s.start() < e.span.start());
            let made = j > 0
                && names.get(j) == Some(&e.span)
                && e.dependent as usize == ids[j]
                && e.dependency as usize == ids[j - 1];
            if made {
                gone.push(i);
            }
        }
        if gone.len() - before != ids.len() - 1 {
            return None;
        }
    }
    gone.sort_unstable();
    gone.dedup();
    Some(gone)
}

/// The graph's edges and groups after the edit: the kept ones moved, the
/// step's old `sequential` ones, the task's and the groups of the step's
/// old `after`s (`in_own`) left out; the new edges after the others, the
/// step's new groups where its old ones stood.
fn graph_after(
    kept: &PlanReuse,
    (old, ids, task, made): (&Step, &[usize], Option<&Task>, &Made),
    (in_own, map): (
        &impl Fn(FileId, Span) -> bool,
        &impl Fn(Span) -> Option<Span>,
    ),
    file: FileId,
) -> Option<(Vec<Edge>, Vec<GroupEdge>)> {
    let gone = gone_edges(kept, file, old, ids, task)?;
    let gone = gone.as_slice();
    let mut new_edges = task.map_or_else(Vec::new, |t| t.edges.clone());
    new_edges.extend(made.sequential.iter().copied());
    let new_groups = made.groups.clone();
    let mut edges: Vec<Edge> = Vec::with_capacity(kept.edges.len() + new_edges.len());
    let mut from = 0;
    for &until in gone.iter().chain([&kept.edges.len()]) {
        edges.extend_from_slice(kept.edges.get(from..until)?);
        from = until + 1;
    }
    for e in edges.iter_mut().filter(|e| e.file() == file) {
        e.span = map(e.span)?;
    }
    edges.extend(new_edges);
    let mut groups = Vec::with_capacity(kept.groups.len() + new_groups.len());
    let mut at = None;
    for g in &kept.groups {
        if in_own(g.file, g.span) {
            at.get_or_insert(groups.len());
            continue;
        }
        let span = if g.file == file { map(g.span)? } else { g.span };
        let before = gone.partition_point(|&e| e < g.after_edges);
        groups.push(GroupEdge {
            span,
            after_edges: g.after_edges - before,
            ..g.clone()
        });
    }
    if !new_groups.is_empty() {
        // The steps' groups are in source order (no templates).
        let first = new_groups[0].span.start();
        let at = at.unwrap_or_else(|| {
            groups.partition_point(|g| g.file != file || g.span.start() < first)
        });
        let after_edges = at.checked_sub(1).map_or(0, |g| groups[g].after_edges);
        let placed = new_groups
            .into_iter()
            .map(|g| GroupEdge { after_edges, ..g });
        groups.splice(at..at, placed);
    }
    Some((edges, groups))
}

/// The references after the edit, and where the tasks' fields' and the
/// tasks' strings' stand among them.
struct References {
    list: ir::Shifted<ir::Reference>,
    tasks: std::ops::Range<usize>,
    texts: std::ops::Range<usize>,
}

impl References {
    /// The old references moved; the step's old `after`s' (`in_own`) and
    /// the task's out, the new ones in their places.
    fn after(
        previous: &Checked,
        kept: &PlanReuse,
        old: &Step,
        (in_own, map, window): (
            &impl Fn(FileId, Span) -> bool,
            &impl Fn(Span) -> Option<Span>,
            ir::Window,
        ),
        file: FileId,
        (made, task): (&Made, Option<&Task>),
    ) -> Option<References> {
        let old_refs = &previous.symbols.references;
        let steps_part = kept.task_references.start;
        // The steps' part: what the plan's fields and roles name, then each
        // step's title's and `after`s' in the order of the steps. The
        // step's own stand after the others of the steps before it.
        let (mut at, mut own_refs) = (None, Vec::new());
        for (i, r) in old_refs.iter().take(steps_part).enumerate() {
            let in_step = r.file == file && within(old.span, r.span);
            if in_own(r.file, r.span) {
                own_refs.push(i);
                at.get_or_insert(i);
            } else if in_step {
                if at.is_some() {
                    return None;
                }
            } else if r.file == file && r.span.start() >= old.span.end() {
                at.get_or_insert(i);
            } else if at.is_some() {
                return None;
            }
        }
        let mut gone = own_refs.clone();
        if let Some(t) = task {
            gone.extend_from_slice(&t.gone.references);
        }
        gone.sort_unstable();
        let at = at.unwrap_or(steps_part);
        let mut list = old_refs.clone();
        list.remove(&gone);
        let mut list = list.moved(file, window, map)?;
        list.insert(at, made.references.clone());
        let added = made.references.len();
        let in_tasks = gone
            .iter()
            .filter(|i| kept.task_references.contains(i))
            .count();
        let in_texts = gone
            .iter()
            .filter(|i| kept.texts_references.contains(i))
            .count();
        if own_refs.len() + in_tasks + in_texts != gone.len() {
            return None;
        }
        let by = |n: usize| n + added - own_refs.len();
        let mut tasks = by(kept.task_references.start)..by(kept.task_references.end) - in_tasks;
        let mut texts = by(kept.texts_references.start) - in_tasks
            ..by(kept.texts_references.end) - in_tasks - in_texts;
        if let Some(t) = task {
            let added = t.references.len();
            insert_at(&mut list, &tasks, t.span, t.references.clone());
            tasks.end += added;
            texts = (texts.start + added)..(texts.end + added);
            let added = t.text_references.len();
            insert_at(&mut list, &texts, t.span, t.text_references.clone());
            texts.end += added;
        }
        Some(References { list, tasks, texts })
    }
}

/// The unresolved names after the edit, and how many the steps' `after`s
/// gave: moved, the step's old `after`s' (`in_own`) and the task's out, the
/// new ones in their parts in source order.
fn unresolved_after(
    kept: &PlanReuse,
    in_own: &impl Fn(FileId, Span) -> bool,
    map: &impl Fn(Span) -> Option<Span>,
    file: FileId,
    (made, task): (&Made, Option<&Task>),
) -> Option<(Vec<Unresolved>, usize)> {
    let gone_task: &[usize] = task.map_or(&[], |t| &t.gone.unresolved);
    let mut unresolved = Vec::with_capacity(kept.unresolved.len() + made.unresolved.len());
    let mut steps_part = kept.tasks_unresolved;
    for (i, u) in kept.unresolved.iter().enumerate() {
        if in_own(u.file, u.name.span) {
            if i >= kept.tasks_unresolved {
                return None;
            }
            steps_part -= 1;
            continue;
        }
        if gone_task.binary_search(&i).is_ok() {
            continue;
        }
        let mut u = u.clone();
        if u.file == file {
            u.name.span = map(u.name.span)?;
        }
        unresolved.push(u);
    }
    let by_place = |u: &Unresolved| (u.file != file, u.name.span.start());
    if let Some(first) = made.unresolved.first() {
        let key = by_place(first);
        let at = unresolved[..steps_part].partition_point(|u| by_place(u) < key);
        let added = made.unresolved.len();
        unresolved.splice(at..at, made.unresolved.iter().cloned());
        steps_part += added;
    }
    if let Some(t) = task {
        let at = t.span.start();
        let at =
            steps_part + unresolved[steps_part..].partition_point(|u| u.name.span.start() < at);
        unresolved.splice(at..at, t.unresolved.iter().cloned());
    }
    Some((unresolved, steps_part))
}

/// Whether `inner` lies within `outer`.
fn within(outer: Span, inner: Span) -> bool {
    outer.start() <= inner.start() && inner.end() <= outer.end()
}
