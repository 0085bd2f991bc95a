//! Adjacency lists in chunks of [`CHUNK`] nodes, each chunk's lists in one
//! allocation (compressed sparse rows): the graph checks walk every task's
//! dependencies several times, and a `Vec` per task cost an allocation and
//! a cache miss each. A chunk, once full, is shared (`Arc`): the lists of
//! a graph after an edit take the old graph's chunks the edit left as they
//! were without copying them ([`Adjacency::extend_from`]), and a copy of
//! the lists copies only the chunk being built.

use std::sync::Arc;

/// The number of nodes in each chunk of an [`Adjacency`]: 100 chunks at
/// 100,000 tasks. The library's tests use small chunks, so the graph's and
/// the recompile's differential tests (graphs of tens to hundreds of tasks)
/// cross chunk boundaries and share chunks.
pub(super) const CHUNK: usize = if cfg!(test) { 16 } else { 1024 };

/// The lists of up to [`CHUNK`] consecutive nodes, back to back: the
/// chunk's node `i` has `items[starts[i]..starts[i + 1]]`.
#[derive(Clone, Debug)]
struct Chunk<T> {
    starts: Vec<u32>,
    items: Vec<T>,
}

impl<T> Chunk<T> {
    fn with_capacity(nodes: usize, items: usize) -> Chunk<T> {
        let mut starts = Vec::with_capacity(nodes + 1);
        starts.push(0);
        Chunk {
            starts,
            items: Vec::with_capacity(items),
        }
    }

    /// The number of nodes.
    fn len(&self) -> usize {
        self.starts.len() - 1
    }

    fn of(&self, node: usize) -> &[T] {
        &self.items[self.starts[node] as usize..self.starts[node + 1] as usize]
    }

    fn lists(&self) -> impl Iterator<Item = &[T]> + '_ {
        self.starts
            .windows(2)
            .map(|w| &self.items[w[0] as usize..w[1] as usize])
    }
}

/// For each node `0..n`, a list of items (its dependencies, say), kept in
/// chunks of [`CHUNK`] nodes: the full ones shared, the last one being
/// built.
#[derive(Clone, Debug)]
pub struct Adjacency<T = u32> {
    /// Full chunks: nodes `c * CHUNK..(c + 1) * CHUNK` in `full[c]`.
    full: Vec<Arc<Chunk<T>>>,
    /// The nodes after them (fewer than [`CHUNK`]), the last one's list
    /// being built.
    open: Chunk<T>,
    /// The number of items in the full chunks.
    full_items: usize,
}

impl<T> Default for Adjacency<T> {
    fn default() -> Adjacency<T> {
        Adjacency::with_capacity(0, 0)
    }
}

impl<T: PartialEq> PartialEq for Adjacency<T> {
    fn eq(&self, other: &Adjacency<T>) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl<T: Eq> Eq for Adjacency<T> {}

impl<T> Adjacency<T> {
    /// An empty list set, ready to take nodes in order with [`push`](Self::push)
    /// and [`end_node`](Self::end_node); the capacities are hints for
    /// the whole (`items` spread evenly over the nodes).
    pub fn with_capacity(nodes: usize, items: usize) -> Adjacency<T> {
        let in_chunk = nodes.min(CHUNK);
        let per_chunk = match nodes {
            0 => 0,
            _ => items.saturating_mul(in_chunk) / nodes,
        };
        Adjacency {
            full: Vec::with_capacity(nodes / CHUNK),
            open: Chunk::with_capacity(in_chunk, per_chunk),
            full_items: 0,
        }
    }

    /// Adds an item to the node being built.
    pub fn push(&mut self, item: T) {
        self.open.items.push(item);
    }

    /// Closes the node being built; the next item goes to the next node.
    pub fn end_node(&mut self) {
        self.open.starts.push(self.open.items.len() as u32);
        if self.open.len() == CHUNK {
            let capacity = (CHUNK, self.open.items.len());
            let mut full =
                std::mem::replace(&mut self.open, Chunk::with_capacity(capacity.0, capacity.1));
            // Kept as long as the graph's memo, without the room it was
            // built with (the next chunk's guess, or what its growth left).
            full.items.shrink_to_fit();
            self.full_items += full.items.len();
            self.full.push(Arc::new(full));
        }
    }

    /// Gives the node being built the items of an earlier node's list.
    pub fn repeat(&mut self, node: usize)
    where
        T: Clone,
    {
        let (chunk, at) = (node / CHUNK, node % CHUNK);
        match self.full.get(chunk) {
            Some(full) => self.open.items.extend_from_slice(full.of(at)),
            None => {
                let (start, end) = (self.open.starts[at], self.open.starts[at + 1]);
                self.open
                    .items
                    .extend_from_within(start as usize..end as usize);
            }
        }
    }

    /// Appends the lists of `other`'s nodes `nodes` as the next nodes: a
    /// full chunk of `other` that they cover whole and that falls where
    /// this one's next chunk starts is shared, not copied (the lists of a
    /// graph an edit left as they were, say).
    pub fn extend_from(&mut self, other: &Adjacency<T>, nodes: std::ops::Range<usize>)
    where
        T: Copy,
    {
        let mut node = nodes.start;
        while node < nodes.end {
            let here = self.len();
            let chunk = node / CHUNK;
            let shared = here == node
                && node.is_multiple_of(CHUNK)
                && node + CHUNK <= nodes.end
                && chunk < other.full.len();
            if shared {
                let full = Arc::clone(&other.full[chunk]);
                self.full_items += full.items.len();
                self.full.push(full);
                node += CHUNK;
                continue;
            }
            node = self.copy_run(other, node..nodes.end, None::<&fn(&T) -> T>);
        }
    }

    /// Appends the lists of `other`'s nodes `nodes` as the next nodes, each
    /// item given by `map` (a renumbering): copied a run of lists at a
    /// time, never shared.
    pub fn extend_mapped(
        &mut self,
        other: &Adjacency<T>,
        nodes: std::ops::Range<usize>,
        map: &impl Fn(&T) -> T,
    ) where
        T: Copy,
    {
        let mut node = nodes.start;
        while node < nodes.end {
            node = self.copy_run(other, node..nodes.end, Some(map));
        }
    }

    /// Appends `other`'s lists from `nodes.start` up to where this one's
    /// chunk or `other`'s ends (at most `nodes.end`), in one copy (each
    /// item given by `map` if any); gives the node after the last copied.
    fn copy_run(
        &mut self,
        other: &Adjacency<T>,
        nodes: std::ops::Range<usize>,
        map: Option<&impl Fn(&T) -> T>,
    ) -> usize
    where
        T: Copy,
    {
        let (node, here) = (nodes.start, self.len());
        let chunk = node / CHUNK;
        let until = nodes
            .end
            .min(node + CHUNK - here % CHUNK)
            .min((chunk + 1) * CHUNK);
        let from = match other.full.get(chunk) {
            Some(full) => full,
            None => &other.open,
        };
        let (first, last) = (node - chunk * CHUNK, until - chunk * CHUNK);
        let (a, b) = (from.starts[first], from.starts[last]);
        let at = self.open.items.len() as u32;
        let items = &from.items[a as usize..b as usize];
        match map {
            None => self.open.items.extend_from_slice(items),
            Some(map) => self.open.items.extend(items.iter().map(map)),
        }
        let starts = &from.starts[first + 1..=last];
        self.open.starts.extend(starts.iter().map(|&s| s - a + at));
        // Closes the chunk if that filled it.
        if self.open.len() == CHUNK {
            self.open.starts.pop();
            self.end_node();
        }
        until
    }

    /// The list of the node being built, so far.
    pub fn current_mut(&mut self) -> &mut [T] {
        let start = *self.open.starts.last().expect("starts holds at least 0");
        &mut self.open.items[start as usize..]
    }

    /// The number of items in all the lists.
    pub fn items_len(&self) -> usize {
        self.full_items + self.open.items.len()
    }

    /// The number of nodes.
    pub fn len(&self) -> usize {
        self.full.len() * CHUNK + self.open.len()
    }

    /// Whether there are no nodes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The list of node `node`.
    pub fn of(&self, node: usize) -> &[T] {
        let (chunk, at) = (node / CHUNK, node % CHUNK);
        match self.full.get(chunk) {
            Some(full) => full.of(at),
            None => self.open.of(node - self.full.len() * CHUNK),
        }
    }

    /// How many of the full chunks this and `other` share (the same
    /// allocation, not copies).
    #[cfg(test)]
    pub(crate) fn shared_chunks(&self, other: &Adjacency<T>) -> usize {
        let pairs = self.full.iter().zip(&other.full);
        pairs.filter(|(a, b)| Arc::ptr_eq(a, b)).count()
    }

    /// The number of full chunks.
    #[cfg(test)]
    pub(crate) fn full_chunks(&self) -> usize {
        self.full.len()
    }

    /// Every node's list, in node order.
    pub fn iter(&self) -> impl Iterator<Item = &[T]> + '_ {
        self.full
            .iter()
            .flat_map(|chunk| chunk.lists())
            .chain(self.open.lists())
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
        let mut lists = Adjacency::with_capacity(n, items.len());
        for node in 0..n {
            lists
                .open
                .items
                .extend_from_slice(&items[starts[node]..starts[node + 1]]);
            lists.end_node();
        }
        lists
    }

    /// Sorts every list and removes repeated items.
    pub fn sort_dedup(&mut self) {
        for chunk in &mut self.full {
            sort_dedup(Arc::make_mut(chunk));
        }
        sort_dedup(&mut self.open);
        self.full_items = self.full.iter().map(|chunk| chunk.items.len()).sum();
    }
}

/// Sorts every list of a chunk and removes repeated items.
fn sort_dedup(chunk: &mut Chunk<u32>) {
    let mut write = 0;
    for node in 0..chunk.len() {
        let (start, end) = (chunk.starts[node] as usize, chunk.starts[node + 1] as usize);
        chunk.items[start..end].sort_unstable();
        chunk.starts[node] = write as u32;
        let mut last = None;
        for read in start..end {
            let item = chunk.items[read];
            if last != Some(item) {
                chunk.items[write] = item;
                write += 1;
                last = Some(item);
            }
        }
    }
    let n = chunk.len();
    chunk.starts[n] = write as u32;
    chunk.items.truncate(write);
    chunk.items.shrink_to_fit();
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

    /// Lists of `n` nodes, node `i` holding `i % 5` items.
    fn lists_of(n: usize, seed: u32) -> Vec<Vec<u32>> {
        (0..n)
            .map(|i| {
                (0..(i % 5) as u32)
                    .map(|k| k * 7 + seed + i as u32)
                    .collect()
            })
            .collect()
    }

    fn built(lists: &[Vec<u32>]) -> Adjacency {
        let mut built = Adjacency::with_capacity(lists.len(), 0);
        for list in lists {
            list.iter().for_each(|&i| built.push(i));
            built.end_node();
        }
        built
    }

    #[test]
    fn lists_copied_across_chunks_in_any_runs() {
        let n = 3 * super::CHUNK + 17;
        let (old, new) = (lists_of(n, 0), lists_of(n, 1));
        let (old_built, new_built) = (built(&old), built(&new));
        // Runs of the old lists between nodes made again, at places that
        // fall on chunk boundaries and between them.
        let c = super::CHUNK;
        for changed in [vec![], vec![0], vec![5, c - 1, c, 2 * c + 2], vec![n - 1]] {
            let mut lists = Adjacency::with_capacity(n, 0);
            let mut expected = Vec::new();
            let mut copied = 0;
            for &node in &changed {
                lists.extend_from(&old_built, copied..node);
                expected.extend_from_slice(&old[copied..node]);
                new[node].iter().for_each(|&i| lists.push(i));
                lists.end_node();
                expected.push(new[node].clone());
                copied = node + 1;
            }
            lists.extend_from(&old_built, copied..n);
            expected.extend_from_slice(&old[copied..n]);
            assert_eq!(lists.len(), n);
            let as_vecs: Vec<Vec<u32>> = lists.iter().map(<[u32]>::to_vec).collect();
            assert_eq!(as_vecs, expected, "{changed:?}");
            assert_eq!(lists, built(&expected));
            assert_ne!(lists, new_built);
            let items: usize = expected.iter().map(Vec::len).sum();
            assert_eq!(lists.items_len(), items);
            for (node, list) in expected.iter().enumerate() {
                assert_eq!(lists.of(node), list.as_slice());
            }
        }
    }

    #[test]
    fn a_chunk_an_edit_left_is_shared_not_copied() {
        let n = 3 * super::CHUNK;
        let old = built(&lists_of(n, 0));
        let mut lists = Adjacency::with_capacity(n, 0);
        lists.extend_from(&old, 0..5);
        lists.push(99);
        lists.end_node();
        lists.extend_from(&old, 6..n);
        assert!(!std::sync::Arc::ptr_eq(&lists.full[0], &old.full[0]));
        assert!(std::sync::Arc::ptr_eq(&lists.full[1], &old.full[1]));
        assert!(std::sync::Arc::ptr_eq(&lists.full[2], &old.full[2]));
        assert_eq!(lists.of(5), &[99]);
        let copy = lists.clone();
        assert!(std::sync::Arc::ptr_eq(&copy.full[1], &old.full[1]));
    }

    #[test]
    fn many_pairs_become_chunked_lists() {
        let n = 2 * super::CHUNK + 3;
        let pairs: Vec<(u32, u32)> = (0..n as u32)
            .flat_map(|i| [(i, i / 2), (i, i / 3), (i, i / 2)])
            .collect();
        let mut lists = Adjacency::from_pairs(n, |f| pairs.iter().for_each(|&(a, b)| f(a, b)));
        lists.sort_dedup();
        for i in 0..n {
            let mut expected = vec![i as u32 / 3, i as u32 / 2];
            expected.sort_unstable();
            expected.dedup();
            assert_eq!(lists.of(i), expected.as_slice());
        }
        let items: usize = (0..n).map(|i| lists.of(i).len()).sum();
        assert_eq!(lists.items_len(), items);
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
