//! What the check found, moved with the text after an edit that leaves
//! the plan's structure as it was: the paths of a step renamed and of a
//! template's text edited start from it.

use crate::check::Checked;
use crate::compile::Compilation;
use crate::diagnostic::Diagnostic;
use crate::ir;
use crate::span::Span;
use crate::syntax::ast;

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
        let root = self.file;
        let move_all = |diagnostics: &[Diagnostic]| -> Option<Vec<Diagnostic>> {
            diagnostics.iter().map(|d| d.moved(root, &moved)).collect()
        };
        let symbols = &self.checked.symbols;
        let mut definitions = symbols.definitions.clone();
        for d in definitions.iter_mut().filter(|d| d.file == root) {
            d.span = moved(d.span)?;
            d.full_span = moved(d.full_span)?;
        }
        if let Some((definition, name)) = renamed {
            definitions.get_mut(definition)?.name = name.clone();
        }
        let mut references = symbols.references.clone();
        for r in references.iter_mut().filter(|r| r.file == root) {
            r.span = moved(r.span)?;
        }
        let checked = Checked {
            plan: self.checked.plan.clone(),
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
