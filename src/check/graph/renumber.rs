//! The memo of a graph's last check with a node added or taken out, every
//! later node's number moved by one: what [`super::check_changed`] reuses
//! after a task is added to the plan or taken out of it.

use super::{Adjacency, Memo, Reduction};

/// What stands in a list for the node taken out: no node of the graph, so
/// the list differs from any the graph after the edit can give it.
const GONE: u32 = u32::MAX;

impl Memo {
    /// The memo with node `at` added (an empty list; it and every later
    /// node's number one more) or, when `added` is false, taken out (every
    /// later number one less, the node itself [`GONE`] where a list named
    /// it). The lists before `at` name only nodes before it (the memo is
    /// kept for graphs in source order): their chunks are shared; the rest
    /// are copied once, renumbered.
    pub(crate) fn renumbered(&self, at: usize, added: bool) -> Memo {
        // One renumbering each way, without a branch per item (a select),
        // so that the copy of the lists stays a tight loop.
        match added {
            true => self.renumbered_by(at, true, |v| v + u32::from(v >= at as u32)),
            false => self.renumbered_by(at, false, |v| match v == at as u32 {
                true => GONE,
                false => v - u32::from(v > at as u32),
            }),
        }
    }

    /// The memo with node `at` added or taken out, every number in its
    /// lists after it given by `number`.
    fn renumbered_by(&self, at: usize, added: bool, number: impl Fn(u32) -> u32) -> Memo {
        let lists = |old: &Adjacency| renumbered(old, at, added, |&v| number(v));
        Memo {
            dependencies: lists(&self.dependencies),
            reduction: Reduction {
                kept: lists(&self.reduction.kept),
            },
        }
    }
}

/// `old` with node `at` added (empty) or taken out, the items of the nodes
/// after it given by `number` (copied a run of lists at a time).
fn renumbered<T: Copy>(
    old: &Adjacency<T>,
    at: usize,
    added: bool,
    number: impl Fn(&T) -> T,
) -> Adjacency<T> {
    let n = old.len();
    let at = at.min(n);
    let mut lists = Adjacency::with_capacity(n + 1, old.items_len());
    lists.extend_from(old, 0..at);
    let from = match added {
        true => {
            lists.end_node();
            at
        }
        false => at + 1,
    };
    lists.extend_mapped(old, from..n, &number);
    lists
}

#[cfg(test)]
mod tests {
    use super::super::{check, check_changed, DepGraph, Edge, Node, Wanted};
    use crate::span::{FileId, Span};

    fn edge(dependent: usize, dependency: usize) -> Edge {
        Edge::new(
            dependent as u32,
            dependency as u32,
            FileId::default(),
            Span::new(dependent, dependency + 1),
            true,
        )
    }

    fn graph(n: usize, pairs: &[(usize, usize)]) -> DepGraph<'static> {
        DepGraph {
            nodes: (0..n).map(|_| Node { name: "t" }).collect(),
            edges: pairs.iter().map(|&(a, b)| edge(a, b)).collect(),
            groups: Vec::new(),
        }
    }

    /// A chain over 40 nodes (three chunks of the tests' 16) with a few
    /// edges across it; a node added or taken out at every place, the
    /// memo renumbered and checked again from it, equals a fresh check.
    #[test]
    fn a_renumbered_memo_checks_as_a_fresh_check_does() {
        let n = 40;
        let mut pairs: Vec<(usize, usize)> = (1..n).map(|i| (i, i - 1)).collect();
        pairs.extend((3..n).step_by(3).map(|i| (i, i - 3)));
        let before = check(&graph(n, &pairs), Wanted::Dependencies);
        let memo = before.memo.expect("a memo");
        for at in 0..n {
            let up = |v: usize| if v >= at { v + 1 } else { v };
            let down = |v: usize| if v > at { v - 1 } else { v };
            // Added: the new node waits for the one before it.
            let mut added: Vec<(usize, usize)> =
                pairs.iter().map(|&(a, b)| (up(a), up(b))).collect();
            let mut changed = vec![at];
            if at > 0 {
                added.push((at, at - 1));
            }
            let after = graph(n + 1, &added);
            let report = check_changed(&after, &memo.renumbered(at, true), &changed);
            let fresh = check(&after, Wanted::Dependencies);
            assert_eq!(report.dependencies, fresh.dependencies, "added at {at}");
            assert_eq!(report.diagnostics.len(), fresh.diagnostics.len());
            // Taken out: what named it names nothing now.
            let kept: Vec<(usize, usize)> = pairs
                .iter()
                .filter(|&&(a, b)| a != at && b != at)
                .map(|&(a, b)| (down(a), down(b)))
                .collect();
            changed = pairs
                .iter()
                .filter(|&&(_, b)| b == at)
                .map(|&(a, _)| a - 1)
                .collect();
            let after = graph(n - 1, &kept);
            let report = check_changed(&after, &memo.renumbered(at, false), &changed);
            let fresh = check(&after, Wanted::Dependencies);
            assert_eq!(report.dependencies, fresh.dependencies, "taken out at {at}");
        }
    }
}
