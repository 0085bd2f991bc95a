//! Whether a message body is one tower-lsp-server can take, and the
//! JSON-RPC error that answers it if not.
//!
//! tower-lsp-server answers a body it cannot decode and then stops reading
//! (its framed reader ends at the first error), so one malformed message
//! would end the session. The framing layer ([`crate::framing`]) checks
//! every body here first and forwards only those that pass.

use serde::Deserialize;
use serde_json::{json, Value};
use tower_lsp_server::jsonrpc::{Request, Response};

/// How deeply arrays and objects may nest in a message. Below serde_json's
/// own limit (128), which tower-lsp-server would hit as a decode error;
/// protocol messages nest a few levels.
pub const MAX_NESTING: usize = 100;

/// JSON-RPC's "Parse error": the body is not JSON.
const PARSE_ERROR: i64 = -32700;
/// JSON-RPC's "Invalid Request": JSON, but not a message the server takes.
const INVALID_REQUEST: i64 = -32600;

/// Why a message is refused: the JSON-RPC error that answers it.
#[derive(Debug)]
pub struct Refusal {
    code: i64,
    message: String,
    /// The message's id when it could be read, `null` if not.
    id: Value,
}

impl Refusal {
    /// A "Parse error" for the message `id` (usually unknown: `null`).
    pub fn parse_error(detail: &str, id: Value) -> Refusal {
        Refusal {
            code: PARSE_ERROR,
            message: format!("Parse error: {detail}"),
            id,
        }
    }

    /// An "Invalid Request" for the message `id`.
    pub fn invalid_request(detail: &str, id: Value) -> Refusal {
        Refusal {
            code: INVALID_REQUEST,
            message: format!("Invalid Request: {detail}"),
            id,
        }
    }

    /// The error response, framed with its `Content-Length` header.
    pub fn to_frame(&self) -> Vec<u8> {
        let body = json!({
            "jsonrpc": "2.0",
            "error": { "code": self.code, "message": self.message },
            "id": self.id,
        })
        .to_string();
        format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
    }
}

/// Checks that `body` is one JSON-RPC 2.0 message the server can take:
/// UTF-8, JSON, nested at most [`MAX_NESTING`] deep, an object (not a
/// batch) with a number, string or null id, and a request, notification or
/// response as tower-lsp-server reads them.
///
/// A lone UTF-16 surrogate escape (`"\udbff"`, which JavaScript's
/// `JSON.stringify` writes for a string holding one) is replaced in place
/// by `\ufffd`, the replacement character: serde_json refuses lone
/// surrogates, and both are one UTF-16 unit, so a document's positions stay
/// the client's.
pub fn check(body: &mut [u8]) -> Result<(), Refusal> {
    if std::str::from_utf8(body).is_err() {
        return Err(Refusal::parse_error(
            "the message is not valid UTF-8",
            Value::Null,
        ));
    }
    if replace_lone_surrogates_and_measure_nesting(body) > MAX_NESTING {
        let detail = format!("arrays and objects nest more than {MAX_NESTING} deep");
        return Err(Refusal::invalid_request(&detail, top_level_id(body)));
    }
    if is_message(body) {
        return Ok(());
    }
    Err(why_not_a_message(body))
}

/// Whether `body` (UTF-8, nested within bounds) is a JSON object that
/// tower-lsp-server decodes as a request, a notification or a response: the
/// common case, decided with one parse and no copy of the message.
fn is_message(body: &[u8]) -> bool {
    let object = body.trim_ascii_start().first() == Some(&b'{');
    object
        && (serde_json::from_slice::<Request>(body).is_ok()
            || serde_json::from_slice::<Response>(body).is_ok())
}

/// The error answering a `body` that is not a message ([`is_message`]).
fn why_not_a_message(body: &[u8]) -> Refusal {
    let value: Value = match serde_json::from_slice(body) {
        Ok(value) => value,
        Err(e) => return Refusal::parse_error(&e.to_string(), top_level_id(body)),
    };
    let Some(object) = value.as_object() else {
        let detail = match value {
            Value::Array(_) => "a batch (an array of messages) is not supported",
            _ => "a message is a JSON object",
        };
        return Refusal::invalid_request(detail, Value::Null);
    };
    let id = match object.get("id").map(valid_id) {
        None => Value::Null,
        Some(Some(id)) => id,
        Some(None) => {
            let detail = "the id is not a number, a string or null";
            return Refusal::invalid_request(detail, Value::Null);
        }
    };
    let detail = match serde_json::from_value::<Request>(value) {
        Err(error) => format!("not a JSON-RPC 2.0 request, notification or response ({error})"),
        // Not reached: `is_message` took it.
        Ok(_) => "not a JSON-RPC 2.0 message".to_owned(),
    };
    Refusal::invalid_request(&detail, id)
}

/// The id as tower-lsp-server takes it (a 64-bit integer, a string or
/// null), or none.
fn valid_id(id: &Value) -> Option<Value> {
    match id {
        Value::Null | Value::String(_) => Some(id.clone()),
        Value::Number(n) if n.as_i64().is_some() => Some(id.clone()),
        _ => None,
    }
}

/// The top-level `id` of a body, read without building the rest (serde_json
/// skips ignored values without recursion, so deep nesting elsewhere does
/// not stop it); `null` if it cannot be read or is not a valid id.
fn top_level_id(body: &[u8]) -> Value {
    #[derive(Deserialize)]
    struct IdOnly {
        #[serde(default)]
        id: Option<Value>,
    }
    serde_json::from_slice::<IdOnly>(body)
        .ok()
        .and_then(|message| message.id)
        .and_then(|id| valid_id(&id))
        .unwrap_or(Value::Null)
}

/// Replaces each lone surrogate escape in the strings of `body` by
/// `\ufffd` (same length, so in place) and returns how deeply arrays and
/// objects nest. One pass, no recursion; a body that is not JSON gets a
/// meaningless depth and is refused by the parser afterwards.
fn replace_lone_surrogates_and_measure_nesting(body: &mut [u8]) -> usize {
    let (mut depth, mut deepest, mut in_string, mut i) = (0usize, 0usize, false, 0usize);
    while i < body.len() {
        match (in_string, body[i]) {
            (true, b'"') => in_string = false,
            (true, b'\\') => {
                i += escape_length(body, i);
                continue;
            }
            (false, b'"') => in_string = true,
            (false, b'[' | b'{') => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            (false, b']' | b'}') => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    deepest
}

/// The length of the escape at `body[at]` (a backslash), a surrogate pair
/// counting as one; a lone surrogate escape is replaced by `\ufffd` first.
fn escape_length(body: &mut [u8], at: usize) -> usize {
    let Some(unit) = unicode_escape(body, at) else {
        return 2;
    };
    let high = (0xD800..0xDC00).contains(&unit);
    let low = (0xDC00..0xE000).contains(&unit);
    if high && unicode_escape(body, at + 6).is_some_and(|next| (0xDC00..0xE000).contains(&next)) {
        return 12;
    }
    if high || low {
        body[at..at + 6].copy_from_slice(b"\\ufffd");
    }
    6
}

/// The code unit of a `\uXXXX` escape at `body[at]`, if there is one.
fn unicode_escape(body: &[u8], at: usize) -> Option<u32> {
    let escape = body.get(at..at + 6)?;
    if escape[0] != b'\\' || escape[1] != b'u' {
        return None;
    }
    let hex = std::str::from_utf8(&escape[2..]).ok()?;
    u32::from_str_radix(hex, 16).ok()
}
