//! `planc mcp` and `planc tools`: the runner as MCP tools.

use clap::{Args, ValueEnum};
use planc::mcp::{self, ToolFormat};

use super::output;
use super::{EXIT_OK, EXIT_USAGE};

#[derive(Args)]
pub struct McpArgs {
    /// The state file to serve (create it with `planc run init`)
    state: String,
}

#[derive(Args)]
pub struct ToolsArgs {
    /// The shape of the tool definitions
    #[arg(long, value_enum, default_value = "mcp")]
    format: Format,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    /// MCP's tools/list result
    Mcp,
    /// OpenAI function-calling tools
    Openai,
    /// Anthropic tool definitions
    Anthropic,
}

pub fn serve(args: McpArgs) -> i32 {
    if !std::path::Path::new(&args.state).is_file() {
        output::fatal(&format!(
            "{} is not a state file; create one with `planc run init PLAN -o {}`",
            args.state, args.state
        ));
        return EXIT_USAGE;
    }
    match mcp::serve_stdio(args.state.into()) {
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
        Format::Anthropic => ToolFormat::Anthropic,
    };
    print!("{}", planc::document::json_text(&mcp::render(format)));
    EXIT_OK
}
