//! Semantic tokens answered whole, for a range, or as the change since the
//! client's last answer (`textDocument/semanticTokens/full/delta`).
//!
//! An analysis keeps its file's tokens per tile ([`planc::ide::TokenStore`]:
//! a tile per item of a plan, per task of a step, a step's tiles kept as one
//! block), made when first asked
//! for ([`store`]) from the tokens of the last analysis that made them: only
//! the tiles the edits since touched, and those holding names whose
//! resolution changed, are made again; the others are shared.
//! Each answer is given a result id and the store it was encoded from is
//! kept (one per document); a delta request naming that id is answered
//! with the one edit from the first tile that differs to the last (tiles
//! shared by both stores hold the same tokens). A request naming any other
//! id is answered whole.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use planc::ide::{EncodedToken, TokenStore, TokensDelta};
use tower_lsp_server::ls_types::{SemanticToken, SemanticTokensEdit, Uri};

use crate::analysis::Analysis;
use crate::convert;
use crate::token_base::lock;

/// The analysis's tokens, made when first asked for, then kept.
pub fn store(analysis: &Analysis) -> Arc<TokenStore> {
    let store = analysis.tokens.get_or_init(|| {
        let base = lock(&analysis.token_base).take();
        let base = base.as_ref().map(|b| (&*b.store, b.edit));
        Arc::new(TokenStore::build(
            &analysis.compilation,
            &analysis.lines,
            base,
        ))
    });
    Arc::clone(store)
}

/// The file's tokens, whole.
pub fn whole(analysis: &Analysis, store: &TokenStore) -> Vec<SemanticToken> {
    protocol(store.encode(analysis.text(), &analysis.lines))
}

/// The file's tokens, whole, as the JSON array of the protocol's numbers.
pub fn whole_json(analysis: &Analysis, store: &TokenStore) -> String {
    let tokens = store.encode(analysis.text(), &analysis.lines);
    // Five numbers a token, most of one or two digits.
    let mut json = String::with_capacity(tokens.len() * 12 + 2);
    json.push('[');
    for (i, t) in tokens.iter().enumerate() {
        let numbers = [
            t.delta_line,
            t.delta_start,
            t.length,
            convert::token_type(t.kind),
            u32::from(t.definition),
        ];
        for (k, n) in numbers.into_iter().enumerate() {
            if i > 0 || k > 0 {
                json.push(',');
            }
            push_number(&mut json, n);
        }
    }
    json.push(']');
    json
}

/// Writes `n` in decimal.
fn push_number(out: &mut String, mut n: u32) {
    let mut digits = [0u8; 10];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &d in &digits[at..] {
        out.push(char::from(d));
    }
}

/// The tokens of the tiles that overlap the bytes `start..end`: from the
/// analysis's tokens if they are made, else made for those tiles alone (a
/// range asked right after a keystroke does not wait for the whole file's).
pub fn range(analysis: &Analysis, start: usize, end: usize) -> Vec<SemanticToken> {
    let (text, lines) = (analysis.text(), &*analysis.lines);
    let alone = match analysis.tokens.get() {
        Some(_) => None,
        None => TokenStore::of_range(&analysis.compilation, lines, start, end),
    };
    let store = alone.map_or_else(|| store(analysis), Arc::new);
    protocol(store.encode_range(text, lines, start, end))
}

/// The edits that turn the tokens of `old` (sent in an answer) into those
/// of `new`, the analysis's: none if they are the same, else one.
pub fn edits(analysis: &Analysis, old: &TokenStore, new: &TokenStore) -> Vec<SemanticTokensEdit> {
    let Some(TokensDelta {
        start,
        deleted,
        tokens,
    }) = new.delta(old, analysis.text(), &analysis.lines)
    else {
        return Vec::new();
    };
    vec![SemanticTokensEdit {
        start: numbers(start),
        delete_count: numbers(deleted),
        data: Some(protocol(tokens)),
    }]
}

/// The numbers of the protocol's flat array per token.
const NUMBERS_PER_TOKEN: u32 = 5;

/// The place in the protocol's flat array of the `tokens`-th token.
fn numbers(tokens: usize) -> u32 {
    u32::try_from(tokens).unwrap_or(u32::MAX / NUMBERS_PER_TOKEN) * NUMBERS_PER_TOKEN
}

fn protocol(tokens: Vec<EncodedToken>) -> Vec<SemanticToken> {
    tokens
        .into_iter()
        .map(|t| SemanticToken {
            delta_line: t.delta_line,
            delta_start: t.delta_start,
            length: t.length,
            token_type: convert::token_type(t.kind),
            token_modifiers_bitset: u32::from(t.definition),
        })
        .collect()
}

/// The store an answer was encoded from, and its result id.
type Answer = (String, Arc<TokenStore>);

/// The tokens last sent for each open document, by result id.
#[derive(Default)]
pub struct Sent {
    documents: Mutex<HashMap<Uri, Answer>>,
    /// The last result id given (ids are never given twice).
    last_id: AtomicU64,
}

impl Sent {
    /// Keeps `store` as the last sent for `uri`; returns its result id.
    pub fn record(&self, uri: &Uri, store: Arc<TokenStore>) -> String {
        let id = (self.last_id.fetch_add(1, Ordering::Relaxed) + 1).to_string();
        lock(&self.documents).insert(uri.clone(), (id.clone(), store));
        id
    }

    /// The store last sent for `uri`, if its result id is `id`.
    pub fn sent(&self, uri: &Uri, id: &str) -> Option<Arc<TokenStore>> {
        let documents = lock(&self.documents);
        let (sent_id, store) = documents.get(uri)?;
        (sent_id == id).then(|| Arc::clone(store))
    }

    /// Forgets a closed document's tokens.
    pub fn forget(&self, uri: &Uri) {
        lock(&self.documents).remove(uri);
    }
}
