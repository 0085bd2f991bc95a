//! An edit told by whoever changed the text (an editor's `didChange` says
//! which range it replaced), instead of found by comparing the two texts
//! ([`Edit::between`], which reads both texts whole: 8.6 MB at 100,000
//! tasks, at every keystroke).

use super::Edit;

impl Edit {
    /// This edit of `old` into `new`, checked against the texts' lengths
    /// and character boundaries, and narrowed to the bytes that differ
    /// inside it (an editor may replace a whole line to change one letter):
    /// `None` if it cannot be an edit of `old` into `new`. That the text
    /// outside it is the same is the caller's word (checked in debug
    /// builds).
    pub fn narrowed(self, old: &str, new: &str) -> Option<Edit> {
        let Edit {
            mut start,
            mut old_end,
            mut new_end,
        } = self;
        let fits = start <= old_end
            && start <= new_end
            && old_end <= old.len()
            && new_end <= new.len()
            && old.len() - old_end == new.len() - new_end
            && [start, old_end].iter().all(|&i| old.is_char_boundary(i))
            && [start, new_end].iter().all(|&i| new.is_char_boundary(i));
        if !fits {
            return None;
        }
        debug_assert!(
            old.as_bytes()[..start] == new.as_bytes()[..start]
                && old.as_bytes()[old_end..] == new.as_bytes()[new_end..],
            "an edit that changes text outside its range"
        );
        let (a, b) = (old.as_bytes(), new.as_bytes());
        while start < old_end && start < new_end && a[start] == b[start] {
            start += 1;
        }
        while old_end > start && new_end > start && a[old_end - 1] == b[new_end - 1] {
            old_end -= 1;
            new_end -= 1;
        }
        // On character boundaries, as `between` gives them.
        while !old.is_char_boundary(start) {
            start -= 1;
        }
        while !old.is_char_boundary(old_end) {
            old_end += 1;
            new_end += 1;
        }
        Some(Edit {
            start,
            old_end,
            new_end,
        })
    }

    /// This edit followed by `next` (an edit of the text this one made), as
    /// one edit of the text before both: from the first byte either
    /// changed to the last.
    pub fn then(self, next: Edit) -> Edit {
        // The text after `at` (a byte of the middle text, after both
        // edits' ends) is the same in all three texts.
        let at = self.new_end.max(next.old_end);
        Edit {
            start: self.start.min(next.start),
            old_end: at - self.new_end + self.old_end,
            new_end: at - next.old_end + next.new_end,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Edit;
    use proptest::prelude::*;

    /// A random edit of `text` (on character boundaries) and the text it
    /// makes.
    fn edit_of(text: &str, (a, b): (usize, usize), inserted: &str) -> (Edit, String) {
        let mut ends = [a % (text.len() + 1), b % (text.len() + 1)];
        ends.sort_unstable();
        let [mut start, mut end] = ends;
        while !text.is_char_boundary(start) {
            start -= 1;
        }
        while !text.is_char_boundary(end) {
            end += 1;
        }
        let new = format!("{}{inserted}{}", &text[..start], &text[end..]);
        let edit = Edit {
            start,
            old_end: end,
            new_end: start + inserted.len(),
        };
        (edit, new)
    }

    /// Whether `edit` turns `old` into `new`.
    fn holds(edit: Edit, old: &str, new: &str) -> bool {
        old[..edit.start] == new[..edit.start] && old[edit.old_end..] == new[edit.new_end..]
    }

    proptest! {
        #[test]
        fn a_told_edit_narrowed_holds_and_is_no_wider_than_told(
            text in "[ab\u{e9}\n]{0,24}",
            ends in (0usize..32, 0usize..32),
            inserted in "[ab\u{e9}]{0,4}",
        ) {
            let (told, new) = edit_of(&text, ends, &inserted);
            let narrowed = told.narrowed(&text, &new).expect("a told edit fits");
            prop_assert!(holds(narrowed, &text, &new));
            prop_assert!(narrowed.start >= told.start && narrowed.old_end <= told.old_end);
            // Nothing changed: an empty edit, as `between` gives.
            if text == new {
                prop_assert!(narrowed.is_empty() || Edit::between(&text, &new) == narrowed);
            }
        }

        #[test]
        fn two_edits_in_turn_are_one_edit_of_the_first_text(
            text in "[ab\u{e9}\n]{0,24}",
            first in (0usize..32, 0usize..32),
            second in (0usize..32, 0usize..32),
            inserted in ("[ab\u{e9}]{0,4}", "[ab]{0,4}"),
        ) {
            let (one, middle) = edit_of(&text, first, &inserted.0);
            let (two, last) = edit_of(&middle, second, &inserted.1);
            let both = one.then(two);
            prop_assert!(holds(both, &text, &last));
            prop_assert!(both.narrowed(&text, &last).is_some());
        }
    }

    #[test]
    fn an_edit_that_does_not_fit_the_texts_is_refused() {
        let edit = Edit {
            start: 1,
            old_end: 2,
            new_end: 4,
        };
        // The new text is one byte short of what the edit says.
        assert_eq!(edit.narrowed("abc", "axxc"), None);
        assert_eq!(
            edit.narrowed("abc", "axxxc"),
            Some(Edit {
                start: 1,
                old_end: 2,
                new_end: 4
            })
        );
        // Inside a character.
        let inside = Edit {
            start: 1,
            old_end: 1,
            new_end: 2,
        };
        assert_eq!(inside.narrowed("\u{e9}", "\u{e9}x"), None);
    }
}
