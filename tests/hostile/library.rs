//! One hostile case through the library, in a child process (this test
//! binary run again): every stage a file goes through, with the human
//! renderings printed so the parent judges them like the CLI's output.

use std::io::Write;

use planc::check::Options;
use planc::diagram::GraphFormat;
use planc::emit::Target;
use planc::span::{FileId, SourceMap};

use crate::run::{DECOY, SECRET};

/// Runs the case `spec` (`plan:PATH`, `json:PATH` or `state:PATH`).
pub fn exercise(spec: &str) {
    let (kind, path) = spec.split_once(':').expect("a spec is KIND:PATH");
    match kind {
        "plan" => {
            let bytes = std::fs::read(path).expect("the case file");
            match planc::decode(path, bytes) {
                Ok(text) => plan(path, &text),
                Err(error) => {
                    let (sources, diagnostic) = *error;
                    show(&planc::render::human(&[diagnostic], &sources, false));
                }
            }
        }
        "json" => {
            let bytes = std::fs::read(path).expect("the case file");
            let text = String::from_utf8_lossy(&bytes);
            let (document, diagnostics) = planc::document::load_json(&text, FileId(0), "case");
            let mut sources = SourceMap::new();
            sources.add(path, &*text);
            show(&planc::render::human(&diagnostics, &sources, false));
            if let Some(document) = document {
                for (_, target) in Target::ALL {
                    data(&planc::emit::render(&document, target));
                }
            }
        }
        "state" => match planc::runner::Store::new(path).runner() {
            Ok(runner) => show(&planc::runner::prompt(&runner)),
            Err(error) => show(&error.to_string()),
        },
        _ => panic!("unknown case kind {kind}"),
    }
}

/// A `.plan` file: checked as `planc check` and compiled as `planc build`
/// (imports read from the file system), every target built, drawn,
/// formatted.
fn plan(path: &str, text: &str) {
    for skip_plan in [true, false] {
        let options = Options {
            skip_references: true,
            skip_plan,
            ..Options::default()
        };
        let compiled = planc::compile(path, text, &options);
        show(&planc::render::human(
            &compiled.diagnostics,
            &compiled.sources,
            false,
        ));
        let json = planc::render::json(&compiled.diagnostics, &compiled.sources);
        assert!(
            matches!(serde_json::from_str(&json), Ok(serde_json::Value::Array(_))),
            "hostile check: render::json gave no JSON array"
        );
        data(&json);
        data(&planc::render::github(
            &compiled.diagnostics,
            &compiled.sources,
        ));
        if let Some(document) = compiled.document() {
            for (_, target) in Target::ALL {
                data(&planc::emit::render(&document, target));
            }
            for format in [GraphFormat::Mermaid, GraphFormat::Dot] {
                data(&planc::diagram::render(&document, format));
            }
        }
    }
    if let Err(diagnostics) = planc::fmt::format(text) {
        let mut sources = SourceMap::new();
        sources.add(path, text);
        show(&planc::render::human(&diagnostics, &sources, false));
    }
}

/// Text for people: printed for the parent to judge.
fn show(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.write_all(b"\n");
}

/// Machine output: only the secret is looked for (its controls are
/// escaped by its own format, or are the file's).
fn data(text: &str) {
    assert!(
        !text.contains(SECRET),
        "hostile check: the content of a file outside the project reached the output"
    );
    assert!(
        !text.contains(DECOY),
        "hostile check: a decoy reached the output: planc read another file than the one named"
    );
}
