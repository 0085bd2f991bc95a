//! The error envelope of every answer `planc serve` refuses (`{"success":
//! false, "error": {code, message, details}}`), and the refusals that axum's
//! extractors and rmcp's `/mcp` answer in plain text (a method a route does
//! not take, a path that is not UTF-8, a missing MCP session…) put in it.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

use super::Shared;

/// The most of a plain-text refusal kept as its message.
const MESSAGE_BYTES: usize = 4096;

/// `response` with a 4xx status and a body that is not JSON, in the
/// envelope (the code from the status: `METHOD_NOT_ALLOWED`,
/// `BAD_REQUEST`, …; the text as the message); any other response as it is.
pub async fn in_envelope(shared: &Shared, response: Response) -> Response {
    let status = response.status();
    if !status.is_client_error() || is_json(&response) {
        return response;
    }
    if status == StatusCode::PAYLOAD_TOO_LARGE {
        return too_large(shared);
    }
    let allow = response.headers().get(axum::http::header::ALLOW).cloned();
    let body = axum::body::to_bytes(response.into_body(), MESSAGE_BYTES)
        .await
        .unwrap_or_default();
    let text = String::from_utf8_lossy(&body).trim().to_owned();
    let reason = status.canonical_reason().unwrap_or("Bad Request");
    let code = reason.to_ascii_uppercase().replace([' ', '-'], "_");
    let message = match text.is_empty() {
        true => reason.to_owned(),
        false => crate::escape::line(&text).into_owned(),
    };
    shared.metrics.error(&code);
    let details = match &allow {
        Some(allow) => json!({"allow": allow.to_str().unwrap_or("")}),
        None => Value::Null,
    };
    let mut answer = error_response(status, &code, &message, details);
    if let Some(allow) = allow {
        answer
            .headers_mut()
            .insert(axum::http::header::ALLOW, allow);
    }
    answer
}

/// Whether a response's body is JSON (or an event stream, which is not an
/// error).
fn is_json(response: &Response) -> bool {
    response
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json") || v.starts_with("text/event-stream"))
}

/// An HTTP error in the runner's envelope: `{"success": false, "error":
/// {code, message, details}}`.
pub fn error_response(status: StatusCode, code: &str, message: &str, details: Value) -> Response {
    let body = json!({
        "success": false,
        "error": {"code": code, "message": message, "details": details},
    });
    let mut response = (status, axum::Json(body)).into_response();
    if status == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Bearer realm=\"planc\""),
        );
    }
    response
}

/// `413` in the envelope.
pub fn too_large(shared: &Shared) -> Response {
    shared.metrics.error("PAYLOAD_TOO_LARGE");
    error_response(
        StatusCode::PAYLOAD_TOO_LARGE,
        "PAYLOAD_TOO_LARGE",
        &format!(
            "the request body is larger than this server takes ({} bytes; `planc serve --max-body BYTES`)",
            shared.config.max_body
        ),
        json!({"max_body_bytes": shared.config.max_body}),
    )
}
