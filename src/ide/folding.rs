//! Folding ranges: bodies, multi-line strings, runs of comment lines.

use crate::compile::Compilation;
use crate::span::Span;
use crate::syntax::ast;

/// What a fold hides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FoldKind {
    Region,
    Comment,
}

/// A foldable range, from `start` to `end` (byte offsets of its first and
/// last character). A body's fold stops before its `}` line, so the brace
/// stays visible.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fold {
    pub start: usize,
    pub end: usize,
    pub kind: FoldKind,
}

/// Every fold of the file, in source order. Folds within one line are kept:
/// the protocol layer, which knows lines, drops them.
pub fn folding_ranges(compilation: &Compilation) -> Vec<Fold> {
    let text = super::root_text(compilation);
    let file = super::root_syntax(compilation);
    let mut folds = Vec::new();
    let mut body = |span: Span, body: &ast::Body| {
        let end = match body.close {
            Some(close) => text[..close.start().min(text.len())].trim_end().len(),
            None => text[..span.end().min(text.len())].trim_end().len(),
        };
        folds.push(Fold {
            start: body.open.start(),
            end,
            kind: FoldKind::Region,
        });
    };
    let mut strings = Vec::new();
    for item in &file.items {
        match item {
            ast::TopItem::Plan(plan) => {
                body(plan.span, &plan.body);
                plan_items(&plan.items, &mut body, &mut strings);
            }
            ast::TopItem::Template(template) => {
                body(template.span, &template.body);
                plan_items(&template.items, &mut body, &mut strings);
            }
            ast::TopItem::Import(_) | ast::TopItem::Role(_) | ast::TopItem::Param(_) => {}
        }
    }
    for span in strings {
        if text
            .get(span.start()..span.end())
            .is_some_and(|s| s.contains('\n'))
        {
            folds.push(Fold {
                start: span.start(),
                end: span.end(),
                kind: FoldKind::Region,
            });
        }
    }
    folds.extend(comment_blocks(text, &file.comments));
    folds.sort_by_key(|f| (f.start, f.end));
    folds
}

fn plan_items(
    items: &ast::Items,
    body: &mut impl FnMut(Span, &ast::Body),
    strings: &mut Vec<Span>,
) {
    for item in items {
        match item {
            ast::PlanItem::Title(f) | ast::PlanItem::Goal(f) | ast::PlanItem::Language(f) => {
                strings.push(f.value.span)
            }
            ast::PlanItem::Step(step) => {
                body(step.span, &step.body);
                for item in &step.items {
                    if let ast::StepItem::Task(task) = item {
                        task_folds(task, body, strings);
                    }
                }
            }
            ast::PlanItem::Task(task) => task_folds(task, body, strings),
            ast::PlanItem::Use(u) => {
                if let Some(b) = &u.body {
                    body(u.span, b);
                }
            }
            _ => {}
        }
    }
}

fn task_folds(task: &ast::Task, body: &mut impl FnMut(Span, &ast::Body), strings: &mut Vec<Span>) {
    if let Some(b) = &task.body() {
        body(task.span, b);
    }
    strings.push(task.title.span);
    for field in &task.fields {
        if let ast::TaskField::Reasoning(f) | ast::TaskField::Description(f) = field {
            strings.push(f.value.span);
        }
    }
}

/// Runs of two or more comments on consecutive lines, each alone on its line.
fn comment_blocks(text: &str, comments: &[Span]) -> Vec<Fold> {
    let alone = |span: &Span| {
        let line_start = text[..span.start()].rfind('\n').map_or(0, |i| i + 1);
        text[line_start..span.start()].trim().is_empty()
    };
    let mut folds = Vec::new();
    let mut run: Option<(Span, Span, usize)> = None;
    for comment in comments.iter().filter(|c| alone(c)) {
        run = match run {
            Some((first, last, count))
                if text[last.end()..comment.start()].matches('\n').count() == 1 =>
            {
                Some((first, *comment, count + 1))
            }
            Some((first, last, count)) => {
                if count > 1 {
                    folds.push(comment_fold(first, last));
                }
                Some((*comment, *comment, 1))
            }
            None => Some((*comment, *comment, 1)),
        };
    }
    if let Some((first, last, count)) = run {
        if count > 1 {
            folds.push(comment_fold(first, last));
        }
    }
    folds
}

fn comment_fold(first: Span, last: Span) -> Fold {
    Fold {
        start: first.start(),
        end: last.end(),
        kind: FoldKind::Comment,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ide::test_support::compile_text;

    #[test]
    fn folds_bodies_strings_and_comment_blocks() {
        let text = "# one\n# two\nplan p {\n    goal \"g\"\n    task a \"A\" {\n        description \"\"\"\n            x\n        \"\"\"\n    }\n}\n";
        let c = compile_text(text);
        let folds: Vec<(&str, FoldKind)> = folding_ranges(&c)
            .iter()
            .map(|f| (&text[f.start..f.end], f.kind))
            .collect();
        assert_eq!(folds[0], ("# one\n# two", FoldKind::Comment));
        assert!(folds[1].0.starts_with("{\n    goal") && folds[1].0.ends_with("    }"));
        assert!(folds[2].0.starts_with("{\n        description") && folds[2].0.ends_with("\"\"\""));
        assert_eq!(folds[3].0, "\"\"\"\n            x\n        \"\"\"");
        assert_eq!(folds.len(), 4);
    }
}
