//! `planc run`: drive a plan's state file from the shell. Each subcommand
//! parses its arguments into a runner [`Op`] and hands it to the [`Store`];
//! every rule lives in `planc::runner`.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, Subcommand};
use planc::check::parse_assignment;
use planc::escape;
use planc::read::Bounds;
use planc::runner::access::PlanAccess;
use planc::runner::results::{Created, Prompted};
use planc::runner::{
    self, AddArgs, Applied, Caller, CompleteArgs, Face, FailArgs, ListArgs, LogArgs, LogKind,
    LogRecord, NoArgs, Op, OpError, OpResult, PlanStore, ReplanArgs, SkipArgs, StartNextArgs,
    Store, TaskIdArgs, TaskRef, UpdateArgs,
};
use serde_json::Value;

use super::input;
use super::output::{self, Color};
use super::{EXIT_FAILURE, EXIT_OK, EXIT_USAGE};

#[derive(Args)]
pub struct RunArgs {
    /// Print the result as the JSON envelope {"success", "data"|"error"}
    #[arg(long, global = true)]
    json: bool,
    /// How long a change waits for another writer's lock before giving up
    /// (STATE_LOCKED) [default: 5]; state files only, not with --store
    #[arg(
        long,
        global = true,
        value_name = "SECONDS",
        env = "PLANC_LOCK_TIMEOUT",
        value_parser = parse_seconds
    )]
    lock_timeout: Option<Duration>,
    /// Who is calling: each agent has its own current task, and the tasks it
    /// starts are held by it
    #[arg(long, global = true, value_name = "NAME", env = "PLANC_AGENT")]
    agent: Option<String>,
    /// Change a task another agent holds (complete, fail, skip, start, …):
    /// the change is logged as a task_taken_over event naming both agents;
    /// without it, another agent's task is refused (TASK_HELD)
    #[arg(long, global = true)]
    takeover: bool,
    /// Use the state of session KEY, `.sessions/KEY/plan.json` under the
    /// current directory, instead of a STATE path
    #[arg(long, global = true, value_name = "KEY", conflicts_with = "store")]
    session: Option<String>,
    /// Act on a plan in a store instead of a state file: `sqlite:PATH`,
    /// `postgres://…`, `dir:PATH` (a directory of JSON states) or a state
    /// file; the state file argument is then left out
    #[arg(long, global = true, value_name = "URL", requires = "plan_id")]
    store: Option<String>,
    /// The plan to act on in the --store
    #[arg(long, global = true, value_name = "ID", requires = "store")]
    plan_id: Option<String>,
    #[command(subcommand)]
    command: RunCommand,
}

/// A lease's length for clap: `30s`, `5m`, `2h`, `1d`, `1h30m` or seconds.
fn parse_lease(text: &str) -> Result<u64, String> {
    runner::parse_lease(text)
}

/// A number of seconds (`5`, `0.5`, `0` for no wait).
pub(super) fn parse_seconds(text: &str) -> Result<Duration, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .and_then(|secs| Duration::try_from_secs_f64(secs).ok())
        .ok_or_else(|| format!("`{text}` is not a number of seconds"))
}

/// The store of a state file, with the command line's lock settings.
fn open(state: &str, lock_timeout: Option<Duration>) -> Store {
    let store = Store::new(state).with_lock_notice(|lock| {
        eprintln!(
            "waiting for the lock {} (another planc is changing the state)…",
            lock.display()
        );
    });
    match lock_timeout {
        Some(timeout) => store.with_lock_timeout(timeout),
        None => store,
    }
}

/// The optional details `add` and `update` both take.
#[derive(Args)]
struct TaskDetails {
    /// Why the task is needed
    #[arg(long, value_name = "TEXT")]
    reasoning: Option<String>,
    /// The role that should do it
    #[arg(long, value_name = "ROLE")]
    assignee: Option<String>,
    /// Longer instructions
    #[arg(long, value_name = "TEXT")]
    description: Option<String>,
}

#[derive(Subcommand)]
enum RunCommand {
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
enum TaskWork {
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
enum PlanEdit {
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
enum PlanRead {
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
enum PlanCourse {
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
enum LogKindArg {
    /// A tool call
    Tool,
    /// A message to the user
    Message,
    /// An error
    Error,
}

fn task(id: &str) -> TaskRef {
    TaskRef::parse(id)
}

fn tasks(ids: Option<Vec<String>>) -> Option<Vec<TaskRef>> {
    ids.map(|ids| {
        ids.iter()
            .filter(|s| !s.trim().is_empty())
            .map(|s| task(s))
            .collect()
    })
}

/// What a `planc run` command acts on: a state file, or a plan in a store.
enum Target {
    File(Store),
    Plan {
        store: Arc<dyn PlanStore>,
        plan_id: String,
    },
}

impl Target {
    fn apply_as(&self, op: &Op, caller: &Caller) -> Result<Applied, OpError> {
        match self {
            Target::File(store) => store.apply_as(op, caller),
            Target::Plan { store, plan_id } => store.apply(plan_id, op, caller),
        }
    }

    fn runner(&self) -> Result<runner::Runner, OpError> {
        match self {
            Target::File(store) => store.runner(),
            Target::Plan { store, plan_id } => store.runner(plan_id),
        }
    }

    fn observe(
        &self,
        reply: &runner::Reply,
        caller: &Caller,
        goal: Option<&str>,
    ) -> Result<Applied, OpError> {
        match self {
            Target::File(store) => {
                <dyn PlanAccess>::observe_reply(store, reply, caller, goal, |_| Ok(()))
                    .map(|(applied, ())| applied)
            }
            // A plan of a store is made by `run init --store`, not by a message.
            Target::Plan { store, plan_id } => {
                let caller = caller.clone().at(runner::time::now_unix());
                runner::transact_with(&**store, plan_id, "observe", |r| {
                    let applied = runner::observe_reply(r, reply, &caller)?;
                    let events = applied.events.clone();
                    Ok((applied, events))
                })
                .map(|(applied, _)| applied)
            }
        }
    }
}

/// Where a command's plan is: its STATE argument, the file of `--session`
/// (never both, never neither), or a plan of `--store` (the STATE argument
/// left out); and the task id argument that follows STATE (with `--session`
/// or `--store` the first positional argument is the id).
struct Place {
    session: Option<String>,
    plan: Option<(Arc<dyn PlanStore>, String)>,
    lock_timeout: Option<Duration>,
}

impl Place {
    /// Where the command line puts the plan: opens `--store`, and for the
    /// commands that may create the state, the session's directory.
    fn of(args: &RunArgs) -> Result<Place, i32> {
        let creates = matches!(
            args.command,
            RunCommand::Init { .. } | RunCommand::Observe { .. }
        );
        if args.store.is_some() && args.lock_timeout.is_some() {
            // A store waits for its own locks (a JSON store 5 s, SQLite 30 s);
            // a wait it would not keep is refused, not ignored.
            return Err(usage(
                "--lock-timeout (or PLANC_LOCK_TIMEOUT) applies to state files, not to --store: \
                 a store waits for its own locks",
            ));
        }
        let plan = match (&args.store, &args.plan_id) {
            (Some(url), Some(plan_id)) => match runner::open_store(url) {
                Ok(store) => Some((store, plan_id.clone())),
                Err(error) => {
                    return Err(usage(&format!(
                        "cannot open the store {}: {}",
                        escape::line(url),
                        escape::line(&error.message)
                    )))
                }
            },
            _ => None,
        };
        let session = match &args.session {
            Some(key) => Some(session_state(key, creates)?),
            None => None,
        };
        Ok(Place {
            session,
            plan,
            lock_timeout: args.lock_timeout,
        })
    }

    /// The plan of the state file `state`, or of `--store`.
    fn target(&self, state: String) -> Target {
        match &self.plan {
            Some((store, plan_id)) => Target::Plan {
                store: Arc::clone(store),
                plan_id: plan_id.clone(),
            },
            None => Target::File(open(&state, self.lock_timeout)),
        }
    }

    /// The plan, for commands without a task id argument.
    fn state(&self, state: Option<String>) -> Result<Target, i32> {
        if self.plan.is_some() {
            return match state {
                Some(state) => Err(left_out(&state)),
                None => Ok(self.target(String::new())),
            };
        }
        let state = match (&self.session, state) {
            (Some(_), Some(state)) => return Err(both(&state)),
            (Some(session), None) => session.clone(),
            (None, Some(state)) => state,
            (None, None) => return Err(usage("give the state file (STATE) or --session KEY")),
        };
        Ok(self.target(state))
    }

    /// The plan and the optional task id.
    fn with_id(
        &self,
        state: Option<String>,
        id: Option<String>,
    ) -> Result<(Target, Option<String>), i32> {
        if self.plan.is_some() {
            return match id {
                Some(extra) => Err(left_out(&extra)),
                None => Ok((self.target(String::new()), state)),
            };
        }
        let (state, id) = match (&self.session, state, id) {
            (Some(_), Some(state), Some(_)) => return Err(both(&state)),
            (Some(_), Some(first), None) if looks_like_path(&first) => return Err(both(&first)),
            (Some(session), first, None) => (session.clone(), first),
            (None, Some(state), id) => (state, id),
            // Positional arguments fill in order: no id without a state.
            (_, None, _) => return Err(usage("give the state file (STATE) or --session KEY")),
        };
        Ok((self.target(state), id))
    }

    /// The plan and the task id, which the command needs.
    fn with_required_id(
        &self,
        state: Option<String>,
        id: Option<String>,
    ) -> Result<(Target, String), i32> {
        self.with_required(state, id, "the task (its id or key)")
    }

    /// [`Place::with_required_id`], the id read as a task reference.
    fn with_required_task(
        &self,
        state: Option<String>,
        id: Option<String>,
    ) -> Result<(Target, TaskRef), i32> {
        let (target, id) = self.with_required_id(state, id)?;
        Ok((target, task(&id)))
    }

    /// The plan and the argument after the state file, which the command needs.
    fn with_required(
        &self,
        state: Option<String>,
        second: Option<String>,
        what: &str,
    ) -> Result<(Target, String), i32> {
        match self.with_id(state, second)? {
            (target, Some(second)) => Ok((target, second)),
            (_, None) if self.plan.is_some() => Err(usage(&format!("give {what}"))),
            (_, None) => Err(usage(&format!("give {what} after the state file"))),
        }
    }
}

/// A state file argument given with `--store`.
fn left_out(argument: &str) -> i32 {
    usage(&format!(
        "unexpected argument `{}`: with --store the state file is left out",
        escape::line(argument)
    ))
}

/// Whether an argument where a task id may stand is rather a state file.
fn looks_like_path(text: &str) -> bool {
    text.contains(['/', '\\']) || text.ends_with(".json")
}

fn both(state: &str) -> i32 {
    usage(&format!(
        "give either --session or a state file, not both (`{state}` with --session)"
    ))
}

fn usage(message: &str) -> i32 {
    output::fatal(message);
    EXIT_USAGE
}

/// The state file of `--session KEY`, its directory created when `create`.
fn session_state(key: &str, create: bool) -> Result<String, i32> {
    let path = runner::session_path(key).map_err(|message| usage(&message))?;
    if create {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|error| {
                output::fatal(&format!("cannot create {}: {error}", dir.display()));
                EXIT_USAGE
            })?;
        }
    }
    Ok(path.display().to_string())
}

pub fn run(args: RunArgs) -> i32 {
    match run_command(args) {
        Ok(code) | Err(code) => code,
    }
}

fn run_command(args: RunArgs) -> Result<i32, i32> {
    let json = args.json;
    let mut caller = Caller::agent(args.agent.clone()).taking_over(args.takeover);
    let place = Place::of(&args)?;
    let (target, op) = match args.command {
        RunCommand::Init {
            plan,
            output,
            set,
            force,
            imports,
        } => {
            let target = place.state(output)?;
            return Ok(init(&plan, &target, set, &imports, force, json));
        }
        RunCommand::TaskWork(command) => command.op(&place, &mut caller)?,
        RunCommand::PlanEdit(command) => command.op(&place)?,
        RunCommand::PlanRead(command) => command.op(&place)?,
        RunCommand::PlanCourse(command) => command.op(&place)?,
        RunCommand::Replan { state, steps } => {
            let (target, steps) = place.with_required(state, steps, "the steps file (or `-`)")?;
            match read_steps(&steps)? {
                Ok(args) => (target, Op::Replan(args)),
                Err(error) => return Ok(report(Err(error), json)),
            }
        }
        RunCommand::Log {
            state,
            kind,
            data,
            task: about,
        } => {
            let target = place.state(state)?;
            match log_op(kind, data.as_deref(), about.as_deref())? {
                Ok(op) => (target, op),
                Err(error) => return Ok(report(Err(error), json)),
            }
        }
        RunCommand::Watch { state, no_follow } => {
            return Ok(watch(&place.state(state)?, no_follow, json))
        }
        RunCommand::Prompt { state } => {
            return Ok(prompt(&place.state(state)?, &caller, json));
        }
        RunCommand::Observe {
            state,
            message,
            goal,
            lease,
            tool_calls,
            assistant_json,
        } => {
            let target = place.state(state)?;
            let message = match message {
                Some(m) => m,
                None => read_stdin()?,
            };
            let reply = reply_of(message, assistant_json, tool_calls)?;
            caller.lease = lease;
            let result = target.observe(&reply, &caller, goal.as_deref());
            return Ok(report(result, json));
        }
    };
    Ok(report(target.apply_as(&op, &caller), json))
}

impl TaskWork {
    /// The plan the command acts on and its operation; a `--lease` goes to
    /// the caller.
    fn op(self, place: &Place, caller: &mut Caller) -> Result<(Target, Op), i32> {
        Ok(match self {
            TaskWork::Next {
                state,
                assignee,
                lease,
            } => {
                caller.lease = lease;
                let op = Op::StartNextTask(StartNextArgs { assignee });
                (place.state(state)?, op)
            }
            TaskWork::Start { state, id, lease } => {
                caller.lease = lease;
                let (target, task_id) = place.with_required_task(state, id)?;
                (target, Op::StartTask(TaskIdArgs { task_id }))
            }
            TaskWork::Retry { state, id } => {
                let (target, task_id) = place.with_required_task(state, id)?;
                (target, Op::RetryTask(TaskIdArgs { task_id }))
            }
            TaskWork::Heartbeat { state, lease } => {
                caller.lease = lease;
                (place.state(state)?, Op::Heartbeat(NoArgs {}))
            }
            TaskWork::Complete {
                state,
                id,
                result,
                attachments,
            } => {
                let (target, id) = place.with_id(state, id)?;
                let op = Op::CompleteTask(CompleteArgs {
                    task_id: id.as_deref().map(task),
                    result,
                    attachments: (!attachments.is_empty()).then_some(attachments),
                });
                (target, op)
            }
            TaskWork::Fail {
                state,
                id,
                error,
                no_retry,
            } => {
                let (target, id) = place.with_id(state, id)?;
                let op = Op::FailTask(FailArgs {
                    task_id: id.as_deref().map(task),
                    error_message: error,
                    should_retry: !no_retry,
                });
                (target, op)
            }
            TaskWork::Skip { state, id, reason } => {
                let (target, task_id) = place.with_required_task(state, id)?;
                (target, Op::SkipTask(SkipArgs { task_id, reason }))
            }
        })
    }
}

impl PlanEdit {
    /// The plan the command acts on and its operation.
    fn op(self, place: &Place) -> Result<(Target, Op), i32> {
        Ok(match self {
            PlanEdit::Add {
                state,
                name,
                after,
                deps,
                details,
            } => {
                let op = Op::AddTask(AddArgs {
                    name,
                    dependencies: tasks(deps),
                    reasoning: details.reasoning,
                    after_task_id: after.as_deref().map(task),
                    assignee: details.assignee,
                    description: details.description,
                });
                (place.state(state)?, op)
            }
            PlanEdit::Update {
                state,
                id,
                name,
                deps,
                details,
            } => {
                let (target, task_id) = place.with_required_task(state, id)?;
                let op = Op::UpdateTask(UpdateArgs {
                    task_id,
                    updates: None,
                    name,
                    dependencies: tasks(deps),
                    reasoning: details.reasoning,
                    assignee: details.assignee,
                    description: details.description,
                });
                (target, op)
            }
            PlanEdit::Remove { state, id } => {
                let (target, task_id) = place.with_required_task(state, id)?;
                (target, Op::RemoveTask(TaskIdArgs { task_id }))
            }
        })
    }
}

impl PlanRead {
    /// The plan the command reads and its query.
    fn op(self, place: &Place) -> Result<(Target, Op), i32> {
        Ok(match self {
            PlanRead::Show { state, id } => match place.with_id(state, id)? {
                (target, None) => (target, Op::GetCurrentTask(NoArgs {})),
                (target, Some(id)) => (target, Op::GetTaskById(TaskIdArgs { task_id: task(&id) })),
            },
            PlanRead::List {
                state,
                status,
                assignee,
            } => (
                place.state(state)?,
                Op::GetTaskList(ListArgs { status, assignee }),
            ),
            PlanRead::Ready { state, assignee } => (
                place.state(state)?,
                Op::GetExecutableTaskList(StartNextArgs { assignee }),
            ),
            PlanRead::Status { state } => (place.state(state)?, Op::GetPlanStatus(NoArgs {})),
        })
    }
}

impl PlanCourse {
    /// The plan the command acts on and its operation.
    fn op(self, place: &Place) -> Result<(Target, Op), i32> {
        Ok(match self {
            PlanCourse::Pause { state } => (place.state(state)?, Op::PausePlan(NoArgs {})),
            PlanCourse::Resume { state } => (place.state(state)?, Op::ResumePlan(NoArgs {})),
            PlanCourse::Reset { state } => (place.state(state)?, Op::ResetPlan(NoArgs {})),
        })
    }
}

/// `planc run prompt`: the Markdown block for the caller, or its envelope.
fn prompt(target: &Target, caller: &Caller, json: bool) -> i32 {
    match target.runner() {
        Ok(runner) => {
            let text = runner::prompt_as(&runner, caller);
            if json {
                let applied = Applied {
                    data: OpResult::Prompted(Prompted { prompt: text }),
                    events: Vec::new(),
                };
                report(Ok(applied), true)
            } else {
                print!("{text}");
                EXIT_OK
            }
        }
        Err(error) => report(Err(error), json),
    }
}

/// The `logEvent` of `planc run log`: `data` is JSON text, or `-` for
/// standard input (exit 2 when it cannot be read); data that is not JSON is
/// the operation's error.
fn log_op(
    kind: LogKindArg,
    data: Option<&str>,
    about: Option<&str>,
) -> Result<Result<Op, OpError>, i32> {
    let data = match data {
        None => Value::Null,
        Some(text) => {
            let text = if text == "-" {
                read_stdin()?
            } else {
                text.to_owned()
            };
            match serde_json::from_str(&text) {
                Ok(value) => value,
                Err(error) => {
                    let error = OpError::new(
                        runner::ErrorCode::InvalidArgument,
                        format!("--data is not JSON: {error}"),
                    )
                    .with(serde_json::json!({"field": "data"}));
                    return Ok(Err(error));
                }
            }
        }
    };
    let kind = match kind {
        LogKindArg::Tool => LogKind::Tool,
        LogKindArg::Message => LogKind::Message,
        LogKindArg::Error => LogKind::Error,
    };
    Ok(Ok(Op::LogEvent(LogArgs {
        kind,
        data,
        task_id: about.map(task),
    })))
}

/// Prints a result as the envelope (`--json`) or a short summary; the exit code.
/// Advice (in errors, and in why nothing started) names commands and
/// flags, not MCP operations.
fn report(result: Result<Applied, OpError>, json: bool) -> i32 {
    let result = result.map(|mut applied| {
        applied.data = applied.data.spelt_for(Face::Cli);
        applied
    });
    match result.map_err(|error| error.spelt_for(Face::Cli)) {
        Ok(applied) => {
            if json {
                print_json(&applied.envelope());
            } else {
                print!("{}", super::run_text::summary(&applied.data));
            }
            EXIT_OK
        }
        Err(error) => {
            if json {
                print_json(&error.envelope());
            } else {
                eprintln!("error[{}]: {}", error.code, escape::line(&error.message));
            }
            // A state that cannot be read is an unreadable input file.
            if error.is_unreadable_state() {
                EXIT_USAGE
            } else {
                EXIT_FAILURE
            }
        }
    }
}

fn print_json(value: &Value) {
    print!("{}", planc::document::json_text(value));
}

fn init(
    plan: &str,
    target: &Target,
    set: Vec<(String, String)>,
    imports: &input::ImportArgs,
    force: bool,
    json: bool,
) -> i32 {
    let state = match target {
        Target::File(store) => store.path().display().to_string(),
        Target::Plan { store, .. } => store.url(),
    };
    let (input, loaded) = match input::open_plan(plan, set, imports, Color::Auto) {
        Ok(opened) => opened,
        Err(code) => return code,
    };
    let (diagnostics, sources) = (loaded.diagnostics.clone(), loaded.sources.clone());
    let Some(document) = loaded.clean_document() else {
        output::human(&diagnostics, &sources, Color::Auto);
        eprintln!(
            "{}: no state created: the plan has errors",
            escape::path(&input.name)
        );
        return EXIT_FAILURE;
    };
    let created = match target {
        Target::File(store) => store.create(document, force),
        Target::Plan { store, plan_id } => store.create(plan_id, document, force),
    };
    match created {
        Ok(doc) => {
            if json {
                let created = Created {
                    message: format!("Created {state} from {}", input.name),
                    state,
                    plan_id: doc.meta.id.clone(),
                    total_tasks: doc.tasks.len(),
                    revision: doc.state.revision,
                };
                let applied = Applied {
                    data: OpResult::Created(created),
                    events: Vec::new(),
                };
                print_json(&applied.envelope());
            } else {
                println!(
                    "created {}: plan `{}`, {} task(s)",
                    escape::path(&state),
                    escape::line(&doc.meta.id),
                    doc.tasks.len()
                );
            }
            EXIT_OK
        }
        Err(error) => report(Err(error), json),
    }
}

/// Standard input as text, bounded like a file (`planc::read`): exit 2 when
/// it cannot be read, is too large or is not UTF-8.
/// The reply `run observe` reads: the message as text, or as an assistant
/// message in JSON (`--assistant-json`), with the `--tool-call` names.
fn reply_of(
    message: String,
    assistant_json: bool,
    tool_calls: Vec<String>,
) -> Result<runner::Reply, i32> {
    let mut reply = if assistant_json {
        let value: serde_json::Value = serde_json::from_str(&message)
            .map_err(|e| usage(&format!("--assistant-json: the message is not JSON: {e}")))?;
        runner::Reply::from_json(&value).map_err(|e| usage(&format!("--assistant-json: {e}")))?
    } else {
        runner::Reply::text(message)
    };
    for name in tool_calls {
        if name.trim().is_empty() {
            return Err(usage("--tool-call takes the name of a tool"));
        }
        reply.tool_calls.push(runner::ToolCall::named(name));
    }
    Ok(reply)
}

fn read_stdin() -> Result<String, i32> {
    let text = planc::read::read_stream(std::io::stdin().lock(), planc::read::MAX_FILE_BYTES)
        .map_err(std::io::Error::from)
        .and_then(|bytes| {
            String::from_utf8(bytes)
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
        });
    text.map_err(|error| {
        output::fatal(&format!("cannot read standard input: {error}"));
        EXIT_USAGE
    })
}

/// The steps of `planc run replan`: a JSON list, or an object with `steps`.
fn read_steps(path: &str) -> Result<Result<ReplanArgs, OpError>, i32> {
    let text = if path == "-" {
        read_stdin()?
    } else {
        match planc::read::read_to_string(Path::new(path), Bounds::FILES_AND_PIPES) {
            Ok(text) => text,
            Err(error) => {
                output::fatal(&format!("cannot read {path}: {error}"));
                return Err(EXIT_USAGE);
            }
        }
    };
    let bad = |message: String| OpError::new(runner::ErrorCode::InvalidArgument, message);
    let value: Value = match serde_json::from_str(&text) {
        Ok(value) => value,
        Err(error) => return Ok(Err(bad(format!("{path} is not JSON: {error}")))),
    };
    let value = match value {
        Value::Array(steps) => serde_json::json!({"steps": steps}),
        other => other,
    };
    Ok(serde_json::from_value(value).map_err(|error| {
        bad(format!(
            "{path}: expected a list of task names or task objects: {error}"
        ))
    }))
}

/// Prints the committed records of the event log, then follows it until
/// interrupted (unless `no_follow`).
fn watch(target: &Target, no_follow: bool, json: bool) -> i32 {
    let (store, plan_id) = match target {
        Target::File(store) => return watch_file(store, no_follow, json),
        Target::Plan { store, plan_id } => (store, plan_id),
    };
    let mut after = 0;
    loop {
        match store.events(plan_id, after, 1000) {
            Ok(events) => {
                for event in &events {
                    after = event.seq;
                    match serde_json::to_string(&event.record) {
                        Ok(line) => {
                            print_record(&line, json);
                        }
                        Err(error) => {
                            output::fatal(&format!("cannot print an event: {error}"));
                            return EXIT_FAILURE;
                        }
                    }
                }
                if events.len() == 1000 {
                    continue;
                }
            }
            Err(error) => return report(Err(error), json),
        }
        if no_follow {
            return EXIT_OK;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// [`watch`] for a state file: follows its event log.
fn watch_file(store: &Store, no_follow: bool, json: bool) -> i32 {
    let mut reader = match store.log_reader() {
        Ok(reader) => reader,
        Err(error) => {
            output::fatal(&error.message);
            return EXIT_USAGE;
        }
    };
    let mut malformed = false;
    loop {
        match reader.read_committed() {
            Ok(lines) => {
                for line in lines {
                    malformed |= !print_record(&line, json);
                }
            }
            Err(error) => {
                output::fatal(&format!(
                    "cannot read {}: {error}",
                    escape::path(&reader.path().to_string_lossy())
                ));
                return EXIT_USAGE;
            }
        }
        if no_follow {
            return if malformed { EXIT_FAILURE } else { EXIT_OK };
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Prints one line of the event log; says whether it was JSON. With
/// `--json` a line that is not is reported on standard error (escaped), so
/// standard output stays a JSON value a line.
fn print_record(line: &str, json: bool) -> bool {
    if json {
        if serde_json::from_str::<serde::de::IgnoredAny>(line).is_err() {
            output::fatal(&format!(
                "the event log holds a line that is not JSON: {}",
                escape::line(line)
            ));
            return false;
        }
        println!("{line}");
        return true;
    }
    match serde_json::from_str::<LogRecord>(line) {
        Ok(record) => {
            for event in &record.events {
                let task = event
                    .task_id
                    .map(|id| format!(" #{id}"))
                    .unwrap_or_default();
                let by = event
                    .agent
                    .as_deref()
                    .map(|agent| format!(" ({})", escape::line(agent)))
                    .unwrap_or_default();
                println!(
                    "r{} {} {}{task}{by}: {}",
                    record.revision,
                    escape::line(&record.at),
                    event.kind.as_str(),
                    escape::line(&event.message)
                );
            }
        }
        Err(_) => println!("{}", escape::line(line)),
    }
    true
}
