//! Hover: what a name under the cursor stands for, in Markdown.

use super::{role_of, step_of, task_of, Location};
use crate::compile::Compilation;
use crate::ir::{self, SymbolKind};
use crate::span::Span;
use crate::syntax::{ast, keywords};

/// A hover card: Markdown text about the name at `span`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hover {
    pub location: Location,
    pub markdown: String,
}

/// The card for the task, step, role, parameter or plan named at `offset`.
pub fn hover(compilation: &Compilation, offset: usize) -> Option<Hover> {
    let symbols = &compilation.checked.symbols;
    let file = compilation.file;
    let Some(def) = symbols.at(file, offset) else {
        return keyword_card(compilation, offset);
    };
    let span = symbols
        .definitions
        .iter()
        .filter(|d| d.file() == file)
        .map(|d| d.span())
        .chain(
            symbols
                .references
                .iter()
                .filter(|r| r.file == file)
                .map(|r| r.span),
        )
        .find(|s| s.touches(offset))?;
    let definition = &symbols.definition(def)?;
    let name = &definition.name();
    let markdown = match definition.kind() {
        SymbolKind::Task => task_card(compilation, def, name),
        SymbolKind::Step => step_card(compilation, def, name),
        SymbolKind::Role => role_card(compilation, def, name),
        SymbolKind::Param => param_card(compilation, definition.full_span(), name),
        SymbolKind::Plan => plan_card(compilation, name),
        SymbolKind::Template => format!("**template** `{name}`"),
        SymbolKind::Instance => {
            format!("**template instance** `{name}`: `after {name}` waits for all of its tasks")
        }
    };
    Some(Hover {
        location: Location { file, span },
        markdown,
    })
}

/// The card of the keyword at `offset`: its line from the keyword table.
fn keyword_card(compilation: &Compilation, offset: usize) -> Option<Hover> {
    let file = compilation.file;
    let syntax = compilation.syntax();
    let at = syntax.keywords.partition_point(|k| k.end() < offset);
    let span = syntax.keywords.get(at).filter(|k| k.touches(offset))?;
    let text = &compilation.sources.get(file).text;
    let keyword = keywords::get(text.get(span.range())?)?;
    Some(Hover {
        location: Location { file, span },
        markdown: format!("**keyword** `{}`\n\n{}\n", keyword.word, keyword.doc),
    })
}

/// "`a`, `b`" for a list of names.
fn code_list<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    names
        .into_iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn task_card(compilation: &Compilation, def: usize, name: &str) -> String {
    let (Some((index, task)), Some(plan)) = (task_of(compilation, def), &compilation.checked.plan)
    else {
        return format!("**task** `{name}`");
    };
    let key_of =
        |id: &ir::TaskId| -> &str { plan.tasks.get(*id as usize - 1).map_or("?", |t| t.key()) };
    let mut out = format!("**task** `{name}`");
    if let Some(step) = plan.step_of(index) {
        out.push_str(&format!(" in step `{}`", step.id));
    }
    out.push_str(&format!("\n\n{}\n", task.name()));
    let mut facts = Vec::new();
    if let Some(assignee) = task.assignee() {
        facts.push(format!("- assignee: `{assignee}`"));
    }
    let dependencies = plan.dependencies.of(index);
    if !dependencies.is_empty() {
        facts.push(format!(
            "- after: {}",
            code_list(dependencies.iter().map(key_of))
        ));
    }
    let id = index as ir::TaskId + 1;
    let dependents: Vec<&str> = (plan.tasks.iter().enumerate())
        .filter(|&(at, _)| plan.dependencies.of(at).binary_search(&id).is_ok())
        .map(|(_, t)| t.key())
        .collect();
    if !dependents.is_empty() {
        facts.push(format!("- before: {}", code_list(dependents)));
    }
    if let Some(retry) = task.retry().filter(|&r| r > 0) {
        facts.push(format!("- retry: {retry}"));
    }
    if task.optional {
        facts.push("- optional".to_owned());
    }
    if let Some(priority) = task.priority {
        facts.push(format!("- priority: {}", priority.as_str()));
    }
    if !facts.is_empty() {
        out.push('\n');
        out.push_str(&facts.join("\n"));
        out.push('\n');
    }
    out
}

fn step_card(compilation: &Compilation, def: usize, name: &str) -> String {
    let Some(step) = step_of(compilation, def) else {
        return format!("**step** `{name}`");
    };
    let mut out = format!("**step** `{name}`\n\n{}\n", step.name);
    if let Some(plan) = &compilation.checked.plan {
        let keys = step
            .tasks
            .iter()
            .filter_map(|id| plan.tasks.get(*id as usize - 1))
            .map(|t| t.key());
        let count = step.tasks.len();
        let noun = if count == 1 { "task" } else { "tasks" };
        out.push_str(&format!("\n- {count} {noun}: {}\n", code_list(keys)));
    }
    out
}

fn role_card(compilation: &Compilation, def: usize, name: &str) -> String {
    let mut out = format!("**role** `{name}`");
    if let Some(description) = role_of(compilation, def).and_then(|r| r.description.as_ref()) {
        out.push_str(&format!("\n\n{description}\n"));
    }
    if let Some(plan) = &compilation.checked.plan {
        let tasks: Vec<&str> = plan
            .tasks
            .iter()
            .filter(|t| t.assignee() == Some(name))
            .map(|t| t.key())
            .collect();
        if !tasks.is_empty() {
            out.push_str(&format!("\n- assigned: {}\n", code_list(tasks)));
        }
    }
    out
}

fn param_card(compilation: &Compilation, full_span: Span, name: &str) -> String {
    let text = super::root_text(compilation);
    let declaration = param_declaration(super::root_syntax(compilation), full_span);
    let signature = match declaration {
        Some(param) => text
            .get(param.span.start()..param.span.end())
            .unwrap_or(name)
            .to_owned(),
        None => format!("param {name}"),
    };
    let mut out = format!("**parameter** `{name}`\n\n```plan\n{signature}\n```\n");
    let value = compilation
        .checked
        .plan
        .as_ref()
        .and_then(|p| p.params.iter().find(|p| p.name == name))
        .and_then(|p| p.value.as_ref());
    match value {
        Some(value) => out.push_str(&format!("\n- value: `{}`\n", value.to_text())),
        None => out.push_str("\n- no default: give it with `--set`\n"),
    }
    out
}

fn param_declaration(file: &ast::File, full_span: Span) -> Option<&ast::Param> {
    file.items.iter().find_map(|item| match item {
        ast::TopItem::Plan(plan) => plan.items.iter().find_map(|item| match item {
            ast::PlanItem::Param(p) if p.span == full_span => Some(&**p),
            _ => None,
        }),
        ast::TopItem::Template(t) => t.params.iter().find(|p| p.span == full_span),
        ast::TopItem::Param(p) if p.span == full_span => Some(p),
        ast::TopItem::Import(_) | ast::TopItem::Role(_) | ast::TopItem::Param(_) => None,
    })
}

fn plan_card(compilation: &Compilation, name: &str) -> String {
    let Some(plan) = &compilation.checked.plan else {
        return format!("**plan** `{name}`");
    };
    let mut out = format!("**plan** `{name}`");
    if let Some(title) = &plan.title {
        out.push_str(&format!(": {title}"));
    }
    if !plan.goal.is_empty() {
        out.push_str(&format!("\n\n{}\n", plan.goal));
    }
    let tasks = plan.tasks.len();
    let steps = plan.steps.len();
    out.push_str(&format!(
        "\n- {tasks} task{}, {steps} step{}\n",
        if tasks == 1 { "" } else { "s" },
        if steps == 1 { "" } else { "s" }
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ide::test_support::{compile_at, slice, PLAN};

    fn card(marked: &str) -> String {
        let (c, offset) = compile_at(marked);
        let hover = hover(&c, offset).expect("a hover");
        assert!(hover.location.span.touches(offset));
        let _ = slice(&c, hover.location.span);
        hover.markdown
    }

    #[test]
    fn a_task_shows_step_assignee_dependencies_and_dependents() {
        let text = card(&PLAN.replace("task compile", "task com$0pile"));
        assert_eq!(
            text,
            // Dependencies are minimal: `ship` waits for `test`, which waits for `compile`.
            "**task** `compile` in step `build`\n\nCompile\n\n- assignee: `dev`\n- before: `test`\n"
        );
        let text = card(&PLAN.replace("task ship", "task s$0hip"));
        assert_eq!(
            text,
            "**task** `ship`\n\nShip\n\n- assignee: `dev`\n- after: `test`\n- retry: 2\n"
        );
    }

    #[test]
    fn keywords_show_their_line_of_the_keyword_table() {
        assert_eq!(
            card(&PLAN.replace("task ship", "ta$0sk ship")),
            "**keyword** `task`\n\n`task NAME \"…\" { … }`: one piece of work for an agent.\n"
        );
        assert_eq!(
            card(&PLAN.replace("after build", "after$0 build")),
            "**keyword** `after`\n\n`after a, b`: wait for these tasks or steps to be done.\n"
        );
        // Not on a keyword, nor on a name: no card.
        let (c, offset) = compile_at(&PLAN.replace("plan demo", "plan demo$0 "));
        assert_eq!(hover(&c, offset + 1), None);
    }

    #[test]
    fn steps_roles_params_and_the_plan_have_cards() {
        assert_eq!(
            card(&PLAN.replace("after build", "after bu$0ild")),
            "**step** `build`\n\nBuild it\n\n- 2 tasks: `compile`, `test`\n"
        );
        assert_eq!(
            card(&PLAN.replace("role dev", "role $0dev")),
            "**role** `dev`\n\nWrites code\n\n- assigned: `compile`, `ship`\n"
        );
        assert_eq!(
            card(&PLAN.replace("{thing}", "{$0thing}")),
            "**parameter** `thing`\n\n```plan\nparam thing: string = \"it\"\n```\n\n- value: `it`\n"
        );
        assert_eq!(
            card(&PLAN.replace("plan demo", "plan de$0mo")),
            "**plan** `demo`\n\nShip it\n\n- 3 tasks, 1 step\n"
        );
    }
}
