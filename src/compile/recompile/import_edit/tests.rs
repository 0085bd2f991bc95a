//! An import's path edited, recompiled, against a fresh compile of the
//! same text (imports read from memory); and that the random edits do
//! take the import's path (counted).

use std::cell::Cell;
use std::sync::Arc;

use proptest::prop_assert_eq;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

use crate::compile::recompile::tests::{same_as, SNIPPETS};
use crate::compile::{compile_with, Compilation};
use crate::diagnostic::Code;
use crate::generate::edits::Splice;
use crate::modules::{ImportError, Loader};

thread_local! {
    /// How many recompiles took the import's path on this thread.
    pub(super) static IMPORT_EDITS: Cell<usize> = const { Cell::new(0) };
}

fn import_edits() -> usize {
    IMPORT_EDITS.with(Cell::get)
}

const NAME: &str = "/nonexistent/planc-tests/imports.plan";

/// `lib.plan` holds the benchmark's role, `libx.plan` another one too;
/// nothing else is there.
struct Libraries;

impl Loader for Libraries {
    fn load(&self, located: &std::path::Path) -> Result<String, ImportError> {
        let name = located.file_name().and_then(|n| n.to_str()).unwrap_or("");
        match name {
            "lib.plan" => Ok(crate::generate::REUSE_LIBRARY.to_owned()),
            "libx.plan" => Ok("role reviewer\nrole extra \"Extra\"\n".to_owned()),
            "ib.plan" => Ok("role dev\n".to_owned()),
            _ => Err(ImportError::Read(crate::read::ReadError::Io(
                std::io::ErrorKind::NotFound.into(),
            ))),
        }
    }
}

fn compile(text: &str) -> Compilation {
    compile_with(NAME, text, &Default::default(), &Libraries)
}

/// The files a compilation read: each module's id, path and text.
fn files(compilation: &Compilation) -> Vec<(crate::span::FileId, std::path::PathBuf, Arc<str>)> {
    let modules = compilation.modules.iter();
    modules
        .map(|m| {
            (
                m.file,
                m.path.clone(),
                Arc::clone(&compilation.sources.get(m.file).text),
            )
        })
        .collect()
}

/// Asserts that `incremental` is what a fresh compile of `text` gives
/// (the shared comparison, and the files read).
fn same_as_fresh(incremental: &Compilation, text: &str) -> Result<(), TestCaseError> {
    let fresh = compile(text);
    same_as(incremental, &fresh, text)?;
    prop_assert_eq!(
        files(incremental),
        files(&fresh),
        "files read for\n{}",
        text
    );
    Ok(())
}

/// A template whose tasks are assigned the imported role, used twice,
/// and tasks of the plan's own.
const IMPORTS: &str = "import \"lib.plan\"

template review(change: string) {
    step review \"Review {change}\" {
        task open_pr \"Open {change}\" { assignee reviewer }
        task approve \"Approve {change}\" { after open_pr assignee reviewer }
        task merge \"Merge {change}\" { assignee dev }
    }
}

plan p {
    goal \"Ship\"
    role dev
    task first \"First\" { assignee dev }
    use review(change = \"one\") as a { after first }
    task middle \"Middle\" { after a assignee dev }
    use review(change = \"two\") as b
    task last \"Last\" { after b.merge }
}
";

/// A letter typed in the imported file's name, then taken back: the
/// import fails, the template's `assignee`s name no role, and do again.
#[test]
fn a_letter_in_an_imported_name_checks_only_what_names_its_roles() {
    let old = compile(IMPORTS);
    let at = IMPORTS.find("\"lib").expect("the import") + "\"lib".len();
    let new = format!("{}y{}", &IMPORTS[..at], &IMPORTS[at..]);
    let before = import_edits();
    let typed = old.recompile_with(Arc::from(new.as_str()), &Libraries);
    same_as_fresh(&typed, &new).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(import_edits(), before + 1, "took the import's path");
    let codes: Vec<Code> = typed.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(
        codes,
        [Code::Import, Code::UnknownRole, Code::UnknownRole],
        "{:#?}",
        typed.diagnostics
    );
    let back = typed.recompile_with(Arc::from(IMPORTS), &Libraries);
    same_as_fresh(&back, IMPORTS).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(import_edits(), before + 2);
    assert_eq!(back.checked.symbols, old.checked.symbols);
}

/// Where a letter of the import's path stands.
fn path_places(text: &str) -> Vec<usize> {
    let Some(start) = text.find("import \"").map(|s| s + "import \"".len()) else {
        return Vec::new();
    };
    let end = text[start..].find('"').map_or(start, |e| start + e);
    (start..end).collect()
}

/// Random edits (names, references, syntax errors), then letters typed
/// into and deleted from the import's path (libraries that load, with one
/// role or two, and names that do not), each recompile against a fresh
/// compile; many take the import's path.
#[test]
fn an_import_edited_recompiled_equals_a_fresh_compile() {
    let mut runner = TestRunner::new(Config {
        cases: crate::generate::fuzz_cases(32),
        failure_persistence: None,
        ..Config::default()
    });
    let edits = proptest::collection::vec((0.0..1.0f64, 0..16usize, 0..SNIPPETS.len() + 1), 0..2);
    let keys = proptest::collection::vec((0.0..1.0f64, 0..3u8), 1..10);
    let (before, tried) = (import_edits(), Cell::new(0));
    let outcome = runner.run(&(edits, keys), |(edits, keys)| {
        let mut text = IMPORTS.to_owned();
        for (at, len, snippet) in edits {
            let at = (at * text.len() as f64) as usize;
            text = Splice::pick(&text, at, len, SNIPPETS, snippet).apply(&text);
        }
        let mut compilation = compile(&text);
        for (pick, key) in keys {
            let places = path_places(&text);
            let Some(&at) = places.get((pick * places.len() as f64) as usize) else {
                break;
            };
            text = match key {
                0 if text.is_char_boundary(at + 1) => format!("{}{}", &text[..at], &text[at + 1..]),
                1 => format!("{}l{}", &text[..at], &text[at..]),
                _ => format!("{}x{}", &text[..at], &text[at..]),
            };
            let syntax = compilation
                .diagnostics
                .iter()
                .any(|d| d.code == Code::Syntax);
            tried.set(tried.get() + usize::from(!syntax));
            compilation = compilation.recompile_with(Arc::from(text.as_str()), &Libraries);
            same_as_fresh(&compilation, &text)?;
        }
        Ok(())
    });
    if let Err(error) = outcome {
        panic!("{error}");
    }
    let taken = import_edits() - before;
    assert!(
        taken * 2 >= tried.get(),
        "{taken} of {} edits without syntax errors took the import's path",
        tried.get()
    );
}

/// The benchmark's keystroke: a letter in the imported file's name in
/// `plan_source_with_reuse`, typed and taken back.
#[test]
fn the_benchmarks_import_letter_is_checked_from_the_last_check() {
    let text = crate::generate::plan_source_with_reuse(2_000);
    let old = compile(&text);
    assert_eq!(old.diagnostics, Vec::new());
    let after = "import \"lib";
    let at = text.find(after).expect("the import") + after.len();
    let new = format!("{}x{}", &text[..at], &text[at..]);
    let new = new.replace("libx", "liby");
    let before = import_edits();
    let typed = old.recompile_with(Arc::from(new.as_str()), &Libraries);
    same_as_fresh(&typed, &new).unwrap_or_else(|e| panic!("{e}"));
    let back = typed.recompile_with(Arc::from(text.as_str()), &Libraries);
    same_as_fresh(&back, &text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(import_edits(), before + 2);
    // Each keystroke copies only the chunks of the references its uses'
    // runs stand in (two uses) and of the definitions the roles stand in;
    // the others are shared, what they name renumbered as read.
    for (was, is) in [(&old, &typed), (&typed, &back)] {
        let (was, is) = (&was.checked.symbols, &is.checked.symbols);
        let copied = is.references.chunks() - is.references.chunks_shared_with(&was.references);
        assert!(
            copied <= 4,
            "{copied} of {} chunks copied",
            is.references.chunks()
        );
        let copied = is.definitions.chunks() - is.definitions.chunks_shared_with(&was.definitions);
        assert!(
            copied <= 2,
            "{copied} of {} chunks copied",
            is.definitions.chunks()
        );
    }
}
