//! The outline of a file: plans, their parameters, roles, steps and tasks.

use crate::compile::Compilation;
use crate::ir::SymbolKind;
use crate::span::Span;
use crate::syntax::ast;

/// One entry of the outline.
#[derive(Clone, Debug, PartialEq)]
pub struct Symbol {
    pub name: String,
    pub kind: SymbolKind,
    /// A short description: a title, a type.
    pub detail: Option<String>,
    /// The whole declaration.
    pub span: Span,
    /// The name.
    pub selection: Span,
    pub children: Vec<Symbol>,
}

impl Symbol {
    fn new(kind: SymbolKind, name: &ast::Ident, span: Span, detail: Option<String>) -> Symbol {
        Symbol {
            name: name.name.to_string(),
            kind,
            detail,
            span,
            selection: name.span,
            children: Vec::new(),
        }
    }
}

/// The outline of the file, in source order.
pub fn document_symbols(compilation: &Compilation) -> Vec<Symbol> {
    super::root_syntax(compilation)
        .items
        .iter()
        .filter_map(|item| match item {
            ast::TopItem::Plan(plan) => {
                let mut symbol = Symbol::new(SymbolKind::Plan, &plan.name, plan.span, None);
                symbol.children = plan_items(&plan.items);
                symbol.detail = plan.items.iter().find_map(|item| match item {
                    ast::PlanItem::Title(f) => Some(f.value.template_text()),
                    _ => None,
                });
                Some(symbol)
            }
            ast::TopItem::Template(template) => {
                let mut symbol =
                    Symbol::new(SymbolKind::Template, &template.name, template.span, None);
                symbol.children = template.params.iter().map(param).collect();
                symbol.children.extend(plan_items(&template.items));
                Some(symbol)
            }
            ast::TopItem::Role(r) => Some(role(r)),
            ast::TopItem::Param(p) => Some(param(p)),
            ast::TopItem::Import(_) => None,
        })
        .collect()
}

fn plan_items(items: &ast::Items) -> Vec<Symbol> {
    items
        .iter()
        .filter_map(|item| match item {
            ast::PlanItem::Param(p) => Some(param(p)),
            ast::PlanItem::Role(r) => Some(role(r)),
            ast::PlanItem::Step(step) => {
                let mut symbol = Symbol::new(
                    SymbolKind::Step,
                    &step.name,
                    step.span,
                    step.title.as_ref().map(ast::Str::template_text),
                );
                symbol.children = step
                    .items
                    .iter()
                    .filter_map(|item| match item {
                        ast::StepItem::Task(task) => Some(task_symbol(task)),
                        _ => None,
                    })
                    .collect();
                Some(symbol)
            }
            ast::PlanItem::Task(task) => Some(task_symbol(task)),
            _ => None,
        })
        .collect()
}

fn role(r: &ast::Role) -> Symbol {
    Symbol::new(
        SymbolKind::Role,
        &r.name,
        r.span,
        r.description.as_ref().map(ast::Str::template_text),
    )
}

fn param(p: &ast::Param) -> Symbol {
    Symbol::new(
        SymbolKind::Param,
        &p.name,
        p.span,
        Some(p.ty.name.to_string()),
    )
}

fn task_symbol(task: &ast::Task) -> Symbol {
    Symbol::new(
        SymbolKind::Task,
        &task.name,
        task.span,
        Some(task.title.template_text()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ide::test_support::{compile_text, PLAN};

    fn outline(symbols: &[Symbol], depth: usize, out: &mut String) {
        for s in symbols {
            out.push_str(&format!(
                "{}{} {} ({})\n",
                "  ".repeat(depth),
                s.kind.as_str(),
                s.name,
                s.detail.as_deref().unwrap_or("")
            ));
            outline(&s.children, depth + 1, out);
        }
    }

    #[test]
    fn plan_holds_params_roles_steps_and_tasks() {
        let c = compile_text(PLAN);
        let mut out = String::new();
        outline(&document_symbols(&c), 0, &mut out);
        assert_eq!(
            out,
            "plan demo ()\n  parameter thing (string)\n  role dev (Writes code)\n  step build (Build it)\n    task compile (Compile)\n    task test (Test)\n  task ship (Ship)\n"
        );
    }
}
