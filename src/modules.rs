//! Loading a file and everything it imports: the set of modules one
//! compilation reads, with import errors as diagnostics.
//!
//! Reading files goes through a [`Loader`], so tests can serve files from
//! memory. (The language server reads imports from disk today; serving its
//! unsaved buffers is a `Loader` away.)

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use crate::diagnostic::{Code, Diagnostic};
use crate::span::{FileId, SourceMap};
use crate::syntax::{self, ast};

/// Reads imported files.
pub trait Loader {
    /// The text of the file at `path`.
    fn load(&self, path: &Path) -> std::io::Result<String>;
}

/// Reads files from the file system.
pub struct FsLoader;

impl Loader for FsLoader {
    fn load(&self, path: &Path) -> std::io::Result<String> {
        let bytes = std::fs::read(path)?;
        String::from_utf8(bytes).map_err(|e| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("not UTF-8 (byte {})", e.utf8_error().valid_up_to()),
            )
        })
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
}

/// Parses `text` (shown as `name`) and loads what it imports, relative to
/// `name`'s directory.
pub fn load(name: &str, text: Arc<str>, loader: &dyn Loader) -> Modules {
    let mut modules = Modules::default();
    let file = modules.sources.add(name, Arc::clone(&text));
    let parsed = syntax::parse(&text, file);
    modules.diagnostics.extend(parsed.diagnostics);
    modules.modules.push(Module {
        file,
        path: PathBuf::from(name),
        ast: parsed.file,
        imports: Vec::new(),
    });
    let mut by_path: HashMap<PathBuf, usize> = HashMap::new();
    by_path.insert(normalise(Path::new(name)), 0);
    let mut stack = vec![0];
    resolve_imports(&mut modules, 0, loader, &mut by_path, &mut stack);
    modules
}

/// `a/./b/../c` → `a/c`, without touching the file system.
fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

fn resolve_imports(
    modules: &mut Modules,
    index: usize,
    loader: &dyn Loader,
    by_path: &mut HashMap<PathBuf, usize>,
    stack: &mut Vec<usize>,
) {
    let file = modules.modules[index].file;
    let base = modules.modules[index]
        .path
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    // Only the imports are copied out (the loop below adds modules): copying
    // every item of a 100,000-task file cost more than checking it.
    let mut imports: Vec<(ast::Import, bool)> = Vec::new();
    let mut seen_other = false;
    for item in &modules.modules[index].ast.items {
        match item {
            ast::TopItem::Import(import) => imports.push((import.clone(), seen_other)),
            _ => seen_other = true,
        }
    }
    for (import, after_other) in &imports {
        if *after_other {
            modules.diagnostics.push(
                Diagnostic::new(Code::Import, "imports go at the top of the file")
                    .label(file, import.span, "after other items")
                    .help("move this `import` above the first plan, template, role or parameter"),
            );
        }
        let relative = import.path.template_text();
        let path = normalise(&base.join(&relative));
        if let Some(&existing) = by_path.get(&path) {
            if let Some(position) = stack.iter().position(|&m| m == existing) {
                let mut chain: Vec<String> = stack[position..]
                    .iter()
                    .map(|&m| modules.sources.get(modules.modules[m].file).name.clone())
                    .collect();
                chain.push(
                    modules
                        .sources
                        .get(modules.modules[existing].file)
                        .name
                        .clone(),
                );
                modules.diagnostics.push(
                    Diagnostic::new(Code::Import, format!("import cycle: {}", chain.join(" → ")))
                        .label(file, import.path.span, "imports a file that imports this one")
                        .help("files may not import each other in a circle; move what both need into a third file"),
                );
            } else if !modules.modules[index].imports.contains(&existing) {
                modules.modules[index].imports.push(existing);
            }
            continue;
        }
        let text = match loader.load(&path) {
            Ok(text) => text,
            Err(error) => {
                modules.diagnostics.push(
                    Diagnostic::new(
                        Code::Import,
                        format!("cannot read `{}`: {error}", path.display()),
                    )
                    .label(file, import.path.span, "imported here")
                    .help("the path is relative to the importing file"),
                );
                continue;
            }
        };
        let name = path.display().to_string();
        let new_file = modules.sources.add(name, text.as_str());
        let parsed = syntax::parse(&text, new_file);
        modules.diagnostics.extend(parsed.diagnostics);
        let new_index = modules.modules.len();
        modules.modules.push(Module {
            file: new_file,
            path: path.clone(),
            ast: parsed.file,
            imports: Vec::new(),
        });
        by_path.insert(path, new_index);
        modules.modules[index].imports.push(new_index);
        stack.push(new_index);
        resolve_imports(modules, new_index, loader, by_path, stack);
        stack.pop();
    }
}
