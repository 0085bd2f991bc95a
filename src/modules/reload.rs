//! Loading the imports of a root file whose tree is read already (after an
//! edit of one of its imports, the file is not parsed again): the modules
//! and diagnostics [`super::load`] gives for the same text, but the root's
//! syntax errors, which the caller has.

use std::sync::Arc;

use super::{Loader, Modules};
use crate::syntax::ast;

/// The modules of the root file `name` (its text `text`, its tree `tree`)
/// and of everything it imports, read through `loader`.
pub fn load_parsed(name: &str, text: Arc<str>, tree: ast::File, loader: &dyn Loader) -> Modules {
    super::load_root(name, text, loader, |_| (tree, Vec::new()))
}
