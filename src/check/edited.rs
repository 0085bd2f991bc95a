//! The check after an edit inside one task that keeps its name (a reference
//! typed into its `after`, a field added, a string left unclosed and
//! mended), from the check before it: the task's fields and strings are
//! checked again alone, and what depends on them is made again from what
//! the last check kept ([`PlanReuse`]): its references, the unresolved
//! names and their "did you mean" searches (all of them, in the same order
//! and budget), its edges and the graph's checks (reusing the reduction),
//! its IR task. Everything else the check found is moved with the text by
//! the caller. Where the edit reaches beyond what this follows (a role or
//! parameter that becomes used or unused, a diagnostic that unparsed text
//! could silence, steps named past the budget of dependency pairs), it
//! gives `None` and the file is checked again whole.

use std::sync::Arc;

use super::graph::{self, DepGraph};
use super::lower::finish::{structure, Names, TaskEdges, TaskFields};
use super::lower::{Member, Unknown, Unresolved};
use super::reuse::{
    check_diagnostics, edges_after, interpolated, other_after, same_name, set_dependencies,
    shifted, unknown_diagnostics, Definitions,
};
use super::unparsed::Unparsed;
use super::{Checked, Checker, PlanReuse, Reuse};
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{self, SymbolKind};
use crate::modules::Module;
use crate::span::{FileId, SourceMap, Span};
use crate::syntax::ast;

/// A task edited, its name kept: as it was and as it is.
pub(crate) struct EditedTask<'a> {
    pub old: &'a ast::Task,
    pub new: &'a ast::Task,
}

/// The check of the edited file: `previous` is the check before the edit,
/// `map` moves a span of the old text to the new one (`None` inside the
/// task, but for its name and whole span), `after` and `by` say what it
/// does wholesale (a span that starts at or after `after` moves by `by`),
/// `modules` and `sources` are the edited file's. `None` where the edit
/// reaches beyond what this follows.
pub(crate) fn edited(
    previous: &Checked,
    (map, after, by): (&impl Fn(Span) -> Option<Span>, usize, i64),
    (modules, sources): (&[Module], &SourceMap),
    file: FileId,
    task: &EditedTask<'_>,
) -> Option<Checked> {
    let kept = previous.reuse.plan.as_deref()?;
    let memo = previous.reuse.graph.as_deref()?;
    let unparsed = Unparsed::of(modules, sources);
    if !followed(previous, kept, &unparsed) {
        return None;
    }
    // What ends before the task stays where it was.
    let from = task.old.span.start();
    let map = |span: Span| (span.end() <= from).then_some(span).or_else(|| map(span));
    // Whole chunks of what ends before the task, or starts after it and
    // the edit, are shared (those after moved); the others are read again.
    let window = ir::Window {
        keep_until: from,
        shift_from: after,
        by,
    };
    let mut plan = previous.plan.clone()?;
    let index = plan
        .tasks
        .iter()
        .position(|t| same_name(t.key(), &task.new.name.name))?;
    let gone = Gone::of(previous, kept, file, task.old, index)?;

    let definitions = &previous.symbols.definitions;
    let (c, new_edges, _) = fields_again(definitions, &plan, file, index, task.new)
        .filter(|(_, _, pairs)| within_pair_budget(previous, kept, gone.steps, *pairs))?;
    let (ir_task, text_refs) = ir_task(&plan, index, task.new, definitions, file)?;
    plan.tasks[index] = Arc::new(ir_task);
    let (edges, groups) = edges_after(kept, &gone.edges, &map, file, new_edges)?;
    let graph = DepGraph::of_tasks(&plan.tasks, edges, groups);

    // The references, the unresolved names and their searches, the
    // diagnostics of the fields, the definitions moved.
    let task_refs = c.symbols.references;
    let new = (task.new.span, task_refs, text_refs);
    let task_used = used_by(new.1.iter().copied(), &new.2, definitions);
    let refs = References::after(previous, kept, &gone, (&map, window), file, new)?;
    let old_refs = &previous.symbols.references;
    let gone_refs = gone.references.iter().filter_map(|&i| old_refs.get(i));
    let was_used = used_by(gone_refs, &[], definitions);
    if !used_elsewhere(old_refs, &gone.references, &was_used, &task_used) {
        return None;
    }
    let at = task.new.span.start();
    let unresolved = unresolved_after(kept, &gone, &map, at, c.unresolved)?;
    let names = (definitions, &*kept.search_names);
    let unknown = unknown_diagnostics(&unresolved, names, file, &unparsed);
    let other = other_after(kept, &gone.other, &map, file, c.diagnostics)?;
    let definitions = definitions.moved(file, window, &map)?;

    // The graph, reusing the last reduction: the task's list changed.
    let report = graph::check_changed(&graph, memo, &[index]);
    let DepGraph { edges, groups, .. } = graph;
    if report.has_cycle {
        return None;
    }
    set_dependencies(&mut plan, &report);
    let diagnostics = check_diagnostics(&other, unknown, report.diagnostics);
    let plan_reuse = PlanReuse {
        unresolved,
        tasks_unresolved: kept.tasks_unresolved,
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

/// The task's fields checked again alone: what the check found of them
/// (diagnostics, references, unresolved names), the edges they make (a
/// step named: one to each of its tasks, as the whole check makes them
/// within its budget), and the pairs its steps named count towards that
/// budget; `None` if they name a role that is not declared, or a step the
/// plan does not hold.
pub(super) fn fields_again(
    definitions: &Definitions,
    plan: &ir::Plan,
    file: FileId,
    index: usize,
    task: &ast::Task,
) -> Option<(Checker, Vec<graph::Edge>, u64)> {
    let names = PlanNames {
        definitions,
        file,
        steps: steps_named(plan, task)?,
        step_missing: std::cell::Cell::new(false),
    };
    let mut c = Checker::new(file, true);
    let mut out = TaskEdges::default();
    let key = task.name.name.as_str();
    structure(&names, &mut c, &mut out, (index, task, key, ""));
    let plain = c.unresolved.iter().all(plain_name);
    if names.step_missing.get() || !plain {
        return None;
    }
    let (edges, pairs) = out.expanded(&names);
    Some((c, edges, pairs))
}

/// The steps of the plan a task's `after`s name, with their tasks by
/// index; `None` if a step's task is not where its id says.
fn steps_named(plan: &ir::Plan, task: &ast::Task) -> Option<Vec<(ast::SmolStr, Vec<usize>)>> {
    let refs = task.fields.iter().flat_map(|field| match field {
        ast::TaskField::After(after) => &after.refs[..],
        _ => &[],
    });
    steps_among(plan, refs)
}

/// The steps of the plan `refs` name, with their tasks by index; `None` if
/// a step's task is not where its id says.
pub(super) fn steps_among<'r>(
    plan: &ir::Plan,
    refs: impl IntoIterator<Item = &'r ast::Ident>,
) -> Option<Vec<(ast::SmolStr, Vec<usize>)>> {
    let mut steps: Vec<(ast::SmolStr, Vec<usize>)> = Vec::new();
    for reference in refs {
        let name = &reference.name;
        if steps.iter().any(|(named, _)| named == name) {
            continue;
        }
        let Some(step) = plan.steps.iter().find(|step| step.id == *name) else {
            continue;
        };
        let tasks = step
            .tasks
            .iter()
            .map(|&id| {
                // A task's id is its index plus one.
                let at = usize::try_from(id).ok()?.checked_sub(1)?;
                (at < plan.tasks.len()).then_some(at)
            })
            .collect::<Option<Vec<usize>>>()?;
        steps.push((name.clone(), tasks));
    }
    Some(steps)
}

/// Whether the whole check would make every edge a task's steps named ask
/// for, as [`fields_again`] makes them: nothing was refused for the budget
/// of [`crate::syntax::dependency_pair_limit`] before (no `planc::limit`),
/// and what the plan's steps and tasks may count towards it, with the
/// edited task's new `pairs`, stays within its least value (or the task
/// named no step before or after the edit: `steps_gone`). A step's
/// `after` counts its group's pairs; a task's reference to a step of `n`
/// tasks `2n + 1`, at most twice its edges and one for the reference.
pub(super) fn within_pair_budget(
    previous: &Checked,
    kept: &PlanReuse,
    steps_gone: bool,
    pairs: u64,
) -> bool {
    if !steps_gone && pairs == 0 {
        return true;
    }
    if previous.diagnostics.iter().any(|d| d.code == Code::Limit) {
        return false;
    }
    let group = |g: &graph::GroupEdge| {
        let (a, b) = (g.dependents.len() as u64, g.dependencies.len() as u64);
        a.saturating_mul(b).saturating_add(a + b)
    };
    let groups: u64 = kept.groups.iter().map(group).sum();
    let edges = kept.edges.iter().filter(|e| !e.direct()).count() as u64;
    let steps: Vec<bool> = (previous.symbols.definitions.unmoved())
        .map(|d| d.kind() == SymbolKind::Step)
        .collect();
    let to_steps = previous
        .symbols
        .references
        .unmoved_named()
        .filter(|r| steps.get(r.definition as usize) == Some(&true))
        .count() as u64;
    let bound = groups + 2 * edges + to_steps + pairs;
    bound <= crate::syntax::DEPENDENCY_PAIRS_BASE as u64
}

/// Whether a check of the same trees with other text unparsed (the root
/// file's runs now `root`, the imported modules' as they were) finds what
/// `previous` found, moved with the text: nothing it found depends on
/// unparsed text ([`followed`]), and no name went unresolved (unparsed text
/// that names one silences its diagnostic). Then an edit that changed only
/// what went unparsed needs no check.
pub(crate) fn unparsed_only(
    previous: &Checked,
    root: (FileId, &[Span]),
    imported: &[Module],
    sources: &SourceMap,
) -> bool {
    let Some(kept) = previous.reuse.plan.as_deref() else {
        return false;
    };
    let runs =
        std::iter::once(root).chain(imported.iter().map(|m| (m.file, m.ast.unparsed.as_slice())));
    let unparsed = Unparsed::of_runs(runs, sources);
    kept.unresolved.is_empty() && followed(previous, kept, &unparsed)
}

/// A name a task's `after` gives, outside templates.
pub(super) fn plain_name(u: &Unresolved) -> bool {
    matches!(&u.kind, Unknown::TaskOrStep { prefix } if prefix.is_empty())
}

/// Whether the check before the edit is one this follows: no name declared
/// twice, every unresolved name a task's or a step's (no role: its search
/// could change which roles are reported unused), nothing withheld for
/// unparsed text (it would have to be reported now), and, when text is
/// unparsed now, no diagnostic it could silence (about a name it mentions,
/// or a body it stands in).
pub(super) fn followed(previous: &Checked, kept: &PlanReuse, unparsed: &Unparsed) -> bool {
    let twice = previous
        .diagnostics
        .iter()
        .any(|d| d.code == Code::Duplicate);
    let echoes = |d: &Diagnostic| {
        matches!(
            d.code,
            Code::Unused | Code::MissingGoal | Code::Empty | Code::UnknownParam
        )
    };
    let silenced = !unparsed.is_empty() && kept.other.iter().any(echoes);
    !twice && kept.withheld == 0 && kept.unresolved.iter().all(plain_name) && !silenced
}

/// The references after the edit, and where the tasks' fields' and the
/// tasks' strings' stand among them.
struct References {
    list: ir::Shifted<ir::Reference>,
    tasks: std::ops::Range<usize>,
    texts: std::ops::Range<usize>,
}

impl References {
    /// The old references moved, the task's out, and its new ones (`new`:
    /// the task's span, its fields' references and its strings') in their
    /// places.
    fn after(
        previous: &Checked,
        kept: &PlanReuse,
        gone: &Gone,
        (map, window): (&impl Fn(Span) -> Option<Span>, ir::Window),
        file: FileId,
        (span, task_refs, text_refs): (Span, Vec<ir::Reference>, Vec<ir::Reference>),
    ) -> Option<References> {
        // Those gone left out (copying the chunks that held them), then
        // the rest moved.
        let mut list = previous.symbols.references.clone();
        list.remove(&gone.references);
        let mut list = list.moved(file, window, map)?;
        let mut tasks = kept.task_references.clone();
        let in_tasks = gone.references.iter().filter(|i| tasks.contains(i)).count();
        let in_texts = gone.references.len() - in_tasks;
        tasks.end -= in_tasks;
        let mut texts = shifted(
            &kept.texts_references,
            tasks.len(),
            kept.task_references.len(),
        );
        texts.end -= in_texts;
        let added = task_refs.len();
        insert_at(&mut list, &tasks, span, task_refs);
        tasks.end += added;
        texts = (texts.start + added)..(texts.end + added);
        let added = text_refs.len();
        insert_at(&mut list, &texts, span, text_refs);
        texts.end += added;
        Some(References { list, tasks, texts })
    }
}

/// The unresolved names after the edit: the task's out, its new ones
/// (`new`, met in its fields) in the tasks' part where it stands (`at`).
fn unresolved_after(
    kept: &PlanReuse,
    gone: &Gone,
    map: &impl Fn(Span) -> Option<Span>,
    at: usize,
    new: Vec<Unresolved>,
) -> Option<Vec<Unresolved>> {
    let mut unresolved = Vec::with_capacity(kept.unresolved.len() + new.len());
    for (i, u) in kept.unresolved.iter().enumerate() {
        if gone.unresolved.binary_search(&i).is_err() {
            let mut u = u.clone();
            u.name.span = map(u.name.span)?;
            unresolved.push(u);
        }
    }
    let tasks = kept.tasks_unresolved;
    let at = tasks + unresolved[tasks..].partition_point(|u| u.name.span.start() < at);
    unresolved.splice(at..at, new);
    Some(unresolved)
}

/// What the task made in the last check, by index (sorted): its references
/// (in its fields and its strings), unresolved names, edges (those of its
/// `after`; a step's `sequential` ones, labelled with its name, stay) and
/// diagnostics (those of its fields: a field given twice, a value out of
/// range, a name given twice). `None` if it made something else this does
/// not make again (an edge to a step's tasks, a diagnostic of another kind
/// in it).
pub(super) struct Gone {
    pub(super) references: Vec<usize>,
    pub(super) unresolved: Vec<usize>,
    pub(super) edges: Vec<usize>,
    /// Whether some of `edges` are to the tasks of a step it named.
    pub(super) steps: bool,
    pub(super) other: Vec<usize>,
}

impl Gone {
    pub(super) fn of(
        previous: &Checked,
        kept: &PlanReuse,
        file: FileId,
        task: &ast::Task,
        index: usize,
    ) -> Option<Gone> {
        let (span, name) = (task.span, task.name.span);
        let inside =
            |f: FileId, s: Span| f == file && span.start() <= s.start() && s.end() <= span.end();
        let references = previous.symbols.references.within(file, span);
        let ours =
            |i: &usize| kept.task_references.contains(i) || kept.texts_references.contains(i);
        let unresolved: Vec<usize> = (0..kept.unresolved.len())
            .filter(|&i| inside(kept.unresolved[i].file, kept.unresolved[i].name.span))
            .collect();
        let (mut edges, mut steps) = (Vec::new(), false);
        for (i, e) in kept.edges.iter().enumerate() {
            if !inside(e.file(), e.span) || e.span == name {
                continue;
            }
            // Its own: a task it names, or one of a step it names.
            if e.dependent as usize != index {
                return None;
            }
            steps |= !e.direct();
            edges.push(i);
        }
        let mut other = Vec::new();
        for (i, d) in kept.other.iter().enumerate() {
            let labels_inside = d.labels.iter().filter(|l| inside(l.file, l.span)).count();
            if labels_inside == 0 {
                continue;
            }
            let fields = matches!(
                d.code,
                Code::DuplicateField | Code::InvalidValue | Code::RedundantDependency
            );
            if !fields || labels_inside < d.labels.len() {
                return None;
            }
            other.push(i);
        }
        let in_groups = kept.groups.iter().any(|g| inside(g.file, g.span));
        let tasks_part = unresolved.iter().all(|&i| i >= kept.tasks_unresolved);
        (references.iter().all(ours) && tasks_part && !in_groups).then_some(Gone {
            references,
            unresolved,
            edges,
            steps,
            other,
        })
    }
}

/// The names a task's fields give, looked up in the last check's
/// definitions (a few references, each a pass over the names: no table to
/// build per keystroke). A step named stands for its tasks, from
/// `steps` ([`steps_named`]); one not there is noted, for the caller to
/// refuse.
pub(super) struct PlanNames<'d> {
    pub(super) definitions: &'d Definitions,
    pub(super) file: FileId,
    pub(super) steps: Vec<(ast::SmolStr, Vec<usize>)>,
    pub(super) step_missing: std::cell::Cell<bool>,
}

impl Names for PlanNames<'_> {
    fn resolve(&self, c: &mut Checker, prefix: &str, reference: &ast::Ident) -> Option<Member> {
        let mut task = 0;
        for (def, d) in self.definitions.unmoved().enumerate() {
            let named = d.name() == reference.name && d.file() == self.file;
            match d.kind() {
                SymbolKind::Task if named => {
                    c.reference(def, reference.span);
                    return Some(Member::Task(task));
                }
                SymbolKind::Task => task += 1,
                SymbolKind::Step if named => {
                    c.reference(def, reference.span);
                    let step = self
                        .steps
                        .iter()
                        .position(|(name, _)| *name == reference.name);
                    if step.is_none() {
                        self.step_missing.set(true);
                    }
                    return Some(Member::Step(step.unwrap_or(0)));
                }
                _ => {}
            }
        }
        c.unresolved.push(Unresolved {
            file: c.file,
            name: reference.clone(),
            kind: Unknown::TaskOrStep {
                prefix: prefix.into(),
            },
        });
        None
    }

    fn tasks_of<'m>(&'m self, member: &'m Member) -> &'m [usize] {
        match member {
            Member::Task(i) => std::slice::from_ref(i),
            Member::Step(i) => self.steps.get(*i).map_or(&[], |(_, tasks)| tasks),
            // No instances: a file with templates is checked whole.
            Member::Group(_) => &[],
        }
    }

    fn role(&self, name: &str) -> Option<usize> {
        self.definitions
            .unmoved()
            .position(|d| d.kind() == SymbolKind::Role && d.name() == name)
    }
}

/// The IR task of the edited task, and the references its strings make to
/// the plan's parameters (its reasoning's, description's and title's, in
/// that order, as the check makes them). `None` if a string names a
/// parameter that is not one of the plan's, or has no value.
pub(super) fn ir_task(
    plan: &ir::Plan,
    index: usize,
    task: &ast::Task,
    definitions: &Definitions,
    file: FileId,
) -> Option<(ir::Task, Vec<ir::Reference>)> {
    let fields = TaskFields::of(task);
    let mut references = Vec::new();
    // Each parameter a string names is a reference to its one definition.
    let mut text = |s: &ast::Str| -> Option<String> {
        interpolated(&plan.params, s, |ident| {
            let mut defs = definitions
                .unmoved()
                .enumerate()
                .filter(|(_, d)| d.kind() == SymbolKind::Param && d.name() == ident.name);
            let (definition, _) = defs.next()?;
            if defs.next().is_some() {
                return None;
            }
            references.push(ir::Reference {
                definition: definition as u32,
                file,
                span: ident.span,
            });
            Some(())
        })
    };
    let reasoning = fields
        .reasoning
        .map(&mut text)
        .map_or(Ok(None), |t| t.ok_or(()).map(Some))
        .ok()?;
    let description = fields
        .description
        .map(&mut text)
        .map_or(Ok(None), |t| t.ok_or(()).map(Some))
        .ok()?;
    let name = text(&task.title)?;
    let old = &plan.tasks[index];
    let said = (reasoning.as_deref(), description.as_deref());
    let assignee = fields.assignee.map(|role| role.as_str());
    let mut ir_task = ir::Task::assigned(old.key(), &name, said.0, said.1, assignee);
    fields.give(&mut ir_task);
    Some((ir_task, references))
}

/// Puts `new` (references inside the task at `span`, in their order) into
/// the block `range` of `references`, where the task's stood.
pub(super) fn insert_at(
    references: &mut ir::Shifted<ir::Reference>,
    range: &std::ops::Range<usize>,
    span: Span,
    new: Vec<ir::Reference>,
) {
    let at = references.partition_point(range.clone(), |r| r.span.start() < span.start());
    references.insert(at, new);
}

/// The roles and parameters `references` and `more` name, each once, in
/// order: where a task's are as they were, which are used is too.
pub(super) fn used_by(
    references: impl IntoIterator<Item = ir::Reference>,
    more: &[ir::Reference],
    definitions: &Definitions,
) -> Vec<usize> {
    let mut used: Vec<usize> = references
        .into_iter()
        .chain(more.iter().copied())
        .map(|r| r.definition as usize)
        .filter(|&d| {
            definitions
                .get(d)
                .is_some_and(|d| matches!(d.kind(), SymbolKind::Role | SymbolKind::Param))
        })
        .collect();
    used.sort_unstable();
    used.dedup();
    used
}

/// Whether which roles and parameters are referenced stays as it was when
/// the task's references (`gone`, by index in `references`), which named
/// `was`, are replaced by ones that name `now`: each that one names and the
/// other does not is referenced outside the task too. (Which are unused is
/// reported elsewhere.)
pub(super) fn used_elsewhere(
    references: &ir::Shifted<ir::Reference>,
    gone: &[usize],
    was: &[usize],
    now: &[usize],
) -> bool {
    let only_in = |a: &[usize], b: &[usize]| -> Vec<usize> {
        let not_in_b = |d: &&usize| b.binary_search(d).is_err();
        a.iter().filter(not_in_b).copied().collect()
    };
    let mut changed = only_in(was, now);
    changed.extend(only_in(now, was));
    if changed.is_empty() {
        return true;
    }
    // Each found once is enough: the scan stops when all are.
    let mut elsewhere = vec![false; changed.len()];
    let mut left = changed.len();
    references.any_named(|i, named| {
        if let Some(k) = changed.iter().position(|&d| d == named) {
            if !elsewhere[k] && gone.binary_search(&i).is_err() {
                elsewhere[k] = true;
                left -= 1;
            }
        }
        left == 0
    })
}
