//! Completion: the keywords that may stand at the cursor, task and step names
//! after `after`, roles after `assignee`, parameters inside `{` in a string.

use super::lexer::{self, Kind, Token};
use crate::compile::Compilation;
use crate::ir::{SymbolKind, Symbols, Type};
use crate::span::Span;
use crate::syntax::keywords::{self, Then};
use crate::syntax::{ast, Context};

/// What a completion inserts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompletionKind {
    Keyword,
    Type,
    Task,
    Step,
    Role,
    Param,
}

/// One proposal: `label` replaces the text at `replace` (the part of a name
/// already typed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    pub label: String,
    pub kind: CompletionKind,
    pub detail: Option<String>,
    pub replace: Span,
}

/// The proposals at `offset`.
pub fn completions(compilation: &Compilation, offset: usize) -> Vec<Completion> {
    let text = super::root_text(compilation);
    let offset = crate::line_index::floor_char(text, offset);
    completions_capped(compilation, offset, usize::MAX).0
}

/// The most proposals one completion answers with. A plan's names can
/// number 100,000 (a 17 MB answer that takes an editor a third of a
/// second to receive); past this many the list is cut to the names that
/// can still match what is typed, and marked incomplete, so the editor
/// asks again as the word grows.
pub const MAX_COMPLETIONS: usize = 1000;

/// The proposals at `offset`, at most `max`, and whether the list was
/// cut. When there are more than `max`, those whose label holds the typed
/// part of the word (from the start of the span it replaces to the
/// cursor) as a subsequence, ignoring case — what an editor's filter
/// keeps — are kept in their order, up to `max`.
pub fn completions_capped(
    compilation: &Compilation,
    offset: usize,
    max: usize,
) -> (Vec<Completion>, bool) {
    let text = super::root_text(compilation);
    let offset = crate::line_index::floor_char(text, offset);
    let (mut proposals, cut) =
        completions_scanned_from(compilation, scan_start(compilation, offset), offset, max);
    if cut || proposals.len() <= max {
        return (proposals, cut);
    }
    proposals.retain(|c| {
        let typed = text.get(c.replace.start()..offset).unwrap_or_default();
        holds_in_order(&c.label, typed)
    });
    proposals.truncate(max);
    (proposals, true)
}

/// Whether `label` has the letters of `typed` in order (ignoring case).
fn holds_in_order(label: &str, typed: &str) -> bool {
    if label.is_ascii() && typed.is_ascii() {
        // Bytes, as a name's letters almost always are: the same answer
        // (an ASCII letter lowercases to one ASCII letter), without a
        // `to_lowercase` iterator per letter over 100,000 names.
        let mut letters = label.bytes();
        return typed
            .bytes()
            .all(|wanted| letters.any(|letter| letter.eq_ignore_ascii_case(&wanted)));
    }
    let mut letters = label.chars().flat_map(char::to_lowercase);
    typed
        .chars()
        .flat_map(char::to_lowercase)
        .all(|wanted| letters.any(|letter| letter == wanted))
}

/// Where the token scan for a completion at `offset` may begin: the start
/// of the last keyword the parser read that ends before the cursor and
/// before the first run of text that did not parse (before it, the parser
/// and the scan agree on where strings and comments are, so a keyword
/// starts a token of the whole text's scan); 0 if there is none.
///
/// Every proposal depends only on the tokens from the `after` of the list
/// the cursor is in (no keyword stands between) or fewer, so starting at a
/// keyword before the cursor proposes what scanning the whole text would,
/// without scanning a large file from its start on every request.
fn scan_start(compilation: &Compilation, offset: usize) -> usize {
    let syntax = super::root_syntax(compilation);
    let limit = syntax
        .unparsed
        .first()
        .map_or(offset, |run| run.start().min(offset));
    let before = syntax.keywords.partition_point(|k| k.end() < limit);
    before
        .checked_sub(1)
        .and_then(|k| syntax.keywords.get(k))
        .map_or(0, |k| k.start())
}

/// The proposals at `offset` (a char boundary), the text scanned for tokens
/// from `start`; names at most `max` (and whether they were cut).
fn completions_scanned_from(
    compilation: &Compilation,
    start: usize,
    offset: usize,
    max: usize,
) -> (Vec<Completion>, bool) {
    let text = super::root_text(compilation);
    let tokens = lexer::tokens(text, start, offset);
    // The token the cursor is in or just after.
    let current = tokens.last().filter(|t| t.span.end() >= offset);
    match current.map(|t| t.kind) {
        Some(Kind::Comment) => return (Vec::new(), false),
        Some(Kind::Str { closed }) => {
            let token = current.map_or(Span::at(offset), |t| t.span);
            let inside = offset < token.end() || !closed;
            return match inside {
                true => (
                    param_completions(compilation, text, token.start(), offset),
                    false,
                ),
                false => (Vec::new(), false),
            };
        }
        _ => {}
    }
    let (prefix, before) = match current {
        Some(t) if t.kind == Kind::Word => (t.span.start(), &tokens[..tokens.len() - 1]),
        _ => (offset, &tokens[..]),
    };
    let replace = Span::new(prefix, offset);
    let significant: Vec<&Token> = before.iter().filter(|t| t.kind != Kind::Comment).collect();
    let previous = significant.last().map(|t| &text[t.span.range()]);
    if previous == Some("after") || previous == Some(",") && in_after_list(text, &significant) {
        let typed = &text[prefix..offset];
        return names(compilation, offset, replace, typed, max);
    }
    let proposals = match previous {
        Some("assignee") => symbols_of(compilation, SymbolKind::Role, replace),
        Some("priority") => crate::ir::Priority::NAMES
            .iter()
            .map(|name| Completion {
                label: (*name).to_owned(),
                kind: CompletionKind::Keyword,
                detail: None,
                replace,
            })
            .collect(),
        Some(":") => Type::NAMES
            .iter()
            .map(|name| Completion {
                label: (*name).to_owned(),
                kind: CompletionKind::Type,
                detail: None,
                replace,
            })
            .collect(),
        // A new name, or a value, is typed here: nothing to propose.
        Some("=" | ",") => Vec::new(),
        Some(word) if keywords::get(word).is_some_and(|k| k.then != Then::Nothing) => Vec::new(),
        _ => context_at(super::root_syntax(compilation), offset)
            .keywords()
            .iter()
            .map(|k| Completion {
                label: (*k).to_owned(),
                kind: CompletionKind::Keyword,
                detail: keywords::get(k).map(|k| k.doc.to_owned()),
                replace,
            })
            .collect(),
    };
    (proposals, false)
}

/// Whether the `,` ending `significant` separates the names of an `after`.
fn in_after_list(text: &str, significant: &[&Token]) -> bool {
    let word = |t: &Token| &text[t.span.range()];
    let mut rest = significant.iter().rev();
    loop {
        match (rest.next(), rest.next()) {
            (Some(comma), Some(name)) if word(comma) == "," && name.kind == Kind::Word => {
                if word(name) == "after" {
                    return false;
                }
                if let Some(next) = rest.clone().next() {
                    if word(next) == "after" {
                        return true;
                    }
                }
            }
            _ => return false,
        }
    }
}

/// Task and step names, leaving out the task the cursor is in: at most
/// `max`, and past that many only those holding the letters `typed` in
/// order (then the bool is true: the list was cut).
fn names(
    compilation: &Compilation,
    offset: usize,
    replace: Span,
    typed: &str,
    max: usize,
) -> (Vec<Completion>, bool) {
    let symbols = &compilation.checked.symbols;
    let mut chosen: Vec<_> = name_candidates(symbols, offset, None)
        .take(max.saturating_add(1))
        .collect();
    let cut = chosen.len() > max;
    if cut {
        chosen = name_candidates(symbols, offset, Some(typed))
            .take(max)
            .collect();
    }
    let proposals = chosen
        .into_iter()
        .filter_map(|index| symbols.definitions.get(index))
        .map(|d| Completion {
            label: d.name().to_string(),
            kind: if d.kind() == SymbolKind::Task {
                CompletionKind::Task
            } else {
                CompletionKind::Step
            },
            detail: Some(d.kind().as_str().to_owned()),
            replace,
        })
        .collect();
    (proposals, cut)
}

/// The indices of the task and step definitions a name completion
/// proposes, each name once, leaving out the task at `offset`; with
/// `typed`, only the names holding its letters in order. The names and
/// kinds are read as stored (they do not move); only a definition that
/// passes them is read whole, for the span it has now.
fn name_candidates<'a>(
    symbols: &'a Symbols,
    offset: usize,
    typed: Option<&'a str>,
) -> impl Iterator<Item = usize> + 'a {
    let mut seen = std::collections::HashSet::new();
    symbols
        .definitions
        .unmoved()
        .enumerate()
        .filter(|(_, d)| matches!(d.kind(), SymbolKind::Task | SymbolKind::Step))
        .filter(move |(_, d)| typed.is_none_or(|typed| holds_in_order(d.name(), typed)))
        .filter(move |&(index, d)| {
            d.kind() != SymbolKind::Task
                || symbols
                    .definitions
                    .get(index)
                    .is_none_or(|now| !now.full_span().touches(offset))
        })
        .filter(move |(_, d)| seen.insert(d.name()))
        .map(|(index, _)| index)
}

fn symbols_of(compilation: &Compilation, kind: SymbolKind, replace: Span) -> Vec<Completion> {
    let mut seen = std::collections::HashSet::new();
    compilation
        .checked
        .symbols
        .definitions
        .iter()
        .filter(|d| d.kind() == kind && seen.insert(d.name().to_owned()))
        .map(|d| Completion {
            label: d.name().to_string(),
            kind: match kind {
                SymbolKind::Role => CompletionKind::Role,
                _ => CompletionKind::Param,
            },
            detail: Some(kind.as_str().to_owned()),
            replace,
        })
        .collect()
}

/// Parameters, when the cursor follows an open `{` in the string starting at `start`.
fn param_completions(
    compilation: &Compilation,
    text: &str,
    start: usize,
    offset: usize,
) -> Vec<Completion> {
    let Some(open) = open_interpolation(&text[start..offset]) else {
        return Vec::new();
    };
    let typed = &text[start + open + 1..offset];
    let name_start = offset - typed.trim_start().len();
    symbols_of(
        compilation,
        SymbolKind::Param,
        Span::new(name_start, offset),
    )
}

/// The position of a `{` that opens an unfinished interpolation at the end of
/// `string` (a string's text up to the cursor, quotes included).
fn open_interpolation(string: &str) -> Option<usize> {
    let bytes = string.as_bytes();
    let mut open = None;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 1,
            b'{' if bytes.get(i + 1) == Some(&b'{') && open.is_none() => i += 1,
            b'{' => open = Some(i),
            b'}' => open = None,
            _ => {}
        }
        i += 1;
    }
    let open = open?;
    let typed = &string[open + 1..];
    typed
        .trim_start_matches(' ')
        .chars()
        .all(|c| c.is_alphanumeric() || c == '_')
        .then_some(open)
}

/// The innermost body holding `offset`.
fn context_at(file: &ast::File, offset: usize) -> Context {
    let inside = |span: Span, body: &ast::Body| {
        offset >= body.open.end()
            && body
                .close
                .map_or(offset <= span.end(), |c| offset <= c.start())
    };
    for item in &file.items {
        let (span, body, items, context) = match item {
            ast::TopItem::Plan(p) => (p.span, &p.body, &p.items, Context::Plan),
            ast::TopItem::Template(t) => (t.span, &t.body, &t.items, Context::Template),
            ast::TopItem::Import(_) | ast::TopItem::Role(_) | ast::TopItem::Param(_) => continue,
        };
        if !inside(span, body) {
            continue;
        }
        for item in items {
            match item {
                ast::PlanItem::Step(step) if inside(step.span, &step.body) => {
                    for item in &step.items {
                        if let ast::StepItem::Task(task) = item {
                            if task.body().is_some_and(|b| inside(task.span, &b)) {
                                return Context::Task;
                            }
                        }
                    }
                    return Context::Step;
                }
                ast::PlanItem::Task(task) if task.body().is_some_and(|b| inside(task.span, &b)) => {
                    return Context::Task;
                }
                ast::PlanItem::Use(u) if u.body.as_ref().is_some_and(|b| inside(u.span, b)) => {
                    return Context::Use;
                }
                _ => {}
            }
        }
        return context;
    }
    Context::Top
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ide::test_support::{compile_at, PLAN};

    fn labels(marked: &str) -> Vec<String> {
        let (c, offset) = compile_at(marked);
        completions(&c, offset)
            .into_iter()
            .map(|c| c.label)
            .collect()
    }

    #[test]
    fn names_after_after_and_after_a_comma() {
        let text = PLAN.replace("after build\n", "after $0\n");
        assert_eq!(labels(&text), ["build", "compile", "test"]);
        let text = PLAN.replace("after build\n", "after build, te$0\n");
        assert_eq!(labels(&text), ["build", "compile", "test"]);
        let (c, offset) = compile_at(&text);
        let replace = completions(&c, offset)[0].replace;
        assert_eq!(replace, Span::new(offset - 2, offset));
    }

    #[test]
    fn a_long_list_of_names_is_cut_to_those_that_match_what_is_typed() {
        let mut text = String::from("plan p {\n    step s {\n");
        for i in 0..30 {
            text.push_str(&format!("        task alpha_{i} \"a\"\n"));
            text.push_str(&format!("        task beta_{i} \"b\"\n"));
        }
        text.push_str("        task last \"l\" {\n            after BT_1$0\n        }\n    }\n}\n");
        let (c, offset) = compile_at(&text);
        let (all, cut) = completions_capped(&c, offset, 1000);
        assert!(!cut);
        assert_eq!(all.len(), completions(&c, offset).len());
        let (kept, cut) = completions_capped(&c, offset, 5);
        assert!(cut);
        let labels: Vec<&str> = kept.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(
            labels,
            ["beta_1", "beta_10", "beta_11", "beta_12", "beta_13"]
        );
        assert!(holds_in_order("beta_21", "bt_1"));
        assert!(holds_in_order("BETA_21", "bT_1"));
        assert!(!holds_in_order("alpha_1", "bt_1"));
        // Not ASCII: letters compared as lowercased chars (the Kelvin sign
        // lowercases to `k`, `Ä` to `ä`).
        assert!(holds_in_order("\u{212a}appa", "kp"));
        assert!(holds_in_order("Äpfel", "äf"));
        assert!(!holds_in_order("apfel", "ä"));
    }

    #[test]
    fn roles_after_assignee() {
        let text = PLAN.replace("assignee dev\n", "assignee $0\n");
        assert_eq!(labels(&text), ["dev"]);
    }

    #[test]
    fn params_inside_braces_in_strings() {
        assert_eq!(labels(&PLAN.replace("{thing}", "{th$0")), ["thing"]);
        assert_eq!(
            labels(&PLAN.replace("\"Compile\"", "\"Compile {$0}\"")),
            ["thing"]
        );
        assert!(labels(&PLAN.replace("\"Compile\"", "\"Compile $0\"")).is_empty());
        assert!(labels(&PLAN.replace("\"Compile\"", "\"Compile {{$0\"")).is_empty());
    }

    #[test]
    fn keywords_of_the_body_at_the_cursor() {
        let task = labels(&PLAN.replace("retry 2\n", "retry 2\n        $0\n"));
        assert_eq!(task, Context::Task.keywords());
        let step = labels(&PLAN.replace("task test", "$0\n        task test"));
        assert_eq!(step, Context::Step.keywords());
        let plan = labels(&PLAN.replace("role dev", "ro$0\n    role dev"));
        assert_eq!(plan, Context::Plan.keywords());
        assert_eq!(labels(&format!("{PLAN}$0")), Context::Top.keywords());
        // Half-typed: an unclosed task body.
        assert_eq!(
            labels("plan p {\n task a \"A\" {\n  as$0"),
            Context::Task.keywords()
        );
    }

    /// Texts with keywords inside strings and comments, `"""` strings,
    /// escapes and mistakes before, at and after the places completed.
    fn scanned_texts() -> Vec<String> {
        let described = PLAN.replace(
            "retry 2\n",
            "retry 2\n        description \"\"\"\n  after # task \"x\n\"\"\"\n        # after compile, \"\n        reasoning \"a \\\" after {thing} # task\"\n",
        );
        vec![
            PLAN.to_owned(),
            described.clone(),
            PLAN.replace("after build\n", "after build, te\n"),
            PLAN.replace("after build\n", "after build,\n"),
            PLAN.replace("task test \"Test\"", "task test \"Te"),
            PLAN.replace("role dev", "role dev \"\"\"open"),
            described.replace("step build", "step \"bu"),
            format!("{described}\nplan other {{\n  task a \"A {{th\" {{ after "),
        ]
    }

    #[test]
    fn a_scan_from_the_last_keyword_proposes_what_a_scan_from_the_start_does() {
        for text in scanned_texts() {
            let c = crate::ide::test_support::compile_text(&text);
            for offset in (0..=text.len()).filter(|&o| text.is_char_boundary(o)) {
                assert_eq!(
                    completions(&c, offset),
                    completions_scanned_from(&c, 0, offset, usize::MAX).0,
                    "at {offset} of\n{text}"
                );
            }
        }
    }

    #[test]
    fn the_scan_starts_near_the_cursor_in_a_clean_file() {
        let text = PLAN.replace("after build\n", "after build, $0\n");
        let (c, offset) = compile_at(&text);
        let start = scan_start(&c, offset);
        let text = crate::ide::root_text(&c);
        assert_eq!(&text[start..offset], "after build, ");
        assert_eq!(
            labels(&PLAN.replace("after build\n", "after build, $0\n")),
            ["build", "compile", "test"]
        );
    }

    #[test]
    fn nothing_where_a_new_name_or_a_comment_goes() {
        assert!(labels(&PLAN.replace("task ship", "task $0ship")).is_empty());
        assert!(labels("# a comment $0\n").is_empty());
    }
}
