//! `planc mcp` and `planc tools`: the runner as MCP tools.

use clap::{Args, ValueEnum};
use planc::mcp::{self, Dialect, ToolFormat};

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

/// `planc mcp --store URL` (or a directory): many plans over stdio.
fn serve_store(url: &str, dialect: Dialect, agent: Option<String>) -> i32 {
    let store = match planc::runner::open_store(url) {
        Ok(store) => store,
        Err(error) => {
            output::fatal(&error.message);
            return EXIT_USAGE;
        }
    };
    let server = planc::serve::PlanServer::new(store).speaking(dialect, agent);
    match planc::serve::serve_stdio(server) {
        Ok(()) => EXIT_OK,
        Err(message) => {
            output::fatal(&message);
            EXIT_USAGE
        }
    }
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

pub fn serve(args: McpArgs) -> i32 {
    let dialect = args.dialect.dialect();
    if let (Some(_), Some(key)) = (&args.store, &args.session) {
        output::fatal(&format!(
            "give either --store or --session, not both (--session {key} with --store)"
        ));
        return EXIT_USAGE;
    }
    let store_url = match (&args.store, &args.state) {
        (Some(_), Some(state)) => {
            output::fatal(&format!(
                "give either --store or a state file, not both (`{state}` with --store)"
            ));
            return EXIT_USAGE;
        }
        (Some(url), None) => Some(url.clone()),
        (None, Some(state)) if std::path::Path::new(state).is_dir() => Some(format!("dir:{state}")),
        _ => None,
    };
    if let Some(url) = store_url {
        return serve_store(&url, dialect, args.agent);
    }
    let state = match (args.state, &args.session) {
        (Some(state), None) => state,
        (None, Some(key)) => match planc::runner::session_path(key) {
            Ok(path) => {
                // The session's directory, for a dialect that creates its plan.
                if let Some(dir) = path.parent().filter(|_| dialect.creates_plans()) {
                    if let Err(error) = std::fs::create_dir_all(dir) {
                        output::fatal(&format!("cannot create {}: {error}", dir.display()));
                        return EXIT_USAGE;
                    }
                }
                path.display().to_string()
            }
            Err(message) => {
                output::fatal(&message);
                return EXIT_USAGE;
            }
        },
        (Some(state), Some(_)) => {
            output::fatal(&format!(
                "give either --session or a state file, not both (`{state}` with --session)"
            ));
            return EXIT_USAGE;
        }
        (None, None) => {
            output::fatal("give the state file (STATE) or --session KEY");
            return EXIT_USAGE;
        }
    };
    // A dialect that creates plans may start before its state exists.
    let missing_is_fine = dialect.creates_plans() && !std::path::Path::new(&state).exists();
    if !missing_is_fine && !std::path::Path::new(&state).is_file() {
        output::fatal(&format!(
            "{state} is not a state file; create one with `planc run init PLAN -o {state}`"
        ));
        return EXIT_USAGE;
    }
    let store = planc::runner::Store::new(&state);
    let store = match args.lock_timeout {
        Some(timeout) => store.with_lock_timeout(timeout),
        None => store,
    };
    let plan = planc::runner::access::StorePlan::state_file(store.with_agent(args.agent));
    let server = planc::serve::PlanServer::one(plan).speaking(dialect, None);
    match planc::serve::serve_stdio(server) {
        Ok(()) => EXIT_OK,
        Err(message) => {
            output::fatal(&message);
            EXIT_USAGE
        }
    }
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
