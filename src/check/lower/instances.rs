//! What a plan's lowering keeps of its template instances for the next
//! check: which template each instantiates, with which values, and which
//! tasks and steps it added ([`crate::check::template_text`] gives them
//! the strings of an edited template).

use super::{Env, GroupSource, StepSource};
use crate::check::declare::Declarations;
use crate::check::template::TemplateEnv;
use crate::ir::Value;

/// One `use` of a template, as the plan's lowering expanded it.
#[derive(Debug)]
pub(in crate::check) struct Instance {
    /// The template's definition, by index in the symbols' definitions.
    pub template: usize,
    /// Per parameter of the template: its value in this instance.
    pub values: Vec<Option<Value>>,
    /// The tasks it added (by index among the plan's tasks), in order.
    pub tasks: std::ops::Range<usize>,
    /// The steps it added (by index among the plan's steps), in order.
    pub steps: Vec<usize>,
}

/// The instances of a lowering: `envs` and `groups` one to one, each
/// group's tasks a run of the plan's tasks (as `instantiate` adds them).
pub(super) fn instances(
    decls: &Declarations<'_>,
    envs: &[TemplateEnv],
    groups: &[GroupSource<'_>],
    steps: &[StepSource<'_>],
) -> Vec<Instance> {
    let mut out: Vec<Instance> = envs
        .iter()
        .zip(groups)
        .map(|(env, group)| Instance {
            template: decls.templates[env.template].def,
            values: env.values.clone(),
            tasks: match (group.tasks.first(), group.tasks.last()) {
                (Some(&first), Some(&last)) => first..last + 1,
                _ => 0..0,
            },
            steps: Vec::new(),
        })
        .collect();
    for (index, step) in steps.iter().enumerate() {
        if let Env::Instance(i) = step.env {
            if let Some(instance) = out.get_mut(i as usize) {
                instance.steps.push(index);
            }
        }
    }
    out
}
