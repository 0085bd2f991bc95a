//! What the check found, moved with the text after an edit that leaves
//! the plan's structure as it was: the paths of a step renamed and of a
//! template's text edited start from it.

use crate::check::Checked;
use crate::compile::Compilation;
use crate::diagnostic::Diagnostic;
use crate::ir;
use crate::span::Span;
use crate::syntax::ast;

use super::REFERENCES_ROOM;

impl Compilation {
    /// What the check found and the loading diagnostics, moved with the
    /// text by `moved` (from [`Compilation::mover`]), with the plan as it
    /// was and `renamed`'s definition given its new name; what the check
    /// keeps for the next ([`check::Reuse`]) is the caller's to make.
    pub(super) fn moved_with_plan(
        &self,
        moved: &impl Fn(Span) -> Option<Span>,
        renamed: Option<(usize, &ast::SmolStr)>,
    ) -> Option<(Checked, Vec<Diagnostic>)> {
        self.moved_checked(moved, renamed, self.checked.plan.clone())
    }

    /// What the check found and the loading diagnostics, moved with the
    /// text by `moved`, with `plan` and `renamed`'s definition given its
    /// new name (the one mover of every path that reuses the last check).
    pub(super) fn moved_checked(
        &self,
        moved: &impl Fn(Span) -> Option<Span>,
        renamed: Option<(usize, &ast::SmolStr)>,
        plan: Option<ir::Plan>,
    ) -> Option<(Checked, Vec<Diagnostic>)> {
        let root = self.file;
        let move_all = |diagnostics: &[Diagnostic]| -> Option<Vec<Diagnostic>> {
            diagnostics.iter().map(|d| d.moved(root, &moved)).collect()
        };
        // Copied whole, then moved in place: tens of thousands of symbols
        // on a large plan, most of them before or after the edit.
        let symbols = &self.checked.symbols;
        let mut definitions = symbols.definitions.clone();
        for d in definitions.iter_mut().filter(|d| d.file == root) {
            d.span = moved(d.span)?;
            d.full_span = moved(d.full_span)?;
        }
        if let Some((definition, name)) = renamed {
            definitions.get_mut(definition)?.name = name.clone();
        }
        // With room for a rename's references that resolve again, put in
        // place (`check::rename`): without it, growing the list by one
        // doubles it (at 100,000 tasks a fresh 13 MB, its pages zeroed, on
        // every keystroke that takes a rename back).
        let mut references = Vec::with_capacity(symbols.references.len() + REFERENCES_ROOM);
        references.extend_from_slice(&symbols.references);
        for r in references.iter_mut().filter(|r| r.file == root) {
            r.span = moved(r.span)?;
        }
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
