//! The dependency graph's checks: grouped edges expanded give the same
//! diagnostics, a check reusing an earlier one finds what a fresh one
//! finds, and cycles and chains of a million tasks on a small stack.
use super::*;

/// `graph` with every group written out as single edges, where the
/// source gives them.
fn expanded<'a>(graph: &DepGraph<'a>) -> DepGraph<'a> {
    let mut edges = Vec::new();
    let mut taken = 0;
    for group in &graph.groups {
        edges.extend_from_slice(&graph.edges[taken..group.after_edges]);
        taken = group.after_edges;
        for &dependency in &group.dependencies {
            for &dependent in &group.dependents {
                edges.push(Edge::new(
                    dependent as u32,
                    dependency as u32,
                    group.file,
                    group.span,
                    false,
                ));
            }
        }
    }
    edges.extend_from_slice(&graph.edges[taken..]);
    DepGraph {
        nodes: graph.nodes.clone(),
        edges,
        groups: Vec::new(),
    }
}

fn single(dependent: usize, dependency: usize, at: usize, direct: bool) -> Edge {
    Edge::new(
        dependent as u32,
        dependency as u32,
        FileId(0),
        Span::new(at, at + 1),
        direct,
    )
}

fn group(dependents: &[usize], dependencies: &[usize], at: usize, after_edges: usize) -> GroupEdge {
    GroupEdge {
        dependents: dependents.to_vec(),
        dependencies: dependencies.to_vec(),
        file: FileId(0),
        span: Span::new(at, at + 1),
        after_edges,
    }
}

fn assert_same(graph: &DepGraph<'_>) {
    let whole = check(graph, Wanted::Dependencies);
    let singles = check(&expanded(graph), Wanted::Dependencies);
    assert_eq!(whole.diagnostics, singles.diagnostics);
    assert_eq!(whole.dependencies, singles.dependencies);
    assert_eq!(whole.has_cycle, singles.has_cycle);
    let diagnostics = check(graph, Wanted::Diagnostics);
    assert_eq!(diagnostics.diagnostics, whole.diagnostics);
    assert_eq!(diagnostics.has_cycle, whole.has_cycle);
}

const NAMES: [&str; 8] = ["a", "b", "c", "d", "e", "f", "g", "h"];

fn nodes() -> Vec<Node<'static>> {
    NAMES.iter().map(|name| Node { name }).collect()
}

#[test]
fn only_the_diagnostics_wanted_finds_the_same_on_a_large_graph() {
    // Steps of 20 nodes, every third one waiting for the one before, the
    // others' nodes each naming one to three of the ten before them
    // directly (some of them implied by the others).
    let n = 6000;
    let names: Vec<String> = (0..n).map(|i| format!("t{i}")).collect();
    let mut next = crate::generate::xorshift(0x2545_F491_4F6C_DD1D);
    let mut graph = DepGraph {
        nodes: names.iter().map(|name| Node { name }).collect(),
        edges: Vec::new(),
        groups: Vec::new(),
    };
    for step in 1..n / 20 {
        let tasks: Vec<usize> = (step * 20..step * 20 + 20).collect();
        if step % 3 == 0 {
            let before: Vec<usize> = (step * 20 - 20..step * 20).collect();
            graph
                .groups
                .push(group(&tasks, &before, step, graph.edges.len()));
            for pair in tasks.windows(2) {
                graph.edges.push(single(pair[1], pair[0], step, false));
            }
            continue;
        }
        for &task in &tasks {
            for _ in 0..=next(3) {
                graph
                    .edges
                    .push(single(task, task - 1 - next(10), task, true));
            }
        }
    }
    let all = check(&graph, Wanted::Dependencies);
    let codes = all.diagnostics.iter().map(|d| d.code);
    assert!(codes.filter(|&c| c == Code::RedundantDependency).count() > 100);
    let diagnostics = check(&graph, Wanted::Diagnostics);
    assert_eq!(diagnostics.diagnostics, all.diagnostics);
}

/// A graph in source order: each node names up to four nodes among the
/// twelve before it, sometimes one far back.
fn random_edges(n: usize, next: &mut impl FnMut(usize) -> usize) -> Vec<Vec<usize>> {
    (0..n)
        .map(|node| {
            (0..next(5))
                .filter(|_| node > 0)
                .map(|_| match next(8) {
                    0 => next(node),
                    _ => node - 1 - next(node.min(12)),
                })
                .collect()
        })
        .collect()
}

fn graph_of<'a>(names: &'a [String], lists: &[Vec<usize>]) -> DepGraph<'a> {
    let mut edges = Vec::new();
    for (node, list) in lists.iter().enumerate() {
        for &dependency in list {
            edges.push(single(node, dependency, edges.len(), true));
        }
    }
    DepGraph {
        nodes: names.iter().map(|name| Node { name }).collect(),
        edges,
        groups: Vec::new(),
    }
}

#[test]
fn a_check_reusing_an_earlier_one_finds_what_a_fresh_check_finds() {
    let mut next = crate::generate::xorshift(0x9E37_79B9_7F4A_7C15);
    let names: Vec<String> = (0..400).map(|i| format!("t{i}")).collect();
    for _ in 0..20 {
        let n = 50 + next(350);
        let mut lists = random_edges(n, &mut next);
        let first = check(&graph_of(&names, &lists), Wanted::Dependencies);
        let (mut memo, mut last) = (first.memo, first.dependencies);
        for _ in 0..30 {
            // An edit: a few lists changed, now and then a node named
            // after itself or a later one (no memo then), or one node
            // more or fewer.
            let before = lists.clone();
            let mut edited = Vec::new();
            for _ in 0..1 + next(3) {
                let node = next(lists.len());
                edited.push(node);
                let fresh = random_edges(node + 1, &mut next).pop().unwrap_or_default();
                lists[node] = fresh;
                if next(20) == 0 {
                    let n = lists.len();
                    lists[node].push(node + next(3));
                    lists[node].retain(|&d| d < n);
                }
            }
            match next(10) {
                0 => lists.push(vec![lists.len() - 1]),
                1 if lists.len() > 2 => {
                    lists.pop();
                    let n = lists.len();
                    lists.iter_mut().for_each(|l| l.retain(|&d| d < n));
                }
                _ => {}
            }
            // A node added or taken away changes its list, and taking
            // one away changes the lists that named it.
            let empty = Vec::new();
            let list = |lists: &[Vec<usize>], v: usize| lists.get(v).unwrap_or(&empty).clone();
            let longest = lists.len().max(before.len());
            edited.extend((0..longest).filter(|&v| list(&lists, v) != list(&before, v)));
            let graph = graph_of(&names, &lists);
            let fresh = check(&graph, Wanted::Dependencies);
            let reused = check_reusing(&graph, Wanted::Dependencies, memo.as_ref());
            assert_eq!(reused.diagnostics, fresh.diagnostics);
            assert_eq!(reused.dependencies, fresh.dependencies);
            assert_eq!(reused.has_cycle, fresh.has_cycle);
            assert_eq!(reused.memo.is_some(), fresh.memo.is_some());
            // Told which nodes were edited, the same again.
            if let Some(previous) = &memo {
                let changed = check_changed(&graph, previous, &edited);
                assert_eq!(changed.diagnostics, fresh.diagnostics);
                assert_eq!(changed.dependencies, fresh.dependencies);
                assert_eq!(changed.has_cycle, fresh.has_cycle);
                assert_eq!(changed.memo.is_some(), fresh.memo.is_some());
                // The lists it does not name are as the last check's.
                if let (Some(named), false) = (&changed.changed, changed.has_cycle) {
                    let same = (0..lists.len().min(last.len()))
                        .filter(|&v| named.binary_search(&(v as u32)).is_err());
                    for v in same {
                        assert_eq!(changed.dependencies.of(v), last.of(v));
                    }
                }
            }
            memo = reused.memo;
            last = reused.dependencies;
        }
    }
}

#[test]
fn a_check_after_an_edit_shares_the_lists_it_left_as_they_were() {
    // Each task after the two before it, over ten chunks of nodes; an edit
    // changes one list in the middle.
    let n = 10 * super::super::adjacency::CHUNK;
    let names: Vec<String> = (0..n).map(|i| format!("t{i}")).collect();
    let mut lists: Vec<Vec<usize>> = (0..n).map(|i| (i.saturating_sub(2)..i).collect()).collect();
    let first = check(&graph_of(&names, &lists), Wanted::Dependencies);
    let memo = first.memo.expect("in source order");
    lists[n / 2] = vec![0, n / 2 - 1];
    let graph = graph_of(&names, &lists);
    let changed = check_changed(&graph, &memo, &[n / 2]);
    let fresh = check(&graph, Wanted::Dependencies);
    assert_eq!(changed.diagnostics, fresh.diagnostics);
    assert_eq!(changed.dependencies, fresh.dependencies);
    let again = changed.memo.expect("in source order");
    // Every chunk but the edited one's (and the next one's, whose first
    // list's window reaches into it) is the last check's, not a copy.
    let chunks = again.dependencies.full_chunks();
    assert_eq!(chunks, 10);
    assert_eq!(again.dependencies.shared_chunks(&memo.dependencies), 9);
    let kept = again.reduction.kept.shared_chunks(&memo.reduction.kept);
    assert!(kept >= 8, "{kept} of {chunks}");
    assert_eq!(
        changed.dependencies.shared_chunks(&again.reduction.kept),
        10
    );
}

/// Runs `f` on a thread with a small stack: a walk whose depth follows
/// the input overflows it at a million nodes.
fn on_a_small_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|scope| {
        let thread = std::thread::Builder::new().stack_size(256 << 10);
        thread.spawn_scoped(scope, f).unwrap().join().unwrap()
    })
}

#[test]
fn a_cycle_of_a_million_tasks_is_one_diagnostic_on_a_small_stack() {
    let n = 1_000_000;
    let names: Vec<String> = (0..n).map(|i| format!("t{i}")).collect();
    // t0 after t1 after … after t999999 after t0.
    let lists: Vec<Vec<usize>> = (0..n).map(|i| vec![(i + 1) % n]).collect();
    let graph = graph_of(&names, &lists);
    let report = on_a_small_stack(|| check(&graph, Wanted::Dependencies));
    assert!(report.has_cycle);
    let messages: Vec<(Code, &str)> = report
        .diagnostics
        .iter()
        .map(|d| (d.code, d.message.as_str()))
        .collect();
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0].0, Code::Cycle);
    assert!(
        messages[0]
            .1
            .starts_with("dependency cycle through 1000000 tasks: `t0` → `t999999` → "),
        "{}",
        messages[0].1
    );
}

#[test]
fn a_chain_of_a_million_tasks_checks_on_a_small_stack() {
    let n = 1_000_000;
    let names: Vec<String> = (0..n).map(|i| format!("t{i}")).collect();
    // Each task after the next one: the reverse of source order.
    let lists: Vec<Vec<usize>> = (0..n)
        .map(|i| if i + 1 < n { vec![i + 1] } else { Vec::new() })
        .collect();
    let graph = graph_of(&names, &lists);
    let report = on_a_small_stack(|| check(&graph, Wanted::Dependencies));
    assert!(!report.has_cycle);
    assert_eq!(report.diagnostics, []);
    assert_eq!(report.dependencies.of(0), [1]);
}

#[test]
fn a_group_checks_as_its_edges_written_out() {
    // Steps {a b c} and {d e f}, the second waiting for the first; `f`
    // also names `a`, which `b` (of the group) already comes after.
    let graph = DepGraph {
        nodes: nodes(),
        edges: vec![
            single(1, 0, 10, true),
            single(5, 0, 20, true),
            single(7, 6, 30, true),
        ],
        groups: vec![group(&[3, 4, 5], &[0, 1, 2], 5, 1)],
    };
    let report = check(&graph, Wanted::Dependencies);
    assert!(!report.has_cycle);
    assert_eq!(report.diagnostics.len(), 1, "{:?}", report.diagnostics);
    assert_eq!(report.diagnostics[0].code, Code::RedundantDependency);
    assert_same(&graph);
}

#[test]
fn cycles_and_self_dependencies_through_groups_are_labelled_as_written() {
    // A step that waits for itself, and a cycle that runs through a
    // group and a single edge naming the same pair.
    let graph = DepGraph {
        nodes: nodes(),
        edges: vec![
            single(0, 3, 1, true),
            single(3, 0, 2, true),
            single(6, 7, 40, true),
        ],
        groups: vec![
            group(&[3, 4], &[0, 1], 3, 2),
            group(&[5, 6], &[5, 6], 30, 2),
            group(&[7], &[6], 50, 3),
        ],
    };
    let report = check(&graph, Wanted::Dependencies);
    assert!(report.has_cycle);
    let codes: Vec<Code> = report.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(
        codes.iter().filter(|c| **c == Code::SelfDependency).count(),
        2
    );
    assert!(codes.contains(&Code::Cycle));
    assert_same(&graph);
}

/// An edge reads back the file and whether it is direct that it was made
/// with (the two share 32 bits), in 20 bytes.
#[test]
fn an_edge_reads_back_its_file_and_whether_it_is_direct() {
    for file in [0, 1, 7, DIRECT - 1] {
        for direct in [false, true] {
            let edge = Edge::new(3, 1, FileId(file), Span::new(2, 5), direct);
            let read = (edge.dependent, edge.dependency, edge.file(), edge.span);
            assert_eq!(read, (3, 1, FileId(file), Span::new(2, 5)));
            assert_eq!(edge.direct(), direct);
        }
    }
    assert_eq!(std::mem::size_of::<Edge>(), 20);
}
