//! The second half of a lowering: each task's fields, references and edges,
//! then the graph checks beside the interpolation of the task strings (on two
//! threads for a large plan), and the steps and tasks of the IR.

use super::instances::RefRuns;
use super::{side_by_side, Env, Lowered, Lowering, Member, TaskSource, Unknown, Unresolved};
use crate::check::declare::Declarations;
use crate::check::graph;
use crate::check::params::Params;
use crate::check::template::TemplateEnv;
use crate::check::{Checker, Trace};
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{self, TaskId};
use crate::span::FileId;
use crate::span::Span;
use crate::syntax::ast::{self, SmolStr};

/// What the tasks' `after`s make, on one thread or for one half of the
/// tasks: single edges, and the references to steps and instances, whose
/// edges are made once every task has been looked at (in source order,
/// within the budget of [`crate::syntax::dependency_pair_limit`]).
#[derive(Default)]
pub(in crate::check) struct TaskEdges {
    pub edges: Vec<graph::Edge>,
    pub to_groups: Vec<ToGroup>,
    /// What the `after` being read has named so far.
    named: rustc_hash::FxHashSet<Member>,
}

/// Empties `named` for an `after` of `refs` names, in time proportional to
/// them. A hash set's `clear` costs its capacity, not its length: the set a
/// long `after` grew, cleared again for every task after it, made a long
/// chain after a wide fan-in quadratic. A set much larger than this `after`
/// needs is dropped instead.
fn empty_for(named: &mut rustc_hash::FxHashSet<Member>, refs: usize) {
    if named.capacity() > 2 * refs + 64 {
        *named = rustc_hash::FxHashSet::default();
    } else {
        named.clear();
    }
}

/// A task's reference to a step or an instance of more than one task.
pub(in crate::check) struct ToGroup {
    /// How many single edges come before its edges in source order.
    at: usize,
    dependent: usize,
    member: Member,
    file: FileId,
    reference: ast::Ident,
}

impl ToGroup {
    /// Its edges: from the dependent to each of `dependencies` (the tasks
    /// the step or instance it names stands for).
    fn edges<'d>(&'d self, dependencies: &'d [usize]) -> impl Iterator<Item = graph::Edge> + 'd {
        dependencies.iter().map(|&dependency| {
            let span = self.reference.span;
            graph::Edge::new(
                self.dependent as u32,
                dependency as u32,
                self.file,
                span,
                false,
            )
        })
    }
}

impl TaskEdges {
    fn with_capacity(edges: usize) -> TaskEdges {
        TaskEdges {
            edges: Vec::with_capacity(edges),
            ..TaskEdges::default()
        }
    }

    /// This half's edges after `first`'s (the half before it).
    fn append(first: TaskEdges, second: TaskEdges) -> TaskEdges {
        let offset = first.edges.len();
        let mut all = first;
        all.edges.extend(second.edges);
        all.to_groups
            .extend(second.to_groups.into_iter().map(|g| ToGroup {
                at: g.at + offset,
                ..g
            }));
        all
    }
}

impl TaskEdges {
    /// One task's edges, the single ones with those of its references to
    /// steps and instances in source order, as the whole check makes them
    /// when the budget of [`crate::syntax::dependency_pair_limit`] allows
    /// them all (the caller makes sure of that: `check::edited`); and the
    /// pairs those references count towards it.
    pub(in crate::check) fn expanded(self, names: &impl Names) -> (Vec<graph::Edge>, u64) {
        let mut edges = Vec::with_capacity(self.edges.len());
        let mut singles = self.edges.into_iter();
        let (mut copied, mut pairs) = (0, 0u64);
        for group in self.to_groups {
            edges.extend(singles.by_ref().take(group.at - copied));
            copied = group.at;
            let dependencies = names.tasks_of(&group.member);
            pairs = pairs.saturating_add(super::pairs(1, dependencies.len()));
            edges.extend(group.edges(dependencies));
        }
        edges.extend(singles);
        (edges, pairs)
    }
}

/// What checking a task's fields reads of its plan: the names its `after`
/// and `assignee` give. The lowering answers from its name tables; a check
/// of one edited task (`check::edited`) from the last check's symbols.
pub(in crate::check) trait Names {
    /// What a reference under `prefix` names, its reference recorded;
    /// `None`, the name put in `c.unresolved`, if nothing.
    fn resolve(&self, c: &mut Checker, prefix: &str, reference: &ast::Ident) -> Option<Member>;
    /// The tasks a name stands for.
    fn tasks_of<'m>(&'m self, member: &'m Member) -> &'m [usize];
    /// The definition of a role.
    fn role(&self, name: &str) -> Option<usize>;
}

impl Names for Lowering<'_, '_> {
    fn resolve(&self, c: &mut Checker, prefix: &str, reference: &ast::Ident) -> Option<Member> {
        Lowering::resolve(self, c, prefix, reference)
    }

    fn tasks_of<'m>(&'m self, member: &'m Member) -> &'m [usize] {
        Lowering::tasks_of(self, member)
    }

    fn role(&self, name: &str) -> Option<usize> {
        self.decls.roles.lookup(name)
    }
}

/// Checks a task's fields: references resolved (its edges added), roles
/// looked up, values in range, no field given twice. (What the fields say
/// is read by [`TaskFields::of`] when the task is built.) `index` is the
/// task's, `key` its name, `prefix` that of the names it gives.
pub(in crate::check) fn structure(
    names: &impl Names,
    c: &mut Checker,
    out: &mut TaskEdges,
    (index, task, key, prefix): (usize, &ast::Task, &str, &str),
) {
    let file = c.file;
    // Where each kind of field was first given, by `field_kind`.
    let mut seen: [Option<Span>; 7] = [None; 7];
    for field in &task.fields {
        let seen = &mut seen[field_kind(field)];
        if let Some(first) = *seen {
            c.duplicate_field(field.keyword(), first, field.span());
            continue;
        }
        *seen = Some(field.span());
        match field {
            ast::TaskField::After(after) => task_after(names, c, out, (index, key, prefix), after),
            ast::TaskField::Assignee(a) => {
                let role = a.role();
                if let Some(def) = names.role(&role.name) {
                    c.reference(def, role.span);
                } else {
                    c.unresolved.push(Unresolved {
                        file,
                        name: role,
                        kind: Unknown::Role,
                    });
                }
            }
            ast::TaskField::Retry(f) => check_retry(c, f),
            ast::TaskField::Priority { level, .. } => check_priority(c, level),
            ast::TaskField::Reasoning(_)
            | ast::TaskField::Description(_)
            | ast::TaskField::Optional(_) => {}
        }
    }
}

/// A task's `after`: each reference resolved; a task named makes one
/// edge, a step or an instance is kept for [`Lowering::group_edges`]. A
/// name given again makes nothing more (one warning for the first repeat):
/// `after a,a,…` costs its text, not an edge per repeat.
fn task_after(
    names: &impl Names,
    c: &mut Checker,
    out: &mut TaskEdges,
    (index, key, prefix): (usize, &str, &str),
    after: &ast::After,
) {
    let file = c.file;
    empty_for(&mut out.named, after.refs.len());
    let mut repeated = false;
    for reference in &after.refs {
        let Some(member) = names.resolve(c, prefix, reference) else {
            continue;
        };
        if !out.named.insert(member) {
            if !std::mem::replace(&mut repeated, true) {
                c.diagnostics.push(named_again(c, key, reference));
            }
            continue;
        }
        match *names.tasks_of(&member) {
            [] => {}
            [dependency] => out.edges.push(graph::Edge::new(
                index as u32,
                dependency as u32,
                file,
                reference.span,
                matches!(member, Member::Task(_)),
            )),
            _ => out.to_groups.push(ToGroup {
                at: out.edges.len(),
                dependent: index,
                member,
                file,
                reference: reference.clone(),
            }),
        }
    }
}

impl<'a> Lowering<'a, '_> {
    /// Checks the fields of task `index` ([`structure`]).
    fn structure(&self, c: &mut Checker, out: &mut TaskEdges, index: usize) {
        let source = &self.tasks[index];
        c.file = source.file;
        let prefix = self.prefix(source.env);
        structure(self, c, out, (index, source.task, &source.key, prefix));
    }

    /// The edges of the tasks' references to steps and instances, in source
    /// order among the single edges. Each counts, like a step's `after`,
    /// towards the dependencies steps and instances may make: the first over
    /// is refused with `planc::limit`, and those after it make nothing.
    fn group_edges(&self, c: &mut Checker, all: TaskEdges) -> Vec<graph::Edge> {
        if all.to_groups.is_empty() {
            return all.edges;
        }
        let mut edges = Vec::with_capacity(all.edges.len() + all.to_groups.len());
        let mut singles = all.edges.into_iter();
        let mut copied = 0;
        for group in all.to_groups {
            edges.extend(singles.by_ref().take(group.at - copied));
            copied = group.at;
            let dependencies = self.tasks_of(&group.member);
            let pairs = super::pairs(1, dependencies.len());
            if c.group_pairs.saturating_add(pairs) > c.group_pair_limit {
                if c.group_pairs <= c.group_pair_limit {
                    c.group_pairs = u64::MAX;
                    c.file = group.file;
                    let refused = super::too_many_pairs(c, &group.reference, 1, dependencies.len());
                    c.diagnostics.push(refused);
                }
                continue;
            }
            c.group_pairs += pairs;
            edges.extend(group.edges(dependencies));
        }
        edges.extend(singles);
        edges
    }

    /// The structure of each task (its fields, references and edges). A
    /// large plan's second half is done on a second thread, into lists of
    /// its own that are appended to the first half's.
    fn tasks_structure(
        &self,
        c: &mut Checker,
        mut first: TaskEdges,
        fields: &mut RefRuns,
    ) -> Vec<graph::Edge> {
        let n = self.tasks.len();
        if side_by_side(n) {
            let (this, mut helper) = (self, c.helper());
            let middle = n / 2;
            let all = std::thread::scope(|scope| {
                let second = scope.spawn(move || {
                    let mut out = TaskEdges::with_capacity(n);
                    let mut runs = RefRuns::default();
                    for index in middle..n {
                        this.noted_structure(&mut helper, &mut out, &mut runs, index);
                    }
                    (helper, out, runs)
                });
                for index in 0..middle {
                    this.noted_structure(c, &mut first, fields, index);
                }
                let (other, second, runs) = second
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                // The other checker's references follow this one's.
                fields.append(runs, c.symbols.references.len());
                c.append(other);
                TaskEdges::append(first, second)
            });
            self.group_edges(c, all)
        } else {
            for index in 0..n {
                self.noted_structure(c, &mut first, fields, index);
            }
            self.group_edges(c, first)
        }
    }

    /// [`Self::structure`] of task `index`, its references noted in `runs`
    /// when it is an instance's.
    fn noted_structure(
        &self,
        c: &mut Checker,
        out: &mut TaskEdges,
        runs: &mut RefRuns,
        index: usize,
    ) {
        let from = c.symbols.references.len();
        self.structure(c, out, index);
        runs.note(self.tasks[index].env, from, c.symbols.references.len());
    }

    /// Each step's `after` and `sequential`, and the step of the IR.
    fn step_structure(
        &mut self,
        c: &mut Checker,
        params: &mut Option<&mut Params<'a>>,
        edges: &mut Vec<graph::Edge>,
        groups: &mut Vec<graph::GroupEdge>,
        s: usize,
    ) -> ir::Step {
        let (step, file, env) = (self.steps[s].step, self.steps[s].file, self.steps[s].env);
        c.file = file;
        let name = match &step.title {
            Some(title) => self.interpolate(c, params, env, title),
            None => step.name.name.to_string(),
        };
        let mut sequential: Option<Span> = None;
        for item in &step.items {
            match item {
                ast::StepItem::After(after) => {
                    let step = &self.steps[s];
                    self.wait_for(
                        c,
                        groups,
                        edges.len(),
                        self.prefix(step.env),
                        after,
                        &step.tasks,
                    );
                }
                ast::StepItem::Sequential(span) => {
                    if let Some(first) = sequential {
                        c.duplicate_field("sequential", first, *span);
                    }
                    sequential = Some(*span);
                }
                ast::StepItem::Task(_) => {}
            }
        }
        if sequential.is_some() {
            for pair in self.steps[s].tasks.windows(2) {
                edges.push(graph::Edge::new(
                    pair[1] as u32,
                    pair[0] as u32,
                    file,
                    self.tasks[pair[1]].task.name.span,
                    false,
                ));
            }
        }
        if self.steps[s].tasks.is_empty() && c.withheld_within(file, step.span) {
            c.diagnostics.push(
                Diagnostic::new(
                    Code::Empty,
                    format!("step `{}` has no tasks", step.name.name),
                )
                .label(file, step.name.span, "empty step")
                .help("add a `task` to it, or remove the step"),
            );
        }
        ir::Step {
            id: self.steps[s].key.clone(),
            name,
            tasks: self.steps[s]
                .tasks
                .iter()
                .map(|&i| i as TaskId + 1)
                .collect(),
        }
    }

    /// The steps of the IR, the task-to-task edges and the edges of the
    /// `after`s of steps and instances: every name of the plan's structure
    /// resolved (what cannot be is reported in source order).
    fn resolve_structure(
        &mut self,
        c: &mut Checker,
        params: &mut Option<&mut Params<'a>>,
        (titles, fields): (&mut RefRuns, &mut RefRuns),
    ) -> (Vec<ir::Step>, Vec<graph::Edge>, Vec<graph::GroupEdge>) {
        // Most tasks name one other or two; more edges grow the list.
        let mut first = TaskEdges::with_capacity(self.tasks.len() * 2);
        let mut groups: Vec<graph::GroupEdge> = Vec::new();
        let mut ir_steps = Vec::with_capacity(self.steps.len());
        for s in 0..self.steps.len() {
            let from = c.symbols.references.len();
            let step = self.step_structure(c, params, &mut first.edges, &mut groups, s);
            titles.note(self.steps[s].env, from, c.symbols.references.len());
            ir_steps.push(step);
        }

        // `use … { after X }`: every task of the instance waits for X.
        for g in 0..self.groups.len() {
            let (use_, file) = (self.groups[g].use_, self.groups[g].file);
            c.file = file;
            for after in &use_.after {
                let group = &self.groups[g];
                self.wait_for(
                    c,
                    &mut groups,
                    first.edges.len(),
                    &group.prefix,
                    after,
                    &group.tasks,
                );
            }
        }
        let (tasks_unresolved, tasks_references) = (c.unresolved.len(), c.symbols.references.len());
        let edges = self.tasks_structure(c, first, fields);
        if self.keep_tasks && c.record_references {
            c.reuse.task_refs = Some(tasks_references..c.symbols.references.len());
        }
        if self.keep_tasks && c.record_references {
            c.trace = Some(Trace {
                unresolved: c.unresolved.clone(),
                tasks_unresolved,
                task_references: tasks_references..c.symbols.references.len(),
                unknown: 0..0,
                texts_references: 0..0,
                searches: (0, 0),
                graph: 0..0,
                edges: Vec::new(),
                groups: Vec::new(),
            });
        }
        let (unknown_from, budget) = (c.diagnostics.len(), c.suggestions.left());
        self.report_unresolved(c);
        if let Some(trace) = c.trace.as_mut().filter(|_| self.keep_tasks) {
            trace.unknown = unknown_from..c.diagnostics.len();
            trace.searches = (budget, c.suggestions.left());
        }
        (ir_steps, edges, groups)
    }

    /// Resolves every reference, interpolates every string, checks the graph
    /// and returns the steps of the IR and, when they are kept, its tasks.
    pub(in crate::check) fn finish(
        mut self,
        c: &mut Checker,
        params: &mut Option<&mut Params<'a>>,
    ) -> Lowered {
        let (mut titles, mut fields) = (RefRuns::default(), RefRuns::default());
        let (ir_steps, edges, groups) =
            self.resolve_structure(c, params, (&mut titles, &mut fields));

        // The graph checks and the strings of the tasks need nothing of
        // each other: on a large plan they run side by side.
        let Lowering {
            decls,
            keep_tasks,
            tasks,
            steps,
            envs,
            groups: instances,
            used_templates,
            mut used_template_params,
            ..
        } = self;
        let graph = graph::DepGraph {
            nodes: tasks.iter().map(|t| graph::Node { name: &t.key }).collect(),
            edges,
            groups,
        };
        // The plan's graph (its tasks kept) may reuse the last check's.
        let previous = c.previous.graph.clone().filter(|_| keep_tasks);
        let check_graph = || check_graph(&graph, keep_tasks, previous.as_deref());
        let mut text = |c: &mut Checker, env: Env, s: &ast::Str| {
            interpolate(c, decls, &envs, &mut used_template_params, params, env, s)
        };
        let texts_from = c.symbols.references.len();
        let mut runs = RefRuns::default();
        let mut texts = |c: &mut Checker| task_texts(c, &tasks, keep_tasks, &mut text, &mut runs);
        let ((graph_diagnostics, dependencies, memo), ir_tasks) = if side_by_side(tasks.len()) {
            std::thread::scope(|scope| {
                let graph = scope.spawn(check_graph);
                let ir_tasks = texts(c);
                let report = graph
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                (report, ir_tasks)
            })
        } else {
            (check_graph(), texts(c))
        };
        let graph_from = c.diagnostics.len();
        c.diagnostics.extend(graph_diagnostics);
        if keep_tasks {
            c.reuse.graph = memo.map(std::sync::Arc::new);
            let refs = super::instances::InstanceRefs {
                titles: &titles,
                fields: &fields,
                texts: &runs,
            };
            let instances = super::instances::instances(decls, &envs, &instances, &steps, refs);
            c.reuse.instances = Some(std::sync::Arc::new(instances));
            let texts_to = c.symbols.references.len();
            if let Some(trace) = c.trace.as_mut() {
                trace.texts_references = texts_from..texts_to;
                trace.graph = graph_from..c.diagnostics.len();
                trace.edges = graph.edges;
                trace.groups = graph.groups;
            }
        }
        Lowered {
            steps: ir_steps,
            tasks: ir_tasks,
            dependencies,
            task_count: tasks.len(),
            used_templates,
            used_template_params,
        }
    }
}

/// Interpolates the strings of every task, which checks them; builds the
/// IR tasks only when they are kept (a string not kept is dropped at once,
/// so its memory is used again for the next). `text` interpolates a string
/// in its task's environment. Each task is made in its `Arc` at once: a
/// list of the tasks themselves would be made and freed (or, collected into
/// the `Arc`s' list, kept) after. A task's assignee is a string of its own
/// (the last in its one allocation); its step is the plan's
/// ([`ir::Plan::step_of`]).
fn task_texts(
    c: &mut Checker,
    tasks: &[TaskSource<'_>],
    keep_tasks: bool,
    text: &mut dyn FnMut(&mut Checker, Env, &ast::Str) -> String,
    runs: &mut RefRuns,
) -> Vec<std::sync::Arc<ir::Task>> {
    let mut ir_tasks = Vec::with_capacity(if keep_tasks { tasks.len() } else { 0 });
    for source in tasks {
        let fields = TaskFields::of(source.task);
        c.file = source.file;
        let from = c.symbols.references.len();
        let reasoning = fields.reasoning.map(|s| text(c, source.env, s));
        let description = fields.description.map(|s| text(c, source.env, s));
        let name = text(c, source.env, &source.task.title);
        runs.note(source.env, from, c.symbols.references.len());
        if !keep_tasks {
            continue;
        }
        let said = (reasoning.as_deref(), description.as_deref());
        let assignee = fields.assignee.map(|role| role.as_str());
        let mut task = ir::Task::assigned(&source.key, &name, said.0, said.1, assignee);
        fields.give(&mut task);
        ir_tasks.push(std::sync::Arc::new(task));
    }
    ir_tasks
}

/// The graph's diagnostics and, when the tasks are kept, each task's
/// dependencies (task ids) and what the next check may reuse.
fn check_graph(
    graph: &graph::DepGraph<'_>,
    keep_tasks: bool,
    previous: Option<&graph::Memo>,
) -> (Vec<Diagnostic>, ir::Dependencies, Option<graph::Memo>) {
    let wanted = if keep_tasks {
        graph::Wanted::Dependencies
    } else {
        graph::Wanted::Diagnostics
    };
    let report = graph::check_reusing(graph, wanted, previous);
    if !keep_tasks {
        return (report.diagnostics, ir::Dependencies::default(), None);
    }
    let dependencies = report
        .dependencies
        .iter()
        .map(|deps| deps.iter().map(|&d| d as TaskId + 1))
        .collect();
    (report.diagnostics, dependencies, report.memo)
}

/// What a task's fields say, before its strings are interpolated: the
/// first field of each kind counts (a second one is reported by
/// `structure`).
#[derive(Default)]
pub(in crate::check) struct TaskFields<'a> {
    pub(in crate::check) assignee: Option<&'a SmolStr>,
    pub(in crate::check) reasoning: Option<&'a ast::Str>,
    pub(in crate::check) description: Option<&'a ast::Str>,
    pub(in crate::check) retry: Option<u16>,
    pub(in crate::check) optional: bool,
    pub(in crate::check) priority: Option<ir::Priority>,
}

impl<'a> TaskFields<'a> {
    pub(in crate::check) fn of(task: &'a ast::Task) -> TaskFields<'a> {
        let mut fields = TaskFields::default();
        let mut seen = [false; 7];
        for field in &task.fields {
            if std::mem::replace(&mut seen[field_kind(field)], true) {
                continue;
            }
            match field {
                ast::TaskField::Assignee(a) => fields.assignee = Some(a.name()),
                ast::TaskField::Reasoning(f) => fields.reasoning = Some(&f.value),
                ast::TaskField::Description(f) => fields.description = Some(&f.value),
                ast::TaskField::Retry(f) => fields.retry = retry_count(f),
                ast::TaskField::Optional(_) => fields.optional = true,
                ast::TaskField::Priority { level, .. } => {
                    fields.priority = ir::Priority::from_name(&level.name);
                }
                ast::TaskField::After(_) => {}
            }
        }
        fields
    }

    /// Gives `task` what these fields say of it besides its strings and
    /// its assignee: `optional`, `retry` and `priority`.
    pub(in crate::check) fn give(&self, task: &mut ir::Task) {
        task.optional = self.optional;
        task.set_retry(self.retry);
        task.priority = self.priority;
    }
}

/// The value of `retry`, when it is a number from 0 to 1000.
fn retry_count(field: &ast::IntField) -> Option<u16> {
    field
        .value
        .value
        .filter(|value| (0..=1000).contains(value))
        .map(|value| value as u16)
}

/// A string with the parameter values of `env`.
pub(super) fn interpolate(
    c: &mut Checker,
    decls: &Declarations<'_>,
    envs: &[TemplateEnv],
    used_template_params: &mut [Vec<bool>],
    params: &mut Option<&mut Params<'_>>,
    env: Env,
    s: &ast::Str,
) -> String {
    match env {
        Env::Plan => match params.as_deref_mut() {
            Some(p) => p.interpolate(c, s),
            None => s.template_text(),
        },
        Env::Instance(i) => envs[i as usize].interpolate(c, decls, used_template_params, s),
    }
}

/// A task field's kind as an index, to find a field given twice without a list.
fn field_kind(field: &ast::TaskField) -> usize {
    match field {
        ast::TaskField::After(_) => 0,
        ast::TaskField::Assignee(_) => 1,
        ast::TaskField::Reasoning(_) => 2,
        ast::TaskField::Description(_) => 3,
        ast::TaskField::Retry(_) => 4,
        ast::TaskField::Optional(_) => 5,
        ast::TaskField::Priority { .. } => 6,
    }
}

/// `retry` out of range.
fn check_retry(c: &mut Checker, f: &ast::IntField) {
    if let Some(value) = f.value.value {
        if retry_count(f).is_none() {
            c.diagnostics.push(
                Diagnostic::new(
                    Code::InvalidValue,
                    format!("`retry` takes a number from 0 to 1000, not {value}"),
                )
                .label(c.file, f.value.span, "out of range"),
            );
        }
    }
}

/// A `priority` that is not one of the levels.
fn check_priority(c: &mut Checker, level: &ast::Ident) {
    if ir::Priority::from_name(&level.name).is_some() {
        return;
    }
    let mut diagnostic = Diagnostic::new(
        Code::InvalidValue,
        format!(
            "`priority` is `critical`, `high`, `medium` or `low`, not `{}`",
            level.name
        ),
    )
    .label(c.file, level.span, "unknown priority");
    if let Some(best) = crate::suggest::closest(&level.name, ir::Priority::NAMES) {
        diagnostic = diagnostic
            .help(format!("did you mean `{best}`?"))
            .fix(c.file, level.span, best);
    }
    c.diagnostics.push(diagnostic);
}

/// The warning for a name an `after` gives a second time.
fn named_again(c: &Checker, task: &str, reference: &ast::Ident) -> Diagnostic {
    Diagnostic::new(
        Code::RedundantDependency,
        format!("`{task}` names `{}` twice", reference.name),
    )
    .label(c.file, reference.span, "named again here")
    .help(format!("remove this `{}`", reference.name))
}

#[cfg(test)]
mod tests {
    use super::{empty_for, Member};

    /// After a long `after`, the set is not carried at its size into the
    /// short ones that follow (emptying it would cost that size each time).
    #[test]
    fn a_long_after_does_not_make_every_later_one_pay_for_it() {
        let mut named = rustc_hash::FxHashSet::default();
        named.extend((0..100_000).map(Member::Task));
        empty_for(&mut named, 1);
        assert!(named.is_empty());
        assert!(named.capacity() <= 2 + 64, "{}", named.capacity());
        named.extend((0..50).map(Member::Task));
        let capacity = named.capacity();
        empty_for(&mut named, 50);
        assert!(named.is_empty());
        assert_eq!(
            named.capacity(),
            capacity,
            "a set of the right size is kept"
        );
    }
}
