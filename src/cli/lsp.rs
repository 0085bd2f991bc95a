//! `planc lsp`: starts the language server, the `planc-lsp` binary found next
//! to this executable or on `PATH`. The server lives in its own crate, on the
//! compiler core alone, so that it links no store, HTTP or MCP crate.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use clap::Args;

use super::{output, EXIT_USAGE};

/// The language server's executable name.
const SERVER: &str = "planc-lsp";

#[derive(Args)]
pub struct LspArgs {
    /// Arguments passed on to planc-lsp (editors may add `--stdio`)
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "ARG"
    )]
    args: Vec<OsString>,
}

pub fn run(args: LspArgs) -> i32 {
    let Some(server) = find_server() else {
        output::fatal(&format!(
            "cannot find the `{SERVER}` language server next to planc or on PATH; \
             install it with `pip install planc` (both executables) or `cargo install --path lsp` from planc's sources"
        ));
        return EXIT_USAGE;
    };
    let mut command = Command::new(&server);
    command.args(&args.args);
    exec(command, &server)
}

/// `planc-lsp` beside the running executable, else the first on `PATH`.
fn find_server() -> Option<PathBuf> {
    let name = format!("{SERVER}{}", std::env::consts::EXE_SUFFIX);
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join(&name)));
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .map(|dir| dir.join(&name));
    beside.into_iter().chain(on_path).find(|p| is_executable(p))
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.is_file()
}

/// Replaces this process with the server (Unix), so the editor talks to it
/// directly; elsewhere runs it with inherited standard streams and passes its
/// exit code on.
#[cfg(unix)]
fn exec(mut command: Command, server: &Path) -> i32 {
    use std::os::unix::process::CommandExt;
    let error = command.exec();
    output::fatal(&format!("cannot start {}: {error}", server.display()));
    EXIT_USAGE
}

#[cfg(not(unix))]
fn exec(mut command: Command, server: &Path) -> i32 {
    match command.status() {
        Ok(status) => status.code().unwrap_or(EXIT_USAGE),
        Err(error) => {
            output::fatal(&format!("cannot start {}: {error}", server.display()));
            EXIT_USAGE
        }
    }
}
