//! The checks across tasks: duplicate ids, unknown dependencies, and the
//! dependency graph's (self-dependency, cycles, redundant edges).

use std::collections::HashMap;

use super::Validator;
use crate::check::graph;
use crate::diagnostic::{Code, Diagnostic};
use crate::span::Span;

/// A task as read, for the cross-task checks.
pub(super) struct TaskInfo {
    pub(super) id: u32,
    pub(super) id_span: Span,
    pub(super) name: String,
    /// Each dependency, where it is written, and whether the document
    /// names it (`false`: implied by the shape, never called redundant).
    pub(super) deps: Vec<(u32, Span, bool)>,
}

impl Validator {
    /// Duplicate ids, unknown dependencies, and the graph checks.
    pub(super) fn cross_task_with(&mut self, tasks: &[TaskInfo]) {
        let mut index: HashMap<u32, usize> = HashMap::new();
        for (i, task) in tasks.iter().enumerate() {
            if let Some(&first) = index.get(&task.id) {
                self.diagnostics.push(
                    Diagnostic::new(
                        Code::Duplicate,
                        format!("two tasks have the id {}", task.id),
                    )
                    .label(self.file, task.id_span, "used again here")
                    .label(self.file, tasks[first].id_span, "first used here")
                    .help("task ids must be unique"),
                );
            } else {
                index.insert(task.id, i);
            }
        }
        let mut dep_graph = graph::DepGraph {
            nodes: tasks
                .iter()
                .map(|t| graph::Node { name: &t.name })
                .collect(),
            edges: Vec::new(),
            groups: Vec::new(),
        };
        for (i, task) in tasks.iter().enumerate() {
            for &(dep, at, direct) in &task.deps {
                match index.get(&dep) {
                    Some(&j) => dep_graph
                        .edges
                        .push(graph::Edge::new(i as u32, j as u32, self.file, at, direct)),
                    None => self.diagnostics.push(
                        Diagnostic::new(Code::UnknownRef, format!("no task has the id {dep}"))
                            .label(self.file, at, "unknown task id")
                            .help("a dependency is the `id` of another task in `tasks`"),
                    ),
                }
            }
        }
        let report = graph::check(&dep_graph, graph::Wanted::Diagnostics);
        let edges: HashMap<Span, (usize, usize)> = dep_graph
            .edges
            .iter()
            .filter(|e| e.direct())
            .map(|e| (e.span, (e.dependent as usize, e.dependency as usize)))
            .collect();
        self.diagnostics.extend(
            report
                .diagnostics
                .into_iter()
                .map(|d| json_wording(d, tasks, &edges)),
        );
    }
}

/// A `redundant_dependency` worded for a JSON document: its tasks have ids
/// (or keys) and `dependencies`, not `.plan`'s names and `after`.
fn json_wording(
    mut d: Diagnostic,
    tasks: &[TaskInfo],
    edges: &HashMap<Span, (usize, usize)>,
) -> Diagnostic {
    if d.code != Code::RedundantDependency {
        return d;
    }
    let Some(&(dependent, dependency)) = d.primary().and_then(|l| edges.get(&l.span)) else {
        return d;
    };
    let (dependent, dependency) = (&tasks[dependent].name, &tasks[dependency].name);
    // The graph names the dependency that implies this one; the names
    // around it are known, so it is read back exactly.
    let via = d
        .message
        .strip_prefix(&format!("`{dependent}` need not name `{dependency}`: `"))
        .and_then(|rest| rest.strip_suffix("` already comes after it"))
        .map(str::to_owned);
    let Some(via) = via else {
        return d;
    };
    d.message = format!(
        "task {} need not depend on task {}: it depends on task {}, which already waits for it",
        shown(dependent),
        shown(dependency),
        shown(&via)
    );
    d.help = Some(format!(
        "remove this entry from the `dependencies` of task {}",
        shown(dependent)
    ));
    d
}

/// A task's id (or task-master's `P.S`) as it is, another key quoted.
fn shown(name: &str) -> String {
    if name.chars().all(|c| c.is_ascii_digit() || c == '.') {
        name.to_owned()
    } else {
        format!("`{name}`")
    }
}
