//! `planc mcp STATE`: the runner's operations as Model Context Protocol tools
//! over stdio (docs/agents.md), built on the official Rust SDK (`rmcp`).
//!
//! A thin face: every tool call becomes a runner [`Op`](crate::runner::Op) and goes through the
//! [`Store`](crate::runner::Store) (lock, atomic write, event log), so several servers on one state
//! file stay consistent. Each seed system's tools are a dialect
//! ([`dialect`]). Operation errors are tool results with `isError`; an
//! unknown tool is a protocol error (JSON-RPC -32602), as MCP says.

#![warn(missing_docs)]

pub mod dialect;
pub mod export;
pub(crate) mod server;
pub mod tools;

pub use dialect::{Dialect, Outcome};
pub use tools::{render, render_tools, tools, ToolDef, ToolFormat, TAKES_OVER};
