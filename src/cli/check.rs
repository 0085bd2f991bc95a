//! `planc check`: report every problem in plans and plan documents.

use std::sync::Arc;

use clap::Args;
use planc::check::{parse_assignment, Options};
use planc::diagnostic::{Diagnostic, Severity};
use planc::render;
use planc::span::SourceMap;

use super::input::{self, InputError, Kind};
use super::output::{self, Color, Deny, Format};
use super::{EXIT_FAILURE, EXIT_OK, EXIT_USAGE};

#[derive(Args)]
pub struct CheckArgs {
    /// Files to check: .plan sources or .json plan documents (`-` reads standard input)
    #[arg(required = true, value_name = "FILE")]
    files: Vec<String>,
    /// Give a parameter a value (checked against its type)
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = parse_assignment)]
    set: Vec<(String, String)>,
    /// How to print diagnostics
    #[arg(long, value_enum, default_value_t)]
    format: Format,
    /// Fail on warnings too
    #[arg(long, value_enum, value_name = "LINT")]
    deny: Vec<Deny>,
    /// When to use colour in human output
    #[arg(long, value_enum, default_value_t)]
    color: Color,
    #[command(flatten)]
    imports: input::ImportArgs,
}

/// One checked file, kept until everything is printed.
struct Report {
    name: String,
    sources: SourceMap,
    diagnostics: Vec<Diagnostic>,
    tasks: Option<usize>,
    /// Why the file could not be read (its one diagnostic is `planc::read`).
    unread: Option<String>,
}

pub fn run(args: CheckArgs) -> i32 {
    let deny_warnings = args.deny.contains(&Deny::Warnings);
    let options = Options {
        params: args.set.clone(),
        require_params: false,
        // Nothing here looks names up or reads the plan.
        skip_references: true,
        skip_plan: true,
    };
    // A file that cannot be read does not stop the others: each is checked
    // and reported, and the run ends with exit code 2.
    let mut reports: Vec<Report> = args
        .files
        .iter()
        .map(|path| read_and_check(path, &options, &args.imports))
        .collect();

    let mut failed = false;
    let mut unread = false;
    for report in &mut reports {
        if let Some(message) = &report.unread {
            unread = true;
            // People read why on standard error in every format; machines
            // find the file in the JSON array or the annotations too.
            input::report_unreadable(message);
            if args.format == Format::Github {
                output::diagnostics(
                    args.format,
                    &report.diagnostics,
                    &report.sources,
                    args.color,
                );
            }
            continue;
        }
        if deny_warnings {
            for d in &mut report.diagnostics {
                d.severity = Severity::Error;
            }
        }
        failed |= report.diagnostics.iter().any(Diagnostic::is_error);
        match args.format {
            Format::Json => {}
            format => output::diagnostics(format, &report.diagnostics, &report.sources, args.color),
        }
        if args.format == Format::Human {
            let tasks = match report.tasks {
                Some(1) => ", 1 task".to_owned(),
                Some(n) => format!(", {n} tasks"),
                None => String::new(),
            };
            let name = planc::escape::path(&report.name);
            match render::summary(&report.diagnostics) {
                Some(summary) => eprintln!("{name}: {summary}{tasks}"),
                None => eprintln!("{name}: ok{tasks}"),
            }
        }
    }
    if args.format == Format::Json {
        let files: Vec<_> = reports
            .iter()
            .map(|r| (r.diagnostics.as_slice(), &r.sources))
            .collect();
        print!("{}", render::json_files(&files));
    }
    if unread {
        EXIT_USAGE
    } else if failed {
        EXIT_FAILURE
    } else {
        EXIT_OK
    }
}

/// The report of one file: its check, or why it could not be read.
fn read_and_check(path: &str, options: &Options, imports: &input::ImportArgs) -> Report {
    match input::read(path) {
        Ok(input) => check_input(&input, options, imports),
        Err(InputError::Io(message)) => {
            let (sources, diagnostic) = input::unreadable(path, &message);
            Report {
                name: path.to_owned(),
                sources,
                diagnostics: vec![diagnostic],
                tasks: None,
                unread: Some(message),
            }
        }
        Err(InputError::Encoding(error)) => {
            let (sources, diagnostic) = *error;
            Report {
                name: path.to_owned(),
                sources,
                diagnostics: vec![diagnostic],
                tasks: None,
                unread: None,
            }
        }
    }
}

fn check_input(input: &input::Input, options: &Options, imports: &input::ImportArgs) -> Report {
    match input.kind {
        Kind::Plan => {
            let mut compilation = planc::compile_shared_with(
                &input.name,
                Arc::clone(&input.text),
                options,
                &imports.loader(&input.name),
            );
            let report = Report {
                name: input.name.clone(),
                sources: std::mem::take(&mut compilation.sources),
                diagnostics: std::mem::take(&mut compilation.diagnostics),
                tasks: compilation.checked.task_count,
                unread: None,
            };
            super::discard(compilation);
            report
        }
        Kind::Json => {
            let mut sources = SourceMap::new();
            let file = sources.add(&input.name, Arc::clone(&input.text));
            let stem = input::stem(&input.name);
            let (document, diagnostics) =
                planc::document::load_json_with(&input.text, file, &imports.load_options(&stem));
            Report {
                name: input.name.clone(),
                sources,
                diagnostics,
                tasks: document.map(|d| d.tasks.len()),
                unread: None,
            }
        }
    }
}
