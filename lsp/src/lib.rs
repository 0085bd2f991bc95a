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

use tower_lsp::{LspService, Server};

/// Serves the language server over standard input and output until the
/// client disconnects.
pub async fn serve_stdio() {
    let (service, socket) = LspService::new(Backend::new);
    Server::new(tokio::io::stdin(), tokio::io::stdout(), socket)
        .serve(service)
        .await;
}
