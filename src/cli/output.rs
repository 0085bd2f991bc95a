//! Printing diagnostics in the format and colour the user asked for.

use std::io::{IsTerminal, Write};

use clap::ValueEnum;
use planc::diagnostic::Diagnostic;
use planc::render;
use planc::span::SourceMap;

/// How diagnostics are printed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Graphical, for people, with a summary line per file (to standard output)
    #[default]
    Human,
    /// A JSON array of diagnostics (to standard output)
    Json,
    /// GitHub Actions annotations (to standard output)
    Github,
}

/// When to colour human output.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Color {
    /// When the output is a terminal and NO_COLOR is unset
    #[default]
    Auto,
    Always,
    Never,
}

impl Color {
    /// Whether to colour output written to standard error.
    pub fn enabled(self) -> bool {
        self.enabled_on(std::io::stderr().is_terminal())
    }

    /// Whether to colour output written to standard output.
    pub fn enabled_on_stdout(self) -> bool {
        self.enabled_on(std::io::stdout().is_terminal())
    }

    /// Whether to colour output written to a stream that is a terminal or not.
    fn enabled_on(self, terminal: bool) -> bool {
        match self {
            Color::Always => true,
            Color::Never => false,
            Color::Auto => std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && terminal,
        }
    }
}

/// What `--deny` can turn into errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Deny {
    /// Every warning fails the run
    Warnings,
}

/// Prints diagnostics in the human format to standard error.
pub fn human(diagnostics: &[Diagnostic], sources: &SourceMap, color: Color) {
    if diagnostics.is_empty() {
        return;
    }
    let text = render::human(diagnostics, sources, color.enabled());
    let _ = std::io::stderr().write_all(text.as_bytes());
}

/// Prints diagnostics in the human format to standard output (`planc check`,
/// whose report is its output: `planc check … | less` shows it all, as
/// `ruff check` does).
pub fn human_to_stdout(diagnostics: &[Diagnostic], sources: &SourceMap, color: Color) {
    if diagnostics.is_empty() {
        return;
    }
    let text = render::human(diagnostics, sources, color.enabled_on_stdout());
    print!("{text}");
}

/// Prints `planc check`'s diagnostics in `format`, all to standard output.
pub fn diagnostics(format: Format, diagnostics: &[Diagnostic], sources: &SourceMap, color: Color) {
    match format {
        Format::Human => human_to_stdout(diagnostics, sources, color),
        Format::Json => print!("{}", render::json(diagnostics, sources)),
        Format::Github => print!("{}", render::github(diagnostics, sources)),
    }
}

/// Prints an error that is not about a file's content (exit code 2 follows),
/// on one line: a file name or argument it quotes is escaped if the caller
/// did not (see `planc::escape`).
pub fn fatal(message: &str) {
    eprintln!("error: {}", planc::escape::line(message));
}

/// Writes a command's output to `path`, or to standard output; returns the
/// exit code (2 when the file cannot be written).
pub fn emit(path: Option<&str>, text: &str) -> i32 {
    match path {
        Some(path) => {
            if let Err(error) = std::fs::write(path, text) {
                let path = planc::escape::path(path);
                fatal(&format!("cannot write {path}: {error}"));
                return super::EXIT_USAGE;
            }
        }
        None => print!("{text}"),
    }
    super::EXIT_OK
}

/// Writes `text` to `path` atomically (a temporary file beside it, synced,
/// then renamed over it): a reader or a crash sees the old file or the new
/// one. Returns the exit code (2 when the file cannot be written).
pub fn write_atomic(path: &str, text: &str) -> i32 {
    let target = std::path::Path::new(path);
    let dir = match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => std::path::Path::new("."),
    };
    let written = tempfile::NamedTempFile::new_in(dir).and_then(|mut file| {
        if let Ok(old) = std::fs::metadata(target) {
            file.as_file().set_permissions(old.permissions())?;
        }
        file.write_all(text.as_bytes())?;
        file.as_file().sync_all()?;
        file.persist(target).map_err(|e| e.error)?;
        Ok(())
    });
    if let Err(error) = written {
        let path = planc::escape::path(path);
        fatal(&format!("cannot write {path}: {error}"));
        return super::EXIT_USAGE;
    }
    super::EXIT_OK
}
