//! Reading a whole file: the fast reader first; from the first item with
//! a mistake on, the grammar (`parser.rs`), which explains it — or, with
//! more than [`limits::MAX_EXPLAINED_BYTES`] after that item, the item
//! alone (`explain.rs`) where that reads as the whole rest would, else one
//! `planc::limit` error. Above both readers, so neither needs the other.

use super::ast::{Body, File, Plan, TopItem};
use super::explain;
use super::fast::{self, Prefix};
use super::limits;
use super::parser::{parse_rest, Parsed};
use crate::diagnostic::{Code, Diagnostic};
use crate::span::{FileId, Span};

/// Parses `text` (the contents of `file`) into a syntax tree.
///
/// Never fails: a file with mistakes yields the tree of what could be read
/// and a syntax diagnostic for each mistake.
pub fn parse(text: &str, file: FileId) -> Parsed {
    // A file without mistakes (the common case) is read directly; from the
    // first item with a mistake on, the grammar reads it and explains.
    let prefix = if text.len() <= limits::MAX_FILE_BYTES {
        match fast::read(text) {
            Ok(file) => {
                return Parsed {
                    file,
                    diagnostics: Vec::new(),
                }
            }
            Err(prefix) => *prefix,
        }
    } else {
        Prefix::default()
    };
    if text.len() - prefix.resume > limits::MAX_EXPLAINED_BYTES
        && limits::check(text, file).is_none()
    {
        // Past the limit, the item alone is explained where that reads as
        // the whole rest would read.
        return explain::explained(text, file, prefix)
            .unwrap_or_else(|prefix| unexplained(text, file, *prefix));
    }
    parse_rest(text, file, prefix)
}

/// A file with a mistake and more than [`limits::MAX_EXPLAINED_BYTES`] from
/// the item that holds it to the end: what the fast reader read before it,
/// and one `planc::limit` error there; the rest is not read (it stands in
/// the tree as unparsed text, so the checker reports nothing it may hide).
/// Explaining is the grammar's work, which costs up to a hundred bytes of
/// memory per byte it reads; this keeps that within a fixed amount.
fn unexplained(text: &str, file: FileId, prefix: Prefix) -> Parsed {
    let Prefix {
        mut items,
        plan,
        comments,
        keywords,
        resume,
    } = prefix;
    if let Some(plan) = plan {
        items.push(TopItem::Plan(Plan {
            span: plan.keyword.to(Span::new(text.len(), text.len())),
            name: plan.name,
            body: Body {
                open: plan.open,
                close: None,
            },
            items: plan.items.into(),
        }));
    }
    let rest = text.len() - resume;
    let diagnostic = Diagnostic::new(
        Code::Limit,
        format!(
            "a mistake with {rest} bytes after it; planc explains mistakes only with at most {} bytes after them",
            limits::MAX_EXPLAINED_BYTES
        ),
    )
    .label(
        file,
        Span::new(resume, resume),
        "the item from here on does not follow the grammar; the rest of the file was not read",
    )
    .help("check a smaller file that holds this item to see the mistake, or split the plan into files joined with `import`");
    Parsed {
        file: File {
            items,
            comments,
            keywords,
            unparsed: vec![Span::new(resume, text.len())],
        },
        diagnostics: vec![diagnostic],
    }
}
