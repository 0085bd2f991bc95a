//! Checked IR → outputs: the `planc/1` document and the seed formats.

mod extension;
mod peers;
mod targets;
mod taskmaster_file;

use indexmap::IndexMap;
use serde::{Serialize, Serializer};

use crate::document::{
    Meta, PlanDocument, Retry, RoleDoc, State, StepDoc, TaskDoc, TaskStatus, FORMAT,
};
use crate::ir::{self, Value};

pub use targets::{render, render_tagged, Target};
pub use taskmaster_file::{write_tag, NotTaskMaster};

/// The plan document of a checked plan. `source` is the path shown in
/// `meta.source`. Deterministic: the same plan gives the same document.
pub fn document(plan: &ir::Plan, source: Option<&str>) -> PlanDocument {
    let params: IndexMap<String, serde_json::Value> = plan
        .params
        .iter()
        .map(|p| {
            let value = match &p.value {
                Some(Value::Str(s)) => serde_json::Value::from(s.as_str()),
                Some(Value::Int(i)) => serde_json::Value::from(*i),
                Some(Value::Float(f)) => serde_json::Value::from(*f),
                Some(Value::Bool(b)) => serde_json::Value::from(*b),
                None => serde_json::Value::Null,
            };
            (p.name.clone(), value)
        })
        .collect();
    let steps_of_tasks = plan.steps_of_tasks();
    PlanDocument {
        format: FORMAT.to_owned(),
        meta: Meta {
            id: plan.id.to_string(),
            title: plan.title.clone(),
            goal: plan.goal.clone(),
            language: plan.language.clone().unwrap_or_else(|| "en".to_owned()),
            max_iterations: plan.max_iterations,
            transition_rounds: plan.transition_rounds,
            fallback_rounds: plan.fallback_rounds,
            params,
            source: source.map(str::to_owned),
            created_at: None,
            updated_at: None,
            retry: plan.retry,
        },
        roles: plan
            .roles
            .iter()
            .map(|r| RoleDoc {
                id: r.id.to_string(),
                description: r.description.clone(),
            })
            .collect(),
        steps: plan
            .steps
            .iter()
            .map(|s| StepDoc {
                id: s.id.to_string(),
                name: s.name.clone(),
                tasks: s.tasks.clone(),
            })
            .collect(),
        state: State::default(),
        tasks: plan
            .tasks
            .iter()
            .zip(1..)
            .zip(&steps_of_tasks)
            .map(|((t, id), step)| TaskDoc {
                id,
                name: t.name().to_owned(),
                status: TaskStatus::Pending,
                dependencies: plan.dependencies.of(id as usize - 1).to_vec(),
                reasoning: t.reasoning().map(str::to_owned),
                result: None,
                key: Some(t.key().to_owned()),
                step: step.map(|s| s.id.to_string()),
                assignee: t.assignee().map(str::to_owned),
                description: t.description().map(str::to_owned),
                optional: t.optional,
                retry: Retry {
                    max: t.retry().map(u32::from),
                    count: 0,
                },
                priority: t.priority,
                extra: Default::default(),
                holder: None,
            })
            .collect(),
    }
}

/// A JSON array written from an iterator made afresh whenever it is
/// written, so an output is serialised without holding its tasks' objects:
/// a seed format's text costs no more than the text itself.
struct Each<F>(F);

impl<F, I> Serialize for Each<F>
where
    F: Fn() -> I,
    I: IntoIterator,
    I::Item: Serialize,
{
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq((self.0)())
    }
}
