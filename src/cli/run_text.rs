//! Short human summaries of `planc run` results (what `--json` leaves out).

use std::fmt::Write;

use serde_json::Value;

fn task_line(task: &Value) -> String {
    let mut line = format!(
        "#{} [{}] {}",
        task["id"],
        task["status"].as_str().unwrap_or("?"),
        task["name"].as_str().unwrap_or("")
    );
    if let Some(key) = task["key"].as_str() {
        let _ = write!(line, " ({key})");
    }
    if let Some(assignee) = task["assignee"].as_str() {
        let _ = write!(line, " @{assignee}");
    }
    if let Some(deps) = task["dependencies"].as_array().filter(|d| !d.is_empty()) {
        let deps: Vec<String> = deps.iter().map(Value::to_string).collect();
        let _ = write!(line, " after {}", deps.join(", "));
    }
    line
}

fn task_detail(task: &Value) -> String {
    let mut out = task_line(task);
    out.push('\n');
    for field in ["reasoning", "description", "result"] {
        if let Some(text) = task[field].as_str() {
            let _ = writeln!(out, "  {field}: {text}");
        }
    }
    let retry = &task["retry"];
    if retry["max"].as_u64().unwrap_or(0) > 0 {
        let _ = writeln!(out, "  retry: {} of {}", retry["count"], retry["max"]);
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
                data["status"].as_str().unwrap_or("?"),
                data["completed_tasks"].as_u64().unwrap_or(0)
                    + data["skipped_tasks"].as_u64().unwrap_or(0),
                data["total_tasks"],
                data["progress"].as_f64().unwrap_or(0.0) * 100.0,
                data["in_progress_tasks"],
                data["pending_tasks"],
                data["failed_tasks"],
                data["executable_tasks"],
            );
            if let Some(id) = data["current_task_id"].as_u64() {
                let _ = write!(out, "; current #{id}");
            }
            out.push('\n');
            if let Some(reason) = data["reason"].as_str() {
                let _ = writeln!(out, "{reason}");
            }
            out
        }
        "startNextTask" | "startTask" if !data["task"].is_null() => {
            format!(
                "{}\n{}",
                data["message"].as_str().unwrap_or(""),
                task_detail(&data["task"])
            )
        }
        "addTask" => format!(
            "{}\n{}\n",
            data["message"].as_str().unwrap_or(""),
            task_line(&data["new_task"])
        ),
        "updateTask" => format!(
            "{}\n{}\n",
            data["message"].as_str().unwrap_or(""),
            task_line(&data["updated_task"])
        ),
        "observe" => {
            let mut out = String::new();
            for action in data["actions"].as_array().into_iter().flatten() {
                let _ = writeln!(out, "{}", action.as_str().unwrap_or(""));
            }
            let _ = writeln!(
                out,
                "iteration {} ({})",
                data["iteration_count"],
                data["plan_status"].as_str().unwrap_or("?")
            );
            if !data["current_task"].is_null() {
                let _ = writeln!(out, "current: {}", task_line(&data["current_task"]));
            }
            if let Some(summary) = data["summary"].as_str() {
                let _ = writeln!(out, "{summary}");
            }
            out
        }
        _ => match data["message"].as_str() {
            Some(message) => format!("{message}\n"),
            None => format!("{data}\n"),
        },
    }
}
