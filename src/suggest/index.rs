//! The names a "did you mean" searches among, kept with what bounds a
//! search's work for each: its length, and which letters it holds. A search
//! through the index spends the budget as [`Budget::closest_among`] does
//! over the same names, and finds the same name; it only skips, with one
//! comparison of two words, the candidates whose letters are too far apart
//! to be compared letter by letter.

use smol_str::SmolStr;

use super::{Budget, Letters, Misspelt};

/// The bit of [`Index::letters`] that marks a name that is not ASCII (its
/// letters bound nothing).
const NOT_ASCII: u64 = 1 << 63;

/// Names to search among, in their order (ties go to the first).
#[derive(Clone, Debug, Default)]
pub struct Index {
    names: Vec<SmolStr>,
    /// Each name's length in characters.
    chars: Vec<u32>,
    /// Each name's letters ([`letters_of`]).
    letters: Vec<u64>,
}

impl Index {
    /// The index of `names`, in that order.
    pub fn new(names: impl IntoIterator<Item = SmolStr>) -> Index {
        let mut index = Index::default();
        for name in names {
            index.chars.push(chars_of(&name));
            index.letters.push(letters_of(&name));
            index.names.push(name);
        }
        index
    }

    /// How many names it holds.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether it holds no name.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Gives the name at `at` (in the order of [`Index::new`]) a new text;
    /// `None` if there is no such name.
    pub fn rename(&mut self, at: usize, name: SmolStr) -> Option<()> {
        *self.chars.get_mut(at)? = chars_of(&name);
        *self.letters.get_mut(at)? = letters_of(&name);
        *self.names.get_mut(at)? = name;
        Some(())
    }
}

impl Budget {
    /// [`Budget::closest`] among the names of `index`: the same name found,
    /// the same budget spent.
    pub fn closest_in<'a>(&mut self, name: &str, index: &'a Index) -> Option<&'a str> {
        let budget = &mut self.left;
        let a = name.chars().count();
        let lower = name.to_lowercase();
        let mut letters = Letters::of(name);
        let own = letters_of(name);
        let too_long = 2 * a + 3;
        let mut best: Option<(usize, &str)> = None;
        let entries = index.chars.iter().zip(&index.letters).zip(&index.names);
        for ((&chars, &bits), candidate) in entries {
            if *budget == 0 {
                return None;
            }
            *budget -= 1;
            // Equal names have equal lengths and letters.
            if chars as usize == a && bits == own && candidate.as_str() == name {
                continue;
            }
            let b = (chars as usize).min(too_long);
            if b == too_long {
                continue;
            }
            let allowed = super::allowed(a, b);
            if a.abs_diff(b) > allowed {
                continue;
            }
            let cost = a.saturating_mul(b);
            if *budget < cost {
                *budget = 0;
                return None;
            }
            *budget -= cost;
            // Each letter one name holds and the other does not adds one to
            // what the letter counts bound the distance by (`Letters`), so
            // half the letters held by one alone bound it from below too: a
            // candidate skipped here is one the counts would skip.
            if (own | bits) & NOT_ASCII == 0 {
                let least = ((own ^ bits).count_ones() as usize).div_ceil(2);
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
        }
        best.map(|(_, c)| c)
    }
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
