//! What each task of a plan waits for: all the lists in a few blocks.

use std::sync::Arc;

use super::TaskId;

/// Tasks a block of [`Dependencies`] holds the lists of.
const BLOCK: usize = 1024;

/// What each task of a plan waits for, by the task's index: task ids,
/// sorted, without duplicates. The lists in blocks of [`BLOCK`] tasks, each
/// block one list of ids (and where each task's ends): 4 bytes a task and 4
/// a dependency. A task moved by a paste is renumbered by making the
/// blocks again, the task itself untouched; a keystroke that changes a
/// task's list copies its block only, the others shared with the plan
/// before.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dependencies {
    blocks: Vec<Arc<Block>>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Block {
    /// Where each task's list ends in `ids`.
    ends: Vec<u32>,
    ids: Vec<TaskId>,
}

impl Block {
    fn range(&self, at: usize) -> Option<std::ops::Range<usize>> {
        let end = *self.ends.get(at)? as usize;
        let start = match at {
            0 => 0,
            _ => self.ends[at - 1] as usize,
        };
        Some(start..end)
    }
}

impl Dependencies {
    /// What the task at `index` waits for (nothing past the last task).
    pub fn of(&self, index: usize) -> &[TaskId] {
        let Some(block) = self.blocks.get(index / BLOCK) else {
            return &[];
        };
        match block.range(index % BLOCK) {
            Some(range) => &block.ids[range],
            None => &[],
        }
    }

    /// How many tasks' lists it holds.
    pub fn len(&self) -> usize {
        self.blocks
            .last()
            .map_or(0, |last| (self.blocks.len() - 1) * BLOCK + last.ends.len())
    }

    /// Whether it holds no task's list.
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// Adds the next task's list.
    pub fn push(&mut self, list: impl IntoIterator<Item = TaskId>) {
        if self
            .blocks
            .last()
            .is_none_or(|last| last.ends.len() == BLOCK)
        {
            self.blocks.push(Arc::default());
        }
        if let Some(last) = self.blocks.last_mut() {
            let block = Arc::make_mut(last);
            block.ids.extend(list);
            block.ends.push(block.ids.len() as u32);
        }
    }

    /// Gives the task at `index` the list `list` (an index past the last
    /// task is left alone), its block copied if shared.
    pub fn set(&mut self, index: usize, list: &[TaskId]) {
        let Some(block) = self.blocks.get_mut(index / BLOCK) else {
            return;
        };
        let at = index % BLOCK;
        let Some(range) = block.range(at) else {
            return;
        };
        let block = Arc::make_mut(block);
        if range.len() == list.len() {
            block.ids[range].copy_from_slice(list);
            return;
        }
        let (was, now) = (range.len() as u32, list.len() as u32);
        block.ids.splice(range, list.iter().copied());
        // Each later end is at least this list's end, so at least `was`.
        for end in &mut block.ends[at..] {
            *end = *end - was + now;
        }
    }

    /// The lists of the first `count` tasks: the whole blocks among them
    /// shared.
    pub fn first(&self, count: usize) -> Dependencies {
        let whole = (count / BLOCK).min(self.blocks.len());
        let mut first = Dependencies {
            blocks: self.blocks[..whole].to_vec(),
        };
        for index in whole * BLOCK..count.min(self.len()) {
            first.push(self.of(index).iter().copied());
        }
        first
    }

    /// Its own blocks (those not shared) without room to spare.
    pub fn shrink_to_fit(&mut self) {
        for block in self.blocks.iter_mut().filter_map(Arc::get_mut) {
            block.ends.shrink_to_fit();
            block.ids.shrink_to_fit();
        }
    }
}

impl<L: IntoIterator<Item = TaskId>> FromIterator<L> for Dependencies {
    /// The lists in order, without room to spare.
    fn from_iter<I: IntoIterator<Item = L>>(lists: I) -> Dependencies {
        let mut dependencies = Dependencies::default();
        for list in lists {
            dependencies.push(list);
        }
        dependencies.shrink_to_fit();
        dependencies
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_set_to_another_length_moves_the_later_lists() {
        let mut deps: Dependencies = [vec![], vec![1], vec![1, 2]].into_iter().collect();
        deps.set(1, &[]);
        assert_eq!(
            (deps.of(0), deps.of(1), deps.of(2)),
            (&[][..], &[][..], &[1, 2][..])
        );
        deps.set(0, &[2, 3]);
        deps.set(2, &[4]);
        assert_eq!(
            (deps.of(0), deps.of(1), deps.of(2)),
            (&[2, 3][..], &[][..], &[4][..])
        );
        assert_eq!(deps, [vec![2, 3], vec![], vec![4]].into_iter().collect());
        assert_eq!(deps.of(3), &[] as &[TaskId]);
    }

    #[test]
    fn a_list_set_copies_its_block_only() {
        let lists = (0..BLOCK as TaskId * 2 + 1).map(|id| vec![id]);
        let before: Dependencies = lists.collect();
        let mut after = before.clone();
        after.set(BLOCK + 1, &[7, 8]);
        assert_eq!(after.len(), 2 * BLOCK + 1);
        assert_eq!(
            (after.of(BLOCK), after.of(BLOCK + 1)),
            (&[BLOCK as TaskId][..], &[7, 8][..])
        );
        assert_eq!(after.of(2 * BLOCK), [2 * BLOCK as TaskId]);
        assert!(Arc::ptr_eq(&before.blocks[0], &after.blocks[0]));
        assert!(!Arc::ptr_eq(&before.blocks[1], &after.blocks[1]));
        let first = after.first(BLOCK + 2);
        assert!(Arc::ptr_eq(&before.blocks[0], &first.blocks[0]));
        assert_eq!((first.len(), first.of(BLOCK + 1)), (BLOCK + 2, &[7, 8][..]));
    }

    /// What a change does to a plain list of lists, for a model.
    #[derive(Clone, Debug)]
    enum Change {
        Push(Vec<TaskId>),
        Set(usize, Vec<TaskId>),
        First(usize),
    }

    fn list() -> impl proptest::strategy::Strategy<Value = Vec<TaskId>> {
        proptest::collection::vec(0..5 as TaskId, 0..4)
    }

    fn change() -> impl proptest::strategy::Strategy<Value = Change> {
        use proptest::prelude::*;
        // Indexes and counts up to past three blocks: their edges, a block
        // one task long, and past the last task.
        let index = prop_oneof![
            0..3 * BLOCK + 2,
            (1..4usize).prop_flat_map(|b| b * BLOCK - 2..b * BLOCK + 2),
        ];
        prop_oneof![
            list().prop_map(Change::Push),
            (index.clone(), list()).prop_map(|(at, list)| Change::Set(at, list)),
            index.prop_map(Change::First),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(
            crate::generate::fuzz_cases(48)
        ))]

        /// Pushes, sets and firsts across the blocks' edges give the lists
        /// a plain list of lists gives, in the blocks the lists themselves
        /// make, and a set copies only its own block.
        #[test]
        fn the_blocks_hold_what_a_list_of_lists_holds(
            tasks in proptest::prop_oneof![0..4usize, BLOCK - 2..BLOCK + 2, 2 * BLOCK - 1..2 * BLOCK + 3],
            seed in 1..u64::MAX,
            changes in proptest::collection::vec(change(), 0..12),
        ) {
            let mut next = crate::generate::xorshift(seed);
            let mut model: Vec<Vec<TaskId>> = (0..tasks)
                .map(|_| (0..next(3)).map(|_| next(9) as TaskId).collect())
                .collect();
            let mut deps: Dependencies = model.iter().cloned().collect();
            for change in changes {
                match change {
                    Change::Push(list) => {
                        deps.push(list.iter().copied());
                        model.push(list);
                    }
                    Change::Set(at, list) => {
                        let before = deps.clone();
                        deps.set(at, &list);
                        let copied = at < model.len();
                        if let Some(was) = model.get_mut(at) {
                            *was = list;
                        }
                        for (b, (old, new)) in before.blocks.iter().zip(&deps.blocks).enumerate() {
                            let shared = !copied || b != at / BLOCK;
                            proptest::prop_assert_eq!(Arc::ptr_eq(old, new), shared);
                        }
                    }
                    Change::First(count) => {
                        deps = deps.first(count);
                        model.truncate(count);
                    }
                }
                proptest::prop_assert_eq!(deps.len(), model.len());
                proptest::prop_assert_eq!(deps.is_empty(), model.is_empty());
                for (at, list) in model.iter().enumerate() {
                    proptest::prop_assert_eq!(deps.of(at), &list[..]);
                }
                proptest::prop_assert_eq!(deps.of(model.len()), &[] as &[TaskId]);
                let whole: Dependencies = model.iter().cloned().collect();
                proptest::prop_assert_eq!(&deps, &whole);
            }
        }
    }
}
