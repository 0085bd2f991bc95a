//! Syntax tree → checked IR: names, references, parameters, the dependency
//! graph. Reports every problem it finds in one pass.

pub mod graph;
mod params;
mod scope;

use rustc_hash::FxHashMap as HashMap;

use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{self, SymbolKind, Symbols, TaskId};
use crate::span::{FileId, Span};
use crate::suggest;
use crate::syntax::ast;

pub use params::parse_assignment;
use params::Params;
use scope::{Namespace, Scope};

/// What a check is asked to do besides checking.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// `--set NAME=VALUE` assignments, in the order given.
    pub params: Vec<(String, String)>,
    /// Report parameters that have neither a default nor a `--set` value
    /// (building an instance, not checking a template).
    pub require_params: bool,
}

/// The outcome of checking one file.
#[derive(Clone, Debug, Default)]
pub struct Checked {
    /// The plan, built as far as the errors allow; `None` for a file without a plan.
    pub plan: Option<ir::Plan>,
    pub diagnostics: Vec<Diagnostic>,
    pub symbols: Symbols,
}

impl Checked {
    /// Whether any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// Checks a parsed file.
pub fn check(file: &ast::File, file_id: FileId, options: &Options) -> Checked {
    let mut checker = Checker {
        file: file_id,
        diagnostics: Vec::new(),
        symbols: Symbols::default(),
    };
    let plans: Vec<&ast::Plan> = file
        .items
        .iter()
        .filter_map(|item| match item {
            ast::TopItem::Plan(plan) => Some(plan),
            _ => None,
        })
        .collect();
    for item in &file.items {
        match item {
            ast::TopItem::Import(import) => checker.unsupported(import.span, "`import`"),
            ast::TopItem::Template(template) => {
                checker.unsupported(template.name.span, "`template`")
            }
            ast::TopItem::Plan(_) | ast::TopItem::Role(_) | ast::TopItem::Param(_) => {}
        }
    }
    for extra in plans.iter().skip(1) {
        checker.diagnostics.push(
            Diagnostic::new(
                Code::MultiplePlans,
                format!("a second plan, `{}`, in one file", extra.name.name),
            )
            .label(file_id, extra.name.span, "second plan")
            .label(file_id, plans[0].name.span, "first plan")
            .help("put each plan in a file of its own; share roles and templates with `import`"),
        );
    }
    let plan = plans.first().map(|plan| checker.plan(plan, options));
    Checked {
        plan,
        diagnostics: checker.diagnostics,
        symbols: checker.symbols,
    }
}

struct Checker {
    file: FileId,
    diagnostics: Vec<Diagnostic>,
    symbols: Symbols,
}

/// A task being lowered, with where it came from.
struct TaskSource<'a> {
    task: &'a ast::Task,
    step: Option<usize>,
}

/// A step being lowered.
struct StepSource<'a> {
    step: &'a ast::Step,
    tasks: Vec<usize>,
}

impl Checker {
    fn unsupported(&mut self, span: Span, what: &str) {
        self.diagnostics.push(
            Diagnostic::new(
                Code::Syntax,
                format!("{what} is not supported by this version of planc"),
            )
            .label(self.file, span, "not supported yet"),
        );
    }

    fn define(&mut self, kind: SymbolKind, name: &ast::Ident, full_span: Span) -> usize {
        self.symbols.definitions.push(ir::Definition {
            kind,
            name: name.name.clone(),
            file: self.file,
            span: name.span,
            full_span,
        });
        self.symbols.definitions.len() - 1
    }

    fn reference(&mut self, definition: usize, span: Span) {
        self.symbols.references.push(ir::Reference {
            definition,
            file: self.file,
            span,
        });
    }

    fn plan(&mut self, plan: &ast::Plan, options: &Options) -> ir::Plan {
        self.define(SymbolKind::Plan, &plan.name, plan.span);
        let mut fields = PlanFields::default();
        let mut param_decls = Vec::new();
        let mut roles: Vec<&ast::Role> = Vec::new();
        let mut steps: Vec<StepSource> = Vec::new();
        let mut tasks: Vec<TaskSource> = Vec::new();

        for item in &plan.items {
            match item {
                ast::PlanItem::Title(f) => self.once(&mut fields.title, f, "title"),
                ast::PlanItem::Goal(f) => self.once(&mut fields.goal, f, "goal"),
                ast::PlanItem::Language(f) => self.once(&mut fields.language, f, "language"),
                ast::PlanItem::MaxIterations(f) => {
                    if let Some(first) = fields.max_iterations {
                        self.duplicate_field("max_iterations", first.keyword, f.keyword);
                    } else {
                        fields.max_iterations = Some(f);
                    }
                }
                ast::PlanItem::Param(p) => param_decls.push(p),
                ast::PlanItem::Role(r) => roles.push(r),
                ast::PlanItem::Step(step) => {
                    let index = steps.len();
                    let mut step_tasks = Vec::new();
                    for item in &step.items {
                        if let ast::StepItem::Task(task) = item {
                            step_tasks.push(tasks.len());
                            tasks.push(TaskSource {
                                task,
                                step: Some(index),
                            });
                        }
                    }
                    steps.push(StepSource {
                        step,
                        tasks: step_tasks,
                    });
                }
                ast::PlanItem::Task(task) => tasks.push(TaskSource { task, step: None }),
                ast::PlanItem::Use(u) => self.unsupported(u.span, "`use`"),
            }
        }

        // Declarations first, so every reference can be resolved.
        let mut params = Params::declare(self, &param_decls, options);
        let mut role_scope = Scope::new(Namespace::Roles);
        let mut role_defs = Vec::new();
        for role in &roles {
            let def = self.define(SymbolKind::Role, &role.name, role.span);
            role_defs.push(def);
            role_scope.declare(self, &role.name, def, "role");
        }
        let mut names = Scope::new(Namespace::TasksAndSteps);
        // Declare in source order, steps and tasks interleaved as written.
        let mut step_defs = vec![0; steps.len()];
        let mut task_defs = vec![0; tasks.len()];
        let mut order: Vec<(Span, bool, usize)> = steps
            .iter()
            .enumerate()
            .map(|(i, s)| (s.step.span, true, i))
            .chain(
                tasks
                    .iter()
                    .enumerate()
                    .map(|(i, t)| (t.task.span, false, i)),
            )
            .collect();
        order.sort_by_key(|&(span, _, _)| span.start);
        for (_, is_step, i) in order {
            if is_step {
                let step = steps[i].step;
                let def = self.define(SymbolKind::Step, &step.name, step.span);
                step_defs[i] = def;
                names.declare(self, &step.name, def, "step");
            } else {
                let task = tasks[i].task;
                let def = self.define(SymbolKind::Task, &task.name, task.span);
                task_defs[i] = def;
                names.declare(self, &task.name, def, "task");
            }
        }
        // What a name stands for: a task is itself, a step is all of its tasks.
        let mut members: HashMap<usize, Member> =
            HashMap::with_capacity_and_hasher(tasks.len() + steps.len(), Default::default());
        for (i, def) in task_defs.iter().enumerate() {
            members.insert(*def, Member::Task(i));
        }
        for (i, def) in step_defs.iter().enumerate() {
            members.insert(*def, Member::Step(i));
        }
        let task_index: Vec<usize> = (0..tasks.len()).collect();
        let tasks_of = |member: Member| -> &[usize] {
            match member {
                Member::Task(i) => std::slice::from_ref(&task_index[i]),
                Member::Step(i) => &steps[i].tasks,
            }
        };

        let mut graph = graph::DepGraph {
            nodes: tasks
                .iter()
                .map(|t| graph::Node {
                    name: t.task.name.name.clone(),
                })
                .collect(),
            edges: Vec::new(),
        };

        // Plan-level strings.
        let title = fields.title.map(|f| params.interpolate(self, &f.value));
        let goal = fields.goal.map(|f| params.interpolate(self, &f.value));
        let language = fields.language.map(|f| params.interpolate(self, &f.value));
        if goal.is_none() {
            self.diagnostics.push(
                Diagnostic::new(
                    Code::MissingGoal,
                    format!("plan `{}` has no goal", plan.name.name),
                )
                .label(self.file, plan.name.span, "this plan needs a `goal`")
                .help("say what the plan achieves, e.g. `goal \"Publish the weekly report\"`; agents read it to stay on course"),
            );
        }
        let max_iterations = fields.max_iterations.and_then(|f| {
            let value = f.value.value?;
            if value < 1 {
                self.diagnostics.push(
                    Diagnostic::new(
                        Code::InvalidValue,
                        format!("`max_iterations` must be at least 1, not {value}"),
                    )
                    .label(self.file, f.value.span, "must be 1 or more"),
                );
                return None;
            }
            Some(value as u64)
        });

        let ir_roles: Vec<ir::Role> = roles
            .iter()
            .map(|r| ir::Role {
                id: r.name.name.clone(),
                description: r.description.as_ref().map(|d| params.interpolate(self, d)),
            })
            .collect();

        // Steps: their `after` applies to each of their tasks; `sequential`
        // chains their tasks in source order.
        let mut ir_steps = Vec::new();
        for (index, source) in steps.iter().enumerate() {
            let step = source.step;
            let name = match &step.title {
                Some(title) => params.interpolate(self, title),
                None => step.name.name.clone(),
            };
            let mut sequential: Option<Span> = None;
            for item in &step.items {
                match item {
                    ast::StepItem::After(after) => {
                        for reference in &after.refs {
                            let Some(def) = self.resolve_ref(&names, reference) else {
                                continue;
                            };
                            for &dependency in tasks_of(members[&def]) {
                                for &dependent in &source.tasks {
                                    graph.edges.push(graph::Edge {
                                        dependent,
                                        dependency,
                                        file: self.file,
                                        span: reference.span,
                                        direct: false,
                                    });
                                }
                            }
                        }
                    }
                    ast::StepItem::Sequential(span) => {
                        if let Some(first) = sequential {
                            self.duplicate_field("sequential", first, *span);
                        }
                        sequential = Some(*span);
                    }
                    ast::StepItem::Task(_) => {}
                }
            }
            if sequential.is_some() {
                for pair in source.tasks.windows(2) {
                    graph.edges.push(graph::Edge {
                        dependent: pair[1],
                        dependency: pair[0],
                        file: self.file,
                        span: tasks[pair[1]].task.name.span,
                        direct: false,
                    });
                }
            }
            if source.tasks.is_empty() {
                self.diagnostics.push(
                    Diagnostic::new(
                        Code::Empty,
                        format!("step `{}` has no tasks", step.name.name),
                    )
                    .label(self.file, step.name.span, "empty step")
                    .help("add a `task` to it, or remove the step"),
                );
            }
            ir_steps.push(ir::Step {
                id: step.name.name.clone(),
                name,
                tasks: source.tasks.iter().map(|&i| i as TaskId + 1).collect(),
            });
            let _ = index;
        }

        // Tasks.
        let mut suggested_roles: std::collections::HashSet<String> = Default::default();
        let mut ir_tasks = Vec::with_capacity(tasks.len());
        for (index, source) in tasks.iter().enumerate() {
            let task = source.task;
            let mut lowered = TaskFields::default();
            for field in &task.fields {
                let keyword = field.keyword();
                if let Some(first) = lowered.seen.insert(keyword, field.span()) {
                    self.duplicate_field(keyword, first, field.span());
                    continue;
                }
                match field {
                    ast::TaskField::After(after) => {
                        for reference in &after.refs {
                            let Some(def) = self.resolve_ref(&names, reference) else {
                                continue;
                            };
                            let direct = matches!(members[&def], Member::Task(_));
                            for &dependency in tasks_of(members[&def]) {
                                graph.edges.push(graph::Edge {
                                    dependent: index,
                                    dependency,
                                    file: self.file,
                                    span: reference.span,
                                    direct,
                                });
                            }
                        }
                    }
                    ast::TaskField::Assignee { role, .. } => {
                        if let Some(def) = role_scope.lookup(&role.name) {
                            self.reference(def, role.span);
                            lowered.assignee = Some(role.name.clone());
                        } else {
                            let candidates = roles.iter().map(|r| r.name.name.as_str());
                            let suggestion = suggest::closest(&role.name, candidates);
                            // The role meant is in use: no "unused" echo for it.
                            if let Some(best) = suggestion {
                                suggested_roles.insert(best.to_owned());
                            }
                            let mut diagnostic = Diagnostic::new(
                                Code::UnknownRole,
                                format!("no role named `{}`", role.name),
                            );
                            diagnostic = match suggestion {
                                Some(best) => diagnostic
                                    .label(self.file, role.span, format!("did you mean `{best}`?"))
                                    .fix(self.file, role.span, best),
                                None => diagnostic.label(self.file, role.span, "unknown role"),
                            };
                            diagnostic = diagnostic.help(format!(
                                "declare it in the plan: `role {} \"what this role does\"`",
                                role.name
                            ));
                            self.diagnostics.push(diagnostic);
                            lowered.assignee = Some(role.name.clone());
                        }
                    }
                    ast::TaskField::Reasoning(f) => {
                        lowered.reasoning = Some(params.interpolate(self, &f.value))
                    }
                    ast::TaskField::Description(f) => {
                        lowered.description = Some(params.interpolate(self, &f.value))
                    }
                    ast::TaskField::Retry(f) => {
                        if let Some(value) = f.value.value {
                            if (0..=1000).contains(&value) {
                                lowered.retry = value as u32;
                            } else {
                                self.diagnostics.push(
                                    Diagnostic::new(
                                        Code::InvalidValue,
                                        format!(
                                            "`retry` takes a number from 0 to 1000, not {value}"
                                        ),
                                    )
                                    .label(
                                        self.file,
                                        f.value.span,
                                        "out of range",
                                    ),
                                );
                            }
                        }
                    }
                    ast::TaskField::Optional(_) => lowered.optional = true,
                }
            }
            ir_tasks.push(ir::Task {
                id: index as TaskId + 1,
                key: task.name.name.clone(),
                name: params.interpolate(self, &task.title),
                step: source.step.map(|s| steps[s].step.name.name.clone()),
                assignee: lowered.assignee,
                reasoning: lowered.reasoning,
                description: lowered.description,
                optional: lowered.optional,
                retry: lowered.retry,
                dependencies: Vec::new(),
            });
        }

        let report = graph::check(&graph);
        self.diagnostics.extend(report.diagnostics);
        for (task, deps) in ir_tasks.iter_mut().zip(report.dependencies) {
            task.dependencies = deps.into_iter().map(|d| d as TaskId + 1).collect();
        }

        if tasks.is_empty() {
            self.diagnostics.push(
                Diagnostic::new(
                    Code::Empty,
                    format!("plan `{}` has no tasks", plan.name.name),
                )
                .label(self.file, plan.name.span, "empty plan")
                .help("add a task: `task first \"What to do first\"`"),
            );
        }
        for (role, def) in roles.iter().zip(&role_defs) {
            if self.symbols.references_to(*def).next().is_none()
                && !suggested_roles.contains(&role.name.name)
            {
                self.diagnostics.push(
                    Diagnostic::new(
                        Code::Unused,
                        format!("role `{}` is never assigned", role.name.name),
                    )
                    .label(self.file, role.name.span, "unused role")
                    .help(format!(
                        "give it a task with `assignee {}`, or remove it",
                        role.name.name
                    )),
                );
            }
        }
        let params = params.finish(self, options);

        ir::Plan {
            id: plan.name.name.clone(),
            title,
            goal: goal.unwrap_or_default(),
            language,
            max_iterations,
            params,
            roles: ir_roles,
            steps: ir_steps,
            tasks: ir_tasks,
        }
    }

    fn once<'a>(
        &mut self,
        slot: &mut Option<&'a ast::StrField>,
        field: &'a ast::StrField,
        name: &str,
    ) {
        match slot {
            Some(first) => {
                let first = first.keyword;
                self.duplicate_field(name, first, field.keyword);
            }
            None => *slot = Some(field),
        }
    }

    fn duplicate_field(&mut self, name: &str, first: Span, again: Span) {
        self.diagnostics.push(
            Diagnostic::new(Code::DuplicateField, format!("`{name}` is given twice"))
                .label(self.file, again, "given again here")
                .label(self.file, first, "first given here")
                .help(format!("keep one `{name}`")),
        );
    }

    /// Resolves an `after` reference; reports it when it names nothing.
    fn resolve_ref(&mut self, names: &Scope, reference: &ast::Ident) -> Option<usize> {
        if let Some(def) = names.lookup(&reference.name) {
            self.reference(def, reference.span);
            return Some(def);
        }
        let suggestion = suggest::closest(&reference.name, names.names());
        let mut diagnostic = Diagnostic::new(
            Code::UnknownRef,
            format!("no task or step named `{}`", reference.name),
        );
        diagnostic = match suggestion {
            Some(best) => diagnostic
                .label(self.file, reference.span, format!("did you mean `{best}`?"))
                .fix(self.file, reference.span, best),
            None => diagnostic.label(self.file, reference.span, "unknown task or step"),
        };
        self.diagnostics
            .push(diagnostic.help("`after` names a task, or a step to wait for all of its tasks"));
        None
    }
}

/// What a task-or-step name stands for.
#[derive(Clone, Copy)]
enum Member {
    Task(usize),
    Step(usize),
}

#[derive(Default)]
struct PlanFields<'a> {
    title: Option<&'a ast::StrField>,
    goal: Option<&'a ast::StrField>,
    language: Option<&'a ast::StrField>,
    max_iterations: Option<&'a ast::IntField>,
}

#[derive(Default)]
struct TaskFields {
    seen: HashMap<&'static str, Span>,
    assignee: Option<String>,
    reasoning: Option<String>,
    description: Option<String>,
    retry: u32,
    optional: bool,
}
