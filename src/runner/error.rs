//! Why an operation was refused: the PlanManager API's error codes, plus planc's own.

use std::fmt;

use serde_json::{json, Value};

/// A stable error code, spelt as in the PlanManager API (`TASK_NOT_FOUND`, …).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// No task has the given id or key.
    TaskNotFound,
    /// A dependency names no task, or the task itself.
    InvalidDependency,
    /// The task is not `pending`, so it cannot be updated or removed.
    TaskNotEditable,
    /// The change would make the dependency graph cyclic.
    CircularDependency,
    /// The task's status does not allow this transition.
    InvalidStatus,
    /// The plan is paused (or otherwise not accepting changes).
    PlanNotActive,
    /// The task is pending but some dependency is not completed or skipped.
    DependenciesNotMet,
    /// No task id was given and the plan has no current task.
    NoCurrentTask,
    /// No task id was given and the caller's task is not one task: a caller
    /// without an identity while several tasks are in progress, or an agent
    /// holding several.
    AmbiguousTask,
    /// Another agent holds the task: only its holder may change it, unless
    /// the call takes it over (`takeover: true`, `--takeover`).
    TaskHeld,
    /// An argument is missing or malformed (empty name, bad status filter…).
    InvalidArgument,
    /// The assignee names no role of the plan.
    UnknownRole,
    /// The state file cannot be read, parsed or written.
    StateIo,
    /// The state file parses but is not a consistent plan state.
    InvalidState,
    /// Another writer holds the state's lock (past the lock timeout), or the
    /// lock file was removed while this change held it.
    StateLocked,
    /// A counter would pass its largest value (`state.revision`,
    /// `state.iteration_count`, task ids).
    CounterOverflow,
    /// A dialect named a plan this server does not hold (a wrong `plan_id`,
    /// or a deleted plan).
    PlanNotFound,
    /// A dialect asked to create a plan where one exists already.
    PlanExists,
    /// A plan id a store cannot hold: empty, too long, a path separator, a
    /// control character or a leading dot.
    InvalidPlanId,
    /// The caller's credential does not allow the call: its scope, the
    /// agent it acts as, or the plans it may touch (`planc serve --tokens`).
    Forbidden,
}

impl ErrorCode {
    /// Every code, in documentation order.
    pub const ALL: [ErrorCode; 20] = [
        ErrorCode::TaskNotFound,
        ErrorCode::InvalidDependency,
        ErrorCode::TaskNotEditable,
        ErrorCode::CircularDependency,
        ErrorCode::InvalidStatus,
        ErrorCode::PlanNotActive,
        ErrorCode::DependenciesNotMet,
        ErrorCode::NoCurrentTask,
        ErrorCode::AmbiguousTask,
        ErrorCode::TaskHeld,
        ErrorCode::InvalidArgument,
        ErrorCode::UnknownRole,
        ErrorCode::StateIo,
        ErrorCode::InvalidState,
        ErrorCode::StateLocked,
        ErrorCode::CounterOverflow,
        ErrorCode::PlanNotFound,
        ErrorCode::PlanExists,
        ErrorCode::InvalidPlanId,
        ErrorCode::Forbidden,
    ];

    /// The code as it appears in the envelope.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::TaskNotFound => "TASK_NOT_FOUND",
            ErrorCode::InvalidDependency => "INVALID_DEPENDENCY",
            ErrorCode::TaskNotEditable => "TASK_NOT_EDITABLE",
            ErrorCode::CircularDependency => "CIRCULAR_DEPENDENCY",
            ErrorCode::InvalidStatus => "INVALID_STATUS",
            ErrorCode::PlanNotActive => "PLAN_NOT_ACTIVE",
            ErrorCode::DependenciesNotMet => "DEPENDENCIES_NOT_MET",
            ErrorCode::NoCurrentTask => "NO_CURRENT_TASK",
            ErrorCode::AmbiguousTask => "AMBIGUOUS_TASK",
            ErrorCode::TaskHeld => "TASK_HELD",
            ErrorCode::InvalidArgument => "INVALID_ARGUMENT",
            ErrorCode::UnknownRole => "UNKNOWN_ROLE",
            ErrorCode::StateIo => "STATE_IO",
            ErrorCode::InvalidState => "INVALID_STATE",
            ErrorCode::StateLocked => "STATE_LOCKED",
            ErrorCode::CounterOverflow => "COUNTER_OVERFLOW",
            ErrorCode::PlanNotFound => "PLAN_NOT_FOUND",
            ErrorCode::PlanExists => "PLAN_EXISTS",
            ErrorCode::InvalidPlanId => "INVALID_PLAN_ID",
            ErrorCode::Forbidden => "FORBIDDEN",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A refused operation: code, message for people (and LLMs), details for programs.
#[derive(Clone, Debug, PartialEq)]
pub struct OpError {
    /// The stable code.
    pub code: ErrorCode,
    /// What went wrong, in a sentence.
    pub message: String,
    /// Machine-readable particulars (an object; empty when there are none).
    pub details: Value,
}

impl OpError {
    /// An error with empty details.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> OpError {
        OpError {
            code,
            message: message.into(),
            details: json!({}),
        }
    }

    /// The same error with `details`.
    pub fn with(mut self, details: Value) -> OpError {
        self.details = details;
        self
    }

    /// `COUNTER_OVERFLOW`: `counter` (as spelt in the state, e.g.
    /// `state.revision`) is at its largest value `max`; `advice` says what
    /// can still be done.
    pub fn overflow(counter: &str, max: u64, advice: &str) -> OpError {
        OpError::new(
            ErrorCode::CounterOverflow,
            format!("{counter} is at its largest value ({max}); {advice}"),
        )
        .with(json!({"counter": counter, "max": max}))
    }

    /// `INVALID_ARGUMENT` for arguments of `tool` that do not deserialise;
    /// an unknown field is named in `details.field`.
    pub fn bad_arguments(tool: &str, error: &serde_json::Error) -> OpError {
        let message = error.to_string();
        let field = message
            .split("unknown field `")
            .nth(1)
            .and_then(|rest| rest.split('`').next())
            .map(str::to_owned);
        let error = OpError::new(
            ErrorCode::InvalidArgument,
            format!("bad arguments for `{tool}`: {message}"),
        );
        match field {
            Some(field) => error.with(json!({"field": field})),
            None => error,
        }
    }

    /// Whether the state file could not be read as a state: missing or
    /// unreadable (`STATE_IO` with `details.access` `"read"`), or not a
    /// consistent `planc/1` state (`INVALID_STATE`). The command line exits 2
    /// for these, as for any input file it cannot read.
    pub fn is_unreadable_state(&self) -> bool {
        match self.code {
            ErrorCode::InvalidState => true,
            ErrorCode::StateIo => {
                self.details.get("access").and_then(Value::as_str) == Some("read")
            }
            _ => false,
        }
    }

    /// The PlanManager API's error envelope: `{"success": false, "error": {code, message, details}}`.
    pub fn envelope(&self) -> Value {
        json!({
            "success": false,
            "error": {"code": self.code.as_str(), "message": self.message, "details": self.details},
        })
    }
}

impl fmt::Display for OpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for OpError {}
