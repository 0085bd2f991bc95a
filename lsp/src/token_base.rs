//! What an analysis makes its semantic tokens from (`tokens.rs` makes
//! them): the token store of an earlier text, and the edit from that text
//! to the analysis's.

use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use planc::ide::TokenStore;
use planc::syntax::Edit;

/// The store of an earlier text's tokens, and the edit from that text to
/// an analysis's (what the analysis makes its tokens from).
#[derive(Clone)]
pub struct Base {
    pub(crate) store: Arc<TokenStore>,
    pub(crate) edit: Edit,
}

/// What the analysis before the next one holds of its tokens.
pub struct Earlier<'a> {
    /// Its text.
    pub text: &'a str,
    /// Its tokens, if it made them.
    pub tokens: &'a OnceLock<Arc<TokenStore>>,
    /// What it would make them from.
    pub token_base: &'a Mutex<Option<Base>>,
}

/// What an analysis of `text` makes its tokens from: the store of the
/// analysis before it, or the one that analysis would have made its own
/// from, if it made none; `None` if no analysis made tokens. `told` is the
/// edit from the earlier text to `text` if the client's changes told it
/// (else the texts are compared).
pub fn base_after(previous: Option<Earlier<'_>>, text: &str, told: Option<Edit>) -> Option<Base> {
    let previous = previous?;
    // Checked and narrowed as the compile does (`Edit::narrowed`).
    let edit = || {
        told.and_then(|edit| edit.narrowed(previous.text, text))
            .unwrap_or_else(|| Edit::between(previous.text, text))
    };
    if let Some(store) = previous.tokens.get() {
        return Some(Base {
            store: Arc::clone(store),
            edit: edit(),
        });
    }
    let earlier = lock(previous.token_base);
    let earlier = earlier.as_ref()?;
    Some(Base {
        store: Arc::clone(&earlier.store),
        edit: composed(earlier.edit, edit()),
    })
}

/// One edit that does what `first` then `second` do: from the first byte
/// either changes to the last.
fn composed(first: Edit, second: Edit) -> Edit {
    if first.is_empty() {
        return second;
    }
    if second.is_empty() {
        return first;
    }
    // In the text between them, `first` made `start..new_end` and `second`
    // changes `start..old_end`: what either touched runs to `end`.
    let end = first.new_end.max(second.old_end);
    Edit {
        start: first.start.min(second.start),
        old_end: end - first.new_end + first.old_end,
        new_end: end - second.old_end + second.new_end,
    }
}

/// `mutex`'s value: nothing is left half-changed under its lock.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_edits_composed_change_what_either_changed() {
        let texts = [
            "abcdefghij",
            "abXYcdefghij",
            "abXYcdefgj",
            "abXYcdefgjZ",
            "QabXYcdefgjZ",
        ];
        let mut edit = Edit::between(texts[0], texts[0]);
        for pair in texts.windows(2) {
            edit = composed(edit, Edit::between(pair[0], pair[1]));
            let last = pair[1];
            // Outside the composed edit the first and the last text agree.
            assert_eq!(texts[0][..edit.start], last[..edit.start]);
            assert_eq!(texts[0][edit.old_end..], last[edit.new_end..]);
        }
        assert_eq!((edit.start, edit.old_end, edit.new_end), (0, 10, 12));
    }
}
