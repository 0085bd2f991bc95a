//! The planc language server: a thin Language Server Protocol layer over the
//! planc library.
//!
//! Parsing, checking and every IDE query live in the library (`planc::ide`),
//! which works in byte offsets and knows nothing of the protocol. This crate
//! keeps the open documents, compiles them off the async executor, converts
//! positions (UTF-16 columns) and types, and speaks JSON-RPC through
//! tower-lsp-server (the maintained fork of tower-lsp).

mod analysis;
mod changed;
mod compaction;
mod compile_threads;
mod convert;
mod documents;
mod framing;
mod large_texts;
mod memory;
mod message_check;
mod placeholders;
mod raw_answers;
mod server;
mod token_base;
mod tokens;

pub use memory::{small_pages_only, Allocator};
pub use server::Backend;

use std::io::Write;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};

use tower_lsp_server::{LspService, Server};

/// How many messages are handled at once. Requests that wait for a compile
/// hold a place, and the messages after them wait for one, so there are
/// more places than a client has requests outstanding.
const CONCURRENCY: usize = 32;

/// Room for messages on their way from the framing layer to the server.
const FORWARD_BUFFER: usize = 64 * 1024;

/// Serves the language server over standard input and output until the
/// client sends `exit` or closes the stream (or its framing breaks).
/// Returns the exit code: 0 if the client sent `shutdown` first, 1 if not
/// (as the protocol asks).
///
/// A malformed message is answered with a JSON-RPC error and the session
/// goes on (see [`framing`]).
///
/// The caller should end the process with that code at once: reading
/// standard input blocks a thread that only more input or its end releases.
pub async fn serve_stdio() -> i32 {
    // Large answers are written as JSON text (`Stdout` puts them in place).
    raw_answers::enable();
    let (service, socket) = LspService::new(Backend::new);
    let shut_down = service.inner().shut_down();
    let (to_server, server_input) = tokio::io::duplex(FORWARD_BUFFER);
    // Not awaited: after `exit` the server returns while this still waits
    // for input; its end (or broken framing) closes `server_input`.
    tokio::spawn(framing::forward(
        tokio::io::stdin(),
        to_server,
        write_to_stdout,
    ));
    let serving = Server::new(server_input, Stdout, socket)
        .concurrency_level(CONCURRENCY)
        .serve(service);
    // On this thread, which decodes the messages: its freed pages are
    // given back only by a collection that runs here (`memory`).
    tokio::select! {
        () = serving => {}
        () = memory::give_back_here_when_quiet() => {}
    }
    if shut_down.load(Ordering::SeqCst) {
        0
    } else {
        1
    }
}

/// Writes one framed message (an error the framing layer answers) to
/// standard output whole, under the same lock the server's writes take.
fn write_to_stdout(frame: &[u8]) {
    let mut stdout = std::io::stdout().lock();
    // A client gone: the server's own writes end the session.
    let _ = stdout.write_all(frame).and_then(|()| stdout.flush());
}

/// Standard output, written and flushed at once.
///
/// `tokio::io::stdout()` left the end of a message (a JSON body ends with no
/// newline) in the standard library's line buffer until the next message, so
/// a client waited for diagnostics until it sent something else. Messages
/// are small and the client reads them, so a blocking write is brief.
///
/// Each write is written whole under standard output's lock: the server
/// hands whole frames, so an error [`write_to_stdout`] writes meanwhile
/// lands between two frames, never inside one.
struct Stdout;

impl tokio::io::AsyncWrite for Stdout {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let written = match raw_answers::substituted(buf) {
            Some(frames) => std::io::stdout().lock().write_all(&frames),
            None => std::io::stdout().lock().write_all(buf),
        };
        Poll::Ready(written.map(|()| buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(std::io::stdout().lock().flush())
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.poll_flush(cx)
    }
}
