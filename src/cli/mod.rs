//! Command-line parsing and dispatch. Each subcommand lives in its own file
//! and only calls the library.

// Printing is what the command line is for.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod build;
mod check;
mod completions;
mod config;
mod config_defaults;
mod explain;
mod fmt;
mod graph;
mod init;
mod input;
mod lsp;
mod man;
mod mcp;
mod output;
mod run;
mod run_table;
mod run_text;
mod serve;
mod target_name;

use clap::{FromArgMatches, Parser, Subcommand};

/// Exit code: success.
pub const EXIT_OK: i32 = 0;
/// Exit code: the input has errors, or an operation failed.
pub const EXIT_FAILURE: i32 = 1;
/// Exit code: bad usage, or a file could not be read or written.
pub const EXIT_USAGE: i32 = 2;

#[derive(Parser)]
#[command(
    name = "planc",
    version,
    about = "Compile, check and run .plan files: the task plans AI agents follow",
    max_term_width = 100
)]
struct Cli {
    /// Ignore planc.toml (the project config found upward from the current directory)
    #[arg(long, global = true, env = "PLANC_NO_CONFIG", value_parser = clap::builder::BoolishValueParser::new())]
    no_config: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check plans (.plan) or plan documents (.json) and report every problem
    Check(check::CheckArgs),
    /// Compile a plan to its JSON plan document (or a seed format)
    Build(build::BuildArgs),
    /// Format .plan files in one canonical layout, keeping comments
    Fmt(fmt::FmtArgs),
    /// Explain a diagnostic code (`planc explain invalid_value`, `--list` for all)
    Explain(explain::ExplainArgs),
    /// Draw a plan's dependency graph (Mermaid or Graphviz DOT)
    Graph(graph::GraphArgs),
    /// Print the JSON Schema of the plan document
    Schema,
    /// Run a plan: create a state file and drive it task by task
    Run(run::RunArgs),
    /// Serve a state file's operations as MCP tools over stdio
    Mcp(mcp::McpArgs),
    /// Print the runner's tool definitions (MCP, OpenAI or Anthropic)
    Tools(mcp::ToolsArgs),
    /// Serve a store of plans over HTTP: MCP, a JSON API, event streams, a web view
    Serve(serve::ServeArgs),
    /// Run the language server (planc-lsp) over standard input and output
    Lsp(lsp::LspArgs),
    /// Set up a project: a starter plan, planc.toml, a pre-commit config, an editor hint
    Init(init::InitArgs),
    /// Print the shell completion script (bash, zsh, fish, elvish, powershell)
    Completions(completions::CompletionsArgs),
    /// Print the man page (roff), or write one per subcommand with --dir
    Man(man::ManArgs),
}

/// Runs the command line; returns the process exit code.
pub fn main() -> i32 {
    let command = match config_defaults::command_line() {
        Ok(command) => command,
        Err(code) => return code,
    };
    let cli = match command
        .try_get_matches()
        .and_then(|matches| Cli::from_arg_matches(&matches))
    {
        Ok(cli) => cli,
        Err(error) => {
            let error = escaped_usage_error(error);
            let _ = error.print();
            return if error.use_stderr() {
                EXIT_USAGE
            } else {
                EXIT_OK
            };
        }
    };
    match cli.command {
        Command::Check(args) => check::run(args),
        Command::Build(args) => build::run(args),
        Command::Fmt(args) => fmt::run(args),
        Command::Explain(args) => explain::run(args),
        Command::Graph(args) => graph::run(args),
        Command::Run(args) => run::run(args),
        Command::Mcp(args) => mcp::serve(args),
        Command::Tools(args) => mcp::print(args),
        Command::Serve(args) => serve::run(args),
        Command::Lsp(args) => lsp::run(args),
        Command::Init(args) => init::run(args),
        Command::Completions(args) => completions::run(args),
        Command::Man(args) => man::run(args),
        Command::Schema => {
            print!("{}", planc::document::schema());
            EXIT_OK
        }
    }
}

/// A usage error whose arguments are shown escaped: clap quotes the
/// arguments it could not place as they are, and an argument may hold
/// terminal controls or a newline that forges a line. The arguments are
/// parsed again escaped (`planc::escape::line`), which fails the same way
/// with the escaped text in its message.
fn escaped_usage_error(error: clap::Error) -> clap::Error {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let hostile = |arg: &std::ffi::OsString| {
        arg.to_str()
            .is_none_or(|arg| arg.chars().any(planc::escape::must_escape))
    };
    if !args.iter().any(hostile) {
        return error;
    }
    let escaped = args
        .iter()
        .map(|arg| planc::escape::line(&arg.to_string_lossy()).into_owned());
    match Cli::try_parse_from(escaped) {
        Err(again) if again.kind() == error.kind() => again,
        // Cannot happen (the escaped arguments fail as the others did), but
        // never print a raw argument.
        _ => clap::Error::raw(
            error.kind(),
            planc::escape::line(&error.render().to_string()).into_owned() + "\n",
        ),
    }
}

/// Lets go of a large value without freeing it. A command drops its syntax
/// tree and plan just before the process exits; freeing a tree of 100,000
/// tasks node by node takes longer than reading it, and the operating system
/// takes the memory back at exit anyway.
pub(crate) fn discard<T>(value: T) {
    std::mem::forget(value);
}
