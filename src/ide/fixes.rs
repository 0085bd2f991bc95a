//! Quick fixes: the machine-applicable "did you mean" of diagnostics.

use super::Edit;
use crate::compile::Compilation;
use crate::span::Span;

/// A fix offered at a place: which diagnostic it fixes, and the edit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuickFix {
    pub title: String,
    /// Index into [`Compilation::diagnostics`].
    pub diagnostic: usize,
    pub edit: Edit,
}

/// The fixes of the diagnostics whose fix touches `range`.
pub fn quick_fixes(compilation: &Compilation, range: Span) -> Vec<QuickFix> {
    let text = super::root_text(compilation);
    compilation
        .diagnostics
        .iter()
        .enumerate()
        .filter_map(|(index, diagnostic)| {
            let fix = diagnostic.fix.as_ref()?;
            let overlaps = fix.span.start() <= range.end() && range.start() <= fix.span.end();
            if fix.file != compilation.file || !overlaps {
                return None;
            }
            let old = text
                .get(fix.span.start()..fix.span.end())
                .unwrap_or_default();
            Some(QuickFix {
                title: format!("Change `{old}` to `{}`", fix.replacement),
                diagnostic: index,
                edit: Edit {
                    file: fix.file,
                    span: fix.span,
                    new_text: fix.replacement.clone(),
                },
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ide::test_support::{compile_at, PLAN};

    #[test]
    fn offers_the_suggested_name() {
        let (c, offset) = compile_at(&PLAN.replace("after compile", "after comp$0il"));
        let fixes = quick_fixes(&c, Span::at(offset));
        assert_eq!(fixes.len(), 1);
        assert_eq!(fixes[0].title, "Change `compil` to `compile`");
        assert_eq!(fixes[0].edit.new_text, "compile");
        assert!(quick_fixes(&c, Span::at(0)).is_empty());
    }
}
