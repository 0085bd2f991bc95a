//! Reading an `import` again after an edit of its path's text, which
//! [`super::reparse`] does not re-read: the import alone is parsed again,
//! and the spans after it are moved (as for a template's header,
//! [`super::header`], the import read alone without a mistake reads as
//! the whole file, without syntax errors, would read it).

use super::{moved_after, splice, splice_keywords, At, Visit};
use crate::span::FileId;
use crate::syntax::ast::{File, TopItem};
use crate::syntax::limits;

/// Reads the file again after `edit` turned the old text (whose tree is
/// `old`, without syntax errors) into `new_text`, when the edit lies
/// inside the string of one of its imports and the import reads again
/// without a mistake: the new tree and the import's index in
/// [`File::items`]; `None` otherwise.
pub fn reparse_import(
    old: &File,
    new_text: &str,
    edit: super::Edit,
    file: FileId,
) -> Option<(File, usize)> {
    if new_text.len() > limits::MAX_FILE_BYTES || !old.unparsed.is_empty() {
        return None;
    }
    let top = old.items.iter().position(|item| match item {
        TopItem::Import(i) => i.path.span.start() < edit.start && edit.old_end < i.path.span.end(),
        _ => false,
    })?;
    let TopItem::Import(import) = &old.items[top] else {
        return None;
    };
    let (start, end) = (import.span.start(), edit.map(import.span.end()));
    let next = new_text.as_bytes().get(end);
    if !matches!(next, None | Some(b' ' | b'\t' | b'\r' | b'\n')) {
        return None;
    }
    let parsed = crate::syntax::parse(new_text.get(start..end)?, file);
    let read = parsed.file;
    let [TopItem::Import(new)] = read.items.as_slice() else {
        return None;
    };
    if !parsed.diagnostics.is_empty() || !read.unparsed.is_empty() {
        return None;
    }
    let by = start as i64;
    let mut new = TopItem::Import(new.clone());
    new.visit(&mut |at| {
        if let At::Span(span) = at {
            *span = span.shifted(by);
        }
    });
    let moved_spans = |spans: &[crate::span::Span]| spans.iter().map(|s| s.shifted(by)).collect();
    let mut items = Vec::with_capacity(old.items.len());
    items.extend_from_slice(&old.items[..top]);
    items.push(new);
    items.extend(old.items[top + 1..].iter().map(|i| moved_after(i, edit)));
    Some((
        File {
            items,
            comments: splice(
                &old.comments,
                import.span,
                moved_spans(&read.comments),
                edit,
            ),
            keywords: splice_keywords(
                &old.keywords,
                import.span,
                read.keywords.iter().map(|s| s.shifted(by)).collect(),
                edit,
            ),
            unparsed: Vec::new(),
        },
        top,
    ))
}
