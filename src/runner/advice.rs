//! What an error tells the caller to do next, spelt for the face that
//! answers it: the MCP tools name operations and arguments
//! (`startNextTask`, `takeover: true`), the command line names commands and
//! flags (`planc run next`, `--takeover`), and seed 000's `tasks` dialect
//! names only its own six tools and their arguments.
//!
//! The runner writes every piece of advice in its MCP spelling from the
//! table below; [`OpError::spelt_for`] swaps it for a face's own. An error
//! never suggests an argument or a tool the face that answers it refuses.

use super::error::OpError;
use super::results::OpResult;

/// Where an answer goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Face {
    /// MCP tools (the `planc` dialect), tool definitions, the library.
    Mcp,
    /// The command line, `planc run …`.
    Cli,
    /// Seed 000's six tools (the `tasks` dialect).
    Tasks,
}

/// One piece of advice in each face's spelling.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Advice {
    /// As the MCP tools say it (and as the runner writes it).
    pub mcp: &'static str,
    /// As the command line says it.
    pub cli: &'static str,
    /// As the `tasks` dialect says it.
    pub tasks: &'static str,
}

impl Advice {
    /// Start a task (`NO_CURRENT_TASK`).
    pub const START_NEXT: Advice = Advice {
        mcp: "start one with startNextTask",
        cli: "start one with `planc run next`",
        tasks: "start one with startNextTask",
    };
    /// Resume a paused plan (`PLAN_NOT_ACTIVE`).
    pub const RESUME: Advice = Advice {
        mcp: "resume it (resumePlan) before changing it",
        cli: "resume it (`planc run resume`) before changing it",
        tasks: "it must be resumed (`planc run resume`) before it changes",
    };
    /// Take a held task over (`TASK_HELD`).
    pub const TAKE_OVER: Advice = Advice {
        mcp: "or take it over (takeover: true)",
        cli: "or take it over (--takeover)",
        tasks: "or take it over (skipTask's takeover: true)",
    };
    /// Say which task, or which agent (`AMBIGUOUS_TASK` without an identity).
    pub const NAME_TASK_OR_AGENT: Advice = Advice {
        mcp: "name the task (task_id), or say which agent you are (agent, --agent, PLANC_AGENT)",
        cli: "name the task (its ID after the state file), or say which agent you are (--agent, PLANC_AGENT)",
        tasks: "skip the tasks you left with skipTask",
    };
    /// Say which task (`AMBIGUOUS_TASK` for an agent).
    pub const NAME_TASK: Advice = Advice {
        mcp: "name the task (task_id)",
        cli: "name the task (its ID after the state file)",
        tasks: "skip the tasks you left with skipTask",
    };
    /// The start of an id-less call's refusal.
    pub const NO_ID: Advice = Advice {
        mcp: "No task_id given and",
        cli: "No task ID given and",
        tasks: "",
    };

    /// Add a task to an empty plan (`startNextTask`'s answer).
    pub const ADD_TASK: Advice = Advice {
        mcp: "add one with addTask",
        cli: "add one with `planc run add`",
        tasks: "add one with addTask",
    };
    /// Resume a paused plan (`getPlanStatus`'s reason).
    pub const RESUME_STATUS: Advice = Advice {
        mcp: "resumePlan continues it",
        cli: "`planc run resume` continues it",
        tasks: "`planc run resume` continues it",
    };

    /// What an update may change (`updateTask` with nothing to change).
    pub const NOTHING_TO_UPDATE: Advice = Advice {
        mcp: "give name, dependencies, reasoning, assignee or description",
        cli: "give --name, --deps, --reasoning, --assignee or --description",
        tasks: "give name, dependencies, reasoning, assignee or description",
    };
    /// Start a plan of a store over (`PLAN_EXISTS`).
    pub const START_OVER: Advice = Advice {
        mcp: "delete it first or start it over (force)",
        cli: "delete it first or start it over (`planc run init --force`)",
        tasks: "delete it first or start it over",
    };
    /// Reset a plan whose iteration count is at its largest.
    pub const RESET_COUNT: Advice = Advice {
        mcp: "reset the plan (resetPlan) to count again",
        cli: "reset the plan (`planc run reset`) to count again",
        tasks: "reset the plan to count again",
    };
    /// A logged event's data over its limit (`logEvent`'s `data`).
    pub const LOG_DATA: Advice = Advice {
        mcp: "`data` is ",
        cli: "--data is ",
        tasks: "`data` is ",
    };

    /// Every piece of advice, longer ones before the ones they contain.
    pub const ALL: [Advice; 12] = [
        Advice::START_NEXT,
        Advice::ADD_TASK,
        Advice::RESUME_STATUS,
        Advice::RESUME,
        Advice::TAKE_OVER,
        Advice::NAME_TASK_OR_AGENT,
        Advice::NAME_TASK,
        Advice::NO_ID,
        Advice::NOTHING_TO_UPDATE,
        Advice::START_OVER,
        Advice::RESET_COUNT,
        Advice::LOG_DATA,
    ];

    /// The advice as `face` says it.
    pub fn spelt(self, face: Face) -> &'static str {
        match face {
            Face::Mcp => self.mcp,
            Face::Cli => self.cli,
            Face::Tasks => self.tasks,
        }
    }
}

/// `text` (a message the runner wrote) with its advice spelt for `face`.
pub fn respell(text: &str, face: Face) -> String {
    let mut text = text.to_owned();
    if face == Face::Mcp {
        return text;
    }
    for advice in Advice::ALL {
        if text.contains(advice.mcp) {
            let spelt = advice.spelt(face);
            text = text.replace(advice.mcp, spelt);
            if spelt.is_empty() {
                // "No task_id given and there is …" → "There is …".
                let rest = text.trim_start();
                let mut chars = rest.chars();
                text = chars
                    .next()
                    .map(|c| c.to_uppercase().chain(chars).collect())
                    .unwrap_or_default();
            }
        }
    }
    text
}

impl OpError {
    /// The same error with its advice spelt for `face` (see the module).
    pub fn spelt_for(mut self, face: Face) -> OpError {
        self.message = respell(&self.message, face);
        self
    }
}

impl OpResult {
    /// The same result with the advice in its messages spelt for `face`:
    /// why nothing started, why a plan stands still.
    pub fn spelt_for(mut self, face: Face) -> OpResult {
        match &mut self {
            OpResult::Started(started) => started.message = respell(&started.message, face),
            OpResult::Status(report) => {
                if let Some(reason) = &mut report.reason {
                    *reason = respell(reason, face);
                }
            }
            _ => {}
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::ErrorCode;

    #[test]
    fn each_face_gets_its_own_spelling() {
        let error = OpError::new(
            ErrorCode::NoCurrentTask,
            format!(
                "No task_id given and there is no current task; {}",
                Advice::START_NEXT.mcp
            ),
        );
        assert_eq!(error.clone().spelt_for(Face::Mcp), error);
        assert_eq!(
            error.clone().spelt_for(Face::Cli).message,
            "No task ID given and there is no current task; start one with `planc run next`"
        );
        assert_eq!(
            error.spelt_for(Face::Tasks).message,
            "There is no current task; start one with startNextTask"
        );
    }

    #[test]
    fn no_face_is_told_of_what_it_refuses() {
        for advice in Advice::ALL {
            for word in [
                "resumePlan",
                "startNextTask",
                "takeover: true",
                "task_id",
                "resetPlan",
                "(force)",
                "`data`",
            ] {
                assert!(!advice.cli.contains(word), "{}", advice.cli);
            }
            for word in ["task_id", "agent", "resumePlan", "--"] {
                assert!(!advice.tasks.contains(word), "{}", advice.tasks);
            }
        }
    }
}
