//! Reading input files (or standard input) for the commands.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::Args;
use planc::check::Options;
use planc::diagnostic::{Code, Diagnostic};
use planc::document::{LoadOptions, PlanDocument};
use planc::modules::FsLoader;
use planc::read::STDIN_NAME;
use planc::read::{self, Bounds};
use planc::span::{SourceMap, Span};

/// What kind of input a file is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Plan,
    Json,
}

/// A file read into memory.
pub struct Input {
    /// The name shown to users: the path as given, or `<stdin>`.
    pub name: String,
    /// The text, shared with the compilation's source map (a large plan is
    /// held once).
    pub text: Arc<str>,
    pub kind: Kind,
}

/// Why an input could not be used.
pub enum InputError {
    /// The file could not be read: exit 2.
    Io(String),
    /// The file is not UTF-8: a diagnostic, exit 1.
    Encoding(Box<(SourceMap, Diagnostic)>),
}

/// Reads `path` (`-` for standard input) within planc's bounds: a regular
/// file or a pipe (process substitution) of at most `MAX_FILE_BYTES`;
/// directories and devices are refused before they are opened.
pub fn read(path: &str) -> Result<Input, InputError> {
    let (name, bytes) = if path == "-" {
        let bytes = read::read_stream(std::io::stdin().lock(), read::MAX_FILE_BYTES)
            .map_err(|e| InputError::Io(format!("cannot read standard input: {e}")))?;
        (STDIN_NAME.to_owned(), Arc::from(bytes))
    } else {
        let bytes = read::read_file(Path::new(path), Bounds::FILES_AND_PIPES)
            .map_err(|e| InputError::Io(format!("cannot read {path}: {e}")))?;
        (path.to_owned(), bytes)
    };
    let text = planc::decode_shared(&name, bytes).map_err(InputError::Encoding)?;
    let kind = if path == "-" {
        if text.trim_start().starts_with(['{', '[']) {
            Kind::Json
        } else {
            Kind::Plan
        }
    } else if Path::new(path)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"))
    {
        Kind::Json
    } else {
        Kind::Plan
    };
    Ok(Input { name, text, kind })
}

/// The `planc::read` diagnostic of a file that could not be read: what
/// `--format json` and `--format github` show for it. It points at the
/// start of an empty text under the file's name.
pub fn unreadable(path: &str, message: &str) -> (SourceMap, Diagnostic) {
    let name = if path == "-" { STDIN_NAME } else { path };
    let mut sources = SourceMap::new();
    let file = sources.add(name, "");
    let diagnostic = Diagnostic::new(Code::Read, message)
        .label(file, Span::at(0), "not read")
        .help("planc reads regular files, pipes and standard input, of at most 64 MiB");
    (sources, diagnostic)
}

/// How the input is read: where a plan's imports may read, and which tag of
/// a task-master `tasks.json` to take. The flags of every command that loads
/// a plan (`check`, `build`, `graph`, `run init`).
#[derive(Args, Clone, Debug, Default)]
pub struct ImportArgs {
    /// The project directory imports must stay inside [default: the directory
    /// of the FILE; for `-`, the current directory]
    #[arg(long, value_name = "DIR", value_parser = parse_root)]
    root: Option<PathBuf>,
    /// Let imports read .plan files outside the project root
    #[arg(long, conflicts_with = "root")]
    allow_outside_root: bool,
    /// The tag to read from a tagged task-master tasks.json [default: `master`,
    /// or the file's only tag]; `build --target taskmaster` writes under it too
    #[arg(long, value_name = "TAG")]
    pub tag: Option<String>,
}

impl ImportArgs {
    /// How to read a JSON plan document shown as `name`.
    pub fn load_options<'a>(&'a self, fallback_id: &'a str) -> LoadOptions<'a> {
        LoadOptions {
            fallback_id,
            tag: self.tag.as_deref(),
        }
    }

    /// Where `check --fix` may change imported files of the file shown as
    /// `name`: inside `--root DIR`, or the file's directory — also with
    /// `--allow-outside-root`, which lets imports be read, not written.
    pub fn fix_scope(&self, name: &str) -> FsLoader {
        match &self.root {
            Some(root) => FsLoader::within(root),
            None => FsLoader::for_file(name),
        }
    }

    /// The loader for the imports of the file shown as `name`.
    pub fn loader(&self, name: &str) -> FsLoader {
        match &self.root {
            _ if self.allow_outside_root => FsLoader::anywhere(),
            Some(root) => FsLoader::within(root),
            None => FsLoader::for_file(name),
        }
    }
}

fn parse_root(dir: &str) -> Result<PathBuf, String> {
    if Path::new(dir).is_dir() {
        Ok(PathBuf::from(dir))
    } else {
        Err("not a directory".to_owned())
    }
}

/// The file name without directory or extension: a plan id of last resort.
pub fn stem(name: &str) -> String {
    Path::new(name)
        .file_stem()
        .and_then(|s| s.to_str())
        .filter(|s| !s.is_empty() && *s != STDIN_NAME)
        .unwrap_or("plan")
        .to_owned()
}

/// A plan read for use: compiled from a `.plan` source, or checked and
/// normalised from a `.json` plan document.
pub struct Loaded {
    /// The document, if the input has a plan (it may still have errors).
    pub document: Option<PlanDocument>,
    pub sources: SourceMap,
    pub diagnostics: Vec<Diagnostic>,
}

impl Loaded {
    /// The document, if there is one and no diagnostic is an error.
    pub fn clean_document(self) -> Option<PlanDocument> {
        let errors = self.diagnostics.iter().any(Diagnostic::is_error);
        self.document.filter(|_| !errors)
    }
}

/// Compiles or checks `input` into a plan document, requiring every
/// parameter to have a value. `Err` is a usage error (`--set` on JSON).
pub fn load_plan(
    input: &Input,
    params: Vec<(String, String)>,
    imports: &ImportArgs,
) -> Result<Loaded, String> {
    match input.kind {
        Kind::Plan => {
            let options = Options {
                params,
                require_params: true,
                // Nothing here looks names up.
                skip_references: true,
                skip_plan: false,
            };
            let mut compilation = planc::compile_shared_with(
                &input.name,
                Arc::clone(&input.text),
                &options,
                &imports.loader(&input.name),
            );
            let document = compilation.document();
            let no_plan = (compilation.checked.plan.is_none() && !compilation.has_errors())
                .then(|| planc::compile::no_plan(&compilation));
            let mut diagnostics = std::mem::take(&mut compilation.diagnostics);
            diagnostics.extend(no_plan);
            let loaded = Loaded {
                document,
                sources: std::mem::take(&mut compilation.sources),
                diagnostics,
            };
            super::discard(compilation);
            Ok(loaded)
        }
        Kind::Json => {
            if !params.is_empty() {
                return Err(
                    "--set applies to .plan sources; a JSON plan document has its values already"
                        .to_owned(),
                );
            }
            let mut sources = SourceMap::new();
            let file = sources.add(&input.name, Arc::clone(&input.text));
            let stem = stem(&input.name);
            let (document, diagnostics) =
                planc::document::load_json_with(&input.text, file, &imports.load_options(&stem));
            Ok(Loaded {
                document,
                sources,
                diagnostics,
            })
        }
    }
}

/// Prints why a file could not be read, with its code (exit code 2 follows).
pub fn report_unreadable(message: &str) {
    eprintln!("error[{}]: {message}", Code::Read);
}

/// Reads `path`, reporting a failure: `Err` holds the exit code (2 when the
/// file cannot be read, 1 when it is not UTF-8, with its diagnostic printed).
pub fn read_reporting(path: &str, color: super::output::Color) -> Result<Input, i32> {
    match read(path) {
        Ok(input) => Ok(input),
        Err(InputError::Io(message)) => {
            report_unreadable(&message);
            Err(super::EXIT_USAGE)
        }
        Err(InputError::Encoding(error)) => {
            let (sources, diagnostic) = *error;
            super::output::human(&[diagnostic], &sources, color);
            Err(super::EXIT_FAILURE)
        }
    }
}

/// Reads and loads the plan at `path` ([`read_reporting`], then [`load_plan`]).
pub fn open_plan(
    path: &str,
    params: Vec<(String, String)>,
    imports: &ImportArgs,
    color: super::output::Color,
) -> Result<(Input, Loaded), i32> {
    let input = read_reporting(path, color)?;
    match load_plan(&input, params, imports) {
        Ok(loaded) => Ok((input, loaded)),
        Err(message) => {
            super::output::fatal(&message);
            Err(super::EXIT_USAGE)
        }
    }
}
