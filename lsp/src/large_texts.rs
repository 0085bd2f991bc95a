//! Large document texts handed to the server beside tower-lsp-server's
//! reader, not through it.
//!
//! tower-lsp-server reads the client's messages into one buffer that grows
//! to hold the largest message whole and is never shrunk: after the
//! `didOpen` of a 100,000-task plan (an 8.6 MB message) it held a 16 MiB
//! buffer for the server's life, half of it resident. So the framing layer
//! ([`crate::framing`]) takes each large text out of a `didOpen` or
//! `didChange` ([`take_out`]) and forwards the message with a placeholder in
//! the text's place; the handler puts the text back ([`put_back`]). The
//! message the reader sees is then a few hundred bytes, and the text is
//! decoded once, by the framing layer, instead of twice.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

use serde_json::Value;
use tower_lsp_server::ls_types::{DidChangeTextDocumentParams, DidOpenTextDocumentParams};

/// The least length of a message whose texts are taken out: smaller ones
/// grow the reader's buffer by little.
pub const LARGE: usize = 64 * 1024;

/// The last placeholder's number.
static LAST: AtomicU64 = AtomicU64::new(0);

/// Each text taken out and not yet put back, by its placeholder.
fn taken() -> MutexGuard<'static, HashMap<String, String>> {
    static TEXTS: OnceLock<Mutex<HashMap<String, String>>> = OnceLock::new();
    TEXTS
        .get_or_init(|| Mutex::new(HashMap::new()))
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// What every placeholder starts with.
fn prefix() -> &'static str {
    static PREFIX: OnceLock<String> = OnceLock::new();
    PREFIX.get_or_init(|| crate::raw_answers::unique_word("text"))
}

/// The message `body` (a checked JSON-RPC message) with the texts of
/// [`LARGE`] bytes or more of a `didOpen` (the document's) or a
/// `didChange` (each change's) replaced by placeholders, or `None` if it is
/// smaller, another message or holds no such text.
pub fn take_out(body: &[u8]) -> Option<Vec<u8>> {
    if body.len() < LARGE {
        return None;
    }
    let mut message: Value = serde_json::from_slice(body).ok()?;
    let opening = match message.get("method")?.as_str()? {
        "textDocument/didOpen" => true,
        "textDocument/didChange" => false,
        _ => return None,
    };
    let params = message.get_mut("params")?;
    let texts: Vec<&mut Value> = match opening {
        true => params
            .get_mut("textDocument")
            .and_then(|document| document.get_mut("text"))
            .into_iter()
            .collect(),
        false => params
            .get_mut("contentChanges")
            .and_then(Value::as_array_mut)?
            .iter_mut()
            .filter_map(|change| change.get_mut("text"))
            .collect(),
    };
    let mut out = Vec::new();
    for text in texts {
        let Value::String(text) = text else { continue };
        if text.len() < LARGE {
            continue;
        }
        let placeholder = format!("{}{}", prefix(), LAST.fetch_add(1, Ordering::Relaxed));
        let whole = std::mem::replace(text, placeholder.clone());
        out.push((placeholder, whole));
    }
    // Only for a message the handler gets (or the text would never be put
    // back): its parameters, small now, as the server reads them.
    let params = message.get("params")?.clone();
    let read = match opening {
        true => serde_json::from_value::<DidOpenTextDocumentParams>(params).is_ok(),
        false => serde_json::from_value::<DidChangeTextDocumentParams>(params).is_ok(),
    };
    if out.is_empty() || !read {
        return None;
    }
    let body = serde_json::to_vec(&message).ok()?;
    taken().extend(out);
    Some(body)
}

/// The text a placeholder stands for (taken out by [`take_out`]), or
/// `text` itself if it is none.
pub fn put_back(text: String) -> String {
    if !text.starts_with(prefix()) {
        return text;
    }
    taken().remove(&text).unwrap_or(text)
}
