//! `planc explain CODE`: print what a diagnostic code covers, from
//! `docs/diagnostics.md` (embedded when planc is built, so it is the page of
//! this version).

use std::io::IsTerminal;

use clap::Args;
use planc::diagnostic::Code;

use super::{EXIT_OK, EXIT_USAGE};

/// The diagnostics page, one `## planc::CODE` section per code.
const PAGE: &str = include_str!("../../docs/diagnostics.md");

#[derive(Args)]
pub struct ExplainArgs {
    /// A diagnostic code: `planc::invalid_value` or `invalid_value`
    #[arg(value_name = "CODE", required_unless_present = "list")]
    code: Option<String>,
    /// List every code with its one-line summary
    #[arg(long, conflicts_with = "code")]
    list: bool,
}

pub fn run(args: ExplainArgs) -> i32 {
    if args.list {
        for code in Code::ALL {
            println!(
                "{:<29} {:<7}  {}",
                code.as_str(),
                code.severity().as_str(),
                code.summary()
            );
        }
        return EXIT_OK;
    }
    let asked = args.code.unwrap_or_default();
    let Some(code) = find(&asked) else {
        let bare = asked.strip_prefix("planc::").unwrap_or(&asked);
        let names = Code::ALL.iter().map(|c| &c.as_str()["planc::".len()..]);
        let mut message = format!(
            "error: unknown diagnostic code `{}`",
            planc::escape::line(&asked)
        );
        if let Some(best) = planc::suggest::closest(bare, names) {
            message.push_str(&format!("; did you mean `planc::{best}`?"));
        }
        eprintln!("{message}\nhelp: `planc explain --list` lists every code");
        return EXIT_USAGE;
    };
    let Some(section) = section(code) else {
        // Cannot happen: a test holds every code to a section of the page.
        println!("{}: {}", code.as_str(), code.summary());
        return EXIT_OK;
    };
    let styled = std::io::stdout().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    for line in section.lines() {
        let line = planc::escape::line(line);
        if styled && line.starts_with('#') {
            println!("\x1b[1m{line}\x1b[0m");
        } else {
            println!("{line}");
        }
    }
    EXIT_OK
}

/// The code named `asked`, with or without `planc::`.
fn find(asked: &str) -> Option<Code> {
    let bare = asked.strip_prefix("planc::").unwrap_or(asked);
    Code::ALL
        .iter()
        .copied()
        .find(|c| &c.as_str()["planc::".len()..] == bare)
}

/// `code`'s section of the page: from its heading to the next `## `.
fn section(code: Code) -> Option<&'static str> {
    let heading = format!("\n## {}\n", code.as_str());
    let start = PAGE.find(&heading)? + 1;
    let rest = &PAGE[start..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |i| i + 4);
    Some(rest[..end].trim_end())
}
