//! A step's own `after`s or `sequential` changed, with at most one of its
//! tasks (a new task's body opened or closed taking them in or giving them
//! back), checked from the last check ([`check::step_items`]) rather than
//! whole.

use std::collections::HashMap;

use super::has_templates;
use crate::check::{self, Checked};
use crate::compile::Compilation;
use crate::modules::Module;
use crate::span::{SourceMap, Span};
use crate::syntax::{Edit, StepItems};

impl Compilation {
    /// The check after `change` (in the re-read step, which stood at
    /// `old_span`), from this one: `None` where [`check::step_items`] does
    /// not follow it, or the file has templates or does not record
    /// references and keep its plan.
    pub(super) fn step_items_checked(
        &self,
        change: &StepItems,
        edit: Edit,
        old_span: Span,
        (modules, sources): (&[Module], &SourceMap),
    ) -> Option<Checked> {
        let options = &self.parts.options;
        let simple = !options.skip_references && !options.skip_plan;
        if !simple || self.modules.iter().any(has_templates) {
            return None;
        }
        // The step's spans that stay, old to new; its own items' and
        // those inside the task that changed have none.
        let inside: HashMap<Span, Span> = change.moved.iter().copied().collect();
        let by = edit.new_end as i64 - edit.old_end as i64;
        let map = |span: Span| -> Option<Span> {
            if span.start() >= old_span.end() {
                return Some(span.shifted(by));
            }
            if span.end() <= old_span.start() {
                return Some(span);
            }
            let around = span.start() < old_span.start() && span.end() >= old_span.end();
            match around {
                true => Some(edit.map_span(span)),
                false => inside.get(&span).copied(),
            }
        };
        let window = super::moved::window(old_span, edit);
        check::step_items::step_items(
            &self.checked,
            (&map, window),
            (modules, sources),
            self.file,
            change,
        )
    }
}

#[cfg(test)]
mod tests;
