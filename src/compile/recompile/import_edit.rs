//! A recompile after an edit of an import's path (a letter in the
//! imported file's name): the import alone is read again
//! ([`syntax::reparse_import`]), the imports are loaded again
//! ([`modules::load_parsed`]; the root file is not parsed again), what the
//! check found moves with the text, and what names the imported roles is
//! checked again ([`check::import_edit`]).

use std::sync::Arc;

use crate::check::import_edit::{roles_reimported, ImportEdit};
use crate::compile::Compilation;
use crate::ir::Window;
use crate::modules::{self, Loader, Module};
use crate::span::{SourceMap, Span};
use crate::syntax::{self, Edit};

#[cfg(test)]
mod tests;

impl Compilation {
    /// The compilation of `text` after `edit`, which lies in the path of an
    /// import of the file, from this one (imports read through `loader`);
    /// `None` where that does not follow the edit, and the file is
    /// compiled whole.
    pub(super) fn import_recompiled(
        &self,
        text: &Arc<str>,
        edit: Edit,
        loader: &dyn Loader,
    ) -> Option<Compilation> {
        let options = &self.parts.options;
        if options.skip_references || options.skip_plan || !self.parts.root_syntax.is_empty() {
            return None;
        }
        let (tree, _) = syntax::reparse_import(self.syntax(), text, edit, self.file)?;
        let name = &self.sources.get(self.file).name;
        let loaded = modules::load_parsed(name, Arc::clone(text), tree, loader);
        if loaded.modules.first().map(|m| m.file) != Some(self.file) {
            return None;
        }
        let map = |span: Span| Some(edit.map_span(span));
        // What `map` does (`Edit::map`: an offset before the edited bytes'
        // end stays, one at or after it moves), for the chunks wholly
        // before or after; an edit at the file's first byte is left to the
        // whole check (an empty span there would be moved).
        if edit.old_end == 0 {
            return None;
        }
        let window = Window {
            keep_until: edit.old_end - 1,
            shift_from: edit.old_end,
            by: edit.new_end as i64 - edit.old_end as i64,
        };
        let (moved, _) = self.moved_with_plan(&map, window, None)?;
        let bytes = |sources: &SourceMap, modules: &[Module]| -> usize {
            modules.iter().map(|m| sources.get(m.file).text.len()).sum()
        };
        let edited = ImportEdit {
            old: &self.modules,
            new: &loaded.modules,
            bytes: (
                bytes(&self.sources, &self.modules),
                bytes(&loaded.sources, &loaded.modules),
            ),
        };
        let checked = roles_reimported(&self.checked, moved, &edited, &map)?;
        #[cfg(test)]
        tests::IMPORT_EDITS.with(|n| n.set(n.get() + 1));
        let parts = self.parts_with(Vec::new(), loaded.diagnostics);
        Some(Compilation {
            diagnostics: super::super::gathered(&parts, &checked),
            sources: loaded.sources,
            file: self.file,
            modules: loaded.modules,
            checked,
            parts: Arc::new(parts),
        })
    }
}
