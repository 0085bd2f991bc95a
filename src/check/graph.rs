//! Checks on the dependency graph: self-dependencies, cycles, redundant edges;
//! and the stable topological order the seed formats need.
//!
//! The graph is given with spans, so the same checks serve `.plan` sources and
//! JSON plan documents.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use petgraph::algo::tarjan_scc;
use petgraph::graph::DiGraph;

use crate::diagnostic::{Code, Diagnostic};
use crate::span::{FileId, Span};

/// A node of the graph: a task.
#[derive(Clone, Debug)]
pub struct Node {
    pub name: String,
}

/// "`dependent` comes after `dependency`", and where the source says so.
#[derive(Clone, Debug)]
pub struct Edge {
    pub dependent: usize,
    pub dependency: usize,
    pub file: FileId,
    pub span: Span,
    /// The reference named one task directly, so it may be reported redundant.
    pub direct: bool,
}

/// A dependency graph with the spans that created its edges.
#[derive(Clone, Debug, Default)]
pub struct DepGraph {
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
}

/// What the graph checks found.
pub struct GraphReport {
    pub diagnostics: Vec<Diagnostic>,
    /// `dependencies[n]`: the sorted, distinct dependencies of node `n`,
    /// self-edges left out and, when there is no cycle, reduced: a dependency
    /// implied by another is dropped.
    pub dependencies: Vec<Vec<usize>>,
    pub has_cycle: bool,
}

/// Runs every graph check.
pub fn check(graph: &DepGraph) -> GraphReport {
    let mut diagnostics = Vec::new();
    let n = graph.nodes.len();
    let mut dependencies: Vec<Vec<usize>> = vec![Vec::new(); n];
    for edge in &graph.edges {
        if edge.dependent == edge.dependency {
            let name = &graph.nodes[edge.dependent].name;
            diagnostics.push(
                Diagnostic::new(Code::SelfDependency, format!("`{name}` comes after itself"))
                    .label(
                        edge.file,
                        edge.span,
                        format!("`{name}` cannot wait for itself"),
                    )
                    .help("remove this dependency"),
            );
        } else {
            dependencies[edge.dependent].push(edge.dependency);
        }
    }
    for deps in &mut dependencies {
        deps.sort_unstable();
        deps.dedup();
    }

    let cycles = find_cycles(graph, &dependencies);
    let has_cycle = !cycles.is_empty();
    diagnostics.extend(cycles);
    if !has_cycle {
        let reduction = reduce(&dependencies);
        diagnostics.extend(redundant(graph, &reduction));
        dependencies = reduction.kept;
    }
    GraphReport {
        diagnostics,
        dependencies,
        has_cycle,
    }
}

/// The most edges of one cycle that a diagnostic names and labels.
const MAX_CYCLE_EDGES: usize = 12;

/// One diagnostic per strongly connected component with more than one node,
/// naming one cycle through it, every edge labelled, in order.
fn find_cycles(graph: &DepGraph, dependencies: &[Vec<usize>]) -> Vec<Diagnostic> {
    let mut g: DiGraph<(), ()> = DiGraph::with_capacity(dependencies.len(), graph.edges.len());
    for _ in 0..dependencies.len() {
        g.add_node(());
    }
    for (dependent, deps) in dependencies.iter().enumerate() {
        for &dependency in deps {
            // dependency → dependent: the order things happen in.
            g.add_edge((dependency as u32).into(), (dependent as u32).into(), ());
        }
    }
    let mut components: Vec<Vec<usize>> = tarjan_scc(&g)
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|c| {
            let mut nodes: Vec<usize> = c.into_iter().map(|n| n.index()).collect();
            nodes.sort_unstable();
            nodes
        })
        .collect();
    components.sort();

    let mut diagnostics = Vec::new();
    for component in components {
        let cycle = cycle_through(&component, dependencies);
        // A cycle through thousands of tasks is named and labelled in part:
        // its first edges show where to break it.
        let shown = cycle.len().min(MAX_CYCLE_EDGES);
        let mut names: Vec<String> = cycle[..shown]
            .iter()
            .map(|&n| format!("`{}`", graph.nodes[n].name))
            .collect();
        if shown < cycle.len() {
            names.push("…".to_owned());
        }
        names.push(format!("`{}`", graph.nodes[cycle[0]].name));
        let message = if shown < cycle.len() {
            format!(
                "dependency cycle through {} tasks: {}",
                cycle.len(),
                names.join(" → ")
            )
        } else {
            format!("dependency cycle: {}", names.join(" → "))
        };
        let mut diagnostic = Diagnostic::new(Code::Cycle, message);
        for (i, &before) in cycle.iter().enumerate().take(shown) {
            let after = cycle[(i + 1) % cycle.len()];
            if let Some(edge) = graph
                .edges
                .iter()
                .find(|e| e.dependent == after && e.dependency == before)
            {
                diagnostic = diagnostic.label(
                    edge.file,
                    edge.span,
                    format!(
                        "({}) `{}` comes after `{}`",
                        i + 1,
                        graph.nodes[after].name,
                        graph.nodes[before].name
                    ),
                );
            }
        }
        diagnostics.push(diagnostic.help(
            "tasks in a cycle wait for each other forever; remove one of these dependencies",
        ));
    }
    diagnostics
}

/// A shortest cycle through the first node of a strongly connected component,
/// in execution order (each node comes after the one before it).
fn cycle_through(component: &[usize], dependencies: &[Vec<usize>]) -> Vec<usize> {
    let start = component[0];
    let inside = |n: usize| component.binary_search(&n).is_ok();
    // Breadth-first search backwards over dependencies: from `start` to the
    // nodes it waits for, until one of them waits for `start`.
    let mut parent: std::collections::HashMap<usize, usize> = Default::default();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(node) = queue.pop_front() {
        for &dep in &dependencies[node] {
            if !inside(dep) {
                continue;
            }
            if dep == start {
                // `node` waits for `start`, and each parent waits for its child,
                // so the chain start … node read backwards is execution order.
                let mut path = vec![node];
                let mut at = node;
                while at != start {
                    at = parent[&at];
                    path.push(at);
                }
                return execution_order(path, dependencies);
            }
            if let std::collections::hash_map::Entry::Vacant(e) = parent.entry(dep) {
                e.insert(node);
                queue.push_back(dep);
            }
        }
    }
    component.to_vec()
}

/// Rotates and orients a cycle so each node depends on the one before it,
/// starting from the node that comes first in the source.
fn execution_order(mut cycle: Vec<usize>, dependencies: &[Vec<usize>]) -> Vec<usize> {
    let depends = |a: usize, b: usize| dependencies[a].binary_search(&b).is_ok();
    if cycle.len() > 1 && !depends(cycle[1], cycle[0]) {
        cycle.reverse();
    }
    let first = (0..cycle.len()).min_by_key(|&i| cycle[i]).unwrap_or(0);
    cycle.rotate_left(first);
    cycle
}

/// How many nodes one task's redundancy search may visit. Beyond it, the
/// search gives up and keeps the dependency: the result is still correct
/// (a redundant edge changes nothing when running), and the work stays
/// linear on pathological graphs such as 100,000 tasks that each name both
/// the first task and their predecessor.
const SEARCH_BUDGET: usize = 1024;

/// For each node: its dependencies without those implied by another one
/// (the transitive reduction, within [`SEARCH_BUDGET`]), and each dropped
/// dependency with the kept dependency that implies it.
pub struct Reduction {
    pub kept: Vec<Vec<usize>>,
    pub dropped: Vec<Vec<(usize, usize)>>,
}

/// Reduces an acyclic graph's dependency lists.
pub fn reduce(dependencies: &[Vec<usize>]) -> Reduction {
    let n = dependencies.len();
    let order = topological_order(dependencies);
    let mut position = vec![0usize; n];
    for (i, &node) in order.iter().enumerate() {
        position[node] = i;
    }
    let mut mark = vec![usize::MAX; n];
    let mut witness = vec![0usize; n];
    let mut kept = Vec::with_capacity(n);
    let mut dropped = Vec::with_capacity(n);
    let mut stack = Vec::new();
    for (node, deps) in dependencies.iter().enumerate() {
        if deps.len() < 2 {
            kept.push(deps.clone());
            dropped.push(Vec::new());
            continue;
        }
        let floor = deps.iter().map(|&d| position[d]).min().unwrap_or(0);
        let mut by_position = deps.clone();
        by_position.sort_unstable_by_key(|&d| std::cmp::Reverse(position[d]));
        let mut keep = Vec::with_capacity(deps.len());
        let mut drop = Vec::new();
        let mut budget = SEARCH_BUDGET;
        for dep in by_position {
            if mark[dep] == node {
                drop.push((dep, witness[dep]));
                continue;
            }
            keep.push(dep);
            // Mark the ancestors of `dep` that could be other dependencies.
            stack.clear();
            stack.push(dep);
            while let Some(at) = stack.pop() {
                for &up in &dependencies[at] {
                    if budget == 0 {
                        break;
                    }
                    if position[up] >= floor && mark[up] != node {
                        budget -= 1;
                        mark[up] = node;
                        witness[up] = dep;
                        stack.push(up);
                    }
                }
            }
        }
        keep.sort_unstable();
        kept.push(keep);
        dropped.push(drop);
    }
    Reduction { kept, dropped }
}

/// Warnings for `after a, b` where `b` already comes after `a`.
fn redundant(graph: &DepGraph, reduction: &Reduction) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    for edge in graph.edges.iter().filter(|e| e.direct) {
        let Some(&(target, via)) = reduction.dropped[edge.dependent]
            .iter()
            .find(|(d, _)| *d == edge.dependency)
        else {
            continue;
        };
        let target_name = &graph.nodes[target].name;
        let via_name = &graph.nodes[via].name;
        diagnostics.push(
            Diagnostic::new(
                Code::RedundantDependency,
                format!(
                    "`{}` need not name `{target_name}`: `{via_name}` already comes after it",
                    graph.nodes[edge.dependent].name
                ),
            )
            .label(edge.file, edge.span, "redundant dependency")
            .help(format!("remove `{target_name}` from this `after`")),
        );
    }
    diagnostics
}

/// A topological order (dependencies first) that keeps source order wherever
/// the dependencies allow. Nodes on a cycle are appended in source order.
pub fn topological_order(dependencies: &[Vec<usize>]) -> Vec<usize> {
    let n = dependencies.len();
    let mut waiting = vec![0usize; n];
    let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (node, deps) in dependencies.iter().enumerate() {
        for &dep in deps {
            if dep < n && dep != node {
                waiting[node] += 1;
                dependents[dep].push(node);
            }
        }
    }
    let mut ready: BinaryHeap<Reverse<usize>> =
        (0..n).filter(|&i| waiting[i] == 0).map(Reverse).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(Reverse(node)) = ready.pop() {
        order.push(node);
        for &next in &dependents[node] {
            waiting[next] -= 1;
            if waiting[next] == 0 {
                ready.push(Reverse(next));
            }
        }
    }
    if order.len() < n {
        let mut placed = vec![false; n];
        for &node in &order {
            placed[node] = true;
        }
        order.extend((0..n).filter(|&i| !placed[i]));
    }
    order
}
