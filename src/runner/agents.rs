//! The agent model (docs/agents.md): who calls, who holds each in-progress task,
//! and leases.
//!
//! A [`Caller`] comes with every operation: the agent's name (none for a
//! caller without an identity), the lease it asks for, and the time — the
//! runner reads no clock, so the store (or a test) says what time it is.
//! Each in-progress task records its [`Holder`]; an agent's current task is
//! the task it holds. A lease that has run out puts the task back to
//! `pending` ([`Runner::expire_leases`], called by the store before every
//! operation), so a crashed agent never blocks a plan for ever.

use serde_json::{json, Map, Value};

use crate::document::{Holder, TaskStatus};

use super::advice::Advice;
use super::error::{ErrorCode, OpError};
use super::events::{Event, EventKind};
use super::index::holder_key;
use super::ops::TaskRef;
use super::results::{OpResult, Renewed, RenewedLease};
use super::time::{format_unix, parse_rfc3339};
use super::{Applied, Runner};

/// The longest lease: a year. Longer is a mistake, and sums stay far from overflow.
pub const MAX_LEASE_SECONDS: u64 = 366 * 86_400;

/// The longest agent name, in bytes.
const MAX_AGENT_BYTES: usize = 200;

/// Who calls an operation, and when.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Caller {
    /// The agent's name; `None` for a caller without an identity.
    pub agent: Option<String>,
    /// The lease asked for, in seconds: given to a task this call starts,
    /// and the new length of the caller's leases it renews.
    pub lease: Option<u64>,
    /// The time, in seconds since the Unix epoch; `None` without a clock
    /// (then nothing records when, and no lease can be given).
    pub now: Option<u64>,
    /// The call takes over a task another agent holds (`takeover: true`,
    /// `--takeover`): allowed, and logged as a `task_taken_over` event.
    pub takeover: bool,
    /// Seed 000's cursor: an id-less complete or fail acts on the caller's
    /// current task (the last it started that is still in progress) rather
    /// than on its one task in progress.
    pub cursor: bool,
}

impl Caller {
    /// A caller named `agent` (or without an identity).
    pub fn agent(agent: Option<String>) -> Caller {
        Caller {
            agent,
            ..Caller::default()
        }
    }

    /// The same caller at time `now` (seconds since the Unix epoch).
    pub fn at(mut self, now: u64) -> Caller {
        self.now = Some(now);
        self
    }

    /// The same caller asking for a lease of `seconds`.
    pub fn with_lease(mut self, seconds: Option<u64>) -> Caller {
        self.lease = seconds;
        self
    }

    /// The same caller taking over tasks other agents hold (or not).
    pub fn taking_over(mut self, takeover: bool) -> Caller {
        self.takeover = takeover;
        self
    }

    /// The same caller following seed 000's cursor (see [`Caller::cursor`]).
    pub fn following_cursor(mut self) -> Caller {
        self.cursor = true;
        self
    }

    /// Takes `agent` (a name), `lease` (seconds, or a duration such as
    /// `"30s"`) and `takeover` (a flag) out of a tool call's arguments; what
    /// is left is the operation's.
    pub fn take_from(arguments: &mut Map<String, Value>) -> Result<Caller, OpError> {
        let agent = match arguments.remove("agent") {
            None | Some(Value::Null) => None,
            Some(Value::String(name)) => Some(name),
            Some(other) => {
                return Err(OpError::new(
                    ErrorCode::InvalidArgument,
                    format!("`agent` must be a string (the agent's name), not {other}"),
                ))
            }
        };
        let lease = match arguments.remove("lease") {
            None | Some(Value::Null) => None,
            Some(Value::String(text)) => Some(parse_lease(&text).map_err(bad_lease)?),
            Some(Value::Number(n)) => match n.as_u64() {
                Some(secs) => Some(check_lease(secs).map_err(bad_lease)?),
                None => return Err(bad_lease(format!("`{n}` is not a whole number of seconds"))),
            },
            Some(other) => {
                return Err(bad_lease(format!(
                    "`lease` must be seconds or a duration such as \"30s\", not {other}"
                )))
            }
        };
        let takeover = match arguments.remove("takeover") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(flag)) => flag,
            Some(other) => {
                return Err(OpError::new(
                    ErrorCode::InvalidArgument,
                    format!("`takeover` must be true or false, not {other}"),
                )
                .with(json!({"field": "takeover"})))
            }
        };
        Ok(Caller {
            agent,
            lease,
            takeover,
            ..Caller::default()
        })
    }

    /// Refuses an empty or overlong agent name.
    pub(super) fn check(&self) -> Result<(), OpError> {
        if let Some(agent) = &self.agent {
            if agent.trim().is_empty() || agent.len() > MAX_AGENT_BYTES {
                return Err(OpError::new(
                    ErrorCode::InvalidArgument,
                    format!("an agent's name is 1 to {MAX_AGENT_BYTES} bytes, not blank"),
                )
                .with(json!({"agent": agent})));
            }
        }
        if self.lease.is_some() && self.now.is_none() {
            return Err(OpError::new(
                ErrorCode::InvalidArgument,
                "a lease needs the time: apply the operation through a store, or give the caller `now`",
            ));
        }
        Ok(())
    }
}

fn bad_lease(message: String) -> OpError {
    OpError::new(ErrorCode::InvalidArgument, format!("bad lease: {message}"))
}

/// A lease's length: `30s`, `5m`, `2h`, `1d`, `1h30m`, or a bare number of
/// seconds; from 1 second to [`MAX_LEASE_SECONDS`].
pub fn parse_lease(text: &str) -> Result<u64, String> {
    let text = text.trim();
    if let Ok(secs) = text.parse::<u64>() {
        return check_lease(secs);
    }
    let wrong = || format!("`{text}` is not a duration (say `30s`, `5m`, `2h`, `1d` or `1h30m`)");
    let mut total: u64 = 0;
    let mut rest = text;
    if rest.is_empty() {
        return Err(wrong());
    }
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let (number, after) = rest.split_at(digits);
        let unit = after.chars().next().ok_or_else(wrong)?;
        let scale = match unit {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            _ => return Err(wrong()),
        };
        let number: u64 = number.parse().map_err(|_| wrong())?;
        total = number
            .checked_mul(scale)
            .and_then(|n| n.checked_add(total))
            .ok_or_else(|| format!("`{text}` is longer than a year"))?;
        rest = &after[1..];
    }
    check_lease(total)
}

fn check_lease(secs: u64) -> Result<u64, String> {
    match secs {
        0 => Err("a lease lasts at least 1 second".to_owned()),
        s if s > MAX_LEASE_SECONDS => Err(format!(
            "a lease lasts at most a year ({MAX_LEASE_SECONDS} seconds), not {s}"
        )),
        s => Ok(s),
    }
}

impl Runner {
    /// Puts every task whose lease ran out by `now` back to `pending`, one
    /// `lease_expired` event each (and the plan's status event, if it changed).
    /// O(expired · log n).
    pub fn expire_leases(&mut self, now: u64) -> Vec<Event> {
        let mut events = Vec::new();
        while let Some(&(until, i)) = self.index.leases.first() {
            if until > now {
                break;
            }
            let holder = self.doc.tasks[i].holder.clone().unwrap_or_default();
            self.set_status(i, TaskStatus::Pending);
            let id = self.task(i).id;
            self.clear_current(id);
            let by = match &holder.agent {
                Some(agent) => format!("agent {agent}'s"),
                None => "its holder's".to_owned(),
            };
            let mut event = Event::task(
                EventKind::LeaseExpired,
                id,
                format!(
                    "Task {id} is pending again: {by} lease ran out at {}",
                    format_unix(until)
                ),
            );
            event.agent = holder.agent;
            events.push(event);
        }
        if !events.is_empty() {
            events.extend(self.refresh_status());
        }
        events
    }

    /// Records `caller` as the holder of the task at `i`, just started.
    pub(super) fn hold(&mut self, i: usize, caller: &Caller) {
        // A caller without an identity or a lease is the PlanManager API's single
        // agent: nothing to record (and its results stay free of times).
        if caller.agent.is_none() && caller.lease.is_none() {
            return;
        }
        let holder = Holder {
            agent: caller.agent.clone(),
            since: caller.now.map(format_unix),
            lease_seconds: caller.lease,
            lease_expires_at: None,
        };
        if holder == Holder::default() {
            return;
        }
        self.index
            .held
            .entry(holder_key(holder.agent.as_deref()).to_owned())
            .or_default()
            .insert(i);
        self.touch(i);
        self.doc.tasks[i].holder = Some(Box::new(holder));
        if let (Some(lease), Some(now)) = (caller.lease, caller.now) {
            self.set_lease(i, lease, now);
        }
    }

    /// Forgets the holder of the task at `i` (it left `in_progress`).
    pub(super) fn release(&mut self, i: usize) {
        self.touch(i);
        let Some(holder) = self.doc.tasks[i].holder.take() else {
            return;
        };
        let key = holder_key(holder.agent.as_deref());
        if let Some(held) = self.index.held.get_mut(key) {
            held.remove(&i);
            if held.is_empty() {
                self.index.held.remove(key);
            }
        }
        if let Some(until) = holder.lease_expires_at.as_deref().and_then(parse_rfc3339) {
            self.index.leases.remove(&(until, i));
        }
    }

    /// Gives the task at `i` (held) a lease of `seconds` from `now`.
    fn set_lease(&mut self, i: usize, seconds: u64, now: u64) {
        self.touch(i);
        let Some(holder) = self.doc.tasks[i].holder.as_mut() else {
            return;
        };
        if let Some(old) = holder.lease_expires_at.as_deref().and_then(parse_rfc3339) {
            self.index.leases.remove(&(old, i));
        }
        let until = now.saturating_add(seconds);
        holder.lease_seconds = Some(seconds);
        holder.lease_expires_at = Some(format_unix(until));
        self.index.leases.insert((until, i));
    }

    /// The positions of the tasks `agent` holds, in plan order.
    pub(super) fn held_by(&self, agent: Option<&str>) -> Vec<usize> {
        self.index
            .held
            .get(holder_key(agent))
            .map(|held| held.iter().copied().collect())
            .unwrap_or_default()
    }

    /// Renews the leases of the tasks the caller holds: for `caller.lease`
    /// seconds if given, else for each lease's own length. The ids renewed.
    pub(super) fn renew(&mut self, caller: &Caller) -> Vec<u32> {
        let Some(now) = caller.now else {
            return Vec::new();
        };
        let mut renewed = Vec::new();
        for i in self.held_by(caller.agent.as_deref()) {
            let own = self.task(i).holder.as_ref().and_then(|h| h.lease_seconds);
            if let Some(seconds) = caller.lease.or(own) {
                self.set_lease(i, seconds, now);
                renewed.push(self.task(i).id);
            }
        }
        renewed
    }

    /// The task named, or the caller's task when none is named: the task
    /// the agent holds, or — for a caller without an identity — the one task
    /// in progress that no agent holds. Refused (`AMBIGUOUS_TASK`) when that
    /// is not one task. A caller that follows seed 000's cursor
    /// ([`Caller::cursor`]) gets its current task instead ([`Runner::current_of`]).
    pub(super) fn target(&self, task: Option<&TaskRef>, caller: &Caller) -> Result<usize, OpError> {
        if let Some(task) = task {
            return self.find(task);
        }
        let candidates = self.tasks_of(caller);
        let chosen = match (caller.cursor, &candidates[..]) {
            (true, _) => self.current_of(caller),
            (false, [i]) => Some(*i),
            (false, []) => None,
            (false, _) => return Err(self.ambiguous(&candidates, caller)),
        };
        chosen.ok_or_else(|| {
            let message = match (&caller.agent, caller.cursor) {
                (Some(agent), true) => format!(
                    "There is no current task for {agent}; {}",
                    Advice::START_NEXT.mcp
                ),
                (Some(agent), false) => format!(
                    "{} agent {agent} holds no task in progress; {}",
                    Advice::NO_ID.mcp,
                    Advice::START_NEXT.mcp
                ),
                (None, true) => format!("There is no current task; {}", Advice::START_NEXT.mcp),
                (None, false) => format!(
                    "{} there is no current task; {}",
                    Advice::NO_ID.mcp,
                    Advice::START_NEXT.mcp
                ),
            };
            OpError::new(ErrorCode::NoCurrentTask, message).with(match &caller.agent {
                Some(agent) => json!({"agent": agent}),
                None => json!({}),
            })
        })
    }

    /// `AMBIGUOUS_TASK`: an id-less complete or fail while the caller has
    /// several tasks in progress (`candidates`).
    fn ambiguous(&self, candidates: &[usize], caller: &Caller) -> OpError {
        let ids: Vec<u32> = candidates
            .iter()
            .take(20)
            .map(|&i| self.task(i).id)
            .collect();
        let (whose, advice) = match caller.agent.as_deref() {
            Some(agent) => (format!("agent {agent} holds"), Advice::NAME_TASK.mcp),
            None => ("the plan has".to_owned(), Advice::NAME_TASK_OR_AGENT.mcp),
        };
        OpError::new(
            ErrorCode::AmbiguousTask,
            format!(
                "{} {whose} {} tasks in progress ({}); {advice}",
                Advice::NO_ID.mcp,
                candidates.len(),
                super::apply::join(&ids)
            ),
        )
        .with(match &caller.agent {
            Some(agent) => json!({"agent": agent, "in_progress": ids}),
            None => json!({"in_progress": ids}),
        })
    }

    /// The positions of the caller's tasks in progress, in plan order: the
    /// tasks the agent holds, or — for a caller without an identity — the
    /// tasks in progress that no agent holds.
    fn tasks_of(&self, caller: &Caller) -> Vec<usize> {
        match caller.agent.as_deref() {
            Some(agent) => self.held_by(Some(agent)),
            None => {
                let mine: Vec<usize> = self
                    .index
                    .in_progress
                    .iter()
                    .copied()
                    .filter(|&i| {
                        self.task(i)
                            .holder
                            .as_ref()
                            .is_none_or(|h| h.agent.is_none())
                    })
                    .collect();
                mine
            }
        }
    }

    /// The caller's current task (seed 000's `currentTaskID`, seed 001's
    /// `getCurrentTask`), among its tasks in progress ([`Runner::tasks_of`]):
    /// `current_task_id` when it is one of them, else the one it started
    /// last (the latest `holder.since`, then the last in plan order). Another
    /// agent's task is never the caller's, even when it is the plan's
    /// `current_task_id`.
    pub(super) fn current_of(&self, caller: &Caller) -> Option<usize> {
        let mine = self.tasks_of(caller);
        let current = self
            .doc
            .state
            .current_task_id
            .and_then(|id| self.index.position.get(&id).copied());
        if let Some(i) = current.filter(|i| mine.contains(i)) {
            return Some(i);
        }
        let since = |i: usize| self.task(i).holder.as_ref().and_then(|h| h.since.clone());
        mine.into_iter()
            .max_by(|&a, &b| since(a).cmp(&since(b)).then(a.cmp(&b)))
    }

    /// `heartbeat`: renews the leases of the tasks the caller holds.
    pub(super) fn heartbeat(&mut self, caller: &Caller) -> Result<Applied, OpError> {
        let renewed = self.renew(caller);
        let until: Vec<RenewedLease> = renewed
            .iter()
            .map(|id| {
                let t = self.task(self.index.position[id]);
                RenewedLease {
                    task_id: *id,
                    lease_expires_at: t.holder.as_ref().and_then(|h| h.lease_expires_at.clone()),
                }
            })
            .collect();
        let who = caller
            .agent
            .as_deref()
            .unwrap_or("the caller without an identity");
        let message = match renewed.len() {
            0 => format!("No lease to renew: {who} holds no leased task"),
            n => format!("Renewed {n} lease(s) of {who}"),
        };
        let events = renewed
            .iter()
            .map(|&id| {
                Event::task(
                    EventKind::LeaseRenewed,
                    id,
                    format!("Task {id}'s lease renewed"),
                )
            })
            .collect();
        Ok(Applied {
            data: OpResult::Renewed(Renewed {
                renewed: until,
                message,
            }),
            events,
        })
    }
}
