//! `planc completions SHELL`: the shell's completion script, from clap's own
//! description of the command line (clap_complete).

use clap::{Args, CommandFactory};
use clap_complete::Shell;

use super::EXIT_OK;

#[derive(Args)]
pub struct CompletionsArgs {
    /// The shell to print the script for
    #[arg(value_enum, value_name = "SHELL")]
    shell: Shell,
}

/// Prints the completion script of `args.shell` to standard output.
pub fn run(args: CompletionsArgs) -> i32 {
    let mut command = super::Cli::command();
    clap_complete::generate(args.shell, &mut command, "planc", &mut std::io::stdout());
    EXIT_OK
}
