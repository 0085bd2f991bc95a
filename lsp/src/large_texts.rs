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
//! message the reader sees is then a few hundred bytes (the framing layer
//! decodes the large one twice: its check, then this; the reader no longer
//! decodes it).

use serde_json::Value;
use tower_lsp_server::ls_types::{DidChangeTextDocumentParams, DidOpenTextDocumentParams};

use crate::placeholders::Placeholders;

/// The least length of a message whose texts are taken out: smaller ones
/// grow the reader's buffer by little.
pub const LARGE: usize = 64 * 1024;

/// Each text taken out and not yet put back, by its placeholder.
static TAKEN: Placeholders = Placeholders::new("text");

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
    let mut kept = Vec::new();
    for text in texts {
        let Value::String(text) = text else { continue };
        if text.len() < LARGE {
            continue;
        }
        *text = TAKEN.keep(std::mem::take(text));
        kept.push(text.clone());
    }
    // Only for a message the handler gets (or the text would never be put
    // back): its parameters, small now, as the server reads them.
    let read = message.get("params").is_some_and(|params| match opening {
        true => serde_json::from_value::<DidOpenTextDocumentParams>(params.clone()).is_ok(),
        false => serde_json::from_value::<DidChangeTextDocumentParams>(params.clone()).is_ok(),
    });
    let body = read.then(|| serde_json::to_vec(&message).ok()).flatten();
    if body.is_none() || kept.is_empty() {
        let mut texts = TAKEN.texts();
        for placeholder in &kept {
            texts.remove(placeholder);
        }
        return None;
    }
    body
}

/// The text a placeholder stands for (taken out by [`take_out`]), or
/// `text` itself if it is none.
pub fn put_back(text: String) -> String {
    if !text.starts_with(TAKEN.prefix()) {
        return text;
    }
    TAKEN.texts().remove(&text).unwrap_or(text)
}
