//! What the MCP server (`serve::PlanServer`, over stdio and HTTP) says, in
//! rmcp's types: tools, the plan document as a resource, the prompt of the
//! `planc run prompt` block, errors, and the stdio transport.

use std::sync::Arc;

use rmcp::model::{
    CallToolResponse, CallToolResult, GetPromptResponse, GetPromptResult, Implementation, Prompt,
    PromptArgument, PromptMessage, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, Role, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::{ErrorData, ServiceExt};
use serde_json::json;

use crate::document::PlanDocument;
use crate::runner::OpError;

use super::dialect::{Dialect, Outcome};

/// The URI of the plan document resource.
pub const PLAN_URI: &str = "planc://plan";
/// The name of the prompt with the plan's system-prompt block.
pub const PROMPT_NAME: &str = "plan_context";

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

/// Runs `handler` as an MCP server on standard input and output until the
/// client disconnects (`serve::serve_stdio`).
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
