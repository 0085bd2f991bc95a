//! What `POST /api/plans` takes: the query (`id`, `force`, `set=NAME=VALUE`
//! repeated), and a body that is a plan (`.plan` source or any JSON shape
//! planc loads) or a JSON request `{"source", "files", "set"}` carrying a
//! `.plan` source with the files it imports (docs/serve.md).

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::diagnostic::{Code, Diagnostic};
use crate::document::PlanDocument;
use crate::modules::{ImportError, Loader};
use crate::read::{ReadError, MAX_FILE_BYTES};
use crate::runner::{ErrorCode, OpError};

/// The query of `POST /api/plans`.
#[derive(Debug, Default)]
pub struct CreateQuery {
    /// The plan id (default: the document's `meta.id`).
    pub id: Option<String>,
    /// Start an existing plan over.
    pub force: bool,
    /// Parameter values, `set=NAME=VALUE`, in the order given.
    pub set: Vec<(String, String)>,
}

fn invalid(message: impl Into<String>) -> OpError {
    OpError::new(ErrorCode::InvalidArgument, message)
}

impl CreateQuery {
    /// Reads `id`, `force` and every `set` of a query string.
    pub fn parse(raw: Option<&str>) -> Result<CreateQuery, OpError> {
        let pairs: Vec<(String, String)> = serde_urlencoded::from_str(raw.unwrap_or(""))
            .map_err(|e| invalid(format!("bad query: {e}")))?;
        let mut query = CreateQuery::default();
        for (key, value) in pairs {
            match key.as_str() {
                "id" => query.id = Some(value),
                "force" => {
                    query.force = match value.as_str() {
                        "true" => true,
                        "false" => false,
                        _ => {
                            return Err(invalid(format!(
                                "bad query: `force` is `true` or `false`, not `{value}`"
                            )))
                        }
                    }
                }
                "set" => query.set.push(assignment(&value)?),
                _ => {
                    return Err(invalid(format!(
                        "bad query: unknown parameter `{key}`; it takes `id`, `force` and `set=NAME=VALUE`"
                    )))
                }
            }
        }
        Ok(query)
    }
}

/// `NAME=VALUE`, as a `set` gives it.
fn assignment(text: &str) -> Result<(String, String), OpError> {
    crate::check::parse_assignment(text)
        .map_err(|e| invalid(format!("bad query: `set={text}`: {e}")))
}

/// The plan document of a request body, with the query's `set` values.
/// Diagnostics come back as `INVALID_ARGUMENT` with each one in
/// `details.diagnostics`.
pub fn load_plan(
    name: &str,
    body: &[u8],
    set: &[(String, String)],
) -> Result<PlanDocument, OpError> {
    let text = std::str::from_utf8(body)
        .map_err(|e| invalid(format!("the request body is not UTF-8 text: {e}")))?;
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    if !(trimmed.starts_with('{') || trimmed.starts_with('[')) {
        return compile_source(name, text, set.to_vec(), &SentFiles::default());
    }
    match request_of(text)? {
        Some(request) => {
            let mut values = set.to_vec();
            values.extend(request.set);
            compile_source(name, &request.source, values, &request.files)
        }
        None if !set.is_empty() => Err(invalid(
            "`set` gives values to a `.plan` source's parameters; a JSON plan document holds its values already",
        )),
        None => load_document(name, text),
    }
}

/// A JSON request: `.plan` source, the files it imports, parameter values.
struct SourceRequest {
    source: String,
    files: SentFiles,
    set: Vec<(String, String)>,
}

/// The members of a JSON request.
const REQUEST_MEMBERS: [&str; 3] = ["source", "files", "set"];

/// The JSON request in `text`, or `None` when `text` is a plan document: a
/// request is an object with a string `source` and no member but
/// `source`, `files` and `set` (no plan shape has a top-level `source`).
fn request_of(text: &str) -> Result<Option<SourceRequest>, OpError> {
    let Ok(Value::Object(mut object)) = serde_json::from_str::<Value>(text) else {
        return Ok(None);
    };
    let is_request = object.get("source").is_some_and(Value::is_string)
        && object.keys().all(|k| REQUEST_MEMBERS.contains(&k.as_str()));
    if !is_request {
        return Ok(None);
    }
    let source = match object.remove("source") {
        Some(Value::String(source)) => source,
        _ => String::new(),
    };
    let files =
        match object.remove("files") {
            None | Some(Value::Null) => SentFiles::default(),
            Some(Value::Object(files)) => SentFiles::from_json(files)?,
            Some(_) => return Err(invalid(
                "`files` is an object: each imported file's path (relative, `.plan`) to its text",
            )),
        };
    let set = match object.remove("set") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Object(values)) => values
            .into_iter()
            .map(|(name, value)| Ok((name.clone(), value_text(&name, value)?)))
            .collect::<Result<_, OpError>>()?,
        Some(_) => {
            return Err(invalid(
                "`set` is an object: each parameter's name to its value",
            ))
        }
    };
    Ok(Some(SourceRequest { source, files, set }))
}

/// A `set` value as the text `--set` would give: a string as it is, a
/// number or a boolean as JSON writes it.
fn value_text(name: &str, value: Value) -> Result<String, OpError> {
    match value {
        Value::String(text) => Ok(text),
        Value::Number(number) => Ok(number.to_string()),
        Value::Bool(flag) => Ok(flag.to_string()),
        _ => Err(invalid(format!(
            "`set.{name}` is a string, a number or a boolean"
        ))),
    }
}

/// The files sent with a plan, by their path relative to it: what its
/// imports may read, and nothing else.
#[derive(Debug, Default)]
struct SentFiles {
    files: HashMap<PathBuf, String>,
}

impl SentFiles {
    /// The files of a request's `files`, each path checked as the CLI's
    /// root rules check an import: relative, not leaving the plan's
    /// directory, a `.plan` file, within planc's size for one file.
    fn from_json(files: Map<String, Value>) -> Result<SentFiles, OpError> {
        let mut sent = SentFiles::default();
        for (written, text) in files {
            let Value::String(text) = text else {
                return Err(invalid(format!(
                    "`files.{written}` is the file's text, a string"
                )));
            };
            let path = inside_root(Path::new(&written)).ok_or_else(|| {
                invalid(format!(
                    "`files.{written}`: a path relative to the plan that stays in its directory (no `..` above it, not absolute)"
                ))
            })?;
            if path.extension().is_none_or(|e| e != "plan") {
                return Err(invalid(format!(
                    "`files.{written}`: only `.plan` files can be imported"
                )));
            }
            if text.len() > MAX_FILE_BYTES {
                return Err(OpError::new(
                    ErrorCode::InvalidArgument,
                    format!("`files.{written}` is larger than {MAX_FILE_BYTES} bytes, the most planc reads from one file"),
                ));
            }
            if sent.files.insert(path, text).is_some() {
                return Err(invalid(format!(
                    "`files.{written}` names a file sent twice"
                )));
            }
        }
        Ok(sent)
    }
}

/// `path` with `.` and `..` taken away, when it stays inside the root.
fn inside_root(path: &Path) -> Option<PathBuf> {
    let normal = crate::modules::normalise(path);
    let inside = normal
        .components()
        .all(|c| matches!(c, Component::Normal(_)));
    (inside && !normal.as_os_str().is_empty()).then_some(normal)
}

impl Loader for SentFiles {
    fn locate(&self, path: &Path) -> Result<PathBuf, ImportError> {
        let path = inside_root(path).ok_or(ImportError::OutsideRoot)?;
        if self.files.contains_key(&path) {
            Ok(path)
        } else {
            Err(ImportError::Read(ReadError::Io(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "no file of that path was sent with the plan (the JSON request's `files`)",
            ))))
        }
    }

    fn load(&self, located: &Path) -> Result<String, ImportError> {
        self.files
            .get(located)
            .cloned()
            .ok_or(ImportError::OutsideRoot)
    }
}

/// `.plan` source with parameter values and the files it may import.
fn compile_source(
    name: &str,
    text: &str,
    params: Vec<(String, String)>,
    files: &SentFiles,
) -> Result<PlanDocument, OpError> {
    let options = crate::check::Options {
        params,
        require_params: true,
        skip_references: true,
        ..Default::default()
    };
    let compilation = crate::compile_with(&format!("{name}.plan"), text, &options, files);
    let document = compilation.document();
    let no_plan = (compilation.checked.plan.is_none() && !compilation.has_errors())
        .then(|| crate::compile::no_plan(&compilation));
    let mut diagnostics: Vec<Diagnostic> = compilation
        .diagnostics
        .into_iter()
        .map(http_wording)
        .collect();
    diagnostics.extend(no_plan);
    outcome(document, &diagnostics, &compilation.sources)
}

/// A JSON plan document, in any shape planc loads.
fn load_document(name: &str, text: &str) -> Result<PlanDocument, OpError> {
    let mut sources = crate::span::SourceMap::new();
    let file = sources.add(format!("{name}.json"), text);
    let (document, diagnostics) = crate::document::load_json(text, file, name);
    outcome(document, &diagnostics, &sources)
}

fn outcome(
    document: Option<PlanDocument>,
    diagnostics: &[Diagnostic],
    sources: &crate::span::SourceMap,
) -> Result<PlanDocument, OpError> {
    match document {
        Some(document) if !diagnostics.iter().any(Diagnostic::is_error) => Ok(document),
        _ => {
            let listed = crate::render::json_values(diagnostics, sources);
            let first = diagnostics
                .iter()
                .find(|d| d.is_error())
                .map_or("the body holds no plan".to_owned(), |d| d.message.clone());
            Err(
                invalid(format!("the plan has errors; no plan created: {first}"))
                    .with(json!({"diagnostics": listed})),
            )
        }
    }
}

/// A diagnostic worded for a request: the checker names the CLI's
/// `--set NAME=VALUE` and `--root DIR`, which HTTP has not.
fn http_wording(mut d: Diagnostic) -> Diagnostic {
    match d.code {
        Code::MissingParam | Code::UnknownParam | Code::ParamType => {
            d.message = d.message.replace("`--set ", "`set=");
            d.help = d.help.map(|help| {
                help.replace("give it with `--set ", "give it in the request: `?set=")
                    .replace("=VALUE`,", "=VALUE` or the JSON request's `\"set\"`,")
            });
        }
        Code::Import
            if d.labels
                .first()
                .is_some_and(|l| l.message == "outside the project root") =>
        {
            d.help = Some(
                "an import names a file sent with the plan (the JSON request's `files`), by a path relative to the importing file that stays in the plan's directory".to_owned(),
            );
        }
        _ => {}
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_query_takes_every_set_in_order() {
        let query = CreateQuery::parse(Some("id=a&set=x=1&force=true&set=y=a%3Db")).unwrap();
        assert_eq!(query.id.as_deref(), Some("a"));
        assert!(query.force);
        assert_eq!(
            query.set,
            [
                ("x".to_owned(), "1".to_owned()),
                ("y".to_owned(), "a=b".to_owned())
            ]
        );
        assert!(CreateQuery::parse(Some("sett=x=1")).is_err());
        assert!(CreateQuery::parse(Some("set=novalue")).is_err());
    }

    #[test]
    fn sent_paths_stay_in_the_root() {
        assert_eq!(
            inside_root(Path::new("lib/./a.plan")),
            Some(PathBuf::from("lib/a.plan"))
        );
        assert_eq!(
            inside_root(Path::new("lib/../a.plan")),
            Some(PathBuf::from("a.plan"))
        );
        assert_eq!(inside_root(Path::new("../a.plan")), None);
        assert_eq!(inside_root(Path::new("/etc/a.plan")), None);
        assert_eq!(inside_root(Path::new("")), None);
    }
}
