//! "Did you mean …?": the closest known name to a misspelt one.

/// The candidate closest to `name`, if one is close enough to be a likely typo.
///
/// Closeness is the Damerau–Levenshtein distance (a swap of two letters counts
/// once); a candidate qualifies within a third of the longer name's length,
/// and always within one edit. Ties go to the first candidate.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let mut best: Option<(usize, &str)> = None;
    for candidate in candidates {
        if candidate == name {
            continue;
        }
        let (a, b) = (name.chars().count(), candidate.chars().count());
        let longest = a.max(b);
        // One- and two-letter names are too short for a typo to be told apart
        // from a different name.
        let allowed = if longest < 3 { 0 } else { (longest / 3).max(1) };
        // The distance is at least the difference in length: skip the
        // quadratic comparison when it cannot qualify (a 10 MB word, say).
        if a.abs_diff(b) > allowed {
            continue;
        }
        let distance = strsim::damerau_levenshtein(name, candidate);
        let case_only = name.to_lowercase() == candidate.to_lowercase();
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
