//! What the check found, moved with the text after an edit that leaves
//! the plan's structure as it was: the paths of a step renamed and of a
//! template's text edited start from it.

use std::collections::HashMap;

use super::has_templates;
use crate::check::Checked;
use crate::compile::Compilation;
use crate::diagnostic::Diagnostic;
use crate::ir::{self, Window};
use crate::span::Span;
use crate::syntax::{ast, Edit};

/// What a [`Compilation::mover`] does to the spans before and after the
/// re-read item (`old_span`, in the old text): those before it stay,
/// those after it move by as much as the text grew.
pub(super) fn window(old_span: Span, edit: Edit) -> Window {
    Window {
        keep_until: old_span.start(),
        shift_from: old_span.end(),
        by: edit.new_end as i64 - edit.old_end as i64,
    }
}

/// The spans of a re-read step (which stood at `old_span`) old to new, for
/// a change that keeps some of its items (`kept`: their spans, old and
/// new): those after the step move by as much as the text grew, those
/// before it stay, those around it (the plan's) follow the edit, and of
/// those inside it only `kept`'s have a new span.
pub(super) fn step_spans(
    kept: &[(Span, Span)],
    edit: Edit,
    old_span: Span,
) -> impl Fn(Span) -> Option<Span> {
    let inside: HashMap<Span, Span> = kept.iter().copied().collect();
    let by = edit.new_end as i64 - edit.old_end as i64;
    move |span: Span| -> Option<Span> {
        if span.start() >= old_span.end() {
            return Some(span.shifted(by));
        }
        if span.end() <= old_span.start() {
            return Some(span);
        }
        let around = span.start() < old_span.start() && span.end() >= old_span.end();
        match around {
            true => Some(edit.map_span(span)),
            false => inside.get(&span).copied(),
        }
    }
}

impl Compilation {
    /// Whether a re-read step's change may be checked from the last check:
    /// the compilation records references and keeps its plan, and no file
    /// has templates (whose instances a step's tasks could be).
    pub(super) fn follows_step_changes(&self) -> bool {
        let options = &self.parts.options;
        !options.skip_references && !options.skip_plan && !self.modules.iter().any(has_templates)
    }

    /// What the check found and the loading diagnostics, moved with the
    /// text by `moved` (from [`Compilation::mover`]), with the plan as it
    /// was and `renamed`'s definition given its new name; what the check
    /// keeps for the next ([`check::Reuse`]) is the caller's to make.
    pub(super) fn moved_with_plan(
        &self,
        moved: &impl Fn(Span) -> Option<Span>,
        window: Window,
        renamed: Option<(usize, &ast::SmolStr)>,
    ) -> Option<(Checked, Vec<Diagnostic>)> {
        self.moved_checked((moved, window), renamed, self.checked.plan.clone())
    }

    /// What the check found and the loading diagnostics, moved with the
    /// text by `moved` (which `window` says what it does to most spans:
    /// [`window`]), with `plan` and `renamed`'s definition given its new
    /// name (the one mover of every path that reuses the last check).
    pub(super) fn moved_checked(
        &self,
        (moved, window): (&impl Fn(Span) -> Option<Span>, Window),
        renamed: Option<(usize, &ast::SmolStr)>,
        plan: Option<ir::Plan>,
    ) -> Option<(Checked, Vec<Diagnostic>)> {
        let root = self.file;
        let move_all = |diagnostics: &[Diagnostic]| -> Option<Vec<Diagnostic>> {
            diagnostics.iter().map(|d| d.moved(root, &moved)).collect()
        };
        // Tens of thousands of symbols on a large plan, most of them before
        // or after the edit: their chunks are shared, those after it read
        // moved; only the chunks that reach into the edited item are
        // copied.
        let symbols = &self.checked.symbols;
        let mut definitions = symbols.definitions.moved(root, window, moved)?;
        if let Some((definition, name)) = renamed {
            let renamed = definitions.get(definition)?.named(name);
            definitions.set(definition, renamed)?;
        }
        let references = symbols.references.moved(root, window, moved)?;
        let checked = Checked {
            plan,
            task_count: self.checked.task_count,
            diagnostics: move_all(&self.checked.diagnostics)?,
            symbols: ir::Symbols {
                definitions,
                references,
            },
            reuse: Default::default(),
        };
        Some((checked, move_all(&self.parts.loading)?))
    }
}
