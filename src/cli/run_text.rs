//! Short human summaries of `planc run` results (what `--json` leaves out).
//!
//! Every string from the state file (names, results, messages that quote
//! them) is escaped with `planc::escape`: one line per task, one line per
//! message, whatever the text holds. A multi-line field of `run show`
//! (reasoning, description, result) is a block below its label, each of its
//! lines indented by four spaces.

use std::fmt::Write;

use planc::escape;
use serde_json::Value;

/// A string field of a result, escaped to stay on its line.
fn text<'a>(value: &'a Value, default: &'a str) -> std::borrow::Cow<'a, str> {
    escape::line(value.as_str().unwrap_or(default))
}

/// A value as JSON writes it (a number, mostly), escaped in case it is a
/// string JSON leaves a bidi control in.
fn value(value: &Value) -> String {
    escape::line(&value.to_string()).into_owned()
}

fn task_line(task: &Value) -> String {
    let mut line = format!(
        "#{} [{}] {}",
        value(&task["id"]),
        text(&task["status"], "?"),
        text(&task["name"], "")
    );
    if let Some(key) = task["key"].as_str() {
        let _ = write!(line, " ({})", escape::line(key));
    }
    if let Some(assignee) = task["assignee"].as_str() {
        let _ = write!(line, " @{}", escape::line(assignee));
    }
    if let Some(deps) = task["dependencies"].as_array().filter(|d| !d.is_empty()) {
        let deps: Vec<String> = deps.iter().map(value).collect();
        let _ = write!(line, " after {}", deps.join(", "));
    }
    let holder = &task["holder"];
    if let Some(agent) = holder["agent"].as_str() {
        let _ = write!(line, " held by {}", escape::line(agent));
    }
    if let Some(until) = holder["lease_expires_at"].as_str() {
        let _ = write!(line, " (lease until {})", escape::line(until));
    }
    line
}

fn task_detail(task: &Value) -> String {
    let mut out = task_line(task);
    out.push('\n');
    for field in ["reasoning", "description", "result"] {
        let Some(text) = task[field].as_str() else {
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
    if let (Some(agent), Some(since)) = (
        task["holder"]["agent"].as_str(),
        task["holder"]["since"].as_str(),
    ) {
        let _ = writeln!(
            out,
            "  held by {} since {}",
            escape::line(agent),
            escape::line(since)
        );
    }
    let retry = &task["retry"];
    if retry["max"].as_u64().unwrap_or(0) > 0 {
        let _ = writeln!(
            out,
            "  retry: {} of {}",
            value(&retry["count"]),
            value(&retry["max"])
        );
    }
    if task["optional"].as_bool() == Some(true) {
        out.push_str("  optional\n");
    }
    out
}

fn task_list(tasks: &Value, none: &str) -> String {
    match tasks.as_array() {
        Some(tasks) if !tasks.is_empty() => tasks.iter().map(|t| task_line(t) + "\n").collect(),
        _ => format!("{none}\n"),
    }
}

/// The summary of operation `op`'s result `data`, ending in a newline.
pub fn summary(op: &str, data: &Value) -> String {
    match op {
        "getCurrentTask" if data.is_null() => "no current task\n".to_owned(),
        "getCurrentTask" => task_detail(data),
        "getTaskById" => task_detail(&data["task"]),
        "getTaskList" => task_list(&data["tasks"], "no tasks"),
        "getExecutableTaskList" => task_list(&data["executable_tasks"], "no executable task"),
        "getPlanStatus" => {
            let mut out = format!(
                "{}: {}/{} done ({:.0}%), {} in progress, {} pending, {} failed, {} executable",
                text(&data["status"], "?"),
                data["completed_tasks"].as_u64().unwrap_or(0)
                    + data["skipped_tasks"].as_u64().unwrap_or(0),
                value(&data["total_tasks"]),
                data["progress"].as_f64().unwrap_or(0.0) * 100.0,
                value(&data["in_progress_tasks"]),
                value(&data["pending_tasks"]),
                value(&data["failed_tasks"]),
                value(&data["executable_tasks"]),
            );
            if let Some(blocked) = data["blocked_tasks"].as_u64().filter(|&n| n > 0) {
                let _ = write!(out, ", {blocked} blocked");
            }
            if let Some(id) = data["current_task_id"].as_u64() {
                let _ = write!(out, "; current #{id}");
            }
            out.push('\n');
            if let Some(reason) = data["reason"].as_str() {
                let _ = writeln!(out, "{}", escape::line(reason));
            }
            out
        }
        "startNextTask" | "startTask" if !data["task"].is_null() => {
            format!(
                "{}\n{}",
                text(&data["message"], ""),
                task_detail(&data["task"])
            )
        }
        "addTask" => format!(
            "{}\n{}\n",
            text(&data["message"], ""),
            task_line(&data["new_task"])
        ),
        "updateTask" => format!(
            "{}\n{}\n",
            text(&data["message"], ""),
            task_line(&data["updated_task"])
        ),
        "observe" => {
            let mut out = String::new();
            for action in data["actions"].as_array().into_iter().flatten() {
                let _ = writeln!(out, "{}", text(action, ""));
            }
            let _ = writeln!(
                out,
                "iteration {} ({})",
                value(&data["iteration_count"]),
                text(&data["plan_status"], "?")
            );
            if !data["current_task"].is_null() {
                let _ = writeln!(out, "current: {}", task_line(&data["current_task"]));
            }
            if let Some(summary) = data["summary"].as_str() {
                let _ = writeln!(out, "{}", escape::line(summary));
            }
            out
        }
        _ => match data["message"].as_str() {
            Some(message) => format!("{}\n", escape::line(message)),
            None => format!("{}\n", value(data)),
        },
    }
}
