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
}

/// One checked file, kept until everything is printed.
struct Report {
    name: String,
    sources: SourceMap,
    diagnostics: Vec<Diagnostic>,
    tasks: Option<usize>,
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
    let mut reports = Vec::new();
    for path in &args.files {
        let report = match input::read(path) {
            Ok(input) => check_input(&input, &options),
            Err(InputError::Io(message)) => {
                output::fatal(&message);
                return EXIT_USAGE;
            }
            Err(InputError::Encoding(error)) => {
                let (sources, diagnostic) = *error;
                Report {
                    name: path.clone(),
                    sources,
                    diagnostics: vec![diagnostic],
                    tasks: None,
                }
            }
        };
        reports.push(report);
    }

    let mut failed = false;
    for report in &mut reports {
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
    if failed {
        EXIT_FAILURE
    } else {
        EXIT_OK
    }
}

fn check_input(input: &input::Input, options: &Options) -> Report {
    match input.kind {
        Kind::Plan => {
            let mut compilation =
                planc::compile_shared(&input.name, Arc::clone(&input.text), options);
            let report = Report {
                name: input.name.clone(),
                sources: std::mem::take(&mut compilation.sources),
                diagnostics: std::mem::take(&mut compilation.diagnostics),
                tasks: compilation.checked.task_count,
            };
            super::discard(compilation);
            report
        }
        Kind::Json => {
            let mut sources = SourceMap::new();
            let file = sources.add(&input.name, Arc::clone(&input.text));
            let (document, diagnostics) =
                planc::document::load_json(&input.text, file, &input::stem(&input.name));
            Report {
                name: input.name.clone(),
                sources,
                diagnostics,
                tasks: document.map(|d| d.tasks.len()),
            }
        }
    }
}
