//! One call from source text to checked plan: the entry point the CLI, the
//! language server and the MCP server share.

use std::sync::Arc;

use crate::check::{self, Checked, Options};
use crate::diagnostic::{self, Code, Diagnostic};
use crate::document::PlanDocument;
use crate::emit;
use crate::modules::{self, FsLoader, Loader, Module};
use crate::read::STDIN_NAME;
use crate::span::{FileId, SourceMap, Span};
use crate::syntax::ast;

mod recompile;

/// Everything known about one compiled file and the files it imports.
#[derive(Clone, Debug)]
pub struct Compilation {
    /// Every file read: the root first, then its imports.
    pub sources: SourceMap,
    /// The root file.
    pub file: FileId,
    /// The parsed files; `modules[0]` is the root.
    pub modules: Vec<Module>,
    pub checked: Checked,
    /// Syntax, import and check diagnostics of every file, sorted by position.
    pub diagnostics: Vec<Diagnostic>,
    /// What compiling a new text of the root file reuses.
    parts: Arc<Parts>,
}

/// The pieces [`Compilation::diagnostics`] is made of that a recompile
/// keeps, and the options.
#[derive(Clone, Debug, Default)]
struct Parts {
    /// The root file's syntax diagnostics.
    root_syntax: Vec<Diagnostic>,
    /// The imported files' syntax diagnostics, and the import errors.
    loading: Vec<Diagnostic>,
    options: Options,
    /// Whether the file is a JSON plan document ([`compile_json`]).
    json: bool,
}

impl Compilation {
    /// The root file's syntax tree.
    pub fn syntax(&self) -> &ast::File {
        &self.modules[0].ast
    }

    /// Whether any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// The plan document, if the file has a plan and no errors.
    pub fn document(&self) -> Option<PlanDocument> {
        if self.has_errors() {
            return None;
        }
        let plan = self.checked.plan.as_ref()?;
        let source = &self.sources.get(self.file).name;
        let source = (source != STDIN_NAME).then_some(source.as_str());
        Some(emit::document(plan, source))
    }
}

/// Parses and checks `text`, shown to the user as `name`; imports are read
/// from the file system, relative to `name`, and must stay inside `name`'s
/// directory ([`FsLoader::for_file`]). The compilation keeps a copy of the
/// text in its [`SourceMap`].
pub fn compile(name: &str, text: &str, options: &Options) -> Compilation {
    compile_shared(name, Arc::from(text), options)
}

/// Like [`compile`], keeping `text` itself in the [`SourceMap`] instead of
/// a copy (a large file read once is not copied).
pub fn compile_shared(name: &str, text: Arc<str>, options: &Options) -> Compilation {
    compile_shared_with(name, text, options, &FsLoader::for_file(name))
}

/// Like [`compile`], reading imports through `loader`.
pub fn compile_with(name: &str, text: &str, options: &Options, loader: &dyn Loader) -> Compilation {
    compile_shared_with(name, Arc::from(text), options, loader)
}

/// Like [`compile_shared`], reading imports through `loader` (an
/// [`FsLoader`] with another root, say).
pub fn compile_shared_with(
    name: &str,
    text: Arc<str>,
    options: &Options,
    loader: &dyn Loader,
) -> Compilation {
    let mut loaded = modules::load(name, text, loader);
    let loading = loaded.diagnostics.split_off(loaded.root_syntax);
    let parts = Parts {
        root_syntax: loaded.diagnostics,
        loading,
        options: options.clone(),
        json: false,
    };
    assemble(loaded.sources, loaded.modules, parts, None)
}

/// Checks a JSON plan document (shown as `name`) as `planc check` does: the
/// compilation has its diagnostics, with spans into its text, and an empty
/// tree. Any shape `planc check` reads is read (planc's, task-master's
/// `tasks.json`, the other dialects of docs/interop.md).
pub fn compile_json(name: &str, text: Arc<str>) -> Compilation {
    let mut sources = SourceMap::new();
    let file = sources.add(name, Arc::clone(&text));
    let stem = std::path::Path::new(name)
        .file_stem()
        .and_then(|s| s.to_str())
        .filter(|s| !s.is_empty() && *s != STDIN_NAME)
        .unwrap_or("plan");
    let (_, diagnostics) = crate::document::load_json(&text, file, stem);
    Compilation {
        sources,
        file,
        modules: vec![Module {
            file,
            path: std::path::PathBuf::from(name),
            ast: ast::File::default(),
            imports: Vec::new(),
        }],
        checked: Checked::default(),
        diagnostics,
        parts: Arc::new(Parts {
            json: true,
            ..Parts::default()
        }),
    }
}

/// Checks the parsed modules, and gathers the diagnostics.
/// `previous` is the check of the file before an edit, if it is checked
/// again after one.
fn assemble(
    sources: SourceMap,
    modules: Vec<Module>,
    parts: Parts,
    previous: Option<&Checked>,
) -> Compilation {
    // The checker leaves out what could echo a syntax error itself.
    let checked = check::check_reusing(&modules, &sources, &parts.options, previous);
    let file = modules[0].file;
    Compilation {
        sources,
        file,
        modules,
        diagnostics: gathered(&parts, &checked),
        checked,
        parts: Arc::new(parts),
    }
}

/// Every diagnostic of a compilation, in order: the syntax errors of the
/// root file, those of loading its imports, and the check's.
fn gathered(parts: &Parts, checked: &Checked) -> Vec<Diagnostic> {
    let mut diagnostics = parts.root_syntax.clone();
    diagnostics.extend(parts.loading.iter().cloned());
    diagnostics.extend(checked.diagnostics.iter().cloned());
    diagnostic::sort(&mut diagnostics);
    // The check's own are capped already; this caps the imports' (a file
    // may import thousands of missing files).
    diagnostic::cap_per_code(&mut diagnostics);
    diagnostic::sort(&mut diagnostics);
    diagnostics
}

/// Decodes a file's bytes as UTF-8, or says where it is not.
///
/// On failure the lossily decoded text is returned with the diagnostic, so the
/// label can show the place (offsets before the first bad byte are exact).
pub fn decode(name: &str, bytes: Vec<u8>) -> Result<String, Box<(SourceMap, Diagnostic)>> {
    match String::from_utf8(bytes) {
        Ok(text) => Ok(text),
        Err(error) => {
            let offset = error.utf8_error().valid_up_to();
            let lossy = String::from_utf8_lossy(error.as_bytes()).into_owned();
            let mut sources = SourceMap::new();
            let file = sources.add(name, lossy);
            let diagnostic = Diagnostic::new(
                Code::Syntax,
                format!("the file is not valid UTF-8 (byte {offset})"),
            )
            .label(file, Span::new(offset, offset + 1), "not UTF-8")
            .help("planc reads UTF-8 text; re-save the file as UTF-8");
            Err(Box::new((sources, diagnostic)))
        }
    }
}

/// Like [`decode`], for bytes read into shared memory: the text is the same
/// allocation, not a copy.
pub fn decode_shared(
    name: &str,
    bytes: Arc<[u8]>,
) -> Result<Arc<str>, Box<(SourceMap, Diagnostic)>> {
    if std::str::from_utf8(&bytes).is_err() {
        return decode(name, bytes.to_vec()).map(Arc::from);
    }
    // SAFETY: the bytes were just found to be UTF-8, and `str` has the
    // layout of `[u8]` (the standard library turns an `Arc<str>` into an
    // `Arc<[u8]>` the same way).
    Ok(unsafe { Arc::from_raw(Arc::into_raw(bytes) as *const str) })
}

/// The error for building a file that holds no `plan` (a library).
pub fn no_plan(compilation: &Compilation) -> Diagnostic {
    let name = &compilation.sources.get(compilation.file).name;
    Diagnostic::new(Code::NoPlan, format!("{name} holds no `plan` to build"))
        .label(
            compilation.file,
            Span::at(0),
            "no `plan NAME { … }` in this file",
        )
        .help("a file without a plan is a library: import it from a plan and build that")
}
