//! Semantic tokens: what each piece of a file is, for highlighting.

mod changed;
mod cursor;
mod encode;
mod names;
mod store;
#[cfg(test)]
#[path = "tokens/tests/store.rs"]
mod tests_store;
mod tiles;

pub use encode::{EncodedToken, TokensDelta};
pub use store::TokenStore;

use crate::compile::Compilation;
use crate::ir::SymbolKind;
use crate::span::Span;
use crate::syntax::ast;

/// What a highlighted piece of text is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TokenKind {
    Keyword,
    Comment,
    String,
    Number,
    /// `true` / `false`.
    Bool,
    /// A parameter's type: `string`, `int` …
    Type,
    Plan,
    Template,
    Param,
    Role,
    Step,
    Task,
}

/// One highlighted piece; `definition` marks the place a name is declared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    pub span: Span,
    pub kind: TokenKind,
    pub definition: bool,
}

/// Every token of the file, sorted and non-overlapping. A token may span
/// several lines (a `"""` string); the protocol layer splits it if it must.
pub fn semantic_tokens(compilation: &Compilation) -> Vec<Token> {
    without_overlaps(sources(compilation, |_| true))
}

/// The tokens of [`semantic_tokens`] that overlap `start..end`, without
/// sorting the file's: the tokens whose spans overlap the range, and those
/// overlapping any of them (an interpolation in a string the range cuts,
/// which cuts that string), are sorted and cut alone.
pub fn semantic_tokens_in(compilation: &Compilation, start: usize, end: usize) -> Vec<Token> {
    let overlap = |span: Span, (from, to): (usize, usize)| span.start() < to && from < span.end();
    let range = (start, end);
    let window = sources(compilation, |span| overlap(span, range))
        .iter()
        .fold(range, |(from, to), t| {
            (from.min(t.span.start()), to.max(t.span.end()))
        });
    without_overlaps(sources(compilation, |span| overlap(span, window)))
        .into_iter()
        .filter(|t| overlap(t.span, range))
        .collect()
}

/// The file's tokens whose spans `keep` accepts, unsorted and overlapping:
/// keywords, comments, the names defined and referred to in this file, and
/// literals.
fn sources(compilation: &Compilation, keep: impl Fn(Span) -> bool) -> Vec<Token> {
    let file = super::root_syntax(compilation);
    let symbols = &compilation.checked.symbols;
    let literals = literals(file);
    // Made whole at once: a large file has about a million tokens, and a
    // list grown by doubling copies them and takes fresh pages each time.
    let most = file.keywords.len()
        + file.comments.len()
        + symbols.definitions.len()
        + symbols.references.len()
        + literals.len();
    let mut tokens = Vec::with_capacity(most);
    let mut push = |span: Span, kind: TokenKind, definition: bool| {
        if !span.is_empty() && keep(span) {
            tokens.push(Token {
                span,
                kind,
                definition,
            });
        }
    };
    for span in file.keywords.iter() {
        push(span, TokenKind::Keyword, false);
    }
    for &span in &file.comments {
        push(span, TokenKind::Comment, false);
    }
    for definition in &symbols.definitions {
        if definition.file() == compilation.file {
            push(definition.span(), name_kind(definition.kind()), true);
        }
    }
    let kinds: Vec<SymbolKind> = symbols.definitions.unmoved().map(|d| d.kind()).collect();
    for reference in &symbols.references {
        if reference.file == compilation.file {
            let kind = kinds[reference.definition as usize];
            push(reference.span, name_kind(kind), false);
        }
    }
    for (span, kind) in literals {
        push(span, kind, false);
    }
    tokens
}

/// The literals of a file: strings, numbers, durations.
fn literals(file: &ast::File) -> Vec<(Span, TokenKind)> {
    let mut literals = Literals::default();
    for item in &file.items {
        match item {
            ast::TopItem::Plan(plan) => literals.plan_items(&plan.items),
            ast::TopItem::Template(template) => {
                for param in &template.params {
                    literals.param(param);
                }
                literals.plan_items(&template.items);
            }
            other => literals.top_item(other),
        }
    }
    literals.0
}

/// The tokens sorted, without overlaps: a string token is cut around the
/// interpolations inside it; any other overlap keeps the first token.
fn without_overlaps(mut tokens: Vec<Token>) -> Vec<Token> {
    let mut out: Vec<Token> = Vec::with_capacity(tokens.len());
    without_overlaps_into(&mut tokens, &mut out);
    out
}

/// [`without_overlaps`] of `tokens` (sorted in place) into `out` (emptied
/// first), so that a caller reuses both lists.
fn without_overlaps_into(tokens: &mut [Token], out: &mut Vec<Token>) {
    tokens.sort_by_key(|t| (t.span.start(), std::cmp::Reverse(t.span.end())));
    out.clear();
    for &token in tokens.iter() {
        match out.last_mut() {
            Some(last) if token.span.start() < last.span.end() => {
                let within =
                    last.span.start() <= token.span.start() && token.span.end() <= last.span.end();
                if last.kind == TokenKind::String && within && last.span != token.span {
                    let rest = Token {
                        span: Span::new(token.span.end(), last.span.end()),
                        ..*last
                    };
                    last.span = Span::new(last.span.start(), token.span.start());
                    if last.span.is_empty() {
                        out.pop();
                    }
                    out.push(token);
                    if !rest.span.is_empty() {
                        out.push(rest);
                    }
                }
            }
            _ => out.push(token),
        }
    }
}

fn name_kind(kind: SymbolKind) -> TokenKind {
    match kind {
        SymbolKind::Plan => TokenKind::Plan,
        SymbolKind::Template => TokenKind::Template,
        SymbolKind::Param => TokenKind::Param,
        SymbolKind::Role => TokenKind::Role,
        SymbolKind::Step => TokenKind::Step,
        SymbolKind::Task => TokenKind::Task,
        SymbolKind::Instance => TokenKind::Step,
    }
}

/// Strings, numbers and types found walking the tree; interpolations in
/// strings are parameters even when they name none.
#[derive(Default)]
struct Literals(Vec<(Span, TokenKind)>);

impl Literals {
    fn string(&mut self, string: &ast::Str) {
        self.0.push((string.span, TokenKind::String));
        for param in string.params() {
            self.0.push((param.span, TokenKind::Param));
        }
    }

    fn literal(&mut self, literal: &ast::Literal) {
        match literal {
            ast::Literal::Str(s) => self.string(s),
            ast::Literal::Int(i) => self.0.push((i.span, TokenKind::Number)),
            ast::Literal::Float { span, .. } => self.0.push((*span, TokenKind::Number)),
            ast::Literal::Bool { span, .. } => self.0.push((*span, TokenKind::Bool)),
        }
    }

    fn param(&mut self, param: &ast::Param) {
        self.0.push((param.ty.span, TokenKind::Type));
        if let Some(default) = &param.default {
            self.literal(default);
        }
    }

    /// An import's path, a role's description, a parameter's type and
    /// default (the literals of a plan or template are in their items).
    fn top_item(&mut self, item: &ast::TopItem) {
        match item {
            ast::TopItem::Import(import) => self.string(&import.path),
            ast::TopItem::Param(param) => self.param(param),
            ast::TopItem::Role(role) => {
                if let Some(d) = &role.description {
                    self.string(d);
                }
            }
            ast::TopItem::Plan(_) | ast::TopItem::Template(_) => {}
        }
    }

    fn plan_items(&mut self, items: &ast::Items) {
        for item in items {
            self.plan_item(item);
        }
    }

    fn plan_item(&mut self, item: &ast::PlanItem) {
        match item {
            ast::PlanItem::Title(f) | ast::PlanItem::Goal(f) | ast::PlanItem::Language(f) => {
                self.string(&f.value)
            }
            ast::PlanItem::MaxIterations(f)
            | ast::PlanItem::TransitionRounds(f)
            | ast::PlanItem::FallbackRounds(f)
            | ast::PlanItem::Retry(f) => self.0.push((f.value.span, TokenKind::Number)),
            ast::PlanItem::Param(p) => self.param(p),
            ast::PlanItem::Role(r) => {
                if let Some(d) = &r.description {
                    self.string(d);
                }
            }
            ast::PlanItem::Step(step) => {
                if let Some(t) = &step.title {
                    self.string(t);
                }
                for item in &step.items {
                    if let ast::StepItem::Task(task) = item {
                        self.task(task);
                    }
                }
            }
            ast::PlanItem::Task(task) => self.task(task),
            ast::PlanItem::Use(u) => {
                for arg in &u.args {
                    self.literal(&arg.value);
                }
            }
        }
    }

    fn task(&mut self, task: &ast::Task) {
        self.string(&task.title);
        for field in &task.fields {
            match field {
                ast::TaskField::Reasoning(f) | ast::TaskField::Description(f) => {
                    self.string(&f.value)
                }
                ast::TaskField::Retry(f) => self.0.push((f.value.span, TokenKind::Number)),
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ide::test_support::compile_text;

    #[test]
    fn the_tokens_of_a_range_are_the_whole_files_that_overlap_it() {
        let text = concat!(
            "# c\nplan p {\n    goal \"a {x} b\"\n    param x: int = 3\n",
            "    step s \"S\" {\n        task t \"T {x}\" {\n            description \"\"\"\n",
            "            many {x}\n            lines {x} here\n            \"\"\"\n",
            "            retry 1\n        }\n        task u \"U\" { after t }\n    }\n}\n",
        );
        let c = compile_text(text);
        let all = semantic_tokens(&c);
        let overlap =
            |t: &Token, from: usize, to: usize| t.span.start() < to && from < t.span.end();
        for from in 0..=text.len() {
            for to in from..=text.len() {
                let want: Vec<&Token> = all.iter().filter(|t| overlap(t, from, to)).collect();
                let got = semantic_tokens_in(&c, from, to);
                assert_eq!(got.iter().collect::<Vec<_>>(), want, "{from}..{to}");
            }
        }
    }

    #[test]
    fn classifies_every_piece_and_cuts_strings_around_interpolations() {
        let text = "# c\nplan p {\n    goal \"a {x} b\"\n    param x: int = 3\n    task t \"T\" { retry 1 }\n}\n";
        let c = compile_text(text);
        let tokens: Vec<String> = semantic_tokens(&c)
            .iter()
            .map(|t| {
                format!(
                    "{:?}{} {}",
                    t.kind,
                    if t.definition { "*" } else { "" },
                    &text[t.span.range()]
                )
            })
            .collect();
        assert_eq!(
            tokens,
            [
                "Comment # c",
                "Keyword plan",
                "Plan* p",
                "Keyword goal",
                "String \"a {",
                "Param x",
                "String } b\"",
                "Keyword param",
                "Param* x",
                "Type int",
                "Number 3",
                "Keyword task",
                "Task* t",
                "String \"T\"",
                "Keyword retry",
                "Number 1",
            ]
        );
    }
}
