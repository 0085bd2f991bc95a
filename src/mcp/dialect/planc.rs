//! `planc` (the default, the PlanManager API): the runner's operations under their own
//! names and the PlanManager API's envelope, plus `observe`, the steps system's text protocol.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::mcp::tools::{self, envelope_schema, schema, ToolDef};
use crate::runner::access::PlanAccess;
use crate::runner::{Caller, Op};

use super::{arguments, Outcome};

/// Arguments of `observe`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ObserveArgs {
    /// Your message of this round, as you wrote it: its markers ([Done],
    /// [完成], [Failed] reason, [Step] description) drive the plan.
    pub message: String,
}

/// The runner's tools, then `observe`.
pub fn tools() -> Vec<ToolDef> {
    let mut tools = tools::tools();
    tools.push(tools::with_caller(ToolDef {
        name: "observe",
        description: "Report your message of this round (the text protocol of docs/agents.md): it counts one \
                      iteration; [Done] or [完成] completes your current task (the text before it is the \
                      result), [Failed] reason fails it, each line [Step] description adds a task, and \
                      \"continue\" (继续) resumes a paused plan (the answer then carries a progress summary). \
                      Once you have spent a round on a task, a transition word (\"next\", \"then\", \"now\", \
                      \"接下来\", \"现在\"…) completes it too; after five rounds without a marker it is \
                      completed anyway (the plan's transition_rounds and fallback_rounds). The next task \
                      starts when you have none; at the plan's iteration limit the plan pauses with a \
                      progress summary."
            .to_owned(),
        input_schema: schema::<ObserveArgs>(),
        output_schema: envelope_schema("observe"),
        read_only: false,
        destructive: false,
    }));
    tools
}

/// Runs one of the tools.
pub fn call(store: &dyn PlanAccess, name: &str, args: Value) -> Option<Outcome> {
    if name != "observe" && !Op::NAMES.contains(&name) {
        return None;
    }
    // `agent` and `lease` are the caller's, not the operation's.
    let mut args = args;
    let caller = match &mut args {
        Value::Object(map) => Caller::take_from(map),
        _ => Ok(Caller::default()),
    };
    let result = caller.and_then(|caller| {
        if name == "observe" {
            arguments::<ObserveArgs>(name, args).and_then(|args| {
                store
                    .observe(&args.message, &caller, None, |_| Ok(()))
                    .map(|(applied, ())| applied)
            })
        } else {
            Op::from_call(name, args).and_then(|op| store.apply_as(&op, &caller))
        }
    });
    Some(match result {
        Ok(applied) => Outcome::ok(applied.envelope()),
        Err(error) => Outcome::error(error.envelope()),
    })
}
