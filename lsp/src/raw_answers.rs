//! Large answers written as JSON text, not through a `serde_json::Value`.
//!
//! tower-lsp-server turns every handler's answer into a `serde_json::Value`
//! before writing it: for the semantic tokens of a large file (about a
//! million tokens, five numbers each) that is a `Value` per number — some
//! 150 MB made, written and freed, for a 10 MB answer. A handler instead
//! writes the answer's large part as JSON text itself ([`later`]) and
//! answers with a placeholder string in its place; as the server writes
//! the response to standard output, [`substituted`] puts the text in the
//! placeholder's place (and corrects the frame's `Content-Length`).
//!
//! Only where the output passes through [`substituted`] ([`enable`], by
//! `serve_stdio`); elsewhere handlers answer as usual.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::placeholders::Placeholders;

/// Whether the output is written through [`substituted`].
static ENABLED: AtomicBool = AtomicBool::new(false);

/// How many placeholders wait for their text (none: nothing is searched).
static WAITING: AtomicU64 = AtomicU64::new(0);

/// Each waiting placeholder, and the JSON text that takes its place.
static WAITING_TEXTS: Placeholders = Placeholders::new("raw");

/// Lets handlers answer with placeholders: the output passes through
/// [`substituted`].
pub fn enable() {
    ENABLED.store(true, Ordering::SeqCst);
}

/// Whether handlers may answer with placeholders.
pub fn enabled() -> bool {
    ENABLED.load(Ordering::SeqCst)
}

/// What follows a placeholder that stands for a semantic tokens answer's
/// result id and its data: the empty data the handler answered, which the
/// text replaces too.
const EMPTY_DATA: &str = r#","data":[]"#;

/// A placeholder string for an answer: where the response holds it (as a
/// JSON string, quotes included, and the empty data after it if it is a
/// semantic tokens answer's result id: [`EMPTY_DATA`]), `json` is written
/// instead.
pub fn later(json: String) -> String {
    let placeholder = WAITING_TEXTS.keep(json);
    WAITING.fetch_add(1, Ordering::SeqCst);
    placeholder
}

/// `frames` (whole `Content-Length` frames, as the server writes them)
/// with each waiting placeholder replaced by its text, or `None` if they
/// hold none.
pub fn substituted(frames: &[u8]) -> Option<Vec<u8>> {
    if WAITING.load(Ordering::SeqCst) == 0 {
        return None;
    }
    let text = std::str::from_utf8(frames).ok()?;
    text.find(WAITING_TEXTS.prefix())?;
    let mut out = Vec::with_capacity(frames.len());
    let mut rest = text;
    while !rest.is_empty() {
        let Some((header, body, after)) = frame(rest) else {
            // Not frames as expected: written as they are.
            out.extend_from_slice(rest.as_bytes());
            break;
        };
        match replaced(body) {
            Some(body) => {
                out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
                out.extend_from_slice(body.as_bytes());
            }
            None => {
                out.extend_from_slice(header.as_bytes());
                out.extend_from_slice(body.as_bytes());
            }
        }
        rest = after;
    }
    Some(out)
}

/// The first frame of `text`: its header (with the blank line), its body,
/// and what follows.
fn frame(text: &str) -> Option<(&str, &str, &str)> {
    let end = text.find("\r\n\r\n")? + 4;
    let header = &text[..end];
    let length: usize = header
        .lines()
        .find_map(|line| line.strip_prefix("Content-Length:"))?
        .trim()
        .parse()
        .ok()?;
    let body = text.get(end..end + length)?;
    Some((header, body, &text[end + length..]))
}

/// A body with its placeholders (as JSON strings) replaced by their texts,
/// or `None` if it holds none.
fn replaced(body: &str) -> Option<String> {
    let prefix = WAITING_TEXTS.prefix();
    let mut out = String::new();
    let mut rest = body;
    let mut any = false;
    while let Some(at) = rest.find(prefix) {
        let end = rest[at..].find('"').map_or(rest.len(), |e| at + e);
        let placeholder = &rest[at..end];
        let Some(json) = WAITING_TEXTS.texts().remove(placeholder) else {
            out.push_str(&rest[..end]);
            rest = &rest[end..];
            continue;
        };
        WAITING.fetch_sub(1, Ordering::SeqCst);
        any = true;
        // The placeholder stands in quotes: the text takes them too.
        out.push_str(&rest[..at.saturating_sub(1)]);
        out.push_str(&json);
        rest = rest.get(end + 1..).unwrap_or("");
        rest = rest.strip_prefix(EMPTY_DATA).unwrap_or(rest);
    }
    out.push_str(rest);
    any.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_placeholder_is_replaced_and_the_length_corrected() {
        let placeholder = later(r#""7","data":[1,2,3]"#.to_owned());
        let body = format!(
            r#"{{"jsonrpc":"2.0","result":{{"resultId":"{placeholder}","data":[]}},"id":4}}"#
        );
        let other = r#"{"jsonrpc":"2.0","method":"x"}"#;
        let frames = format!(
            "Content-Length: {}\r\n\r\n{other}Content-Length: {}\r\n\r\n{body}",
            other.len(),
            body.len()
        );
        let out = String::from_utf8(substituted(frames.as_bytes()).expect("replaced")).unwrap();
        let want = r#"{"jsonrpc":"2.0","result":{"resultId":"7","data":[1,2,3]},"id":4}"#;
        assert_eq!(
            out,
            format!(
                "Content-Length: {}\r\n\r\n{other}Content-Length: {}\r\n\r\n{want}",
                other.len(),
                want.len()
            )
        );
        // Once only.
        assert_eq!(substituted(frames.as_bytes()), None);
    }
}
