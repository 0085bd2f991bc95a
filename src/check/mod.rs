//! Syntax trees → checked IR: names, references, parameters, templates, the
//! dependency graph. Reports every problem it finds in one pass.
//!
//! - `declare` collects roles, parameters and templates from every file;
//! - `params` gives the plan's parameters their values (`--set`, defaults);
//! - `lower` expands template instances and resolves the plan;
//! - `template` binds `use` arguments; `graph` checks the dependency graph.

pub(crate) mod added;
mod adjacency;
mod declare;
pub(crate) mod edited;
pub mod graph;
pub(crate) mod import_edit;
mod lower;
mod params;
pub(crate) mod rename;
mod reuse;
mod scope;
pub(crate) mod step_items;
pub(crate) mod step_rename;
mod template;
pub(crate) mod template_header;
pub(crate) mod template_text;
mod unparsed;

use std::sync::Arc;

use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{self, SymbolKind, Symbols};
use crate::modules::Module;
use crate::span::{FileId, SourceMap, Span};
use crate::suggest;
use crate::syntax::ast;

pub use params::parse_assignment;
pub(crate) use reuse::{interpolated, same_name};

use declare::Declarations;
use lower::{Env, Lowering};
use params::Params;
use unparsed::Unparsed;

/// What a check is asked to do besides checking.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// `--set NAME=VALUE` assignments, in the order given.
    pub params: Vec<(String, String)>,
    /// Report parameters that have neither a default nor a `--set` value
    /// (building an instance, not checking a template).
    pub require_params: bool,
    /// Leave [`Symbols::references`] empty: what the language server looks
    /// names up in, and `planc check` and `build` never read (definitions are
    /// kept either way). A large plan is checked with less memory.
    pub skip_references: bool,
    /// Check the plan without keeping it: every check runs and reports the
    /// same, but the tasks' strings are interpolated only to be checked, and
    /// [`Checked::plan`] is `None` ([`Checked::task_count`] still counts the
    /// tasks). `planc check` needs no more, and a large plan is checked with
    /// less time and memory.
    pub skip_plan: bool,
}

/// The outcome of checking one file and its imports.
#[derive(Clone, Debug, Default)]
pub struct Checked {
    /// The plan, built as far as the errors allow; `None` for a file without
    /// a plan, or when [`Options::skip_plan`] was set.
    pub plan: Option<ir::Plan>,
    /// The number of tasks of the plan (its template instances' included);
    /// `None` for a file without a plan.
    pub task_count: Option<usize>,
    pub diagnostics: Vec<Diagnostic>,
    pub symbols: Symbols,
    /// What a check of an edited version of the file can reuse.
    pub(crate) reuse: Reuse,
}

/// What one check keeps for the next check of an edited version of the same
/// file ([`check_reusing`]): what it found that an edit may leave as it was.
#[derive(Clone, Debug, Default)]
pub(crate) struct Reuse {
    /// The plan's dependency graph as reduced.
    graph: Option<Arc<graph::Memo>>,
    /// What the plan's tasks made, for a rename ([`rename::renamed`]) or an
    /// edit inside one task ([`edited::edited`]); kept when references are
    /// recorded, the plan is kept, the diagnostics are few and no other
    /// "did you mean" search spent the budget.
    plan: Option<Arc<PlanReuse>>,
    /// The plan's template instances, for an edit of a template's text
    /// ([`template_text::retexted`]); kept when the plan is.
    instances: Option<Arc<Vec<lower::instances::Instance>>>,
    /// What the check left of the "did you mean" budget, when every
    /// search of it is known ([`template_header`] tells from it whether
    /// searches of its own would find what a whole check finds).
    suggestions_left: Option<usize>,
    /// Where the references the plan's tasks' fields made stand (by index
    /// in [`Symbols::references`]), for [`import_edit`].
    task_refs: Option<std::ops::Range<usize>>,
    /// The task-to-task dependencies the `after`s of steps and instances
    /// made (what [`crate::syntax::dependency_pair_limit`] bounds).
    group_pairs: Option<u64>,
}

impl Reuse {
    /// What a check made from the last one by an edit keeps for the next:
    /// its graph's reduction and what its tasks made (no template instances:
    /// the paths that make it follow plans without templates).
    fn after_edit(memo: Option<graph::Memo>, plan: PlanReuse) -> Reuse {
        Reuse {
            graph: memo.map(Arc::new),
            plan: Some(Arc::new(plan)),
            instances: None,
            suggestions_left: None,
            task_refs: None,
            group_pairs: None,
        }
    }
}

/// What the check of a plan's tasks found, kept so that the rename of a
/// task can be checked again without the tasks that do not name it.
#[derive(Debug)]
struct PlanReuse {
    /// The names no field could resolve, in the order they were searched
    /// for: those from `tasks_unresolved` on were met in the tasks' fields,
    /// in source order.
    unresolved: Vec<lower::Unresolved>,
    tasks_unresolved: usize,
    /// The references the tasks' fields made, in source order: a range of
    /// [`Symbols::references`].
    task_references: std::ops::Range<usize>,
    /// The references the tasks' strings made (to parameters), a later
    /// range: task by task, in source order, each task's reasoning,
    /// description and title in that order.
    texts_references: std::ops::Range<usize>,
    /// How many diagnostics the check did not report because unparsed text
    /// could be what they are about ([`Checker::withheld`]).
    withheld: usize,
    /// The graph's edges as the `after`s made them.
    edges: Vec<graph::Edge>,
    groups: Vec<graph::GroupEdge>,
    /// The check's diagnostics but those of the unresolved names and of the
    /// graph, as found (before they were sorted and capped).
    other: Vec<Diagnostic>,
    /// The names the unresolved names' "did you mean" searches look among,
    /// indexed when first searched, shared while they do not change.
    search_names: Arc<reuse::SearchNames>,
}

/// What the lowering of the plan records for [`PlanReuse`]: the
/// diagnostics of the unresolved names and of the graph are the ranges
/// `unknown` and `graph` of the check's list.
struct Trace {
    unresolved: Vec<lower::Unresolved>,
    tasks_unresolved: usize,
    task_references: std::ops::Range<usize>,
    unknown: std::ops::Range<usize>,
    texts_references: std::ops::Range<usize>,
    /// The "did you mean" budget left before and after their searches.
    searches: (usize, usize),
    graph: std::ops::Range<usize>,
    edges: Vec<graph::Edge>,
    groups: Vec<graph::GroupEdge>,
}

/// The most diagnostics a check may have for its [`PlanReuse`] to be kept:
/// a plan being edited has few; one with many is checked whole.
const MAX_KEPT_DIAGNOSTICS: usize = 1000;

impl Checked {
    /// Whether any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// The state every part of the checker shares: where labels go, what was
/// found, and the symbol index.
pub(crate) struct Checker {
    /// The file the item being checked stands in.
    file: FileId,
    diagnostics: Vec<Diagnostic>,
    symbols: ir::SymbolsBuilder,
    /// Roles a "did you mean" pointed to (no "unused" echo for them).
    suggested_roles: Vec<String>,
    /// Whether references are recorded in `symbols`; when they are not,
    /// `referenced` says which definitions have one.
    record_references: bool,
    referenced: Vec<bool>,
    /// What is left for "did you mean" searches (spent in a fixed order).
    suggestions: suggest::Budget,
    /// Names the task fields could not resolve, reported in source order
    /// once every task has been looked at (on one thread or two).
    unresolved: Vec<lower::Unresolved>,
    /// What syntax errors may hide: no diagnostic that could echo them.
    unparsed: Arc<Unparsed>,
    /// The tasks, steps and instances template `use`s added so far, in
    /// every lowering of the check, and how many they may add.
    expanded: u64,
    expansion_limit: u64,
    /// The task-to-task dependencies the `after`s of steps and instances
    /// made so far, and how many they may make (the first over is refused).
    group_pairs: u64,
    group_pair_limit: u64,
    /// Where an unknown name was already reported: a template used many
    /// times meets the same one in each instance, and its "did you mean"
    /// is searched once (a later search could find the budget spent, and
    /// report the same place differently).
    reported_unknown: rustc_hash::FxHashSet<(FileId, Span)>,
    /// What the check of the file before an edit kept, and what this one
    /// keeps.
    previous: Reuse,
    reuse: Reuse,
    /// What the plan's lowering recorded for [`PlanReuse`].
    trace: Option<Trace>,
    /// How many diagnostics were not reported because unparsed text could
    /// have been what they are about (unresolved names not counted).
    withheld: usize,
}

impl Checker {
    fn new(file: FileId, record_references: bool) -> Checker {
        Checker {
            file,
            diagnostics: Vec::new(),
            symbols: ir::SymbolsBuilder::default(),
            suggested_roles: Vec::new(),
            record_references,
            referenced: Vec::new(),
            suggestions: suggest::Budget::default(),
            unresolved: Vec::new(),
            unparsed: Arc::default(),
            reported_unknown: Default::default(),
            expanded: 0,
            expansion_limit: crate::syntax::MAX_EXPANSION as u64,
            group_pairs: 0,
            group_pair_limit: crate::syntax::DEPENDENCY_PAIRS_BASE as u64,
            previous: Reuse::default(),
            reuse: Reuse::default(),
            trace: None,
            withheld: 0,
        }
    }

    /// A checker for a part of the same plan, on another thread. It makes
    /// no "did you mean" search (the order of the searches would depend on
    /// the threads): what it cannot resolve goes to `unresolved`.
    fn helper(&self) -> Checker {
        Checker {
            unparsed: Arc::clone(&self.unparsed),
            ..Checker::new(self.file, self.record_references)
        }
    }

    /// Takes what another checker (of a part of the same plan, on another
    /// thread) found, after what this one found. The other checker defines
    /// nothing: its references name this one's definitions.
    fn append(&mut self, other: Checker) {
        debug_assert!(other.symbols.definitions.is_empty());
        self.diagnostics.extend(other.diagnostics);
        self.symbols.references.extend(other.symbols.references);
        self.suggested_roles.extend(other.suggested_roles);
        self.unresolved.extend(other.unresolved);
        self.withheld += other.withheld;
        if self.referenced.len() < other.referenced.len() {
            self.referenced.resize(other.referenced.len(), false);
        }
        for (mine, theirs) in self.referenced.iter_mut().zip(other.referenced) {
            *mine |= theirs;
        }
    }

    /// Whether a diagnostic about `name` is reported: not if unparsed text
    /// mentions it (it may declare or use it there), which is counted.
    fn withheld_for(&mut self, name: &str) -> bool {
        let echo = self.unparsed.may_name(name);
        self.withheld += usize::from(echo);
        !echo
    }

    /// Whether a diagnostic about what `span` of `file` holds (a missing
    /// goal, an empty body) is reported: not if unparsed text stands in it,
    /// which is counted.
    fn withheld_within(&mut self, file: FileId, span: Span) -> bool {
        let echo = self.unparsed.within(file, span);
        self.withheld += usize::from(echo);
        !echo
    }

    fn define(&mut self, kind: SymbolKind, name: &ast::Ident, full_span: Span) -> usize {
        let definition = ir::Definition::new(kind, &name.name, self.file, name.span, full_span);
        self.symbols.definitions.push(definition);
        self.symbols.definitions.len() - 1
    }

    fn reference(&mut self, definition: usize, span: Span) {
        if !self.record_references {
            if self.referenced.len() <= definition {
                self.referenced.resize(definition + 1, false);
            }
            self.referenced[definition] = true;
            return;
        }
        self.symbols.references.push(ir::Reference {
            definition: definition as u32,
            file: self.file,
            span,
        });
    }

    /// Whether an unknown name at `span` of `file` is met for the first time.
    fn first_unknown(&mut self, file: FileId, span: Span) -> bool {
        self.reported_unknown.insert((file, span))
    }

    fn duplicate_field(&mut self, name: &str, first: Span, again: Span) {
        self.diagnostics.push(
            Diagnostic::new(Code::DuplicateField, format!("`{name}` is given twice"))
                .label(self.file, again, "given again here")
                .label(self.file, first, "first given here")
                .help(format!("keep one `{name}`")),
        );
    }
}

/// Checks the root module (`modules[0]`) with everything it imports
/// (`sources` holds their texts).
///
/// Syntax errors do not stop the check: what parsed is checked, and only a
/// diagnostic that could echo text that did not parse is left out (a name
/// unknown or unused that the unparsed text mentions, a missing goal or an
/// empty body where the body holds unparsed text).
pub fn check(modules: &[Module], sources: &SourceMap, options: &Options) -> Checked {
    check_reusing(modules, sources, options, None)
}

/// Like [`check`], reusing what the check of an earlier version of the same
/// file found where an edit cannot have changed it: the outcome is the same.
pub(crate) fn check_reusing(
    modules: &[Module],
    sources: &SourceMap,
    options: &Options,
    previous: Option<&Checked>,
) -> Checked {
    let Some(root) = modules.first() else {
        return Checked::default();
    };
    let mut c = Checker::new(root.file, !options.skip_references);
    if let Some(previous) = previous {
        c.previous = previous.reuse.clone();
    }
    c.unparsed = Arc::new(Unparsed::of(modules, sources));
    let input_bytes = modules.iter().map(|m| sources.get(m.file).text.len()).sum();
    c.expansion_limit = crate::syntax::expansion_limit(input_bytes) as u64;
    c.group_pair_limit = crate::syntax::dependency_pair_limit(input_bytes) as u64;
    let plans: Vec<&ast::Plan> = root
        .ast
        .items
        .iter()
        .filter_map(|item| match item {
            ast::TopItem::Plan(plan) => Some(plan),
            _ => None,
        })
        .collect();
    report_extra_plans(&mut c, root.file, &plans);
    let plan_ast = plans.first().copied();
    let keep_plan = !options.skip_plan;
    let decls = Declarations::collect(&mut c, modules, plan_ast);

    let mut usage = Usage::new(&decls);
    let plan = plan_ast.map(|plan| {
        c.file = root.file;
        let mut params = Params::declare(&mut c, &decls.params, options);
        let (mut ir, lowered) = lower_plan(&mut c, &decls, plan, root.file, &mut params, keep_plan);
        usage.merge(&lowered);
        ir.params = params.finish(&mut c, options);
        (ir, lowered.task_count)
    });
    let task_count = plan.as_ref().map(|(_, count)| *count);
    let plan = plan.and_then(|(ir, _)| keep_plan.then_some(ir));

    // Templates of this file that no plan used are checked on their own.
    for (index, template) in decls.templates.iter().enumerate() {
        if !template.in_root || usage.templates[index] {
            continue;
        }
        // Only the diagnostics and which parameters were used matter here.
        let mut lowering = Lowering::new(&decls, false);
        lowering.expand_unbound(&mut c, index);
        let lowered = lowering.finish(&mut c, &mut None);
        usage.merge(&lowered);
    }
    report_unused_template_params(&mut c, &decls, &usage);
    report_unused_roles(&mut c, &decls);

    if let Some(trace) = c.trace.take() {
        // The searches for the unresolved names were the only ones: what
        // they spend changes what no other search finds.
        let (before, after) = trace.searches;
        let alone = before == suggest::SUGGESTION_BUDGET && after == c.suggestions.left();
        if alone && c.diagnostics.len() <= MAX_KEPT_DIAGNOSTICS {
            c.reuse.plan = Some(Arc::new(PlanReuse::of(trace, &c.diagnostics, c.withheld)));
        }
    }
    in_order(&mut c.diagnostics);
    c.reuse.suggestions_left = Some(c.suggestions.left());
    c.reuse.group_pairs = Some(c.group_pairs);

    Checked {
        plan,
        task_count,
        diagnostics: c.diagnostics,
        symbols: c.symbols.finish(),
        reuse: c.reuse,
    }
}

impl PlanReuse {
    fn of(trace: Trace, diagnostics: &[Diagnostic], withheld: usize) -> PlanReuse {
        let other = diagnostics
            .iter()
            .enumerate()
            .filter(|(i, _)| !trace.unknown.contains(i) && !trace.graph.contains(i))
            .map(|(_, d)| d.clone())
            .collect();
        // Made with room for two edges a task (most name one other or
        // none): kept as long as the analysis, without it.
        let mut edges = trace.edges;
        edges.shrink_to_fit();
        PlanReuse {
            unresolved: trace.unresolved,
            tasks_unresolved: trace.tasks_unresolved,
            task_references: trace.task_references,
            texts_references: trace.texts_references,
            withheld,
            edges,
            groups: trace.groups,
            other,
            search_names: Arc::default(),
        }
    }
}

/// Puts a check's diagnostics in order: sorted by place, code and message,
/// those repeated left out (a template used twice reports its own mistakes
/// twice), and capped per code.
fn in_order(diagnostics: &mut Vec<Diagnostic>) {
    diagnostics.sort_by(|a, b| {
        let key = |d: &Diagnostic| {
            (
                d.primary().map(|l| (l.file, l.span.start(), l.span.end())),
                d.code,
            )
        };
        key(a).cmp(&key(b)).then_with(|| a.message.cmp(&b.message))
    });
    diagnostics.dedup();
    crate::diagnostic::cap_per_code(diagnostics);
}

/// Which templates and template parameters some lowering used.
struct Usage {
    templates: Vec<bool>,
    params: Vec<Vec<bool>>,
}

impl Usage {
    fn new(decls: &Declarations<'_>) -> Usage {
        Usage {
            templates: vec![false; decls.templates.len()],
            params: decls
                .templates
                .iter()
                .map(|t| vec![false; t.params.len()])
                .collect(),
        }
    }

    fn merge(&mut self, lowered: &lower::Lowered) {
        for (i, used) in lowered.used_templates.iter().enumerate() {
            self.templates[i] |= used;
        }
        for (t, used_params) in lowered.used_template_params.iter().enumerate() {
            for (p, used) in used_params.iter().enumerate() {
                self.params[t][p] |= used;
            }
        }
    }
}

/// A file holds one plan: each further one is an error.
fn report_extra_plans(c: &mut Checker, file: FileId, plans: &[&ast::Plan]) {
    for extra in plans.iter().skip(1) {
        c.diagnostics.push(
            Diagnostic::new(
                Code::MultiplePlans,
                format!("a second plan, `{}`, in one file", extra.name.name),
            )
            .label(file, extra.name.span, "second plan")
            .label(file, plans[0].name.span, "first plan")
            .help("put each plan in a file of its own; share roles and templates with `import`"),
        );
    }
}

/// The parameters of this file's templates that no string uses.
fn report_unused_template_params(c: &mut Checker, decls: &Declarations<'_>, usage: &Usage) {
    for (index, template) in decls.templates.iter().enumerate() {
        if !template.in_root {
            continue;
        }
        for (p, param) in template.params.iter().enumerate() {
            if usage.params[index][p] || c.unparsed.may_name(&param.ast.name.name) {
                continue;
            }
            c.diagnostics.push(
                Diagnostic::new(
                    Code::Unused,
                    format!(
                        "parameter `{}` of template `{}` is never used",
                        param.ast.name.name, template.ast.name.name
                    ),
                )
                .label(template.file, param.ast.name.span, "unused parameter")
                .help(format!(
                    "use it in a string of the template as `{{{}}}`, or remove it",
                    param.ast.name.name
                )),
            );
        }
    }
}

/// The plan's roles that no task is assigned to (and that no "did you
/// mean" pointed to).
fn report_unused_roles(c: &mut Checker, decls: &Declarations<'_>) {
    // One pass over the references, not one per role.
    let mut referenced = std::mem::take(&mut c.referenced);
    referenced.resize(c.symbols.definitions.len(), false);
    for reference in &c.symbols.references {
        referenced[reference.definition as usize] = true;
    }
    let suggested = std::mem::take(&mut c.suggested_roles);
    let suggested_roles: rustc_hash::FxHashSet<&str> =
        suggested.iter().map(String::as_str).collect();
    let mut unused_roles = Vec::new();
    for &(file, role, def) in &decls.plan_roles {
        let name = role.name.name.as_str();
        if !referenced[def] && !suggested_roles.contains(name) && c.withheld_for(name) {
            unused_roles.push((file, role));
        }
    }
    drop(suggested_roles);
    c.suggested_roles = suggested;
    for (file, role) in unused_roles {
        c.diagnostics.push(
            Diagnostic::new(
                Code::Unused,
                format!("role `{}` is never assigned", role.name.name),
            )
            .label(file, role.name.span, "unused role")
            .help(format!(
                "give it a task with `assignee {}`, or remove it",
                role.name.name
            )),
        );
    }
}

fn lower_plan<'a>(
    c: &mut Checker,
    decls: &Declarations<'a>,
    plan: &'a ast::Plan,
    file: FileId,
    params: &mut Params<'a>,
    keep: bool,
) -> (ir::Plan, lower::Lowered) {
    c.define(SymbolKind::Plan, &plan.name, plan.span);
    let fields = PlanFields::of(c, plan);

    // Room for what each task adds, so the large vectors are not copied as
    // they grow (templates may add more; the vectors still grow then).
    let (steps, tasks) = count_items(&plan.items);

    let mut params = Some(params);
    let mut lowering = Lowering::new(decls, keep);
    lowering.reserve(steps, tasks);
    lowering.expand(c, &mut params, &plan.items, file, "", Env::Plan);

    c.file = file;
    let mut interpolate = |c: &mut Checker, f: Option<&ast::StrField>| {
        f.map(|f| {
            params
                .as_deref_mut()
                .map_or_else(|| f.value.template_text(), |p| p.interpolate(c, &f.value))
        })
    };
    let title = interpolate(c, fields.title);
    let goal = interpolate(c, fields.goal);
    let language = interpolate(c, fields.language);
    if goal.is_none() && c.withheld_within(file, plan.span) {
        c.diagnostics.push(
            Diagnostic::new(Code::MissingGoal, format!("plan `{}` has no goal", plan.name.name))
                .label(file, plan.name.span, "this plan needs a `goal`")
                .help("say what the plan achieves, e.g. `goal \"Publish the weekly report\"`; agents read it to stay on course"),
        );
    }
    let max_iterations = fields
        .max_iterations
        .and_then(|f| max_iterations(c, file, f));
    let transition_rounds = fields
        .transition_rounds
        .and_then(|f| rounds(c, file, f, "transition_rounds", 0));
    let fallback_rounds = fields
        .fallback_rounds
        .and_then(|f| rounds(c, file, f, "fallback_rounds", 1));
    let retry = fields.retry.and_then(|f| plan_retry(c, file, f));
    if lowering.is_empty() {
        report_empty(c, plan, file);
    }

    let roles = plan_roles(c, decls, file, &mut params);

    let mut lowered = lowering.finish(c, &mut params);
    let steps = std::mem::take(&mut lowered.steps);
    let tasks = std::mem::take(&mut lowered.tasks);
    let dependencies = std::mem::take(&mut lowered.dependencies);
    (
        ir::Plan {
            id: plan.name.name.clone(),
            title,
            goal: goal.unwrap_or_default(),
            language,
            max_iterations,
            transition_rounds,
            fallback_rounds,
            retry,
            params: Vec::new(),
            roles,
            steps,
            tasks,
            dependencies,
        },
        lowered,
    )
}

/// The roles of the plan and its imports; the plan's own descriptions see
/// its parameters.
fn plan_roles<'a>(
    c: &mut Checker,
    decls: &Declarations<'a>,
    file: FileId,
    params: &mut Option<&mut Params<'a>>,
) -> Vec<ir::Role> {
    decls
        .all_roles
        .iter()
        .map(|&(role_file, role)| {
            c.file = role_file;
            ir::Role {
                id: role.name.name.clone(),
                description: role.description.as_ref().map(|d| {
                    // Role descriptions of libraries cannot see the plan's parameters.
                    if role_file == file {
                        params
                            .as_deref_mut()
                            .map_or_else(|| d.template_text(), |p| p.interpolate(c, d))
                    } else {
                        d.template_text()
                    }
                }),
            }
        })
        .collect()
}

/// Reports a plan without tasks — unless it `use`s a template (an unknown
/// one has its error already) or a syntax error may hide its tasks.
fn report_empty(c: &mut Checker, plan: &ast::Plan, file: FileId) {
    let has_use = plan
        .items
        .iter()
        .any(|i| matches!(i, ast::PlanItem::Use(_)));
    if !has_use && c.withheld_within(file, plan.span) {
        c.diagnostics.push(
            Diagnostic::new(
                Code::Empty,
                format!("plan `{}` has no tasks", plan.name.name),
            )
            .label(file, plan.name.span, "empty plan")
            .help("add a task: `task first \"What to do first\"`"),
        );
    }
}

impl<'a> PlanFields<'a> {
    /// The plan's own fields, each given once (a second is reported).
    fn of(c: &mut Checker, plan: &'a ast::Plan) -> PlanFields<'a> {
        let mut fields = PlanFields::default();
        for item in &plan.items {
            match item {
                ast::PlanItem::Title(f) => once(c, &mut fields.title, f, "title"),
                ast::PlanItem::Goal(f) => once(c, &mut fields.goal, f, "goal"),
                ast::PlanItem::Language(f) => once(c, &mut fields.language, f, "language"),
                ast::PlanItem::MaxIterations(f) => match fields.max_iterations {
                    Some(first) => c.duplicate_field("max_iterations", first.keyword, f.keyword),
                    None => fields.max_iterations = Some(f),
                },
                ast::PlanItem::TransitionRounds(f) => match fields.transition_rounds {
                    Some(first) => c.duplicate_field("transition_rounds", first.keyword, f.keyword),
                    None => fields.transition_rounds = Some(f),
                },
                ast::PlanItem::FallbackRounds(f) => match fields.fallback_rounds {
                    Some(first) => c.duplicate_field("fallback_rounds", first.keyword, f.keyword),
                    None => fields.fallback_rounds = Some(f),
                },
                ast::PlanItem::Retry(f) => match fields.retry {
                    Some(first) => c.duplicate_field("retry", first.keyword, f.keyword),
                    None => fields.retry = Some(f),
                },
                _ => {}
            }
        }
        fields
    }
}

/// The plan's `max_iterations`, when it is at least 1.
fn max_iterations(c: &mut Checker, file: FileId, f: &ast::IntField) -> Option<u64> {
    let value = f.value.value?;
    if value < 1 {
        c.diagnostics.push(
            Diagnostic::new(
                Code::InvalidValue,
                format!("`max_iterations` must be at least 1, not {value}"),
            )
            .label(file, f.value.span, "must be 1 or more"),
        );
        return None;
    }
    Some(value as u64)
}

/// Rounds on a step (`transition_rounds`, `fallback_rounds`), when from
/// `least` to 1000: a transition word may count from 0 (at once), the
/// fallback from 1.
fn rounds(c: &mut Checker, file: FileId, f: &ast::IntField, name: &str, least: i64) -> Option<u64> {
    let value = f.value.value?;
    if !(least..=1000).contains(&value) {
        c.diagnostics.push(
            Diagnostic::new(
                Code::InvalidValue,
                format!("`{name}` takes a number from {least} to 1000, not {value}"),
            )
            .label(file, f.value.span, "out of range"),
        );
        return None;
    }
    Some(value as u64)
}

/// The plan's `retry`, when it is from 0 to 1000.
fn plan_retry(c: &mut Checker, file: FileId, f: &ast::IntField) -> Option<u32> {
    let value = f.value.value?;
    if !(0..=1000).contains(&value) {
        c.diagnostics.push(
            Diagnostic::new(
                Code::InvalidValue,
                format!("`retry` takes a number from 0 to 1000, not {value}"),
            )
            .label(file, f.value.span, "out of range"),
        );
        return None;
    }
    Some(value as u32)
}

fn once<'a>(
    c: &mut Checker,
    slot: &mut Option<&'a ast::StrField>,
    field: &'a ast::StrField,
    name: &str,
) {
    match slot {
        Some(first) => c.duplicate_field(name, first.keyword, field.keyword),
        None => *slot = Some(field),
    }
}

#[derive(Default)]
struct PlanFields<'a> {
    title: Option<&'a ast::StrField>,
    goal: Option<&'a ast::StrField>,
    language: Option<&'a ast::StrField>,
    max_iterations: Option<&'a ast::IntField>,
    transition_rounds: Option<&'a ast::IntField>,
    fallback_rounds: Option<&'a ast::IntField>,
    retry: Option<&'a ast::IntField>,
}

/// The steps and tasks written directly in a plan body (not counting what
/// template instances add).
fn count_items(items: &ast::Items) -> (usize, usize) {
    let (mut steps, mut tasks) = (0, 0);
    for item in items.unmoved() {
        match item {
            ast::PlanItem::Step(step) => {
                steps += 1;
                tasks += step
                    .items
                    .iter()
                    .filter(|i| matches!(i, ast::StepItem::Task(_)))
                    .count();
            }
            ast::PlanItem::Task(_) => tasks += 1,
            _ => {}
        }
    }
    (steps, tasks)
}
