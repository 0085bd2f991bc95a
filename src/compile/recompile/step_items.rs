//! A step's own `after`s or `sequential` changed, with at most one of its
//! tasks (a new task's body opened or closed taking them in or giving them
//! back), checked from the last check ([`check::step_items`]) rather than
//! whole.

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
        if !self.follows_step_changes() {
            return None;
        }
        let map = super::moved::step_spans(&change.moved, edit, old_span);
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
