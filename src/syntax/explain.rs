//! A mistake in a large file, explained from the item that holds it.
//!
//! The grammar, which explains mistakes, costs about a hundred bytes of
//! memory per byte it reads, so it reads at most
//! [`MAX_EXPLAINED_BYTES`](super::limits::MAX_EXPLAINED_BYTES) from the item
//! where the fast reader gave up to the end of the file. Past that, the item
//! alone is read with the grammar when it is a step or a task whose braces
//! close (by the lexical view of [`limits::braces`]) and its rule reads it
//! to that `}`, and the fast reader reads everything after it without
//! giving up: then the file reads as the grammar would read it whole (the
//! grammar is a PEG, and the same argument holds as for an item read again
//! after an edit, see [`reparse`](super::reparse)). Otherwise the mistake
//! is reported alone as a `planc::limit` error, as before.

use super::ast::{Body, File, Plan, PlanItem, TopItem};
use super::fast::{self, Prefix};
use pest::Parser as _;

use super::grammar::{PlanParser, Rule};
use super::limits;
use super::parser::{self, ItemParse, Parsed};
use crate::span::{FileId, Span};

/// The file read with only the item at `prefix.resume` explained by the
/// grammar; the prefix back where that does not read as the grammar would
/// read the whole rest.
pub(super) fn explained(text: &str, file: FileId, prefix: Prefix) -> Result<Parsed, Box<Prefix>> {
    let Some((read, end)) = explained_item(text, file, prefix.resume) else {
        return Err(Box::new(prefix));
    };
    let (Some(plan), Some(rest)) = (prefix.plan.as_ref(), fast::read_rest(text, end)) else {
        return Err(Box::new(prefix));
    };
    let mut items = plan.items.clone();
    items.push(read.item);
    items.extend(rest.items);
    let mut top = prefix.items;
    top.push(TopItem::Plan(Plan {
        span: plan.keyword.to(rest.close),
        name: plan.name.clone(),
        body: Body {
            open: plan.open,
            close: Some(rest.close),
        },
        items: items.into(),
    }));
    top.extend(rest.top);
    let joined = |mut before: Vec<Span>, item: Vec<Span>, after: Vec<Span>| {
        before.extend(item);
        before.extend(after);
        before
    };
    Ok(Parsed {
        file: File {
            items: top,
            comments: joined(prefix.comments, read.comments, rest.comments),
            keywords: {
                let mut keywords = prefix.keywords;
                keywords.extend(read.keywords);
                keywords.extend(rest.keywords);
                keywords
            },
            unparsed: read.unparsed,
        },
        diagnostics: read.diagnostics,
    })
}

/// The step or task of a plan's body at `start`, read alone with the
/// grammar up to the `}` that ends it, and where it ends; `None` unless
/// that `}` is within [`MAX_EXPLAINED_BYTES`](limits::MAX_EXPLAINED_BYTES)
/// of `start`, its rule reads it to that `}`, its body closed there, and
/// whitespace or the end of the file follows.
///
/// The `}` is first the one that closes the item's first `{` by the
/// lexical view of [`limits::braces`]; where the item's rule does not end
/// there (a task's body left open inside a step: the task's body ends
/// before the next `task`, the step at its own `}`, one brace short of
/// the lexical count), it is where the rule ends when it reads the text
/// from `start` on (at most [`MAX_EXPLAINED_BYTES`] of it). Either way the
/// item is then read alone up to that `}`, so which `}` was tried does not
/// change what a reading that succeeds gives.
///
/// [`MAX_EXPLAINED_BYTES`]: limits::MAX_EXPLAINED_BYTES
pub(super) fn explained_item(text: &str, file: FileId, start: usize) -> Option<(ItemParse, usize)> {
    let rest = text.get(start..)?;
    let word_len = rest
        .bytes()
        .position(|b| !(b.is_ascii_alphanumeric() || b == b'_'))
        .unwrap_or(rest.len());
    let rule = match &rest[..word_len] {
        "step" => Rule::step,
        "task" => Rule::task,
        _ => return None,
    };
    let lexical = lexical_end(rest).map(|end| start + end);
    if let Some(read) = lexical.and_then(|end| read_alone(text, file, (start, end), rule)) {
        return Some(read);
    }
    let end = rule_end(text, start, rule)?;
    if Some(end) == lexical {
        return None;
    }
    read_alone(text, file, (start, end), rule)
}

/// Where the `}` that closes the first `{` of `rest` ends, by the lexical
/// view of [`limits::braces`], if within
/// [`MAX_EXPLAINED_BYTES`](limits::MAX_EXPLAINED_BYTES).
fn lexical_end(rest: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (offset, opens) in limits::braces(rest) {
        // The item alone is held to the limit the grammar's reading is.
        if offset >= limits::MAX_EXPLAINED_BYTES {
            return None;
        }
        if opens {
            depth += 1;
        } else {
            depth = depth.checked_sub(1)?;
            if depth == 0 {
                return Some(offset + 1);
            }
        }
    }
    None
}

/// Where `rule` ends when it reads the text from `start` on, if it ends on
/// a `}` before the first [`MAX_EXPLAINED_BYTES`](limits::MAX_EXPLAINED_BYTES)
/// of it end. The rule reads no further than its item (and what it looks
/// ahead at): the grammar's memory is bounded by the item, as the lexical
/// view's is.
fn rule_end(text: &str, start: usize, rule: Rule) -> Option<usize> {
    let mut window = (start + limits::MAX_EXPLAINED_BYTES).min(text.len());
    while !text.is_char_boundary(window) {
        window -= 1;
    }
    let read = PlanParser::parse(rule, text.get(start..window)?).ok()?;
    let end = start + read.peek()?.as_span().end();
    let closes = end > start && text.as_bytes()[end - 1] == b'}';
    (closes && (end < window || window == text.len())).then_some(end)
}

/// The item at `start..end` read alone with `rule`, and `end`; `None`
/// unless the rule reads it to `end`, its body closed there, and
/// whitespace or the end of the file follows.
fn read_alone(
    text: &str,
    file: FileId,
    (start, end): (usize, usize),
    rule: Rule,
) -> Option<(ItemParse, usize)> {
    if !matches!(
        text.as_bytes().get(end),
        None | Some(b' ' | b'\t' | b'\r' | b'\n')
    ) {
        return None;
    }
    let mut read = parser::parse_item_with(text, file, Span::new(start, end), rule)?;
    // In the file's order, as the whole walk leaves them.
    read.unparsed.sort_unstable();
    read.comments.sort_unstable();
    read.keywords.sort();
    let closed = match &read.item {
        PlanItem::Step(step) => step.body.close.is_some(),
        PlanItem::Task(task) => task.body().is_some_and(|b| b.close.is_some()),
        _ => false,
    };
    closed.then_some((read, end))
}

#[cfg(test)]
mod tests {
    //! The item explained alone against the grammar reading the whole rest
    //! (what `parse` does below the limit): the same tree and diagnostics
    //! wherever [`explained`] reads the file.

    use proptest::prelude::*;

    use super::explained;
    use crate::generate::edits::Splice;
    use crate::span::FileId;
    use crate::syntax::reparse::tests::sorted;
    use crate::syntax::{fast, parse};

    const FILE: FileId = FileId(0);

    /// Mistakes inside an item and across items.
    const SNIPPETS: &[&str] = &[
        "x",
        "\"",
        "{",
        "}",
        "}}",
        "{{",
        "task",
        "step",
        " after",
        "# note\n",
        "\n",
        "\\",
        "é",
        "\"\"\"",
        "task q \"Q\"\n",
        "assignee",
        "retry",
        ",",
        "-",
    ];

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: crate::generate::fuzz_cases(128),
            ..ProptestConfig::default()
        })]

        /// One or two random edits of a generated plan: where the item is
        /// explained alone, the file reads as the grammar reads it whole.
        #[test]
        fn an_item_explained_alone_reads_as_the_whole_rest(
            cycle in proptest::bool::ANY,
            edits in proptest::collection::vec((0.0..1.0f64, 0..12usize, 0..SNIPPETS.len() + 1), 1..3),
        ) {
            let mut text = crate::generate::plan_source(60, cycle);
            for (at, len, snippet) in edits {
                text = Splice::pick(&text, (at * text.len() as f64) as usize, len, SNIPPETS, snippet)
                    .apply(&text);
            }
            let Err(prefix) = fast::read(&text) else {
                return Ok(());
            };
            let whole = parse(&text, FILE);
            if let Ok(alone) = explained(&text, FILE, *prefix) {
                prop_assert_eq!(&alone.file, &whole.file, "tree of\n{}", text);
                prop_assert_eq!(sorted(&alone.diagnostics), sorted(&whole.diagnostics), "diagnostics of\n{}", text);
            }
        }
    }

    #[test]
    fn a_mistake_inside_a_step_or_task_is_explained_alone() {
        let text = crate::generate::plan_source(100, false);
        let cases = [
            // The first letter of a new item, and an unclosed string.
            text.replacen(
                "step s2 \"Stage 2 of {count}\" {",
                "step s2 \"Stage 2 of {count}\" {t",
                1,
            ),
            text.replacen("task t50 \"Do", "task t50 \"Do\"", 1),
            // A task's body left open in a step: the task ends before the
            // next `task`, the step at its own `}`, so the braces do not
            // close where the step ends.
            text.replacen(
                "step s2 \"Stage 2 of {count}\" {",
                "step s2 \"Stage 2 of {count}\" {\n        task n1 \"New\" { retry 2",
                1,
            ),
        ];
        for text in cases {
            let Err(prefix) = fast::read(&text) else {
                panic!("a mistake");
            };
            let alone = explained(&text, FILE, *prefix)
                .ok()
                .expect("explained alone");
            let whole = parse(&text, FILE);
            assert_eq!(alone.file, whole.file);
            assert_eq!(sorted(&alone.diagnostics), sorted(&whole.diagnostics));
            assert!(!whole.diagnostics.is_empty());
        }
    }
}
