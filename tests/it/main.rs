//! The integration tests of `planc`, one test binary: each module was a test
//! file of its own (`cargo test --test it cli::` runs one). One binary links
//! the planc library once instead of once per file, which is most of what
//! compiling the tests costs.
//!
//! The test binaries kept apart, in tests/: those that measure this
//! process's processor time (hostile_check.rs, hostile_syntax.rs: other
//! tests on other threads would count in it), the one with a counting
//! global allocator (emit_memory.rs), and the suites `scripts/fuzz-nightly`
//! runs on their own (robustness.rs, and hostile/, which runs its own binary
//! again for each library case).

// Tests may unwrap, print what they measure and hold long scenarios.
#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::too_many_lines
)]

mod agents;
mod bad_input;
mod bench_peers;
mod check_fix;
mod ci_packaging;
mod cli;
mod cli_config;
mod cli_init;
mod cli_lsp;
mod cli_shell;
mod cli_tag;
mod deep_input;
mod diagnostic_cap;
mod diagnostics;
mod dialects;
#[cfg(unix)]
mod doc_commands;
#[cfg(unix)]
mod doc_scripts;
mod docs;
mod documents;
mod escape;
mod every_mistake;
mod examples;
mod explain;
mod fmt;
mod graph;
mod input;
mod interop;
mod layers;
mod list_order;
mod lock_removed;
mod markdown;
mod mcp_python;
mod mcp_stdio;
mod one_store;
mod order_migration;
mod peer_formats;
mod plan_store;
mod postgres_rows;
mod readme;
mod reuse;
mod run_cli;
mod run_seeds;
mod run_store;
mod run_table;
mod schema;
mod seed_agents;
mod serve;
mod serve_auth;
mod serve_browser;
mod serve_create;
mod serve_fuzz;
mod serve_limits;
mod serve_mcp;
mod serve_pages;
mod serve_postgres;
mod serve_sigkill;
mod steps_agent;
mod steps_corpus;
mod syntax_words;
mod targets;
mod taskmaster;
mod tools_cli;
mod tools_sdk;
mod tools_strict;
mod wheel;

#[path = "../serve_support/mod.rs"]
mod serve_support;
#[path = "../store_support/mod.rs"]
mod store_support;
#[path = "../support/mod.rs"]
mod support;
