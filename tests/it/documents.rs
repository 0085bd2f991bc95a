//! `planc check` of a `planc/1` document rejects exactly what the shipped
//! JSON Schema rejects, plus the mistakes of meaning only planc sees.
//!
//! `tests/documents/` holds the corpus (see its README):
//! - `valid/`: both accept;
//! - `shape/CODE-what.json`: the schema rejects it, and so does planc, with
//!   an error `planc::CODE`;
//! - `meaning/CODE-what.json`: the schema accepts it; planc rejects it with
//!   an error `planc::CODE` (unknown references, cycles, duplicates).
//!
//! Each document is checked by the library and by the `planc check` binary.

use crate::support::{files, root, Test};
use planc::diagnostic::Diagnostic;
use planc::span::SourceMap;

/// The schema's errors for `text` (`None`: the text is not JSON).
fn schema_errors(text: &str) -> Option<Vec<String>> {
    let schema: serde_json::Value =
        serde_json::from_str(planc::document::SCHEMA).expect("the schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("the schema is a schema");
    let document: serde_json::Value = serde_json::from_str(text).ok()?;
    Some(
        validator
            .iter_errors(&document)
            .map(|e| format!("{e} (at {})", e.instance_path))
            .collect(),
    )
}

/// planc's error codes for `text`, from the library.
fn planc_errors(name: &str, text: &str) -> Vec<String> {
    let mut sources = SourceMap::new();
    let file = sources.add(name, text);
    planc::document::validate_json(text, file)
        .iter()
        .filter(|d| d.is_error())
        .map(|d: &Diagnostic| d.code.to_string())
        .collect()
}

/// The code a corpus file names: `shape/invalid_status-blocked.json` → `planc::invalid_status`.
fn expected_code(path: &str) -> String {
    let stem = path.rsplit('/').next().unwrap_or(path);
    let code = stem.split('-').next().unwrap_or(stem);
    format!("planc::{code}")
}

fn corpus(kind: &str) -> Vec<(String, String)> {
    let paths = files(&format!("tests/documents/{kind}"), &["json"]);
    assert!(paths.len() >= 10, "{kind}: only {} documents", paths.len());
    paths
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(root().join(&path)).expect("read");
            (path, text)
        })
        .collect()
}

/// `planc check PATH`: the exit code and what it printed.
fn cli_check(path: &str) -> (i32, String) {
    let output = Test::new(["check", path, "--color", "never"]).run();
    (output.code, output.stdout)
}

/// Every document of `kind` through `check`, which returns what is wrong
/// with it; all of them are reported together.
fn each(kind: &str, check: impl Fn(&str, &str) -> Result<(), String>) {
    let problems: Vec<String> = corpus(kind)
        .iter()
        .filter_map(|(path, text)| check(path, text).err())
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn valid_documents_pass_the_schema_and_planc() {
    each("valid", |path, text| {
        let schema = schema_errors(text).ok_or(format!("{path}: not JSON"))?;
        if !schema.is_empty() {
            return Err(format!("{path}: the schema rejects it: {schema:?}"));
        }
        let errors = planc_errors(path, text);
        if !errors.is_empty() {
            return Err(format!("{path}: planc rejects it: {errors:?}"));
        }
        match cli_check(path) {
            (0, _) => Ok(()),
            (code, stderr) => Err(format!("{path}: planc check exits {code}: {stderr}")),
        }
    });
}

#[test]
fn shape_errors_fail_the_schema_and_planc_with_the_documented_code() {
    each("shape", |path, text| {
        let expected = expected_code(path);
        match schema_errors(text) {
            Some(schema) if schema.is_empty() => {
                return Err(format!("{path}: the schema accepts it"))
            }
            Some(_) => {}
            // Not JSON at all: no validator reads it.
            None if expected == "planc::syntax" => {}
            None => return Err(format!("{path}: not JSON")),
        }
        rejected(path, text, &expected)
    });
}

#[test]
fn meaning_errors_pass_the_schema_and_fail_planc() {
    each("meaning", |path, text| {
        let schema = schema_errors(text).ok_or(format!("{path}: not JSON"))?;
        if !schema.is_empty() {
            return Err(format!("{path}: the schema rejects it: {schema:?}"));
        }
        rejected(path, text, &expected_code(path))
    });
}

/// planc (library and binary) rejects the document with an error `expected`.
fn rejected(path: &str, text: &str, expected: &str) -> Result<(), String> {
    let errors = planc_errors(path, text);
    if !errors.iter().any(|e| e == expected) {
        return Err(format!(
            "{path}: planc's errors are {errors:?}, not {expected}"
        ));
    }
    match cli_check(path) {
        (1, stderr) if stderr.contains(expected) => Ok(()),
        (code, stderr) => Err(format!("{path}: planc check exits {code}: {stderr}")),
    }
}

#[test]
fn a_missing_field_is_named_where_the_object_starts() {
    let (code, stdout) =
        cli_check("tests/documents/shape/invalid_document-missing_task_status.json");
    assert_eq!(code, 1);
    assert!(
        stdout.contains("planc::invalid_document") && stdout.contains("× a task has no `status`"),
        "{stdout}"
    );
    let (_, stdout) = cli_check("tests/documents/shape/invalid_document-meta_extra_field.json");
    assert!(
        stdout.contains("`meta` has no field `author` in `planc/1`"),
        "{stdout}"
    );
}
