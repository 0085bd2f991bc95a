//! The framing layer between the client and tower-lsp-server: reads each
//! `Content-Length` frame, answers a malformed message itself and forwards
//! the rest, so that one bad message does not end the session.
//!
//! Only broken framing ends it (a header without a usable
//! `Content-Length`, the input ending inside a message, or its end): after
//! that the next message cannot be found.

use serde_json::Value;
use tokio::io::{
    AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader,
};

use crate::message_check::{self, Refusal};

/// The longest header line read; a longer one is broken framing.
const MAX_HEADER_LINE: u64 = 8 * 1024;

/// The largest message body taken; a larger one is read past and refused.
pub const MAX_BODY: usize = 256 * 1024 * 1024;

/// How reading the client's messages ended.
#[derive(Debug, PartialEq, Eq)]
pub enum End {
    /// The input ended between messages.
    Closed,
    /// The framing broke (why); the error was answered.
    Broken(String),
    /// The server stopped reading (it exited).
    ServerGone,
}

/// Reads frames from `input` until it ends or the framing breaks; writes
/// each good message, framed, to `server`, and hands the framed error
/// answering each bad one to `answer` (which writes it to the client).
pub async fn forward(
    input: impl AsyncRead + Unpin,
    mut server: impl AsyncWrite + Unpin,
    answer: impl Fn(&[u8]),
) -> End {
    let mut input = BufReader::with_capacity(64 * 1024, input);
    loop {
        let length = match read_headers(&mut input).await {
            Ok(Some(length)) => length,
            Ok(None) => return End::Closed,
            Err(why) => return broken(why, &answer),
        };
        // A large text's reading, decoding and first compile free their
        // pages back at once (`memory::purge_at_once`).
        let large = length >= crate::large_texts::LARGE;
        if large {
            crate::memory::purge_at_once();
        }
        let body = match read_body(&mut input, length).await {
            Ok(body) => body,
            Err(why) => return broken(why, &answer),
        };
        let mut body = match body {
            Ok(body) => body,
            Err(refusal) => {
                answer(&refusal.to_frame());
                continue;
            }
        };
        match message_check::check(&mut body) {
            Ok(()) => {
                // A large text passes beside the server's reader
                // (`large_texts`).
                match crate::large_texts::take_out(&body) {
                    Some(smaller) => body = smaller,
                    // No text to compile: the usual delay again.
                    None if large => crate::memory::purge_as_before(),
                    None => {}
                }
                let header = format!("Content-Length: {}\r\n\r\n", body.len());
                let sent = async {
                    server.write_all(header.as_bytes()).await?;
                    server.write_all(&body).await?;
                    server.flush().await
                };
                if sent.await.is_err() {
                    return End::ServerGone;
                }
            }
            Err(refusal) => answer(&refusal.to_frame()),
        }
    }
}

/// Answers a parse error for the broken frame and says why on standard
/// error.
fn broken(why: String, answer: &impl Fn(&[u8])) -> End {
    let detail = format!("broken framing ({why}); planc-lsp stops");
    answer(&Refusal::parse_error(&detail, Value::Null).to_frame());
    #[allow(clippy::print_stderr)]
    {
        eprintln!("planc-lsp: {detail}");
    }
    End::Broken(why)
}

/// Reads a frame's headers: its `Content-Length`, none if the input ended
/// before the frame began, an error if the framing is broken.
async fn read_headers(input: &mut (impl AsyncBufRead + Unpin)) -> Result<Option<usize>, String> {
    let mut length = None;
    let mut started = false;
    loop {
        let mut line = Vec::new();
        let read = input
            .take(MAX_HEADER_LINE)
            .read_until(b'\n', &mut line)
            .await
            .map_err(|e| format!("cannot read: {e}"))?;
        if read == 0 {
            return match started {
                false => Ok(None),
                true => Err("the input ended inside a header".to_owned()),
            };
        }
        started = true;
        if line.last() != Some(&b'\n') {
            return Err(format!("a header line longer than {MAX_HEADER_LINE} bytes"));
        }
        let line = String::from_utf8_lossy(&line);
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            return length
                .map(Some)
                .ok_or_else(|| "a message without a Content-Length header".to_owned());
        }
        let Some((name, value)) = line.split_once(':') else {
            return Err(format!("a header line without a colon: {line:?}"));
        };
        if name.trim().eq_ignore_ascii_case("content-length") {
            let value = value.trim();
            let parsed = value
                .parse::<usize>()
                .map_err(|_| format!("Content-Length {value:?} is not a length"))?;
            length = Some(parsed);
        }
    }
}

/// Reads a body of `length` bytes: the body, or (when it is larger than
/// [`MAX_BODY`]) the error answering it once read past; an error if the
/// input ended inside it.
async fn read_body(
    input: &mut (impl AsyncBufRead + Unpin),
    length: usize,
) -> Result<Result<Vec<u8>, Refusal>, String> {
    let ended = |read: u64| format!("the input ended {read} bytes into a {length}-byte body");
    let mut limited = input.take(length as u64);
    if length > MAX_BODY {
        let read = tokio::io::copy(&mut limited, &mut tokio::io::sink())
            .await
            .map_err(|e| format!("cannot read: {e}"))?;
        if read < length as u64 {
            return Err(ended(read));
        }
        let detail = format!("a message of {length} bytes (at most {MAX_BODY})");
        return Ok(Err(Refusal::invalid_request(&detail, Value::Null)));
    }
    let mut body = Vec::with_capacity(length.min(64 * 1024));
    limited
        .read_to_end(&mut body)
        .await
        .map_err(|e| format!("cannot read: {e}"))?;
    if body.len() < length {
        return Err(ended(body.len() as u64));
    }
    Ok(Ok(body))
}
