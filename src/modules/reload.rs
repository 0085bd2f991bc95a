//! Loading the imports of a root file whose tree is read already (after an
//! edit of one of its imports, the file is not parsed again): the modules
//! and diagnostics [`super::load`] gives for the same text, but the root's
//! syntax errors, which the caller has.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{normalise, Loader, Module, Modules, Resolver};
use crate::syntax::ast;

/// The modules of the root file `name` (its text `text`, its tree `tree`)
/// and of everything it imports, read through `loader`.
pub fn load_parsed(name: &str, text: Arc<str>, tree: ast::File, loader: &dyn Loader) -> Modules {
    let mut modules = Modules {
        bytes: text.len(),
        ..Modules::default()
    };
    let file = modules.sources.add(name, text);
    modules.modules.push(Module {
        file,
        path: PathBuf::from(name),
        ast: tree,
        imports: Vec::new(),
    });
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
