//! `planc init [DIR]`: a starter project — a plan that checks clean, a
//! `planc.toml`, a pre-commit config running planc's checks, and an editor
//! hint. It never overwrites a file unless asked to (`--force`).

use std::path::{Path, PathBuf};

use clap::Args;

use super::output;
use super::{EXIT_OK, EXIT_USAGE};

#[derive(Args)]
pub struct InitArgs {
    /// The directory to set up (made if missing) [default: the current directory]
    #[arg(value_name = "DIR", default_value = ".")]
    dir: PathBuf,
    /// Overwrite the files that already exist
    #[arg(long)]
    force: bool,
}

/// The files `planc init` writes: the path in the directory and the text.
const FILES: [(&str, &str); 4] = [
    ("main.plan", include_str!("scaffold/main.plan")),
    ("planc.toml", include_str!("scaffold/planc.toml")),
    (
        ".pre-commit-config.yaml",
        include_str!("scaffold/pre-commit-config.yaml"),
    ),
    (
        ".vscode/extensions.json",
        include_str!("scaffold/vscode-extensions.json"),
    ),
];

/// Writes the starter files into `args.dir`; exit 2 (nothing written) when
/// one exists already and `--force` was not given.
pub fn run(args: InitArgs) -> i32 {
    let existing: Vec<&str> = FILES
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| args.dir.join(name).exists())
        .collect();
    if !existing.is_empty() && !args.force {
        output::fatal(&format!(
            "not initialised: {} exist{} already in {} (--force overwrites)",
            existing.join(", "),
            if existing.len() == 1 { "s" } else { "" },
            planc::escape::path(&args.dir.display().to_string())
        ));
        return EXIT_USAGE;
    }
    for (name, text) in FILES {
        if let Err(message) = write(&args.dir.join(name), text) {
            output::fatal(&message);
            return EXIT_USAGE;
        }
        let verb = if existing.contains(&name) {
            "overwrote"
        } else {
            "created"
        };
        println!("{verb} {}", planc::escape::path(&shown(&args.dir, name)));
    }
    print!("{}", next_steps(&args.dir));
    EXIT_OK
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    let shown = planc::escape::path(&path.display().to_string()).into_owned();
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {shown}: {e}"))?;
    }
    std::fs::write(path, text).map_err(|e| format!("cannot write {shown}: {e}"))
}

/// `name` in `dir`, as a user would type it from here.
fn shown(dir: &Path, name: &str) -> String {
    if dir == Path::new(".") {
        name.to_owned()
    } else {
        dir.join(name).display().to_string()
    }
}

/// What to run next, and where the editors are set up.
fn next_steps(dir: &Path) -> String {
    let cd = if dir == Path::new(".") {
        String::new()
    } else {
        format!("  cd {}\n", planc::escape::path(&dir.display().to_string()))
    };
    let steps = [
        ("planc check main.plan", "every problem, with its code"),
        (
            "planc build main.plan -o main.json",
            "the plan document agents load",
        ),
        (
            "planc run init main.plan -o state.json",
            "a state to drive: planc run next state.json",
        ),
        (
            "pre-commit install",
            "check and format .plan files on every commit",
        ),
    ];
    let mut text = format!("\nNext:\n{cd}");
    for (command, what) in steps {
        text += &format!("  {command:<40} # {what}\n");
    }
    text += "\nEditors: .vscode/extensions.json asks VS Code to recommend planc's extension;\n\
             for Neovim and Helix, see docs/editors.md (`planc lsp` is the language server).\n";
    text
}
