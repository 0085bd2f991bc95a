//! A change computed on a plan's kept runner, in place: what the writer
//! writes ([`Made`]) or the answer of a change that writes nothing, and a
//! change the writer can compute again itself ([`Redo`]) when the other
//! server moved the plan. Used by the kept runner's callers
//! ([`super::kept`]) and by the writer ([`super::writer`]).

use std::sync::{Arc, Mutex};

use super::slot::Slot;
use crate::runner::error::OpError;
use crate::runner::events::{Event, LogRecord};
use crate::runner::ops::Op;
use crate::runner::store::database::{lock, record_json};
use crate::runner::store::plan_store::plan_not_found;
use crate::runner::store::task_rows::{change_in_place, InPlace, RowWrites};
use crate::runner::time::now_unix;
use crate::runner::{Applied, Caller, Runner, Touched};

/// A change that the writer can compute again itself, on its own thread:
/// its op's name and the change (which keeps its last answer).
#[derive(Clone)]
pub(super) struct Redo {
    pub(super) op: &'static str,
    pub(super) change: Arc<ChangeFn>,
}

/// A change of a runner that any thread can run.
pub(super) type ChangeFn = dyn Fn(&mut Runner) -> Result<Vec<Event>, OpError> + Send + Sync;

impl Redo {
    /// `op` made by `caller` (at the time it runs), its answer kept in
    /// `applied` each time it runs.
    pub(super) fn of(op: &Op, caller: &Caller, applied: Arc<Mutex<Option<Applied>>>) -> Redo {
        let (op, caller) = (op.clone(), caller.clone());
        let name = op.name();
        Redo {
            op: name,
            change: Arc::new(move |runner: &mut Runner| {
                let answer = runner.apply_as(&op, &caller.clone().at(now_unix()))?;
                let events = answer.events.clone();
                *lock(&applied) = Some(answer);
                Ok(events)
            }),
        }
    }
}

/// A change computed on a kept runner that changes something.
pub(super) struct Made {
    /// The revision it was computed on.
    pub(super) base: u64,
    pub(super) writes: RowWrites,
    pub(super) record: LogRecord,
    pub(super) record_text: String,
    /// The tasks it touched.
    pub(super) touched: Touched,
}

/// A change computed on a kept runner ([`compute`]).
pub(super) enum Computed {
    /// It changes something: to be written.
    Made(Box<Made>),
    /// Refused, or it changed nothing (computed on the revision given):
    /// its answer, nothing to write.
    Answer(u64, Result<(), OpError>),
}

/// `change` computed on the slot's runner, in place; what it left on the
/// runner and does not write (a refused change's trace, or a change whose
/// record cannot be written) marked lost. `Err` without a runner.
pub(super) fn compute(
    slot: &mut Slot,
    plan_id: &str,
    op: &str,
    change: &mut dyn FnMut(&mut Runner) -> Result<Vec<Event>, OpError>,
) -> Result<Computed, OpError> {
    let Some(runner) = slot.runner.as_mut() else {
        return Err(plan_not_found(plan_id));
    };
    let InPlace {
        base,
        outcome,
        touched,
        trace,
    } = change_in_place(plan_id, runner, op, change);
    let (writes, record) = match outcome {
        Ok(Some(prepared)) => prepared,
        outcome => {
            if trace {
                slot.lose(&touched);
            }
            return Ok(Computed::Answer(base, outcome.map(|_| ())));
        }
    };
    match record_json(&record) {
        Ok(record_text) => Ok(Computed::Made(Box::new(Made {
            base,
            writes,
            record,
            record_text,
            touched,
        }))),
        Err(error) => {
            slot.lose(&touched);
            Ok(Computed::Answer(base, Err(error)))
        }
    }
}
