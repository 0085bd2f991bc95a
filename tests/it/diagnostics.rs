//! Every diagnostic code has a failing example in `examples/errors/`; these
//! tests pin the full rendered text (human and JSON) of each.

use crate::support::{self, files, Test};

/// The arguments a failing example asks for on its first line
/// (`# args: build`), or `check`.
fn command_for(path: &str) -> Vec<String> {
    let text = std::fs::read_to_string(support::root().join(path)).unwrap_or_default();
    let mut args: Vec<String> = match text.lines().next().and_then(|l| l.strip_prefix("# args:")) {
        Some(args) => args.split_whitespace().map(str::to_owned).collect(),
        None => vec!["check".to_owned()],
    };
    args.push(path.to_owned());
    args
}

fn stem(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.split('.').next().unwrap_or(name)
}

#[test]
fn every_code_has_a_failing_example() {
    let examples = files("examples/errors", &["plan", "json"]);
    for code in planc::diagnostic::Code::ALL {
        let name = code.as_str().trim_start_matches("planc::");
        let found = examples.iter().any(|e| stem(e) == name);
        assert!(found, "no example in examples/errors for {code}");
    }
}

#[test]
fn failing_examples_render_their_code() {
    for path in files("examples/errors", &["plan", "json"]) {
        let args = command_for(&path);
        let human = Test::new(&args).run();
        let mut json_args = args.clone();
        json_args.insert(1, "--format=json".to_owned());
        if json_args[0] == "build" {
            // build prints diagnostics for people only; check them as JSON.
            json_args[0] = "check".to_owned();
        }
        let json = Test::new(&json_args).run();

        let code = format!("planc::{}", stem(&path));
        // `check` reports on standard output, `build` on standard error; a
        // file that cannot be read is reported on standard error.
        let report = human.stderr.clone() + &human.stdout;
        assert!(
            report.contains(&code),
            "{path}: expected {code} in\n{report}"
        );
        let warning_only = matches!(
            stem(&path),
            "redundant_dependency" | "unused" | "empty" | "unknown_field"
        );
        // A file that cannot be read is exit code 2, like bad usage.
        let expected = match stem(&path) {
            "read" => 2,
            _ if warning_only => 0,
            _ => 1,
        };
        assert_eq!(human.code, expected, "{path}: exit code");
        if warning_only {
            let denied = Test::new(["check", "--deny", "warnings", &path]).run();
            assert_eq!(denied.code, 1, "{path}: --deny warnings fails");
        }

        let name = path.replace('/', "__");
        insta::assert_snapshot!(format!("{name}.human"), report);
        if !(args[0] == "build" && stem(&path) == "missing_param") {
            insta::assert_snapshot!(format!("{name}.json"), json.stdout);
        }
    }
}

#[test]
fn every_code_is_documented() {
    // The codes come from the code (`Code::ALL`), not from a list here: a new
    // code without a section, a list of what it covers and an example fails.
    let docs = std::fs::read_to_string(support::root().join("docs/diagnostics.md")).expect("docs");
    for code in planc::diagnostic::Code::ALL {
        let heading = format!("\n## {}\n", code.as_str());
        let start = docs
            .find(&heading)
            .unwrap_or_else(|| panic!("docs/diagnostics.md has no section {heading:?}"));
        let rest = &docs[start + heading.len()..];
        let section = &rest[..rest.find("\n## ").unwrap_or(rest.len())];
        assert!(
            section.contains("\nIt covers:\n\n- "),
            "{code}: its section does not list what it covers"
        );
        assert!(
            section.contains("\n```"),
            "{code}: its section has no example"
        );
    }
}
