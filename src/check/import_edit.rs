//! The check after an edit of an import's path (a letter in the imported
//! file's name): the import is loaded again, and when what it brings in
//! are roles, only what names them is checked again.
//!
//! An imported file's roles reach: the definitions (declared after the
//! root file's, so every later definition moves by as many), the plan's
//! roles, the references of the `assignee`s that name them, and the
//! `planc::unknown_role` of those that then name none (with its "did you
//! mean" among the roles). The `assignee`s that name them are found from
//! the last check (its references to the roles, and its diagnostics of
//! the names no role had); this follows them in the template instances of
//! one template ([`super::template_header::plain`]), whose references the
//! tasks' fields made stand in runs, one per instance, where the lowering
//! noted them (`Instance::field_refs`). Everything else moves: the
//! references' chunks are shared, only those of the runs copied, and
//! what they name renumbered as they are read ([`ir::Shifted::renumber`]).

use std::collections::HashSet;
use std::ops::Range;
use std::sync::Arc;

use super::declare::Declarations;
use super::lower::instances::Instance;
use super::template_header::{plain, refused};
use super::{in_order, Checked, Checker, Reuse};
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{self, Definition, Reference, SymbolKind};
use crate::modules::Module;
use crate::span::{FileId, Span};
use crate::suggest::{Budget, SUGGESTION_BUDGET};
use crate::syntax::ast::{self, PlanItem, StepItem, TopItem};

/// An import edited: the modules before and after (loaded again), and
/// how many bytes each set reads.
pub(crate) struct ImportEdit<'m> {
    pub old: &'m [Module],
    pub new: &'m [Module],
    pub bytes: (usize, usize),
}

/// The check of the new text from `previous` (the last check) and
/// `moved` (what it found, moved with the text by `map`): `None` where
/// this does not follow the edit, and the file is checked whole.
pub(crate) fn roles_reimported(
    previous: &Checked,
    mut moved: Checked,
    edit: &ImportEdit<'_>,
    map: &dyn Fn(Span) -> Option<Span>,
) -> Option<Checked> {
    let left = previous.reuse.suggestions_left.filter(|&left| left > 0)?;
    let region = previous.reuse.task_refs.clone()?;
    let instances = previous.reuse.instances.as_deref()?;
    // What the edit reads more or less moves the limits on what `use`s
    // and `after`s may make: they are met neither before nor after.
    let pairs = previous.reuse.group_pairs?;
    if pairs > crate::syntax::dependency_pair_limit(edit.bytes.1) as u64
        || refused(&previous.diagnostics)
    {
        return None;
    }
    let (old, new) = (roles(edit.old)?, roles(edit.new)?);
    let collected: Vec<Diagnostic> = old
        .collected
        .iter()
        .map(|d| d.moved(edit.new[0].file, &map))
        .collect::<Option<_>>()?;
    let same_defs: Vec<ir::Definition> = previous
        .symbols
        .definitions
        .range(old.first..old.first + old.defs.len())
        .collect();
    if old.first != new.first || collected != new.collected || same_defs != old.defs {
        return None;
    }
    let shape = Shape::of(edit.new)?;
    let expanded = shape.uses.len() as u64 * shape.expansion;
    if expanded > crate::syntax::expansion_limit(edit.bytes.1) as u64 {
        return None;
    }
    let users = Users::of(&shape, &old, &new, instances)?;
    if new.spent(&users.new) >= left + old.spent(&users.old) {
        return None;
    }
    let runs = runs(&moved.symbols.references, instances, region.clone(), &shape)?;
    users.checked_before(&moved, &shape, &runs, (&old, &new))?;
    let grown = referenced(
        &mut moved.symbols.references,
        &runs,
        (&shape, &users),
        &old,
        &new,
    )?;
    let imported = old.first..old.first + old.defs.len();
    moved
        .symbols
        .definitions
        .replace(imported, new.defs.clone());
    moved.diagnostics = diagnostics(&moved.diagnostics, &users, &shape);
    if let Some(plan) = moved.plan.as_mut() {
        let kept = plan.roles.len().checked_sub(old.ir.len())?;
        if plan.roles[kept..] != old.ir[..] {
            return None;
        }
        plan.roles.truncate(kept);
        plan.roles.extend(new.ir.iter().cloned());
    }
    let spent = (old.spent(&users.old), new.spent(&users.new));
    moved.reuse = kept(
        &previous.reuse,
        (&old, &new),
        (region, &grown),
        left + spent.0 - spent.1,
    )?;
    Some(moved)
}

/// What the check keeps for the next after the edit: the instances'
/// definitions and references moved (each instance's run of the tasks'
/// fields' `region` has `grown` more), the budget `left`.
fn kept(
    reuse: &Reuse,
    (old, new): (&Roles, &Roles),
    (region, grown): (Range<usize>, &[i64]),
    left: usize,
) -> Option<Reuse> {
    let total: i64 = grown.iter().sum();
    let moved_ref = |at: usize| match at >= region.end {
        true => (at as i64 + total) as usize,
        false => at,
    };
    let mut before = 0;
    let instances: Vec<Instance> = reuse
        .instances
        .as_deref()?
        .iter()
        .zip(grown)
        .map(|(i, &more)| {
            let start = (i.field_refs.start as i64 + before) as usize;
            before += more;
            Instance {
                template: new.moved_def(old, i.template),
                field_refs: start..(i.field_refs.end as i64 + before) as usize,
                text_refs: moved_ref(i.text_refs.start)..moved_ref(i.text_refs.end),
                ..i.clone()
            }
        })
        .collect();
    Some(Reuse {
        graph: reuse.graph.clone(),
        plan: None,
        instances: Some(Arc::new(instances)),
        suggestions_left: Some(left),
        task_refs: Some(region.start..moved_ref(region.end)),
        group_pairs: reuse.group_pairs,
    })
}

/// The roles imported files declare, in a set of modules.
struct Roles {
    /// What declaring every role, parameter and template reports.
    collected: Vec<Diagnostic>,
    /// The first of their definitions, and theirs.
    first: usize,
    defs: Vec<Definition>,
    /// Their names, and every role's (where "did you mean" looks).
    names: HashSet<ast::SmolStr>,
    all: Vec<ast::SmolStr>,
    /// The plan's roles they add.
    ir: Vec<ir::Role>,
}

/// The imported roles of `modules` (a root that imports files of roles
/// only, which import nothing); `None` for any other shape.
fn roles(modules: &[Module]) -> Option<Roles> {
    let root = modules.first()?;
    let imports = root
        .ast
        .items
        .iter()
        .filter(|i| matches!(i, TopItem::Import(_)));
    let libraries = &modules[1..];
    let roles_only = libraries.iter().all(|m| {
        m.ast.unparsed.is_empty() && m.ast.items.iter().all(|i| matches!(i, TopItem::Role(_)))
    });
    if imports.count() != 1 || libraries.len() > 1 || !roles_only {
        return None;
    }
    let plan = root.ast.items.iter().find_map(|item| match item {
        TopItem::Plan(plan) => Some(plan),
        _ => None,
    })?;
    let mut items = Vec::new();
    for (index, item) in plan.items.unmoved().enumerate() {
        if matches!(item, PlanItem::Role(_) | PlanItem::Param(_)) {
            items.push(plan.items.get(index)?.clone());
        }
    }
    let plan = ast::Plan {
        span: plan.span,
        name: plan.name.clone(),
        body: plan.body,
        items: items.into(),
    };
    let mut c = Checker::new(root.file, true);
    let decls = Declarations::collect(&mut c, modules, Some(&plan));
    let count: usize = libraries.iter().map(|m| m.ast.items.len()).sum();
    let first = c.symbols.definitions.len().checked_sub(count)?;
    let defs = c.symbols.definitions[first..].to_vec();
    let ir = decls
        .all_roles
        .iter()
        .filter(|(file, _)| *file != root.file)
        .map(|(_, role)| ir::Role {
            id: role.name.name.clone(),
            description: role.description.as_ref().map(ast::Str::template_text),
        })
        .collect::<Vec<_>>();
    if ir.len() != count || defs.iter().any(|d| d.kind() != SymbolKind::Role) {
        return None;
    }
    Some(Roles {
        collected: c.diagnostics,
        first,
        names: defs.iter().map(|d| ast::SmolStr::new(d.name())).collect(),
        defs,
        all: decls.roles.names().map(ast::SmolStr::from).collect(),
        ir,
    })
}

impl Roles {
    /// Where a definition of the last check (`old`'s) stands now.
    fn moved_def(&self, old: &Roles, def: usize) -> usize {
        match def >= old.first + old.defs.len() {
            true => def - old.defs.len() + self.defs.len(),
            false => def,
        }
    }

    /// The "did you mean" among these roles for a name no role has, and
    /// what the search costs.
    fn search(&self, name: &str) -> (Option<ast::SmolStr>, usize) {
        let mut budget = Budget::default();
        let found = budget.closest_among(name, self.all.iter().map(|n| Some(n.as_str())));
        (
            found.map(ast::SmolStr::from),
            SUGGESTION_BUDGET - budget.left(),
        )
    }

    /// What the searches for `unknown` names cost.
    fn spent(&self, unknown: &[(ast::SmolStr, Span)]) -> usize {
        unknown.iter().map(|(name, _)| self.search(name).1).sum()
    }
}

/// The template whose instances' `assignee`s may name the imported roles,
/// and where things stand in the file after the edit.
struct Shape<'m> {
    root: FileId,
    template: &'m ast::Template,
    /// The spans of its uses, in order.
    uses: Vec<Span>,
    /// Per task of the template, in the order an instance adds them: its
    /// `assignee` (the first).
    assignees: Vec<Option<ast::Ident>>,
    /// What one use of the template adds: the instance, its tasks and
    /// steps.
    expansion: u64,
}

impl<'m> Shape<'m> {
    /// The one template of `modules`, of the shape
    /// [`super::template_header::plain`] follows (the plan's tasks are
    /// then its own and the template's).
    fn of(modules: &'m [Module]) -> Option<Shape<'m>> {
        let root = modules.first()?;
        let mut templates = root
            .ast
            .items
            .iter()
            .enumerate()
            .filter_map(|(i, item)| match item {
                TopItem::Template(t) => Some((i, t)),
                _ => None,
            });
        let (top, template) = templates.next()?;
        if templates.next().is_some() || !plain(modules, top) {
            return None;
        }
        let plan = root.ast.items.iter().find_map(|item| match item {
            TopItem::Plan(plan) => Some(plan),
            _ => None,
        })?;
        let mut uses = Vec::new();
        for (index, item) in plan.items.unmoved().enumerate() {
            if let PlanItem::Use(u) = item {
                if u.template.name != template.name.name {
                    return None;
                }
                uses.push(plan.items.span(index));
            }
        }
        let mut assignees = Vec::new();
        let mut steps = 0;
        for item in &template.items {
            steps += u64::from(matches!(item, PlanItem::Step(_)));
            let tasks: Vec<&ast::Task> = match item {
                PlanItem::Task(task) => vec![&**task],
                PlanItem::Step(step) => step
                    .items
                    .iter()
                    .filter_map(|i| match i {
                        StepItem::Task(task) => Some(&**task),
                        _ => None,
                    })
                    .collect(),
                _ => return None,
            };
            for task in tasks {
                let assignee = task.fields.iter().find_map(|f| match f {
                    ast::TaskField::Assignee(a) => Some(a.role()),
                    _ => None,
                });
                // Only the first field of a kind is read.
                assignees.push(assignee);
            }
        }
        Some(Shape {
            root: root.file,
            template,
            uses,
            expansion: 1 + steps + assignees.len() as u64,
            assignees,
        })
    }

    /// Whether a diagnostic's first label lies in the template's body.
    fn in_template_label(&self, d: &Diagnostic) -> bool {
        d.primary()
            .is_some_and(|l| self.in_template(l.file, l.span))
    }

    /// Whether `span` (in the root file) lies in the template's body.
    fn in_template(&self, file: FileId, span: Span) -> bool {
        let body = self.template.body.open.start()..self.template.span.end();
        file == self.root && body.contains(&span.start())
    }
}

/// The `assignee`s of the template that name an imported role, before the
/// edit or after it, each as a name no role had (before) or has (after).
struct Users {
    /// The names and places no role had before the edit, and has not after.
    old: Vec<(ast::SmolStr, Span)>,
    new: Vec<(ast::SmolStr, Span)>,
    /// Per task of the template: the role its `assignee` names after the
    /// edit, among the imported ones (by index in `Roles::defs`).
    resolved: Vec<Option<usize>>,
    /// Per task of the template: whether its `assignee` named an imported
    /// role before the edit.
    was: Vec<bool>,
    /// The unknown roles' diagnostics after the edit.
    diagnostics: Vec<Diagnostic>,
}

impl Users {
    fn of(shape: &Shape<'_>, old: &Roles, new: &Roles, instances: &[Instance]) -> Option<Users> {
        let template_instances = instances.len();
        if template_instances != shape.uses.len() || template_instances == 0 {
            return None;
        }
        let known = |roles: &Roles, name: &str| roles.all.iter().any(|n| n == name);
        let mut users = Users {
            old: Vec::new(),
            new: Vec::new(),
            resolved: Vec::new(),
            was: Vec::new(),
            diagnostics: Vec::new(),
        };
        for assignee in &shape.assignees {
            let Some(role) = assignee else {
                users.resolved.push(None);
                users.was.push(false);
                continue;
            };
            let name = &role.name;
            // Its diagnostic (if any) is made again: a name of the roles
            // imported, or one no role has before or after the edit.
            let ours = old.names.contains(name)
                || new.names.contains(name)
                || !known(old, name)
                || !known(new, name);
            users.was.push(old.names.contains(name));
            users
                .resolved
                .push(new.defs.iter().position(|d| d.name() == *name));
            if !ours {
                continue;
            }
            if !known(old, name) {
                users.old.push((name.clone(), role.span));
            }
            if !known(new, name) {
                users.new.push((name.clone(), role.span));
            }
        }
        for (name, span) in &users.new {
            let (found, _) = new.search(name);
            if found.is_some() {
                return None;
            }
            users
                .diagnostics
                .push(unknown_role(shape.root, name, *span));
        }
        for (name, _) in &users.old {
            if old.search(name).0.is_some() {
                return None;
            }
        }
        Some(users)
    }

    /// Whether the last check's unknown roles are those the template's
    /// `assignee`s of the imported roles' names made (no other: their
    /// searches look among the roles too).
    fn checked_before(
        &self,
        moved: &Checked,
        shape: &Shape<'_>,
        runs: &[Range<usize>],
        (old, new): (&Roles, &Roles),
    ) -> Option<()> {
        let (unknown, elsewhere): (Vec<&Diagnostic>, Vec<&Diagnostic>) = moved
            .diagnostics
            .iter()
            .filter(|d| d.code == Code::UnknownRole)
            .partition(|d| shape.in_template_label(d));
        // Those of the plan's tasks stay when their searches look among
        // the same roles.
        if !elsewhere.is_empty() && old.all != new.all {
            return None;
        }
        let expected: Vec<Diagnostic> = self
            .old
            .iter()
            .map(|(name, span)| unknown_role(shape.root, name, *span))
            .collect();
        let ours = unknown.iter().all(|d| expected.contains(d)) && unknown.len() == expected.len();
        // Every reference to an imported role is one of the template's
        // (what each names, by index: no span read).
        let first = old.first..old.first + old.defs.len();
        let in_runs = |i: usize| {
            let run = runs.partition_point(|run| run.end <= i);
            runs.get(run).is_some_and(|run| run.contains(&i))
        };
        let referenced = moved
            .symbols
            .references
            .unmoved_named()
            .enumerate()
            .any(|(i, r)| first.contains(&(r.definition as usize)) && !in_runs(i));
        (ours && !referenced).then_some(())
    }
}

/// The diagnostic of an `assignee` naming no role, without a "did you
/// mean" (as the lowering reports it).
fn unknown_role(file: FileId, name: &str, span: Span) -> Diagnostic {
    Diagnostic::new(Code::UnknownRole, format!("no role named `{name}`"))
        .label(file, span, "unknown role")
        .help(format!(
            "declare it in the plan: `role {name} \"what this role does\"`"
        ))
}

/// Where each use's references of its tasks' fields stand (in the order
/// of the uses, as the lowering noted them: `Instance::field_refs`), when
/// they stand in `region` one after another and are the template's.
fn runs(
    references: &ir::Shifted<Reference>,
    instances: &[Instance],
    region: Range<usize>,
    shape: &Shape<'_>,
) -> Option<Vec<Range<usize>>> {
    let mut at = region.start;
    let mut runs = Vec::with_capacity(instances.len());
    for instance in instances {
        let run = instance.field_refs.clone();
        if run.start < at || run.end < run.start || run.end > region.end {
            return None;
        }
        if !references
            .range(run.clone())
            .all(|r| shape.in_template(r.file, r.span))
        {
            return None;
        }
        at = run.end;
        runs.push(run);
    }
    Some(runs)
}

/// The references after the edit, in place: every definition after the
/// roles imported before renumbered (as the references are read), and in
/// each use's run those to the roles made again (in the order of its
/// tasks' fields, which is where they stand); with how many more each run
/// has. Only the runs' chunks are copied.
fn referenced(
    references: &mut ir::Shifted<Reference>,
    runs: &[Range<usize>],
    (shape, users): (&Shape<'_>, &Users),
    old: &Roles,
    new: &Roles,
) -> Option<Vec<i64>> {
    let imported = old.first..old.first + old.defs.len();
    let named_before = users.was.iter().filter(|&&was| was).count();
    // The references to the roles imported before are all in the runs
    // (`Users::checked_before`), which are replaced below: they read as
    // they were, the others renumbered.
    let by = new.defs.len() as i64 - old.defs.len() as i64;
    references.renumber(imported.end, by);
    let made: Vec<Reference> = shape
        .assignees
        .iter()
        .zip(&users.resolved)
        .filter_map(|(assignee, resolved)| {
            Some(Reference {
                definition: (new.first + (*resolved)?) as u32,
                file: shape.root,
                span: assignee.as_ref()?.span,
            })
        })
        .collect();
    let mut grown = Vec::with_capacity(runs.len());
    // The last first: the runs before it stay where they are.
    for run in runs.iter().rev() {
        let mut all: Vec<Reference> = references.range(run.clone()).collect();
        all.retain(|r| !imported.contains(&(r.definition as usize)));
        if all.len() + named_before != run.len() {
            return None;
        }
        if named_before > 0 || !made.is_empty() {
            all.extend_from_slice(&made);
            all.sort_by_key(|r| r.span.start());
            references.replace(run.clone(), all);
        }
        grown.push(made.len() as i64 - named_before as i64);
    }
    grown.reverse();
    Some(grown)
}

/// The check's diagnostics after the edit: the unknown roles of the
/// template's `assignee`s made again.
fn diagnostics(moved: &[Diagnostic], users: &Users, shape: &Shape<'_>) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = moved
        .iter()
        .filter(|d| d.code != Code::UnknownRole || !shape.in_template_label(d))
        .cloned()
        .collect();
    out.extend(users.diagnostics.iter().cloned());
    in_order(&mut out);
    out
}
