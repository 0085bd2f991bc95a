//! Reading a template again after an edit of its header (its name and
//! parameters, before its body's `{`), which [`super::reparse`] does not
//! re-read: the template alone is parsed again, and the spans after it
//! are moved.
//!
//! Why the template parses as the whole file would parse it: a file
//! without syntax errors is a run of top items, each read from its keyword
//! to its end, and the template's text, read alone, is one template from
//! its keyword to its closing `}` (followed by whitespace) without a
//! mistake: the grammar reads the same bytes the same way where they
//! stand in the file. Only edits that keep the template's body as it was
//! (moved) are taken.

use super::{moved_after, shifted, splice, splice_keywords, At, Visit};
use crate::span::{FileId, Span};
use crate::syntax::ast::{File, Template, TopItem};
use crate::syntax::limits;

/// A file read again after an edit in the header of one of its templates.
#[derive(Clone, Debug)]
pub struct ReparsedHeader {
    /// The new tree, as [`crate::syntax::parse`] gives it (without syntax
    /// errors).
    pub file: File,
    /// The template, by index in [`File::items`].
    pub top: usize,
}

/// Reads the file again after `edit` turned the old text (whose tree is
/// `old`, without syntax errors) into `new_text`, when the edit lies in a
/// template's header after its keyword and the template reads again
/// without a mistake, its body the same but where it stands; `None`
/// otherwise.
pub fn reparse_header(
    old: &File,
    new_text: &str,
    edit: super::Edit,
    file: FileId,
) -> Option<ReparsedHeader> {
    if new_text.len() > limits::MAX_FILE_BYTES || !old.unparsed.is_empty() {
        return None;
    }
    let top = old.items.iter().position(|item| match item {
        TopItem::Template(t) => t.span.start() < edit.start && edit.old_end < t.body.open.start(),
        _ => false,
    })?;
    let TopItem::Template(template) = &old.items[top] else {
        return None;
    };
    let (start, end) = (template.span.start(), edit.map(template.span.end()));
    let next = new_text.as_bytes().get(end);
    if !matches!(next, None | Some(b' ' | b'\t' | b'\r' | b'\n')) {
        return None;
    }
    let parsed = crate::syntax::parse(new_text.get(start..end)?, file);
    let by = start as i64;
    let read = parsed.file;
    let [TopItem::Template(read_template)] = read.items.as_slice() else {
        return None;
    };
    if !parsed.diagnostics.is_empty() || !read.unparsed.is_empty() {
        return None;
    }
    let mut new = read_template.clone();
    new.visit(&mut |at| {
        if let At::Span(span) = at {
            *span = span.shifted(by);
        }
    });
    if new.span != Span::new(start, end) || !same_body(template, &new, edit) {
        return None;
    }
    let moved_spans = |spans: Vec<Span>| spans.into_iter().map(|s| s.shifted(by)).collect();
    let mut items = Vec::with_capacity(old.items.len());
    items.extend_from_slice(&old.items[..top]);
    items.push(TopItem::Template(new));
    items.extend(old.items[top + 1..].iter().map(|i| moved_after(i, edit)));
    Some(ReparsedHeader {
        file: File {
            items,
            comments: splice(
                &old.comments,
                template.span,
                moved_spans(read.comments),
                edit,
            ),
            keywords: splice_keywords(
                &old.keywords,
                template.span,
                read.keywords.into_iter().map(|s| s.shifted(by)).collect(),
                edit,
            ),
            unparsed: Vec::new(),
        },
        top,
    })
}

/// Whether the template's body after the edit is the one before it,
/// moved by the edit.
fn same_body(old: &Template, new: &Template, edit: super::Edit) -> bool {
    let by = edit.new_end as i64 - edit.old_end as i64;
    old.body.open.shifted(by) == new.body.open
        && old.body.close.map(|c| c.shifted(by)) == new.body.close
        && old.items.len() == new.items.len()
        && old
            .items
            .iter()
            .zip(&new.items)
            .all(|(a, b)| shifted(a, by) == *b)
}

/// The spans of a template's name and parameters, in one fixed order: two
/// headers of the same shape give their corresponding spans at the same
/// positions.
pub fn header_spans(template: &Template) -> Vec<Span> {
    let mut out = vec![template.name.span];
    let mut params = template.params.clone();
    params.visit(&mut |at| {
        if let At::Span(span) = at {
            out.push(*span);
        }
    });
    out
}

/// Whether two templates' headers have the same shape: the same name
/// where it stands, as many parameters, each of the same type and default
/// (their names may differ).
pub fn same_header_shape(old: &Template, new: &Template) -> bool {
    let nameless = |t: &Template| {
        let mut params = t.params.clone();
        for p in &mut params {
            p.name.name = Default::default();
        }
        params.visit(&mut |at| super::erased(at, true));
        params
    };
    old.name == new.name && old.params.len() == new.params.len() && nameless(old) == nameless(new)
}
