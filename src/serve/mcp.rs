//! MCP over streamable HTTP (`/mcp`): the dialects' tools over the store's
//! plans. A thin face: each call names (or implies) a plan, and goes to the
//! dialect's own code with that plan behind [`PlanAccess`].
//!
//! - The dialect is the session's: `/mcp?dialect=D` or the `X-Planc-Dialect`
//!   header (default `planc`).
//! - The agent is the caller: the tool's `agent` argument, else the
//!   `X-Planc-Agent` header or `?agent=`, else the session itself
//!   (`session-` and the first 8 characters of its `Mcp-Session-Id`).
//! - `plan_id` names the plan; it may be left out while the store holds
//!   exactly one plan (or none, for the tools that create one).
//!
//! As `planc mcp` does, it also serves each plan's document as a resource
//! (`planc://plans/{plan_id}`, the id percent-encoded; listed, and offered
//! as a resource template; `planc://plan` is the only plan while there is
//! one) and the prompt of where a plan stands (`plan_context`, its
//! `plan_id` argument optional while the server holds one plan).

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

/// The plan a call that names none is about: the store's only plan; `None`
/// when it holds none; refused when it holds many.
fn only_plan(store: &dyn PlanStore) -> Result<Option<String>, OpError> {
    let plans = store.list()?;
    match plans.as_slice() {
        [] => Ok(None),
        [plan] => Ok(Some(plan.plan_id.clone())),
        plans => {
            let ids: Vec<&str> = plans.iter().map(|p| p.plan_id.as_str()).collect();
            Err(OpError::new(
                ErrorCode::InvalidArgument,
                format!(
                    "this server holds {} plans; name one with plan_id ({})",
                    plans.len(),
                    ids.join(", ")
                ),
            )
            .with(json!({"field": "plan_id", "plans": ids})))
        }
    }
}

/// The plan named, or else the store's only one (refused when there is
/// none).
fn named_or_only(store: &dyn PlanStore, named: Option<String>) -> Result<String, OpError> {
    match named {
        Some(id) => Ok(id),
        None => only_plan(store)?.ok_or_else(|| {
            OpError::new(
                ErrorCode::PlanNotFound,
                "this server holds no plan yet; create one (POST /api/plans, or a dialect's creating tool)",
            )
        }),
    }
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

/// One MCP session's handler (rmcp makes one per session).
#[derive(Clone)]
pub struct HttpPlans {
    store: Arc<dyn PlanStore>,
    /// The dialect chosen when the session began.
    dialect: Arc<Mutex<Dialect>>,
}

impl HttpPlans {
    /// A handler over `store`.
    pub fn new(store: Arc<dyn PlanStore>) -> HttpPlans {
        HttpPlans {
            store,
            dialect: Arc::new(Mutex::new(Dialect::Planc)),
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
                        "description": "The plan this call is about (GET /api/plans lists them). May be left out while the server holds a single plan.",
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
            "{} This server holds many plans: name one with `plan_id` (it may be left out while it holds one).",
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
        let agent = request_agent(parts);
        let name = request.name.to_string();
        let arguments = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        let store = Arc::clone(&self.store);
        let outcome = tokio::task::spawn_blocking(move || {
            call(store.as_ref(), dialect, &name, arguments, agent)
        })
        .await
        .map_err(|e| ErrorData::internal_error(format!("the tool call panicked: {e}"), None))?;
        tool_response(dialect, &request.name, outcome)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let plans: Vec<PlanSummary> = blocking(&self.store, |store| store.list()).await?;
        let resources = plans
            .iter()
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
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
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
                            "no resource {}; this server has {PLANS_URI_TEMPLATE} (and {PLAN_URI} while it holds one plan)",
                            crate::escape::line(&uri)
                        ),
                        Some(json!({"uri": uri})),
                    ))
                }
            }
        };
        let doc = blocking(&self.store, move |store| {
            store.load(&named_or_only(store, named)?)
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
                "The plan (GET /api/plans lists them). May be left out while the server holds a single plan.",
            )
            .with_required(false);
        Ok(ListPromptsResult::with_all_items(vec![plan_prompt(Some(
            vec![plan_id],
        ))]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
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
        let text = blocking(&self.store, move |store| {
            let plan_id = named_or_only(store, named)?;
            Ok(runner::prompt(&store.runner(&plan_id)?))
        })
        .await?;
        Ok(prompt_response(text))
    }
}

/// One tool call on the plan it names.
fn call(
    store: &dyn PlanStore,
    dialect: Dialect,
    name: &str,
    mut arguments: Value,
    agent: Option<String>,
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
    let plan_id = match named {
        Some(id) => Some(id),
        None => match only_plan(store) {
            Ok(plan_id) => plan_id,
            Err(error) => return dialect.call(&Refuse(error), name, arguments),
        },
    };
    let plan = Served {
        store,
        plan_id: Mutex::new(plan_id),
        agent,
    };
    dialect.call(&plan, name, arguments)
}

/// A plan of the store, for one call.
struct Served<'a> {
    store: &'a dyn PlanStore,
    /// The plan's id; `None` until a creating tool names it (the created
    /// document's own id).
    plan_id: Mutex<Option<String>>,
    /// The caller's agent when a call names none.
    agent: Option<String>,
}

impl Served<'_> {
    fn id(&self) -> Result<String, OpError> {
        self.plan_id
            .lock()
            .ok()
            .and_then(|id| id.clone())
            .ok_or_else(|| {
                OpError::new(
                    ErrorCode::PlanNotFound,
                    "this server holds no plan yet; create one (POST /api/plans, or a dialect's creating tool)",
                )
            })
    }
}

impl PlanAccess for Served<'_> {
    fn exists(&self) -> Result<bool, OpError> {
        let Ok(id) = self.id() else {
            return Ok(false);
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
        let id = match self.id() {
            Ok(id) => id,
            Err(_) => doc.meta.id.clone(),
        };
        let created = self.store.create(&id, doc, force)?;
        if let Ok(mut plan_id) = self.plan_id.lock() {
            *plan_id = Some(id);
        }
        Ok(created)
    }

    fn delete(
        &self,
        check: &mut dyn FnMut(&PlanDocument) -> Result<(), OpError>,
    ) -> Result<(), OpError> {
        let id = self.id()?;
        check(&self.store.load(&id)?)?;
        self.store.delete(&id)
    }

    fn apply_as(&self, op: &Op, caller: &Caller) -> Result<Applied, OpError> {
        let caller = Caller {
            agent: caller.agent.clone().or_else(|| self.agent.clone()),
            ..caller.clone()
        };
        self.store.apply(&self.id()?, op, &caller)
    }

    fn transact_events(&self, op: &str, change: &mut Change<'_>) -> Result<(), OpError> {
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
        self.id().unwrap_or_else(|_| "plan".to_owned())
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
