//! Adjacency lists in one allocation (compressed sparse rows): the graph
//! checks walk every task's dependencies several times, and a `Vec` per task
//! cost an allocation and a cache miss each.

/// For each node `0..n`, a list of items (its dependencies, say), stored
/// back to back: node `i`'s list is `items[starts[i]..starts[i + 1]]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Adjacency<T = u32> {
    starts: Vec<usize>,
    items: Vec<T>,
}

impl<T> Adjacency<T> {
    /// An empty list set, ready to take nodes in order with [`push`](Self::push)
    /// and [`end_node`](Self::end_node).
    pub fn with_capacity(nodes: usize, items: usize) -> Adjacency<T> {
        let mut starts = Vec::with_capacity(nodes + 1);
        starts.push(0);
        Adjacency {
            starts,
            items: Vec::with_capacity(items),
        }
    }

    /// Adds an item to the node being built.
    pub fn push(&mut self, item: T) {
        self.items.push(item);
    }

    /// Closes the node being built; the next item goes to the next node.
    pub fn end_node(&mut self) {
        self.starts.push(self.items.len());
    }

    /// Gives the node being built the items of an earlier node's list.
    pub fn repeat(&mut self, node: usize)
    where
        T: Clone,
    {
        let (start, end) = (self.starts[node], self.starts[node + 1]);
        self.items.extend_from_within(start..end);
    }

    /// Appends the lists of `other`'s nodes `nodes` as the next nodes, in
    /// one copy of their items (the lists of a graph an edit left as they
    /// were, say).
    pub fn extend_from(&mut self, other: &Adjacency<T>, nodes: std::ops::Range<usize>)
    where
        T: Copy,
    {
        if nodes.is_empty() {
            return;
        }
        let (from, to) = (other.starts[nodes.start], other.starts[nodes.end]);
        let here = self.items.len();
        self.items.extend_from_slice(&other.items[from..to]);
        let at = self.starts.len();
        self.starts
            .extend_from_slice(&other.starts[nodes.start + 1..=nodes.end]);
        // Moved where they now start, in place (a loop the compiler
        // vectorises).
        for end in &mut self.starts[at..] {
            *end = *end - from + here;
        }
    }

    /// The list of the node being built, so far.
    pub fn current_mut(&mut self) -> &mut [T] {
        let start = *self.starts.last().expect("starts holds at least 0");
        &mut self.items[start..]
    }

    /// The number of items in all the lists.
    pub fn items_len(&self) -> usize {
        self.items.len()
    }

    /// The number of nodes.
    pub fn len(&self) -> usize {
        self.starts.len() - 1
    }

    /// Whether there are no nodes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The list of node `node`.
    pub fn of(&self, node: usize) -> &[T] {
        &self.items[self.starts[node]..self.starts[node + 1]]
    }

    /// Every node's list, in node order.
    pub fn iter(&self) -> impl Iterator<Item = &[T]> + '_ {
        self.starts.windows(2).map(|w| &self.items[w[0]..w[1]])
    }
}

impl Adjacency<u32> {
    /// The lists of the pairs `(node, item)` over `n` nodes that `pairs`
    /// gives (it is called twice, and must give the same pairs both times),
    /// each list in the order the pairs come in.
    pub fn from_pairs(n: usize, pairs: impl Fn(&mut dyn FnMut(u32, u32))) -> Adjacency {
        let mut starts = vec![0usize; n + 1];
        pairs(&mut |node, _| starts[node as usize + 1] += 1);
        for i in 0..n {
            starts[i + 1] += starts[i];
        }
        let mut fill = starts.clone();
        let mut items = vec![0u32; starts[n]];
        pairs(&mut |node, item| {
            items[fill[node as usize]] = item;
            fill[node as usize] += 1;
        });
        Adjacency { starts, items }
    }

    /// Sorts every list and removes repeated items.
    pub fn sort_dedup(&mut self) {
        let mut write = 0;
        for node in 0..self.len() {
            let (start, end) = (self.starts[node], self.starts[node + 1]);
            let list = &mut self.items[start..end];
            list.sort_unstable();
            self.starts[node] = write;
            let mut last = None;
            for read in start..end {
                let item = self.items[read];
                if last != Some(item) {
                    self.items[write] = item;
                    write += 1;
                    last = Some(item);
                }
            }
        }
        let n = self.len();
        self.starts[n] = write;
        self.items.truncate(write);
    }
}

#[cfg(test)]
mod tests {
    use super::Adjacency;

    #[test]
    fn pairs_become_lists_in_the_order_they_come() {
        let pairs = [(2, 7), (0, 5), (2, 1), (0, 5), (2, 7)];
        let mut lists = Adjacency::from_pairs(4, |f| pairs.iter().for_each(|&(a, b)| f(a, b)));
        assert_eq!(lists.len(), 4);
        let as_vecs = |l: &Adjacency| l.iter().map(<[u32]>::to_vec).collect::<Vec<_>>();
        assert_eq!(
            as_vecs(&lists),
            vec![vec![5, 5], vec![], vec![7, 1, 7], vec![]]
        );
        lists.sort_dedup();
        assert_eq!(as_vecs(&lists), vec![vec![5], vec![], vec![1, 7], vec![]]);
        assert_eq!(lists.of(2), &[1, 7]);
    }

    #[test]
    fn lists_built_node_by_node() {
        let mut lists: Adjacency<(u32, u32)> = Adjacency::with_capacity(3, 2);
        lists.push((1, 2));
        lists.end_node();
        lists.end_node();
        lists.push((3, 4));
        lists.current_mut()[0].1 = 9;
        lists.end_node();
        assert_eq!(lists.len(), 3);
        assert_eq!(lists.of(0), &[(1, 2)]);
        assert!(lists.of(1).is_empty());
        assert_eq!(lists.of(2), &[(3, 9)]);
        assert!(Adjacency::<u32>::with_capacity(0, 0).is_empty());
    }

    #[test]
    fn lists_copied_from_another_in_runs() {
        let mut other: Adjacency = Adjacency::with_capacity(4, 4);
        for list in [&[3, 8][..], &[], &[1], &[2, 5]] {
            list.iter().for_each(|&i| other.push(i));
            other.end_node();
        }
        let mut lists: Adjacency = Adjacency::with_capacity(4, 4);
        lists.push(7);
        lists.end_node();
        lists.extend_from(&other, 1..3);
        lists.extend_from(&other, 2..2);
        lists.extend_from(&other, 3..4);
        let as_vecs: Vec<Vec<u32>> = lists.iter().map(<[u32]>::to_vec).collect();
        assert_eq!(as_vecs, vec![vec![7], vec![], vec![1], vec![2, 5]]);
    }

    #[test]
    fn a_node_repeats_an_earlier_list() {
        let mut lists: Adjacency = Adjacency::with_capacity(4, 4);
        lists.push(3);
        lists.push(8);
        lists.end_node();
        lists.push(1);
        lists.end_node();
        lists.repeat(0);
        lists.end_node();
        lists.repeat(1);
        lists.push(2);
        lists.end_node();
        let as_vecs: Vec<Vec<u32>> = lists.iter().map(<[u32]>::to_vec).collect();
        assert_eq!(as_vecs, vec![vec![3, 8], vec![1], vec![3, 8], vec![1, 2]]);
    }
}
