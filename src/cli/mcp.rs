//! `planc mcp` and `planc tools`: the runner as MCP tools.

use clap::{Args, ValueEnum};
use planc::mcp::{self, Dialect, ToolFormat};
use planc::runner::access::StorePlan;
use planc::serve::PlanServer;

use super::output;
use super::{EXIT_OK, EXIT_USAGE};

#[derive(Args)]
pub struct McpArgs {
    /// The state file to serve (create it with `planc run init`); or --session
    state: Option<String>,
    /// Serve the state of session KEY, `.sessions/KEY/plan.json` under the
    /// current directory
    #[arg(long, value_name = "KEY")]
    session: Option<String>,
    /// How long a change waits for another writer's lock before giving up
    /// (STATE_LOCKED) [default: 5]
    #[arg(
        long,
        value_name = "SECONDS",
        env = "PLANC_LOCK_TIMEOUT",
        value_parser = super::run::parse_seconds
    )]
    lock_timeout: Option<std::time::Duration>,
    /// Who this server's client is: the agent of every call that names none
    /// (each agent has its own current task)
    #[arg(long, value_name = "NAME", env = "PLANC_AGENT")]
    agent: Option<String>,
    /// Serve the plans of a store instead of one state file: sqlite:PATH,
    /// postgres://…, dir:PATH (a directory given as STATE is one too); the
    /// connection works on the plan it creates or first names, as a
    /// `planc serve` MCP session does
    #[arg(long, value_name = "URL", env = "PLANC_MCP_STORE")]
    store: Option<String>,
    /// Whose tools to serve: planc (the PlanManager API, the default), tasks (the planManager),
    /// plan-tool (the Plan Tool), steps (the steps system) or plan-act (Plan-Act)
    #[arg(long, value_enum, default_value = "planc")]
    dialect: DialectName,
}

/// The server of `planc mcp --store URL` (or a directory): many plans,
/// the connection bound to the plan it creates or first names.
fn store_server(url: &str, dialect: Dialect, agent: Option<String>) -> Result<PlanServer, i32> {
    let store = planc::runner::open_store(url).map_err(|error| {
        output::fatal(&error.message);
        EXIT_USAGE
    })?;
    Ok(PlanServer::new(store).speaking(dialect, agent))
}

#[derive(Args)]
pub struct ToolsArgs {
    /// The shape of the tool definitions
    #[arg(long, value_enum, default_value = "mcp")]
    format: Format,
    /// Whose tools: planc, tasks, plan-tool, steps or plan-act
    #[arg(long, value_enum, default_value = "planc")]
    dialect: DialectName,
}

/// The dialects by name (`planc::mcp::Dialect::ALL`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum DialectName {
    /// The PlanManager API, plus observe
    Planc,
    /// The planManager's six tools
    Tasks,
    /// The Plan Tool's functions
    PlanTool,
    /// The steps system's text protocol as a tool
    Steps,
    /// Plan-Act's planner and executor
    PlanAct,
}

impl DialectName {
    fn dialect(self) -> Dialect {
        match self {
            DialectName::Planc => Dialect::Planc,
            DialectName::Tasks => Dialect::Tasks,
            DialectName::PlanTool => Dialect::PlanTool,
            DialectName::Steps => Dialect::Steps,
            DialectName::PlanAct => Dialect::PlanAct,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    /// MCP's tools/list result
    Mcp,
    /// OpenAI Chat Completions function tools (strict mode)
    Openai,
    /// OpenAI Responses API function tools (strict mode)
    OpenaiResponses,
    /// Anthropic tool definitions
    Anthropic,
}

/// `planc mcp`: one MCP server over stdio, on a store's plans or on one
/// state file's plan.
pub fn serve(args: McpArgs) -> i32 {
    let server = match server(args) {
        Ok(server) => server,
        Err(code) => return code,
    };
    match planc::serve::serve_stdio(server) {
        Ok(()) => EXIT_OK,
        Err(message) => {
            output::fatal(&message);
            EXIT_USAGE
        }
    }
}

/// The server the command line names: `--store`, a directory, or else the
/// plan of a state file (STATE or `--session`).
fn server(args: McpArgs) -> Result<PlanServer, i32> {
    let dialect = args.dialect.dialect();
    if let (Some(_), Some(key)) = (&args.store, &args.session) {
        return Err(usage(&format!(
            "give either --store or --session, not both (--session {key} with --store)"
        )));
    }
    let store_url = match (&args.store, &args.state) {
        (Some(_), Some(state)) => {
            return Err(usage(&format!(
                "give either --store or a state file, not both (`{state}` with --store)"
            )))
        }
        (Some(url), None) => Some(url.clone()),
        (None, Some(state)) if std::path::Path::new(state).is_dir() => Some(format!("dir:{state}")),
        _ => None,
    };
    if let Some(url) = store_url {
        return store_server(&url, dialect, args.agent);
    }
    let state = match (args.state, &args.session) {
        (Some(state), None) => state,
        (None, Some(key)) => session_state(key, dialect)?,
        (Some(state), Some(_)) => {
            return Err(usage(&format!(
                "give either --session or a state file, not both (`{state}` with --session)"
            )))
        }
        (None, None) => return Err(usage("give the state file (STATE) or --session KEY")),
    };
    // A dialect that creates plans may start before its state exists.
    let missing_is_fine = dialect.creates_plans() && !std::path::Path::new(&state).exists();
    if !missing_is_fine && !std::path::Path::new(&state).is_file() {
        return Err(usage(&format!(
            "{state} is not a state file; create one with `planc run init PLAN -o {state}`"
        )));
    }
    let store = planc::runner::Store::new(&state);
    let store = match args.lock_timeout {
        Some(timeout) => store.with_lock_timeout(timeout),
        None => store,
    };
    let plan = StorePlan::state_file(store.with_agent(args.agent));
    Ok(PlanServer::one(plan).speaking(dialect, None))
}

/// The state file of `--session KEY`, its directory made for a dialect
/// that creates its plan.
fn session_state(key: &str, dialect: Dialect) -> Result<String, i32> {
    let path = planc::runner::session_path(key).map_err(|message| usage(&message))?;
    if let Some(dir) = path.parent().filter(|_| dialect.creates_plans()) {
        std::fs::create_dir_all(dir)
            .map_err(|error| usage(&format!("cannot create {}: {error}", dir.display())))?;
    }
    Ok(path.display().to_string())
}

/// Says `message` on standard error: the usage error's exit code.
fn usage(message: &str) -> i32 {
    output::fatal(message);
    EXIT_USAGE
}

pub fn print(args: ToolsArgs) -> i32 {
    let format = match args.format {
        Format::Mcp => ToolFormat::Mcp,
        Format::Openai => ToolFormat::OpenAi,
        Format::OpenaiResponses => ToolFormat::OpenAiResponses,
        Format::Anthropic => ToolFormat::Anthropic,
    };
    let tools = args.dialect.dialect().tools();
    print!(
        "{}",
        planc::document::json_text(&mcp::render_tools(format, &tools))
    );
    EXIT_OK
}
