//! The plan after an edit of the text of a template's strings (a letter in
//! a title, a reasoning or a description of one of its tasks or steps):
//! every instance's tasks and steps take the template's new strings with
//! that instance's values, which the last check kept
//! ([`super::lower::instances`]). Nothing else the check found can change:
//! the names, references and `{param}`s are the same, so the caller moves
//! the rest with the text.

use std::sync::Arc;

use super::lower::finish::TaskFields;
use super::params::placeholder;
use super::Checked;
use crate::ir::{self, Value};
use crate::syntax::ast::{self, PlanItem, StepItem};

/// The plan of `previous` with the strings of the instances of `template`
/// (as edited; its definition is `definition`) made again. `None` where
/// this does not follow: the check kept no instances, or the template uses
/// templates itself (its instances' tasks would not be its own alone), or
/// an instance's tasks and steps are not the template's one to one (one
/// left unexpanded at a limit).
pub(crate) fn retexted(
    previous: &Checked,
    mut plan: ir::Plan,
    template: &ast::Template,
    definition: usize,
) -> Option<ir::Plan> {
    let instances = previous.reuse.instances.as_deref()?;
    let (tasks, steps) = template_items(template)?;
    for instance in instances.iter().filter(|i| i.template == definition) {
        if instance.tasks.len() != tasks.len() || instance.steps.len() != steps.len() {
            return None;
        }
        let text = |s: &ast::Str| text_of(template, &instance.values, s);
        for (index, task) in instance.tasks.clone().zip(&tasks) {
            let fields = TaskFields::of(task);
            let name = text(&task.title);
            let reasoning = fields.reasoning.map(text);
            let description = fields.description.map(text);
            let ir_task = plan.tasks.get_mut(index)?;
            if !ir_task.says(&name, reasoning.as_deref(), description.as_deref()) {
                Arc::make_mut(ir_task).set_texts(name, reasoning, description);
            }
        }
        for (&index, step) in instance.steps.iter().zip(&steps) {
            let name = match &step.title {
                Some(title) => text(title),
                None => continue,
            };
            plan.steps.get_mut(index)?.name = name;
        }
    }
    Some(plan)
}

/// The tasks and steps of a template in the order an instance adds them;
/// `None` if it uses a template.
fn template_items(template: &ast::Template) -> Option<(Vec<&ast::Task>, Vec<&ast::Step>)> {
    let (mut tasks, mut steps) = (Vec::new(), Vec::new());
    for item in template.items.unmoved() {
        match item {
            PlanItem::Task(task) => tasks.push(&**task),
            PlanItem::Step(step) => {
                steps.push(&**step);
                tasks.extend(step.items.iter().filter_map(|i| match i {
                    StepItem::Task(task) => Some(&**task),
                    _ => None,
                }));
            }
            PlanItem::Use(_) => return None,
            _ => {}
        }
    }
    Some((tasks, steps))
}

/// A string of the template with an instance's values, as the check
/// interpolates it: a parameter without a value, or no parameter, stays
/// `{name}`.
fn text_of(template: &ast::Template, values: &[Option<Value>], string: &ast::Str) -> String {
    let mut out = String::with_capacity(string.len_hint());
    for part in string.parts() {
        match part {
            ast::StrPart::Text(text) => out.push_str(text),
            ast::StrPart::Param(ident) => {
                let at = template
                    .params
                    .iter()
                    .position(|p| p.name.name == ident.name);
                match at.and_then(|i| values.get(i)) {
                    Some(Some(value)) => value.write_text(&mut out),
                    _ => placeholder(&mut out, ident.name),
                }
            }
        }
    }
    out
}
