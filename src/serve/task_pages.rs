//! Reads of a large plan a page at a time: `GET /api/plans/{id}/tasks`
//! (a filtered page of tasks, with a cursor) and `GET /api/plans/{id}/summary`
//! (where the plan stands, without its tasks).
//!
//! Both are functions of the plan document and the query, so that a store
//! that keeps tasks as rows can answer them itself later; today the server
//! reads the document (kept between reads by `doc_cache.rs`) and filters it.
//!
//! The order is the plan's: step by step, each step where its first task
//! stands, its tasks as the document lists them (tasks outside any step
//! form one more group, where the first of them stands) — for a plan whose
//! tasks are listed step by step, the document's order.

use std::collections::HashMap;

use serde_json::{json, Value};

use crate::document::{PlanDocument, TaskDoc, TaskStatus};
use crate::runner::{ErrorCode, OpError};

/// Tasks a page holds when the query does not say.
pub const DEFAULT_LIMIT: usize = 100;
/// The most tasks a page may hold.
pub const MAX_LIMIT: usize = 1000;
/// The longest text filter (`q`), in bytes.
pub const MAX_TEXT_BYTES: usize = 1024;
/// The query parameters of `GET /api/plans/{id}/tasks`.
pub const PARAMETERS: [&str; 10] = [
    "status", "holder", "held", "step", "q", "id", "after", "offset", "limit", "groups",
];

/// `GET /api/plans/{id}` is the whole document: a paging or filtering
/// parameter there is refused (`INVALID_ARGUMENT`, naming the parameter
/// and the endpoint that pages), never silently ignored.
pub fn refuse_paging(raw: Option<&str>) -> Result<(), OpError> {
    let pairs: Vec<(String, String)> =
        serde_urlencoded::from_str(raw.unwrap_or("")).unwrap_or_default();
    match pairs.iter().find(|(name, _)| PARAMETERS.contains(&name.as_str())) {
        None => Ok(()),
        Some((name, _)) => Err(OpError::new(
            ErrorCode::InvalidArgument,
            format!(
                "GET /api/plans/{{id}} is the whole plan document (the export) and takes no `{name}`; \
                 read a page of tasks with GET /api/plans/{{id}}/tasks?{name}=…, where the plan stands with GET /api/plans/{{id}}/summary"
            ),
        )
        .with(json!({"field": name}))),
    }
}

/// Which tasks a page holds, and where it starts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskQuery {
    /// Only tasks in one of these statuses (`None`: any).
    pub statuses: Option<Vec<TaskStatus>>,
    /// Only tasks held by this agent.
    pub holder: Option<String>,
    /// Only tasks held by someone (`true`) or by no one (`false`).
    pub held: Option<bool>,
    /// Only tasks of this step; `Some(None)`: outside every step.
    pub step: Option<Option<String>>,
    /// Only tasks whose id, name, key, result, holder or assignee contain
    /// this text (lower case; compared without case).
    pub text: Option<String>,
    /// Only the task of this id.
    pub id: Option<u32>,
    /// Start after the task of this id (a page's `next`).
    pub after: Option<u32>,
    /// Start at this many matching tasks from the first.
    pub offset: usize,
    /// At most this many tasks.
    pub limit: usize,
    /// Whether the answer carries each group's counts (`groups=true`).
    pub groups: bool,
}

/// A refusal of parameter `field`.
fn bad(field: &str, message: String) -> OpError {
    OpError::new(ErrorCode::InvalidArgument, message).with(json!({"field": field}))
}

impl TaskQuery {
    /// The query of a request (`status=pending,failed&limit=50&after=120`):
    /// an unknown, repeated or malformed parameter is `INVALID_ARGUMENT`
    /// with the parameter in `details.field`.
    pub fn parse(raw: Option<&str>) -> Result<TaskQuery, OpError> {
        let pairs: Vec<(String, String)> = serde_urlencoded::from_str(raw.unwrap_or(""))
            .map_err(|e| bad("query", format!("the query is not form-encoded: {e}")))?;
        let mut query = TaskQuery {
            limit: DEFAULT_LIMIT,
            ..TaskQuery::default()
        };
        let mut seen: Vec<&str> = Vec::new();
        for (name, value) in &pairs {
            let Some(known) = PARAMETERS.iter().find(|p| **p == name.as_str()) else {
                return Err(bad(
                    name,
                    format!(
                        "no query parameter `{}` here; the parameters are {}",
                        crate::escape::line(name),
                        PARAMETERS.join(", ")
                    ),
                ));
            };
            if seen.contains(known) {
                return Err(bad(known, format!("`{known}` is given twice")));
            }
            seen.push(known);
            query.take(known, value)?;
        }
        if query.after.is_some() && query.offset > 0 {
            return Err(bad(
                "offset",
                "give `after` (a page's `next`) or `offset`, not both".to_owned(),
            ));
        }
        Ok(query)
    }

    /// Takes one parameter's value.
    fn take(&mut self, name: &str, value: &str) -> Result<(), OpError> {
        let number = |max: u64| -> Result<u64, OpError> {
            value
                .parse::<u64>()
                .ok()
                .filter(|n| *n <= max)
                .ok_or_else(|| {
                    bad(
                        name,
                        format!(
                            "`{name}` takes a whole number from 0 to {max}, not `{}`",
                            crate::escape::line(value)
                        ),
                    )
                })
        };
        match name {
            "status" => self.statuses = Some(statuses(value)?),
            "holder" => self.holder = Some(nonempty(name, value)?.to_owned()),
            "step" => {
                self.step = Some(match nonempty(name, value)? {
                    "-" => None,
                    step => Some(step.to_owned()),
                })
            }
            "q" if value.len() > MAX_TEXT_BYTES => {
                return Err(bad(name, format!("`q` is at most {MAX_TEXT_BYTES} bytes")))
            }
            "q" => self.text = Some(value.trim().to_lowercase()).filter(|t| !t.is_empty()),
            "id" => self.id = Some(task_id(name, value)?),
            "after" => self.after = Some(task_id(name, value)?),
            "offset" => self.offset = number(u32::MAX.into())? as usize,
            "limit" => self.limit = number(MAX_LIMIT as u64)? as usize,
            "held" => self.held = Some(flag(name, value)?),
            _ => self.groups = flag(name, value)?,
        }
        Ok(())
    }

    /// Whether `task` passes every filter.
    pub(super) fn passes(&self, task: &TaskDoc) -> bool {
        if self.id.is_some_and(|id| id != task.id) {
            return false;
        }
        if let Some(statuses) = &self.statuses {
            if !statuses.contains(&task.status) {
                return false;
            }
        }
        if self.held.is_some_and(|held| held != task.holder.is_some()) {
            return false;
        }
        if let Some(holder) = &self.holder {
            let agent = task.holder.as_ref().and_then(|h| h.agent.as_deref());
            if agent != Some(holder.as_str()) {
                return false;
            }
        }
        if let Some(step) = &self.step {
            if task.step.as_deref() != step.as_deref() {
                return false;
            }
        }
        match &self.text {
            None => true,
            Some(text) => haystack(task).contains(text.as_str()),
        }
    }
}

/// A parameter that must not be empty.
fn nonempty<'a>(name: &str, value: &'a str) -> Result<&'a str, OpError> {
    match value.trim() {
        "" => Err(bad(name, format!("`{name}` is empty"))),
        value => Ok(value),
    }
}

/// A parameter that is true or false.
fn flag(name: &str, value: &str) -> Result<bool, OpError> {
    match value {
        "true" | "1" | "" => Ok(true),
        "false" | "0" => Ok(false),
        _ => Err(bad(name, format!("`{name}` is true or false"))),
    }
}

/// A task id parameter.
fn task_id(name: &str, value: &str) -> Result<u32, OpError> {
    value
        .parse::<u32>()
        .ok()
        .filter(|id| *id >= 1)
        .ok_or_else(|| {
            bad(
                name,
                format!(
                    "`{name}` takes a task id (a whole number from 1), not `{}`",
                    crate::escape::line(value)
                ),
            )
        })
}

/// `status=pending,failed`.
fn statuses(value: &str) -> Result<Vec<TaskStatus>, OpError> {
    value
        .split(',')
        .map(|name| {
            TaskStatus::from_name(name.trim()).ok_or_else(|| {
                bad(
                    "status",
                    format!(
                        "`{}` is not a task status (pending, in_progress, completed, failed, skipped)",
                        crate::escape::line(name)
                    ),
                )
            })
        })
        .collect()
}

/// What the text filter looks in, in lower case.
fn haystack(task: &TaskDoc) -> String {
    let holder = task.holder.as_ref().and_then(|h| h.agent.as_deref());
    format!(
        "#{} {} {} {} {} {}",
        task.id,
        task.name,
        task.key.as_deref().unwrap_or(""),
        task.result.as_deref().unwrap_or(""),
        holder.unwrap_or(""),
        task.assignee.as_deref().unwrap_or("")
    )
    .to_lowercase()
}

/// One group of the order: a step (or the tasks outside every step) and
/// the indices of its tasks in the document.
struct Group<'a> {
    step: Option<&'a str>,
    name: &'a str,
    tasks: Vec<usize>,
}

/// The plan's tasks in the order of the reads, group by group.
fn groups(doc: &PlanDocument) -> Vec<Group<'_>> {
    let names: HashMap<&str, &str> = doc
        .steps
        .iter()
        .map(|s| (s.id.as_str(), s.name.as_str()))
        .collect();
    let mut place: HashMap<Option<&str>, usize> = HashMap::new();
    let mut groups: Vec<Group<'_>> = Vec::new();
    for (index, task) in doc.tasks.iter().enumerate() {
        let step = task.step.as_deref().filter(|s| names.contains_key(s));
        let at = *place.entry(step).or_insert_with(|| {
            groups.push(Group {
                step,
                name: step.and_then(|s| names.get(s).copied()).unwrap_or(""),
                tasks: Vec::new(),
            });
            groups.len() - 1
        });
        groups[at].tasks.push(index);
    }
    groups
}

/// How many of `tasks` are done (completed or skipped).
fn done(doc: &PlanDocument, tasks: &[usize]) -> usize {
    tasks
        .iter()
        .filter(|&&i| doc.tasks[i].status.is_done())
        .count()
}

/// A page of `doc`'s tasks for `query`: `{plan_id, revision, total,
/// matched, offset, limit, tasks, next}` (and `groups` when asked).
/// `after` naming no task of the plan is `INVALID_ARGUMENT`.
pub fn task_page(plan_id: &str, doc: &PlanDocument, query: &TaskQuery) -> Result<Value, OpError> {
    let groups = groups(doc);
    let mut started = query.after.is_none();
    let (mut matched, mut before, mut tasks) = (0usize, 0usize, Vec::new());
    let mut counts = Vec::new();
    for group in &groups {
        let mut in_group = 0;
        for &index in &group.tasks {
            let task = &doc.tasks[index];
            let passes = query.passes(task);
            if passes {
                in_group += 1;
                matched += 1;
                if started && before >= query.offset && tasks.len() < query.limit {
                    tasks.push(task);
                } else if !started || before < query.offset {
                    before += 1;
                }
            }
            if query.after == Some(task.id) {
                started = true;
            }
        }
        counts.push(in_group);
    }
    if !started {
        return Err(after_unknown(plan_id, query.after.unwrap_or(0)));
    }
    let groups = query.groups.then(|| {
        groups
            .iter()
            .zip(counts)
            .map(|(group, matched)| {
                json!({"step": group.step, "name": group.name, "total": group.tasks.len(),
                    "done": done(doc, &group.tasks), "matched": matched})
            })
            .collect()
    });
    Ok(page_value(
        plan_id,
        doc,
        query,
        (matched, before),
        tasks,
        groups,
    ))
}

/// `after` naming no task of plan `plan_id`: `INVALID_ARGUMENT`.
pub(super) fn after_unknown(plan_id: &str, after: u32) -> OpError {
    bad(
        "after",
        format!(
            "`after` names no task of plan `{}`: task {after} is not in it",
            crate::escape::line(plan_id),
        ),
    )
}

/// A page's answer: `(matched, before)` the tasks matching and those before
/// the page, `tasks` the page's, `groups` each group's counts when asked.
pub(super) fn page_value(
    plan_id: &str,
    doc: &PlanDocument,
    query: &TaskQuery,
    (matched, before): (usize, usize),
    tasks: Vec<&TaskDoc>,
    groups: Option<Vec<Value>>,
) -> Value {
    let more = matched > before + tasks.len();
    let next = match (more, tasks.last()) {
        (true, Some(last)) => json!(last.id),
        _ => Value::Null,
    };
    let mut page = json!({
        "plan_id": plan_id,
        "revision": doc.state.revision,
        "total": doc.tasks.len(),
        "matched": matched,
        "offset": before,
        "limit": query.limit,
        "tasks": tasks,
        "next": next,
    });
    if let Some(groups) = groups {
        page["groups"] = Value::Array(groups);
    }
    page
}

/// Where plan `plan_id` stands, without its tasks: `{plan_id, meta, roles,
/// state, counts, holders, steps}` — the counts by status, who holds how
/// many tasks, and each group of the order with its done and total.
pub fn summary(plan_id: &str, doc: &PlanDocument) -> Value {
    let mut by_status = [0usize; TaskStatus::NAMES.len()];
    for task in &doc.tasks {
        by_status[task.status as usize] += 1;
    }
    let mut counts = serde_json::Map::new();
    counts.insert("total".to_owned(), json!(doc.tasks.len()));
    for (name, n) in TaskStatus::NAMES.iter().zip(by_status) {
        counts.insert((*name).to_owned(), json!(n));
    }
    let mut holders: Vec<(Option<&str>, usize)> = Vec::new();
    for holder in doc.tasks.iter().filter_map(|t| t.holder.as_ref()) {
        let agent = holder.agent.as_deref();
        match holders.iter_mut().find(|(a, _)| *a == agent) {
            Some((_, n)) => *n += 1,
            None => holders.push((agent, 1)),
        }
    }
    holders.sort();
    let holders: Vec<Value> = holders
        .into_iter()
        .map(|(agent, tasks)| json!({"agent": agent, "tasks": tasks}))
        .collect();
    let steps: Vec<Value> = groups(doc)
        .iter()
        .map(|group| {
            json!({"step": group.step, "name": group.name, "total": group.tasks.len(),
                "done": done(doc, &group.tasks)})
        })
        .collect();
    json!({
        "plan_id": plan_id,
        "meta": doc.meta,
        "roles": doc.roles,
        "state": doc.state,
        "counts": counts,
        "done": doc.tasks.iter().filter(|t| t.status.is_done()).count(),
        "holders": holders,
        "steps": steps,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::{Meta, StepDoc};

    /// Tasks 1–6: odd ones in step `a`, 2 and 4 in step `b`, 6 outside.
    fn doc() -> PlanDocument {
        let tasks = (1..=6)
            .map(|id| {
                let mut task = TaskDoc::pending(id, format!("Task {id}"), Vec::new());
                task.step = match id {
                    6 => None,
                    _ if id % 2 == 1 => Some("a".to_owned()),
                    _ => Some("b".to_owned()),
                };
                task
            })
            .collect();
        let mut doc = PlanDocument::new(Meta::new("p", "g"), tasks);
        doc.steps = ["a", "b"]
            .map(|id| StepDoc {
                id: id.to_owned(),
                name: id.to_uppercase(),
                tasks: Vec::new(),
            })
            .to_vec();
        doc
    }

    fn page(query: &str) -> Value {
        let query = TaskQuery::parse(Some(query)).unwrap();
        task_page("p", &doc(), &query).unwrap()
    }

    #[test]
    fn pages_follow_the_plan_order_and_their_cursor() {
        let ids = |page: &Value| -> Vec<u64> {
            page["tasks"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["id"].as_u64().unwrap())
                .collect()
        };
        let first = page("limit=4");
        assert_eq!((ids(&first), &first["next"]), (vec![1, 3, 5, 2], &json!(2)));
        let rest = page("limit=4&after=2");
        assert_eq!(
            (ids(&rest), &rest["next"], &rest["offset"]),
            (vec![4, 6], &Value::Null, &json!(4))
        );
        assert_eq!(ids(&page("offset=5")), [6]);
        assert_eq!(ids(&page("step=-")), [6]);
        assert_eq!(ids(&page("q=task%205")), [5]);
        // A cursor the filter leaves out still places the page.
        assert_eq!(ids(&page("step=b&after=3")), [2, 4]);
        assert_eq!(page("limit=0")["matched"], 6);
    }

    #[test]
    fn a_query_is_checked_before_any_read() {
        let field =
            |query: &str| TaskQuery::parse(Some(query)).unwrap_err().details["field"].clone();
        assert_eq!(field("limit=1001"), "limit");
        assert_eq!(field("status=running"), "status");
        assert_eq!(field("after=0"), "after");
        assert_eq!(field("sort=name"), "sort");
        assert_eq!(TaskQuery::parse(None).unwrap().limit, DEFAULT_LIMIT);
        let error =
            task_page("p", &doc(), &TaskQuery::parse(Some("after=9")).unwrap()).unwrap_err();
        assert_eq!(error.details["field"], "after");
    }
}
