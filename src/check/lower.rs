//! Lowers a plan (or a template checked on its own) to IR: template
//! instances are expanded in place, every task and step gets its full name
//! (`PREFIX.task` inside an instance), references are resolved, strings
//! interpolated, and the dependency graph is built and checked.

use super::declare::Declarations;
use super::graph;
use super::params::Params;
use super::scope::{Namespace, Scope};
use super::template::TemplateEnv;
use super::Checker;
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{self, SymbolKind};
use crate::span::{FileId, Span};
use crate::syntax::ast::{self, SmolStr};
use crate::syntax::{BYTES_PER_EXPANSION, EXPANSION_BASE, MAX_EXPANSION, MAX_TASKS};
use finish::interpolate;

/// From this many tasks on, the graph is checked on a second thread while
/// the strings are interpolated.
const PARALLEL_TASKS: usize = 4096;

#[cfg(test)]
thread_local! {
    /// Set by tests to check a large plan on one thread, for comparison.
    static ONE_THREAD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether to check the graph on a second thread.
pub(super) fn side_by_side(tasks: usize) -> bool {
    #[cfg(test)]
    if ONE_THREAD.get() {
        return false;
    }
    tasks >= PARALLEL_TASKS && crate::cores::two_cores()
}

/// How deep templates may use templates.
const MAX_TEMPLATE_DEPTH: usize = 16;

/// Where a piece of the plan takes its parameter values from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Env {
    Plan,
    /// The template instance with this index in `Lowering::envs`.
    Instance(u32),
}

/// A task of the expansion (one per task of a large plan: kept small).
struct TaskSource<'a> {
    task: &'a ast::Task,
    file: FileId,
    key: SmolStr,
    /// Where its names are resolved and its strings take their values from.
    env: Env,
}

struct StepSource<'a> {
    step: &'a ast::Step,
    file: FileId,
    key: SmolStr,
    env: Env,
    tasks: Vec<usize>,
}

/// A template instance: `use T(…) as key`.
struct GroupSource<'a> {
    use_: &'a ast::Use,
    file: FileId,
    /// The prefix of the scope the `use` stands in.
    prefix: SmolStr,
    tasks: Vec<usize>,
}

/// What a task-or-step name stands for.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(in crate::check) enum Member {
    Task(usize),
    Step(usize),
    Group(usize),
}

/// A name a task or step field gives that names nothing (yet to be
/// reported).
#[derive(Clone, Debug)]
pub(super) struct Unresolved {
    pub file: FileId,
    pub name: ast::Ident,
    pub kind: Unknown,
}

/// What an [`Unresolved`] name was meant to name.
#[derive(Clone, Debug)]
pub(super) enum Unknown {
    /// A task, step or instance, looked up under `prefix`.
    TaskOrStep { prefix: SmolStr },
    /// A role (an `assignee`).
    Role,
}

/// What a lowering produced.
pub(super) struct Lowered {
    pub steps: Vec<ir::Step>,
    /// Empty when the tasks are not kept.
    pub tasks: Vec<std::sync::Arc<ir::Task>>,
    /// What each task waits for (empty when the tasks are not kept).
    pub dependencies: ir::Dependencies,
    pub task_count: usize,
    /// Templates instantiated (so the unused ones are checked on their own).
    pub used_templates: Vec<bool>,
    /// Per template, per parameter: interpolated somewhere.
    pub used_template_params: Vec<Vec<bool>>,
}

/// One lowering: a plan, or a template on its own.
pub(super) struct Lowering<'a, 'd> {
    decls: &'d Declarations<'a>,
    /// Whether the IR tasks are built, or only checked.
    keep_tasks: bool,
    tasks: Vec<TaskSource<'a>>,
    steps: Vec<StepSource<'a>>,
    groups: Vec<GroupSource<'a>>,
    envs: Vec<TemplateEnv>,
    /// The prefix of the names of each template instance in `envs`
    /// (`"p."` in instance `p`); the plan's names have none.
    prefixes: Vec<SmolStr>,
    /// The task, step and instance names, each with what it stands for.
    names: Scope<Member>,
    stack: Vec<usize>,
    used_templates: Vec<bool>,
    used_template_params: Vec<Vec<bool>>,
    /// Templates [`leave_unexpanded`](Self::leave_unexpanded) marked.
    left_unexpanded: Vec<bool>,
}

impl<'a, 'd> Lowering<'a, 'd> {
    /// A lowering that builds the IR tasks only when `keep_tasks` is set;
    /// it reports the same either way.
    pub(super) fn new(decls: &'d Declarations<'a>, keep_tasks: bool) -> Lowering<'a, 'd> {
        Lowering {
            decls,
            keep_tasks,
            tasks: Vec::new(),
            steps: Vec::new(),
            groups: Vec::new(),
            envs: Vec::new(),
            prefixes: Vec::new(),
            names: Scope::with_values(Namespace::TasksAndSteps),
            stack: Vec::new(),
            used_templates: vec![false; decls.templates.len()],
            left_unexpanded: vec![false; decls.templates.len()],
            used_template_params: decls
                .templates
                .iter()
                .map(|t| vec![false; t.params.len()])
                .collect(),
        }
    }

    /// Makes room for `steps` steps and `tasks` tasks.
    pub(super) fn reserve(&mut self, steps: usize, tasks: usize) {
        self.tasks.reserve(tasks);
        self.steps.reserve(steps);
        self.names.reserve(steps + tasks);
    }

    /// The prefix of the names declared in `env`.
    fn prefix(&self, env: Env) -> &str {
        match env {
            Env::Plan => "",
            Env::Instance(i) => &self.prefixes[i as usize],
        }
    }

    /// Expands the items of a plan or template body, in source order.
    pub(super) fn expand(
        &mut self,
        c: &mut Checker,
        params: &mut Option<&mut Params<'a>>,
        items: &'a ast::Items,
        file: FileId,
        prefix: &str,
        env: Env,
    ) {
        for item in items {
            c.file = file;
            match item {
                ast::PlanItem::Step(step) => {
                    let index = self.steps.len();
                    let key = qualified(prefix, &step.name.name);
                    let member = Member::Step(index);
                    self.declare(c, SymbolKind::Step, &key, &step.name, step.span, member);
                    self.steps.push(StepSource {
                        step,
                        file,
                        key,
                        env,
                        tasks: Vec::with_capacity(step.items.len()),
                    });
                    for item in &step.items {
                        if let ast::StepItem::Task(task) = item {
                            let t = self.task(c, task, file, prefix, env);
                            self.steps[index].tasks.push(t);
                        }
                    }
                }
                ast::PlanItem::Task(task) => {
                    self.task(c, task, file, prefix, env);
                }
                ast::PlanItem::Use(use_) => self.instantiate(c, params, use_, file, prefix, env),
                _ => {}
            }
        }
    }

    /// Defines `key` and declares it as standing for `member`.
    fn declare(
        &mut self,
        c: &mut Checker,
        kind: SymbolKind,
        key: &SmolStr,
        name: &ast::Ident,
        full_span: Span,
        member: Member,
    ) {
        let definition = ir::Definition::new(kind, key, c.file, name.span, full_span);
        c.symbols.definitions.push(definition);
        let def = c.symbols.definitions.len() - 1;
        self.names
            .declare_value(c, key, name.span, def, kind.as_str(), member);
        if !self.stack.is_empty() {
            c.expanded += 1;
        }
    }

    fn task(
        &mut self,
        c: &mut Checker,
        task: &'a ast::Task,
        file: FileId,
        prefix: &str,
        env: Env,
    ) -> usize {
        let index = self.tasks.len();
        if index == MAX_TASKS {
            c.diagnostics.push(
                Diagnostic::new(
                    Code::Limit,
                    format!("the plan has more than {MAX_TASKS} tasks"),
                )
                .label(file, task.name.span, "one task too many")
                .help("split the work into several plans; templates used inside templates multiply quickly"),
            );
        }
        let key = qualified(prefix, &task.name.name);
        let member = Member::Task(index);
        self.declare(c, SymbolKind::Task, &key, &task.name, task.span, member);
        self.tasks.push(TaskSource {
            task,
            file,
            key,
            env,
        });
        index
    }

    fn instantiate(
        &mut self,
        c: &mut Checker,
        params: &mut Option<&mut Params<'a>>,
        use_: &'a ast::Use,
        file: FileId,
        prefix: &str,
        env: Env,
    ) {
        let Some(template) = self.decls.template_named(&use_.template.name) else {
            self.unknown_template(c, use_, file);
            return;
        };
        let decl = &self.decls.templates[template];
        c.reference(decl.def, use_.template.span);
        if self.refuses_nesting(c, template, use_, file) {
            return;
        }
        self.used_templates[template] = true;

        let env_index = self.envs.len();
        let bound = {
            let envs = &self.envs;
            let used = &mut self.used_template_params;
            let decls = self.decls;
            let mut outer = |c: &mut Checker, s: &ast::Str| -> String {
                match env {
                    Env::Plan => match params.as_deref_mut() {
                        Some(p) => p.interpolate(c, s),
                        None => s.template_text(),
                    },
                    Env::Instance(i) => envs[i as usize].interpolate(c, decls, used, s),
                }
            };
            TemplateEnv::bind(c, self.decls, template, use_, &mut outer)
        };
        let key = qualified(prefix, &use_.prefix.name);
        let inner = SmolStr::from(format!("{key}."));
        self.envs.push(bound);
        self.prefixes.push(inner.clone());

        let group = self.groups.len();
        let member = Member::Group(group);
        self.declare(
            c,
            SymbolKind::Instance,
            &key,
            &use_.prefix,
            use_.span,
            member,
        );
        self.groups.push(GroupSource {
            use_,
            file,
            prefix: SmolStr::new(prefix),
            tasks: Vec::new(),
        });
        let first = self.tasks.len();
        if first > MAX_TASKS {
            // The limit was reported; expanding further would only use memory.
            return;
        }
        if self.over_expansion_limit(c, template, use_, file) {
            self.leave_unexpanded(template);
            return;
        }
        self.stack.push(template);
        let decl = &self.decls.templates[template];
        self.expand(
            c,
            params,
            &decl.ast.items,
            decl.file,
            &inner,
            Env::Instance(env_index as u32),
        );
        self.stack.pop();
        self.groups[group].tasks = (first..self.tasks.len()).collect();
    }

    /// Reports a `use` of a template that does not exist (unless a syntax
    /// error may hide it), with the closest name.
    fn unknown_template(&self, c: &mut Checker, use_: &ast::Use, file: FileId) {
        if c.unparsed.may_name(&use_.template.name) {
            return;
        }
        let mut diagnostic = Diagnostic::new(
            Code::UnknownTemplate,
            format!("no template named `{}`", use_.template.name),
        );
        diagnostic = match self.decls.suggest_template(c, &use_.template.name) {
            Some(best) => diagnostic
                .label(file, use_.template.span, format!("did you mean `{best}`?"))
                .fix(file, use_.template.span, best),
            None => diagnostic.label(file, use_.template.span, "unknown template"),
        };
        c.diagnostics.push(
            diagnostic.help("declare it with `template NAME(…) { … }` here or in an imported file"),
        );
    }

    /// Whether a `use` of `template` here is refused (and reported): too
    /// deep, or inside the template itself.
    fn refuses_nesting(
        &self,
        c: &mut Checker,
        template: usize,
        use_: &ast::Use,
        file: FileId,
    ) -> bool {
        let decl = &self.decls.templates[template];
        if self.stack.len() >= MAX_TEMPLATE_DEPTH {
            c.diagnostics.push(
                Diagnostic::new(
                    Code::Limit,
                    format!("templates nest deeper than {MAX_TEMPLATE_DEPTH} levels"),
                )
                .label(file, use_.template.span, "too deep here")
                .help("a template may use templates, but at most 16 deep; flatten the nesting"),
            );
            return true;
        }
        if self.stack.contains(&template) {
            c.diagnostics.push(
                Diagnostic::new(
                    Code::TemplateCycle,
                    format!("template `{}` uses itself", decl.ast.name.name),
                )
                .label(file, use_.template.span, "used again inside itself")
                .help("a template cannot contain an instance of itself, directly or through other templates"),
            );
            return true;
        }
        false
    }

    /// Whether expanding `template` here would pass the expansion limit
    /// (known before expanding: the sizes of acyclic templates are exact, so
    /// the first `use` that would cross the limit is refused; inside a
    /// template cycle, reported, each nested `use` is checked in turn).
    fn over_expansion_limit(
        &self,
        c: &mut Checker,
        template: usize,
        use_: &ast::Use,
        file: FileId,
    ) -> bool {
        let size = self.decls.templates[template].expansion;
        if c.expanded.saturating_add(size) > c.expansion_limit {
            let name = &self.decls.templates[template].ast.name.name;
            let limit = c.expansion_limit;
            let adds = if size > limit {
                format!("more than {limit}")
            } else {
                size.to_string()
            };
            c.diagnostics.push(
                Diagnostic::new(
                    Code::Limit,
                    format!(
                        "template instances would add more than {limit} tasks, steps and instances"
                    ),
                )
                .label(
                    file,
                    use_.template.span,
                    format!("`{name}` adds {adds} here"),
                )
                .help(format!(
                    "each `use` repeats every task of its template, and of the templates it uses; \
                     planc expands at most {EXPANSION_BASE} tasks, steps and instances plus \
                     one per {BYTES_PER_EXPANSION} bytes of input, and never more than {MAX_EXPANSION}: \
                     use fewer or smaller templates"
                )),
            );
            return true;
        }
        false
    }

    /// Marks a template refused at the expansion limit, and every template
    /// it uses, as used, their parameters too: they are not checked on their
    /// own (that would expand them after all) nor reported unused.
    fn leave_unexpanded(&mut self, template: usize) {
        let mut stack = vec![template];
        while let Some(t) = stack.pop() {
            if std::mem::replace(&mut self.left_unexpanded[t], true) {
                continue;
            }
            self.used_templates[t] = true;
            self.used_template_params[t].fill(true);
            for item in &self.decls.templates[t].ast.items {
                if let ast::PlanItem::Use(u) = item {
                    if let Some(child) = self.decls.template_named(&u.template.name) {
                        stack.push(child);
                    }
                }
            }
        }
    }

    /// Expands a template with no arguments, to check it on its own.
    pub(super) fn expand_unbound(&mut self, c: &mut Checker, template: usize) {
        let decl = &self.decls.templates[template];
        self.used_templates[template] = true;
        let env = self.envs.len();
        self.envs.push(TemplateEnv::unbound(self.decls, template));
        let prefix = format!("{}.", decl.ast.name.name);
        self.prefixes.push(SmolStr::from(prefix.as_str()));
        self.stack.push(template);
        self.expand(
            c,
            &mut None,
            &decl.ast.items,
            decl.file,
            &prefix,
            Env::Instance(env as u32),
        );
        self.stack.pop();
    }

    fn interpolate(
        &mut self,
        c: &mut Checker,
        params: &mut Option<&mut Params<'a>>,
        env: Env,
        s: &ast::Str,
    ) -> String {
        interpolate(
            c,
            self.decls,
            &self.envs,
            &mut self.used_template_params,
            params,
            env,
            s,
        )
    }

    /// The tasks a name stands for.
    fn tasks_of<'m>(&'m self, member: &'m Member) -> &'m [usize] {
        match member {
            Member::Task(i) => std::slice::from_ref(i),
            Member::Step(i) => &self.steps[*i].tasks,
            Member::Group(i) => &self.groups[*i].tasks,
        }
    }

    /// Makes every task of `dependents` wait for what `after` names (a step's
    /// or an instance's `after`): one group of edges per reference, which
    /// comes after the first `edges` single edges.
    fn wait_for(
        &self,
        c: &mut Checker,
        groups: &mut Vec<graph::GroupEdge>,
        edges: usize,
        prefix: &str,
        after: &ast::After,
        dependents: &[usize],
    ) {
        for reference in &after.refs {
            let Some(member) = self.resolve(c, prefix, reference) else {
                continue;
            };
            let dependencies = self.tasks_of(&member);
            // Each pair is a dependency the plan lists: bounded, before any
            // is made (a refused `after` makes none).
            let pairs = pairs(dependents.len(), dependencies.len());
            if c.group_pairs.saturating_add(pairs) > c.group_pair_limit {
                if c.group_pairs <= c.group_pair_limit {
                    c.group_pairs = u64::MAX;
                    c.diagnostics.push(too_many_pairs(
                        c,
                        reference,
                        dependents.len(),
                        dependencies.len(),
                    ));
                }
                continue;
            }
            c.group_pairs += pairs;
            groups.push(graph::GroupEdge {
                dependents: dependents.to_vec(),
                dependencies: dependencies.to_vec(),
                file: c.file,
                span: reference.span,
                after_edges: edges,
            });
        }
    }

    /// Resolves an `after` reference under `prefix`; one that names nothing
    /// is kept for [`report_unresolved`](Self::report_unresolved).
    fn resolve(&self, c: &mut Checker, prefix: &str, reference: &ast::Ident) -> Option<Member> {
        let found = if prefix.is_empty() {
            self.names.find(&reference.name)
        } else {
            self.names.find(&qualified(prefix, &reference.name))
        };
        if let Some((def, member)) = found {
            c.reference(def, reference.span);
            return Some(member);
        }
        c.unresolved.push(Unresolved {
            file: c.file,
            name: reference.clone(),
            kind: Unknown::TaskOrStep {
                prefix: SmolStr::new(prefix),
            },
        });
        None
    }

    /// Reports the names that could not be resolved, in the order they were
    /// met (so the "did you mean" searches are made in that order, however
    /// many threads met them), leaving out those unparsed text may declare.
    fn report_unresolved(&self, c: &mut Checker) {
        for Unresolved { file, name, kind } in std::mem::take(&mut c.unresolved) {
            if c.unparsed.may_name(&name.name) || !c.first_unknown(file, name.span) {
                continue;
            }
            let (diagnostic, suggestion, help) = match &kind {
                Unknown::TaskOrStep { prefix } => {
                    let names = self.names.names();
                    let diagnostic =
                        unknown_task_or_step(&mut c.suggestions, file, &name, prefix, names);
                    c.diagnostics.push(diagnostic);
                    continue;
                }
                Unknown::Role => {
                    let roles = self.decls.roles.names().map(Some);
                    let suggestion = c.suggestions.closest_among(&name.name, roles);
                    if let Some(best) = suggestion {
                        c.suggested_roles.push(best.to_owned());
                    }
                    (
                        Diagnostic::new(
                            Code::UnknownRole,
                            format!("no role named `{}`", name.name),
                        ),
                        suggestion,
                        format!(
                            "declare it in the plan: `role {} \"what this role does\"`",
                            name.name
                        ),
                    )
                }
            };
            let diagnostic = match suggestion {
                Some(best) => diagnostic
                    .label(file, name.span, format!("did you mean `{best}`?"))
                    .fix(file, name.span, best),
                None => diagnostic.label(file, name.span, "unknown role"),
            };
            c.diagnostics.push(diagnostic.help(help));
        }
    }

    /// Whether no task came out of the expansion.
    pub(super) fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }
}

/// The diagnostic of an `after` naming no task, step or instance, looked up
/// under `prefix`; `names` are those of the plan's tasks, steps and
/// instances in the order they were declared, among which a "did you mean"
/// is searched within `budget`.
pub(super) fn unknown_task_or_step<'n>(
    budget: &mut crate::suggest::Budget,
    file: FileId,
    name: &ast::Ident,
    prefix: &str,
    names: impl Iterator<Item = &'n str>,
) -> Diagnostic {
    // Every name is looked at, those of other scopes too: the search's
    // budget counts them. (Outside templates every name is local: no
    // comparison of an empty prefix per name.)
    let local = names.map(|n| match prefix.is_empty() {
        true => Some(n),
        false => n.strip_prefix(prefix),
    });
    let best = budget.closest_among(&name.name, local);
    unknown_ref(file, name, prefix, best)
}

/// The diagnostic of an `after` naming no task, step or instance, looked up
/// under `prefix`, with the "did you mean" found for it (`best`).
pub(super) fn unknown_ref(
    file: FileId,
    name: &ast::Ident,
    prefix: &str,
    best: Option<&str>,
) -> Diagnostic {
    let help = if prefix.is_empty() {
        "`after` names a task, a step (all of its tasks) or a template instance (all of its tasks)"
    } else {
        "inside a template, `after` names the template's own tasks and steps"
    };
    let diagnostic = Diagnostic::new(
        Code::UnknownRef,
        format!("no task or step named `{}`", name.name),
    );
    let diagnostic = match best {
        Some(best) => diagnostic
            .label(file, name.span, format!("did you mean `{best}`?"))
            .fix(file, name.span, best),
        None => diagnostic.label(file, name.span, "unknown task or step"),
    };
    diagnostic.help(help)
}

/// `prefix` and `name` joined: a name's key inside a template instance.
fn qualified(prefix: &str, name: &SmolStr) -> SmolStr {
    if prefix.is_empty() {
        return name.clone();
    }
    let mut key = String::with_capacity(prefix.len() + name.len());
    key.push_str(prefix);
    key.push_str(name);
    SmolStr::from(key)
}

pub(super) mod finish;
pub(super) mod instances;
#[cfg(test)]
mod tests;

/// What an `after` making each of `dependents` wait for each of
/// `dependencies` counts towards [`crate::syntax::dependency_pair_limit`]:
/// the pairs, and the lists that hold them.
fn pairs(dependents: usize, dependencies: usize) -> u64 {
    (dependents as u64)
        .saturating_mul(dependencies as u64)
        .saturating_add((dependents + dependencies) as u64)
}

/// The error for the first `after` of a step or an instance that would take
/// the check past [`crate::syntax::dependency_pair_limit`].
fn too_many_pairs(
    c: &Checker,
    reference: &ast::Ident,
    dependents: usize,
    dependencies: usize,
) -> Diagnostic {
    let limit = c.group_pair_limit;
    Diagnostic::new(
        Code::Limit,
        format!(
            "`after {}` would make {dependents} × {dependencies} task-to-task dependencies; \
             planc allows at most {limit} from steps and instances in one check",
            reference.name
        ),
    )
    .label(
        c.file,
        reference.span,
        if dependents == 1 {
            format!("this task would wait for each of {dependencies}")
        } else {
            format!("each of {dependents} tasks would wait for each of {dependencies}")
        },
    )
    .help(
        "a plan lists every dependency of every task; make one task of the step wait \
         (e.g. a first task the others come after), or split the plan",
    )
}
