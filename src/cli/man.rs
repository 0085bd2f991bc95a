//! `planc man`: the roff man page, from clap's own description of the
//! command line (clap_mangen).

use std::path::PathBuf;

use clap::{Args, CommandFactory};

use super::output;
use super::{EXIT_OK, EXIT_USAGE};

#[derive(Args)]
pub struct ManArgs {
    /// Write planc.1 and a page per subcommand (planc-check.1, planc-run-next.1, …)
    /// into DIR instead of printing planc.1
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

/// Prints planc.1, or writes every page into `--dir`.
pub fn run(args: ManArgs) -> i32 {
    let command = super::Cli::command();
    let written = match &args.dir {
        Some(dir) => std::fs::create_dir_all(dir)
            .and_then(|()| clap_mangen::generate_to(command, dir))
            .map_err(|e| format!("cannot write the man pages into {}: {e}", dir.display())),
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(command)
                .render(&mut page)
                .map_err(|e| format!("cannot render the man page: {e}"))
                .map(|()| print!("{}", String::from_utf8_lossy(&page)))
        }
    };
    match written {
        Ok(()) => EXIT_OK,
        Err(message) => {
            output::fatal(&message);
            EXIT_USAGE
        }
    }
}
