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

use crate::mcp::server::{
    check_prompt_name, internal, mcp_tool, plan_contents, plan_prompt, plan_resource,
    prompt_response, server_config, tool_response, PLAN_URI,
};
use crate::mcp::{Dialect, ToolDef};
use crate::runner::access::{PlanAccess, StorePlan};
use crate::runner::{self, ErrorCode, OpError, PlanStore, PlanSummary};

use super::scope::{Grant, Scope};

mod served;

pub use served::SessionPlan;
use served::{named_or_bound, CallerOf};

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

/// The plans an MCP server serves.
#[derive(Clone)]
enum Plans {
    /// One plan, fixed: a state file's (`planc mcp STATE`). Its tools take
    /// no `plan_id`, its one resource is `planc://plan`, its prompt takes
    /// no argument, and errors name the file.
    One(Arc<StorePlan>),
    /// The plans of a store (`/mcp`, `planc mcp --store`): each call names
    /// its plan, or else is on the session's.
    Many {
        /// The store.
        store: Arc<dyn PlanStore>,
        /// The plan the session works on.
        session: SessionPlan,
    },
}

/// The MCP server of planc, over stdio and streamable HTTP alike: one
/// session's handler (rmcp makes one per HTTP session; `planc mcp` serves
/// one over stdio), on one plan or on a store's plans ([`PlanServer::one`],
/// [`PlanServer::new`]).
#[derive(Clone)]
pub struct PlanServer {
    plans: Plans,
    /// The dialect chosen when the session began.
    dialect: Arc<Mutex<Dialect>>,
    /// The agent of calls that name none and come without HTTP headers
    /// (`planc mcp --store … --agent NAME`; one plan has its own).
    agent: Option<String>,
}

impl PlanServer {
    /// A handler over `store`'s plans.
    pub fn new(store: Arc<dyn PlanStore>) -> PlanServer {
        PlanServer {
            plans: Plans::Many {
                store,
                session: SessionPlan::default(),
            },
            dialect: Arc::new(Mutex::new(Dialect::Planc)),
            agent: None,
        }
    }

    /// A handler over one plan (a state file's), its agent its own.
    pub fn one(plan: StorePlan) -> PlanServer {
        PlanServer {
            plans: Plans::One(Arc::new(plan)),
            dialect: Arc::new(Mutex::new(Dialect::Planc)),
            agent: None,
        }
    }

    /// The same handler speaking `dialect` for `agent` (where no request
    /// names them: stdio).
    pub fn speaking(self, dialect: Dialect, agent: Option<String>) -> PlanServer {
        PlanServer {
            dialect: Arc::new(Mutex::new(dialect)),
            agent,
            ..self
        }
    }

    fn session_dialect(&self) -> Dialect {
        self.dialect.lock().map_or(Dialect::Planc, |d| *d)
    }
}

/// Runs `work` on one plan off the async workers (it blocks on a lock).
async fn on_plan<T: Send + 'static>(
    plan: &Arc<StorePlan>,
    work: impl FnOnce(&StorePlan) -> Result<T, OpError> + Send + 'static,
) -> Result<T, ErrorData> {
    let plan = Arc::clone(plan);
    tokio::task::spawn_blocking(move || work(&plan))
        .await
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?
        .map_err(internal)
}

/// `resources/read` of one plan: `planc://plan` alone.
async fn read_one(plan: &Arc<StorePlan>, uri: &str) -> Result<ReadResourceResponse, ErrorData> {
    if uri != PLAN_URI {
        return Err(ErrorData::resource_not_found(
            format!("no resource {uri}; this server has {PLAN_URI}"),
            None,
        ));
    }
    let doc = on_plan(plan, |plan| plan.load()).await?;
    Ok(plan_contents(&doc, PLAN_URI))
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

impl ServerHandler for PlanServer {
    fn get_info(&self) -> ServerConfig {
        let instructions = self.session_dialect().instructions();
        server_config(match self.plans {
            Plans::One(_) => instructions.to_owned(),
            Plans::Many { .. } => format!(
                "{instructions} This server holds many plans: name one with `plan_id`; this session then keeps to it (and to a plan it creates), so later calls may leave it out."
            ),
        })
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
        let tools = match self.plans {
            Plans::One(_) => dialect.tools(),
            Plans::Many { .. } => served_tools(dialect),
        };
        Ok(ListToolsResult::with_all_items(
            tools.into_iter().map(mcp_tool).collect(),
        ))
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
        let plans = self.plans.clone();
        // The store blocks on a lock: keep it off the async workers.
        let outcome = tokio::task::spawn_blocking(move || match plans {
            Plans::One(plan) => dialect.call(plan.as_ref(), &name, arguments),
            Plans::Many { store, session } => {
                let caller = CallerOf { agent, grant };
                served::call(&store, dialect, &name, arguments, caller, &session)
            }
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
        let store = match &self.plans {
            Plans::One(_) => {
                let plan = plan_resource(PLAN_URI, "plan");
                return Ok(ListResourcesResult::with_all_items(vec![plan]));
            }
            Plans::Many { store, .. } => store,
        };
        let grant = request_grant(context.extensions.get::<Parts>());
        let plans: Vec<PlanSummary> = blocking(store, |store| store.list()).await?;
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
        if let Plans::One(_) = self.plans {
            return Ok(ListResourceTemplatesResult::default());
        }
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
        let (store, session) = match &self.plans {
            Plans::One(plan) => return read_one(plan, &request.uri).await,
            Plans::Many { store, session } => (store, session.clone()),
        };
        let grant = request_grant(context.extensions.get::<Parts>());
        let named = resource_plan(&request.uri)?;
        let dialect = self.session_dialect();
        let doc = blocking(store, move |store| {
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
        if let Plans::One(_) = self.plans {
            return Ok(ListPromptsResult::with_all_items(vec![plan_prompt(None)]));
        }
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
        check_prompt_name(&request.name)?;
        let (store, session) = match &self.plans {
            Plans::One(plan) => {
                let text = on_plan(plan, |plan| Ok(runner::prompt(&plan.runner()?))).await?;
                return Ok(prompt_response(text));
            }
            Plans::Many { store, session } => (store, session.clone()),
        };
        let grant = request_grant(context.extensions.get::<Parts>());
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
        let dialect = self.session_dialect();
        let text = blocking(store, move |store| {
            let plan_id = named_or_bound(store, dialect, named, &session)?;
            grant.plan(&plan_id)?;
            Ok(runner::prompt(&store.runner(&plan_id)?))
        })
        .await?;
        Ok(prompt_response(text))
    }
}

/// The plan a resource URI names: `planc://plans/{plan_id}`, or none for
/// `planc://plan` (the session's).
fn resource_plan(uri: &str) -> Result<Option<String>, ErrorData> {
    if uri == PLAN_URI {
        return Ok(None);
    }
    let id = uri.strip_prefix(PLANS_URI).map(|id| {
        percent_decode_str(id)
            .decode_utf8()
            .map(|id| id.into_owned())
    });
    match id {
        Some(Ok(id)) if !id.is_empty() => Ok(Some(id)),
        _ => Err(ErrorData::resource_not_found(
            format!(
                "no resource {}; this server has {PLANS_URI_TEMPLATE} (and {PLAN_URI}, the plan this session works on)",
                crate::escape::line(uri)
            ),
            Some(json!({"uri": uri})),
        )),
    }
}
