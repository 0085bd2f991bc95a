//! The text protocol for agents that cannot call tools (the steps system): an agent's
//! reply is one round. A step advances in three ways, first match wins:
//!
//! 1. an explicit marker (`[Done]`, `[完成]`, `[Failed] reason`…), at once;
//! 2. a turn to the next step ([`super::step_turn`]: the agent's step
//!    numbers, a clause that opens with a transition word and goes on with
//!    the next step's work, a statement that the step is done, or the next
//!    step's words in the reply and its tool calls), once the agent has
//!    spent `transition_rounds` rounds on the step (default 1; the agent's
//!    step numbers need none); or a final
//!    answer (no tool call: a report, or on the plan's last step) at once —
//!    neither in a message that resumes a paused plan;
//! 3. the fallback, once it has spent `fallback_rounds` rounds on it
//!    (default 5) without either, in a reply without tool calls.
//!
//! `[Step] description` lines add steps (a step already in the plan is not
//! added again); resume words continue a paused plan; `max_iterations`
//! pauses the plan with a progress summary. The rounds spent on each task
//! in progress live in `state.step_rounds`.

use std::collections::HashMap;

use serde_json::json;

use crate::document::{
    PlanStatus, StepRounds, TaskStatus, DEFAULT_FALLBACK_ROUNDS, DEFAULT_TRANSITION_ROUNDS,
};

use super::error::{ErrorCode, OpError};
use super::events::{Event, EventKind};
use super::ops::{AddArgs, CompleteArgs, FailArgs, NoArgs, Op, StartNextArgs, TaskRef};
use super::prompt::{summary, SummaryReason};
use super::reply::Reply;
use super::reply_plan::{declared_steps, same_step};
use super::results::Summary;
use super::results::{Advance, Observed, OpResult};
use super::step_done::{is_report, not_final};
use super::step_markers::{first_marker, first_word, DONE_MARKERS, FAILED_MARKERS, RESUME_WORDS};
use super::step_turn::{find_numbered_turn, find_turn};
use super::{Applied, Caller, Runner};

/// Reads one agent message (text alone) into the plan for `caller`: see
/// [`observe_reply`].
pub fn observe(runner: &mut Runner, message: &str, caller: &Caller) -> Result<Applied, OpError> {
    observe_reply(runner, &Reply::text(message), caller)
}

/// Reads one agent reply (its text and tool calls) into the plan for
/// `caller`: counts an iteration, applies its markers, a turn to the next
/// step and the fallback to the caller's current task, starts the next
/// task when the caller has none, and pauses the plan when
/// `meta.max_iterations` is reached. Counts as one revision.
pub fn observe_reply(
    runner: &mut Runner,
    reply: &Reply,
    caller: &Caller,
) -> Result<Applied, OpError> {
    caller.check()?;
    let message = reply.text.as_str();
    let paused = runner.doc.state.status == PlanStatus::Paused;
    let resuming = paused && first_word(message, &RESUME_WORDS).is_some();
    if paused && !resuming {
        return Err(paused_error(runner));
    }
    // Both counters and the steps are checked before anything changes: a
    // refused message changes nothing.
    let steps = declared_steps(message)?;
    let revision = runner.next_revision()?;
    let iteration = next_iteration(runner, resuming)?;
    let mut round = Round {
        runner,
        caller,
        message,
        reply,
        events: Vec::new(),
        actions: Vec::new(),
        summary: None,
    };
    if resuming {
        round.resume()?;
    }
    round.runner.doc.state.iteration_count = iteration;
    round.events.push(Event::plan(
        EventKind::Iteration,
        format!("Iteration {iteration}"),
    ));
    let was_empty = round.runner.doc.tasks.is_empty();
    round.add_steps(steps);

    // The caller's task when the message came, and the rounds it had had.
    let started_on = round.current_id();
    let rounds_before = started_on.map_or(0, |id| rounds_of(round.runner, id));
    let marked = marker(message);
    let advanced = match marked {
        Some(marker) => round.apply_marker(marker),
        None => match started_on.filter(|_| is_active(round.runner)) {
            Some(id) => round.advance_without_marker(id, rounds_before, resuming),
            None => None,
        },
    };
    round.keep_on_a_task();
    round.count(started_on, rounds_before, marked.is_some(), was_empty);
    if resuming {
        // Where the plan stands after the message, which may have finished a step.
        round.summary = Some(summary(round.runner, caller, SummaryReason::Resumed));
    }
    round.pause_at_the_limit(iteration);
    round.finish(revision, iteration, advanced, resuming)
}

/// The iteration a message counts as: the next one, or the first of a
/// fresh budget for a message that resumes the plan.
fn next_iteration(runner: &Runner, resuming: bool) -> Result<u64, OpError> {
    if resuming {
        return Ok(1);
    }
    runner
        .doc
        .state
        .iteration_count
        .checked_add(1)
        .ok_or_else(|| {
            OpError::overflow(
                "state.iteration_count",
                u64::MAX,
                super::advice::Advice::RESET_COUNT.mcp,
            )
        })
}

/// The first marker of a message, done or failed: whether it is done, and
/// where it stands (byte offset, length).
fn marker(message: &str) -> Option<(bool, (usize, usize))> {
    let done = first_marker(message, &DONE_MARKERS);
    let failed = first_marker(message, &FAILED_MARKERS);
    match (done, failed) {
        (Some(d), Some(f)) if f.0 < d.0 => Some((false, f)),
        (Some(d), _) => Some((true, d)),
        (None, Some(f)) => Some((false, f)),
        (None, None) => None,
    }
}

/// A step of a reply, found in the plan: a task it has, or the `k`th step
/// the reply adds.
#[derive(Clone, Copy)]
enum Step {
    Task(u32),
    New(usize),
}

/// The id of the task an `addTask` added.
fn added_id(applied: &Applied) -> Option<u32> {
    match &applied.data {
        OpResult::Added(added) => Some(added.new_task.id),
        _ => None,
    }
}

/// One message being read: the operations it applies, their events, and
/// what it did in words.
struct Round<'r> {
    runner: &'r mut Runner,
    caller: &'r Caller,
    message: &'r str,
    reply: &'r Reply,
    events: Vec<Event>,
    actions: Vec<String>,
    /// The progress summary, when the message resumed the plan or reached
    /// the iteration limit.
    summary: Option<Summary>,
}

impl Round<'_> {
    /// Applies `op` as part of the round; a refused one is told in the
    /// actions and changes nothing.
    fn step(&mut self, op: Op) -> Result<Applied, OpError> {
        match self.runner.apply_unrevised(&op, self.caller) {
            Ok(applied) => {
                if let Some(message) = applied.data.message() {
                    self.actions.push(message.to_owned());
                }
                self.events.extend(applied.events.iter().cloned());
                Ok(applied)
            }
            Err(error) => {
                self.actions
                    .push(format!("{} ignored: {}", op.name(), error.message));
                Err(error)
            }
        }
    }

    /// The id of the caller's current task.
    fn current_id(&self) -> Option<u32> {
        self.runner
            .current_of(self.caller)
            .map(|i| self.runner.task(i).id)
    }

    /// Resumes the paused plan (the summary is made once the message is read).
    fn resume(&mut self) -> Result<(), OpError> {
        let _ = self.step(Op::ResumePlan(NoArgs {}));
        if self.runner.doc.state.status == PlanStatus::Paused {
            return Err(paused_error(self.runner));
        }
        Ok(())
    }

    /// `[Step] description` lines add tasks, each after the one before; a
    /// step the plan already has (a restated plan) is not added again.
    /// Linear in the steps and the plan's tasks: the plan's steps are
    /// looked up by their compared form, and the new ones added at once.
    fn add_steps(&mut self, steps: Vec<String>) {
        let mut known: HashMap<String, Step> = HashMap::new();
        for task in &self.runner.doc.tasks {
            known
                .entry(same_step(&task.name))
                .or_insert(Step::Task(task.id));
        }
        let mut new = Vec::new();
        let mut told = Vec::with_capacity(steps.len());
        for name in steps {
            let same = same_step(&name);
            match known.get(&same) {
                Some(&step) => told.push((Some(name), step)),
                None => {
                    known.insert(same, Step::New(new.len()));
                    told.push((None, Step::New(new.len())));
                    new.push(name);
                }
            }
        }
        let mut added: Vec<Option<Result<Applied, OpError>>> =
            self.add_new_steps(new).into_iter().map(Some).collect();
        // What became of each new step: its task, or why it was refused (a
        // step said again is refused again, as a second add would be).
        let outcome: Vec<Result<u32, String>> = added
            .iter()
            .map(|a| match a {
                Some(Ok(applied)) => added_id(applied).ok_or_else(String::new),
                Some(Err(error)) => Err(error.message.clone()),
                None => Err(String::new()),
            })
            .collect();
        for (again, step) in told {
            let outcome = match step {
                Step::Task(id) => Ok(id),
                Step::New(k) => outcome[k].clone(),
            };
            match (again, step, outcome) {
                (None, Step::New(k), _) => match added[k].take() {
                    Some(Ok(applied)) => {
                        if let Some(message) = applied.data.message() {
                            self.actions.push(message.to_owned());
                        }
                        self.events.extend(applied.events);
                    }
                    Some(Err(error)) => self
                        .actions
                        .push(format!("addTask ignored: {}", error.message)),
                    None => {}
                },
                (Some(name), _, Ok(id)) => self.actions.push(format!(
                    "Step \"{}\" is already task {id}: not added again",
                    crate::escape::line(&name),
                )),
                (Some(_), _, Err(message)) => {
                    self.actions.push(format!("addTask ignored: {message}"));
                }
                (None, Step::Task(_), _) => {}
            }
        }
    }

    /// Adds `names` as tasks, each after the one before, the first after
    /// the plan's last task: what each add did, in order. The first is
    /// added alone (it may change the plan's status, whose event then comes
    /// right after it, as it always has), the rest in one go.
    fn add_new_steps(&mut self, mut names: Vec<String>) -> Vec<Result<Applied, OpError>> {
        if names.is_empty() {
            return Vec::new();
        }
        let rest = names.split_off(1);
        let previous: Option<u32> = self.runner.doc.tasks.last().map(|t| t.id);
        let first = names.pop().unwrap_or_default();
        let args = AddArgs {
            name: first,
            dependencies: Some(previous.map(TaskRef::Id).into_iter().collect()),
            ..AddArgs::default()
        };
        let first = self.runner.apply_unrevised(&Op::AddTask(args), self.caller);
        let after = match &first {
            Ok(applied) => added_id(applied),
            Err(_) => previous,
        };
        let mut added = vec![first];
        if rest.is_empty() {
            return added;
        }
        // A name over its limit is ignored, as `addTask` would refuse it;
        // the others are chained past it.
        let refused: Vec<Option<OpError>> = rest.iter().map(|name| name_too_long(name)).collect();
        let valid: Vec<String> = rest
            .into_iter()
            .zip(&refused)
            .filter(|(_, refused)| refused.is_none())
            .map(|(name, _)| name)
            .collect();
        let mut chain = match self.runner.add_chain(&valid, after) {
            Ok(chain) => chain.into_iter().map(Ok).collect::<Vec<_>>(),
            Err(error) => valid.iter().map(|_| Err(error.clone())).collect(),
        }
        .into_iter();
        for refused in refused {
            match refused {
                Some(error) => added.push(Err(error)),
                None => added.extend(chain.next().map(|applied| {
                    applied.map(|mut applied| {
                        self.runner.attach(&mut applied.events);
                        applied
                    })
                })),
            }
        }
        added
    }

    /// Completes or fails the caller's task (starting one first when it has
    /// none) by the marker at `at`: the text before a done marker is the
    /// result, the line after a failed one the reason. What advanced the
    /// task, and the marker, when it completed.
    fn apply_marker(
        &mut self,
        (is_done, (at, len)): (bool, (usize, usize)),
    ) -> Option<(Advance, String)> {
        if self.runner.current_of(self.caller).is_none() && is_active(self.runner) {
            let _ = self.step(Op::StartNextTask(StartNextArgs::default()));
        }
        let task_id = Some(TaskRef::Id(self.current_id()?));
        let message = self.message;
        let before = clean(&message[..at]);
        let after = clean(message[at + len..].lines().next().unwrap_or(""));
        let op = if is_done {
            Op::CompleteTask(CompleteArgs {
                task_id,
                result: before.or(after),
                attachments: None,
            })
        } else {
            Op::FailTask(FailArgs {
                task_id,
                error_message: after.or(before),
                should_retry: true,
            })
        };
        let completed = self.step(op).is_ok() && is_done;
        completed.then(|| (Advance::Marker, message[at..at + len].to_owned()))
    }

    /// Without a marker, task `id` moves on by a turn to the next step once
    /// it has had `transition_rounds`, or by the fallback after
    /// `fallback_rounds`.
    fn advance_without_marker(
        &mut self,
        id: u32,
        rounds_before: u64,
        resuming: bool,
    ) -> Option<(Advance, String)> {
        let meta = &self.runner.doc.meta;
        let transition_after = meta.transition_rounds.unwrap_or(DEFAULT_TRANSITION_ROUNDS);
        let fallback_after = meta.fallback_rounds.unwrap_or(DEFAULT_FALLBACK_ROUNDS);
        let message = self.message;
        // "continue" that resumes a plan says nothing about the step; the
        // agent's own step numbers ("Step 3 done.") need no round on it.
        let turn = match (resuming, rounds_before >= transition_after) {
            (true, _) => None,
            (false, true) => self.turn(id),
            (false, false) => self.numbered_turn(id),
        };
        // A final answer is the step's work itself: it needs no round before.
        let answer = (turn.is_none() && !resuming)
            .then(|| self.final_answer(id))
            .flatten();
        let skipped = turn.as_ref().map_or(0, |t| t.skipped);
        let (how, result, what) = match (turn, answer) {
            (Some(turn), _) => (
                Advance::Transition,
                clean(&message[..turn.at]),
                turn.matched,
            ),
            (None, Some(steps)) => return self.complete_by_answer(id, rounds_before, steps),
            // A reply that calls tools is still at work: the turn rules
            // judge whose work that is, and the fallback waits.
            (None, None) if rounds_before >= fallback_after && self.reply.tool_calls.is_empty() => {
                (Advance::Fallback, None, format!("{rounds_before} rounds"))
            }
            (None, None) => return None,
        };
        self.actions.push(match how {
            Advance::Transition if what.starts_with("tool ") || what.contains(' ') => format!(
                "The next step's work ({what}) after {rounds_before} round(s) on task {id} moves on"
            ),
            Advance::Transition => format!(
                "The transition word \"{what}\" after {rounds_before} round(s) on task {id} moves on"
            ),
            _ => format!(
                "{rounds_before} round(s) on task {id} without a marker (fallback_rounds {fallback_after}): moving on"
            ),
        });
        let op = Op::CompleteTask(CompleteArgs {
            task_id: Some(TaskRef::Id(id)),
            result: result.clone(),
            attachments: None,
        });
        let completed = self.step(op).is_ok();
        if completed {
            self.complete_following(skipped, result);
        }
        completed.then_some((how, what))
    }

    /// Starts and completes the `count` steps after the one just completed
    /// (the agent said it finished them too), each with `result`.
    fn complete_following(&mut self, count: usize, result: Option<String>) {
        for _ in 0..count {
            if self.runner.index.ready.is_empty() {
                return;
            }
            let Ok(started) = self.step(Op::StartNextTask(StartNextArgs::default())) else {
                return;
            };
            let Some(id) = self.current_id() else {
                return;
            };
            let _ = started;
            let _ = self.step(Op::CompleteTask(CompleteArgs {
                task_id: Some(TaskRef::Id(id)),
                result: result.clone(),
                attachments: None,
            }));
        }
    }

    /// Completes task `id` by the agent's final answer (the whole reply is
    /// its result), and the plan's last step too when `steps` is 2.
    fn complete_by_answer(
        &mut self,
        id: u32,
        rounds_before: u64,
        steps: usize,
    ) -> Option<(Advance, String)> {
        self.actions.push(format!(
            "A final answer (no tool call) after {rounds_before} round(s) on task {id} completes it"
        ));
        let result = clean(self.message);
        let op = Op::CompleteTask(CompleteArgs {
            task_id: Some(TaskRef::Id(id)),
            result: result.clone(),
            attachments: None,
        });
        if self.step(op).is_err() {
            return None;
        }
        self.complete_following(steps - 1, result);
        Some((Advance::Transition, "final answer".to_owned()))
    }

    /// Whether the reply turns from task `id` to the step after it (the
    /// next pending task in plan order); never on the plan's last step.
    fn turn(&self, id: u32) -> Option<super::step_turn::Turn> {
        let tasks = &self.runner.doc.tasks;
        let at = *self.runner.index.position.get(&id)?;
        let next = tasks[at + 1..]
            .iter()
            .chain(&tasks[..at])
            .find(|t| t.status == TaskStatus::Pending)?;
        find_turn(self.reply, &step_text(&tasks[at]), &step_text(next), at + 1)
    }

    /// Whether the reply names, by the agent's own step numbers, task `id`
    /// (or a later step) done, or a later step begun.
    fn numbered_turn(&self, id: u32) -> Option<super::step_turn::Turn> {
        let at = *self.runner.index.position.get(&id)?;
        find_numbered_turn(self.reply, at + 1)
    }

    /// Whether the reply is the agent's final answer for task `id`: no
    /// tool call, no question, no "still" or "again" at its end, and a report or the plan's last step (the
    /// agent's loop ends on a reply without tool calls). How many steps it
    /// completes: a report also the plan's last step when only that one
    /// would remain.
    fn final_answer(&self, id: u32) -> Option<usize> {
        if !self.reply.tool_calls.is_empty() || not_final(self.message) {
            return None;
        }
        let tasks = &self.runner.doc.tasks;
        let at = *self.runner.index.position.get(&id)?;
        let pending = tasks
            .iter()
            .filter(|t| t.id != id && !t.status.is_done() && t.status != TaskStatus::InProgress)
            .count();
        let report = is_report(self.message);
        match pending {
            0 => Some(1),
            1 if report && at + 2 == tasks.len() => Some(2),
            _ if report => Some(1),
            _ => None,
        }
    }

    /// Keeps the agent on a task: starts the next one when it has none.
    fn keep_on_a_task(&mut self) {
        if is_active(self.runner)
            && self.runner.current_of(self.caller).is_none()
            && !self.runner.index.ready.is_empty()
        {
            let _ = self.step(Op::StartNextTask(StartNextArgs::default()));
        }
    }

    /// Counts the round on the task the agent stayed on; a plan this
    /// message created is already being worked on (its first step had this
    /// round).
    fn count(
        &mut self,
        started_on: Option<u32>,
        rounds_before: u64,
        marked: bool,
        was_empty: bool,
    ) {
        let counted = match self.current_id() {
            Some(id) if Some(id) == started_on && !marked => {
                Some((id, rounds_before.saturating_add(1)))
            }
            Some(id) if was_empty => Some((id, 1)),
            _ => None,
        };
        set_rounds(self.runner, counted);
    }

    /// Pauses the plan, with a summary, when `iteration` reaches
    /// `meta.max_iterations` and the plan has not ended.
    fn pause_at_the_limit(&mut self, iteration: u64) {
        let Some(max) = self.runner.doc.meta.max_iterations else {
            return;
        };
        let status = self.runner.doc.state.status;
        if iteration >= max && !matches!(status, PlanStatus::Completed | PlanStatus::Failed) {
            let _ = self.step(Op::PausePlan(NoArgs {}));
            self.summary = Some(summary(
                self.runner,
                self.caller,
                SummaryReason::IterationLimit,
            ));
        }
    }

    /// Commits the round as `revision`, its events by the caller, and says
    /// what it did.
    fn finish(
        mut self,
        revision: u64,
        iteration: u64,
        advanced: Option<(Advance, String)>,
        resumed: bool,
    ) -> Result<Applied, OpError> {
        let (runner, caller) = (self.runner, self.caller);
        runner.doc.state.revision = revision;
        runner.attach(&mut self.events);
        for event in &mut self.events {
            if event.agent.is_none() {
                event.agent.clone_from(&caller.agent);
            }
        }
        if caller.agent.is_some() {
            runner.renew(caller);
        }
        let current = runner
            .current_of(caller)
            .map(|i| runner.doc.tasks[i].clone());
        let step_rounds = current.as_ref().map_or(0, |t| rounds_of(runner, t.id));
        let (completed_by, matched) = advanced.unzip();
        let data = OpResult::Observed(Observed {
            iteration_count: iteration,
            max_iterations: runner.doc.meta.max_iterations,
            actions: self.actions,
            current_task: current,
            step_rounds,
            completed_by,
            matched,
            plan_status: runner.doc.state.status,
            paused: runner.doc.state.status == PlanStatus::Paused,
            resumed,
            summary: self.summary,
        });
        Ok(Applied {
            data,
            events: self.events,
        })
    }
}

/// What a step is about: its task's name and description.
fn step_text(task: &crate::document::TaskDoc) -> String {
    match &task.description {
        Some(description) => format!("{} {description}", task.name),
        None => task.name.clone(),
    }
}

fn is_active(runner: &Runner) -> bool {
    matches!(
        runner.doc.state.status,
        PlanStatus::Idle | PlanStatus::Running
    )
}

/// The rounds spent on task `id` so far.
fn rounds_of(runner: &Runner, id: u32) -> u64 {
    runner
        .doc
        .state
        .step_rounds
        .iter()
        .find(|r| r.task_id == id)
        .map_or(0, |r| r.rounds)
}

/// Keeps the counts of tasks still in progress, with `counted` set.
fn set_rounds(runner: &mut Runner, counted: Option<(u32, u64)>) {
    let in_progress = |id: u32| {
        runner
            .index
            .position
            .get(&id)
            .is_some_and(|&i| runner.doc.tasks[i].status == TaskStatus::InProgress)
    };
    let mut kept: Vec<StepRounds> = runner
        .doc
        .state
        .step_rounds
        .iter()
        .filter(|r| in_progress(r.task_id) && Some(r.task_id) != counted.map(|c| c.0))
        .cloned()
        .collect();
    if let Some((task_id, rounds)) = counted {
        kept.push(StepRounds { task_id, rounds });
        kept.sort_by_key(|r| r.task_id);
    }
    runner.doc.state.step_rounds = kept;
}

/// `PLAN_NOT_ACTIVE` for a message to a paused plan.
fn paused_error(runner: &Runner) -> OpError {
    OpError::new(
        ErrorCode::PlanNotActive,
        "The plan is paused; say \"continue\" (继续) to resume it",
    )
    .with(json!({"status": "paused", "iteration_count": runner.doc.state.iteration_count}))
}

fn clean(text: &str) -> Option<String> {
    let text = text
        .trim()
        .trim_start_matches([':', '：'])
        .trim_end_matches([',', '，', ';', '；'])
        .trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// `addTask`'s refusal of a step's name over the name limit, if it is.
fn name_too_long(name: &str) -> Option<OpError> {
    use super::text_limits::{too_long, MAX_NAME_BYTES};
    (name.len() > MAX_NAME_BYTES).then(|| too_long("name", name.len(), MAX_NAME_BYTES))
}
