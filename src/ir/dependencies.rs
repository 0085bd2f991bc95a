//! What each task of a plan waits for: all the lists in one.

use super::TaskId;

/// What each task of a plan waits for, by the task's index: task ids,
/// sorted, without duplicates. All the lists in one list of ids (and where
/// each ends): 4 bytes a task and 4 a dependency, and a task moved by a
/// paste renumbered by making this list again, the task itself untouched.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dependencies {
    /// Where each task's list ends in `ids`.
    ends: Vec<u32>,
    ids: Vec<TaskId>,
}

impl Dependencies {
    /// Room for `tasks` lists of `ids` ids in all.
    pub fn with_capacity(tasks: usize, ids: usize) -> Dependencies {
        Dependencies {
            ends: Vec::with_capacity(tasks),
            ids: Vec::with_capacity(ids),
        }
    }

    /// What the task at `index` waits for (nothing past the last task).
    pub fn of(&self, index: usize) -> &[TaskId] {
        let Some(&end) = self.ends.get(index) else {
            return &[];
        };
        let start = match index {
            0 => 0,
            _ => self.ends[index - 1],
        };
        &self.ids[start as usize..end as usize]
    }

    /// How many tasks' lists it holds.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// How many ids all the lists hold.
    pub fn total(&self) -> usize {
        self.ids.len()
    }

    /// Whether it holds no task's list.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Adds the next task's list.
    pub fn push(&mut self, list: impl IntoIterator<Item = TaskId>) {
        self.ids.extend(list);
        self.ends.push(self.ids.len() as u32);
    }

    /// Gives the task at `index` the list `list` (an index past the last
    /// task is left alone). The later lists move when its length changes.
    pub fn set(&mut self, index: usize, list: &[TaskId]) {
        let Some(&end) = self.ends.get(index) else {
            return;
        };
        let start = match index {
            0 => 0,
            _ => self.ends[index - 1],
        };
        let (start, end) = (start as usize, end as usize);
        if end - start == list.len() {
            self.ids[start..end].copy_from_slice(list);
            return;
        }
        self.ids.splice(start..end, list.iter().copied());
        let (was, now) = ((end - start) as u32, list.len() as u32);
        // Each later end is at least this list's end, so at least `was`.
        for end in &mut self.ends[index..] {
            *end = *end - was + now;
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
        dependencies.ends.shrink_to_fit();
        dependencies.ids.shrink_to_fit();
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
}
