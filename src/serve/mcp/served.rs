//! Which plan of a store an MCP session's call is on: the plan it names,
//! else the session's (the one it created, else the first it named), and
//! that plan behind [`PlanAccess`] with the request's token at its door.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use crate::document::PlanDocument;
use crate::mcp::Dialect;
use crate::runner::access::{Change, PlanAccess, StorePlan};
use crate::runner::{Applied, Caller, ErrorCode, Op, OpError, PlanStore};

use super::super::scope::{Grant, Scope};

/// The plan an MCP session works on: the plan it created, or else the
/// first plan it named in a call that succeeded. Nothing is ever routed to
/// "the only plan in the store".
#[derive(Clone, Debug, Default)]
pub struct SessionPlan(Arc<Mutex<Option<String>>>);

impl SessionPlan {
    /// The session's plan, if it has one.
    fn get(&self) -> Option<String> {
        self.0.lock().ok().and_then(|id| id.clone())
    }

    /// Binds the session to `plan_id`.
    fn set(&self, plan_id: String) {
        if let Ok(mut bound) = self.0.lock() {
            *bound = Some(plan_id);
        }
    }

    /// Binds the session to `plan_id` unless it has a plan already.
    fn bind_first(&self, plan_id: String) {
        if let Ok(mut bound) = self.0.lock() {
            bound.get_or_insert(plan_id);
        }
    }
}

/// `PLAN_NOT_FOUND` for a call that names no plan in a session bound to
/// none: how to bind, in the dialect's own terms, and the plans there are.
fn unbound(store: &dyn PlanStore, dialect: Dialect) -> OpError {
    let plans: Vec<String> = store
        .list()
        .map(|plans| plans.into_iter().map(|p| p.plan_id).collect())
        .unwrap_or_default();
    let create = match dialect {
        Dialect::PlanAct => "or let the planner create one with create_plan",
        Dialect::Steps => {
            "or call observe with a message whose `[Step] description` lines create one"
        }
        Dialect::PlanTool => "or create one with create_plan_from_structure",
        Dialect::Planc | Dialect::Tasks => "or create one (POST /api/plans)",
    };
    let listed = match plans.is_empty() {
        true => "this server holds none yet".to_owned(),
        false => format!("this server holds {}", plans.join(", ")),
    };
    OpError::new(
        ErrorCode::PlanNotFound,
        format!(
            "this session works on no plan yet: name one with plan_id ({listed}), {create}; \
             the session then keeps to it"
        ),
    )
    .with(json!({"field": "plan_id", "plans": plans}))
}

/// The plan named, or else the session's (refused when it has none).
pub(super) fn named_or_bound(
    store: &dyn PlanStore,
    dialect: Dialect,
    named: Option<String>,
    session: &SessionPlan,
) -> Result<String, OpError> {
    match named.or_else(|| session.get()) {
        Some(id) => Ok(id),
        None => Err(unbound(store, dialect)),
    }
}

/// Whether tool `name` makes a new plan when it names none (Plan-Act's
/// planner starts a plan for each request).
fn creates_new(dialect: Dialect, name: &str) -> bool {
    dialect == Dialect::PlanAct && name == "create_plan"
}

/// Whether tool `name` may create the session's plan when it has none
/// (the steps system's first message with steps).
fn may_create(dialect: Dialect, name: &str) -> bool {
    creates_new(dialect, name) || (dialect == Dialect::Steps && name == "observe")
}

/// A fresh plan id (`plan_` and the milliseconds since 1970, as seed 003
/// names its plans); `attempt` counts ids already taken.
fn fresh_plan_id(attempt: u64) -> String {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    format!("plan_{}", ms + attempt)
}

/// Who makes a tool call: the agent of calls that name none, and what the
/// request's token grants.
pub(super) struct CallerOf {
    /// The agent of calls that name none.
    pub agent: Option<String>,
    /// What the request's token grants.
    pub grant: Grant,
}

/// One tool call on the plan it names, else the session's; a call that
/// creates a plan without naming one makes a new plan and binds the
/// session to it.
pub(super) fn call(
    store: &Arc<dyn PlanStore>,
    dialect: Dialect,
    name: &str,
    mut arguments: Value,
    caller: CallerOf,
    session: &SessionPlan,
) -> Option<crate::mcp::Outcome> {
    // plan-tool's `plan_id` is its own argument; the others' is the server's.
    let named = match &mut arguments {
        Value::Object(map) if dialect == Dialect::PlanTool => map
            .get("plan_id")
            .and_then(Value::as_str)
            .map(str::to_owned),
        Value::Object(map) => match map.remove("plan_id") {
            Some(Value::String(id)) => Some(id),
            Some(Value::Null) | None => None,
            Some(other) => {
                let error = OpError::new(
                    ErrorCode::InvalidArgument,
                    format!("plan_id must be a string, not {other}"),
                )
                .with(json!({"field": "plan_id"}));
                return dialect.call(&Refuse(error), name, arguments);
            }
        },
        _ => None,
    };
    let bound = session.get();
    let plan_id = match (&named, bound) {
        (Some(id), _) => Some(id.clone()),
        (None, _) if creates_new(dialect, name) => None,
        (None, Some(id)) => Some(id),
        (None, None) if may_create(dialect, name) => None,
        (None, None) => {
            return dialect.call(&Refuse(unbound(store.as_ref(), dialect)), name, arguments)
        }
    };
    let creating = plan_id.is_none();
    let plan = Served {
        store,
        plan_id: Mutex::new(plan_id),
        agent: caller.agent,
        grant: caller.grant,
    };
    let outcome = dialect.call(&plan, name, arguments)?;
    if let Some(used) = plan.plan_id.lock().ok().and_then(|id| id.clone()) {
        match creating {
            // A plan it made without naming one is the session's from now on.
            true if !outcome.is_error => session.set(used),
            true => {}
            false if !outcome.is_error => session.bind_first(used),
            false => {}
        }
    }
    Some(outcome)
}

/// A plan of the store, for one call.
struct Served<'a> {
    store: &'a Arc<dyn PlanStore>,
    /// The plan's id; `None` until a creating tool names it (the created
    /// document's own id).
    plan_id: Mutex<Option<String>>,
    /// The caller's agent when a call names none.
    agent: Option<String>,
    /// What the caller's token grants.
    grant: Grant,
}

impl Served<'_> {
    /// The plan's id, if the token may touch it.
    fn id(&self) -> Result<String, OpError> {
        let id = self
            .plan_id
            .lock()
            .ok()
            .and_then(|id| id.clone())
            .ok_or_else(|| {
                OpError::new(
                    ErrorCode::PlanNotFound,
                    "this session works on no plan yet; create one (POST /api/plans, or a dialect's creating tool)",
                )
            })?;
        self.grant.plan(&id)?;
        Ok(id)
    }

    /// The plan, if the token may touch it, its agent the caller's.
    fn plan(&self) -> Result<StorePlan, OpError> {
        Ok(StorePlan::new(Arc::clone(self.store), self.id()?).with_agent(self.agent.clone()))
    }
}

impl PlanAccess for Served<'_> {
    fn exists(&self) -> Result<bool, OpError> {
        let id = match self.id() {
            Ok(id) => id,
            Err(error) if error.code == ErrorCode::PlanNotFound => return Ok(false),
            Err(error) => return Err(error),
        };
        self.store.contains(&id)
    }

    fn load(&self) -> Result<PlanDocument, OpError> {
        self.plan()?.load()
    }

    fn create(&self, doc: PlanDocument, force: bool) -> Result<PlanDocument, OpError> {
        self.grant.need(Scope::Admin, "creating a plan")?;
        match self.id() {
            Ok(_) => return PlanAccess::create(&self.plan()?, doc, force),
            Err(error) if error.code != ErrorCode::PlanNotFound => return Err(error),
            Err(_) => {}
        }
        // Named by no one: a fresh id, the next one when another plan has it.
        let mut attempt = 0;
        loop {
            let id = fresh_plan_id(attempt);
            self.grant.plan(&id)?;
            match self.store.create(&id, doc.clone(), false) {
                Err(error) if error.code == ErrorCode::PlanExists && attempt < 64 => attempt += 1,
                created => {
                    if created.is_ok() {
                        if let Ok(mut plan_id) = self.plan_id.lock() {
                            *plan_id = Some(id);
                        }
                    }
                    return created;
                }
            }
        }
    }

    fn delete(
        &self,
        check: &mut dyn FnMut(&PlanDocument) -> Result<(), OpError>,
    ) -> Result<(), OpError> {
        self.grant.need(Scope::Admin, "deleting a plan")?;
        PlanAccess::delete(&self.plan()?, check)
    }

    fn apply_as(&self, op: &Op, caller: &Caller) -> Result<Applied, OpError> {
        self.grant.op(op.name())?;
        let caller = self.acting(caller)?;
        self.plan()?.apply_as(op, &caller)
    }

    fn acting(&self, caller: &Caller) -> Result<Caller, OpError> {
        self.grant.caller(Caller {
            agent: caller.agent.clone().or_else(|| self.agent.clone()),
            ..caller.clone()
        })
    }

    fn transact_events(&self, op: &str, change: &mut Change<'_>) -> Result<(), OpError> {
        self.grant.need(
            Scope::Work,
            &format!("the change `{}`", crate::escape::line(op)),
        )?;
        self.plan()?.transact_events(op, change)
    }

    fn default_agent(&self) -> Option<String> {
        self.agent.clone()
    }

    fn name(&self) -> String {
        match self.id() {
            Ok(id) => format!("plan `{id}`"),
            Err(_) => "this server's plan".to_owned(),
        }
    }

    fn new_plan_id(&self) -> String {
        self.id().unwrap_or_else(|_| fresh_plan_id(0))
    }
}

/// A plan that refuses everything with one error: how a call that names no
/// usable plan is answered in its dialect's own error style.
struct Refuse(OpError);

impl PlanAccess for Refuse {
    fn exists(&self) -> Result<bool, OpError> {
        Err(self.0.clone())
    }
    fn load(&self) -> Result<PlanDocument, OpError> {
        Err(self.0.clone())
    }
    fn create(&self, _doc: PlanDocument, _force: bool) -> Result<PlanDocument, OpError> {
        Err(self.0.clone())
    }
    fn delete(
        &self,
        _check: &mut dyn FnMut(&PlanDocument) -> Result<(), OpError>,
    ) -> Result<(), OpError> {
        Err(self.0.clone())
    }
    fn apply_as(&self, _op: &Op, _caller: &Caller) -> Result<Applied, OpError> {
        Err(self.0.clone())
    }
    fn transact_events(&self, _op: &str, _change: &mut Change<'_>) -> Result<(), OpError> {
        Err(self.0.clone())
    }
    fn name(&self) -> String {
        "no plan".to_owned()
    }
}
