//! Each task's order key: a number per task, increasing in plan order, with
//! gaps, so that a task inserted between two others takes a key between
//! theirs and no other task's key changes. The database stores key their
//! task rows by it (`tasks.ord`), so an insertion in the middle of a plan
//! writes one row, not every row after it. When two neighbours have no key
//! left between them, a small window around the insertion is spread out
//! again (its tasks' rows rewritten): the window doubles until its keys
//! have room, so the cost stays amortised small.

/// The distance between the keys of a plan's tasks when they are first
/// written (`(position + 1) × ORDER_GAP`).
pub const ORDER_GAP: i64 = 1 << 16;

/// The least distance between keys a spread-out window leaves: room for
/// six more insertions at one place before it is spread again.
const MIN_SPACING: i64 = 64;

/// The order keys of a plan's tasks, by position: strictly increasing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Order {
    keys: Vec<i64>,
}

/// What an insertion did to the keys: the new task's key, and the tasks
/// whose keys were spread out (their positions after the insertion, and
/// their old keys: those rows go, the tasks are written at their new keys).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Inserted {
    /// The inserted task's key.
    pub key: i64,
    /// (position, old key) of each task whose key changed.
    pub moved: Vec<(usize, i64)>,
}

impl Order {
    /// The keys of `n` tasks as first written: `ORDER_GAP`, `2 × ORDER_GAP`, …
    pub fn dense(n: usize) -> Order {
        Order {
            keys: (0..n).map(default_key).collect(),
        }
    }

    /// Keys read from a store, or `None` when they do not increase strictly.
    pub fn from_keys(keys: Vec<i64>) -> Option<Order> {
        keys.windows(2)
            .all(|pair| pair[0] < pair[1])
            .then_some(Order { keys })
    }

    /// The key of the task at position `i`.
    pub fn key(&self, i: usize) -> i64 {
        self.keys[i]
    }

    /// How many keys there are (one a task).
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The position of the task with key `key`: `Ok` when there is one,
    /// else `Err` with the position a task of that key would take.
    pub fn find(&self, key: i64) -> Result<usize, usize> {
        self.keys.binary_search(&key)
    }

    /// A key for a task appended after the last.
    pub fn push(&mut self) -> i64 {
        let key = self.keys.last().map_or(ORDER_GAP, |&last| last + ORDER_GAP);
        self.keys.push(key);
        key
    }

    /// Takes out the key at position `i` (its task is removed); the key.
    pub fn remove(&mut self, i: usize) -> i64 {
        self.keys.remove(i)
    }

    /// Puts `key` at position `i` (a task read from a store's row): it
    /// must fall between its neighbours' keys.
    pub fn insert_key(&mut self, i: usize, key: i64) {
        self.keys.insert(i, key);
    }

    /// A key for a task inserted at position `p` (the task at `p` and
    /// those after it move one place on): between its neighbours' keys,
    /// the window around `p` spread out first when there is no room.
    pub fn insert(&mut self, p: usize) -> Inserted {
        if p == self.keys.len() {
            return Inserted {
                key: self.push(),
                moved: Vec::new(),
            };
        }
        let below = if p == 0 {
            self.keys[0] - ORDER_GAP
        } else {
            self.keys[p - 1]
        };
        let above = self.keys[p];
        if above - below >= 2 {
            let key = below + (above - below) / 2;
            self.keys.insert(p, key);
            return Inserted {
                key,
                moved: Vec::new(),
            };
        }
        self.keys.insert(p, below);
        let moved = self.spread(p);
        Inserted {
            key: self.keys[p],
            moved,
        }
    }

    /// Spreads out the keys of a window around `p` (the key at `p` being a
    /// placeholder) until every key in it is at least [`MIN_SPACING`] from
    /// the next; the tasks other than `p` whose key changed, with their old
    /// keys.
    fn spread(&mut self, p: usize) -> Vec<(usize, i64)> {
        let n = self.keys.len();
        let mut half = 1;
        loop {
            let lo = p.saturating_sub(half);
            let hi = (p + half + 1).min(n);
            let floor = if lo == 0 {
                self.keys[0].min(self.keys[hi - 1]) - ORDER_GAP * (hi - lo) as i64
            } else {
                self.keys[lo - 1]
            };
            let ceiling = if hi == n {
                self.keys[hi - 1].max(floor) + ORDER_GAP * (hi - lo) as i64
            } else {
                self.keys[hi]
            };
            let count = (hi - lo) as i64;
            let step = (ceiling - floor) / (count + 1);
            if step >= MIN_SPACING || (lo == 0 && hi == n) {
                let step = step.max(1);
                let mut moved = Vec::new();
                for (offset, i) in (lo..hi).enumerate() {
                    let key = floor + step * (offset as i64 + 1);
                    if i != p && self.keys[i] != key {
                        moved.push((i, self.keys[i]));
                    }
                    self.keys[i] = key;
                }
                return moved;
            }
            half *= 2;
        }
    }
}

/// The key of the task at position `i` as first written.
pub fn default_key(i: usize) -> i64 {
    (i as i64 + 1) * ORDER_GAP
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Insertions at one place, at the front and at random places keep the
    /// keys strictly increasing, and spread out few keys: at most a few
    /// per insertion on average.
    #[test]
    fn insertions_keep_the_keys_increasing_and_move_few() {
        let mut order = Order::dense(1000);
        let mut moved = 0;
        let mut seed = 7u64;
        for n in 0..20_000 {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let p = match n % 3 {
                0 => 500,
                1 => 0,
                _ => (seed >> 33) as usize % (order.len() + 1),
            };
            let inserted = order.insert(p);
            assert_eq!(order.key(p), inserted.key);
            moved += inserted.moved.len();
            if n % 5 == 0 {
                order.remove((seed >> 40) as usize % order.len());
            }
        }
        assert!(Order::from_keys(order.keys.clone()).is_some());
        assert!(moved < 20_000 * 8, "{moved} keys moved");
    }

    /// An insertion with room moves nothing; keys are found again.
    #[test]
    fn an_insertion_with_room_moves_no_key() {
        let mut order = Order::dense(3);
        let inserted = order.insert(1);
        assert_eq!(inserted.key, ORDER_GAP + ORDER_GAP / 2);
        assert!(inserted.moved.is_empty());
        assert_eq!(order.find(inserted.key), Ok(1));
        assert_eq!(order.find(5), Err(0));
        assert_eq!(order.push(), 4 * ORDER_GAP);
        assert_eq!(Order::from_keys(vec![2, 2]), None);
    }
}
