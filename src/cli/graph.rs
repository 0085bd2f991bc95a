//! `planc graph`: draw a plan's dependency graph.

use clap::{Args, ValueEnum};
use planc::check::parse_assignment;
use planc::diagram::{self, GraphFormat};

use super::input;
use super::output::{self, Color};
use super::EXIT_FAILURE;

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    /// Mermaid flowchart (renders in Markdown on GitHub and GitLab)
    Mermaid,
    /// Graphviz DOT (`dot -Tsvg`)
    Dot,
}

#[derive(Args)]
pub struct GraphArgs {
    /// A .plan source, a .json plan document, or a runner state (coloured by status)
    #[arg(value_name = "FILE")]
    file: String,
    /// The picture format
    #[arg(long, value_enum, default_value = "mermaid")]
    format: Format,
    /// Give a parameter a value
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = parse_assignment)]
    set: Vec<(String, String)>,
    /// Write to a file instead of standard output
    #[arg(short, long, value_name = "OUT")]
    output: Option<String>,
    /// When to use colour in diagnostics
    #[arg(long, value_enum, default_value_t)]
    color: Color,
    #[command(flatten)]
    imports: input::ImportArgs,
}

pub fn run(args: GraphArgs) -> i32 {
    let (input, loaded) =
        match input::open_plan(&args.file, args.set.clone(), &args.imports, args.color) {
            Ok(opened) => opened,
            Err(code) => return code,
        };
    output::human(&loaded.diagnostics, &loaded.sources, args.color);
    let document = loaded.clean_document();
    let Some(document) = document else {
        eprintln!(
            "{}: no graph: the plan has errors",
            planc::escape::path(&input.name)
        );
        return EXIT_FAILURE;
    };
    let format = match args.format {
        Format::Mermaid => GraphFormat::Mermaid,
        Format::Dot => GraphFormat::Dot,
    };
    let text = diagram::render(&document, format);
    output::emit(args.output.as_deref(), &text)
}
