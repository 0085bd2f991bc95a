//! A task added to a step or taken out of it, checked from the last check
//! ([`check::added`]) rather than whole.

use std::collections::HashMap;

use super::has_templates;
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
        let options = &self.parts.options;
        let simple = !options.skip_references && !options.skip_plan;
        if !simple || self.modules.iter().any(has_templates) {
            return None;
        }
        // The step's other spans, old to new; the task's have none.
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
        let moved = (&map, super::moved::window(old_span, edit));
        check::added::added(&self.checked, moved, (modules, sources), self.file, change)
    }
}

#[cfg(test)]
mod tests;
