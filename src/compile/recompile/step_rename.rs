//! A recompile after an edit that renames one step of a plan without
//! templates: what the check found moves with the text, and what names the
//! old or the new name is checked again ([`check::step_rename`]).

use std::sync::Arc;

use super::has_templates;
use crate::check::{self, step_rename::StepRenamed};
use crate::compile::Compilation;
use crate::ir::SymbolKind;
use crate::span::SourceMap;
use crate::syntax::ast::{self, PlanItem, TopItem};
use crate::syntax::{self, Edit, Reparsed};

#[cfg(test)]
mod tests;

/// A step's own name, changed.
struct StepRename {
    /// The step's definition, by index in [`ir::Symbols::definitions`].
    definition: usize,
    old: ast::SmolStr,
    new: ast::SmolStr,
    /// The step's index among the plan's steps.
    step: usize,
    titled: bool,
}

impl Compilation {
    /// After an edit that renames one step and changes nothing else in it:
    /// what the check found, moved with the text, the step renamed, and
    /// what names either name checked again; the re-read file back where
    /// that does not follow the edit.
    pub(super) fn step_renamed(
        &self,
        reparsed: Box<Reparsed>,
        edit: Edit,
        sources: SourceMap,
    ) -> Result<Compilation, Box<Reparsed>> {
        let Some(rename) = self.step_renaming(&reparsed) else {
            return Err(reparsed);
        };
        let input_bytes: usize = self
            .modules
            .iter()
            .map(|m| sources.get(m.file).text.len())
            .sum();
        let checked = self.mover(&reparsed, edit).and_then(|map| {
            let renamed = (rename.definition, &rename.new);
            let window = super::moved::window(reparsed.old_span, edit);
            let (moved, loading) = self.moved_with_plan(&map, window, Some(renamed))?;
            let plan = match reparsed.parsed.file.items.get(reparsed.place.top)? {
                TopItem::Plan(plan) => plan,
                _ => return None,
            };
            let renamed = StepRenamed {
                definition: rename.definition,
                old: &rename.old,
                new: &rename.new,
                step: rename.step,
                titled: rename.titled,
                item: reparsed.old_span,
                pair_limit: syntax::dependency_pair_limit(input_bytes) as u64,
            };
            let checked = check::step_rename::step_renamed(
                &self.checked,
                moved,
                &map,
                plan,
                self.file,
                &renamed,
            )?;
            Some((checked, loading))
        });
        let Some((checked, loading)) = checked else {
            return Err(reparsed);
        };
        #[cfg(test)]
        tests::STEP_RENAMES.with(|n| n.set(n.get() + 1));
        let parts = self.parts_with(reparsed.parsed.diagnostics, loading);
        Ok(Compilation {
            diagnostics: crate::compile::gathered(&parts, &checked),
            sources,
            file: self.file,
            modules: self.modules_with(reparsed.parsed.file),
            checked,
            parts: Arc::new(parts),
        })
    }

    /// Whether the edit renames one step of the file's plan and changes
    /// nothing else: the re-read item is the step, the same but for its
    /// name; no syntax error before or after; no template; references
    /// recorded and the plan kept; the old name the step's alone, the new
    /// one no other's.
    fn step_renaming(&self, reparsed: &Reparsed) -> Option<StepRename> {
        let options = &self.parts.options;
        let old_tree = self.syntax();
        let new_tree = &reparsed.parsed.file;
        let syntax_errors = self.syntax_errors_around(reparsed);
        if reparsed.text_only
            || reparsed.place.task.is_some()
            || syntax_errors
            || options.skip_references
            || options.skip_plan
        {
            return None;
        }
        let (Some(PlanItem::Step(old)), Some(PlanItem::Step(new))) = (
            syntax::item_at(old_tree, reparsed.place),
            syntax::item_at(new_tree, reparsed.place),
        ) else {
            return None;
        };
        if old.name.name == new.name.name
            || !syntax::same_step_but_name(&old, &new)
            || self.modules.iter().any(has_templates)
        {
            return None;
        }
        let first_plan = old_tree
            .items
            .iter()
            .position(|item| matches!(item, TopItem::Plan(_)))?;
        let TopItem::Plan(plan) = old_tree.items.get(reparsed.place.top)? else {
            return None;
        };
        if reparsed.place.top != first_plan {
            return None;
        }
        let definition = self.step_definition(&old.name, &new.name.name)?;
        let step = plan
            .items
            .unmoved()
            .take(reparsed.place.item)
            .filter(|item| matches!(item, PlanItem::Step(_)))
            .count();
        Some(StepRename {
            definition,
            old: old.name.name.clone(),
            new: new.name.name.clone(),
            step,
            titled: old.title.is_some(),
        })
    }

    /// The definition of the step named `old` (at its span), if it is the
    /// only one of that name and nothing is named `new`.
    fn step_definition(&self, old: &ast::Ident, new: &str) -> Option<usize> {
        let mut definition = None;
        let definitions = &self.checked.symbols.definitions;
        for (index, d) in definitions.unmoved().enumerate() {
            let name = d.name();
            if check::same_name(name, new) {
                return None;
            }
            if check::same_name(name, &old.name) {
                let span = definitions.get(index).map(|d| d.span());
                let this =
                    d.kind() == SymbolKind::Step && d.file() == self.file && span == Some(old.span);
                if !this || definition.replace(index).is_some() {
                    return None;
                }
            }
        }
        definition
    }
}
