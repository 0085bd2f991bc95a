//! The plan an agent's reply makes when there is none yet, and the steps
//! a reply declares (`[Step] description` lines), as the steps system
//! reads them (docs/runner.md#the-text-protocol).

use serde_json::json;

use crate::document::{Meta, PlanDocument};

use super::error::{ErrorCode, OpError};

use super::reply::Reply;
use super::step_markers::{first_marker, DONE_MARKERS, FAILED_MARKERS, STEP_MARKER};
use super::step_words::is_cjk;

/// The iteration limit of a plan an agent's reply creates: the steps
/// system's default (its agent loop's `maxToolIterations`).
pub const MESSAGE_PLAN_MAX_ITERATIONS: u64 = 200;

/// The most `[Step]` lines one message may declare: a message with more
/// is refused whole (`INVALID_ARGUMENT`), before anything changes.
pub const MAX_STEPS_PER_MESSAGE: usize = 10_000;

/// The plan `id` a message makes when there is none yet: see [`plan_for_reply`].
pub fn plan_for_message(id: String, message: &str, goal: Option<&str>) -> Option<PlanDocument> {
    plan_for_reply(id, &Reply::text(message), goal)
}

/// The plan `id` a reply makes when there is none yet: the steps system
/// creates one on the first reply that calls a tool; planc also on a reply
/// that declares `[Step] description` lines (an agent without tools). It
/// is empty (the reply's steps are then added), with `goal` (else the
/// reply's first line that is not a step, else its first step, else its
/// first tool call) and the steps system's iteration limit
/// ([`MESSAGE_PLAN_MAX_ITERATIONS`]). `None` for a reply that calls no tool
/// and declares no step (a reply that plans nothing needs no plan).
pub fn plan_for_reply(id: String, reply: &Reply, goal: Option<&str>) -> Option<PlanDocument> {
    let steps = step_lines(&reply.text);
    if steps.is_empty() && reply.tool_calls.is_empty() {
        return None;
    }
    let goal = goal
        .map(str::to_owned)
        .filter(|g| !g.trim().is_empty())
        .or_else(|| goal_line(&reply.text))
        .or_else(|| steps.first().cloned())
        .or_else(|| {
            let call = reply.tool_calls.first()?;
            Some(format!("The work begun with the tool call {}", call.name))
        })?;
    let mut plan = empty_plan(id, goal);
    plan.meta.max_iterations = Some(MESSAGE_PLAN_MAX_ITERATIONS);
    Some(plan)
}

/// A step's description as restated plans are compared: lowercase, without
/// a list number, spaces or final punctuation.
pub(super) fn same_step(name: &str) -> String {
    let name = name
        .trim()
        .trim_start_matches(|c: char| c.is_ascii_digit() || "().、:：-* ".contains(c))
        .trim_end_matches(['.', '。', '!', '！', ';', '；']);
    name.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// The steps `message` declares ([`step_lines`]), or the error of a
/// message that declares more than [`MAX_STEPS_PER_MESSAGE`].
pub(super) fn declared_steps(message: &str) -> Result<Vec<String>, OpError> {
    let steps = step_lines(message);
    if steps.len() > MAX_STEPS_PER_MESSAGE {
        return Err(OpError::new(
            ErrorCode::InvalidArgument,
            format!(
                "the message declares {} steps (`[Step]` lines); at most {MAX_STEPS_PER_MESSAGE} are read from one message: declare the plan over several messages",
                steps.len()
            ),
        )
        .with(json!({"steps": steps.len(), "max": MAX_STEPS_PER_MESSAGE})));
    }
    Ok(steps)
}

/// The descriptions of the `[Step] description` lines of `message`; a
/// line may be a list item (`1. [Step] …`, `2) [Step] …`, `- [Step] …`,
/// `* [Step] …`), as agents often number their plan.
pub fn step_lines(message: &str) -> Vec<String> {
    message
        .lines()
        .filter_map(|line| without_list_mark(line.trim_start()).strip_prefix(STEP_MARKER))
        .map(|rest| rest.trim().to_owned())
        .filter(|name| !name.is_empty())
        .collect()
}

/// `line` without a leading list mark and the spaces after it: digits and
/// `.` or `)`, or `-`, `*`, `•`. A line without one is given back as it is.
fn without_list_mark(line: &str) -> &str {
    let digits = line.len() - line.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let rest = if digits > 0 {
        line[digits..].strip_prefix(['.', ')'])
    } else {
        line.strip_prefix(['-', '*', '•'])
    };
    match rest {
        Some(rest) if rest.starts_with([' ', '\t']) => rest.trim_start(),
        _ => line,
    }
}

/// The goal of a plan created from a message: its first line that is
/// neither a step nor a marker, cut to 200 characters.
fn goal_line(message: &str) -> Option<String> {
    message
        .lines()
        .map(str::trim)
        .find(|line| {
            !line.is_empty()
                && !without_list_mark(line).starts_with(STEP_MARKER)
                && first_marker(line, &DONE_MARKERS).is_none()
                && first_marker(line, &FAILED_MARKERS).is_none()
        })
        .map(|line| line.chars().take(200).collect())
}

/// An empty plan `id` with `goal`, for the steps a message declares.
fn empty_plan(id: String, goal: String) -> PlanDocument {
    let language = if goal.chars().any(is_cjk) { "zh" } else { "en" };
    let mut meta = Meta::new(id, goal);
    meta.language = language.to_owned();
    PlanDocument::new(meta, Vec::new())
}
