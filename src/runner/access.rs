//! One plan as the faces reach it: the state file of `planc run` and
//! `planc mcp`, or a plan of a store that `planc serve` holds among many. The dialects only
//! read, create, change and delete the plan they are given; which plan that
//! is, and who the caller is, is the face's business.

use std::sync::Arc;

use crate::document::PlanDocument;
use serde_json::json;

use crate::runner::time::now_unix;
use crate::runner::{
    self, Applied, Caller, ErrorCode, Event, Op, OpError, PlanStore, Reply, Runner, Store,
};

/// The change a dialect makes under the plan's lock: the events it made.
pub type Change<'a> = dyn FnMut(&mut Runner) -> Result<Vec<Event>, OpError> + 'a;

/// One plan: its state, read and changed as transactions.
pub trait PlanAccess: Send + Sync {
    /// Whether the plan exists (a dialect that creates plans serves one
    /// before it does).
    fn exists(&self) -> Result<bool, OpError>;

    /// The plan's state.
    fn load(&self) -> Result<PlanDocument, OpError>;

    /// Creates the plan from `doc` (revision 1, `created_at` set); refuses to
    /// replace an existing one unless `force`.
    fn create(&self, doc: PlanDocument, force: bool) -> Result<PlanDocument, OpError>;

    /// Deletes the plan when `check` accepts its state, read under the lock.
    fn delete(
        &self,
        check: &mut dyn FnMut(&PlanDocument) -> Result<(), OpError>,
    ) -> Result<(), OpError>;

    /// Applies one operation for `caller` (its agent, or the plan's default
    /// agent when it names none).
    fn apply_as(&self, op: &Op, caller: &Caller) -> Result<Applied, OpError>;

    /// Runs `change` on the state under the lock (after expiring leases) and
    /// commits the events it made as one revision; a refused change leaves
    /// the plan as it was.
    fn transact_events(&self, op: &str, change: &mut Change<'_>) -> Result<(), OpError>;

    /// The agent of calls that name none (`planc mcp --agent`).
    fn default_agent(&self) -> Option<String> {
        None
    }

    /// Who a call of `caller` acts as: its agent, else the default one. A
    /// face that fixes who may act as whom (`planc serve`'s work tokens)
    /// refuses here.
    fn acting(&self, caller: &Caller) -> Result<Caller, OpError> {
        Ok(Caller {
            agent: caller.agent.clone().or_else(|| self.default_agent()),
            ..caller.clone()
        })
    }

    /// How an error names the plan (a state file's path, a plan id).
    fn name(&self) -> String;

    /// The id of a plan an agent's message creates here.
    fn new_plan_id(&self) -> String {
        "plan".to_owned()
    }
}

impl dyn PlanAccess + '_ {
    /// Applies one operation for the plan's default caller.
    pub fn apply(&self, op: &Op) -> Result<Applied, OpError> {
        self.apply_as(op, &Caller::default())
    }

    /// [`PlanAccess::transact_events`] with a value: `change` answers it
    /// with the events it made. A store may run `change` more than once (a
    /// database retries a conflict); the value of the committed run counts.
    pub fn transact<T>(
        &self,
        op: &str,
        mut change: impl FnMut(&mut Runner) -> Result<(T, Vec<Event>), OpError>,
    ) -> Result<T, OpError> {
        let mut value = None;
        self.transact_events(op, &mut |runner| {
            let (answer, events) = change(runner)?;
            value = Some(answer);
            Ok(events)
        })?;
        value.ok_or_else(|| {
            OpError::new(
                crate::runner::ErrorCode::InvalidState,
                format!("the store did not run the change `{op}`"),
            )
        })
    }

    /// Reads one agent message (text alone) for `caller`: see [`Self::observe_reply`].
    pub fn observe<T>(
        &self,
        message: &str,
        caller: &Caller,
        goal: Option<&str>,
        after: impl FnMut(&Runner) -> Result<T, OpError>,
    ) -> Result<(Applied, T), OpError> {
        self.observe_reply(&Reply::text(message), caller, goal, after)
    }

    /// Reads one agent reply (the text protocol, [`runner::observe_reply`])
    /// for `caller` as one change, then runs `after` on the plan as it is now.
    ///
    /// When the plan does not exist yet and the reply calls a tool or
    /// declares steps (`[Step] description` lines), the plan is created
    /// first — empty, with `goal` (else the reply's first line that is not
    /// a step) and the steps system's iteration limit — and the reply then
    /// adds its steps and starts the first. Otherwise a missing plan stays
    /// missing (`PLAN_NOT_FOUND`): a reply that plans nothing needs no plan.
    pub fn observe_reply<T>(
        &self,
        reply: &Reply,
        caller: &Caller,
        goal: Option<&str>,
        mut after: impl FnMut(&Runner) -> Result<T, OpError>,
    ) -> Result<(Applied, T), OpError> {
        let caller = self.acting(caller)?;
        if !self.exists()? {
            // A reply refused for its steps creates no plan either.
            super::reply_plan::declared_steps(&reply.text)?;
            let Some(plan) = runner::plan_for_reply(self.new_plan_id(), reply, goal) else {
                let name = self.name();
                return Err(OpError::new(
                    ErrorCode::PlanNotFound,
                    format!(
                        "{name} does not exist yet; a reply that calls a tool, or declares steps with lines `[Step] description`, creates it"
                    ),
                )
                .with(json!({"path": name})));
            };
            match self.create(plan, false) {
                Ok(_) => {}
                // Another agent created it meanwhile: observe into theirs.
                Err(_) if self.exists()? => {}
                Err(error) => return Err(error),
            }
        }
        self.transact("observe", |runner| {
            let applied = runner::observe_reply(runner, reply, &caller.clone().at(now_unix()))?;
            let value = after(runner)?;
            let events = applied.events.clone();
            Ok(((applied, value), events))
        })
    }
}

/// One plan of a store, by its id: how `planc run` and `planc mcp` reach
/// theirs, a plan of `--store` or the one plan of a state file (a store of
/// one plan, [`StorePlan::state_file`]). Every call goes through the
/// [`PlanStore`] interface.
#[derive(Clone, Debug)]
pub struct StorePlan {
    store: Arc<dyn PlanStore>,
    plan_id: String,
    /// The agent of calls that name none.
    agent: Option<String>,
    /// How errors name the plan.
    name: String,
}

impl StorePlan {
    /// Plan `plan_id` of `store`.
    pub fn new(store: Arc<dyn PlanStore>, plan_id: impl Into<String>) -> StorePlan {
        let plan_id = plan_id.into();
        StorePlan {
            name: format!("plan `{}`", crate::escape::line(&plan_id)),
            store,
            plan_id,
            agent: None,
        }
    }

    /// The one plan of the state file `file` (its lock settings and agent
    /// kept): named by the file's path, and a plan a message creates there
    /// takes the file's name (or its session's key) as its id.
    pub fn state_file(file: Store) -> StorePlan {
        let (plan_id, agent) = (file.message_plan_id(), file.agent().map(str::to_owned));
        let name = file.path().display().to_string();
        StorePlan {
            store: file.into_plan_store(),
            plan_id,
            agent,
            name,
        }
    }

    /// The same plan, `agent` acting for calls that name none.
    pub fn with_agent(mut self, agent: Option<String>) -> StorePlan {
        self.agent = agent;
        self
    }

    /// The store that holds the plan.
    pub fn store(&self) -> &Arc<dyn PlanStore> {
        &self.store
    }

    /// The plan's id in its store.
    pub fn plan_id(&self) -> &str {
        &self.plan_id
    }

    /// A runner over the plan, with the leases that ran out expired.
    pub fn runner(&self) -> Result<Runner, OpError> {
        self.store.runner(&self.plan_id)
    }
}

impl PlanAccess for StorePlan {
    fn exists(&self) -> Result<bool, OpError> {
        self.store.contains(&self.plan_id)
    }

    fn load(&self) -> Result<PlanDocument, OpError> {
        self.store.load(&self.plan_id)
    }

    fn create(&self, doc: PlanDocument, force: bool) -> Result<PlanDocument, OpError> {
        self.store.create(&self.plan_id, doc, force)
    }

    fn delete(
        &self,
        check: &mut dyn FnMut(&PlanDocument) -> Result<(), OpError>,
    ) -> Result<(), OpError> {
        self.store.delete_checked(&self.plan_id, check)
    }

    fn apply_as(&self, op: &Op, caller: &Caller) -> Result<Applied, OpError> {
        self.store.apply(&self.plan_id, op, &self.acting(caller)?)
    }

    fn transact_events(&self, op: &str, change: &mut Change<'_>) -> Result<(), OpError> {
        self.store.transact(&self.plan_id, op, change).map(drop)
    }

    fn default_agent(&self) -> Option<String> {
        self.agent.clone()
    }

    fn name(&self) -> String {
        self.name.clone()
    }

    fn new_plan_id(&self) -> String {
        self.plan_id.clone()
    }
}

/// A state file as one plan: [`StorePlan::state_file`].
impl PlanAccess for Store {
    fn exists(&self) -> Result<bool, OpError> {
        StorePlan::state_file(self.clone()).exists()
    }

    fn load(&self) -> Result<PlanDocument, OpError> {
        StorePlan::state_file(self.clone()).load()
    }

    fn create(&self, doc: PlanDocument, force: bool) -> Result<PlanDocument, OpError> {
        PlanAccess::create(&StorePlan::state_file(self.clone()), doc, force)
    }

    fn delete(
        &self,
        check: &mut dyn FnMut(&PlanDocument) -> Result<(), OpError>,
    ) -> Result<(), OpError> {
        PlanAccess::delete(&StorePlan::state_file(self.clone()), check)
    }

    fn apply_as(&self, op: &Op, caller: &Caller) -> Result<Applied, OpError> {
        StorePlan::state_file(self.clone()).apply_as(op, caller)
    }

    fn transact_events(&self, op: &str, change: &mut Change<'_>) -> Result<(), OpError> {
        StorePlan::state_file(self.clone()).transact_events(op, change)
    }

    fn default_agent(&self) -> Option<String> {
        self.agent().map(str::to_owned)
    }

    fn name(&self) -> String {
        self.path().display().to_string()
    }

    fn new_plan_id(&self) -> String {
        self.message_plan_id()
    }
}
