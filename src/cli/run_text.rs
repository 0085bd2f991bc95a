//! Short human summaries of `planc run` results (what `--json` leaves out).
//!
//! Every string from the state file (names, results, messages that quote
//! them) is escaped with `planc::escape`: one line per task, one line per
//! message, whatever the text holds. A multi-line field of `run show`
//! (reasoning, description, result) is a block below its label, each of its
//! lines indented by four spaces.

use std::fmt::Write;

use planc::document::TaskDoc;
use planc::escape;
use planc::runner::results::{Observed, PlanReport};
use planc::runner::OpResult;

fn task_line(task: &TaskDoc) -> String {
    let mut line = format!(
        "#{} [{}] {}",
        task.id,
        task.status.as_str(),
        escape::line(&task.name)
    );
    if let Some(key) = &task.key {
        let _ = write!(line, " ({})", escape::line(key));
    }
    if let Some(assignee) = &task.assignee {
        let _ = write!(line, " @{}", escape::line(assignee));
    }
    if !task.dependencies.is_empty() {
        let deps: Vec<String> = task.dependencies.iter().map(u32::to_string).collect();
        let _ = write!(line, " after {}", deps.join(", "));
    }
    if let Some(holder) = &task.holder {
        if let Some(agent) = &holder.agent {
            let _ = write!(line, " held by {}", escape::line(agent));
        }
        if let Some(until) = &holder.lease_expires_at {
            let _ = write!(line, " (lease until {})", escape::line(until));
        }
    }
    line
}

fn task_detail(task: &TaskDoc) -> String {
    let mut out = task_line(task);
    out.push('\n');
    let fields = [
        ("reasoning", &task.reasoning),
        ("description", &task.description),
        ("result", &task.result),
    ];
    for (field, text) in fields {
        let Some(text) = text else {
            continue;
        };
        if text.contains('\n') {
            let _ = writeln!(out, "  {field}:");
            for line in escape::lines(text) {
                // Quoted, as `run prompt` quotes a description: no line of
                // the text reads as a line of planc's own, indented or not.
                let _ = writeln!(out, "    >{}{line}", if line.is_empty() { "" } else { " " });
            }
        } else {
            let _ = writeln!(out, "  {field}: {}", escape::line(text));
        }
    }
    // Who holds it, for parallel agents (a caller without an identity is not named).
    if let Some(holder) = &task.holder {
        if let (Some(agent), Some(since)) = (&holder.agent, &holder.since) {
            let _ = writeln!(
                out,
                "  held by {} since {}",
                escape::line(agent),
                escape::line(since)
            );
        }
    }
    if let Some(max) = task.retry.max.filter(|&m| m > 0) {
        let _ = writeln!(out, "  retry: {} of {max}", task.retry.count);
    }
    if task.optional {
        out.push_str("  optional\n");
    }
    out
}

fn task_list(tasks: &[TaskDoc], none: &str) -> String {
    if tasks.is_empty() {
        return format!("{none}\n");
    }
    tasks.iter().map(|t| task_line(t) + "\n").collect()
}

/// The summary of an operation's result, ending in a newline.
pub fn summary(result: &OpResult) -> String {
    match result {
        OpResult::CurrentTask(None) => "no current task\n".to_owned(),
        OpResult::CurrentTask(Some(task)) => task_detail(task),
        OpResult::Task(found) => task_detail(&found.task),
        OpResult::TaskList(list) => task_list(&list.tasks, "no tasks"),
        OpResult::Executable(list) => task_list(&list.executable_tasks, "no executable task"),
        OpResult::Status(report) => status_summary(report),
        OpResult::Started(started) => match &started.task {
            Some(task) => format!("{}\n{}", escape::line(&started.message), task_detail(task)),
            None => format!("{}\n", escape::line(&started.message)),
        },
        OpResult::Added(added) => format!(
            "{}\n{}\n",
            escape::line(&added.message),
            task_line(&added.new_task)
        ),
        OpResult::Updated(updated) => format!(
            "{}\n{}\n",
            escape::line(&updated.message),
            task_line(&updated.updated_task)
        ),
        OpResult::Observed(observed) => observed_summary(observed),
        OpResult::Resumed(resumed) => format!(
            "{}\n{}\n",
            escape::line(&resumed.message),
            escape::line(&resumed.summary.text)
        ),
        OpResult::Prompted(prompted) => prompted.prompt.clone(),
        // The rest say what they did in their message; every variant is
        // named, so a new result type must choose its summary here.
        OpResult::Finished(r) => message_line(&r.message),
        OpResult::Failed(r) => message_line(&r.message),
        OpResult::Removed(r) => message_line(&r.message),
        OpResult::Message(r) => message_line(&r.message),
        OpResult::Logged(r) => message_line(&r.message),
        OpResult::Reset(r) => message_line(&r.message),
        OpResult::Replanned(r) => message_line(&r.message),
        OpResult::Retried(r) => message_line(&r.message),
        OpResult::Renewed(r) => message_line(&r.message),
        OpResult::Created(r) => message_line(&r.message),
    }
}

/// `run status`: the counts on one line, then the reason the plan stopped.
fn status_summary(data: &PlanReport) -> String {
    let mut out = format!(
        "{}: {}/{} done ({:.0}%), {} in progress, {} pending, {} failed, {} executable",
        data.status.as_str(),
        data.completed_tasks + data.skipped_tasks,
        data.total_tasks,
        data.progress * 100.0,
        data.in_progress_tasks,
        data.pending_tasks,
        data.failed_tasks,
        data.executable_tasks,
    );
    if data.blocked_tasks > 0 {
        let _ = write!(out, ", {} blocked", data.blocked_tasks);
    }
    if let Some(id) = data.current_task_id {
        let _ = write!(out, "; current #{id}");
    }
    out.push('\n');
    if let Some(reason) = &data.reason {
        let _ = writeln!(out, "{}", escape::line(reason));
    }
    out
}

/// `run observe`: what the runner did, the iteration, the current task and
/// the summary.
fn observed_summary(data: &Observed) -> String {
    let mut out = String::new();
    for action in &data.actions {
        let _ = writeln!(out, "{}", escape::line(action));
    }
    let _ = writeln!(
        out,
        "iteration {} ({})",
        data.iteration_count,
        data.plan_status.as_str()
    );
    if let Some(task) = &data.current_task {
        let _ = writeln!(
            out,
            "current: {} ({} round(s) on it)",
            task_line(task),
            data.step_rounds
        );
    }
    if let Some(summary) = &data.summary {
        let _ = writeln!(out, "{}", escape::line(&summary.text));
    }
    out
}

fn message_line(message: &str) -> String {
    format!("{}\n", escape::line(message))
}
