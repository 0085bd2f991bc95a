//! The names a "did you mean" searches among, kept with what bounds a
//! search's work for each: its length, and which letters it holds. A search
//! through the index spends the budget as [`Budget::closest_among`] does
//! over the same names, and finds the same name; it only skips, with one
//! comparison of two words, the candidates whose letters are too far apart
//! to be compared letter by letter.

use std::collections::BTreeMap;
use std::sync::Arc;

use smol_str::SmolStr;

use super::{Budget, Letters, Misspelt};

/// The bit of [`Index::letters`] that marks a name that is not ASCII (its
/// letters bound nothing).
const NOT_ASCII: u64 = 1 << 63;

/// How many names a chunk holds (the library's own tests use small chunks,
/// so that their indexes have several).
#[cfg(not(test))]
const CHUNK: usize = 1024;
#[cfg(test)]
const CHUNK: usize = 4;

/// Names to search among, in their order (ties go to the first).
///
/// Kept in chunks of [`CHUNK`] names shared between copies: a copy with one
/// name changed ([`Index::rename`], after a task is renamed) makes one
/// chunk again, not the whole index.
#[derive(Clone, Debug, Default)]
pub struct Index {
    chunks: Vec<Arc<Chunk>>,
    len: usize,
    /// How many names have each length in characters: what a search that
    /// looks at every name spends is told from these before it starts.
    lengths: BTreeMap<u32, u32>,
}

/// [`CHUNK`] names (the last chunk fewer) and what bounds a search's work
/// for each.
#[derive(Clone, Debug)]
struct Chunk {
    names: Vec<SmolStr>,
    /// Each name's length in characters.
    chars: Vec<u32>,
    /// Each name's letters ([`letters_of`]).
    letters: Vec<u64>,
}

impl Chunk {
    fn new() -> Chunk {
        Chunk {
            names: Vec::with_capacity(CHUNK),
            chars: Vec::with_capacity(CHUNK),
            letters: Vec::with_capacity(CHUNK),
        }
    }
}

impl Index {
    /// The index of `names`, in that order.
    pub fn new(names: impl IntoIterator<Item = SmolStr>) -> Index {
        let mut index = Index::default();
        let mut chunk = Chunk::new();
        // Most names are short: their lengths counted in a list first.
        let mut short = [0u32; 64];
        for name in names {
            if chunk.names.len() == CHUNK {
                index
                    .chunks
                    .push(Arc::new(std::mem::replace(&mut chunk, Chunk::new())));
            }
            let chars = chars_of(&name);
            match short.get_mut(chars as usize) {
                Some(count) => *count += 1,
                None => *index.lengths.entry(chars).or_default() += 1,
            }
            chunk.chars.push(chars);
            chunk.letters.push(letters_of(&name));
            chunk.names.push(name);
            index.len += 1;
        }
        if !chunk.names.is_empty() {
            index.chunks.push(Arc::new(chunk));
        }
        for (chars, &count) in (0u32..).zip(&short) {
            if count > 0 {
                index.lengths.insert(chars, count);
            }
        }
        index
    }

    /// How many names it holds.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no name.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Gives the name at `at` (in the order of [`Index::new`]) a new text;
    /// `None` if there is no such name. Only the chunk that holds it is
    /// copied, if it is shared.
    pub fn rename(&mut self, at: usize, name: SmolStr) -> Option<()> {
        if at >= self.len {
            return None;
        }
        let chunk = Arc::make_mut(self.chunks.get_mut(at / CHUNK)?);
        let i = at % CHUNK;
        let (old, new) = (chunk.chars[i], chars_of(&name));
        if let Some(count) = self.lengths.get_mut(&old) {
            *count -= 1;
            if *count == 0 {
                self.lengths.remove(&old);
            }
        }
        *self.lengths.entry(new).or_default() += 1;
        chunk.chars[i] = new;
        chunk.letters[i] = letters_of(&name);
        chunk.names[i] = name;
        Some(())
    }
}

impl Budget {
    /// [`Budget::closest`] among the names of `index`: the same name found,
    /// the same budget spent.
    ///
    /// A search over the names spends a unit on each, and the product of
    /// the two lengths on each it may compare letter by letter (one of a
    /// length close enough, not equal to `name`), and finds nothing once
    /// the budget runs out. So what it spends is told by the index's count
    /// of names of each length and the number equal to `name`: the search
    /// decides from these whether the budget lasts, and then looks at the
    /// names without counting.
    pub fn closest_in<'a>(&mut self, name: &str, index: &'a Index) -> Option<&'a str> {
        let a = name.chars().count();
        let too_long = 2 * a + 3;
        // Each name costs 1, each one of a length that may qualify a × b
        // more, but one equal to `name` (of length a): a × a less.
        let compared = |b: usize| b < too_long && a.abs_diff(b) <= super::allowed(a, b);
        let upto = u32::try_from(too_long).unwrap_or(u32::MAX);
        let mut spent = index.len as u128;
        let mut equal_cost = 0;
        for (&b, &count) in index.lengths.range(..upto) {
            let b = b as usize;
            if compared(b) {
                let cost = a.saturating_mul(b) as u128;
                spent += u128::from(count) * cost;
                if b == a {
                    equal_cost = cost;
                }
            }
        }
        let left = self.left as u128;
        let most_equal = u128::from(index.lengths.get(&(a as u32)).copied().unwrap_or(0));
        if left + most_equal * equal_cost < spent {
            self.left = 0;
            return None;
        }
        let (best, equal) = closest_of(name, index);
        spent -= equal as u128 * equal_cost;
        if left < spent {
            self.left = 0;
            return None;
        }
        // Not more than `left`, a `usize`.
        self.left = (left - spent) as usize;
        best
    }
}

/// The name of `index` closest to `name` (as [`Budget::closest_in`] finds
/// it with the budget to look at every name), and how many are equal to
/// `name`.
fn closest_of<'a>(name: &str, index: &'a Index) -> (Option<&'a str>, usize) {
    let a = name.chars().count();
    let lower = name.to_lowercase();
    let mut letters = Letters::of(name);
    let own = letters_of(name);
    let too_long = 2 * a + 3;
    // The most a candidate of a length that may qualify is allowed (the
    // longest is allowed the most: shorter than `too_long`), and from it
    // the most letters held by one name alone for which a candidate may
    // still be compared: the quick test below skips the others, which the
    // full test after it would skip too.
    let most_allowed = super::allowed(a, too_long - 1);
    let ascii = own & NOT_ASCII == 0;
    let mut best: Option<(usize, &str)> = None;
    let mut apart = 2 * most_allowed;
    let mut equal = 0;
    for chunk in &index.chunks {
        let entries = chunk.chars.iter().zip(&chunk.letters).zip(&chunk.names);
        for ((&chars, &bits), candidate) in entries {
            let held_alone = own ^ bits;
            // Both ASCII, and too many letters held by one alone.
            if ascii && held_alone & NOT_ASCII == 0 && more_bits_than(held_alone, apart) {
                continue;
            }
            // Equal names have equal lengths and letters.
            if held_alone == 0 && chars as usize == a && candidate.as_str() == name {
                equal += 1;
                continue;
            }
            let b = chars as usize;
            if b >= too_long {
                continue;
            }
            let allowed = super::allowed(a, b);
            if a.abs_diff(b) > allowed {
                continue;
            }
            // Each letter one name holds and the other does not adds one to
            // what the letter counts bound the distance by (`Letters`), so
            // half the letters held by one alone bound it from below too: a
            // candidate skipped here is one the counts would skip.
            if (own | bits) & NOT_ASCII == 0 {
                let least = (held_alone.count_ones() as usize).div_ceil(2);
                let beaten = best.is_some_and(|(d, _)| least >= d);
                // Names equal but for case hold the same (folded) letters.
                if beaten || least > allowed {
                    continue;
                }
            }
            let misspelt = Misspelt {
                name,
                lower: &lower,
                allowed,
            };
            misspelt.consider(candidate.as_str(), letters.as_mut(), &mut best);
            if let Some((d, _)) = best {
                // A candidate whose half of the letters held alone (rounded
                // up) is `d` or more cannot beat it: more than `2d - 2`.
                apart = apart.min((2 * d).saturating_sub(2));
            }
        }
    }
    (best.map(|(_, c)| c), equal)
}

/// Whether `bits` has more than `most` bits set; quick for a few.
fn more_bits_than(bits: u64, most: usize) -> bool {
    if most >= 4 {
        return bits.count_ones() as usize > most;
    }
    let mut left = bits;
    for _ in 0..=most {
        left &= left.wrapping_sub(1);
    }
    left != 0
}

/// A name's length in characters.
fn chars_of(name: &str) -> u32 {
    u32::try_from(name.chars().count()).unwrap_or(u32::MAX)
}

/// The letters an ASCII name holds, one bit each, a letter's capital and
/// small on the same bit (digits and small letters on bits of their own,
/// other characters sharing the rest); [`NOT_ASCII`] for other names. Any
/// letters on one bit only make the bound lower.
fn letters_of(name: &str) -> u64 {
    let mut bits = 0u64;
    for byte in name.bytes() {
        let bit = match byte.to_ascii_lowercase() {
            b'0'..=b'9' => byte - b'0',
            b'a'..=b'z' => 10 + byte.to_ascii_lowercase() - b'a',
            0x80.. => return NOT_ASCII,
            other => 36 + other % 27,
        };
        bits |= 1 << bit;
    }
    bits
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::Index;
    use crate::suggest::Budget;

    fn word() -> impl Strategy<Value = String> {
        proptest::string::string_regex("[abAB01tx_é-]{0,9}").expect("a pattern")
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::generate::fuzz_cases(1_000)))]

        /// A search through the index finds what a search over the names
        /// finds, and leaves as much of the budget.
        #[test]
        fn the_index_finds_what_the_names_find(
            name in word(),
            candidates in proptest::collection::vec(word(), 0..16),
            budget in prop_oneof![0usize..400, Just(usize::MAX)],
        ) {
            let index = Index::new(candidates.iter().map(|c| c.as_str().into()));
            let mut over_names = Budget { left: budget };
            let expected = over_names.closest(&name, candidates.iter().map(String::as_str));
            let mut through_index = Budget { left: budget };
            let found = through_index.closest_in(&name, &index);
            prop_assert_eq!(found, expected);
            prop_assert_eq!(through_index.left(), over_names.left());
        }

        /// After names are renamed, searches in turn through the index
        /// (chunks of 4 names, shared with the index before the renames)
        /// find what searches over the renamed names find, one budget
        /// spent by all.
        #[test]
        fn a_renamed_index_spends_one_budget_as_the_names_do(
            names in proptest::collection::vec(word(), 1..4),
            mut candidates in proptest::collection::vec(word(), 0..24),
            renames in proptest::collection::vec((0usize..24, word()), 0..4),
            budget in prop_oneof![0usize..1_500, Just(usize::MAX)],
        ) {
            let before = Index::new(candidates.iter().map(|c| c.as_str().into()));
            let mut index = before.clone();
            for (at, new) in renames {
                let renamed = index.rename(at, new.as_str().into());
                prop_assert_eq!(renamed.is_some(), at < candidates.len());
                if let Some(name) = candidates.get_mut(at) {
                    *name = new;
                }
            }
            let mut over_names = Budget { left: budget };
            let mut through_index = Budget { left: budget };
            for name in &names {
                let expected = over_names.closest(name, candidates.iter().map(String::as_str));
                let found = through_index.closest_in(name, &index);
                prop_assert_eq!(found, expected);
                prop_assert_eq!(through_index.left(), over_names.left());
            }
            prop_assert_eq!(before.len(), index.len());
        }
    }

    #[test]
    fn long_names_are_counted_and_found_as_over_the_names() {
        let long = "release_".repeat(9);
        let typo = long.replacen('l', "k", 1);
        let names = [long.as_str(), "release", typo.as_str(), "x"];
        let index = Index::new(names.map(Into::into));
        for name in [typo.as_str(), &long[1..], "releas"] {
            let mut over_names = Budget::default();
            let expected = over_names.closest(name, names);
            let mut through_index = Budget::default();
            assert_eq!(through_index.closest_in(name, &index), expected);
            assert_eq!(through_index.left(), over_names.left());
        }
        assert_eq!(
            Budget::default().closest_in(&long[1..], &index),
            Some(long.as_str())
        );
    }

    #[test]
    fn a_renamed_name_is_found_under_its_new_name() {
        let mut index = Index::new(["browser", "writer"].map(Into::into));
        assert_eq!(index.rename(1, "strategist".into()), Some(()));
        assert_eq!(index.rename(2, "x".into()), None);
        let mut budget = Budget::default();
        assert_eq!(budget.closest_in("strategsit", &index), Some("strategist"));
        assert_eq!(budget.closest_in("writr", &index), None);
        assert_eq!(budget.closest_in("browsr", &index), Some("browser"));
    }
}
