//! The check after an edit of a template's header that keeps its shape (a
//! letter in a parameter's name): what the template's parameters reach is
//! made again, the rest moves with the text.
//!
//! A parameter's name reaches: the uses of the template (which argument
//! binds to which parameter, with the "did you mean" of one that binds to
//! none, the arguments missing, their types), every instance's strings
//! (their values, or `{name}` and `planc::unknown_param` with its "did you
//! mean"), the references those strings make, and which parameters are
//! unused. Those are made again here, on a checker of their own, by the
//! same functions the whole check runs, for the file before the edit and
//! after it: what the last check kept must be what they made before (its
//! references at the places the lowering noted for each instance,
//! [`super::lower::instances`], and its diagnostics of those kinds), and
//! what they make after takes its place. The searches cost what they cost
//! in a whole check when the budget never ran out, which the last check's
//! budget left tells.

use std::ops::Range;
use std::sync::Arc;

use super::declare::Declarations;
use super::lower::finish::TaskFields;
use super::lower::instances::Instance;
use super::template::TemplateEnv;
use super::{in_order, report_unused_template_params, Checked, Checker, Reuse, Usage};
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{self, Reference, SymbolKind, Value};
use crate::modules::Module;
use crate::span::{FileId, Span};
use crate::syntax::ast::{self, PlanItem, StepItem, TopItem};

/// A template's header edited: the modules before and after the edit (the
/// root's tree re-read), and the template's index among the root's items.
pub(crate) struct HeaderEdit<'m> {
    pub old: &'m [Module],
    pub new: &'m [Module],
    pub top: usize,
}

/// The check of the new text from `previous` (the last check) and `moved`
/// (what it found, moved with the text by `map`, which moves the header's
/// spans to the re-read header's): `None` where this does not follow the
/// edit, and the file is checked whole.
pub(crate) fn params_renamed(
    previous: &Checked,
    mut moved: Checked,
    edit: &HeaderEdit<'_>,
    map: &dyn Fn(Span) -> Option<Span>,
) -> Option<Checked> {
    let left = previous.reuse.suggestions_left.filter(|&left| left > 0)?;
    let instances = previous.reuse.instances.as_deref()?;
    if !plain(edit.old, edit.top) || !plain(edit.new, edit.top) || refused(&previous.diagnostics) {
        return None;
    }
    let (old, new) = (outcome(edit.old, edit.top)?, outcome(edit.new, edit.top)?);
    let root = edit.new.first()?.file;
    let collected: Vec<Diagnostic> = old
        .collected
        .iter()
        .map(|d| d.moved(root, &map))
        .collect::<Option<_>>()?;
    let same_decls = old.template == new.template && old.params == new.params;
    // Every search of the new check finds what it finds without a budget.
    if !same_decls || collected != new.collected || new.spent >= left + old.spent {
        return None;
    }
    let ours = ours(previous, instances, &old, &new)?;
    moved.diagnostics = diagnostics(&moved.diagnostics, &old, &new, edit, map)?;
    let runs = spliced(&mut moved.symbols.references, instances, &ours, &new)?;
    for (p, &def) in new.params.iter().enumerate() {
        let definition = moved.symbols.definitions.get(def)?;
        let TopItem::Template(template) = edit.new[0].ast.items.get(edit.top)? else {
            return None;
        };
        if definition.kind() != SymbolKind::Param {
            return None;
        }
        let definition = definition.named(&template.params.get(p)?.name.name);
        moved.symbols.definitions.set(def, definition)?;
    }
    if let Some(plan) = moved.plan.as_mut() {
        retexted(plan, instances, &ours, &new)?;
    }
    let mut kept: Vec<Instance> = instances.to_vec();
    for (k, &index) in ours.iter().enumerate() {
        kept[index].values = new.values[k].clone();
    }
    for (instance, (titles, texts)) in kept.iter_mut().zip(runs) {
        instance.title_refs = titles;
        instance.text_refs = texts;
    }
    // The tasks' fields are read after the steps, before the strings.
    let titles = |outcome: &Outcome| outcome.titles.iter().map(Vec::len).sum::<usize>();
    let after_titles = |refs: &Range<usize>| {
        let at = refs.start - titles(&old) + titles(&new);
        at..at + refs.len()
    };
    let task_refs = previous.reuse.task_refs.as_ref().map(after_titles);
    // (An instance without tasks noted none.)
    for instance in kept.iter_mut().filter(|i| !i.tasks.is_empty()) {
        instance.field_refs = after_titles(&instance.field_refs);
    }
    moved.reuse = Reuse {
        graph: previous.reuse.graph.clone(),
        plan: None,
        instances: Some(Arc::new(kept)),
        suggestions_left: Some(left + old.spent - new.spent),
        task_refs,
        group_pairs: previous.reuse.group_pairs,
    };
    Some(moved)
}

/// What the uses of the template and its strings make, checked on their
/// own (in a file before or after the edit).
struct Outcome {
    /// The definitions of the template and of its parameters.
    template: usize,
    params: Vec<usize>,
    /// What declaring every role, parameter and template reports.
    collected: Vec<Diagnostic>,
    /// What binding the uses' arguments, reading the strings and finding
    /// the parameters unused report, in order.
    diagnostics: Vec<Diagnostic>,
    /// The spans of the template's uses.
    uses: Vec<Span>,
    /// Per use: the values of the parameters, the references its steps'
    /// titles made and those of its tasks' strings, its steps' names, its
    /// tasks' strings (title, reasoning, description).
    values: Vec<Vec<Option<Value>>>,
    titles: Vec<Vec<Reference>>,
    texts: Vec<Vec<Reference>>,
    step_names: Vec<Vec<String>>,
    task_texts: Vec<Vec<TaskTexts>>,
    /// What the searches for "did you mean" cost.
    spent: usize,
}

/// A task's strings: its title, reasoning and description.
type TaskTexts = (String, Option<String>, Option<String>);

/// Whether the template at `top` is one this follows: its body holds steps
/// and tasks only (a role's description is the plan's), its steps no
/// `after` (whose references stand among its titles'), no template uses a
/// template (an instance's tasks are then its template's alone) and no file
/// holds unparsed text (which could hold a name).
pub(super) fn plain(modules: &[Module], top: usize) -> bool {
    let Some(TopItem::Template(template)) = modules.first().and_then(|m| m.ast.items.get(top))
    else {
        return false;
    };
    let own = template.items.unmoved().all(|item| match item {
        PlanItem::Task(_) => true,
        PlanItem::Step(step) => !step.items.iter().any(|i| matches!(i, StepItem::After(_))),
        _ => false,
    });
    let nested = modules
        .iter()
        .flat_map(|m| &m.ast.items)
        .any(|item| match item {
            TopItem::Template(t) => t.items.unmoved().any(|i| matches!(i, PlanItem::Use(_))),
            _ => false,
        });
    own && !nested && modules.iter().all(|m| m.ast.unparsed.is_empty())
}

/// Whether the last check's diagnostics rule this out: a name declared
/// twice (a template's parameters are told by name alone), or a limit met
/// (an instance left unexpanded, or a code over its cap, whose note is a
/// `planc::limit`: what the cap left out is not known).
pub(super) fn refused(diagnostics: &[Diagnostic]) -> bool {
    diagnostics
        .iter()
        .any(|d| matches!(d.code, Code::Duplicate | Code::Limit))
}

/// The template's uses and strings checked on their own, as the whole
/// check makes them; `None` if an argument's string names a parameter (it
/// is read only when bound).
fn outcome(modules: &[Module], top: usize) -> Option<Outcome> {
    let root = modules.first()?;
    let TopItem::Template(template) = root.ast.items.get(top)? else {
        return None;
    };
    let plan = root.ast.items.iter().find_map(|item| match item {
        TopItem::Plan(plan) => Some(plan),
        _ => None,
    })?;
    // The plan's roles and parameters (which the declarations read) and
    // its uses of the template, each looked at (moved) alone.
    let mut items = Vec::new();
    for (index, item) in plan.items.unmoved().enumerate() {
        let wanted = match item {
            PlanItem::Role(_) | PlanItem::Param(_) => true,
            PlanItem::Use(u) => u.template.name == template.name.name,
            _ => false,
        };
        if wanted {
            items.push(plan.items.get(index)?.clone());
        }
    }
    let plan = ast::Plan {
        span: plan.span,
        name: plan.name.clone(),
        body: plan.body,
        items: items.into(),
    };
    let uses: Vec<&ast::Use> = plan
        .items
        .unmoved()
        .filter_map(|item| match item {
            PlanItem::Use(u) => Some(&**u),
            _ => None,
        })
        .collect();
    if uses.iter().any(|u| flows_in(u)) {
        return None;
    }
    let mut c = Checker::new(root.file, true);
    let decls = Declarations::collect(&mut c, modules, Some(&plan));
    let collected = std::mem::take(&mut c.diagnostics);
    let index = decls
        .templates
        .iter()
        .position(|t| t.file == root.file && std::ptr::eq(t.ast, template))?;
    let decl = &decls.templates[index];
    if decl.params.len() != template.params.len() {
        return None;
    }
    let budget = c.suggestions.left();
    // The uses stand in the root file (the declarations leave the last
    // module's).
    c.file = root.file;
    let envs: Vec<TemplateEnv> = uses
        .iter()
        .map(|u| TemplateEnv::bind(&mut c, &decls, index, u, &mut |_, s| s.template_text()))
        .collect();
    let read = strings(&mut c, &decls, &envs, template)?;
    let spent = budget - c.suggestions.left();
    let mut usage = Usage::new(&decls);
    usage.templates.fill(true);
    for (t, params) in usage.params.iter_mut().enumerate() {
        match t == index {
            true => params.clone_from(&read.used),
            false => params.fill(true),
        }
    }
    report_unused_template_params(&mut c, &decls, &usage);
    Some(Outcome {
        template: decl.def,
        params: decl.params.iter().map(|p| p.def).collect(),
        collected,
        diagnostics: c.diagnostics,
        uses: uses.iter().map(|u| u.span).collect(),
        values: envs.into_iter().map(|env| env.values).collect(),
        titles: read.titles,
        texts: read.texts,
        step_names: read.step_names,
        task_texts: read.task_texts,
        spent,
    })
}

/// Whether an argument of a `use` is a string naming a parameter.
fn flows_in(use_: &ast::Use) -> bool {
    use_.args.iter().any(|arg| match &arg.value {
        ast::Literal::Str(s) => s.params().next().is_some(),
        _ => false,
    })
}

/// What reading the template's strings in each instance made.
struct Read {
    titles: Vec<Vec<Reference>>,
    texts: Vec<Vec<Reference>>,
    step_names: Vec<Vec<String>>,
    task_texts: Vec<Vec<TaskTexts>>,
    /// Per parameter of the template: interpolated (or suggested).
    used: Vec<bool>,
}

/// Reads the template's strings in each instance (`envs`), as the
/// lowering does: every step's title first, then every task's reasoning,
/// description and title.
fn strings(
    c: &mut Checker,
    decls: &Declarations<'_>,
    envs: &[TemplateEnv],
    template: &ast::Template,
) -> Option<Read> {
    let (tasks, steps) = items(template)?;
    let mut used: Vec<Vec<bool>> = decls
        .templates
        .iter()
        .map(|t| vec![false; t.params.len()])
        .collect();
    let index = envs.first()?.template;
    c.file = decls.templates[index].file;
    let (mut titles, mut step_names) = (Vec::new(), Vec::new());
    for env in envs {
        let from = c.symbols.references.len();
        let names = steps
            .iter()
            .map(|step| match &step.title {
                Some(title) => env.interpolate(c, decls, &mut used, title),
                None => step.name.name.to_string(),
            })
            .collect();
        step_names.push(names);
        titles.push(c.symbols.references[from..].to_vec());
    }
    let (mut texts, mut task_texts) = (Vec::new(), Vec::new());
    for env in envs {
        let from = c.symbols.references.len();
        let mut strings = Vec::with_capacity(tasks.len());
        for task in &tasks {
            let fields = TaskFields::of(task);
            let reasoning = fields
                .reasoning
                .map(|s| env.interpolate(c, decls, &mut used, s));
            let description = fields
                .description
                .map(|s| env.interpolate(c, decls, &mut used, s));
            let title = env.interpolate(c, decls, &mut used, &task.title);
            strings.push((title, reasoning, description));
        }
        task_texts.push(strings);
        texts.push(c.symbols.references[from..].to_vec());
    }
    Some(Read {
        titles,
        texts,
        step_names,
        task_texts,
        used: std::mem::take(used.get_mut(index)?),
    })
}

/// The tasks and steps of a template in the order an instance adds them
/// (each where it stands).
fn items(template: &ast::Template) -> Option<(Vec<&ast::Task>, Vec<&ast::Step>)> {
    let (mut tasks, mut steps) = (Vec::new(), Vec::new());
    for item in &template.items {
        match item {
            PlanItem::Task(task) => tasks.push(&**task),
            PlanItem::Step(step) => {
                steps.push(&**step);
                tasks.extend(step.items.iter().filter_map(|i| match i {
                    StepItem::Task(task) => Some(&**task),
                    _ => None,
                }));
            }
            _ => return None,
        }
    }
    Some((tasks, steps))
}

/// The last check's instances of the template, by index, one to one with
/// its uses, when what it kept of them is what they made before the edit
/// (their values and references), and they have the template's tasks and
/// steps.
fn ours(
    previous: &Checked,
    instances: &[Instance],
    old: &Outcome,
    new: &Outcome,
) -> Option<Vec<usize>> {
    let ours: Vec<usize> = (0..instances.len())
        .filter(|&i| instances[i].template == old.template)
        .collect();
    if ours.is_empty() || ours.len() != old.values.len() || ours.len() != new.values.len() {
        return None;
    }
    let references = &previous.symbols.references;
    for (k, &index) in ours.iter().enumerate() {
        let instance = &instances[index];
        let same = instance.values == old.values[k]
            && same_run(references, &instance.title_refs, &old.titles[k])?
            && same_run(references, &instance.text_refs, &old.texts[k])?
            && instance.tasks.len() == new.task_texts[k].len()
            && instance.steps.len() == new.step_names[k].len();
        if !same {
            return None;
        }
    }
    Some(ours)
}

/// The check's diagnostics after the edit: those the template's uses and
/// strings made (which must be what they made before the edit, moved) go,
/// those they make now come.
fn diagnostics(
    moved: &[Diagnostic],
    old: &Outcome,
    new: &Outcome,
    edit: &HeaderEdit<'_>,
    map: &dyn Fn(Span) -> Option<Span>,
) -> Option<Vec<Diagnostic>> {
    let root = edit.new.first()?.file;
    let TopItem::Template(template) = edit.new[0].ast.items.get(edit.top)? else {
        return None;
    };
    let theirs = Theirs {
        root,
        uses: &new.uses,
        body: Span::new(template.body.open.start(), template.span.end()),
        params: template.params.iter().map(|p| p.name.span).collect(),
    };
    let (mut were, mut rest): (Vec<Diagnostic>, Vec<Diagnostic>) =
        moved.iter().cloned().partition(|d| theirs.made(d));
    let mut expected: Vec<Diagnostic> = old
        .diagnostics
        .iter()
        .map(|d| d.moved(root, &map))
        .collect::<Option<_>>()?;
    in_order(&mut were);
    in_order(&mut expected);
    if were != expected {
        return None;
    }
    rest.extend(new.diagnostics.iter().cloned());
    in_order(&mut rest);
    Some(rest)
}

/// Where the diagnostics the template's uses and strings make stand.
struct Theirs<'s> {
    root: FileId,
    uses: &'s [Span],
    /// The template's body.
    body: Span,
    /// Its parameters' names.
    params: Vec<Span>,
}

impl Theirs<'_> {
    /// Whether `d` is one of them: an argument's (in a use of the
    /// template), a string's (in its body), an unused parameter's.
    fn made(&self, d: &Diagnostic) -> bool {
        let Some(label) = d.primary().filter(|l| l.file == self.root) else {
            return false;
        };
        let within =
            |outer: Span| outer.start() <= label.span.start() && label.span.end() <= outer.end();
        match d.code {
            Code::TemplateArg | Code::ParamType => self.uses.iter().any(|&u| within(u)),
            Code::UnknownParam => within(self.body),
            Code::Unused => self.params.contains(&label.span),
            _ => false,
        }
    }
}

/// The references with each instance's runs (its steps', then its tasks'
/// strings', in the order the lowering made them: every instance's steps,
/// then every instance's tasks) made again for the template's instances
/// (`ours`), in place (only the runs' chunks are copied); with where each
/// instance's runs stand now.
#[allow(clippy::type_complexity)]
fn spliced(
    references: &mut ir::Shifted<Reference>,
    instances: &[Instance],
    ours: &[usize],
    new: &Outcome,
) -> Option<Vec<(Range<usize>, Range<usize>)>> {
    let ours_at = |index: usize| ours.iter().position(|&i| i == index);
    let runs = instances
        .iter()
        .enumerate()
        .map(|(i, instance)| {
            (
                instance.title_refs.clone(),
                ours_at(i).map(|k| &new.titles[k]),
            )
        })
        .chain(instances.iter().enumerate().map(|(i, instance)| {
            (
                instance.text_refs.clone(),
                ours_at(i).map(|k| &new.texts[k]),
            )
        }));
    // Where each run stands after those before it changed (`grown`).
    let (mut at, mut grown) = (0, 0i64);
    let mut placed = Vec::with_capacity(2 * instances.len());
    let mut replaced = Vec::with_capacity(2 * ours.len());
    for (run, made) in runs {
        let now = |at: usize| (at as i64 + grown) as usize;
        if run.is_empty() && made.is_none_or(Vec::is_empty) && run.start < at {
            // Where an instance without steps (or tasks) made none.
            placed.push(now(at)..now(at));
            continue;
        }
        if run.start < at || run.end > references.len() {
            return None;
        }
        let start = now(run.start);
        let len = made.map_or(run.len(), Vec::len);
        placed.push(start..start + len);
        if let Some(made) = made {
            grown += len as i64 - run.len() as i64;
            replaced.push((run.clone(), made));
        }
        at = run.end;
    }
    // The last first: the runs before it stay where they are.
    for (run, made) in replaced.into_iter().rev() {
        references.replace(run, made.clone());
    }
    let texts = placed.split_off(instances.len());
    Some(placed.into_iter().zip(texts).collect())
}

/// Gives the instances of the template (`ours`) the strings they have now.
fn retexted(
    plan: &mut ir::Plan,
    instances: &[Instance],
    ours: &[usize],
    new: &Outcome,
) -> Option<()> {
    for (k, &index) in ours.iter().enumerate() {
        let instance = &instances[index];
        for (&s, name) in instance.steps.iter().zip(&new.step_names[k]) {
            plan.steps.get_mut(s)?.name.clone_from(name);
        }
        for (t, (name, reasoning, description)) in instance.tasks.clone().zip(&new.task_texts[k]) {
            let task = plan.tasks.get_mut(t)?;
            if !task.says(name, reasoning.as_deref(), description.as_deref()) {
                let task = Arc::make_mut(task);
                task.set_texts(name.clone(), reasoning.clone(), description.clone());
            }
        }
    }
    Some(())
}

/// Whether the references `run` of `references` are `expected` (`None`
/// when the run is not all in the list).
fn same_run(
    references: &ir::Shifted<Reference>,
    run: &Range<usize>,
    expected: &[Reference],
) -> Option<bool> {
    (run.start <= run.end && run.end <= references.len())
        .then(|| references.range(run.clone()).eq(expected.iter().copied()))
}
