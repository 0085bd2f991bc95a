//! The subcommands of `planc run`, as clap reads them; `run.rs` carries
//! each one out.

use super::*;

/// The optional details `add` and `update` both take.
#[derive(Args)]
pub(super) struct TaskDetails {
    /// Why the task is needed
    #[arg(long, value_name = "TEXT")]
    pub(super) reasoning: Option<String>,
    /// The role that should do it
    #[arg(long, value_name = "ROLE")]
    pub(super) assignee: Option<String>,
    /// Longer instructions
    #[arg(long, value_name = "TEXT")]
    pub(super) description: Option<String>,
}

#[derive(Subcommand)]
pub(super) enum RunCommand {
    /// Create a state file from a plan (.plan is compiled; .json is checked)
    Init {
        /// The plan: a .plan source or a .json plan document
        plan: String,
        /// The state file to create (or --session, or left out with --store)
        #[arg(short, long, value_name = "STATE")]
        output: Option<String>,
        /// Give a parameter a value
        #[arg(long = "set", value_name = "NAME=VALUE", value_parser = parse_assignment)]
        set: Vec<(String, String)>,
        /// Overwrite an existing state file (starts its event log afresh)
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        imports: input::ImportArgs,
    },
    #[command(flatten)]
    TaskWork(TaskWork),
    #[command(flatten)]
    PlanEdit(PlanEdit),
    #[command(flatten)]
    PlanRead(PlanRead),
    #[command(flatten)]
    PlanCourse(PlanCourse),
    /// Replace the pending remainder with new steps from a JSON file (replan)
    Replan {
        /// The state file (made by `planc run init`); or --session; left out with --store
        state: Option<String>,
        /// A JSON list of task names or task objects (or {"steps": [...]}); `-` reads standard input
        steps: Option<String>,
    },
    /// Append a tool, message or error event to the event log (logEvent)
    Log {
        /// The state file (made by `planc run init`); or --session
        state: Option<String>,
        /// What it records: tool, message or error
        #[arg(long, value_enum)]
        kind: LogKindArg,
        /// What to record, as JSON (at most 64 KiB); `-` reads standard input
        #[arg(long, value_name = "JSON")]
        data: Option<String>,
        /// The task it is about (default: the agent's current task)
        #[arg(long, value_name = "ID")]
        task: Option<String>,
    },
    /// Follow the event log (one line per change)
    Watch {
        /// The state file (made by `planc run init`); or --session; left out with --store
        state: Option<String>,
        /// Print what is logged so far and stop
        #[arg(long)]
        no_follow: bool,
    },
    /// Print a Markdown block about the plan for an agent's system prompt
    Prompt {
        /// The state file (made by `planc run init`); or --session; left out with --store
        state: Option<String>,
    },
    /// Read an agent's message (standard input or --message) and apply its
    /// markers, transition words and the fallback; a missing state is created
    /// from the message's `[Step]` lines
    Observe {
        /// The state file (made by `planc run init`, or by the first message); or --session; left out with --store
        state: Option<String>,
        /// The agent's message (default: read standard input)
        #[arg(long, value_name = "TEXT")]
        message: Option<String>,
        /// The goal of a plan the message creates (default: its first line
        /// that is not a step)
        #[arg(long, value_name = "TEXT")]
        goal: Option<String>,
        /// Hold a task this message starts for this long without a sign of
        /// life (`30s`, `5m`, `1h`)
        #[arg(long, value_name = "DURATION", value_parser = parse_lease)]
        lease: Option<u64>,
        /// A tool the agent called in this round (repeatable): the first
        /// round with a tool call creates the plan
        #[arg(long = "tool-call", value_name = "NAME")]
        tool_calls: Vec<String>,
        /// The message is the assistant message as JSON, with its tool
        /// calls: OpenAI chat, OpenAI Responses or Anthropic
        #[arg(long)]
        assistant_json: bool,
    },
}

/// Commands that move tasks through their life: start, renew, finish.
#[derive(Subcommand)]
pub(super) enum TaskWork {
    /// Start the first executable task (startNextTask)
    Next {
        /// The state file (made by `planc run init`); or --session; left out with --store
        state: Option<String>,
        /// Only tasks assigned to this role
        #[arg(long, value_name = "ROLE")]
        assignee: Option<String>,
        /// Hold the task for this long without a sign of life (`30s`, `5m`,
        /// `1h`); then it goes back to pending for another agent
        #[arg(long, value_name = "DURATION", value_parser = parse_lease)]
        lease: Option<u64>,
    },
    /// Start a given task (startTask)
    Start {
        /// The state file (made by `planc run init`); or --session; left out with --store
        state: Option<String>,
        /// The task: its id or key
        id: Option<String>,
        /// Hold the task for this long without a sign of life (`30s`, `5m`, `1h`)
        #[arg(long, value_name = "DURATION", value_parser = parse_lease)]
        lease: Option<u64>,
    },
    /// Put a failed task back to pending, to be tried again (retryTask)
    Retry {
        /// The state file (made by `planc run init`); or --session; left out with --store
        state: Option<String>,
        /// The task: its id or key
        id: Option<String>,
    },
    /// Renew the leases of the tasks this agent holds (heartbeat)
    Heartbeat {
        /// The state file (made by `planc run init`); or --session; left out with --store
        state: Option<String>,
        /// The new length of the leases (default: each lease's own)
        #[arg(long, value_name = "DURATION", value_parser = parse_lease)]
        lease: Option<u64>,
    },
    /// Complete a task, by default the current one (completeTask)
    Complete {
        /// The state file (made by `planc run init`); or --session; left out with --store
        state: Option<String>,
        /// The task: its id or key (default: the current task)
        id: Option<String>,
        /// What the task achieved
        #[arg(long, value_name = "TEXT")]
        result: Option<String>,
        /// A file (path or URL) the task produced, kept in its
        /// `extra.attachments`; repeat for several
        #[arg(long = "attachment", value_name = "PATH")]
        attachments: Vec<String>,
    },
    /// Fail a task, by default the current one; retried while retries are left (failTask)
    Fail {
        /// The state file (made by `planc run init`); or --session; left out with --store
        state: Option<String>,
        /// The task: its id or key (default: the current task)
        id: Option<String>,
        /// What went wrong
        #[arg(long, value_name = "TEXT")]
        error: Option<String>,
        /// Fail for good even with retries left
        #[arg(long)]
        no_retry: bool,
    },
    /// Skip a task (skipTask)
    Skip {
        /// The state file (made by `planc run init`); or --session; left out with --store
        state: Option<String>,
        /// The task: its id or key
        id: Option<String>,
        /// Why it is skipped (kept as its result)
        #[arg(long, value_name = "TEXT")]
        reason: Option<String>,
    },
}

/// Commands that change the plan's tasks.
#[derive(Subcommand)]
pub(super) enum PlanEdit {
    /// Add a task; with --after X, tasks that depended on X depend on it instead (addTask)
    Add {
        /// The state file (made by `planc run init`); or --session; left out with --store
        state: Option<String>,
        /// What the new task is
        #[arg(long, value_name = "TEXT")]
        name: String,
        /// Insert after this task and rewire its dependents
        #[arg(long, value_name = "ID")]
        after: Option<String>,
        /// Dependencies, comma-separated ids or keys (default: the --after task)
        #[arg(long, value_name = "ID,…", value_delimiter = ',')]
        deps: Option<Vec<String>>,
        #[command(flatten)]
        details: TaskDetails,
    },
    /// Change a pending task (updateTask)
    Update {
        /// The state file (made by `planc run init`); or --session; left out with --store
        state: Option<String>,
        /// The task: its id or key
        id: Option<String>,
        /// A new name
        #[arg(long, value_name = "TEXT")]
        name: Option<String>,
        /// The new dependency list, comma-separated (an empty value clears it)
        #[arg(long, value_name = "ID,…", value_delimiter = ',')]
        deps: Option<Vec<String>>,
        #[command(flatten)]
        details: TaskDetails,
    },
    /// Remove a pending task; its dependents take over its dependencies (removeTask)
    Remove {
        /// The state file (made by `planc run init`); or --session; left out with --store
        state: Option<String>,
        /// The task: its id or key
        id: Option<String>,
    },
}

/// Commands that read the plan.
#[derive(Subcommand)]
pub(super) enum PlanRead {
    /// Show the current task, or a given one (getCurrentTask / getTaskById)
    Show {
        /// The state file (made by `planc run init`); or --session; left out with --store
        state: Option<String>,
        /// The task: its id or key (default: the current task)
        id: Option<String>,
    },
    /// List tasks (getTaskList)
    List {
        /// The state file (made by `planc run init`); or --session; left out with --store
        state: Option<String>,
        /// pending, in_progress, completed, failed, skipped or executable
        #[arg(long, value_name = "STATUS")]
        status: Option<String>,
        /// Only tasks assigned to this role
        #[arg(long, value_name = "ROLE")]
        assignee: Option<String>,
    },
    /// List the executable tasks (getExecutableTaskList)
    Ready {
        /// The state file (made by `planc run init`); or --session; left out with --store
        state: Option<String>,
        /// Only tasks assigned to this role
        #[arg(long, value_name = "ROLE")]
        assignee: Option<String>,
    },
    /// The plan's status, progress and counts (getPlanStatus)
    Status {
        /// The state file (made by `planc run init`); or --session; left out with --store
        state: Option<String>,
    },
}

/// Commands that pause, resume or restart the plan.
#[derive(Subcommand)]
pub(super) enum PlanCourse {
    /// Pause the plan: changes are refused until it is resumed (pausePlan)
    Pause {
        /// The state file (made by `planc run init`); or --session; left out with --store
        state: Option<String>,
    },
    /// Resume a paused plan (resumePlan)
    Resume {
        /// The state file (made by `planc run init`); or --session; left out with --store
        state: Option<String>,
    },
    /// Set every task back to pending (resetPlan)
    Reset {
        /// The state file (made by `planc run init`); or --session; left out with --store
        state: Option<String>,
    },
}

/// The kinds `planc run log` records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum LogKindArg {
    /// A tool call
    Tool,
    /// A message to the user
    Message,
    /// An error
    Error,
}
