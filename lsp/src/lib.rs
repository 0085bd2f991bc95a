//! The planc language server: a thin Language Server Protocol layer over the
//! planc library.
//!
//! Parsing, checking and every IDE query live in the library (`planc::ide`),
//! which works in byte offsets and knows nothing of the protocol. This crate
//! keeps the open documents, converts positions (UTF-16 columns) and types,
//! and speaks JSON-RPC through tower-lsp.

mod convert;
mod documents;
mod server;

pub use server::Backend;

use std::io::Write;
use std::pin::Pin;
use std::task::{Context, Poll};

use tower_lsp::{LspService, Server};

/// Serves the language server over standard input and output until the
/// client disconnects.
pub async fn serve_stdio() {
    let (service, socket) = LspService::new(Backend::new);
    Server::new(tokio::io::stdin(), Stdout, socket)
        .serve(service)
        .await;
}

/// Standard output, written and flushed at once.
///
/// `tokio::io::stdout()` left the end of a message (a JSON body ends with no
/// newline) in the standard library's line buffer until the next message, so
/// a client waited for diagnostics until it sent something else. Messages
/// are small and the client reads them, so a blocking write is brief.
struct Stdout;

impl tokio::io::AsyncWrite for Stdout {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Poll::Ready(std::io::stdout().lock().write(buf))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(std::io::stdout().lock().flush())
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.poll_flush(cx)
    }
}
