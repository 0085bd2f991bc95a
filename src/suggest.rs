//! "Did you mean …?": the closest known name to a misspelt one.

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
        let longest = a.max(b);
        // One- and two-letter names are too short for a typo to be told apart
        // from a different name.
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
    use super::closest;

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
