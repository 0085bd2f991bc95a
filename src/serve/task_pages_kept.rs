//! The paged reads (`task_pages.rs`) answered from a kept runner's indexes
//! and view ([`KeptPlan`]) instead of a pass over the plan: the summary in
//! O(groups + holders); a page of tasks unfiltered, or filtered by status
//! and step, in O(its tasks + groups) (a status filter scans the view's
//! statuses, a byte a task, only from where the page starts in its group);
//! a page of the tasks in progress, of one holder's, of the held ones, or
//! of one id through the runner's indexes, in O(those tasks). Any other
//! query (a text filter, `held=false`, a step filter when some task's step
//! is not declared) is answered by the pass. The answers are those of
//! [`task_page`] and [`summary`](super::task_pages::summary), byte for byte.

use serde_json::{json, Value};

use crate::document::{TaskDoc, TaskStatus};
use crate::runner::{KeptPlan, OpError, TaskView};

use super::task_pages::{after_unknown, page_value, task_page, TaskQuery};

/// Plan `plan_id`'s summary, as [`summary`](super::task_pages::summary) makes it.
pub fn kept_summary(plan_id: &str, kept: &KeptPlan<'_>) -> Value {
    let (doc, view) = (kept.doc(), kept.view());
    let mut counts = serde_json::Map::new();
    counts.insert("total".to_owned(), json!(doc.tasks.len()));
    for (name, n) in TaskStatus::NAMES.iter().zip(view.counts()) {
        counts.insert((*name).to_owned(), json!(n));
    }
    let holders: Vec<Value> = view
        .holders()
        .into_iter()
        .map(|(agent, tasks)| json!({"agent": agent, "tasks": tasks}))
        .collect();
    let steps: Vec<Value> = view
        .groups()
        .iter()
        .map(|group| {
            json!({"step": group.step(), "name": group.name(), "total": group.total(),
                "done": group.done()})
        })
        .collect();
    json!({
        "plan_id": plan_id,
        "meta": doc.meta,
        "roles": doc.roles,
        "state": doc.state,
        "counts": counts,
        "done": view.done(),
        "holders": holders,
        "steps": steps,
    })
}

/// A page of plan `plan_id`'s tasks for `query`, as [`task_page`] makes it,
/// and whether it took the pass over the plan.
pub fn kept_page(
    plan_id: &str,
    kept: &KeptPlan<'_>,
    query: &TaskQuery,
) -> (Result<Value, OpError>, bool) {
    let found = match candidates(kept, query) {
        Some(positions) => Some(sparse(plan_id, kept, query, positions)),
        None => dense(plan_id, kept, query),
    };
    match found {
        Some(page) => (page, false),
        None => (task_page(plan_id, kept.doc(), query), true),
    }
}

/// The positions of a superset of the tasks `query` matches, from an
/// index, when one gives them; `None` otherwise.
fn candidates(kept: &KeptPlan<'_>, query: &TaskQuery) -> Option<Vec<usize>> {
    if let Some(id) = query.id {
        return Some(kept.position(id).into_iter().collect());
    }
    if let (Some(holder), true) = (&query.holder, kept.holders_indexed()) {
        return Some(
            kept.held_by(holder)
                .into_iter()
                .flatten()
                .copied()
                .collect(),
        );
    }
    if query.held == Some(true) && kept.holders_indexed() {
        return Some(kept.held().collect());
    }
    match &query.statuses {
        Some(statuses) if statuses.iter().all(|s| *s == TaskStatus::InProgress) => {
            Some(kept.in_progress().iter().copied().collect())
        }
        _ => None,
    }
}

/// The page of the tasks among `positions` that pass `query`.
fn sparse(
    plan_id: &str,
    kept: &KeptPlan<'_>,
    query: &TaskQuery,
    positions: Vec<usize>,
) -> Result<Value, OpError> {
    let (doc, view) = (kept.doc(), kept.view());
    let mut matches: Vec<((usize, usize), usize)> = positions
        .into_iter()
        .filter(|&i| query.passes(&doc.tasks[i]))
        .map(|i| (view.place(i), i))
        .collect();
    matches.sort_unstable();
    let before = match query.after {
        Some(after) => {
            let Some(at) = kept.position(after) else {
                return Err(after_unknown(plan_id, after));
            };
            let at = view.place(at);
            matches.partition_point(|(place, _)| *place <= at)
        }
        None => query.offset.min(matches.len()),
    };
    let end = before.saturating_add(query.limit).min(matches.len());
    let tasks: Vec<&TaskDoc> = matches[before..end]
        .iter()
        .map(|&(_, i)| &doc.tasks[i])
        .collect();
    let groups = query.groups.then(|| {
        let mut matched = vec![0; view.groups().len()];
        for ((group, _), _) in &matches {
            matched[*group] += 1;
        }
        group_values(view, &matched)
    });
    Ok(page_value(
        plan_id,
        doc,
        query,
        (matches.len(), before),
        tasks,
        groups,
    ))
}

/// Which tasks a query filtered by status and step at most matches: a
/// status among `statuses` (`[true; 5]`: any), in a group `groups` lets
/// through.
struct Dense {
    statuses: [bool; 5],
    groups: Vec<bool>,
}

impl Dense {
    /// The filter of `query` on `view`, when it filters by status and
    /// step only (and a step filter means a group: no task's step is
    /// undeclared).
    fn of(view: &TaskView, query: &TaskQuery) -> Option<Dense> {
        let plain = query.holder.is_none()
            && query.held.is_none()
            && query.text.is_none()
            && query.id.is_none();
        if !plain || (query.step.is_some() && view.strays() > 0) {
            return None;
        }
        let mut statuses = [query.statuses.is_none(); 5];
        for status in query.statuses.iter().flatten() {
            statuses[*status as usize] = true;
        }
        let groups = view
            .groups()
            .iter()
            .map(|group| match &query.step {
                None => true,
                Some(step) => group.step() == step.as_deref(),
            })
            .collect();
        Some(Dense { statuses, groups })
    }

    /// Whether every task of a passing group passes.
    fn all(&self) -> bool {
        self.statuses.iter().all(|s| *s)
    }

    /// How many tasks of group `g` pass.
    fn matched(&self, view: &TaskView, g: usize) -> usize {
        if !self.groups[g] {
            return 0;
        }
        let group = &view.groups()[g];
        (0..5)
            .filter(|&s| self.statuses[s])
            .map(|s| group.count(status_of(s)))
            .sum()
    }

    /// Whether the task at position `i` (in a passing group) passes.
    fn passes(&self, view: &TaskView, i: u32) -> bool {
        self.statuses[view.status(i as usize) as usize]
    }
}

/// The status numbered `s` (`TaskStatus as usize`).
fn status_of(s: usize) -> TaskStatus {
    match s {
        0 => TaskStatus::Pending,
        1 => TaskStatus::InProgress,
        2 => TaskStatus::Completed,
        3 => TaskStatus::Failed,
        _ => TaskStatus::Skipped,
    }
}

/// The page for a query filtered by status and step only, read from the
/// view's groups; `None` for any other query.
fn dense(plan_id: &str, kept: &KeptPlan<'_>, query: &TaskQuery) -> Option<Result<Value, OpError>> {
    let (doc, view) = (kept.doc(), kept.view());
    let filter = Dense::of(view, query)?;
    let groups = view.groups();
    let matched: Vec<usize> = (0..groups.len()).map(|g| filter.matched(view, g)).collect();
    let total: usize = matched.iter().sum();
    // Where the page starts (group, index in it) and how many matching
    // tasks come before it.
    let (start, before) = match query.after {
        Some(after) => {
            let Some(at) = kept.position(after) else {
                return Some(Err(after_unknown(plan_id, after)));
            };
            let (g, k) = view.place(at);
            let earlier: usize = matched[..g].iter().sum();
            let within = match (filter.groups[g], filter.all()) {
                (false, _) => 0,
                (true, true) => k + 1,
                (true, false) => count_passing(&filter, view, &groups[g].positions()[..=k]),
            };
            ((g, k + 1), earlier + within)
        }
        None => (
            skip(&filter, view, &matched, query.offset),
            query.offset.min(total),
        ),
    };
    let tasks = collect(&filter, view, start, query.limit)
        .into_iter()
        .map(|i| &doc.tasks[i])
        .collect();
    let groups = query.groups.then(|| group_values(view, &matched));
    Some(Ok(page_value(
        plan_id,
        doc,
        query,
        (total, before),
        tasks,
        groups,
    )))
}

/// How many of `positions` pass.
fn count_passing(filter: &Dense, view: &TaskView, positions: &[u32]) -> usize {
    positions
        .iter()
        .filter(|&&i| filter.passes(view, i))
        .count()
}

/// Where the `offset`-th passing task stands (group, index in it): past
/// the last group when there are not that many.
fn skip(filter: &Dense, view: &TaskView, matched: &[usize], offset: usize) -> (usize, usize) {
    let mut left = offset;
    for (g, &n) in matched.iter().enumerate() {
        if n <= left {
            left -= n;
            continue;
        }
        if filter.all() {
            return (g, left);
        }
        let positions = view.groups()[g].positions();
        for (k, &i) in positions.iter().enumerate() {
            if filter.passes(view, i) {
                if left == 0 {
                    return (g, k);
                }
                left -= 1;
            }
        }
    }
    (matched.len(), 0)
}

/// The positions of at most `limit` passing tasks from `start` on, in
/// the read order.
fn collect(filter: &Dense, view: &TaskView, start: (usize, usize), limit: usize) -> Vec<usize> {
    let mut tasks = Vec::new();
    let (mut g, mut k) = start;
    while g < view.groups().len() && tasks.len() < limit {
        if filter.groups[g] {
            let positions = view.groups()[g].positions();
            for &i in positions.iter().skip(k) {
                if tasks.len() == limit {
                    break;
                }
                if filter.passes(view, i) {
                    tasks.push(i as usize);
                }
            }
        }
        g += 1;
        k = 0;
    }
    tasks
}

/// Each group's `{step, name, total, done, matched}`.
fn group_values(view: &TaskView, matched: &[usize]) -> Vec<Value> {
    view.groups()
        .iter()
        .zip(matched)
        .map(|(group, matched)| {
            json!({"step": group.step(), "name": group.name(), "total": group.total(),
                "done": group.done(), "matched": matched})
        })
        .collect()
}

#[cfg(test)]
#[path = "task_pages_kept_tests.rs"]
mod tests;
