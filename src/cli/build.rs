//! `planc build`: compile a plan to its plan document or a seed format.

use clap::Args;
use planc::check::parse_assignment;
use planc::diagnostic::{Diagnostic, Severity};
use planc::emit::{self, Target};

use super::input;
use super::output::{self, Color, Deny};
use super::target_name::TargetName;
use super::EXIT_FAILURE;

#[derive(Args)]
pub struct BuildArgs {
    /// The plan to build: a .plan source, or a .json plan document to convert
    /// (`-` reads standard input)
    #[arg(value_name = "FILE")]
    file: String,
    /// Give a parameter a value (overrides its default; checked against its type)
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = parse_assignment)]
    set: Vec<(String, String)>,
    /// Write the output to a file instead of standard output
    #[arg(short, long, value_name = "OUT")]
    output: Option<String>,
    /// The output shape: planc/1, a seed system's format, or a peer's
    #[arg(long, value_enum, value_name = "TARGET", default_value = "planc")]
    target: TargetName,
    /// Fail on warnings too
    #[arg(long, value_enum, value_name = "LINT")]
    deny: Vec<Deny>,
    /// When to use colour in diagnostics
    #[arg(long, value_enum, default_value_t)]
    color: Color,
    #[command(flatten)]
    imports: input::ImportArgs,
}

pub fn run(args: BuildArgs) -> i32 {
    let (input, loaded) =
        match input::open_plan(&args.file, args.set.clone(), &args.imports, args.color) {
            Ok(opened) => opened,
            Err(code) => return code,
        };
    let (document, sources, mut diagnostics) =
        (loaded.document, loaded.sources, loaded.diagnostics);
    if args.deny.contains(&Deny::Warnings) {
        for d in &mut diagnostics {
            d.severity = Severity::Error;
        }
    }
    output::human(&diagnostics, &sources, args.color);
    let document = match document {
        Some(document) if !diagnostics.iter().any(Diagnostic::is_error) => document,
        _ => {
            eprintln!(
                "{}: not built: {}",
                planc::escape::path(&input.name),
                planc::render::summary(&diagnostics).unwrap_or_else(|| "no plan".to_owned())
            );
            return EXIT_FAILURE;
        }
    };
    let tag = args.imports.tag.as_deref().unwrap_or("master");
    let target = args.target.target();
    let text = emit::render_tagged(&document, target, Some(tag));
    super::discard(document);
    match (target, args.output.as_deref()) {
        (Target::TaskMaster, Some(path)) => write_taskmaster_tag(path, &text, tag),
        (_, path) => output::emit(path, &text),
    }
}

/// Writes the tag `tag` of `text` into the task-master file at `path`,
/// keeping its other tags and metadata (a new file when there is none), and
/// atomically: a crash leaves the old file or the new one.
fn write_taskmaster_tag(path: &str, text: &str, tag: &str) -> i32 {
    let shown = planc::escape::path(path);
    let existing = match std::fs::read_to_string(path) {
        Ok(existing) => existing,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => {
            output::fatal(&format!("cannot read {shown}: {e}"));
            return super::EXIT_USAGE;
        }
    };
    match emit::write_tag(&existing, text, tag) {
        Ok(merged) => output::write_atomic(path, &merged),
        Err(why) => {
            output::fatal(&format!("not written: {shown} exists, but {why}"));
            EXIT_FAILURE
        }
    }
}
