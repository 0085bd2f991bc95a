//! The names of `planc build --target`, each with the line `--help` shows.

use clap::ValueEnum;
use planc::emit::Target;

/// An output shape of `planc build`, as the command line names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TargetName {
    /// planc/1, the plan document (seed 001's shape and more)
    Planc,
    /// {overallGoal, currentTaskID, tasks}: the planManager (seed 000)
    Tasks,
    /// {plan_id, steps:[{tasks}]}: the Plan Tool (seed 002)
    PlanTool,
    /// {id, goal, steps}: the steps system, tasks in a topological order (seed 003)
    Steps,
    /// {title, steps, language}: Plan-Act (seed 004)
    PlanAct,
    /// task-master's tasks.json, under a tag (--tag; `master` by default)
    #[value(name = "taskmaster")]
    TaskMaster,
    /// An OpenManus planning plan
    #[value(name = "openmanus")]
    OpenManus,
    /// Codex's update_plan arguments
    Codex,
}

impl TargetName {
    /// The library's target of this name.
    pub fn target(self) -> Target {
        match self {
            TargetName::Planc => Target::Planc,
            TargetName::Tasks => Target::Tasks,
            TargetName::PlanTool => Target::PlanTool,
            TargetName::Steps => Target::Steps,
            TargetName::PlanAct => Target::PlanAct,
            TargetName::TaskMaster => Target::TaskMaster,
            TargetName::OpenManus => Target::OpenManus,
            TargetName::Codex => Target::Codex,
        }
    }
}
