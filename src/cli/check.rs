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

mod fix;

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
    /// Apply the fixes planc is sure of (the editor's quick fixes) to the files, then
    /// report what remains
    #[arg(long)]
    fix: bool,
    /// Print the fixes `--fix` would apply as a unified diff and change nothing (exit 1
    /// when there are any)
    #[arg(long, conflicts_with_all = ["fix", "format"])]
    diff: bool,
    #[command(flatten)]
    imports: input::ImportArgs,
}

/// What `--fix` and `--diff` do, and what they did so far.
#[derive(Default)]
struct Fixing {
    /// `--fix` or `--diff`.
    on: bool,
    /// `--diff`: show the fixes, write nothing.
    diff: bool,
    /// The fixes applied (or, with `--diff`, that would be).
    count: usize,
    /// The files changed (or that would be).
    files: usize,
    /// A file that could not be written (exit 2).
    unwritten: bool,
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
    let options = Options {
        params: args.set.clone(),
        require_params: false,
        // Nothing here looks names up or reads the plan.
        skip_references: true,
        skip_plan: true,
    };
    let mut fixing = Fixing {
        on: args.fix || args.diff,
        diff: args.diff,
        ..Fixing::default()
    };
    // A file that cannot be read does not stop the others: each is checked
    // and reported, and the run ends with exit code 2.
    let mut reports: Vec<Report> = args
        .files
        .iter()
        .map(|path| read_and_check(path, &options, &args.imports, &mut fixing))
        .collect();
    if args.diff {
        for message in reports.iter().filter_map(|r| r.unread.as_ref()) {
            input::report_unreadable(message);
        }
        return fix_summary(&fixing, &reports, true);
    }
    let status = report(&args, &mut reports);
    if args.fix {
        let to_stderr = args.files.iter().any(|f| f == "-");
        let code = fix_summary(&fixing, &reports, to_stderr);
        if code == EXIT_USAGE {
            return EXIT_USAGE;
        }
    }
    status
}

/// Prints every report in the format asked for; the exit code.
fn report(args: &CheckArgs, reports: &mut [Report]) -> i32 {
    let deny_warnings = args.deny.contains(&Deny::Warnings);
    // `planc check --fix -` prints the fixed text: the report goes beside it.
    let to_stderr = args.fix && args.files.iter().any(|f| f == "-");
    let mut failed = false;
    let mut unread = false;
    for report in reports.iter_mut() {
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
            Format::Human if to_stderr => {
                output::human(&report.diagnostics, &report.sources, args.color);
            }
            format => output::diagnostics(format, &report.diagnostics, &report.sources, args.color),
        }
        if args.format == Format::Human {
            let tasks = match report.tasks {
                Some(1) => ", 1 task".to_owned(),
                Some(n) => format!(", {n} tasks"),
                None => String::new(),
            };
            let name = planc::escape::path(&report.name);
            let line = match render::summary(&report.diagnostics) {
                Some(summary) => format!("{name}: {summary}{tasks}"),
                None => format!("{name}: ok{tasks}"),
            };
            if to_stderr {
                eprintln!("{line}");
            } else {
                println!("{line}");
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

/// The report of one file: its check (after its fixes, with `--fix` or
/// `--diff`), or why it could not be read.
fn read_and_check(
    path: &str,
    options: &Options,
    imports: &input::ImportArgs,
    fixing: &mut Fixing,
) -> Report {
    match input::read(path) {
        Ok(input) if fixing.on && input.kind == Kind::Plan => {
            fix_and_check(&input, options, imports, fixing)
        }
        Ok(input) => {
            if fixing.on {
                let name = planc::escape::path(&input.name);
                eprintln!("{name}: no fixes for JSON plan documents (planc fixes .plan sources)");
            }
            check_input(&input, options, imports)
        }
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

/// Fixes a `.plan` source (and the imports it may change), writes the
/// changed files or prints their diff, and reports what remains.
fn fix_and_check(
    input: &input::Input,
    options: &Options,
    imports: &input::ImportArgs,
    fixing: &mut Fixing,
) -> Report {
    let mut fixed = fix::fix(input, options, imports);
    fixing.count += fixed.count;
    fixing.files += fixed.changed.len();
    for changed in &fixed.changed {
        match (&changed.place, fixing.diff) {
            (_, true) => {
                let name = planc::escape::path(&changed.name);
                print!(
                    "{}",
                    super::fmt::diff::unified_as(&changed.before, &changed.after, &name, "fixed")
                );
            }
            // Standard input's fixed text is the output.
            (None, false) => print!("{}", changed.after),
            (Some(place), false) => {
                let place = place.to_string_lossy();
                fixing.unwritten |= output::write_atomic(&place, &changed.after) != EXIT_OK;
            }
        }
    }
    if fixed.changed.is_empty() && input.name == planc::read::STDIN_NAME && !fixing.diff {
        print!("{}", input.text);
    }
    let report = Report {
        name: input.name.clone(),
        sources: std::mem::take(&mut fixed.compilation.sources),
        diagnostics: std::mem::take(&mut fixed.compilation.diagnostics),
        tasks: fixed.compilation.checked.task_count,
        unread: None,
    };
    super::discard(fixed.compilation);
    report
}

/// Prints how many problems were fixed and how many remain (`--fix`'s last
/// line, after the report); the exit code of `--diff` (1 when there would
/// be changes) or 2 when a file could not be read or written.
fn fix_summary(fixing: &Fixing, reports: &[Report], to_stderr: bool) -> i32 {
    let remaining: usize = reports.iter().map(|r| r.diagnostics.len()).sum();
    let problems = |n: usize| {
        if n == 1 {
            "1 problem".to_owned()
        } else {
            format!("{n} problems")
        }
    };
    let verb = if fixing.diff { "Would fix" } else { "Fixed" };
    let line = format!("{verb} {} ({remaining} remaining)", problems(fixing.count));
    if to_stderr {
        eprintln!("{line}");
    } else {
        println!("{line}");
    }
    if fixing.unwritten || reports.iter().any(|r| r.unread.is_some()) {
        EXIT_USAGE
    } else if fixing.diff && fixing.files > 0 {
        EXIT_FAILURE
    } else {
        EXIT_OK
    }
}
