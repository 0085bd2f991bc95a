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
use planc::runner::access::{PlanAccess, StorePlan};
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

mod commands;
mod place;
mod plan_input;
mod watch;

use commands::{LogKindArg, PlanCourse, PlanEdit, PlanRead, RunCommand, TaskWork};
use place::{Place, Target};
use plan_input::{init, read_stdin, read_steps, reply_of};
use watch::watch;

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
    /// When `run status` and `run list` colour their table (auto: when standard output
    /// is a terminal and NO_COLOR is unset)
    #[arg(long, global = true, value_enum, default_value_t)]
    color: Color,
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

fn usage(message: &str) -> i32 {
    output::fatal(message);
    EXIT_USAGE
}

pub fn run(args: RunArgs) -> i32 {
    match run_command(args) {
        Ok(code) | Err(code) => code,
    }
}

fn run_command(args: RunArgs) -> Result<i32, i32> {
    let json = args.json;
    let look = super::run_table::Look::for_stdout(args.color);
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
    Ok(apply_and_report(&target, &op, &caller, json, &look))
}

/// Applies `op` and prints its result as [`report`] does; `run status` and
/// `run list` as tables (without `--json`).
fn apply_and_report(
    target: &Target,
    op: &Op,
    caller: &Caller,
    json: bool,
    look: &super::run_table::Look,
) -> i32 {
    let result = target.apply_as(op, caller);
    if json {
        return report(result, json);
    }
    // `run status` shows the table of every task under its counts.
    let tasks = match &result {
        Ok(Applied {
            data: OpResult::Status(_),
            ..
        }) => {
            let every = Op::GetTaskList(ListArgs::default());
            match target.apply_as(&every, caller) {
                Ok(Applied {
                    data: OpResult::TaskList(list),
                    ..
                }) => list.tasks,
                _ => Vec::new(),
            }
        }
        _ => Vec::new(),
    };
    report_table(result, look, &tasks)
}

/// Prints a result as [`report`] does, `run status` and `run list` as a
/// table (`tasks`: every task, for the status); the exit code.
fn report_table(
    result: Result<Applied, OpError>,
    look: &super::run_table::Look,
    tasks: &[planc::document::TaskDoc],
) -> i32 {
    use super::run_table;
    match result {
        Ok(applied) => match applied.data.spelt_for(Face::Cli) {
            OpResult::Status(report) => {
                print!("{}", run_table::status(&report, tasks, look));
                EXIT_OK
            }
            OpResult::TaskList(list) => {
                print!("{}", run_table::list(&list.tasks, "no tasks", look));
                EXIT_OK
            }
            data => report(
                Ok(Applied {
                    data,
                    events: applied.events,
                }),
                false,
            ),
        },
        Err(error) => report(Err(error), false),
    }
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
