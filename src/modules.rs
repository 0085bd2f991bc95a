//! Loading a file and everything it imports: the set of modules one
//! compilation reads, with import errors as diagnostics.
//!
//! Reading files goes through a [`Loader`], so tests can serve files from
//! memory. (The language server reads imports from disk today; serving its
//! unsaved buffers is a `Loader` away.) An import's path is relative to the
//! importing file's directory; [`FsLoader`] keeps imports inside a project
//! root and reads them within bounds.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use crate::diagnostic::{Code, Diagnostic};
use crate::read::ReadError;
use crate::span::{FileId, SourceMap, Span};
use crate::syntax::{self, ast};

mod fs_loader;
mod reload;

pub use fs_loader::FsLoader;
pub use reload::load_parsed;

/// Finds and reads imported files.
pub trait Loader {
    /// Checks that the file an import names may be read, and says which file
    /// it is: two paths to one file give the same answer, so it is read once.
    /// `path` is the importing file's directory joined with the import,
    /// `.` and `..` taken away. The default takes every path as it is.
    fn locate(&self, path: &Path) -> Result<PathBuf, ImportError> {
        Ok(path.to_path_buf())
    }

    /// The text of a file [`Loader::locate`] returned.
    fn load(&self, located: &Path) -> Result<String, ImportError>;
}

/// Why an imported file was not loaded.
#[derive(Debug)]
pub enum ImportError {
    /// The file could not be read: missing, not a file, too large, …
    Read(ReadError),
    /// The file is not text: this byte is not UTF-8, or is NUL.
    NotText { offset: usize },
    /// The file is outside the project root.
    OutsideRoot,
    /// The file is not a `.plan` file (after following symbolic links).
    NotPlan,
}

impl From<std::io::Error> for ImportError {
    fn from(error: std::io::Error) -> ImportError {
        ImportError::Read(ReadError::Io(error))
    }
}

impl From<ReadError> for ImportError {
    fn from(error: ReadError) -> ImportError {
        ImportError::Read(error)
    }
}

impl ImportError {
    /// The diagnostic for `import "written"`, labelled at the import's
    /// string. It names the import as written and nothing else: not the
    /// file's text, nor where a refused path leads.
    fn diagnostic(&self, written: &str, file: FileId, span: Span) -> Diagnostic {
        let (code, reason, label, help) = match self {
            ImportError::Read(ReadError::TooLarge { .. }) => (
                Code::Limit,
                self.reason(),
                "too large",
                "split the imported file into smaller ones",
            ),
            ImportError::Read(ReadError::Io(_)) => (
                Code::Import,
                self.reason(),
                "imported here",
                "the path is relative to the importing file's directory",
            ),
            ImportError::Read(ReadError::NotAFile(_)) | ImportError::NotText { .. } => (
                Code::Import,
                self.reason(),
                "imported here",
                "an import names a `.plan` file",
            ),
            ImportError::OutsideRoot => (
                Code::Import,
                self.reason(),
                "outside the project root",
                "imports stay inside the project root: the directory of the file named on the \
                 command line, or the one given with `--root DIR`; `--allow-outside-root` lifts the rule",
            ),
            ImportError::NotPlan => (
                Code::Import,
                self.reason(),
                "not a .plan file",
                "an import names a `.plan` file",
            ),
        };
        Diagnostic::new(code, format!("cannot import `{written}`: {reason}"))
            .label(file, span, label)
            .help(help)
    }

    /// Why, in words that name no path.
    fn reason(&self) -> String {
        match self {
            ImportError::Read(error) => error.to_string(),
            ImportError::NotText { offset } => {
                format!("it is not a text file (byte {offset})")
            }
            ImportError::OutsideRoot => "it is outside the project root".to_owned(),
            ImportError::NotPlan => "only `.plan` files can be imported".to_owned(),
        }
    }
}

/// One parsed file.
#[derive(Clone, Debug)]
pub struct Module {
    pub file: FileId,
    /// The path it was read from (for the root: its name as given).
    pub path: PathBuf,
    pub ast: ast::File,
    /// The modules it imports, by index, in import order.
    pub imports: Vec<usize>,
}

/// A root file and every file it imports, transitively.
#[derive(Clone, Debug, Default)]
pub struct Modules {
    pub sources: SourceMap,
    /// `modules[0]` is the root.
    pub modules: Vec<Module>,
    /// Syntax errors of every file, and import errors.
    pub diagnostics: Vec<Diagnostic>,
    /// How many of [`Modules::diagnostics`], at the front, are the root
    /// file's syntax diagnostics.
    pub root_syntax: usize,
    /// The bytes of every file read so far, bounded by
    /// [`syntax::MAX_INPUT_BYTES`].
    bytes: usize,
}

/// Parses `text` (shown as `name`) and loads what it imports, relative to
/// `name`'s directory.
pub fn load(name: &str, text: Arc<str>, loader: &dyn Loader) -> Modules {
    let source = Arc::clone(&text);
    load_root(name, text, loader, |file| {
        let parsed = syntax::parse(&source, file);
        (parsed.file, parsed.diagnostics)
    })
}

/// The modules of the root file `name` (its text `text`; its tree and
/// syntax diagnostics from `read`, given the root's file id) and of
/// everything it imports, read through `loader`.
fn load_root(
    name: &str,
    text: Arc<str>,
    loader: &dyn Loader,
    read: impl FnOnce(FileId) -> (ast::File, Vec<Diagnostic>),
) -> Modules {
    let mut modules = Modules {
        bytes: text.len(),
        ..Modules::default()
    };
    let file = modules.sources.add(name, text);
    let (tree, syntax_errors) = read(file);
    modules.root_syntax = syntax_errors.len();
    modules.diagnostics.extend(syntax_errors);
    modules.modules.push(Module {
        file,
        path: PathBuf::from(name),
        ast: tree,
        imports: Vec::new(),
    });
    // The root is read already; where the loader cannot place it (standard
    // input, a pipe, a file outside `--root`), its name stands for it.
    let root = normalise(Path::new(name));
    let mut resolver = Resolver {
        modules,
        loader,
        by_path: HashMap::from([(loader.locate(&root).unwrap_or(root), 0)]),
        stack: vec![0],
        on_stack: HashMap::from([(0, 0)]),
    };
    resolver.resolve_imports(0);
    resolver.modules
}

/// `a/./b/../c` → `a/c`, without touching the file system. A `..` takes
/// away the name before it; leading ones (`../../x`) stay.
pub(crate) fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => match out.components().next_back() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                // `/..` is `/`.
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => out.push(".."),
            },
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The most files the diagnostic of one import cycle names.
const MAX_CYCLE_FILES: usize = 12;

/// Loads the imports of the modules read so far, depth first.
struct Resolver<'l> {
    modules: Modules,
    loader: &'l dyn Loader,
    /// Every file read, by what the loader located, to its module.
    by_path: HashMap<PathBuf, usize>,
    /// The modules being resolved, root first: an import of one of them is
    /// a cycle.
    stack: Vec<usize>,
    /// Where each module of [`Resolver::stack`] stands on it, so a cycle is
    /// found without a scan of the stack (as deep as the chain of imports).
    on_stack: HashMap<usize, usize>,
}

impl Resolver<'_> {
    /// Loads what module `root` imports, and what those import, depth first.
    /// The files being read are kept on an explicit stack, not the call
    /// stack: a chain of imports is as long as the input allows.
    fn resolve_imports(&mut self, root: usize) {
        let mut frames = vec![(root, self.imports_of(root).into_iter())];
        while let Some((index, imports)) = frames.last_mut() {
            let index = *index;
            let Some((import, after_other)) = imports.next() else {
                frames.pop();
                if let Some(done) = self.stack.pop() {
                    self.on_stack.remove(&done);
                }
                continue;
            };
            if let Some(new_index) = self.read_import(index, &import, after_other) {
                self.on_stack.insert(new_index, self.stack.len());
                self.stack.push(new_index);
                frames.push((new_index, self.imports_of(new_index).into_iter()));
            }
        }
    }

    /// Reads one import of module `index`: the new module's index, when it
    /// is a file not read before (its imports are read next).
    fn read_import(
        &mut self,
        index: usize,
        import: &ast::Import,
        after_other: bool,
    ) -> Option<usize> {
        let file = self.modules.modules[index].file;
        if after_other {
            self.modules.diagnostics.push(
                Diagnostic::new(Code::Import, "imports go at the top of the file")
                    .label(file, import.span, "after other items")
                    .help("move this `import` above the first plan, template, role or parameter"),
            );
        }
        let base = self.modules.modules[index]
            .path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let written = import.path.template_text();
        let path = normalise(&base.join(&written));
        let at = (&written[..], file, import.path.span);
        let located = self.or_diagnose(locate(self.loader, &path), at)?;
        if let Some(&existing) = self.by_path.get(&located) {
            self.link(index, existing, file, import.path.span);
            return None;
        }
        let text = self.or_diagnose(self.loader.load(&located), at)?;
        if !self.within_budget(&text, at) {
            return None;
        }
        let new_index = self.add(path, &text);
        self.by_path.insert(located, new_index);
        self.modules.modules[index].imports.push(new_index);
        Some(new_index)
    }

    /// The imports of module `index`, each with whether another item stands
    /// before it. Only the imports are copied out (the loop over them adds
    /// modules): copying every item of a 100,000-task file cost more than
    /// checking it.
    fn imports_of(&self, index: usize) -> Vec<(ast::Import, bool)> {
        let mut imports = Vec::new();
        let mut seen_other = false;
        for item in &self.modules.modules[index].ast.items {
            match item {
                ast::TopItem::Import(import) => imports.push((import.clone(), seen_other)),
                _ => seen_other = true,
            }
        }
        imports
    }

    /// The value, or `None` with the import's diagnostic for the error.
    fn or_diagnose<T>(
        &mut self,
        result: Result<T, ImportError>,
        (written, file, span): (&str, FileId, Span),
    ) -> Option<T> {
        match result {
            Ok(value) => Some(value),
            Err(error) => {
                let diagnostic = error.diagnostic(written, file, span);
                self.modules.diagnostics.push(diagnostic);
                None
            }
        }
    }

    /// Module `index` imports `existing`, read already: a cycle when
    /// `existing` is being resolved, else one more edge.
    fn link(&mut self, index: usize, existing: usize, file: FileId, span: Span) {
        let modules = &mut self.modules;
        let Some(&position) = self.on_stack.get(&existing) else {
            if !modules.modules[index].imports.contains(&existing) {
                modules.modules[index].imports.push(existing);
            }
            return;
        };
        let name = |m: usize| modules.sources.get(modules.modules[m].file).name.clone();
        // A cycle through thousands of files is named in part, as a cycle
        // of tasks is: the message stays short however deep the chain.
        let files = &self.stack[position..];
        let mut chain: Vec<String> = files
            .iter()
            .take(MAX_CYCLE_FILES)
            .map(|&m| name(m))
            .collect();
        if files.len() > MAX_CYCLE_FILES {
            chain.push("…".to_owned());
        }
        chain.push(name(existing));
        modules.diagnostics.push(
            Diagnostic::new(Code::Import, format!("import cycle: {}", chain.join(" → ")))
                .label(file, span, "imports a file that imports this one")
                .help("files may not import each other in a circle; move what both need into a third file"),
        );
    }

    /// Whether `text` fits what one check reads, the plan and its imports
    /// together; the diagnostic when it does not. Memory is bounded by a
    /// multiple of the input: the input of one check is bounded too, not
    /// only each file.
    fn within_budget(&mut self, text: &str, (written, file, span): (&str, FileId, Span)) -> bool {
        if self.modules.bytes.saturating_add(text.len()) <= syntax::MAX_INPUT_BYTES {
            self.modules.bytes += text.len();
            return true;
        }
        self.modules.diagnostics.push(
            Diagnostic::new(
                Code::Limit,
                format!(
                    "cannot import `{written}`: the plan and its imports would be more than {} bytes",
                    syntax::MAX_INPUT_BYTES
                ),
            )
            .label(file, span, "one import too many")
            .help("planc reads at most 64 MiB in one check, the file and its imports together; split the plan"),
        );
        false
    }

    /// Parses a newly read file as the next module; its index.
    fn add(&mut self, path: PathBuf, text: &str) -> usize {
        let modules = &mut self.modules;
        let file = modules.sources.add(path.display().to_string(), text);
        let parsed = syntax::parse(text, file);
        modules.diagnostics.extend(parsed.diagnostics);
        modules.modules.push(Module {
            file,
            path,
            ast: parsed.file,
            imports: Vec::new(),
        });
        modules.modules.len() - 1
    }
}

/// Where the loader finds the file of an import: only `.plan` files.
fn locate(loader: &dyn Loader, path: &Path) -> Result<PathBuf, ImportError> {
    if path.extension().is_some_and(|e| e == "plan") {
        loader.locate(path)
    } else {
        Err(ImportError::NotPlan)
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::{load, normalise, ImportError, Loader};
    use crate::diagnostic::Code;

    /// `m{i}.plan` imports `m{i+1}.plan`; the last one imports `m1.plan`.
    struct Chain(usize);

    impl Loader for Chain {
        fn load(&self, located: &Path) -> Result<String, ImportError> {
            let name = located.to_string_lossy();
            let i: usize = name
                .trim_start_matches('m')
                .trim_end_matches(".plan")
                .parse()
                .unwrap();
            Ok(format!(
                "import \"m{}.plan\"\n",
                if i == self.0 { 1 } else { i + 1 }
            ))
        }
    }

    #[test]
    fn a_long_chain_of_imports_loads_on_a_small_stack() {
        let n = 200_000;
        let modules = std::thread::Builder::new()
            .stack_size(256 << 10)
            .spawn(move || load("main.plan", "import \"m1.plan\"\n".into(), &Chain(n)))
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(modules.modules.len(), n + 1);
        let messages: Vec<(Code, &str)> = modules
            .diagnostics
            .iter()
            .map(|d| (d.code, d.message.as_str()))
            .collect();
        let twelve: Vec<String> = (1..=12).map(|i| format!("m{i}.plan")).collect();
        let expected = format!("import cycle: {} → … → m1.plan", twelve.join(" → "));
        assert_eq!(messages, [(Code::Import, expected.as_str())]);
    }

    #[test]
    fn normalise_keeps_leading_parent_directories() {
        let cases = [
            ("a/./b/../c.plan", "a/c.plan"),
            ("../../lib.plan", "../../lib.plan"),
            ("a/../../lib.plan", "../lib.plan"),
            ("../a/../b.plan", "../b.plan"),
            ("/../x.plan", "/x.plan"),
            ("./x.plan", "x.plan"),
        ];
        for (path, expected) in cases {
            assert_eq!(
                normalise(Path::new(path)),
                PathBuf::from(expected),
                "{path}"
            );
        }
    }
}
