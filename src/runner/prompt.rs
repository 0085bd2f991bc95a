//! A compact Markdown block about the plan for an agent's system prompt
//! (the steps system), in the plan's language (zh or en).
//!
//! Names, goals and results come from the state file, so they are escaped
//! ([`escape::line`]): each stays inside its own field on its line, and no
//! line of user text can pose as a list item or a marker of this block. A
//! description keeps its lines, each quoted (`  > `) and escaped.

use std::fmt::Write;

use crate::document::{TaskDoc, TaskStatus};
use crate::escape;

use super::results::{Brief, Summary};
use super::{Caller, Runner};

/// How many executable tasks and recent results the prompt lists.
const LIST_LIMIT: usize = 5;

struct Words {
    heading: &'static str,
    goal: &'static str,
    progress: &'static str,
    status: &'static str,
    current: &'static str,
    none: &'static str,
    next: &'static str,
    recent: &'static str,
    controls: &'static str,
    more: &'static str,
    held_by: &'static str,
    in_progress: &'static str,
}

const EN: Words = Words {
    heading: "## Current plan",
    goal: "Goal",
    progress: "Progress",
    status: "status",
    current: "Current task",
    none: "none",
    next: "Executable next",
    recent: "Recent results",
    controls: "When the current task is done, say \"[Done]\" (text before it is the result); if it cannot be done, \"[Failed] reason\"; add a task with a line \"[Step] description\".",
    more: "more",
    held_by: "held by",
    in_progress: "In progress",
};

const ZH: Words = Words {
    heading: "## 当前任务规划",
    goal: "当前任务",
    progress: "进度",
    status: "状态",
    current: "当前步骤",
    none: "无",
    next: "接下来可执行",
    recent: "最近结果",
    controls: "步骤完成后，说 \"[完成]\" 或 \"[Done]\"（之前的文字作为结果）；无法完成时说 \"[失败] 原因\"；用一行 \"[Step] 描述\" 添加步骤。",
    more: "更多",
    held_by: "执行者",
    in_progress: "进行中",
};

fn words(runner: &Runner) -> &'static Words {
    if runner
        .document()
        .meta
        .language
        .to_lowercase()
        .starts_with("zh")
    {
        &ZH
    } else {
        &EN
    }
}

fn line(task: &TaskDoc, w: &Words) -> String {
    let mut text = format!("#{} {}", task.id, escape::line(&task.name));
    if let Some(assignee) = &task.assignee {
        let _ = write!(text, " (@{})", escape::line(assignee));
    }
    if let Some(agent) = task.holder.as_ref().and_then(|h| h.agent.as_deref()) {
        let _ = write!(text, " [{} {}]", w.held_by, escape::line(agent));
    }
    text
}

/// The Markdown block `planc run prompt` prints, for a caller without an identity.
pub fn prompt(runner: &Runner) -> String {
    prompt_as(runner, &Caller::default())
}

/// The Markdown block for `caller`: its current task is the task it holds.
pub fn prompt_as(runner: &Runner, caller: &Caller) -> String {
    let w = words(runner);
    let doc = runner.document();
    let mut out = String::new();
    let _ = writeln!(out, "{}\n", w.heading);
    let _ = writeln!(out, "- {}: {}", w.goal, escape::line(&doc.meta.goal));
    let _ = writeln!(out, "- {}", progress_line(runner));
    let current_at = runner.current_of(caller);
    let current = current_at.map(|i| &doc.tasks[i]);
    match current {
        Some(task) => {
            let _ = writeln!(out, "- {}: {}", w.current, line(task, w));
            if let Some(description) = &task.description {
                for l in escape::lines(description) {
                    let _ = writeln!(out, "  > {l}");
                }
            }
        }
        None => {
            let _ = writeln!(out, "- {}: {}", w.current, w.none);
        }
    }
    // Parallel agents: what the others hold.
    let others: Vec<String> = runner
        .index
        .in_progress
        .iter()
        .filter(|&&i| Some(i) != current_at)
        .take(LIST_LIMIT)
        .map(|&i| line(&doc.tasks[i], w))
        .collect();
    if !others.is_empty() {
        let _ = writeln!(out, "- {}: {}", w.in_progress, others.join("; "));
    }
    let ready: Vec<&TaskDoc> = runner
        .index
        .ready
        .iter()
        .take(LIST_LIMIT)
        .map(|&i| &doc.tasks[i])
        .collect();
    if !ready.is_empty() {
        let more = runner.index.ready.len().saturating_sub(LIST_LIMIT);
        let mut list: Vec<String> = ready.iter().map(|t| line(t, w)).collect();
        if more > 0 {
            list.push(format!("+{more} {}", w.more));
        }
        let _ = writeln!(out, "- {}: {}", w.next, list.join("; "));
    }
    let recent: Vec<&TaskDoc> = doc
        .tasks
        .iter()
        .rev()
        .filter(|t| {
            matches!(
                t.status,
                TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Skipped
            )
        })
        .take(LIST_LIMIT)
        .collect();
    if !recent.is_empty() {
        let _ = writeln!(out, "- {}:", w.recent);
        for task in recent.iter().rev() {
            let result = task.result.as_deref().unwrap_or("-");
            let _ = writeln!(
                out,
                "  - #{} [{}] {}: {}",
                task.id,
                task.status.as_str(),
                escape::line(&task.name),
                escape::line(result)
            );
        }
    }
    let _ = writeln!(out, "\n{}", w.controls);
    out
}

fn progress_line(runner: &Runner) -> String {
    let w = words(runner);
    let doc = runner.document();
    format!(
        "{}: {}/{} ({}: {})",
        w.progress,
        runner.index.done(),
        doc.tasks.len(),
        w.status,
        doc.state.status.as_str()
    )
}

/// Why a progress summary is given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SummaryReason {
    /// The plan was resumed.
    Resumed,
    /// The plan paused at its iteration limit.
    IterationLimit,
}

/// How many finished and remaining tasks a summary lists.
const SUMMARY_LIMIT: usize = 10;

fn brief(task: &TaskDoc) -> Brief {
    Brief {
        id: task.id,
        name: task.name.clone(),
        status: task.status,
        result: task.result.clone(),
    }
}

fn brief_text(brief: &Brief) -> String {
    format!("#{} {}", brief.id, escape::line(&brief.name))
}

/// Where the plan stands for `caller`: what is done, what is current (the
/// caller's task, else the next to start), what is left; and the same as a
/// paragraph in the plan's language. What `observe` and `resumePlan` answer.
pub fn summary(runner: &Runner, caller: &Caller, reason: SummaryReason) -> Summary {
    let doc = runner.document();
    let current_at = runner
        .current_of(caller)
        .or_else(|| runner.index.ready.first().copied());
    let finished_all: Vec<&TaskDoc> = doc
        .tasks
        .iter()
        .filter(|t| {
            matches!(
                t.status,
                TaskStatus::Completed | TaskStatus::Skipped | TaskStatus::Failed
            )
        })
        .collect();
    let finished: Vec<Brief> = finished_all[finished_all.len().saturating_sub(SUMMARY_LIMIT)..]
        .iter()
        .map(|t| brief(t))
        .collect();
    let remaining_all: Vec<&TaskDoc> = doc
        .tasks
        .iter()
        .enumerate()
        .filter(|&(i, t)| {
            Some(i) != current_at
                && matches!(t.status, TaskStatus::Pending | TaskStatus::InProgress)
        })
        .map(|(_, t)| t)
        .collect();
    let remaining: Vec<Brief> = remaining_all
        .iter()
        .take(SUMMARY_LIMIT)
        .map(|t| brief(t))
        .collect();
    let current = current_at.map(|i| brief(&doc.tasks[i]));
    let done = runner.index.done();
    let total = doc.tasks.len();

    let earlier = finished_all.len() - finished.len();
    let mut summary = Summary {
        done,
        total,
        finished,
        current,
        remaining_count: remaining_all.len(),
        remaining,
        text: String::new(),
    };
    let zh = std::ptr::eq(words(runner), &ZH);
    summary.text = paragraph(&summary, earlier, zh, reason, doc.state.iteration_count);
    summary
}

/// The summary as a paragraph, in Chinese or English: `earlier` finished
/// tasks are left out before the ones it lists.
fn paragraph(
    summary: &Summary,
    earlier: usize,
    zh: bool,
    reason: SummaryReason,
    iterations: u64,
) -> String {
    let Summary {
        done,
        total,
        finished,
        current,
        remaining,
        ..
    } = summary;
    let later = summary.remaining_count - remaining.len();
    let list = |items: &[Brief], more: usize, none: &str| {
        if items.is_empty() {
            return none.to_owned();
        }
        let mut text: Vec<String> = items.iter().map(brief_text).collect();
        if more > 0 {
            text.push(format!("+{more}"));
        }
        text.join(if zh { "；" } else { "; " })
    };
    let current_text = current.as_ref().map(brief_text);
    if zh {
        let head = match reason {
            SummaryReason::Resumed => "计划已恢复。".to_owned(),
            SummaryReason::IterationLimit => {
                format!("已达到迭代上限（{} 轮），计划已暂停。", iterations)
            }
        };
        let tail = match reason {
            SummaryReason::Resumed => "",
            SummaryReason::IterationLimit => "说“继续”恢复执行。",
        };
        let finished_text = if earlier > 0 {
            format!("…+{earlier}；{}", list(finished, 0, "无"))
        } else {
            list(finished, 0, "无")
        };
        format!(
            "{head}进度：{done}/{total}。已完成：{finished_text}。当前：{}。剩余：{}。{tail}",
            current_text.as_deref().unwrap_or("无"),
            list(remaining, later, "无"),
        )
    } else {
        let head = match reason {
            SummaryReason::Resumed => "Plan resumed.".to_owned(),
            SummaryReason::IterationLimit => format!(
                "Reached the iteration limit ({} iterations); the plan is paused.",
                iterations
            ),
        };
        let tail = match reason {
            SummaryReason::Resumed => "",
            SummaryReason::IterationLimit => " Say \"continue\" to resume.",
        };
        let finished_text = if earlier > 0 {
            format!("…+{earlier}; {}", list(finished, 0, "none"))
        } else {
            list(finished, 0, "none")
        };
        format!(
            "{head} Progress: {done}/{total}. Done: {finished_text}. Current: {}. Left: {}.{tail}",
            current_text.as_deref().unwrap_or("none"),
            list(remaining, later, "none"),
        )
    }
}
