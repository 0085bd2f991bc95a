//! Compiling a new text of a file from the compilation of its old text, as
//! an editor does at each keystroke.
//!
//! The item the edit falls in is parsed again ([`syntax::reparse`]), not the
//! file. Then:
//!
//! - an edit inside the text of strings or comments (same names, references
//!   and shape) changes no name, so nothing is checked again: what the check
//!   found moves with the text ([`Compilation::retext`]), and the edited
//!   tasks' strings are interpolated again (a step's title renames its IR
//!   step);
//! - an edit that changes only what could not be parsed in the item (its
//!   tree the same: a word typed where a task is about to be) is not
//!   checked again either, when nothing the check found depends on unparsed
//!   text and no name is unresolved ([`Compilation::resyntaxed`]);
//! - an edit of a task's own name, when nothing names the old name or the
//!   new one (the name of a task being typed) and the file has no
//!   templates and no syntax errors, is not checked again either: no
//!   reference, edge or search of the check can see the name, so what it
//!   found moves with the text as above, with the one definition and the
//!   plan's task renamed ([`Compilation::renaming`] says when);
//! - a rename that something sees (references to either name) moves what
//!   the check found with the text and checks again only what names the
//!   old or the new name ([`check::rename`]), where that follows it;
//! - an edit inside one task that keeps its name (the re-read item is the
//!   task, or a step where nothing else changed) checks that task again
//!   alone and remakes what depends on it ([`check::edited`]), where that
//!   follows it;
//! - any other edit is checked again over the new tree, with the imported
//!   files as they were read before, reusing the dependency graph's last
//!   reduction where the edit cannot have changed it. The check is one pass
//!   over names and the dependency graph (declarations, references, cycles,
//!   "did you mean" searches spent in source order, caps per code).
//!
//! Where the edit cannot be bounded (it crosses items, changes imports, or
//! meets a limit) the file is compiled whole. Every path gives what
//! [`compile_shared_with`] gives for the new text; a differential test over
//! random edit sequences holds them to it.

use std::collections::HashMap;
use std::sync::Arc;

use super::{assemble, compile_shared_with, Compilation, Parts};
use crate::check::{self, Checked};
use crate::diagnostic::{Code, Diagnostic};
use crate::ir;
use crate::modules::{FsLoader, Loader, Module};
use crate::span::{SourceMap, Span};
use crate::syntax::ast::{self, PlanItem, StepItem, TopItem};
use crate::syntax::{self, Edit, Place, Reparsed};

mod added;
mod import_edit;
mod moved;
mod step_items;
mod step_rename;
mod template_header;
mod template_text;
#[cfg(test)]
mod tests;

impl Compilation {
    /// Compiles `text`, a new text of the root file, reusing what the change
    /// from the old text leaves as it was; imports that must be read again
    /// are read from the file system relative to the file's name.
    pub fn recompile(&self, text: Arc<str>) -> Compilation {
        let name = self.sources.get(self.file).name.clone();
        self.recompile_with(text, &FsLoader::for_file(&name))
    }

    /// Like [`Compilation::recompile`], reading imports through `loader`
    /// when the file must be compiled whole.
    pub fn recompile_with(&self, text: Arc<str>, loader: &dyn Loader) -> Compilation {
        self.recompile_edited_with(text, None, loader)
    }

    /// Like [`Compilation::recompile`], told where the text changed: `edit`
    /// (the bytes `start..old_end` of the old text became `start..new_end`
    /// of `text`, as an editor's change says) spares comparing the whole
    /// texts to find it. It must hold (the rest of the two texts the same);
    /// without it the texts are compared ([`Edit::between`]).
    pub fn recompile_edited(&self, text: Arc<str>, edit: Option<Edit>) -> Compilation {
        let name = self.sources.get(self.file).name.clone();
        self.recompile_edited_with(text, edit, &FsLoader::for_file(&name))
    }

    /// [`Compilation::recompile_edited`], reading imports through `loader`
    /// when the file must be compiled whole.
    pub fn recompile_edited_with(
        &self,
        text: Arc<str>,
        edit: Option<Edit>,
        loader: &dyn Loader,
    ) -> Compilation {
        let root = self.sources.get(self.file);
        if self.parts.json {
            return super::compile_json(&root.name, text);
        }
        let edit = edit
            .and_then(|edit| edit.narrowed(&root.text, &text))
            .unwrap_or_else(|| Edit::between(&root.text, &text));
        let reparsed = syntax::reparse(
            self.syntax(),
            &self.parts.root_syntax,
            &text,
            edit,
            self.file,
        );
        let Some(reparsed) = reparsed.map(Box::new) else {
            let outside = self
                .header_recompiled(&text, edit)
                .or_else(|| self.import_recompiled(&text, edit, loader));
            if let Some(compilation) = outside {
                return compilation;
            }
            return compile_shared_with(&root.name, text, &self.parts.options, loader);
        };
        let mut sources = self.sources.clone();
        sources.set_text(self.file, text);
        let rename = match reparsed.text_only {
            true => None,
            false => self.renaming(&reparsed),
        };
        let reparsed = match &rename {
            _ if reparsed.text_only => self
                .template_retexted(reparsed, edit, sources.clone())
                .or_else(|r| self.retext(r, edit, sources.clone(), None)),
            Some(rename) if !rename.seen => {
                self.retext(reparsed, edit, sources.clone(), Some(rename))
            }
            Some(rename) => self.rename_checked(reparsed, edit, sources.clone(), rename),
            None if reparsed.same_shape => self.resyntaxed(reparsed, edit, sources.clone()),
            None => Err(reparsed),
        };
        let reparsed = reparsed.or_else(|r| self.step_renamed(r, edit, sources.clone()));
        match reparsed {
            Ok(compilation) => compilation,
            Err(reparsed) => self.recheck(*reparsed, edit, sources),
        }
    }

    /// The parts of a compilation of the new text: its syntax errors, those
    /// of loading its imports (moved), and the options as they were.
    fn parts_with(&self, root_syntax: Vec<Diagnostic>, loading: Vec<Diagnostic>) -> Parts {
        Parts {
            root_syntax,
            loading,
            options: self.parts.options.clone(),
            json: false,
        }
    }

    /// Whether the text before or after the edit has a syntax error
    /// (unparsed text could hide a name), as the rename paths refuse.
    fn syntax_errors_around(&self, reparsed: &Reparsed) -> bool {
        !reparsed.parsed.diagnostics.is_empty()
            || !self.parts.root_syntax.is_empty()
            || !self.syntax().unparsed.is_empty()
            || !reparsed.parsed.file.unparsed.is_empty()
    }

    /// The root module with a new tree, and the imported ones as they were.
    fn modules_with(&self, tree: ast::File) -> Vec<Module> {
        let root = &self.modules[0];
        let mut modules = Vec::with_capacity(self.modules.len());
        modules.push(Module {
            file: root.file,
            path: root.path.clone(),
            ast: tree,
            imports: root.imports.clone(),
        });
        modules.extend(self.modules[1..].iter().cloned());
        modules
    }

    /// Checks the re-read tree: only the edited task, if the edit stays
    /// inside one task and keeps its name ([`check::edited`]), else whole.
    fn recheck(&self, reparsed: Reparsed, edit: Edit, sources: SourceMap) -> Compilation {
        let moved = |span: Span| Some(edit.map_span(span));
        let loading: Vec<Diagnostic> = self
            .parts
            .loading
            .iter()
            .filter_map(|d| d.moved(self.file, &moved))
            .collect();
        let items = match (
            syntax::item_at(self.syntax(), reparsed.place),
            syntax::item_at(&reparsed.parsed.file, reparsed.place),
        ) {
            (Some(old), Some(new)) => Some((old, new)),
            _ => None,
        };
        let (tasks, step_task) = match &items {
            Some((old, new)) => match syntax::edited_task(old, new, edit) {
                Some(tasks) => (Some(tasks), None),
                None => (None, syntax::step_task(old, new)),
            },
            _ => (None, None),
        };
        let old_span = reparsed.old_span;
        let parts = self.parts_with(reparsed.parsed.diagnostics, loading);
        let modules = self.modules_with(reparsed.parsed.file);
        let edited = tasks.and_then(|(old, new)| {
            let task = check::edited::EditedTask {
                old: &old,
                new: &new,
            };
            self.edited(&task, edit, (&modules, &sources))
        });
        let edited = edited.or_else(|| {
            let change = step_task.as_ref()?;
            self.step_task_checked(change, edit, old_span, (&modules, &sources))
        });
        // A step's own `after`s or `sequential` changed (a new task's body
        // opened or closed around them), with at most one of its tasks.
        let edited = edited.or_else(|| {
            let (old, new) = items.as_ref()?;
            let change = syntax::step_items(old, new)?;
            self.step_items_checked(&change, edit, old_span, (&modules, &sources))
        });
        match edited {
            Some(checked) => Compilation {
                diagnostics: super::gathered(&parts, &checked),
                sources,
                file: self.file,
                modules,
                checked,
                parts: Arc::new(parts),
            },
            None => assemble(sources, modules, parts, Some(&self.checked)),
        }
    }

    /// The check after an edit inside one task that keeps its name, from
    /// this one: `None` where [`check::edited`] does not follow the edit,
    /// or the file has templates or does not record references.
    fn edited(
        &self,
        task: &check::edited::EditedTask<'_>,
        edit: Edit,
        (modules, sources): (&[Module], &SourceMap),
    ) -> Option<Checked> {
        let options = &self.parts.options;
        let simple = !options.skip_references && !options.skip_plan;
        if !simple || task.old.name != task.new.name || self.modules.iter().any(has_templates) {
            return None;
        }
        // Inside the task, only its name and its whole span move (what
        // else it made is made again).
        let (old, new) = (task.old, task.new);
        let old_span = old.span;
        // Most spans lie after the task and the edit: they move by as much.
        let after = old_span.end().max(edit.old_end);
        let by = edit.new_end as i64 - edit.old_end as i64;
        let map = |span: Span| -> Option<Span> {
            if span.start() >= after {
                return Some(span.shifted(by));
            }
            let outside = span.end() <= old_span.start() || span.start() >= old_span.end();
            let around = span.start() < old_span.start() && span.end() > old_span.end();
            if outside || around {
                Some(edit.map_span(span))
            } else if span == old.name.span {
                Some(new.name.span)
            } else if span == old.span {
                Some(new.span)
            } else {
                None
            }
        };
        let map = (&map, after, by);
        check::edited::edited(&self.checked, map, (modules, sources), self.file, task)
    }

    /// Whether the edit renames one task and changes nothing else that the
    /// check could see: the task's own name is all that differs in the
    /// re-read item; neither name is defined elsewhere or referenced (no
    /// reference to the task, no `unknown_ref`, so no "did you mean" search
    /// over the names either); no diagnostic lies in the task or quotes
    /// either name (a cycle's message names every task of its path); no
    /// template or instance (whose expansion
    /// could name it); no syntax error before or after (unparsed text could
    /// hide a name). References must have been recorded to tell.
    fn renaming(&self, reparsed: &Reparsed) -> Option<Rename> {
        let old_tree = self.syntax();
        let new_tree = &reparsed.parsed.file;
        let syntax_errors = self.syntax_errors_around(reparsed);
        if syntax_errors
            || self.parts.options.skip_references
            || self.modules.iter().any(has_templates)
        {
            return None;
        }
        let (Some(PlanItem::Task(old)), Some(PlanItem::Task(new))) = (
            syntax::item_at(old_tree, reparsed.place),
            syntax::item_at(new_tree, reparsed.place),
        ) else {
            return None;
        };
        if old.name.name == new.name.name || !syntax::same_but_name(&old, &new) {
            return None;
        }
        let symbols = &self.checked.symbols;
        let mut definition = None;
        let (old_name, new_name) = (old.name.name.as_str(), new.name.name.as_str());
        // By name, as stored; the span of the one named `old` as it stands.
        let definitions = &symbols.definitions;
        for (index, d) in definitions.unmoved().enumerate() {
            let name = d.name();
            if check::same_name(name, new_name) {
                return None;
            }
            if check::same_name(name, old_name) {
                let span = definitions.get(index).map(|d| d.span());
                let this = d.kind() == ir::SymbolKind::Task
                    && d.file() == self.file
                    && span == Some(old.name.span);
                if !this || definition.replace(index).is_some() {
                    return None;
                }
            }
        }
        let definition = definition?;
        let referenced = symbols
            .references
            .unmoved_named()
            .any(|r| r.definition as usize == definition);
        let old_span = reparsed.old_span;
        let in_task = |d: &Diagnostic| {
            d.labels.iter().any(|l| {
                l.file == self.file
                    && l.span.start() < old_span.end()
                    && l.span.end() > old_span.start()
            })
        };
        let unknown = self.diagnostics.iter().any(|d| d.code == Code::UnknownRef);
        // A cycle's or a redundant dependency's message names the tasks of
        // its path, wherever its labels stand (a step's `sequential` makes
        // edges no reference names).
        let quoted = |d: &Diagnostic| d.quotes(&old.name.name) || d.quotes(&new.name.name);
        let seen =
            referenced || unknown || self.diagnostics.iter().any(|d| in_task(d) || quoted(d));
        Some(Rename {
            definition,
            old: old.name.name.clone(),
            new: new.name.name.clone(),
            seen,
        })
    }

    /// After a rename that something sees (a reference to either name, or a
    /// diagnostic in the task): what the check found, moved with the text,
    /// and what names either name checked again ([`check::rename`]); the
    /// re-read file back where that does not follow the rename.
    fn rename_checked(
        &self,
        reparsed: Box<Reparsed>,
        edit: Edit,
        sources: SourceMap,
        rename: &Rename,
    ) -> Result<Compilation, Box<Reparsed>> {
        let checked = self.mover(&reparsed, edit).and_then(|map| {
            let (moved, loading) = self.moved_analysis(&reparsed, (&map, edit), Some(rename))?;
            let plan = reparsed
                .parsed
                .file
                .items
                .iter()
                .find_map(|item| match item {
                    TopItem::Plan(plan) => Some(plan),
                    _ => None,
                })?;
            let renamed = check::rename::Renamed {
                definition: rename.definition,
                old: &rename.old,
                new: &rename.new,
                item: reparsed.old_span,
            };
            let checked =
                check::rename::renamed(&self.checked, moved, &map, plan, self.file, &renamed)?;
            Some((checked, loading))
        });
        let Some((checked, loading)) = checked else {
            return Err(reparsed);
        };
        let parts = self.parts_with(reparsed.parsed.diagnostics, loading);
        Ok(Compilation {
            diagnostics: super::gathered(&parts, &checked),
            sources,
            file: self.file,
            modules: self.modules_with(reparsed.parsed.file),
            checked,
            parts: Arc::new(parts),
        })
    }

    /// After an edit inside the text of strings or comments, or a lone
    /// rename: what the check found, moved with the text; the re-read file
    /// back where that cannot be told without checking again.
    fn retext(
        &self,
        reparsed: Box<Reparsed>,
        edit: Edit,
        sources: SourceMap,
        rename: Option<&Rename>,
    ) -> Result<Compilation, Box<Reparsed>> {
        let moved = self.mover(&reparsed, edit).and_then(|map| {
            let (checked, loading) = self.moved_kept(&reparsed, edit, &map, rename)?;
            let diagnostics = self
                .diagnostics
                .iter()
                .map(|d| d.moved(self.file, &map))
                .collect::<Option<_>>()?;
            Some((checked, diagnostics, loading))
        });
        match moved {
            Some((checked, diagnostics, loading)) => {
                let parts = self.parts_with(reparsed.parsed.diagnostics, loading);
                Ok(Compilation {
                    sources,
                    file: self.file,
                    modules: self.modules_with(reparsed.parsed.file),
                    checked,
                    diagnostics,
                    parts: Arc::new(parts),
                })
            }
            None => Err(reparsed),
        }
    }

    /// Moves a span of the old text to the new one, after an edit that left
    /// the re-read item's shape as it was; `None` for a span inside the item
    /// that is not one of its own.
    fn mover<'s>(
        &self,
        reparsed: &Reparsed,
        edit: Edit,
    ) -> Option<impl Fn(Span) -> Option<Span> + 's> {
        let (old_span, place) = (reparsed.old_span, reparsed.place);
        let old_item = syntax::item_at(self.syntax(), place)?;
        let new_item = syntax::item_at(&reparsed.parsed.file, place)?;
        // The item's spans, old to new (the shapes are the same).
        let inside: HashMap<Span, Span> = syntax::spans(&old_item)
            .into_iter()
            .zip(syntax::spans(&new_item))
            .collect();
        let by = edit.new_end as i64 - edit.old_end as i64;
        Some(move |span: Span| -> Option<Span> {
            // Most spans lie after the item (they move) or before it.
            if span.start() >= old_span.end() {
                return Some(span.shifted(by));
            }
            if span.end() <= old_span.start() {
                return Some(span);
            }
            let outside = span.end() <= old_span.start() || span.start() >= old_span.end();
            let around = span.start() < old_span.start() && span.end() > old_span.end();
            if outside || around {
                Some(edit.map_span(span))
            } else {
                inside.get(&span).copied()
            }
        })
    }

    /// After an edit that changed only what could not be parsed in the
    /// re-read item (its tree the same but for where it stands and the text
    /// of its strings; a word typed where a new task is about to be, say):
    /// what the check found moves with the text, as after an edit of the
    /// text of strings, when nothing it found depends on unparsed text and no
    /// name went unresolved ([`check::edited::unparsed_only`]); the syntax
    /// errors are the re-read item's.
    fn resyntaxed(
        &self,
        reparsed: Box<Reparsed>,
        edit: Edit,
        sources: SourceMap,
    ) -> Result<Compilation, Box<Reparsed>> {
        let options = &self.parts.options;
        let simple = !options.skip_references && !options.skip_plan;
        let root = (self.file, reparsed.parsed.file.unparsed.as_slice());
        let followed = simple
            && !self.modules.iter().any(has_templates)
            && check::edited::unparsed_only(&self.checked, root, &self.modules[1..], &sources);
        let moved = followed
            .then(|| self.mover(&reparsed, edit))
            .flatten()
            .and_then(|map| self.moved_kept(&reparsed, edit, &map, None));
        let Some((checked, loading)) = moved else {
            return Err(reparsed);
        };
        let Reparsed { parsed, .. } = *reparsed;
        let parts = self.parts_with(parsed.diagnostics, loading);
        Ok(Compilation {
            diagnostics: super::gathered(&parts, &checked),
            sources,
            file: self.file,
            modules: self.modules_with(parsed.file),
            checked,
            parts: Arc::new(parts),
        })
    }

    /// [`Compilation::moved_analysis`] with what the check keeps for the
    /// next moved too: the graph is as it was, what the plan kept moves.
    fn moved_kept(
        &self,
        reparsed: &Reparsed,
        edit: Edit,
        moved: &impl Fn(Span) -> Option<Span>,
        rename: Option<&Rename>,
    ) -> Option<(Checked, Vec<Diagnostic>)> {
        let (mut checked, loading) = self.moved_analysis(reparsed, (moved, edit), rename)?;
        checked.reuse = self.checked.reuse.moved(self.file, moved, edit.start);
        Some((checked, loading))
    }

    /// What the check found and the loading diagnostics, moved with the text
    /// by `moved` (from [`Compilation::mover`]) after an edit that left the
    /// re-read item's shape as it was, the plan's texts made again; what the
    /// check keeps for the next ([`check::Reuse`]) is the caller's to make.
    fn moved_analysis(
        &self,
        reparsed: &Reparsed,
        (moved, edit): (&impl Fn(Span) -> Option<Span>, Edit),
        rename: Option<&Rename>,
    ) -> Option<(Checked, Vec<Diagnostic>)> {
        let plan = match &self.checked.plan {
            Some(plan) => Some(retext_plan(plan, self.syntax(), reparsed, rename)?),
            None => None,
        };
        let renamed = rename.map(|rename| (rename.definition, &rename.new));
        let window = moved::window(reparsed.old_span, edit);
        self.moved_checked((moved, window), renamed, plan)
    }
}

/// A task's own name, changed.
struct Rename {
    /// The task's definition, by index in [`ir::Symbols::definitions`].
    definition: usize,
    old: ast::SmolStr,
    new: ast::SmolStr,
    /// Whether anything the check found could see the name: a reference to
    /// the task, a name no reference resolves (so a "did you mean" search
    /// over the names), a diagnostic in the task (whose message could quote
    /// its name), or one that quotes either name.
    seen: bool,
}

/// Whether a module declares a template or a plan of it uses one.
fn has_templates(module: &Module) -> bool {
    module.ast.items.iter().any(|item| match item {
        TopItem::Template(_) => true,
        TopItem::Plan(plan) => plan.items.unmoved().any(|i| matches!(i, PlanItem::Use(_))),
        _ => false,
    })
}

/// The plan with the strings of the re-read item's tasks interpolated
/// again; `None` unless the item is in the file's plan and the plan's tasks
/// are its own (no template instances), one to one with the tree's.
fn retext_plan(
    plan: &ir::Plan,
    old: &ast::File,
    reparsed: &Reparsed,
    rename: Option<&Rename>,
) -> Option<ir::Plan> {
    let (old_plan, new_plan) = own_plans(plan, old, reparsed)?;
    let (first, edited) = edited_tasks(old_plan, new_plan, reparsed.place)?;
    let mut plan = plan.clone();
    for (offset, task) in edited.into_iter().enumerate() {
        let ir_task = Arc::make_mut(plan.tasks.get_mut(first + offset)?);
        match rename {
            Some(rename) if ir_task.key() == rename.old && task.name.name == rename.new => {
                ir_task.set_key(&rename.new);
            }
            _ if ir_task.key() != task.name.name => return None,
            _ => {}
        }
        retitle(ir_task, task, &plan.params)?;
    }
    if let (PlanItem::Step(step), None) =
        (&new_plan.items[reparsed.place.item], reparsed.place.task)
    {
        // The step's title names the IR step.
        let index = old_plan
            .items
            .unmoved()
            .take(reparsed.place.item)
            .filter(|item| matches!(item, PlanItem::Step(_)))
            .count();
        let ir_step = plan.steps.get_mut(index)?;
        if ir_step.id != step.name.name {
            return None;
        }
        ir_step.name = match &step.title {
            Some(title) => check::interpolated(&plan.params, title, |_| Some(()))?,
            None => step.name.name.to_string(),
        };
    }
    Some(plan)
}

/// The file's plan before the edit and after it, if the edit is in it and
/// its tasks are one to one with the IR plan's (no template instances).
fn own_plans<'a>(
    plan: &ir::Plan,
    old: &'a ast::File,
    reparsed: &'a Reparsed,
) -> Option<(&'a ast::Plan, &'a ast::Plan)> {
    let top = reparsed.place.top;
    let first_plan = old
        .items
        .iter()
        .position(|item| matches!(item, TopItem::Plan(_)))?;
    let (TopItem::Plan(old_plan), TopItem::Plan(new_plan)) =
        (&old.items[top], &reparsed.parsed.file.items[top])
    else {
        return None;
    };
    let instances = old_plan
        .items
        .unmoved()
        .any(|item| matches!(item, PlanItem::Use(_)));
    let total: usize = old_plan.items.unmoved().map(tasks_in).sum();
    (top == first_plan && !instances && total == plan.tasks.len()).then_some((old_plan, new_plan))
}

/// The number of tasks an item of a plan body holds.
fn tasks_in(item: &PlanItem) -> usize {
    match item {
        PlanItem::Task(_) => 1,
        PlanItem::Step(step) => step
            .items
            .iter()
            .filter(|i| matches!(i, StepItem::Task(_)))
            .count(),
        _ => 0,
    }
}

/// The index of the first task the re-read item holds in the plan, and the
/// tasks it holds after the edit.
fn edited_tasks<'a>(
    old_plan: &ast::Plan,
    new_plan: &'a ast::Plan,
    place: Place,
) -> Option<(usize, Vec<&'a ast::Task>)> {
    let mut first = old_plan
        .items
        .unmoved()
        .take(place.item)
        .map(tasks_in)
        .sum::<usize>();
    let edited = match (
        &new_plan.items[place.item],
        &old_plan.items[place.item],
        place.task,
    ) {
        (PlanItem::Task(task), _, None) => vec![&**task],
        (PlanItem::Step(step), _, Some(index)) => {
            first += step.items[..index]
                .iter()
                .filter(|i| matches!(i, StepItem::Task(_)))
                .count();
            match &step.items[index] {
                StepItem::Task(task) => vec![&**task],
                _ => return None,
            }
        }
        (PlanItem::Step(step), PlanItem::Step(_), None) => step
            .items
            .iter()
            .filter_map(|i| match i {
                StepItem::Task(task) => Some(&**task),
                _ => None,
            })
            .collect(),
        _ => return None,
    };
    Some((first, edited))
}

/// Gives an IR task the strings of its task as re-read: the title, and the
/// first reasoning and description.
fn retitle(ir_task: &mut ir::Task, task: &ast::Task, params: &[ir::ParamValue]) -> Option<()> {
    let (mut reasoning, mut description) = (None, None);
    for field in &task.fields {
        match field {
            ast::TaskField::Reasoning(f) if reasoning.is_none() => reasoning = Some(&f.value),
            ast::TaskField::Description(f) if description.is_none() => {
                description = Some(&f.value);
            }
            _ => {}
        }
    }
    // `None` if a string names a parameter without a value.
    let text = |s: Option<&ast::Str>| match s {
        Some(s) => check::interpolated(params, s, |_| Some(())).map(Some),
        None => Some(None),
    };
    let (name, reasoning, description) = (
        check::interpolated(params, &task.title, |_| Some(()))?,
        text(reasoning)?,
        text(description)?,
    );
    ir_task.set_texts(name, reasoning, description);
    Some(())
}
