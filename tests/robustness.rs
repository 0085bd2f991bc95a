//! Fuzzing on stable Rust with proptest: raw bytes, grammar-aware token soup,
//! mutated examples and JSON documents go through every stage; nothing may
//! panic. Quick in CI; `PLANC_FUZZ_CASES=100000 cargo test --test robustness`
//! for a long run.

// Tests may unwrap, print what they measure and hold long scenarios.
#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::too_many_lines
)]

mod support;

use planc::check::Options;
use planc::emit::Target;
use planc::span::FileId;
use proptest::prelude::*;

use planc::generate::fuzz_cases as cases;

/// Every stage a `.plan` text goes through: compile, build every target,
/// format (idempotent when it succeeds), draw.
fn exercise_plan(text: &str) -> Result<(), TestCaseError> {
    for require_params in [false, true] {
        let options = Options {
            params: vec![("x".to_owned(), "1".to_owned())],
            require_params,
            skip_references: require_params,
            skip_plan: false,
        };
        let compiled = planc::compile("fuzz.plan", text, &options);
        // `planc check` keeps no plan, and must find the same.
        let options = Options {
            skip_plan: true,
            ..options
        };
        let checked = planc::compile("fuzz.plan", text, &options);
        prop_assert_eq!(&checked.diagnostics, &compiled.diagnostics);
        prop_assert_eq!(
            checked.checked.task_count,
            compiled.checked.plan.as_ref().map(|p| p.tasks.len())
        );
        let _ = planc::render::human(&compiled.diagnostics, &compiled.sources, false);
        let _ = planc::render::json(&compiled.diagnostics, &compiled.sources);
        let _ = planc::render::github(&compiled.diagnostics, &compiled.sources);
        if let Some(document) = compiled.document() {
            for (_, target) in Target::ALL {
                let _ = planc::emit::render(&document, target);
            }
            let _ = planc::diagram::render(&document, planc::diagram::GraphFormat::Mermaid);
        }
    }
    if let Ok(once) = planc::fmt::format(text) {
        let twice = planc::fmt::format(&once).map_err(|d| {
            TestCaseError::fail(format!("formatted text does not parse: {d:?}\n{once}"))
        })?;
        prop_assert_eq!(once, twice);
    }
    Ok(())
}

/// Every stage a JSON document goes through: check, then build every target.
fn exercise_json(text: &str) {
    let (document, diagnostics) = planc::document::load_json(text, FileId(0), "fuzz");
    let mut sources = planc::span::SourceMap::new();
    sources.add("fuzz.json", text);
    let _ = planc::render::human(&diagnostics, &sources, false);
    if let Some(document) = document {
        for (_, target) in Target::ALL {
            let _ = planc::emit::render(&document, target);
        }
    }
}

/// Tokens of the language, so random sequences are often nearly plans.
fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(
            planc::syntax::keywords::KEYWORDS
                .iter()
                .map(|k| k.word)
                .chain(["string", "int", "bool", "float", "true"])
                .collect::<Vec<_>>()
        )
        .prop_map(str::to_owned),
        "[a-z打开][a-z0-9_.]{0,6}",
        prop::sample::select(vec![
            "{", "}", "{", "}", "(", ")", ",", ":", "=", "\n", "# c\n", "-1", "2", "3.5"
        ])
        .prop_map(str::to_owned),
        "\"[a-z {}x\\\\]{0,8}\"",
        Just("\"\"\"\n  a {x}\n    b\n\"\"\"".to_owned()),
        Just("\"{x}\"".to_owned()),
        Just("\"{{}}\"".to_owned()),
    ]
}

fn example_texts() -> Vec<String> {
    support::files("examples", &["plan"])
        .into_iter()
        .map(|p| std::fs::read_to_string(support::root().join(p)).unwrap_or_default())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(256)))]

    #[test]
    fn raw_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        match planc::decode("fuzz.plan", bytes.clone()) {
            Ok(text) => exercise_plan(&text)?,
            Err(error) => {
                let (sources, diagnostic) = *error;
                let _ = planc::render::human(&[diagnostic], &sources, false);
            }
        }
        if let Ok(text) = String::from_utf8(bytes) {
            exercise_json(&text);
        }
    }

    #[test]
    fn token_soup_never_panics(tokens in prop::collection::vec(token(), 0..80), seps in prop::collection::vec(prop::sample::select(vec![" ", "\n", "", "  "]), 80)) {
        let mut text = String::new();
        for (token, sep) in tokens.iter().zip(seps.iter().cycle()) {
            text.push_str(token);
            text.push_str(sep);
        }
        exercise_plan(&text)?;
        let wrapped = format!("plan p {{ goal \"g\" {text} }}");
        exercise_plan(&wrapped)?;
    }

    #[test]
    fn mutated_examples_never_panic(example in 0usize..64, edits in prop::collection::vec((any::<prop::sample::Index>(), 0u8..3, token()), 1..6)) {
        let texts = example_texts();
        let mut text = texts[example % texts.len()].clone();
        for (at, kind, token) in edits {
            let mut offset = at.index(text.len() + 1);
            while !text.is_char_boundary(offset) {
                offset -= 1;
            }
            match kind {
                0 => text.insert_str(offset, &token),
                1 => {
                    let mut end = (offset + token.len()).min(text.len());
                    while !text.is_char_boundary(end) {
                        end -= 1;
                    }
                    text.replace_range(offset..end, "");
                }
                _ => text.truncate(offset),
            }
        }
        exercise_plan(&text)?;
    }

    #[test]
    fn json_documents_never_panic(value in json_value(), edits in prop::collection::vec((any::<prop::sample::Index>(), prop::sample::select(vec!["{", "}", "[", "]", "\"", ",", ":", "1", "null", "\"status\": \"x\""])), 0..4)) {
        // A real document with random values grafted in, then broken a little.
        let built = planc::compile("j.plan", "plan j { goal \"g\" task a \"A\" task b \"B\" { after a } }", &Options::default())
            .document()
            .map(|d| d.to_json())
            .unwrap_or_default();
        let mut document: serde_json::Value = serde_json::from_str(&built).unwrap_or_default();
        document["tasks"][1]["dependencies"] = value.clone();
        document["state"]["status"] = value.clone();
        let mut text = document.to_string();
        exercise_json(&text);
        exercise_json(&value.to_string());
        for (at, edit) in edits {
            let offset = at.index(text.len() + 1);
            if text.is_char_boundary(offset) {
                text.insert_str(offset, edit);
            }
        }
        exercise_json(&text);
    }
}

fn json_value() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::from),
        any::<i64>().prop_map(serde_json::Value::from),
        (0u32..5).prop_map(serde_json::Value::from),
        "[a-z_ ]{0,12}".prop_map(serde_json::Value::from),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::from),
            prop::collection::btree_map("[a-z_]{1,8}", inner, 0..6)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

/// The same text is explained the same way however many compilations run at
/// once: pest's error detail is one switch for the process, and an explaining
/// parse on one thread must not see another thread turn it off.
#[test]
fn syntax_errors_are_explained_alike_on_many_threads() {
    let text = "plan p {\n    goal \"g\"\n    task a \"A\"\n}\ntemplate \"t\" sequential2 \"s\"\n\
                param template task 1 \"x\" { after }\n";
    let options = Options::default();
    let alone = planc::compile("race.plan", text, &options).diagnostics;
    assert!(alone.len() >= 2, "{alone:?}");
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                for _ in 0..cases(150) {
                    let diagnostics = planc::compile("race.plan", text, &options).diagnostics;
                    assert_eq!(diagnostics, alone);
                }
            });
        }
    });
}
