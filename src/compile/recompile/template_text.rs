//! A recompile after an edit of the text of a template's strings: what
//! the check found moves with the text, and the instances' tasks and steps
//! take the new strings ([`check::template_text`]).

use std::sync::Arc;

use crate::check;
use crate::compile::Compilation;
use crate::diagnostic::Code;
use crate::ir::{SymbolKind, Window};
use crate::span::SourceMap;
use crate::syntax::ast::{PlanItem, TopItem};
use crate::syntax::{self, Edit, Reparsed};

#[cfg(test)]
mod tests;

impl Compilation {
    /// After an edit inside the text of the strings of a template of the
    /// file (the re-read item one of its steps or tasks, its names,
    /// references and shape the same): what the check found, moved with
    /// the text, the instances' strings made again; the re-read file back
    /// where that does not follow the edit.
    pub(super) fn template_retexted(
        &self,
        reparsed: Box<Reparsed>,
        edit: Edit,
        sources: SourceMap,
    ) -> Result<Compilation, Box<Reparsed>> {
        let Some(definition) = self.edited_template(&reparsed) else {
            return Err(reparsed);
        };
        let Some(TopItem::Template(template)) = reparsed.parsed.file.items.get(reparsed.place.top)
        else {
            return Err(reparsed);
        };
        let moved = self.mover(&reparsed, edit).and_then(|map| {
            let window = self.text_window(&reparsed, edit);
            let (mut checked, loading) = self.moved_with_plan(&map, window, None)?;
            checked.plan = match checked.plan.take() {
                Some(plan) => Some(check::template_text::retexted(
                    &self.checked,
                    plan,
                    template,
                    definition,
                )?),
                None => None,
            };
            checked.reuse = self.checked.reuse.moved(self.file, &map, edit.start);
            let diagnostics = self
                .diagnostics
                .iter()
                .map(|d| d.moved(self.file, &map))
                .collect::<Option<_>>()?;
            Some((checked, diagnostics, loading))
        });
        let Some((checked, diagnostics, loading)) = moved else {
            return Err(reparsed);
        };
        #[cfg(test)]
        tests::TEMPLATE_EDITS.with(|n| n.set(n.get() + 1));
        let parts = self.parts_with(reparsed.parsed.diagnostics, loading);
        Ok(Compilation {
            sources,
            file: self.file,
            modules: self.modules_with(reparsed.parsed.file),
            checked,
            diagnostics,
            parts: Arc::new(parts),
        })
    }

    /// What the edit does to the spans wholesale: those that end before it
    /// stay, those that start after it move, inside the re-read item too
    /// when its own spans say so (each the same before the edit, moved
    /// after it: the edit is in the text of a string or comment); else
    /// those before and after the item. Narrower than the item's: the
    /// instances' spans in the template (before or after the edit) and the
    /// plan's then part the chunks that hold them cleanly, which are
    /// shared, not copied ([`crate::ir::Shifted::moved`]).
    fn text_window(&self, reparsed: &Reparsed, edit: Edit) -> Window {
        let whole = super::moved::window(reparsed.old_span, edit);
        let old = syntax::item_at(self.syntax(), reparsed.place);
        let new = syntax::item_at(&reparsed.parsed.file, reparsed.place);
        let (Some(old), Some(new)) = (old, new) else {
            return whole;
        };
        let (old, new) = (syntax::spans(&old), syntax::spans(&new));
        let agrees = old.len() == new.len()
            && old.iter().zip(&new).all(|(&old, &new)| {
                if old.end() <= edit.start {
                    new == old
                } else if old.start() >= edit.old_end {
                    new == old.shifted(whole.by)
                } else {
                    true
                }
            });
        match agrees {
            true => Window {
                keep_until: edit.start,
                shift_from: edit.old_end,
                by: whole.by,
            },
            false => whole,
        }
    }

    /// The definition of the template the edit is in, when the edit
    /// changed only the text of the strings of one of its steps or tasks
    /// and no name is declared twice (a template's parameters are then
    /// told by name alone).
    fn edited_template(&self, reparsed: &Reparsed) -> Option<usize> {
        if !reparsed.text_only || self.diagnostics.iter().any(|d| d.code == Code::Duplicate) {
            return None;
        }
        let TopItem::Template(template) = self.syntax().items.get(reparsed.place.top)? else {
            return None;
        };
        // A role's description is the plan's, not the instances'.
        let item = syntax::item_at(&reparsed.parsed.file, reparsed.place)?;
        if !matches!(item, PlanItem::Step(_) | PlanItem::Task(_)) {
            return None;
        }
        // The template's name stands before the edit: where it was.
        let span = template.name.span;
        self.checked.symbols.definitions.iter().position(|d| {
            d.kind() == SymbolKind::Template && d.file() == self.file && d.span() == span
        })
    }
}
