//! The text protocol for agents that cannot call tools (the steps system): an agent's
//! message is one iteration; explicit markers complete or fail the current
//! task or add tasks; resume words continue a paused plan; `max_iterations`
//! pauses the plan with a progress summary.

use serde_json::json;

use crate::document::PlanStatus;

use super::error::{ErrorCode, OpError};
use super::events::{Event, EventKind};
use super::ops::{AddArgs, CompleteArgs, FailArgs, NoArgs, Op, StartNextArgs, TaskRef};
use super::prompt::progress_summary;
use super::results::{Observed, OpResult};
use super::{Applied, Runner};

/// Markers that complete the current task; the text before one is its result.
pub const DONE_MARKERS: [&str; 4] = ["[Done]", "[完成]", "[Step Done]", "[步骤完成]"];
/// Markers that fail the current task; the text after one is the reason.
pub const FAILED_MARKERS: [&str; 2] = ["[Failed]", "[失败]"];
/// The marker that declares a new task: `[Step] description` (one per line).
pub const STEP_MARKER: &str = "[Step]";
/// Words that resume a paused plan.
pub const RESUME_WORDS: [&str; 3] = ["继续", "continue", "resume"];

/// Reads one agent message into the plan: counts an iteration, applies its
/// markers, starts the next task when none is current, and pauses the plan
/// when `meta.max_iterations` is reached. Counts as one revision.
pub fn observe(runner: &mut Runner, message: &str) -> Result<Applied, OpError> {
    let mut events = Vec::new();
    let mut actions: Vec<String> = Vec::new();
    let step = |runner: &mut Runner, op: Op, events: &mut Vec<Event>, actions: &mut Vec<String>| {
        match runner.apply_unrevised(&op, &super::Caller::default()) {
            Ok(applied) => {
                if let Some(message) = applied.data.message() {
                    actions.push(message.to_owned());
                }
                events.extend(applied.events.iter().cloned());
                Ok(applied)
            }
            Err(error) => {
                actions.push(format!("{} ignored: {}", op.name(), error.message));
                Err(error)
            }
        }
    };

    let lower = message.to_lowercase();
    let paused = runner.doc.state.status == PlanStatus::Paused;
    let resuming = paused && RESUME_WORDS.iter().any(|w| lower.contains(w));
    if paused && !resuming {
        return Err(paused_error(runner));
    }
    // Both counters are checked before anything changes: a refused message
    // changes nothing.
    let revision = runner.next_revision()?;
    let iteration = if resuming {
        // A resumed plan gets a fresh iteration budget.
        1
    } else {
        runner
            .doc
            .state
            .iteration_count
            .checked_add(1)
            .ok_or_else(|| {
                OpError::overflow(
                    "state.iteration_count",
                    u64::MAX,
                    "reset the plan (resetPlan) to count again",
                )
            })?
    };
    if resuming {
        let _ = step(runner, Op::ResumePlan(NoArgs {}), &mut events, &mut actions);
        if runner.doc.state.status == PlanStatus::Paused {
            return Err(paused_error(runner));
        }
    }
    runner.doc.state.iteration_count = iteration;
    events.push(Event::plan(
        EventKind::Iteration,
        format!("Iteration {iteration}"),
    ));

    // `[Step] description` lines add tasks, each after the one before.
    let mut previous: Option<u32> = runner.doc.tasks.last().map(|t| t.id);
    for line in message.lines() {
        let Some(rest) = line.trim_start().strip_prefix(STEP_MARKER) else {
            continue;
        };
        let args = AddArgs {
            name: rest.trim().to_owned(),
            dependencies: Some(previous.map(TaskRef::Id).into_iter().collect()),
            ..AddArgs::default()
        };
        if let Ok(applied) = step(runner, Op::AddTask(args), &mut events, &mut actions) {
            if let OpResult::Added(added) = &applied.data {
                previous = Some(added.new_task.id);
            }
        }
    }

    let done = first_marker(message, &DONE_MARKERS);
    let failed = first_marker(message, &FAILED_MARKERS);
    let outcome = match (done, failed) {
        (Some(d), Some(f)) if f.0 < d.0 => Some((false, f)),
        (Some(d), _) => Some((true, d)),
        (None, Some(f)) => Some((false, f)),
        (None, None) => None,
    };
    if let Some((is_done, (at, len))) = outcome {
        if runner.doc.state.current_task_id.is_none() {
            let _ = step(
                runner,
                Op::StartNextTask(StartNextArgs::default()),
                &mut events,
                &mut actions,
            );
        }
        if runner.doc.state.current_task_id.is_some() {
            let before = clean(&message[..at]);
            let after = clean(message[at + len..].lines().next().unwrap_or(""));
            let op = if is_done {
                Op::CompleteTask(CompleteArgs {
                    task_id: None,
                    result: before.or(after),
                })
            } else {
                Op::FailTask(FailArgs {
                    task_id: None,
                    error_message: after.or(before),
                    should_retry: true,
                })
            };
            let _ = step(runner, op, &mut events, &mut actions);
        }
    }

    // Keep the agent on a task: start the next one when none is current.
    let active = matches!(
        runner.doc.state.status,
        PlanStatus::Idle | PlanStatus::Running
    );
    if active && runner.doc.state.current_task_id.is_none() && !runner.index.ready.is_empty() {
        let _ = step(
            runner,
            Op::StartNextTask(StartNextArgs::default()),
            &mut events,
            &mut actions,
        );
    }

    let mut summary = None;
    if let Some(max) = runner.doc.meta.max_iterations {
        let status = runner.doc.state.status;
        if iteration >= max && !matches!(status, PlanStatus::Completed | PlanStatus::Failed) {
            let _ = step(runner, Op::PausePlan(NoArgs {}), &mut events, &mut actions);
            summary = Some(progress_summary(runner));
        }
    }
    runner.doc.state.revision = revision;

    let current = runner
        .doc
        .state
        .current_task_id
        .and_then(|id| runner.doc.tasks.iter().find(|t| t.id == id))
        .cloned();
    let data = OpResult::Observed(Observed {
        iteration_count: iteration,
        max_iterations: runner.doc.meta.max_iterations,
        actions,
        current_task: current,
        plan_status: runner.doc.state.status,
        paused: runner.doc.state.status == PlanStatus::Paused,
        summary,
    });
    Ok(Applied { data, events })
}

/// `PLAN_NOT_ACTIVE` for a message to a paused plan.
fn paused_error(runner: &Runner) -> OpError {
    OpError::new(
        ErrorCode::PlanNotActive,
        "The plan is paused; say \"continue\" (继续) to resume it",
    )
    .with(json!({"status": "paused", "iteration_count": runner.doc.state.iteration_count}))
}

/// The earliest of `markers` in `text`: (byte offset, length).
fn first_marker(text: &str, markers: &[&str]) -> Option<(usize, usize)> {
    markers
        .iter()
        .filter_map(|m| text.find(m).map(|at| (at, m.len())))
        .min()
}

fn clean(text: &str) -> Option<String> {
    let text = text.trim().trim_start_matches([':', '：']).trim();
    (!text.is_empty()).then(|| text.to_owned())
}
