//! A task added to a step or taken out of it, checked from the last check
//! ([`check::added`]) rather than whole.

use crate::check::{self, Checked};
use crate::compile::Compilation;
use crate::modules::Module;
use crate::span::{SourceMap, Span};
use crate::syntax::{Edit, StepTask};

impl Compilation {
    /// The check after `change` added a task to the re-read step (which
    /// stood at `old_span`) or took one out, from this one: `None` where
    /// [`check::added`] does not follow it, or the file has templates or
    /// does not record references and keep its plan.
    pub(super) fn step_task_checked(
        &self,
        change: &StepTask,
        edit: Edit,
        old_span: Span,
        (modules, sources): (&[Module], &SourceMap),
    ) -> Option<Checked> {
        if !self.follows_step_changes() {
            return None;
        }
        let map = super::moved::step_spans(&change.moved, edit, old_span);
        let moved = (&map, super::moved::window(old_span, edit));
        check::added::added(&self.checked, moved, (modules, sources), self.file, change)
    }
}

#[cfg(test)]
mod tests;
