//! A recompile after an edit of a template's header that keeps its shape
//! (a letter in a parameter's name): the template is read again alone
//! ([`syntax::reparse_header`]), what the check found moves with the text,
//! and what the template's parameters reach is checked again
//! ([`check::template_header`]).

use std::collections::HashMap;
use std::sync::Arc;

use crate::check::template_header::{params_renamed, HeaderEdit};
use crate::compile::Compilation;
use crate::ir::Window;
use crate::span::Span;
use crate::syntax::ast::TopItem;
use crate::syntax::{self, Edit};

#[cfg(test)]
mod tests;

impl Compilation {
    /// The compilation of `text` after `edit`, which lies in the header of
    /// a template of the file, from this one; `None` where that does not
    /// follow the edit (the file has syntax errors, the header's shape
    /// changed: its name, a parameter's type or default, how many there
    /// are), and the file is compiled whole.
    pub(super) fn header_recompiled(&self, text: &Arc<str>, edit: Edit) -> Option<Compilation> {
        let options = &self.parts.options;
        if options.skip_references || options.skip_plan || !self.parts.root_syntax.is_empty() {
            return None;
        }
        let header = syntax::reparse_header(self.syntax(), text, edit, self.file)?;
        let (Some(TopItem::Template(old)), Some(TopItem::Template(new))) = (
            self.syntax().items.get(header.top),
            header.file.items.get(header.top),
        ) else {
            return None;
        };
        if !syntax::same_header_shape(old, new) {
            return None;
        }
        // The header's spans, old to new; the body and what follows move.
        let inside: HashMap<Span, Span> = syntax::header_spans(old)
            .into_iter()
            .zip(syntax::header_spans(new))
            .collect();
        let (old_span, new_span, body) = (old.span, new.span, old.body.open.start());
        let by = edit.new_end as i64 - edit.old_end as i64;
        let map = move |span: Span| -> Option<Span> {
            if span.start() >= body {
                Some(span.shifted(by))
            } else if span.end() <= old_span.start() {
                Some(span)
            } else if span == old_span {
                Some(new_span)
            } else {
                inside.get(&span).copied()
            }
        };
        // What `map` does to the spans before the template and after its
        // header, for the chunks wholly there.
        let window = Window {
            keep_until: old_span.start(),
            shift_from: body,
            by,
        };
        let (moved, loading) = self.moved_with_plan(&map, window, None)?;
        let modules = self.modules_with(header.file);
        let edited = HeaderEdit {
            old: &self.modules,
            new: &modules,
            top: header.top,
        };
        let checked = params_renamed(&self.checked, moved, &edited, &map)?;
        #[cfg(test)]
        tests::HEADER_EDITS.with(|n| n.set(n.get() + 1));
        let mut sources = self.sources.clone();
        sources.set_text(self.file, Arc::clone(text));
        let parts = self.parts_with(Vec::new(), loading);
        Some(Compilation {
            diagnostics: super::super::gathered(&parts, &checked),
            sources,
            file: self.file,
            modules,
            checked,
            parts: Arc::new(parts),
        })
    }
}
