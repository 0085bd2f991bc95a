//! The runner's indexes over a plan document: id and key lookup, dependents,
//! a count of unmet dependencies per task and the ready set, so that driving a
//! whole plan costs O(tasks + edges), not a rescan per operation.

use std::collections::{BTreeSet, HashMap};

use crate::document::statuses::set_aside;
use crate::document::{PlanDocument, TaskDoc, TaskStatus};

use super::error::{ErrorCode, OpError};
use super::ready::ReadySet;

/// Whether dependents of a task in this status may run.
///
/// A failed *optional* task counts like a skipped one: the plan may succeed
/// without it, so what comes after it may run too.
pub fn satisfies(task: &TaskDoc) -> bool {
    task.status.is_done() || (task.status == TaskStatus::Failed && task.optional)
}

/// Whether a task whose dependencies are met may be taken up next: it is
/// pending and not set aside (task-master's `deferred`, `blocked`, `review`).
pub fn takes_work(task: &TaskDoc) -> bool {
    task.status == TaskStatus::Pending && !set_aside(task)
}

/// Lookups and counters kept in step with the document.
#[derive(Clone, Debug, Default)]
pub struct Index {
    /// Task id → position in `tasks`.
    pub position: HashMap<u32, usize>,
    /// Task key → id.
    pub keys: HashMap<String, u32>,
    /// The largest id of a task in the plan (0 for none).
    pub max_id: u32,
    /// Position → positions of the tasks that depend on it.
    pub dependents: Vec<Vec<usize>>,
    /// Position → how many of its dependencies do not yet satisfy it.
    pub unmet: Vec<u32>,
    /// Positions of executable tasks (pending, nothing unmet), by priority
    /// and then in plan order.
    pub ready: ReadySet,
    /// How many tasks have each status (indexed by `TaskStatus as usize`).
    pub counts: [usize; 5],
    /// How many failed tasks are not optional.
    pub failed_required: usize,
    /// Positions of the tasks in progress, in plan order.
    pub in_progress: BTreeSet<usize>,
    /// Holder's agent name ("" for none) → positions of the tasks it holds.
    pub held: HashMap<String, BTreeSet<usize>>,
    /// (lease expiry in seconds since the Unix epoch, position), soonest first.
    pub leases: BTreeSet<(u64, usize)>,
}

impl Index {
    /// Builds the index, or says why the document is not a consistent state.
    pub fn build(doc: &PlanDocument) -> Result<Index, OpError> {
        let n = doc.tasks.len();
        let mut index = Index {
            position: HashMap::with_capacity(n),
            keys: HashMap::new(),
            dependents: vec![Vec::new(); n],
            unmet: vec![0; n],
            ready: ReadySet::new(&doc.tasks),
            ..Index::default()
        };
        for (i, task) in doc.tasks.iter().enumerate() {
            if index.position.insert(task.id, i).is_some() {
                return Err(invalid(format!("two tasks have the id {}", task.id)));
            }
            index.max_id = index.max_id.max(task.id);
            if let Some(key) = &task.key {
                if index.keys.insert(key.clone(), task.id).is_some() {
                    return Err(invalid(format!("two tasks have the key `{key}`")));
                }
            }
            index.counts[task.status as usize] += 1;
            if task.status == TaskStatus::InProgress {
                index.in_progress.insert(i);
                if let Some(holder) = &task.holder {
                    let key = holder_key(holder.agent.as_deref());
                    index.held.entry(key.to_owned()).or_default().insert(i);
                    if let Some(until) = &holder.lease_expires_at {
                        let Some(secs) = super::time::parse_rfc3339(until) else {
                            return Err(invalid(format!(
                                "task {}'s lease_expires_at `{until}` is not an RFC 3339 time",
                                task.id
                            )));
                        };
                        index.leases.insert((secs, i));
                    }
                }
            }
            if task.status == TaskStatus::Failed && !task.optional {
                index.failed_required += 1;
            }
        }
        for (i, task) in doc.tasks.iter().enumerate() {
            for dep in &task.dependencies {
                let Some(&j) = index.position.get(dep) else {
                    return Err(invalid(format!(
                        "task {} depends on {dep}, which is not in the plan",
                        task.id
                    )));
                };
                if j == i {
                    return Err(invalid(format!("task {} depends on itself", task.id)));
                }
                index.dependents[j].push(i);
                if !satisfies(&doc.tasks[j]) {
                    index.unmet[i] += 1;
                }
            }
            if takes_work(task) && index.unmet[i] == 0 {
                index.ready.insert(i);
            }
        }
        if let Some(cycle) = find_cycle(&doc.tasks, &index) {
            let path: Vec<String> = cycle.iter().map(u32::to_string).collect();
            return Err(OpError::new(
                ErrorCode::CircularDependency,
                format!(
                    "the dependencies would form a cycle: {} (each waits for the next)",
                    path.join(" → ")
                ),
            )
            .with(serde_json::json!({"cycle": cycle})));
        }
        Ok(index)
    }

    /// Moves the task at `i` from status `from` to its current status, and
    /// updates the counters and the ready set of its dependents.
    pub fn moved(&mut self, tasks: &[TaskDoc], i: usize, from: TaskStatus, was_satisfying: bool) {
        let task = &tasks[i];
        self.counts[from as usize] -= 1;
        self.counts[task.status as usize] += 1;
        if from == TaskStatus::Failed && !task.optional {
            self.failed_required -= 1;
        }
        if task.status == TaskStatus::Failed && !task.optional {
            self.failed_required += 1;
        }
        if task.status == TaskStatus::InProgress {
            self.in_progress.insert(i);
        } else {
            self.in_progress.remove(&i);
        }
        if takes_work(task) && self.unmet[i] == 0 {
            self.ready.insert(i);
        } else {
            self.ready.remove(&i);
        }
        if !was_satisfying && satisfies(task) {
            for &d in &self.dependents[i] {
                self.unmet[d] -= 1;
                if self.unmet[d] == 0 && takes_work(&tasks[d]) {
                    self.ready.insert(d);
                }
            }
        }
    }

    /// Takes in the last of `tasks`, just appended: a pending task that no
    /// task depends on yet, whose dependencies are in the plan (so it closes
    /// no cycle). O(its dependencies), the index kept: what
    /// [`Index::build`] would make of `tasks`.
    pub fn appended(&mut self, tasks: &[TaskDoc]) -> Result<(), OpError> {
        let (Some(task), i) = (tasks.last(), tasks.len().saturating_sub(1)) else {
            return Ok(());
        };
        let mut unmet = 0;
        let mut positions = Vec::with_capacity(task.dependencies.len());
        for dep in &task.dependencies {
            let Some(&j) = self.position.get(dep) else {
                return Err(invalid(format!(
                    "task {} depends on {dep}, which is not in the plan",
                    task.id
                )));
            };
            positions.push(j);
            if !satisfies(&tasks[j]) {
                unmet += 1;
            }
        }
        if self.position.contains_key(&task.id) {
            return Err(invalid(format!("two tasks have the id {}", task.id)));
        }
        if let Some(key) = &task.key {
            if self.keys.contains_key(key) {
                return Err(invalid(format!("two tasks have the key `{key}`")));
            }
            self.keys.insert(key.clone(), task.id);
        }
        self.position.insert(task.id, i);
        self.max_id = self.max_id.max(task.id);
        for j in positions {
            self.dependents[j].push(i);
        }
        self.dependents.push(Vec::new());
        self.unmet.push(unmet);
        self.ready.push_rank(task);
        self.counts[task.status as usize] += 1;
        if takes_work(task) && unmet == 0 {
            self.ready.insert(i);
        }
        Ok(())
    }

    /// How many tasks are completed or skipped.
    pub fn done(&self) -> usize {
        self.counts[TaskStatus::Completed as usize] + self.counts[TaskStatus::Skipped as usize]
    }

    /// Whether every task is completed or skipped, or failed but optional:
    /// the plan has succeeded.
    pub fn all_settled(&self, total: usize) -> bool {
        total > 0 && self.done() + self.count(TaskStatus::Failed) - self.failed_required == total
    }

    /// How many tasks have `status`.
    pub fn count(&self, status: TaskStatus) -> usize {
        self.counts[status as usize]
    }
}

fn invalid(message: String) -> OpError {
    OpError::new(ErrorCode::InvalidState, message)
}

/// A dependency cycle, if there is one, as task ids `[a, b, …, a]` where each
/// task waits for the next (Kahn's algorithm, then a walk: O(n + e)).
pub fn find_cycle(tasks: &[TaskDoc], index: &Index) -> Option<Vec<u32>> {
    let mut remaining: Vec<usize> = tasks.iter().map(|t| t.dependencies.len()).collect();
    let mut queue: Vec<usize> = (0..tasks.len()).filter(|&i| remaining[i] == 0).collect();
    let mut seen = 0;
    while let Some(i) = queue.pop() {
        seen += 1;
        for &d in &index.dependents[i] {
            remaining[d] -= 1;
            if remaining[d] == 0 {
                queue.push(d);
            }
        }
    }
    if seen == tasks.len() {
        return None;
    }
    // Every task left over waits for another left-over task: walk those waits
    // until a task comes round again.
    let start = (0..tasks.len()).find(|&i| remaining[i] > 0)?;
    let mut step_of: Vec<Option<usize>> = vec![None; tasks.len()];
    let mut path = Vec::new();
    let mut at = start;
    while step_of[at].is_none() {
        step_of[at] = Some(path.len());
        path.push(at);
        at = tasks[at]
            .dependencies
            .iter()
            .filter_map(|d| index.position.get(d).copied())
            .find(|&j| remaining[j] > 0)?;
    }
    let first = step_of[at]?;
    let mut cycle: Vec<u32> = path[first..].iter().map(|&i| tasks[i].id).collect();
    cycle.push(tasks[at].id);
    Some(cycle)
}

/// The key of a holder in the index: its agent's name, or "" for none.
pub(super) fn holder_key(agent: Option<&str>) -> &str {
    agent.unwrap_or("")
}
