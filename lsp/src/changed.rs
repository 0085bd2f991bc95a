//! Where a document's text changed since the text its last compile was
//! given: the union of the ranges its `didChange` notifications replaced,
//! passed to the compile so that it need not compare the two texts to find
//! the edit (`planc::Compilation::recompile_edited`).

use planc::syntax::Edit;

/// How the text changed since the last compile's text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Changed {
    /// Not at all.
    #[default]
    Nothing,
    /// Only inside this edit of the last compile's text.
    Inside(Edit),
    /// Replaced whole (a change without a range): the compile compares.
    Unknown,
}

impl Changed {
    /// After one more change: `edit`, an edit of the text as it is now, or
    /// `None` for a text replaced whole.
    pub(crate) fn then(self, edit: Option<Edit>) -> Changed {
        match (self, edit) {
            (Changed::Unknown, _) | (_, None) => Changed::Unknown,
            (Changed::Nothing, Some(edit)) => Changed::Inside(edit),
            (Changed::Inside(before), Some(edit)) => Changed::Inside(before.then(edit)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_in_turn_make_one_edit_until_a_text_is_replaced_whole() {
        let edit = |start, old_end, new_end| Edit {
            start,
            old_end,
            new_end,
        };
        // "abcdef": "x" typed after "ab", then "cd" deleted.
        let typed = Changed::Nothing.then(Some(edit(2, 2, 3)));
        assert_eq!(typed, Changed::Inside(edit(2, 2, 3)));
        let deleted = typed.then(Some(edit(3, 5, 3)));
        // "abcdef" → "abxef": bytes 2..4 became 2..3.
        assert_eq!(deleted, Changed::Inside(edit(2, 4, 3)));
        assert_eq!(deleted.then(None), Changed::Unknown);
        assert_eq!(Changed::Unknown.then(Some(edit(0, 0, 1))), Changed::Unknown);
    }
}
