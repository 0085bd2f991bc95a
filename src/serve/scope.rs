//! Who may do what: a request's [`Grant`] (its token's scope, the agent a
//! work token acts as, the plans it may touch) and what each route,
//! operation and MCP call needs. A refusal is `FORBIDDEN` (403) naming what
//! is needed.

use axum::http::Method;
use percent_encoding::percent_decode_str;
use serde_json::json;

use crate::runner::{Caller, ErrorCode, OpError};

/// What a token allows, each scope everything the one before allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Scope {
    /// Watch: the page, API reads, the event streams, health and metrics,
    /// the runner's queries.
    Read,
    /// Run tasks: the runner's changes, as the token's agent.
    Work,
    /// Everything: create, delete and reset plans, take over tasks, act as
    /// any agent.
    Admin,
}

impl Scope {
    /// The scope's name as tokens files and errors spell it.
    pub fn name(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Work => "work",
            Scope::Admin => "admin",
        }
    }
}

/// What one request may do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grant {
    /// The token's scope.
    pub scope: Scope,
    /// The agent a work token acts as (its calls name it, or no agent).
    pub agent: Option<String>,
    /// The plans it may touch (`None`: every plan).
    pub plans: Option<Vec<String>>,
}

impl Grant {
    /// Everything (a server without tokens, or its `--token`).
    pub fn everything() -> Grant {
        Grant {
            scope: Scope::Admin,
            agent: None,
            plans: None,
        }
    }

    /// Refuses `what` unless the scope is at least `needed`.
    pub fn need(&self, needed: Scope, what: &str) -> Result<(), OpError> {
        if self.scope >= needed {
            return Ok(());
        }
        Err(OpError::new(
            ErrorCode::Forbidden,
            format!(
                "{what} needs a token of scope `{}`; this one is `{}`",
                needed.name(),
                self.scope.name()
            ),
        )
        .with(json!({"needed": needed.name(), "scope": self.scope.name()})))
    }

    /// Whether the token may touch plan `plan_id`.
    pub fn may_touch(&self, plan_id: &str) -> bool {
        self.plans
            .as_ref()
            .is_none_or(|plans| plans.iter().any(|p| p == plan_id))
    }

    /// Refuses plan `plan_id` unless the token may touch it.
    pub fn plan(&self, plan_id: &str) -> Result<(), OpError> {
        if self.may_touch(plan_id) {
            return Ok(());
        }
        let plans = self.plans.clone().unwrap_or_default();
        Err(OpError::new(
            ErrorCode::Forbidden,
            format!(
                "this token may not touch plan `{}`; it may touch {}",
                crate::escape::line(plan_id),
                plans.join(", ")
            ),
        )
        .with(json!({"plan_id": plan_id, "plans": plans})))
    }

    /// Refuses runner operation `op` (by its seed name) unless the scope
    /// allows it.
    pub fn op(&self, op: &str) -> Result<(), OpError> {
        self.need(
            op_scope(op),
            &format!("the operation `{}`", crate::escape::line(op)),
        )
    }

    /// The caller an operation runs as: a work token's agent (a call that
    /// names another agent is refused); a takeover needs admin.
    pub fn caller(&self, mut caller: Caller) -> Result<Caller, OpError> {
        if caller.takeover {
            self.need(
                Scope::Admin,
                "taking over another agent's task (`takeover`)",
            )?;
        }
        if self.scope == Scope::Work {
            let own = self.agent.clone();
            match &caller.agent {
                Some(named) if Some(named) != own.as_ref() => {
                    return Err(OpError::new(
                        ErrorCode::Forbidden,
                        format!(
                            "this token acts as agent `{}`, not `{}`",
                            crate::escape::line(own.as_deref().unwrap_or("")),
                            crate::escape::line(named)
                        ),
                    )
                    .with(json!({"agent": own, "named": named})))
                }
                _ => caller.agent = own,
            }
        }
        Ok(caller)
    }
}

/// What runner operation `op` needs: its queries read, a reset admin,
/// every other change work.
pub fn op_scope(op: &str) -> Scope {
    match op {
        "resetPlan" => Scope::Admin,
        _ if is_query(op) => Scope::Read,
        _ => Scope::Work,
    }
}

/// Whether runner operation `op` only reads (those `Op::is_change` says
/// are not changes).
fn is_query(op: &str) -> bool {
    matches!(
        op,
        "getCurrentTask"
            | "getTaskById"
            | "getTaskList"
            | "getExecutableTaskList"
            | "getPlanStatus"
    )
}

/// What an HTTP request needs, by its method and path: the scope, and the
/// plan it touches (`/api/plans/{id}…`). `/mcp` needs read; each tool call
/// is checked on its own.
pub fn route_needs(method: &Method, path: &str) -> (Scope, Option<String>) {
    let Some(rest) = path.strip_prefix("/api/plans/") else {
        let scope = match (method, path) {
            (&Method::POST, "/api/plans") => Scope::Admin,
            _ => Scope::Read,
        };
        return (scope, None);
    };
    let mut segments = rest.split('/');
    let plan = segments
        .next()
        .map(|id| percent_decode_str(id).decode_utf8_lossy().into_owned());
    let scope = match (method, segments.next(), segments.next()) {
        (&Method::DELETE, None, _) => Scope::Admin,
        (&Method::POST, Some("ops"), Some(op)) => op_scope(op),
        // No route changes anything on another method (axum answers 405).
        _ if method.is_safe() => Scope::Read,
        _ => Scope::Work,
    };
    (scope, plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_operation_needs_its_scope() {
        assert_eq!(op_scope("getPlanStatus"), Scope::Read);
        assert_eq!(op_scope("getTaskList"), Scope::Read);
        assert_eq!(op_scope("completeTask"), Scope::Work);
        assert_eq!(op_scope("resetPlan"), Scope::Admin);
        assert_eq!(op_scope("noSuchOp"), Scope::Work);
    }

    #[test]
    fn a_work_token_fixes_the_agent() {
        let grant = Grant {
            scope: Scope::Work,
            agent: Some("builder".to_owned()),
            plans: None,
        };
        let caller = grant.caller(Caller::default()).unwrap();
        assert_eq!(caller.agent.as_deref(), Some("builder"));
        let other = grant
            .caller(Caller::agent(Some("reviewer".to_owned())))
            .unwrap_err();
        assert_eq!(other.code, ErrorCode::Forbidden);
        let takeover = grant
            .caller(Caller::default().taking_over(true))
            .unwrap_err();
        assert_eq!(takeover.details["needed"], "admin");
    }

    #[test]
    fn routes_need_their_scope_and_name_their_plan() {
        let id = |s: &str| Some(s.to_owned());
        assert_eq!(route_needs(&Method::GET, "/"), (Scope::Read, None));
        assert_eq!(
            route_needs(&Method::POST, "/api/plans"),
            (Scope::Admin, None)
        );
        assert_eq!(
            route_needs(&Method::DELETE, "/api/plans/a%20b"),
            (Scope::Admin, id("a b"))
        );
        assert_eq!(
            route_needs(&Method::POST, "/api/plans/p/ops/startNextTask"),
            (Scope::Work, id("p"))
        );
        assert_eq!(
            route_needs(&Method::GET, "/api/plans/p/events"),
            (Scope::Read, id("p"))
        );
        assert_eq!(
            route_needs(&Method::HEAD, "/api/plans/p"),
            (Scope::Read, id("p"))
        );
        assert_eq!(
            route_needs(&Method::PUT, "/api/plans/p"),
            (Scope::Work, id("p"))
        );
    }
}
