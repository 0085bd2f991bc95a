//! `planc.toml`'s settings handed to clap as the flags' defaults: a flag on
//! the command line, then its environment variable, win over the file, and
//! the file over planc's own default.

use clap::{Arg, ArgMatches, Command, CommandFactory};

use super::config::{self, Config};

/// The command line, with the values of the `planc.toml` that applies here
/// as its flags' defaults when the command reads it.
/// A first, forgiving parse says which command runs and what it was given;
/// the real parse (and its usage errors) follows. `Err` is the exit code of
/// a `planc.toml` that cannot be used.
pub fn command_line() -> Result<Command, i32> {
    let command = super::Cli::command();
    let given: ArgMatches = match command.clone().ignore_errors(true).try_get_matches() {
        Ok(given) => given,
        Err(_) => return Ok(command),
    };
    let reads = given.subcommand_name().is_some_and(reads_config);
    // `--no-config` may stand before or after the command's name.
    let no_config = |m: &ArgMatches| matches!(m.try_get_one::<bool>("no_config"), Ok(Some(true)));
    let sub = given.subcommand().map(|(_, sub)| sub);
    // The forgiving parse leaves environment variables out: PLANC_NO_CONFIG
    // is read here as clap reads it (1, true, yes, on: set).
    let no_config_env = std::env::var("PLANC_NO_CONFIG").is_ok_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "1" | "true" | "yes" | "on" | "y" | "t"
        )
    });
    if !reads || no_config_env || no_config(&given) || sub.is_some_and(no_config) {
        return Ok(command);
    }
    let Some(path) = std::env::current_dir()
        .ok()
        .and_then(|dir| config::find(&dir))
    else {
        return Ok(command);
    };
    match config::load(&path, |key| choices(&command, key)) {
        Ok(config) => Ok(apply(command, &config, &given)),
        Err(error) => {
            super::output::fatal(&format!(
                "{}: {}",
                planc::escape::path(&error.place),
                error.message
            ));
            eprintln!("  (planc.toml's keys: docs/cli.md; --no-config or PLANC_NO_CONFIG=1 ignores the file)");
            Err(super::EXIT_USAGE)
        }
    }
}

/// Whether the command named `name` reads `planc.toml` (those with a flag
/// the file sets); the others work the same in any directory.
pub fn reads_config(name: &str) -> bool {
    matches!(
        name,
        "check" | "build" | "graph" | "run" | "mcp" | "tools" | "serve"
    )
}

/// The values a key with a fixed set takes: the possible values of its flag.
pub fn choices(command: &Command, key: &str) -> Vec<String> {
    let holder = match key {
        "dialect" => "tools",
        _ => "check",
    };
    command
        .find_subcommand(holder)
        .and_then(|c| c.get_arguments().find(|a| a.get_id() == key))
        .map(|arg| {
            arg.get_possible_values()
                .iter()
                .map(|v| v.get_name().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// `command` with the config's values as defaults of the subcommand that
/// `given` (the command line, parsed once without them) runs.
pub fn apply(command: Command, config: &Config, given: &ArgMatches) -> Command {
    let Some((name, sub)) = given.subcommand() else {
        return command;
    };
    let name = name.to_owned();
    let store = config.store.clone();
    command.mut_subcommand(&name, |c| match name.as_str() {
        "check" | "build" => with_deny(with_root(c, config), config),
        "graph" => with_root(c, config),
        "tools" => with_dialect(c, config),
        "serve" => with_value(c, "store", store),
        "mcp" => {
            // A state file or a session names the plan; the store is for
            // a command line that names none.
            let names_plan = ["state", "session", "store"]
                .iter()
                .any(|id| given_explicitly(sub, id));
            let c = with_value(with_dialect(c, config), "agent", config.agent.clone());
            with_value(c, "store", store.filter(|_| !names_plan))
        }
        "run" => run(c, config, sub),
        _ => c,
    })
}

/// `planc run`: the agent, the store of `--plan-id`, and `run init --root`.
fn run(command: Command, config: &Config, given: &ArgMatches) -> Command {
    let command = with_value(command, "agent", config.agent.clone())
        .mut_subcommand("init", |init| with_root(init, config));
    let store_wanted = given_explicitly(given, "plan_id")
        && !given_explicitly(given, "store")
        && !given_explicitly(given, "session");
    match &config.store {
        // clap counts only a value given on the command line as meeting
        // `--plan-id`'s need of `--store`.
        Some(store) if store_wanted => {
            let command = with_arg(command, "plan_id", |a| {
                a.requires(clap::builder::Resettable::<clap::Id>::Reset)
            });
            with_value(command, "store", Some(store.clone()))
        }
        _ => command,
    }
}

fn with_root(command: Command, config: &Config) -> Command {
    let root = config.root.as_ref().map(|r| r.display().to_string());
    with_value(command, "root", root)
}

fn with_deny(command: Command, config: &Config) -> Command {
    match &config.deny {
        Some(deny) if !deny.is_empty() => {
            with_arg(command, "deny", |a| a.default_values(deny.clone()))
        }
        _ => command,
    }
}

fn with_dialect(command: Command, config: &Config) -> Command {
    with_value(command, "dialect", config.dialect.clone())
}

fn with_value(command: Command, id: &str, value: Option<String>) -> Command {
    match value {
        Some(value) => with_arg(command, id, |a| a.default_value(value.clone())),
        None => command,
    }
}

/// `command` with its argument `id` changed by `change`, in its place (the
/// order `--help` lists them in stays).
fn with_arg(command: Command, id: &str, change: impl Fn(Arg) -> Arg) -> Command {
    command.mut_args(|arg| if arg.get_id() == id { change(arg) } else { arg })
}

/// Whether `id` was given on the command line or by its environment variable.
fn given_explicitly(matches: &ArgMatches, id: &str) -> bool {
    matches
        .value_source(id)
        .is_some_and(|s| s != clap::parser::ValueSource::DefaultValue)
}
