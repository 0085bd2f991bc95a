//! Checks on the dependency graph: self-dependencies, cycles, redundant edges;
//! and the stable topological order the seed formats need.
//!
//! The graph is given with spans, so the same checks serve `.plan` sources and
//! JSON plan documents.

use std::cmp::Reverse;
use std::collections::hash_map::Entry;
use std::collections::{BinaryHeap, VecDeque};

use petgraph::algo::kosaraju_scc;
use petgraph::graph::DiGraph;

use rustc_hash::FxHashMap;

pub use super::adjacency::Adjacency;
use crate::diagnostic::{self, Code, Diagnostic, MAX_PER_CODE};
use crate::span::{FileId, Span};

/// A node of the graph: a task.
#[derive(Clone, Debug)]
pub struct Node<'a> {
    pub name: &'a str,
}

/// "`dependent` comes after `dependency`", and where the source says so.
/// The tasks' numbers in 32 bits, and whether the reference named one task
/// directly in the top bit of the file's: 20 bytes an edge, not 24 (a
/// recompile keeps and copies every edge of the plan).
#[derive(Clone, Copy, Debug)]
pub struct Edge {
    pub dependent: u32,
    pub dependency: u32,
    /// The file's id, [`DIRECT`] set if the edge is direct ([`Edge::direct`]).
    file_direct: u32,
    pub span: Span,
}

/// The bit of [`Edge`]'s file that says it is direct: a compilation's
/// files are numbered from 0, far fewer than 2³¹.
const DIRECT: u32 = 1 << 31;

impl Edge {
    /// The edge from `dependent` to `dependency` that `span` of `file`
    /// makes, `direct` if the reference named one task directly.
    #[inline]
    pub fn new(dependent: u32, dependency: u32, file: FileId, span: Span, direct: bool) -> Edge {
        Edge {
            dependent,
            dependency,
            file_direct: (file.0 & !DIRECT) | if direct { DIRECT } else { 0 },
            span,
        }
    }

    /// The file of the reference that makes it.
    #[inline]
    pub fn file(&self) -> FileId {
        FileId(self.file_direct & !DIRECT)
    }

    /// Whether the reference named one task directly, so that the edge may
    /// be reported redundant.
    #[inline]
    pub fn direct(&self) -> bool {
        self.file_direct & DIRECT != 0
    }
}

/// "Each of `dependents` comes after each of `dependencies`": one `after`
/// of a step or a template instance, which names a step or an instance.
/// Kept whole, since a step that waits for a step of twenty tasks makes four
/// hundred edges.
#[derive(Clone, Debug)]
pub struct GroupEdge {
    pub dependents: Vec<usize>,
    pub dependencies: Vec<usize>,
    pub file: FileId,
    pub span: Span,
    /// How many of [`DepGraph::edges`] come before it in the source's order.
    pub after_edges: usize,
}

/// A dependency graph with the spans that created its edges.
#[derive(Clone, Debug, Default)]
pub struct DepGraph<'a> {
    pub nodes: Vec<Node<'a>>,
    pub edges: Vec<Edge>,
    pub groups: Vec<GroupEdge>,
}

/// One edge, single or of a group.
#[derive(Clone, Copy, Debug)]
struct EdgeRef {
    dependent: usize,
    dependency: usize,
    file: FileId,
    span: Span,
}

impl<'a> DepGraph<'a> {
    /// The graph of `tasks` (a node per task, by its key) with these edges.
    pub(crate) fn of_tasks(
        tasks: &'a [std::sync::Arc<crate::ir::Task>],
        edges: Vec<Edge>,
        groups: Vec<GroupEdge>,
    ) -> Self {
        let nodes = tasks.iter().map(|t| Node { name: t.key() }).collect();
        DepGraph {
            nodes,
            edges,
            groups,
        }
    }
}

impl DepGraph<'_> {
    /// Calls `f(dependent, dependency)` with every edge, a group's one by one:
    /// the groups first, since they name earlier tasks than a task's own
    /// `after` does, so each list comes out nearly sorted.
    fn for_each_pair(&self, mut f: impl FnMut(usize, usize)) {
        for group in &self.groups {
            for &dependency in &group.dependencies {
                for &dependent in &group.dependents {
                    f(dependent, dependency);
                }
            }
        }
        for edge in &self.edges {
            f(edge.dependent as usize, edge.dependency as usize);
        }
    }

    /// Every edge, a group's one by one, in the order the source gives them:
    /// a group's edges dependency by dependency.
    fn all_edges(&self) -> impl Iterator<Item = EdgeRef> + Clone + '_ {
        (0..=self.groups.len()).flat_map(move |i| {
            let from = i.checked_sub(1).map_or(0, |g| self.groups[g].after_edges);
            let to = self
                .groups
                .get(i)
                .map_or(self.edges.len(), |g| g.after_edges);
            let singles = self.edges[from..to].iter().map(|e| EdgeRef {
                dependent: e.dependent as usize,
                dependency: e.dependency as usize,
                file: e.file(),
                span: e.span,
            });
            let group = self.groups.get(i).into_iter().flat_map(|g| {
                g.dependencies.iter().flat_map(move |&dependency| {
                    g.dependents.iter().map(move |&dependent| EdgeRef {
                        dependent,
                        dependency,
                        file: g.file,
                        span: g.span,
                    })
                })
            });
            singles.chain(group)
        })
    }
}

/// What the caller of [`check`] reads of its report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wanted {
    /// The diagnostics and the reduced dependency lists.
    Dependencies,
    /// The diagnostics only: a task's dependencies are searched for one
    /// implied by another only when it names one directly (what a warning
    /// can be about), and the lists are left as they are.
    Diagnostics,
}

/// What the graph checks found.
pub struct GraphReport {
    pub diagnostics: Vec<Diagnostic>,
    /// For each node: its sorted, distinct dependencies, self-edges left out
    /// and, when there is no cycle and [`Wanted::Dependencies`], reduced: a
    /// dependency implied by another is dropped.
    pub dependencies: Adjacency,
    pub has_cycle: bool,
    /// The nodes whose lists in `dependencies` may differ from those of
    /// the check whose memo this one reused, in order ([`check_changed`]);
    /// `None`: any node's.
    pub changed: Option<Vec<u32>>,
    /// What a check of the graph after an edit can reuse; kept when the
    /// reduced lists were wanted and every node names only nodes before it.
    pub memo: Option<Memo>,
}

/// What [`check_reusing`] reuses of an earlier check: the lists it reduced
/// and what it found for them. Only for graphs whose nodes each name only
/// nodes before them (source order is the topological order), as plans
/// almost always are.
#[derive(Debug)]
pub struct Memo {
    /// Each node's sorted, distinct dependencies before the reduction.
    dependencies: Adjacency,
    reduction: Reduction,
}

/// Runs every graph check.
pub fn check(graph: &DepGraph<'_>, wanted: Wanted) -> GraphReport {
    check_reusing(graph, wanted, None)
}

/// Runs every graph check, reusing what the check of an earlier version of
/// the graph (an edit ago) found where the edit cannot have changed it: the
/// same report as [`check`] in less time when few lists changed.
pub fn check_reusing(graph: &DepGraph<'_>, wanted: Wanted, previous: Option<&Memo>) -> GraphReport {
    let mut diagnostics = self_dependencies(graph);
    let n = graph.nodes.len();
    let mut dependencies = Adjacency::from_pairs(n, |f| {
        graph.for_each_pair(|dependent, dependency| {
            if dependent != dependency {
                f(dependent as u32, dependency as u32);
            }
        });
    });
    dependencies.sort_dedup();

    let order = stable_order(n, |node| dependencies.of(node));
    let has_cycle = order.len() < n;
    let mut memo = None;
    if has_cycle {
        diagnostics.extend(find_cycles(graph, &dependencies));
    } else {
        let searched = match wanted {
            Wanted::Dependencies => None,
            Wanted::Diagnostics => {
                let mut direct = vec![false; n];
                for edge in graph.edges.iter().filter(|e| e.direct()) {
                    direct[edge.dependent as usize] = true;
                }
                Some(direct)
            }
        };
        let in_source_order = order
            .iter()
            .enumerate()
            .all(|(i, &node)| i == node as usize);
        let reusable = previous.filter(|_| in_source_order && searched.is_none());
        let reduction = match reusable {
            Some(previous) => reduce_again(&dependencies, previous, None).0,
            None => reduce(&dependencies, &order, searched.as_deref()),
        };
        diagnostics.extend(redundant(
            graph,
            (&dependencies, &reduction.kept),
            Some(&order),
        ));
        if wanted == Wanted::Dependencies {
            let unreduced = std::mem::replace(&mut dependencies, reduction.kept.clone());
            memo = in_source_order.then_some(Memo {
                dependencies: unreduced,
                reduction,
            });
        }
    }
    GraphReport {
        diagnostics,
        dependencies,
        has_cycle,
        changed: None,
        memo,
    }
}

/// Like [`check_reusing`] with [`Wanted::Dependencies`], told which nodes
/// an edit may have changed the edges of (those of every other node are as
/// they were for `previous`): only their lists are made again, from the
/// edges that name them as dependents, not every list from every edge.
pub fn check_changed(graph: &DepGraph<'_>, previous: &Memo, nodes: &[usize]) -> GraphReport {
    let n = graph.nodes.len();
    let mut nodes = nodes.to_vec();
    nodes.sort_unstable();
    nodes.dedup();
    // The changed lists are read off every edge: for a few nodes only (a
    // step's tasks, when an `after` of the step changed).
    let few = nodes.len() <= 64 && nodes.last().is_none_or(|&v| v < n);
    let lists: Vec<Vec<u32>> = match few && previous.dependencies.len() == n {
        true => lists_of(graph, &nodes),
        false => Vec::new(),
    };
    let in_source_order =
        |(node, list): (&usize, &Vec<u32>)| list.last().is_none_or(|&d| (d as usize) < *node);
    if lists.len() != nodes.len() || !nodes.iter().zip(&lists).all(in_source_order) {
        return check_reusing(graph, Wanted::Dependencies, Some(previous));
    }
    let old = &previous.dependencies;
    // The other lists copied in runs.
    let mut dependencies = Adjacency::with_capacity(n, old.items_len() + lists.len());
    let mut changed = Vec::with_capacity(nodes.len());
    let mut copied = 0;
    for (&node, list) in nodes.iter().zip(&lists) {
        dependencies.extend_from(old, copied..node);
        let list = match list.as_slice() != old.of(node) {
            true => {
                changed.push(node as u32);
                list.as_slice()
            }
            false => old.of(node),
        };
        for &dep in list {
            dependencies.push(dep);
        }
        dependencies.end_node();
        copied = node + 1;
    }
    dependencies.extend_from(old, copied..n);
    let mut diagnostics = self_dependencies(graph);
    let (reduction, searched) = reduce_again(&dependencies, previous, Some(&changed));
    // (In source order: a memo is kept only for graphs that are.)
    diagnostics.extend(redundant(graph, (&dependencies, &reduction.kept), None));
    GraphReport {
        diagnostics,
        dependencies: reduction.kept.clone(),
        has_cycle: false,
        changed: Some(searched),
        memo: Some(Memo {
            dependencies,
            reduction,
        }),
    }
}

/// The sorted, distinct dependencies of each of `nodes` (sorted,
/// distinct), itself left out, from one pass over every edge that names
/// one of them as a dependent.
fn lists_of(graph: &DepGraph<'_>, nodes: &[usize]) -> Vec<Vec<u32>> {
    let mut lists = vec![Vec::new(); nodes.len()];
    let (Some(&first), Some(&last)) = (nodes.first(), nodes.last()) else {
        return lists;
    };
    let slot = |node: usize| match (first..=last).contains(&node) {
        true => nodes.binary_search(&node).ok(),
        false => None,
    };
    for group in &graph.groups {
        for &dependent in &group.dependents {
            if let Some(i) = slot(dependent) {
                lists[i].extend(group.dependencies.iter().map(|&d| d as u32));
            }
        }
    }
    for edge in &graph.edges {
        if let Some(i) = slot(edge.dependent as usize) {
            lists[i].push(edge.dependency);
        }
    }
    for (list, &node) in lists.iter_mut().zip(nodes) {
        list.retain(|&d| d as usize != node);
        list.sort_unstable();
        list.dedup();
    }
    lists
}

/// A diagnostic for each edge of a node to itself, in source order.
fn self_dependencies(graph: &DepGraph<'_>) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    let may_wait_for_itself = |g: &GroupEdge| {
        let range = |list: &[usize]| (list.iter().min().copied(), list.iter().max().copied());
        let ((Some(a_min), Some(a_max)), (Some(b_min), Some(b_max))) =
            (range(&g.dependents), range(&g.dependencies))
        else {
            return false;
        };
        a_min <= b_max && b_min <= a_max
    };
    // Rare: looked for edge by edge only when some edge may be one.
    let self_edges = graph.edges.iter().any(|e| e.dependent == e.dependency)
        || graph.groups.iter().any(may_wait_for_itself);
    if self_edges {
        for edge in graph.all_edges().filter(|e| e.dependent == e.dependency) {
            let name = graph.nodes[edge.dependent].name;
            diagnostics.push(
                Diagnostic::new(Code::SelfDependency, format!("`{name}` comes after itself"))
                    .label(
                        edge.file,
                        edge.span,
                        format!("`{name}` cannot wait for itself"),
                    )
                    .help("remove this dependency"),
            );
        }
    }
    diagnostics
}

/// The most edges of one cycle that a diagnostic names and labels.
const MAX_CYCLE_EDGES: usize = 12;

/// One diagnostic per strongly connected component with more than one node,
/// naming one cycle through it, every edge labelled, in order.
fn find_cycles(graph: &DepGraph<'_>, dependencies: &Adjacency) -> Vec<Diagnostic> {
    let components = cyclic_components(dependencies);
    // At most `MAX_PER_CODE` cycles are named (and one more found, for the
    // note that counts the rest to point at): the rest cost neither a search
    // nor a diagnostic.
    let hidden = components.len().saturating_sub(MAX_PER_CODE);
    let mut cycles: Vec<Vec<usize>> = components
        .iter()
        .take(MAX_PER_CODE + 1)
        .map(|component| cycle_through(component, dependencies))
        .collect();
    let next = (hidden > 0).then(|| cycles.pop()).flatten();
    let labelled = cycle_edges(graph, cycles.iter().chain(&next));
    let mut diagnostics: Vec<Diagnostic> = cycles
        .iter()
        .map(|cycle| cycle_diagnostic(graph, cycle, &labelled))
        .collect();
    if let Some(cycle) = next {
        let at = labelled
            .get(&(cycle[1 % cycle.len()], cycle[0]))
            .copied()
            .flatten()
            .map(|edge| (edge.file, edge.span));
        diagnostics.push(diagnostic::more_of(Code::Cycle, hidden, at));
    }
    diagnostics
}

/// The strongly connected components of more than one node, each sorted,
/// in order of their first node.
fn cyclic_components(dependencies: &Adjacency) -> Vec<Vec<usize>> {
    let n = dependencies.len();
    let mut g: DiGraph<(), ()> =
        DiGraph::with_capacity(n, dependencies.iter().map(<[u32]>::len).sum());
    for _ in 0..n {
        g.add_node(());
    }
    for (dependent, deps) in dependencies.iter().enumerate() {
        for &dependency in deps {
            // dependency → dependent: the order things happen in.
            g.add_edge(dependency.into(), (dependent as u32).into(), ());
        }
    }
    let mut components: Vec<Vec<usize>> = kosaraju_scc(&g)
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|c| {
            let mut nodes: Vec<usize> = c.into_iter().map(|n| n.index()).collect();
            nodes.sort_unstable();
            nodes
        })
        .collect();
    components.sort();
    components
}

/// The edges the labels of `cycles` show, by `(dependent, dependency)`:
/// each the first the source gives for its pair, found in one pass over the
/// edges, not one per label.
fn cycle_edges<'c>(
    graph: &DepGraph<'_>,
    cycles: impl Iterator<Item = &'c Vec<usize>>,
) -> FxHashMap<(usize, usize), Option<EdgeRef>> {
    let mut labelled: FxHashMap<(usize, usize), Option<EdgeRef>> = FxHashMap::default();
    for cycle in cycles {
        for i in 0..cycle.len().min(MAX_CYCLE_EDGES) {
            labelled.insert((cycle[(i + 1) % cycle.len()], cycle[i]), None);
        }
    }
    for edge in graph.all_edges() {
        if let Some(slot @ None) = labelled.get_mut(&(edge.dependent, edge.dependency)) {
            *slot = Some(edge);
        }
    }
    labelled
}

/// The diagnostic of one cycle, in execution order. A cycle through
/// thousands of tasks is named and labelled in part: its first edges show
/// where to break it.
fn cycle_diagnostic(
    graph: &DepGraph<'_>,
    cycle: &[usize],
    labelled: &FxHashMap<(usize, usize), Option<EdgeRef>>,
) -> Diagnostic {
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
        if let Some(Some(edge)) = labelled.get(&(after, before)) {
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
    diagnostic
        .help("tasks in a cycle wait for each other forever; remove one of these dependencies")
}

/// A shortest cycle through the first node of a strongly connected component,
/// in execution order (each node comes after the one before it).
fn cycle_through(component: &[usize], dependencies: &Adjacency) -> Vec<usize> {
    let start = component[0];
    let inside = |n: usize| component.binary_search(&n).is_ok();
    // Breadth-first search backwards over dependencies: from `start` to the
    // nodes it waits for, until one of them waits for `start`.
    let mut parent: FxHashMap<usize, usize> = FxHashMap::default();
    let mut queue = VecDeque::from([start]);
    while let Some(node) = queue.pop_front() {
        for &dep in dependencies.of(node) {
            let dep = dep as usize;
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
            if let Entry::Vacant(e) = parent.entry(dep) {
                e.insert(node);
                queue.push_back(dep);
            }
        }
    }
    component.to_vec()
}

/// Rotates and orients a cycle so each node depends on the one before it,
/// starting from the node that comes first in the source.
fn execution_order(mut cycle: Vec<usize>, dependencies: &Adjacency) -> Vec<usize> {
    let depends = |a: usize, b: usize| dependencies.of(a).binary_search(&(b as u32)).is_ok();
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
/// (the transitive reduction, within [`SEARCH_BUDGET`]). A dependency left
/// out is one of the node's dependencies not kept; which kept one implies
/// it (what a warning names) is searched again for the few a source names
/// directly ([`redundant`]), not kept for every node: a step that waits
/// for a step of twenty tasks drops about ten of each of its tasks' twenty.
#[derive(Debug)]
struct Reduction {
    kept: Adjacency,
}

/// Reduces an acyclic graph's dependency lists; `order` is a topological
/// order of every node. With `searched`, only the nodes it marks are
/// reduced; the others get empty lists.
fn reduce(dependencies: &Adjacency, order: &[u32], searched: Option<&[bool]>) -> Reduction {
    let n = dependencies.len();
    let mut search = Search::new(dependencies, order);
    let mut kept = Adjacency::with_capacity(n, n);
    // The last node reduced: the tasks of a step that waits for another step
    // all have that step's tasks as their list, and the same reduction.
    let mut last: Option<usize> = None;
    for node in 0..n {
        let deps = dependencies.of(node);
        if searched.is_some_and(|searched| !searched[node]) {
            // Not reduced: empty lists.
        } else if deps.len() < 2 {
            for &dep in deps {
                kept.push(dep);
            }
        } else if let Some(last) = last.filter(|&last| dependencies.of(last) == deps) {
            kept.repeat(last);
        } else {
            last = Some(node);
            search.reduce(node, &mut kept);
        }
        kept.end_node();
    }
    Reduction { kept }
}

/// [`reduce`] of a graph in source order (each node names only nodes before
/// it), reusing the reduction of the graph before an edit (also in source
/// order) where the edit cannot have changed it.
///
/// The search for a node's list walks up from its dependencies and reads
/// only the lists of nodes from its earliest dependency (`floor`) up to the
/// node itself; within the search budget, what it finds depends on those
/// lists alone. So a node is searched again only when its list changed or
/// the list of a node in that window did; every other node's lists are
/// copied (in runs). A plan's edit changes a few lists, and windows are
/// short. Also gives the nodes whose lists were made again, in order.
///
/// `changed` lists the nodes whose lists changed, sorted, when the caller
/// knows them; otherwise every list is compared.
fn reduce_again(
    dependencies: &Adjacency,
    previous: &Memo,
    changed: Option<&[u32]>,
) -> (Reduction, Vec<u32>) {
    let n = dependencies.len();
    if previous.dependencies.len() != n {
        let order: Vec<u32> = (0..n as u32).collect();
        return (reduce(dependencies, &order, None), order);
    }
    let compared: Vec<u32>;
    let changed = match changed {
        Some(changed) => changed,
        None => {
            compared = (0..n as u32)
                .filter(|&node| {
                    dependencies.of(node as usize) != previous.dependencies.of(node as usize)
                })
                .collect();
            &compared
        }
    };
    let old = &previous.reduction;
    let mut search: Option<Search<'_>> = None;
    let mut kept = Adjacency::with_capacity(n, old.kept.items_len() + n);
    let mut searched = Vec::new();
    // Before the first changed list, every list reduces as it did: copied
    // in runs, as are the runs after it whose reductions cannot have
    // changed.
    let mut copied = 0;
    // The latest changed node up to `node`, and how many changed are.
    let (mut latest, mut passed) = (None, 0);
    for node in changed.first().map_or(n, |&c| c as usize)..n {
        while changed.get(passed).is_some_and(|&c| c as usize <= node) {
            latest = Some(changed[passed]);
            passed += 1;
        }
        let deps = dependencies.of(node);
        let again = match deps {
            [] | [_] => latest == Some(node as u32),
            // Sorted, and in source order: the first is the earliest, and
            // the window from it to the node holds a changed list.
            [floor, ..] => latest.is_some_and(|c| c >= *floor),
        };
        if !again {
            continue;
        }
        kept.extend_from(&old.kept, copied..node);
        copied = node + 1;
        searched.push(node as u32);
        if deps.len() < 2 {
            for &dep in deps {
                kept.push(dep);
            }
        } else {
            search
                .get_or_insert_with(|| Search::in_source_order(dependencies))
                .reduce(node, &mut kept);
        }
        kept.end_node();
    }
    kept.extend_from(&old.kept, copied..n);
    (Reduction { kept }, searched)
}

/// The redundancy search of [`reduce`], its buffers reused from one node to
/// the next.
struct Search<'d> {
    dependencies: &'d Adjacency,
    /// Each node's place in the topological order.
    position: Vec<u32>,
    /// `mark[m] == node`: `m` was reached from a dependency of `node`, namely
    /// `witness[m]`. Stamps instead of a set cleared for every node.
    mark: Vec<u32>,
    witness: Vec<u32>,
    by_position: Vec<u32>,
    stack: Vec<u32>,
    /// The last node's dependencies left out, each with the kept one that
    /// implies it, sorted.
    dropped: Vec<(u32, u32)>,
}

impl<'d> Search<'d> {
    /// The search of a graph whose source order is its topological order.
    fn in_source_order(dependencies: &'d Adjacency) -> Search<'d> {
        let n = dependencies.len();
        Search {
            dependencies,
            position: (0..n as u32).collect(),
            mark: vec![u32::MAX; n],
            witness: vec![0u32; n],
            by_position: Vec::new(),
            stack: Vec::new(),
            dropped: Vec::new(),
        }
    }

    fn new(dependencies: &'d Adjacency, order: &[u32]) -> Search<'d> {
        let n = dependencies.len();
        let mut position = vec![0u32; n];
        for (i, &node) in order.iter().enumerate() {
            position[node as usize] = i as u32;
        }
        Search {
            dependencies,
            position,
            mark: vec![u32::MAX; n],
            witness: vec![0u32; n],
            by_position: Vec::new(),
            stack: Vec::new(),
            dropped: Vec::new(),
        }
    }

    /// Splits `node`'s dependencies (two or more) into the current list of
    /// `kept` and [`Search::dropped`] (each with the kept dependency that
    /// implies it): the latest in the order first, each marking its
    /// ancestors, so a dependency found marked is implied by one kept. Each
    /// node is searched once by a search (its marks are stamped with it).
    fn reduce(&mut self, node: usize, kept: &mut Adjacency) {
        let Search {
            dependencies,
            position,
            mark,
            witness,
            by_position,
            stack,
            dropped,
        } = self;
        dropped.clear();
        let deps = dependencies.of(node);
        let stamp = node as u32;
        let floor = deps
            .iter()
            .map(|&d| position[d as usize])
            .min()
            .unwrap_or(0);
        // The latest first. Where the order keeps source order (almost
        // always), the list, sorted by node, is sorted by position already.
        let in_order = deps
            .windows(2)
            .all(|w| position[w[0] as usize] < position[w[1] as usize]);
        by_position.clear();
        by_position.extend(deps.iter().rev());
        if !in_order {
            by_position.sort_unstable_by_key(|&d| std::cmp::Reverse(position[d as usize]));
        }
        let mut budget = SEARCH_BUDGET;
        for &dep in by_position.iter() {
            if mark[dep as usize] == stamp {
                dropped.push((dep, witness[dep as usize]));
                continue;
            }
            kept.push(dep);
            // Mark the ancestors of `dep` that could be other dependencies.
            stack.clear();
            stack.push(dep);
            while let Some(at) = stack.pop() {
                for &up in dependencies.of(at as usize) {
                    if budget == 0 {
                        break;
                    }
                    let u = up as usize;
                    if position[u] >= floor && mark[u] != stamp {
                        budget -= 1;
                        mark[u] = stamp;
                        witness[u] = dep;
                        stack.push(up);
                    }
                }
            }
        }
        // Sorted by node (each list was filled latest first, so in that
        // order it only needs turning round); the dropped list sorted so a
        // warning finds its entry without a scan.
        if in_order {
            kept.current_mut().reverse();
            dropped.reverse();
        } else {
            kept.current_mut().sort_unstable();
            dropped.sort_unstable();
        }
    }
}

/// Whether the reduction left out `edge`'s dependency: one of its
/// dependent's dependencies (not itself), not kept.
fn left_out(edge: &Edge, dependencies: &Adjacency, kept: &Adjacency) -> bool {
    let (dependent, dependency) = (edge.dependent as usize, edge.dependency);
    edge.direct()
        && kept.of(dependent).binary_search(&dependency).is_err()
        && dependencies
            .of(dependent)
            .binary_search(&dependency)
            .is_ok()
}

/// Warnings for `after a, b` where `b` already comes after `a`: the
/// edges named directly whose dependency the reduction of `dependencies`
/// left out of `kept`, each dependent's search made again (in `order`, a
/// topological order of every node, as the reduction's; `None`: source
/// order) to tell which kept dependency implies it.
fn redundant(
    graph: &DepGraph<'_>,
    (dependencies, kept): (&Adjacency, &Adjacency),
    order: Option<&[u32]>,
) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    let mut search: Option<Search<'_>> = None;
    // Each dependent searched once: its lists left out, by node.
    let mut searched: FxHashMap<usize, Vec<(u32, u32)>> = FxHashMap::default();
    for edge in graph.edges.iter() {
        if !left_out(edge, dependencies, kept) {
            continue;
        }
        let dependent = edge.dependent as usize;
        let dropped = searched.entry(dependent).or_insert_with(|| {
            let search = search.get_or_insert_with(|| match order {
                Some(order) => Search::new(dependencies, order),
                None => Search::in_source_order(dependencies),
            });
            let mut again = Adjacency::with_capacity(1, 0);
            search.reduce(dependent, &mut again);
            std::mem::take(&mut search.dropped)
        });
        let Ok(found) = dropped.binary_search_by_key(&edge.dependency, |&(d, _)| d) else {
            continue;
        };
        let (target, via) = dropped[found];
        let target_name = graph.nodes[target as usize].name;
        let via_name = graph.nodes[via as usize].name;
        diagnostics.push(
            Diagnostic::new(
                Code::RedundantDependency,
                format!(
                    "`{}` need not name `{target_name}`: `{via_name}` already comes after it",
                    graph.nodes[dependent].name
                ),
            )
            .label(edge.file(), edge.span, "redundant dependency")
            .help(format!("remove `{target_name}` from this `after`")),
        );
    }
    diagnostics
}

/// A topological order (dependencies first) that keeps source order wherever
/// the dependencies allow. Nodes on a cycle are appended in source order.
pub fn topological_order(dependencies: &[Vec<usize>]) -> Vec<usize> {
    let n = dependencies.len();
    let as_u32: Vec<Vec<u32>> = dependencies
        .iter()
        .enumerate()
        .map(|(node, deps)| {
            deps.iter()
                .filter(|&&d| d < n && d != node)
                .map(|&d| d as u32)
                .collect()
        })
        .collect();
    let mut order: Vec<usize> = stable_order(n, |node| &as_u32[node])
        .into_iter()
        .map(|i| i as usize)
        .collect();
    if order.len() < n {
        let mut placed = vec![false; n];
        for &node in &order {
            placed[node] = true;
        }
        order.extend((0..n).filter(|&i| !placed[i]));
    }
    order
}

/// The nodes in the first topological order by source position (Kahn's
/// algorithm taking the smallest ready node each time); nodes on or behind a
/// cycle are left out. `dependencies(node)` lists nodes below `n`, without
/// `node` itself.
fn stable_order<'d>(n: usize, dependencies: impl Fn(usize) -> &'d [u32]) -> Vec<u32> {
    // When every task names only tasks before it, as plans almost always do,
    // source order is that order: no heap, no dependents lists.
    if (0..n).all(|node| dependencies(node).iter().all(|&d| (d as usize) < node)) {
        return (0..n as u32).collect();
    }
    let mut waiting = vec![0u32; n];
    let dependents = Adjacency::from_pairs(n, |f| {
        for node in 0..n {
            for &dep in dependencies(node) {
                f(dep, node as u32);
            }
        }
    });
    for (node, count) in waiting.iter_mut().enumerate() {
        *count = dependencies(node).len() as u32;
    }
    let mut ready: BinaryHeap<Reverse<u32>> = (0..n as u32)
        .filter(|&i| waiting[i as usize] == 0)
        .map(Reverse)
        .collect();
    let mut order = Vec::with_capacity(n);
    while let Some(Reverse(node)) = ready.pop() {
        order.push(node);
        for &next in dependents.of(node as usize) {
            waiting[next as usize] -= 1;
            if waiting[next as usize] == 0 {
                ready.push(Reverse(next));
            }
        }
    }
    order
}

#[cfg(test)]
mod tests;

mod renumber;
