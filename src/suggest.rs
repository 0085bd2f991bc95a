//! "Did you mean …?": the closest known name to a misspelt one.

mod index;

pub use index::Index;

/// The candidate closest to `name`, if one is close enough to be a likely typo.
///
/// Closeness is the Damerau–Levenshtein distance (a swap of two letters counts
/// once); a candidate qualifies within a third of the longer name's length,
/// and always within one edit. Ties go to the first candidate.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let mut unlimited = usize::MAX;
    closest_within(name, candidates.into_iter().map(Some), &mut unlimited)
}

/// How much work the "did you mean" searches of one check may do together,
/// in [`Budget`] units: more than a plan written by hand needs (a hundred
/// misspellings among 1,000 names), and a bound (about a tenth of a second)
/// on a generated file with 100,000 misspellings among 100,000 names, which
/// would otherwise compare every pair.
pub const SUGGESTION_BUDGET: usize = 4_000_000;

/// What is left of [`SUGGESTION_BUDGET`] for the searches of one check.
///
/// A search costs one unit per candidate looked at, and the product of the
/// two names' lengths per candidate compared letter by letter. Once spent,
/// searches find nothing: the diagnostics stay, without "did you mean". The
/// searches are made in a fixed order, so what is found does not depend on
/// how the check is split over threads.
#[derive(Clone, Debug)]
pub struct Budget {
    left: usize,
}

impl Default for Budget {
    fn default() -> Budget {
        Budget {
            left: SUGGESTION_BUDGET,
        }
    }
}

impl Budget {
    /// Like [`closest`], within what is left of the budget: `None` when the
    /// search would need more.
    pub fn closest<'a>(
        &mut self,
        name: &str,
        candidates: impl IntoIterator<Item = &'a str>,
    ) -> Option<&'a str> {
        self.closest_among(name, candidates.into_iter().map(Some))
    }

    /// What is left.
    pub fn left(&self) -> usize {
        self.left
    }

    /// Like [`closest`](Self::closest) among the `Some` candidates; a `None`
    /// (a name of another scope, say) costs a unit to look at.
    pub fn closest_among<'a>(
        &mut self,
        name: &str,
        candidates: impl IntoIterator<Item = Option<&'a str>>,
    ) -> Option<&'a str> {
        closest_within(name, candidates, &mut self.left)
    }
}

/// [`closest`], spending `budget`; `None` when it runs out.
fn closest_within<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = Option<&'a str>>,
    budget: &mut usize,
) -> Option<&'a str> {
    let a = name.chars().count();
    let lower = name.to_lowercase();
    let mut letters = Letters::of(name);
    let mut best: Option<(usize, &str)> = None;
    for candidate in candidates {
        if *budget == 0 {
            return None;
        }
        *budget -= 1;
        let Some(candidate) = candidate else {
            continue;
        };
        if candidate == name {
            continue;
        }
        // The distance is at least the difference in length: skip the
        // quadratic comparison when it cannot qualify (a 10 MB word, say).
        // A candidate of `2a + 3` letters or more is too long by that rule,
        // whatever its length: counting stops there.
        let too_long = 2 * a + 3;
        let b = candidate.chars().take(too_long).count();
        if b == too_long {
            continue;
        }
        let allowed = allowed(a, b);
        if a.abs_diff(b) > allowed {
            continue;
        }
        let cost = a.saturating_mul(b);
        if *budget < cost {
            *budget = 0;
            return None;
        }
        *budget -= cost;
        let misspelt = Misspelt {
            name,
            lower: &lower,
            allowed,
        };
        misspelt.consider(candidate, letters.as_mut(), &mut best);
    }
    best.map(|(_, c)| c)
}

/// How far a name of `a` characters and one of `b` may be apart for one to
/// be a typo of the other: a third of the longer one's length, at least
/// one edit, but none for one- and two-letter names (too short for a typo
/// to be told apart from a different name).
fn allowed(a: usize, b: usize) -> usize {
    let longest = a.max(b);
    if longest < 3 {
        0
    } else {
        (longest / 3).max(1)
    }
}

/// A misspelt name, compared with one candidate whose budget is spent.
struct Misspelt<'n> {
    name: &'n str,
    /// The name in lower case.
    lower: &'n str,
    /// The distance within which the candidate qualifies.
    allowed: usize,
}

impl Misspelt<'_> {
    /// Makes `candidate` the best so far if it qualifies and is closer than
    /// `best` (ties go to the first). `letters` are the name's, counted.
    fn consider<'a>(
        &self,
        candidate: &'a str,
        letters: Option<&mut Letters>,
        best: &mut Option<(usize, &'a str)>,
    ) {
        let (name, allowed) = (self.name, self.allowed);
        // The letters one name has more of than the other bound the
        // distance from below: a candidate that cannot qualify, or cannot
        // beat the best so far, is not compared letter by letter. The
        // budget is spent the same either way, so what is found is too.
        if let Some(least) = letters.and_then(|l| l.least_distance(candidate)) {
            let beaten = best.is_some_and(|(d, _)| least >= d);
            if beaten || (least > allowed && !name.eq_ignore_ascii_case(candidate)) {
                return;
            }
        }
        let distance = strsim::damerau_levenshtein(name, candidate);
        let case_only = distance > allowed && self.lower == candidate.to_lowercase();
        if (distance <= allowed || case_only) && best.is_none_or(|(d, _)| distance < d) {
            *best = Some((distance, candidate));
        }
    }
}

/// The letters of an ASCII name, counted: what bounds its distance to
/// another name from below without comparing them letter by letter.
struct Letters {
    counts: [i32; 128],
    len: usize,
}

impl Letters {
    /// `None` for a name that is not ASCII.
    fn of(name: &str) -> Option<Letters> {
        if !name.is_ascii() {
            return None;
        }
        let mut counts = [0; 128];
        for byte in name.bytes() {
            counts[usize::from(byte)] += 1;
        }
        Some(Letters {
            counts,
            len: name.len(),
        })
    }

    /// A lower bound on the Damerau–Levenshtein distance of the name to an
    /// ASCII `other` (`None` for others): the number of letters, counted
    /// with repeats, that one has more of than the other. An insertion, a
    /// deletion or a substitution changes that number by at most one, a
    /// transposition not at all. (For ASCII names, being equal but for
    /// case is being equal ignoring ASCII case.)
    fn least_distance(&mut self, other: &str) -> Option<usize> {
        if !other.is_ascii() {
            return None;
        }
        // The letters `other` has more of, counted as they are taken away.
        let mut fewer = 0;
        for byte in other.bytes() {
            let count = &mut self.counts[usize::from(byte)];
            *count -= 1;
            if *count < 0 {
                fewer += 1;
            }
        }
        for byte in other.bytes() {
            self.counts[usize::from(byte)] += 1;
        }
        // The counts differ by the lengths in all: the name has `more`.
        let more = (self.len + fewer).checked_sub(other.len())?;
        Some(more.max(fewer))
    }
}

/// `text` cut to at most `max` characters, with `…` where it was cut: for
/// quoting user text in messages.
pub fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::{closest, closest_within};

    /// [`closest_within`] as it was before the lower bound: every candidate
    /// that may qualify is compared letter by letter.
    fn reference<'a>(
        name: &str,
        candidates: &'a [Option<String>],
        budget: &mut usize,
    ) -> Option<&'a str> {
        let a = name.chars().count();
        let lower = name.to_lowercase();
        let mut best: Option<(usize, &str)> = None;
        for candidate in candidates {
            if *budget == 0 {
                return None;
            }
            *budget -= 1;
            let Some(candidate) = candidate.as_deref() else {
                continue;
            };
            if candidate == name {
                continue;
            }
            let too_long = 2 * a + 3;
            let b = candidate.chars().take(too_long).count();
            if b == too_long {
                continue;
            }
            let longest = a.max(b);
            let allowed = if longest < 3 { 0 } else { (longest / 3).max(1) };
            if a.abs_diff(b) > allowed {
                continue;
            }
            let cost = a.saturating_mul(b);
            if *budget < cost {
                *budget = 0;
                return None;
            }
            *budget -= cost;
            let distance = strsim::damerau_levenshtein(name, candidate);
            let case_only = distance > allowed && lower == candidate.to_lowercase();
            if (distance <= allowed || case_only) && best.is_none_or(|(d, _)| distance < d) {
                best = Some((distance, candidate));
            }
        }
        best.map(|(_, c)| c)
    }

    fn word() -> impl Strategy<Value = String> {
        proptest::string::string_regex("[abAB01tx_é]{0,9}").expect("a pattern")
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::generate::fuzz_cases(2_000)))]

        /// The lower bound skips comparisons, never changes what is found
        /// or what is left of the budget.
        #[test]
        fn the_lower_bound_finds_what_comparing_all_finds(
            name in word(),
            candidates in proptest::collection::vec(proptest::option::weighted(0.9, word()), 0..16),
            budget in prop_oneof![0usize..400, Just(usize::MAX)],
        ) {
            let mut expected_left = budget;
            let expected = reference(&name, &candidates, &mut expected_left);
            let mut left = budget;
            let found = closest_within(&name, candidates.iter().map(Option::as_deref), &mut left);
            prop_assert_eq!(found, expected);
            prop_assert_eq!(left, expected_left);
        }
    }

    #[test]
    fn finds_typos_and_ignores_strangers() {
        let names = ["browser", "strategist", "writer"];
        assert_eq!(closest("browsr", names), Some("browser"));
        assert_eq!(closest("strategsit", names), Some("strategist"));
        assert_eq!(closest("Writer", names), Some("writer"));
        assert_eq!(closest("database", names), None);
        assert_eq!(closest("b", ["p"]), None);
        assert_eq!(closest("ab", ["Ab"]), Some("Ab"));
    }
}
