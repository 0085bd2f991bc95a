//! Parses a large file in pieces on several threads.
//!
//! The file is cut where a `task` or `step` line begins inside the plan
//! body (found by a lexical scan that skips strings and comments); the head,
//! middle and tail pieces are parsed with the grammar's `chunk_*` rules and
//! walked by the same walker, with offsets shifted to the whole file. The
//! pieces are joined into the tree the sequential parse would build. Any
//! doubt — no clean cut, a piece that does not parse, any diagnostic — and
//! the caller parses the whole file sequentially instead, so results never
//! depend on the split.

use pest::Parser as _;

use super::ast::*;
use super::grammar::{PlanParser, Rule};
use super::limits::code_bytes;
use super::parser::{Parsed, Walker};
use super::recover::Context;
use crate::span::{FileId, Span};

/// Files smaller than this are parsed on one thread.
pub(crate) const PARALLEL_THRESHOLD: usize = 256 << 10;

/// Where to cut `text` into at most `pieces` pieces: offsets of lines that
/// start a `task` or `step` directly inside the only `plan` body.
pub(crate) fn split_points(text: &str, pieces: usize) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut plans = 0;
    let mut body: Option<(usize, usize)> = None;
    let mut candidates = Vec::new();
    let mut line_start = true;
    let mut expect_plan_brace = false;
    for (offset, byte) in code_bytes(text) {
        match byte {
            b'\n' => {
                line_start = true;
                continue;
            }
            b' ' | b'\t' | b'\r' => continue,
            b'{' => {
                if depth == 0 && expect_plan_brace {
                    body = Some((offset + 1, text.len()));
                    expect_plan_brace = false;
                }
                depth += 1;
            }
            b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    if let Some((start, end)) = body.as_mut() {
                        if *end == text.len() && offset > *start {
                            *end = offset;
                        }
                    }
                }
            }
            b'p' if depth == 0
                && bytes[offset..].starts_with(b"plan")
                && word_ends(bytes, offset + 4) =>
            {
                plans += 1;
                expect_plan_brace = true;
            }
            b't' | b's'
                if line_start && depth == 1 && body.is_some_and(|(_, end)| end == text.len()) =>
            {
                let rest = &bytes[offset..];
                if (rest.starts_with(b"task") || rest.starts_with(b"step"))
                    && word_ends(bytes, offset + 4)
                {
                    candidates.push(offset);
                }
            }
            _ => {}
        }
        line_start = false;
    }
    let Some((start, end)) = body else {
        return Vec::new();
    };
    if plans != 1 || pieces < 2 {
        return Vec::new();
    }
    candidates.retain(|&c| c > start && c < end);
    let mut cuts = Vec::new();
    for i in 1..pieces {
        let target = text.len() * i / pieces;
        let at = candidates.partition_point(|&c| c < target);
        if let Some(&cut) = candidates.get(at) {
            if cuts.last().is_none_or(|&last| cut > last) {
                cuts.push(cut);
            }
        }
    }
    cuts
}

fn word_ends(bytes: &[u8], at: usize) -> bool {
    bytes
        .get(at)
        .is_none_or(|b| b.is_ascii_whitespace() || *b == b'"' || *b == b'{')
}

/// Which piece of a file split for parallel parsing.
#[derive(Clone, Copy, PartialEq, Eq)]
enum PieceKind {
    Head,
    Middle,
    Tail,
}

/// What one piece of a split file holds.
#[derive(Default)]
struct Piece {
    before: Vec<TopItem>,
    /// The head's `plan` keyword, name and opening brace.
    header: Option<(Span, Ident, Span)>,
    items: Vec<PlanItem>,
    close: Option<Span>,
    after: Vec<TopItem>,
    comments: Vec<Span>,
    keywords: Vec<Span>,
}

/// Parses a large file in pieces, one thread each; `None` when the file
/// cannot be split or a piece is not clean (then it is parsed whole).
pub(super) fn parse_in_pieces(text: &str, file: FileId) -> Option<Parsed> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8);
    if threads < 2 {
        return None;
    }
    let cuts = split_points(text, threads);
    if cuts.is_empty() {
        return None;
    }
    let mut bounds = vec![0];
    bounds.extend(cuts);
    bounds.push(text.len());
    let last = bounds.len() - 2;
    let pieces: Vec<Option<Piece>> = std::thread::scope(|scope| {
        let handles: Vec<_> = bounds
            .windows(2)
            .enumerate()
            .map(|(i, w)| {
                let kind = match i {
                    0 => PieceKind::Head,
                    i if i == last => PieceKind::Tail,
                    _ => PieceKind::Middle,
                };
                let (start, end) = (w[0], w[1]);
                scope.spawn(move || parse_piece(text, file, start, end, kind))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().ok().flatten())
            .collect()
    });
    let mut pieces = pieces.into_iter().collect::<Option<Vec<Piece>>>()?;
    let (keyword, name, open) = pieces.first_mut()?.header.take()?;
    let close = pieces.last()?.close?;
    let mut file_ast = File::default();
    let mut items = Vec::new();
    let mut after = Vec::new();
    for piece in &mut pieces {
        file_ast.items.append(&mut piece.before);
        items.append(&mut piece.items);
        after.append(&mut piece.after);
        file_ast.comments.append(&mut piece.comments);
        file_ast.keywords.append(&mut piece.keywords);
    }
    file_ast.items.push(TopItem::Plan(Plan {
        span: keyword.to(close),
        name,
        body: Body {
            open,
            close: Some(close),
        },
        items,
    }));
    file_ast.items.append(&mut after);
    file_ast.comments.sort_unstable();
    file_ast.keywords.sort_unstable();
    Some(Parsed {
        file: file_ast,
        diagnostics: Vec::new(),
    })
}

fn parse_piece(
    text: &str,
    file: FileId,
    start: usize,
    end: usize,
    kind: PieceKind,
) -> Option<Piece> {
    let rule = match kind {
        PieceKind::Head => Rule::chunk_head,
        PieceKind::Middle => Rule::chunk_items,
        PieceKind::Tail => Rule::chunk_tail,
    };
    let root = PlanParser::parse(rule, &text[start..end]).ok()?.next()?;
    let mut walker = Walker {
        text,
        base: start,
        file,
        comments: Vec::new(),
        keywords: Vec::new(),
        diagnostics: Vec::new(),
    };
    let mut piece = Piece::default();
    let keyword = root
        .clone()
        .into_inner()
        .find(|p| p.as_rule() == Rule::kw_plan)
        .map(|p| walker.sp(&p));
    let mut name = None;
    let mut open = None;
    let mut in_plan = kind != PieceKind::Head;
    for child in walker.children(root, Context::Plan) {
        match child.as_rule() {
            Rule::ident => {
                name = Some(walker.name(&child, "a plan name"));
                in_plan = true;
            }
            Rule::lbrace => open = Some(walker.sp(&child)),
            Rule::plan_end => {
                piece.close = walker.body_end(child, Span::default(), "plan");
                in_plan = false;
            }
            Rule::import => {
                let item = TopItem::Import(walker.import(child));
                if in_plan {
                    piece.after.push(item)
                } else {
                    piece.before.push(item)
                }
            }
            Rule::template => {
                let item = TopItem::Template(walker.template(child));
                if in_plan || piece.close.is_some() {
                    piece.after.push(item)
                } else {
                    piece.before.push(item)
                }
            }
            Rule::plan if piece.close.is_some() => {
                piece.after.push(TopItem::Plan(walker.plan(child)))
            }
            Rule::role | Rule::param if kind == PieceKind::Head && name.is_none() => {
                let item = if child.as_rule() == Rule::role {
                    TopItem::Role(walker.role(child))
                } else {
                    TopItem::Param(walker.param(child))
                };
                piece.before.push(item);
            }
            Rule::role | Rule::param if piece.close.is_some() => {
                let item = if child.as_rule() == Rule::role {
                    TopItem::Role(walker.role(child))
                } else {
                    TopItem::Param(walker.param(child))
                };
                piece.after.push(item);
            }
            _ => piece.items.extend(walker.plan_item(child)),
        }
    }
    if !walker.diagnostics.is_empty() {
        return None;
    }
    if kind == PieceKind::Head {
        piece.header = Some((keyword?, name?, open?));
    }
    piece.comments = walker.comments;
    piece.keywords = walker.keywords;
    Some(piece)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::parser::{parse, parse_whole};

    #[test]
    fn cuts_only_at_task_and_step_lines_of_the_plan_body() {
        let text = "template t() {\n  task x \"X\"\n}\nplan p {\n  goal \"g\"\n  task a \"A\"\n  task b \"\"\"\n  task c\n  \"\"\"\n  step s {\n    task d \"D\"\n  }\n  # task e\n  task f \"F\"\n}\n";
        let a = text.find("  task a").unwrap() + 2;
        let s = text.find("  step s").unwrap() + 2;
        let f = text.find("  task f").unwrap() + 2;
        assert_eq!(split_points(text, 2), vec![s]);
        assert_eq!(split_points(text, 4), vec![a, s, f]);
        assert_eq!(
            split_points("plan a {}\nplan b {\n task x \"X\"\n}", 2),
            Vec::<usize>::new()
        );
    }

    /// A large file with every kind of item, comments and `"""` blocks.
    fn large_plan() -> String {
        let mut text = String::from(
            "# head\nrole lib_role\nplan big { # opens\n    goal \"g {n}\"\n    param n: int = 1\n",
        );
        for i in 0..3000 {
            text.push_str(&format!(
                "    # before {i}\n    step s{i} \"S {i}\" {{\n        sequential\n        task a{i} \"A\" {{ retry 1 }}\n        task b{i} \"B {{n}}\" {{\n            description \"\"\"\n                task fake{i}\n            \"\"\"\n        }}\n    }}\n    task c{i} \"C\" {{ after s{i} }}  # trailing {i}\n"
            ));
        }
        text.push_str("}\n# tail\nrole after_role\n");
        text
    }

    #[test]
    fn parsing_in_pieces_builds_the_same_tree() {
        let text = large_plan();
        assert!(text.len() >= PARALLEL_THRESHOLD);
        let whole = parse_whole(&text, FileId(0));
        assert!(
            whole.diagnostics.is_empty(),
            "{:?}",
            whole.diagnostics.first()
        );
        let pieces = parse_in_pieces(&text, FileId(0)).expect("the file splits");
        assert_eq!(pieces.file, whole.file);

        let generated = crate::generate::plan_source(20_000, false);
        let pieces = parse_in_pieces(&generated, FileId(0)).expect("the file splits");
        assert_eq!(pieces.file, parse_whole(&generated, FileId(0)).file);
    }

    #[test]
    fn a_piece_with_errors_sends_the_file_to_the_whole_parse() {
        let text = large_plan().replace(
            "task c2999 \"C\" { after s2999 }",
            "task c2999 \"C\" { asignee x }",
        );
        assert!(parse_in_pieces(&text, FileId(0)).is_none());
        let parsed = parse(&text, FileId(0));
        assert_eq!(parsed.diagnostics.len(), 1);
        assert_eq!(
            parsed.diagnostics[0].message,
            "unknown field `asignee` in a task"
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(12))]

        /// Whatever the edits, parsing a large file gives what the whole-file
        /// parse gives: the same tree and the same diagnostics.
        #[test]
        fn edited_large_files_parse_as_a_whole(
            edits in proptest::collection::vec(
                (0.0f64..1.0, proptest::sample::select(vec!["{", "}", "\"", "\n  task x \"X\"\n", "# }\n", "\"\"\"", "step", ""])),
                1..4,
            )
        ) {
            let mut text = crate::generate::plan_source(3_000, false);
            for (at, insert) in edits {
                let mut offset = (at * text.len() as f64) as usize;
                while !text.is_char_boundary(offset) {
                    offset -= 1;
                }
                text.insert_str(offset, insert);
            }
            let split = parse(&text, FileId(0));
            let whole = parse_whole(&text, FileId(0));
            proptest::prop_assert_eq!(split.file, whole.file);
            proptest::prop_assert_eq!(split.diagnostics, whole.diagnostics);
        }
    }
}
