//! The MCP server: tools, one resource (the plan document) and one prompt
//! (the `planc run prompt` block).

use std::path::PathBuf;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, Implementation, ListPromptsResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, Prompt, PromptArgument, PromptMessage,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, Role, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{json, Value};

use crate::document::PlanDocument;
use crate::runner::{self, OpError, Store};

use super::dialect::{Dialect, Outcome};

/// The URI of the plan document resource.
pub const PLAN_URI: &str = "planc://plan";
/// The name of the prompt with the plan's system-prompt block.
pub const PROMPT_NAME: &str = "plan_context";

/// Serves one state file in one dialect.
#[derive(Clone, Debug)]
pub struct PlanServer {
    store: Arc<Store>,
    dialect: Dialect,
}

impl PlanServer {
    /// A server for the state file at `path`.
    pub fn new(path: impl Into<PathBuf>) -> PlanServer {
        PlanServer::with_store(Store::new(path.into()))
    }

    /// A server for a store set up by the caller (its lock timeout, say).
    pub fn with_store(store: Store) -> PlanServer {
        PlanServer {
            store: Arc::new(store),
            dialect: Dialect::Planc,
        }
    }

    /// The same server speaking `dialect`.
    pub fn with_dialect(mut self, dialect: Dialect) -> PlanServer {
        self.dialect = dialect;
        self
    }

    /// Runs one tool call: the result in the dialect's shape, and whether it
    /// is an error; `None` when the dialect has no tool `name`.
    pub fn call(&self, name: &str, arguments: Value) -> Option<Outcome> {
        self.dialect.call(self.store.as_ref(), name, arguments)
    }

    fn prompt_text(&self) -> Result<String, OpError> {
        Ok(runner::prompt(&self.store.runner()?))
    }
}

/// A tool definition as MCP's `Tool`.
pub(crate) fn mcp_tool(t: super::ToolDef) -> Tool {
    let mut tool = Tool::new(t.name, t.description, Arc::new(t.input_schema));
    tool.output_schema = Some(Arc::new(t.output_schema));
    let mut annotations = ToolAnnotations::default();
    annotations.read_only_hint = Some(t.read_only);
    annotations.destructive_hint = Some(t.destructive);
    tool.annotations = Some(annotations);
    tool
}

/// The answer to a call of tool `name`: its outcome as a tool result, or,
/// when the dialect has no such tool, a protocol error (MCP: -32602).
pub(crate) fn tool_response(
    dialect: Dialect,
    name: &str,
    outcome: Option<Outcome>,
) -> Result<CallToolResponse, ErrorData> {
    let Some(outcome) = outcome else {
        let tools: Vec<&str> = dialect.tools().iter().map(|t| t.name).collect();
        return Err(ErrorData::invalid_params(
            format!(
                "Unknown tool: {name} (the {} dialect has {})",
                dialect.name(),
                tools.join(", ")
            ),
            Some(json!({"tool": name, "dialect": dialect.name(), "tools": tools})),
        ));
    };
    let result = if outcome.is_error {
        CallToolResult::structured_error(outcome.content)
    } else {
        CallToolResult::structured(outcome.content)
    };
    Ok(result.into())
}

pub(crate) fn internal(error: OpError) -> ErrorData {
    ErrorData::internal_error(error.to_string(), Some(error.envelope()))
}

/// The plan document resource at `uri`, named `name`.
pub(crate) fn plan_resource(uri: &str, name: &str) -> Resource {
    Resource::new(uri, name)
        .with_title("The plan document (live state)")
        .with_description(
            "The planc/1 plan document: goal, tasks with their status, dependencies and results.",
        )
        .with_mime_type("application/json")
}

/// A plan document read as resource `uri`.
pub(crate) fn plan_contents(doc: &PlanDocument, uri: &str) -> ReadResourceResponse {
    let contents = ResourceContents::text(doc.to_json(), uri).with_mime_type("application/json");
    ReadResourceResult::new(vec![contents]).into()
}

/// The prompt of where the plan stands, taking `arguments`.
pub(crate) fn plan_prompt(arguments: Option<Vec<PromptArgument>>) -> Prompt {
    Prompt::new(
        PROMPT_NAME,
        Some("Where the plan stands (goal, progress, current task, what is next, recent results), for a system prompt"),
        arguments,
    )
}

/// `prompts/get` for a prompt other than [`PROMPT_NAME`]: an error.
pub(crate) fn check_prompt_name(name: &str) -> Result<(), ErrorData> {
    if name == PROMPT_NAME {
        return Ok(());
    }
    Err(ErrorData::invalid_params(
        format!("no prompt `{name}`; this server has `{PROMPT_NAME}`"),
        Some(json!({"prompts": [PROMPT_NAME]})),
    ))
}

/// The prompt's answer: `text`, the plan's system-prompt block.
pub(crate) fn prompt_response(text: String) -> GetPromptResponse {
    GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
        .with_description("The plan's current state")
        .into()
}

/// What a planc MCP server says of itself: tools, resources and prompts,
/// and `instructions`.
pub(crate) fn server_config(instructions: String) -> ServerConfig {
    let mut info = ServerConfig::new(
        ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .enable_prompts()
            .build(),
    );
    info.server_info = Implementation::new("planc", env!("CARGO_PKG_VERSION"));
    info.instructions = Some(instructions);
    info
}

impl ServerHandler for PlanServer {
    fn get_info(&self) -> ServerConfig {
        server_config(self.dialect.instructions().to_owned())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = self.dialect.tools().into_iter().map(mcp_tool).collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let server = self.clone();
        let name = request.name.to_string();
        let arguments = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        let dialect = self.dialect;
        // The store blocks on a file lock: keep it off the async workers.
        let outcome = tokio::task::spawn_blocking(move || server.call(&name, arguments))
            .await
            .map_err(|e| ErrorData::internal_error(format!("the tool call panicked: {e}"), None))?;
        tool_response(dialect, &request.name, outcome)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(vec![plan_resource(
            PLAN_URI, "plan",
        )]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if request.uri != PLAN_URI {
            return Err(ErrorData::resource_not_found(
                format!("no resource {}; this server has {PLAN_URI}", request.uri),
                None,
            ));
        }
        let store = self.store.clone();
        let doc = tokio::task::spawn_blocking(move || store.load())
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?
            .map_err(internal)?;
        Ok(plan_contents(&doc, PLAN_URI))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(vec![plan_prompt(None)]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        check_prompt_name(&request.name)?;
        let server = self.clone();
        let text = tokio::task::spawn_blocking(move || server.prompt_text())
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?
            .map_err(internal)?;
        Ok(prompt_response(text))
    }
}

/// Serves `store` in `dialect` over standard input and output until the
/// client disconnects.
pub fn serve_stdio(store: Store, dialect: Dialect) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    runtime.block_on(run_on_stdio(
        PlanServer::with_store(store).with_dialect(dialect),
    ))
}

/// Runs `handler` as an MCP server on standard input and output until the
/// client disconnects (a state file's server here, a store's in `serve`).
pub(crate) async fn run_on_stdio<H: rmcp::ServerHandler>(handler: H) -> Result<(), String> {
    let service = handler
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| format!("MCP handshake failed: {e}"))?;
    service
        .waiting()
        .await
        .map_err(|e| format!("MCP server stopped: {e}"))?;
    Ok(())
}
