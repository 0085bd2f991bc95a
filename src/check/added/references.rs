//! The references after a task is added to a step or taken out of it
//! ([`super::added`]): the old list renumbered as it is read, the task's
//! own and those to the task taken out left out, the new task's put in.

use super::{within, Own, Place};
use crate::check::edited::{insert_at, used_by, used_elsewhere};
use crate::check::lower::{Unknown, Unresolved};
use crate::check::{Checked, PlanReuse};
use crate::ir::{self, SymbolKind};
use crate::span::Span;
use crate::syntax::ast;

/// The references after the edit, and where the tasks' fields' and the
/// tasks' strings' stand among them.
pub(super) struct References {
    pub(super) list: ir::Shifted<ir::Reference>,
    pub(super) tasks: std::ops::Range<usize>,
    pub(super) texts: std::ops::Range<usize>,
    /// The spans (in the old text) of the references to the task's step.
    pub(super) to_step: Vec<Span>,
    /// How many references name a step (counted for a task added).
    pub(super) to_steps: u64,
    /// The references to the task taken out, which name nothing now.
    pub(super) dangling: Vec<Dangling>,
    /// The indices (in the old list) of the task taken out's references.
    pub(super) inside: Vec<usize>,
}

/// A reference to the task taken out: where it stood in the old text, and
/// whether a step's `after` gave it (else a task's).
pub(super) struct Dangling {
    pub(super) span: Span,
    pub(super) step: bool,
}

impl References {
    /// The old references moved and renumbered, the task's out (`gone`:
    /// its span); the new task's are put in by [`insert`](Self::insert).
    /// No reference is copied but in the chunks that lose one and the
    /// chunk the edit reaches into: the list is renumbered as it is read
    /// ([`ir::Shifted::renumber`]), and what each reference names is read
    /// as stored ([`ir::Shifted::unmoved_named`]).
    pub(super) fn moved(
        previous: &Checked,
        kept: &PlanReuse,
        place: &Place,
        (map, window): (&impl Fn(Span) -> Option<Span>, ir::Window),
        gone: Option<Span>,
    ) -> Option<References> {
        let old = &previous.symbols.references;
        let file = place.file;
        let (inside, mut in_tasks, in_texts) = match gone {
            Some(span) => own_references(old, kept, file, span)?,
            None => (Vec::new(), 0, 0),
        };
        // What the others name: the task taken out (those name nothing
        // now), its step, a step (which definitions are steps read as
        // stored: kinds do not move; counted for a task added only).
        let steps: Vec<bool> = match place.added {
            true => (previous.symbols.definitions.unmoved())
                .map(|d| d.kind() == SymbolKind::Step)
                .collect(),
            false => Vec::new(),
        };
        let (mut to_step, mut to_steps) = (Vec::new(), 0);
        let mut dangling = Vec::new();
        let mut dropped = inside.clone();
        for (i, r) in old.unmoved_named().enumerate() {
            let d = r.definition as usize;
            // (A task added has no references of its own yet.)
            to_steps += u64::from(steps.get(d) == Some(&true));
            // The task taken out's own references are few: looked for only
            // where one names what is looked for.
            let gone_to = !place.added && d == place.definition;
            if (!gone_to && d != place.step_definition) || inside.binary_search(&i).is_ok() {
                continue;
            }
            if gone_to {
                // An `after` that names the task taken out: a step's (before
                // the tasks' references) or a task's.
                let step = i < kept.task_references.start;
                match kept.task_references.contains(&i) {
                    true => in_tasks += 1,
                    false if step => {}
                    false => return None,
                }
                dangling.push(Dangling {
                    span: old.get(i)?.span,
                    step,
                });
                dropped.push(i);
                continue;
            }
            to_step.push(old.get(i)?.span);
        }
        dropped.sort_unstable();
        let mut list = old.clone();
        list.remove(&dropped);
        match place.added {
            true => list.renumber(place.definition, 1),
            false => list.renumber(place.definition + 1, -1),
        }
        let list = list.moved(file, window, map)?;
        let in_steps = dangling.iter().filter(|d| d.step).count();
        let tasks_start = kept.task_references.start - in_steps;
        let tasks = tasks_start..kept.task_references.end - in_steps - in_tasks;
        let texts_start = kept.texts_references.start - in_steps - in_tasks;
        let texts = texts_start..kept.texts_references.end - in_steps - in_tasks - in_texts;
        Some(References {
            list,
            tasks,
            texts,
            to_step,
            to_steps,
            dangling,
            inside,
        })
    }

    /// `Some` when which roles and parameters are referenced stays as it
    /// was: each the task named or names is named outside it too.
    pub(super) fn used_as_before(
        &self,
        previous: &Checked,
        place: &Place,
        own: Option<&Own>,
    ) -> Option<()> {
        let inside = &self.inside;
        let (old, definitions) = (&previous.symbols.references, &previous.symbols.definitions);
        let was = used_by(inside.iter().filter_map(|&i| old.get(i)), &[], definitions);
        let now = match own {
            Some(own) => used_by(
                own.references.iter().copied(),
                &own.text_references,
                definitions,
            ),
            None => Vec::new(),
        };
        // Roles and parameters are defined before the plan's steps and
        // tasks: their indices do not move.
        let before = |used: &[usize]| used.iter().all(|&d| d < place.step_definition);
        (before(&was) && before(&now) && used_elsewhere(old, inside, &was, &now)).then_some(())
    }

    /// The names the references to the task taken out give, unresolved
    /// now (each with whether a step's `after` gave it).
    pub(super) fn dangling_names(
        &self,
        place: &Place,
        map: &impl Fn(Span) -> Option<Span>,
        task: &ast::Task,
    ) -> Option<Vec<(Unresolved, bool)>> {
        let file = place.file;
        self.dangling
            .iter()
            .map(|d| {
                let name = ast::Ident {
                    name: task.name.name.clone(),
                    span: map(d.span)?,
                };
                let kind = Unknown::TaskOrStep {
                    prefix: ast::SmolStr::default(),
                };
                Some((Unresolved { file, name, kind }, d.step))
            })
            .collect()
    }

    /// The new task's references put in their places.
    pub(super) fn insert(&mut self, own: &Own) {
        let Some(span) = own.references.iter().chain(&own.text_references).next() else {
            return;
        };
        let at = span.span;
        let added = own.references.len();
        insert_at(&mut self.list, &self.tasks, at, own.references.clone());
        self.tasks.end += added;
        self.texts = (self.texts.start + added)..(self.texts.end + added);
        let added = own.text_references.len();
        insert_at(&mut self.list, &self.texts, at, own.text_references.clone());
        self.texts.end += added;
    }
}

/// The task taken out's own references (it stood at `span`), in the
/// chunks whose spans reach into it, and how many of them its fields and
/// its strings gave; `None` if another reference lies there (not
/// followed).
fn own_references(
    old: &ir::Shifted<ir::Reference>,
    kept: &PlanReuse,
    file: crate::span::FileId,
    span: Span,
) -> Option<(Vec<usize>, usize, usize)> {
    let (mut inside, mut in_tasks, mut in_texts) = (Vec::new(), 0, 0);
    let mut start = 0;
    for chunk in old.chunk_refs() {
        let reaches = chunk
            .extent(file)
            .is_some_and(|e| e.start() <= span.end() && span.start() <= e.end());
        if reaches {
            for (at, r) in chunk.iter().enumerate() {
                if r.file != file || !within(span, r.span) {
                    continue;
                }
                let i = start + at;
                match kept.task_references.contains(&i) {
                    true => in_tasks += 1,
                    false if kept.texts_references.contains(&i) => in_texts += 1,
                    false => return None,
                }
                inside.push(i);
            }
        }
        start += chunk.len();
    }
    Some((inside, in_tasks, in_texts))
}
