//! `planc graph`: the dependency graph as Mermaid or Graphviz DOT, steps as
//! subgraphs, assignees shown, tasks coloured by status (so a runner state
//! shows progress).

use std::fmt::Write;

use crate::document::{PlanDocument, TaskDoc, TaskStatus};
use crate::escape;

/// A picture format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GraphFormat {
    Mermaid,
    Dot,
}

/// Fill and stroke colours per status: (status, fill, stroke).
const COLOURS: [(TaskStatus, &str, &str); 5] = [
    (TaskStatus::Pending, "#f5f5f5", "#9e9e9e"),
    (TaskStatus::InProgress, "#fff3cd", "#e0a800"),
    (TaskStatus::Completed, "#d4edda", "#28a745"),
    (TaskStatus::Failed, "#f8d7da", "#dc3545"),
    (TaskStatus::Skipped, "#e2e3e5", "#6c757d"),
];

/// Draws a plan document.
pub fn render(document: &PlanDocument, format: GraphFormat) -> String {
    match format {
        GraphFormat::Mermaid => mermaid(document),
        GraphFormat::Dot => dot(document),
    }
}

/// The lines of a task's label: key and name, then the assignee and marks.
fn label_lines(task: &TaskDoc) -> Vec<String> {
    let mut lines = vec![match &task.key {
        Some(key) => format!("{key}: {}", task.name),
        None => format!("#{}: {}", task.id, task.name),
    }];
    let mut marks = Vec::new();
    if let Some(assignee) = &task.assignee {
        marks.push(format!("@{assignee}"));
    }
    if task.optional {
        marks.push("optional".to_owned());
    }
    if let Some(max) = task.retry.max.filter(|&m| m > 0) {
        marks.push(format!("retry {}/{max}", task.retry.count));
    }
    // A state's in-progress task: who holds it.
    if let Some(agent) = task.holder.as_ref().and_then(|h| h.agent.as_ref()) {
        marks.push(format!("held by {agent}"));
    }
    if !marks.is_empty() {
        lines.push(marks.join(" · "));
    }
    lines
}

/// A step's number (from 1), name and tasks.
type StepGroup<'a> = (usize, &'a str, Vec<&'a TaskDoc>);

/// Tasks grouped by step (in document order of steps), then the loose ones.
fn groups(document: &PlanDocument) -> (Vec<StepGroup<'_>>, Vec<&TaskDoc>) {
    let mut grouped = Vec::new();
    let mut in_step = std::collections::HashSet::new();
    for (i, step) in document.steps.iter().enumerate() {
        let tasks: Vec<&TaskDoc> = document
            .tasks
            .iter()
            .filter(|t| step.tasks.contains(&t.id))
            .collect();
        in_step.extend(tasks.iter().map(|t| t.id));
        grouped.push((i + 1, step.name.as_str(), tasks));
    }
    let loose = document
        .tasks
        .iter()
        .filter(|t| !in_step.contains(&t.id))
        .collect();
    (grouped, loose)
}

/// One line of a Mermaid label: escaped ([`escape::line`]), then Mermaid's
/// entity codes for the characters its syntax uses.
fn mermaid_text(text: &str) -> String {
    escape::line(text)
        .replace('&', "#amp;")
        .replace('"', "#quot;")
        .replace('<', "#lt;")
        .replace('>', "#gt;")
}

fn mermaid(document: &PlanDocument) -> String {
    let mut out = String::from("flowchart TD\n");
    let node = |out: &mut String, task: &TaskDoc, indent: &str| {
        let label: Vec<String> = label_lines(task).iter().map(|l| mermaid_text(l)).collect();
        let _ = writeln!(out, "{indent}t{}[\"{}\"]", task.id, label.join("<br/>"));
    };
    let (grouped, loose) = groups(document);
    for (index, name, tasks) in &grouped {
        let _ = writeln!(out, "    subgraph s{index}[\"{}\"]", mermaid_text(name));
        for task in tasks {
            node(&mut out, task, "        ");
        }
        out.push_str("    end\n");
    }
    for task in &loose {
        node(&mut out, task, "    ");
    }
    for task in &document.tasks {
        for dep in &task.dependencies {
            let _ = writeln!(out, "    t{dep} --> t{}", task.id);
        }
    }
    for (status, fill, stroke) in COLOURS {
        let _ = writeln!(
            out,
            "    classDef {} fill:{fill},stroke:{stroke},color:#212121",
            status.as_str()
        );
        let ids: Vec<String> = document
            .tasks
            .iter()
            .filter(|t| t.status == status)
            .map(|t| format!("t{}", t.id))
            .collect();
        if !ids.is_empty() {
            let _ = writeln!(out, "    class {} {}", ids.join(","), status.as_str());
        }
    }
    out
}

/// One line of a DOT string: escaped ([`escape::line`]), then DOT's quoting.
fn dot_text(text: &str) -> String {
    escape::line(text)
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
}

fn dot(document: &PlanDocument) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "digraph \"{}\" {{", dot_text(&document.meta.id));
    out.push_str("    rankdir=TB;\n");
    out.push_str("    node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\"];\n");
    let colour = |status: TaskStatus| {
        COLOURS
            .iter()
            .find(|c| c.0 == status)
            .map_or(("#ffffff", "#000000"), |c| (c.1, c.2))
    };
    let node = |out: &mut String, task: &TaskDoc, indent: &str| {
        let (fill, stroke) = colour(task.status);
        let _ = writeln!(
            out,
            "{indent}t{} [label=\"{}\", fillcolor=\"{fill}\", color=\"{stroke}\", tooltip=\"{}\"];",
            task.id,
            label_lines(task)
                .iter()
                .map(|l| dot_text(l))
                .collect::<Vec<_>>()
                .join("\\n"),
            task.status.as_str()
        );
    };
    let (grouped, loose) = groups(document);
    for (index, name, tasks) in &grouped {
        let _ = writeln!(out, "    subgraph cluster_{index} {{");
        let _ = writeln!(out, "        label=\"{}\";", dot_text(name));
        out.push_str("        style=\"rounded\";\n");
        for task in tasks {
            node(&mut out, task, "        ");
        }
        out.push_str("    }\n");
    }
    for task in &loose {
        node(&mut out, task, "    ");
    }
    for task in &document.tasks {
        for dep in &task.dependencies {
            let _ = writeln!(out, "    t{dep} -> t{};", task.id);
        }
    }
    out.push_str("}\n");
    out
}
