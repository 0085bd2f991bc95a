//! `planc.toml`: a project's settings, found upward from the working
//! directory. Each key gives a flag its value when the command line (or the
//! flag's environment variable) does not; `config_defaults.rs` hands them to
//! clap.

use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

/// The name of the project config file.
pub const FILE_NAME: &str = "planc.toml";

/// The file as written: every key optional, no other key allowed.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    root: Option<Spanned<String>>,
    store: Option<Spanned<String>>,
    agent: Option<String>,
    deny: Option<Vec<Spanned<String>>>,
    dialect: Option<Spanned<String>>,
}

/// The settings of a `planc.toml`, its paths made absolute.
#[derive(Debug, Default)]
pub struct Config {
    /// `--root`: the directory imports must stay inside.
    pub root: Option<PathBuf>,
    /// `--store`: the store of `planc serve`, `planc mcp` and `planc run --plan-id`.
    pub store: Option<String>,
    /// `--agent`: who `planc run` and `planc mcp` act as.
    pub agent: Option<String>,
    /// `--deny`: the lints `planc check` and `planc build` fail on.
    pub deny: Option<Vec<String>>,
    /// `--dialect`: whose tools `planc mcp` and `planc tools` serve.
    pub dialect: Option<String>,
}

/// A `planc.toml` that cannot be used: where and why.
#[derive(Debug)]
pub struct ConfigError {
    /// The file, line and column (1-based), `planc.toml:3:1`.
    pub place: String,
    /// What is wrong, in one line.
    pub message: String,
}

/// The `planc.toml` that applies in `dir`: the first one in `dir` or a
/// directory above it. The search stops at the top of a git repository
/// (a directory holding `.git`): a file above the repository belongs to
/// another project (or to the machine) and would make a checkout behave
/// differently on another machine.
pub fn find(dir: &Path) -> Option<PathBuf> {
    for dir in dir.ancestors() {
        let file = dir.join(FILE_NAME);
        if file.is_file() {
            return Some(file);
        }
        if dir.join(".git").exists() {
            return None;
        }
    }
    None
}

/// Reads and checks the file at `path`. `choices(key)` lists the values a
/// key with a fixed set of values may take (`deny`, `dialect`).
pub fn load(path: &Path, choices: impl Fn(&str) -> Vec<String>) -> Result<Config, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
        place: path.display().to_string(),
        message: format!("cannot read it: {e}"),
    })?;
    let at = |span: Option<Range<usize>>, message: String| ConfigError {
        place: place(path, &text, span.map_or(0, |s| s.start)),
        message,
    };
    let file: ConfigFile = toml::from_str(&text).map_err(|e| at(e.span(), tidy(e.message())))?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let one_of = |key: &str, value: &Spanned<String>| {
        let allowed = choices(key);
        if allowed.iter().any(|a| a == value.get_ref()) {
            Ok(value.get_ref().clone())
        } else {
            Err(at(
                Some(value.span()),
                format!(
                    "`{}` is not a value of `{key}`; the values are {}",
                    value.get_ref(),
                    allowed.join(", ")
                ),
            ))
        }
    };
    let root = match &file.root {
        Some(root) => {
            let resolved = dir.join(root.get_ref());
            if !resolved.is_dir() {
                return Err(at(
                    Some(root.span()),
                    format!("`root` is not a directory: {}", resolved.display()),
                ));
            }
            Some(resolved)
        }
        None => None,
    };
    let deny = match &file.deny {
        Some(deny) => Some(
            deny.iter()
                .map(|d| one_of("deny", d))
                .collect::<Result<_, _>>()?,
        ),
        None => None,
    };
    Ok(Config {
        root,
        store: file.store.map(|s| store_url(dir, s.get_ref())),
        agent: file.agent,
        deny,
        dialect: file
            .dialect
            .as_ref()
            .map(|d| one_of("dialect", d))
            .transpose()?,
    })
}

/// The store URL with its path taken relative to the config's directory
/// (`sqlite:PATH`, `dir:PATH`, `file:PATH` or a bare path; a PostgreSQL URL
/// is left as it is).
fn store_url(dir: &Path, url: &str) -> String {
    for scheme in ["sqlite://", "sqlite:", "dir:", "file:"] {
        if let Some(path) = url.strip_prefix(scheme) {
            return format!("{scheme}{}", dir.join(path).display());
        }
    }
    if url.contains("://") || url.is_empty() {
        return url.to_owned();
    }
    dir.join(url).display().to_string()
}

/// `PATH:LINE:COLUMN` of the byte `offset` of `text`.
fn place(path: &Path, text: &str, offset: usize) -> String {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    format!("{}:{line}:{column}", path.display())
}

/// toml's message on one line, naming serde's "field" a key.
fn tidy(message: &str) -> String {
    message
        .trim()
        .replace('\n', " ")
        .replace("unknown field", "unknown key")
        .replace("missing field", "missing key")
}
