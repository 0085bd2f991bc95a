//! Where a document's text changed since the text its last compile was
//! given: the union of the ranges its `didChange` notifications replaced,
//! passed to the compile so that it need not compare the two texts to find
//! the edit (`planc::Compilation::recompile_edited`). The edits compose by
//! `planc::syntax::Edit::then` (its property test is the library's); the
//! protocol test `edits::published_diagnostics_after_an_edit_are_those_of_a_whole_compile`
//! sends every edit taken back in one notification, and a debug build checks
//! each edit told against the texts.

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
