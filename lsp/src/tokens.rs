//! Semantic tokens answered whole or as the change since the client's last
//! answer (`textDocument/semanticTokens/full/delta`).
//!
//! An analysis converts the file's tokens once, when first asked
//! ([`encoded`]).
//! Each answer is given a result id and the tokens it sent are kept (one
//! set per document, shared with the analysis that made them); a delta
//! request naming that id is answered with the one edit that turns those
//! tokens into the current ones: the tokens before the first that differs
//! and after the last that differs are the same (the encoding is relative,
//! so an edit inside one item changes only the tokens around it). A request
//! naming any other id is answered whole.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tower_lsp_server::ls_types::{SemanticToken, SemanticTokensEdit, Uri};

use crate::analysis::Analysis;
use crate::convert;

/// The file's semantic tokens as the protocol encodes them: made when an
/// analysis is first asked, then shared by every answer from it.
pub fn encoded(analysis: &Analysis) -> Arc<Vec<SemanticToken>> {
    let tokens = analysis.tokens.get_or_init(|| {
        let tokens = planc::ide::semantic_tokens(&analysis.compilation);
        Arc::new(convert::semantic_tokens(analysis, &tokens))
    });
    Arc::clone(tokens)
}

/// The numbers of the protocol's flat array per token.
const NUMBERS_PER_TOKEN: u32 = 5;

/// Tokens sent, and their result id.
type Answer = (String, Arc<Vec<SemanticToken>>);

/// The tokens last sent for each open document, by result id.
#[derive(Default)]
pub struct Sent {
    documents: Mutex<HashMap<Uri, Answer>>,
    /// The last result id given (ids are never given twice).
    last_id: AtomicU64,
}

impl Sent {
    fn documents(&self) -> std::sync::MutexGuard<'_, HashMap<Uri, Answer>> {
        // Nothing is left half-changed under the lock.
        self.documents
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Keeps `tokens` as the last sent for `uri`; returns their result id.
    pub fn record(&self, uri: &Uri, tokens: Arc<Vec<SemanticToken>>) -> String {
        let id = (self.last_id.fetch_add(1, Ordering::Relaxed) + 1).to_string();
        self.documents().insert(uri.clone(), (id.clone(), tokens));
        id
    }

    /// The tokens last sent for `uri`, if their result id is `id`.
    pub fn sent(&self, uri: &Uri, id: &str) -> Option<Arc<Vec<SemanticToken>>> {
        let documents = self.documents();
        let (sent_id, tokens) = documents.get(uri)?;
        (sent_id == id).then(|| Arc::clone(tokens))
    }

    /// Forgets a closed document's tokens.
    pub fn forget(&self, uri: &Uri) {
        self.documents().remove(uri);
    }
}

/// The edits that turn `old` into `new`: none if they are the same, else
/// one, replacing the tokens from the first that differs to the last.
pub fn edits(old: &[SemanticToken], new: &[SemanticToken]) -> Vec<SemanticTokensEdit> {
    let same_start = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let (old_rest, new_rest) = (&old[same_start..], &new[same_start..]);
    let same_end = old_rest
        .iter()
        .rev()
        .zip(new_rest.iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let deleted = old_rest.len() - same_end;
    let inserted = &new_rest[..new_rest.len() - same_end];
    if deleted == 0 && inserted.is_empty() {
        return Vec::new();
    }
    let numbers = |tokens: usize| {
        u32::try_from(tokens).unwrap_or(u32::MAX / NUMBERS_PER_TOKEN) * NUMBERS_PER_TOKEN
    };
    vec![SemanticTokensEdit {
        start: numbers(same_start),
        delete_count: numbers(deleted),
        data: Some(inserted.to_vec()),
    }]
}
