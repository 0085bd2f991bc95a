//! MCP over streamable HTTP (`/mcp`): the dialects' tools over the store's
//! plans. A thin face: each call names (or implies) a plan, and goes to the
//! dialect's own code with that plan behind [`PlanAccess`].
//!
//! - The dialect is the session's: `/mcp?dialect=D` or the `X-Planc-Dialect`
//!   header (default `planc`).
//! - The agent is the caller: the tool's `agent` argument, else the
//!   `X-Planc-Agent` header or `?agent=`, else the session itself
//!   (`session-` and the first 8 characters of its `Mcp-Session-Id`).
//! - `plan_id` names the plan; left out, the session's plan: the one it
//!   created, else the first it named (never the store's only plan). A
//!   creating call without one makes a new plan and binds the session.
//!
//! As `planc mcp` does, it also serves each plan's document as a resource
//! (`planc://plans/{plan_id}`, the id percent-encoded; listed, and offered
//! as a resource template; `planc://plan` is the session's plan) and the
//! prompt of where a plan stands (`plan_context`, its `plan_id` argument
//! optional once the session has a plan).

use std::sync::{Arc, Mutex};

use axum::http::request::Parts;
use axum::http::HeaderMap;
use percent_encoding::{percent_decode_str, utf8_percent_encode, NON_ALPHANUMERIC};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, GetPromptRequestParams, GetPromptResponse,
    InitializeRequestParams, InitializeResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, PromptArgument,
    ReadResourceRequestParams, ReadResourceResponse, ResourceTemplate, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{json, Value};

use crate::document::PlanDocument;
use crate::mcp::server::{
    check_prompt_name, internal, mcp_tool, plan_contents, plan_prompt, plan_resource,
    prompt_response, server_config, tool_response, PLAN_URI,
};
use crate::mcp::{Dialect, ToolDef};
use crate::runner::access::{Change, PlanAccess};
use crate::runner::{self, Applied, Caller, ErrorCode, Op, OpError, PlanStore, PlanSummary};

use super::scope::{Grant, Scope};

/// Where each plan's document is: this and the plan id, percent-encoded.
const PLANS_URI: &str = "planc://plans/";
/// The resource template of the plans' documents.
const PLANS_URI_TEMPLATE: &str = "planc://plans/{plan_id}";

/// The URI of plan `plan_id`'s document.
fn plan_uri(plan_id: &str) -> String {
    format!(
        "{PLANS_URI}{}",
        utf8_percent_encode(plan_id, NON_ALPHANUMERIC)
    )
}

/// Runs `work` on the store off the async workers (the store blocks).
async fn blocking<T: Send + 'static>(
    store: &Arc<dyn PlanStore>,
    work: impl FnOnce(&dyn PlanStore) -> Result<T, OpError> + Send + 'static,
) -> Result<T, ErrorData> {
    let store = Arc::clone(store);
    tokio::task::spawn_blocking(move || work(store.as_ref()))
        .await
        .map_err(|e| ErrorData::internal_error(format!("the store call stopped: {e}"), None))?
        .map_err(refused)
}

/// A store's refusal as a protocol error: the caller's mistake (no such
/// plan, a bad or missing id) as invalid parameters, anything else as an
/// internal error; the error envelope is the data either way.
fn refused(error: OpError) -> ErrorData {
    match error.code {
        ErrorCode::PlanNotFound | ErrorCode::InvalidPlanId | ErrorCode::InvalidArgument => {
            ErrorData::invalid_params(error.to_string(), Some(error.envelope()))
        }
        _ => internal(error),
    }
}

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
fn named_or_bound(
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

/// The header that names the caller.
pub const AGENT_HEADER: &str = "x-planc-agent";
/// The header that names the dialect.
pub const DIALECT_HEADER: &str = "x-planc-dialect";

/// The agent a request's headers name.
pub fn header_agent(headers: &HeaderMap) -> Option<String> {
    headers
        .get(AGENT_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
}

/// One MCP session's handler (rmcp makes one per session; `planc mcp
/// --store` serves one over stdio).
#[derive(Clone)]
pub struct HttpPlans {
    store: Arc<dyn PlanStore>,
    /// The dialect chosen when the session began.
    dialect: Arc<Mutex<Dialect>>,
    /// The plan the session works on.
    plan: SessionPlan,
    /// The agent of calls that name none and come without HTTP headers
    /// (`planc mcp --store … --agent NAME`).
    agent: Option<String>,
}

impl HttpPlans {
    /// A handler over `store`.
    pub fn new(store: Arc<dyn PlanStore>) -> HttpPlans {
        HttpPlans {
            store,
            dialect: Arc::new(Mutex::new(Dialect::Planc)),
            plan: SessionPlan::default(),
            agent: None,
        }
    }

    /// The same handler speaking `dialect` for `agent` (where no request
    /// names them: stdio).
    pub fn speaking(self, dialect: Dialect, agent: Option<String>) -> HttpPlans {
        HttpPlans {
            dialect: Arc::new(Mutex::new(dialect)),
            agent,
            ..self
        }
    }

    fn session_dialect(&self) -> Dialect {
        self.dialect.lock().map_or(Dialect::Planc, |d| *d)
    }
}

/// A query parameter of the request's URI.
fn query_param(parts: &Parts, name: &str) -> Option<String> {
    let query = parts.uri.query()?;
    serde_urlencoded::from_str::<Vec<(String, String)>>(query)
        .ok()?
        .into_iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v)
}

/// The dialect a request asks for: `Err` names an unknown one.
fn requested_dialect(parts: &Parts) -> Result<Option<Dialect>, ErrorData> {
    let name = parts
        .headers
        .get(DIALECT_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .or_else(|| query_param(parts, "dialect"));
    match name {
        None => Ok(None),
        Some(name) => Dialect::from_name(name.trim()).map(Some).ok_or_else(|| {
            let names: Vec<&str> = Dialect::ALL.iter().map(|(n, _)| *n).collect();
            ErrorData::invalid_params(
                format!(
                    "no dialect `{}`; this server speaks {}",
                    crate::escape::line(&name),
                    names.join(", ")
                ),
                Some(json!({"dialects": names})),
            )
        }),
    }
}

/// What the request's token grants (the guard put it there); everything
/// where no HTTP request carries the call (stdio).
fn request_grant(parts: Option<&Parts>) -> Grant {
    parts
        .and_then(|parts| parts.extensions.get::<Grant>())
        .cloned()
        .unwrap_or_else(Grant::everything)
}

/// The agent of a request without an `agent` argument.
fn request_agent(parts: Option<&Parts>) -> Option<String> {
    let parts = parts?;
    header_agent(&parts.headers)
        .or_else(|| query_param(parts, "agent"))
        .or_else(|| {
            let session = parts.headers.get("mcp-session-id")?.to_str().ok()?;
            let short: String = session.chars().filter(|c| *c != '-').take(8).collect();
            Some(format!("session-{short}"))
        })
}

/// A dialect's tools with `plan_id` added where the dialect has none.
fn served_tools(dialect: Dialect) -> Vec<ToolDef> {
    dialect
        .tools()
        .into_iter()
        .map(|mut tool| {
            if let Some(Value::Object(properties)) = tool.input_schema.get_mut("properties") {
                properties.entry("plan_id").or_insert_with(|| {
                    json!({
                        "type": ["string", "null"],
                        "description": "The plan this call is about (GET /api/plans lists them). May be left out once this session works on a plan: the one it created, or the first it named.",
                    })
                });
            }
            tool
        })
        .collect()
}

impl ServerHandler for HttpPlans {
    fn get_info(&self) -> ServerConfig {
        server_config(format!(
            "{} This server holds many plans: name one with `plan_id`; this session then keeps to it (and to a plan it creates), so later calls may leave it out.",
            self.session_dialect().instructions()
        ))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        if let Some(parts) = context.extensions.get::<Parts>() {
            if let Some(dialect) = requested_dialect(parts)? {
                if let Ok(mut chosen) = self.dialect.lock() {
                    *chosen = dialect;
                }
            }
        }
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let dialect = match context.extensions.get::<Parts>() {
            Some(parts) => requested_dialect(parts)?.unwrap_or(self.session_dialect()),
            None => self.session_dialect(),
        };
        let tools = served_tools(dialect).into_iter().map(mcp_tool).collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let parts = context.extensions.get::<Parts>();
        let dialect = match parts {
            Some(parts) => requested_dialect(parts)?.unwrap_or(self.session_dialect()),
            None => self.session_dialect(),
        };
        let grant = request_grant(parts);
        // A work token's session acts as its agent.
        let agent = match grant.scope {
            Scope::Work => grant.agent.clone(),
            _ => request_agent(parts).or_else(|| self.agent.clone()),
        };
        let name = request.name.to_string();
        let arguments = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        let store = Arc::clone(&self.store);
        let session = self.plan.clone();
        let outcome = tokio::task::spawn_blocking(move || {
            let caller = CallerOf { agent, grant };
            call(store.as_ref(), dialect, &name, arguments, caller, &session)
        })
        .await
        .map_err(|e| ErrorData::internal_error(format!("the tool call panicked: {e}"), None))?;
        tool_response(dialect, &request.name, outcome)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let grant = request_grant(context.extensions.get::<Parts>());
        let plans: Vec<PlanSummary> = blocking(&self.store, |store| store.list()).await?;
        let resources = plans
            .iter()
            .filter(|plan| grant.may_touch(&plan.plan_id))
            .map(|plan| plan_resource(&plan_uri(&plan.plan_id), &plan.plan_id))
            .collect();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let template = ResourceTemplate::new(PLANS_URI_TEMPLATE, "plan")
            .with_title("A plan's document (live state)")
            .with_description(
                "The planc/1 plan document of plan {plan_id} (percent-encoded): goal, tasks with their status, dependencies and results.",
            )
            .with_mime_type("application/json");
        Ok(ListResourceTemplatesResult::with_all_items(vec![template]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let grant = request_grant(context.extensions.get::<Parts>());
        let uri = request.uri.clone();
        let named = if uri == PLAN_URI {
            None
        } else {
            let id = uri.strip_prefix(PLANS_URI).map(|id| {
                percent_decode_str(id)
                    .decode_utf8()
                    .map(|id| id.into_owned())
            });
            match id {
                Some(Ok(id)) if !id.is_empty() => Some(id),
                _ => {
                    return Err(ErrorData::resource_not_found(
                        format!(
                            "no resource {}; this server has {PLANS_URI_TEMPLATE} (and {PLAN_URI}, the plan this session works on)",
                            crate::escape::line(&uri)
                        ),
                        Some(json!({"uri": uri})),
                    ))
                }
            }
        };
        let (dialect, session) = (self.session_dialect(), self.plan.clone());
        let doc = blocking(&self.store, move |store| {
            let plan_id = named_or_bound(store, dialect, named, &session)?;
            grant.plan(&plan_id)?;
            store.load(&plan_id)
        })
        .await?;
        Ok(plan_contents(&doc, &request.uri))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let plan_id = PromptArgument::new("plan_id")
            .with_description(
                "The plan (GET /api/plans lists them). May be left out once this session works on a plan: the one it created, or the first it named.",
            )
            .with_required(false);
        Ok(ListPromptsResult::with_all_items(vec![plan_prompt(Some(
            vec![plan_id],
        ))]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let grant = request_grant(context.extensions.get::<Parts>());
        check_prompt_name(&request.name)?;
        let named = match request.arguments.as_ref().and_then(|a| a.get("plan_id")) {
            None | Some(Value::Null) => None,
            Some(Value::String(id)) => Some(id.clone()),
            Some(other) => {
                return Err(ErrorData::invalid_params(
                    format!("plan_id must be a string, not {other}"),
                    Some(json!({"field": "plan_id"})),
                ))
            }
        };
        let (dialect, session) = (self.session_dialect(), self.plan.clone());
        let text = blocking(&self.store, move |store| {
            let plan_id = named_or_bound(store, dialect, named, &session)?;
            grant.plan(&plan_id)?;
            Ok(runner::prompt(&store.runner(&plan_id)?))
        })
        .await?;
        Ok(prompt_response(text))
    }
}

/// One tool call on the plan it names, else the session's; a call that
/// creates a plan without naming one makes a new plan and binds the
/// session to it.
/// Who makes a tool call: the agent of calls that name none, and what the
/// request's token grants.
struct CallerOf {
    agent: Option<String>,
    grant: Grant,
}

fn call(
    store: &dyn PlanStore,
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
        (None, None) => return dialect.call(&Refuse(unbound(store, dialect)), name, arguments),
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
    store: &'a dyn PlanStore,
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
}

impl PlanAccess for Served<'_> {
    fn exists(&self) -> Result<bool, OpError> {
        let id = match self.id() {
            Ok(id) => id,
            Err(error) if error.code == ErrorCode::PlanNotFound => return Ok(false),
            Err(error) => return Err(error),
        };
        match self.store.load(&id) {
            Ok(_) => Ok(true),
            Err(error) if error.code == ErrorCode::PlanNotFound => Ok(false),
            Err(error) => Err(error),
        }
    }

    fn load(&self) -> Result<PlanDocument, OpError> {
        self.store.load(&self.id()?)
    }

    fn create(&self, doc: PlanDocument, force: bool) -> Result<PlanDocument, OpError> {
        self.grant.need(Scope::Admin, "creating a plan")?;
        match self.id() {
            Ok(id) => return self.store.create(&id, doc, force),
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
        let id = self.id()?;
        check(&self.store.load(&id)?)?;
        self.store.delete(&id)
    }

    fn apply_as(&self, op: &Op, caller: &Caller) -> Result<Applied, OpError> {
        self.grant.op(op.name())?;
        let caller = self.acting(caller)?;
        self.store.apply(&self.id()?, op, &caller)
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
        self.store.transact(&self.id()?, op, change).map(drop)
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
