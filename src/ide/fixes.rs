//! Quick fixes: the machine-applicable "did you mean" of diagnostics.

use super::Edit;
use crate::compile::Compilation;
use crate::diagnostic::Fix;
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

/// `text` with `fixes` (all of one file, in the order offered) applied:
/// the new text and how many were applied. A fix that overlaps or touches
/// one applied before it, or whose span is not in `text`, is left out (a
/// new check after this one offers it again, moved) — what
/// `planc check --fix` applies in one round.
pub fn apply_fixes(text: &str, fixes: &[&Fix]) -> (String, usize) {
    let mut chosen: Vec<&Fix> = Vec::new();
    for &fix in fixes {
        let in_text = text.get(fix.span.range()).is_some();
        let clashes = chosen
            .iter()
            .any(|c| fix.span.start() <= c.span.end() && c.span.start() <= fix.span.end());
        if in_text && !clashes {
            chosen.push(fix);
        }
    }
    chosen.sort_by_key(|f| f.span.start());
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for fix in &chosen {
        out.push_str(&text[at..fix.span.start()]);
        out.push_str(&fix.replacement);
        at = fix.span.end();
    }
    out.push_str(&text[at..]);
    (out, chosen.len())
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

    #[test]
    fn applies_fixes_apart_and_leaves_a_clashing_one() {
        let fix = |start, end, new: &str| Fix {
            file: crate::span::FileId(0),
            span: Span::new(start, end),
            replacement: new.to_owned(),
        };
        let (a, b, c) = (fix(6, 9, "two"), fix(0, 3, "one"), fix(7, 8, "x"));
        assert_eq!(
            apply_fixes("onx - tow", &[&a, &b, &c]),
            ("one - two".to_owned(), 2)
        );
        let outside = fix(8, 20, "y");
        assert_eq!(apply_fixes("abc", &[&outside]), ("abc".to_owned(), 0));
    }
}
