//! What a plan's lowering keeps of its template instances for the next
//! check: which template each instantiates, with which values, which tasks
//! and steps it added, and where the references its strings made stand
//! ([`crate::check::template_text`] gives them the strings of an edited
//! template, [`crate::check::template_header`] the parameters of one).

use std::ops::Range;

use super::{Env, GroupSource, StepSource};
use crate::check::declare::Declarations;
use crate::check::template::TemplateEnv;
use crate::ir::Value;

/// One `use` of a template, as the plan's lowering expanded it.
#[derive(Debug, Clone)]
pub(in crate::check) struct Instance {
    /// The template's definition, by index in the symbols' definitions.
    pub template: usize,
    /// Per parameter of the template: its value in this instance.
    pub values: Vec<Option<Value>>,
    /// The tasks it added (by index among the plan's tasks), in order.
    pub tasks: std::ops::Range<usize>,
    /// The steps it added (by index among the plan's steps), in order.
    pub steps: Vec<usize>,
    /// The references its steps made when their titles and `after`s were
    /// read (by index in the symbols' references; empty where they would
    /// stand if none).
    pub title_refs: Range<usize>,
    /// The references its tasks' fields made (`after`, `assignee`), within
    /// the plan's (`Reuse::task_refs`).
    pub field_refs: Range<usize>,
    /// The references its tasks' strings made.
    pub text_refs: Range<usize>,
}

/// Where the references each instance made in one pass of the lowering
/// stand, by instance (`Env::Instance`): its items are read one after
/// another, so each instance's references are one run.
#[derive(Debug, Default)]
pub(in crate::check) struct RefRuns(Vec<Option<Range<usize>>>);

impl RefRuns {
    /// Notes that an item read in `env` made the references `from..to`.
    pub(in crate::check) fn note(&mut self, env: Env, from: usize, to: usize) {
        let Env::Instance(i) = env else {
            return;
        };
        let i = i as usize;
        if self.0.len() <= i {
            self.0.resize(i + 1, None);
        }
        let run = self.0[i].get_or_insert(from..from);
        run.end = to;
    }

    /// Takes the runs another pass noted (on another checker, whose
    /// references follow this one's from `base` on) after these.
    pub(in crate::check) fn append(&mut self, other: RefRuns, base: usize) {
        for (i, run) in other.0.into_iter().enumerate() {
            if let Some(run) = run {
                let env = Env::Instance(i as u32);
                self.note(env, base + run.start, base + run.end);
            }
        }
    }

    fn of(&self, instance: usize) -> Range<usize> {
        self.0.get(instance).cloned().flatten().unwrap_or(0..0)
    }
}

/// The references each instance made: its steps' (titles and `after`s),
/// its tasks' fields' and its tasks' strings'.
pub(in crate::check) struct InstanceRefs<'r> {
    pub titles: &'r RefRuns,
    pub fields: &'r RefRuns,
    pub texts: &'r RefRuns,
}

/// The instances of a lowering: `envs` and `groups` one to one, each
/// group's tasks a run of the plan's tasks (as `instantiate` adds them).
pub(super) fn instances(
    decls: &Declarations<'_>,
    envs: &[TemplateEnv],
    groups: &[GroupSource<'_>],
    steps: &[StepSource<'_>],
    refs: InstanceRefs<'_>,
) -> Vec<Instance> {
    let mut out: Vec<Instance> = envs
        .iter()
        .zip(groups)
        .enumerate()
        .map(|(i, (env, group))| Instance {
            template: decls.templates[env.template].def,
            values: env.values.clone(),
            tasks: match (group.tasks.first(), group.tasks.last()) {
                (Some(&first), Some(&last)) => first..last + 1,
                _ => 0..0,
            },
            steps: Vec::new(),
            title_refs: refs.titles.of(i),
            field_refs: refs.fields.of(i),
            text_refs: refs.texts.of(i),
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
