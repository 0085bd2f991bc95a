//! `planc run status` and `planc run list` as people read them: a progress
//! bar with the counts by status, then a table of the tasks (id, status,
//! name, holder and lease, dependencies, retries), as wide as the terminal.
//!
//! Colours mark the statuses when standard output is a terminal (or with
//! `--color always`), never with `NO_COLOR` or `--color never`. Every text
//! from the state is escaped (`planc::escape`) before it is measured, so no
//! control character reaches the terminal and the columns stay aligned.

use std::fmt::Write;
use std::io::IsTerminal;

use clap::builder::styling::{AnsiColor, Style};
use planc::document::{TaskDoc, TaskStatus};
use planc::escape;
use planc::runner::results::PlanReport;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// The width when neither `COLUMNS` nor the terminal says.
const DEFAULT_WIDTH: usize = 80;
/// The narrowest the name column gets, however narrow the terminal.
const MIN_NAME_WIDTH: usize = 12;
/// The bar's cells.
const BAR_WIDTH: usize = 30;
/// The widest the holder and dependency columns get.
const MAX_SIDE_WIDTH: usize = 24;

/// How the table is drawn: its width, and whether in colour.
#[derive(Clone, Copy, Debug)]
pub struct Look {
    /// The columns the table may take.
    pub width: usize,
    /// Whether statuses are coloured (ANSI escape sequences).
    pub color: bool,
}

impl Look {
    /// The look for standard output: `COLUMNS`, else the terminal's width,
    /// else 80; colour as `color` says for standard output.
    pub fn for_stdout(color: super::output::Color) -> Look {
        let from_env = std::env::var("COLUMNS")
            .ok()
            .and_then(|c| c.trim().parse::<usize>().ok())
            .filter(|&c| c > 0);
        let width = from_env.or_else(terminal_width).unwrap_or(DEFAULT_WIDTH);
        Look {
            width,
            color: color.enabled_on_stdout(),
        }
    }

    fn paint(&self, style: Style, text: &str) -> String {
        if self.color && !text.is_empty() {
            format!("{}{text}{}", style.render(), style.render_reset())
        } else {
            text.to_owned()
        }
    }
}

/// The width of the terminal standard output is, if it is one.
fn terminal_width() -> Option<usize> {
    if !std::io::stdout().is_terminal() {
        return None;
    }
    terminal_columns()
}

#[cfg(unix)]
fn terminal_columns() -> Option<usize> {
    let mut size = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ writes one `winsize` into the struct it is given,
    // which lives for the call; standard output's descriptor is open.
    let ok = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut size) } == 0;
    (ok && size.ws_col > 0).then_some(usize::from(size.ws_col))
}

#[cfg(not(unix))]
fn terminal_columns() -> Option<usize> {
    None
}

fn status_style(status: TaskStatus) -> Style {
    let color = match status {
        TaskStatus::Pending => AnsiColor::Yellow,
        TaskStatus::InProgress => AnsiColor::Blue,
        TaskStatus::Completed => AnsiColor::Green,
        TaskStatus::Failed => AnsiColor::Red,
        TaskStatus::Skipped => AnsiColor::BrightBlack,
    };
    Style::new().fg_color(Some(color.into()))
}

/// `run status`: the bar, the counts, the table of every task, then why
/// the plan stands still and the current task.
pub fn status(report: &PlanReport, tasks: &[TaskDoc], look: &Look) -> String {
    let mut out = progress(report, look);
    out.push_str(&table(tasks, look));
    if let Some(id) = report.current_task_id {
        let _ = writeln!(out, "current task: #{id}");
    }
    if let Some(reason) = &report.reason {
        let _ = writeln!(out, "{}", escape::line(reason));
    }
    out
}

/// `run list`: the table of the tasks listed (or a line saying none).
pub fn list(tasks: &[TaskDoc], none: &str, look: &Look) -> String {
    if tasks.is_empty() {
        return format!("{none}\n");
    }
    table(tasks, look)
}

/// The bar (done = completed or skipped) and the counts by status.
fn progress(report: &PlanReport, look: &Look) -> String {
    let done = report.completed_tasks + report.skipped_tasks;
    let total = report.total_tasks;
    let filled = (done * BAR_WIDTH).checked_div(total).unwrap_or(0);
    let bar = format!(
        "{}{}",
        look.paint(status_style(TaskStatus::Completed), &"█".repeat(filled)),
        "░".repeat(BAR_WIDTH - filled)
    );
    let percent = (done * 100).checked_div(total).unwrap_or(0);
    let mut out = format!(
        "{} {bar} {done}/{total} done ({percent}%)\n",
        report.status.as_str()
    );
    let counts = [
        (TaskStatus::Completed, report.completed_tasks, "completed"),
        (
            TaskStatus::InProgress,
            report.in_progress_tasks,
            "in progress",
        ),
        (TaskStatus::Pending, report.pending_tasks, "pending"),
        (TaskStatus::Failed, report.failed_tasks, "failed"),
        (TaskStatus::Skipped, report.skipped_tasks, "skipped"),
    ];
    let mut parts: Vec<String> = counts
        .iter()
        .map(|&(status, n, word)| look.paint(status_style(status), &format!("{n} {word}")))
        .collect();
    parts.push(format!("{} executable", report.executable_tasks));
    if report.blocked_tasks > 0 {
        parts.push(format!("{} blocked", report.blocked_tasks));
    }
    out.push_str(&parts.join(" · "));
    out.push('\n');
    out
}

/// One task's cells, escaped: id, status, name, holder, after, retries.
fn cells(task: &TaskDoc) -> [String; 6] {
    let holder = match &task.holder {
        Some(holder) => {
            let agent = holder
                .agent
                .as_deref()
                .map_or("-".to_owned(), |a| escape::line(a).into_owned());
            match &holder.lease_expires_at {
                // The time of day of the lease's end: `…T20:05:31Z` → `20:05:31`.
                Some(until) => format!("{agent} until {}", escape::line(lease_time(until))),
                None => agent,
            }
        }
        None => "-".to_owned(),
    };
    let after = if task.dependencies.is_empty() {
        "-".to_owned()
    } else {
        let ids: Vec<String> = task.dependencies.iter().map(u32::to_string).collect();
        ids.join(",")
    };
    let retries = match task.retry.max.filter(|&m| m > 0) {
        Some(max) => format!("{}/{max}", task.retry.count),
        None if task.retry.count > 0 => task.retry.count.to_string(),
        None => "-".to_owned(),
    };
    [
        task.id.to_string(),
        task.status.as_str().to_owned(),
        escape::line(&task.name).into_owned(),
        holder,
        after,
        retries,
    ]
}

/// `2026-11-28T20:05:31Z` → `20:05:31`; other text as it is.
fn lease_time(until: &str) -> &str {
    until
        .split_once('T')
        .and_then(|(_, time)| time.get(..8))
        .unwrap_or(until)
}

const HEADERS: [&str; 6] = ["ID", "STATUS", "NAME", "HOLDER", "AFTER", "RETRIES"];
const NAME: usize = 2;

/// The table: a header, then a row per task; the name column takes the
/// width the others leave, and a longer name is cut with `…`.
fn table(tasks: &[TaskDoc], look: &Look) -> String {
    let rows: Vec<([String; 6], TaskStatus)> = tasks.iter().map(|t| (cells(t), t.status)).collect();
    let mut widths = HEADERS.map(UnicodeWidthStr::width);
    for (row, _) in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.width());
        }
    }
    widths[3] = widths[3].min(MAX_SIDE_WIDTH);
    widths[4] = widths[4].min(MAX_SIDE_WIDTH);
    let others: usize = widths
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != NAME)
        .map(|(_, w)| w)
        .sum::<usize>()
        + 2 * (HEADERS.len() - 1);
    widths[NAME] = widths[NAME].min(look.width.saturating_sub(others).max(MIN_NAME_WIDTH));
    let mut out = String::new();
    let header = HEADERS.map(str::to_owned);
    push_row(&mut out, &header, &widths, None, look);
    for (row, status) in &rows {
        push_row(&mut out, row, &widths, Some(*status), look);
    }
    out
}

fn push_row(
    out: &mut String,
    row: &[String; 6],
    widths: &[usize; 6],
    status: Option<TaskStatus>,
    look: &Look,
) {
    let mut line = String::new();
    for (i, (cell, &width)) in row.iter().zip(widths).enumerate() {
        let cut = fit(cell, width);
        let pad = width - cut.width();
        let shown = match status {
            Some(status) if i == 1 => look.paint(status_style(status), &cut),
            None => look.paint(Style::new().bold(), &cut),
            _ => cut,
        };
        line.push_str(&shown);
        if i + 1 < row.len() {
            line.push_str(&" ".repeat(pad + 2));
        }
    }
    out.push_str(line.trim_end());
    out.push('\n');
}

/// `text` in at most `width` columns: cut with `…` when longer.
fn fit(text: &str, width: usize) -> String {
    if text.width() <= width {
        return text.to_owned();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    out
}
