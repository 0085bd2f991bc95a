//! Input that is not a plan at all gets a clear error, never a panic, a hang
//! or a flood of output.

use crate::support::{temp_dir, Test};

fn write(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).expect("write");
    path.to_str().expect("utf-8 path").to_owned()
}

#[test]
fn empty_file_checks_as_an_empty_library_and_does_not_build() {
    let dir = temp_dir("empty");
    let path = write(&dir, "empty.plan", b"");
    let output = Test::new(["check", &path]).expect_code(0);
    assert!(output.stdout.ends_with(": ok\n"), "{}", output.stdout);
    let output = Test::new(["build", &path]).expect_code(1);
    assert!(
        output.stderr.contains("planc::no_plan"),
        "{}",
        output.stderr
    );
}

#[test]
fn invalid_utf8_is_reported_with_its_byte() {
    let dir = temp_dir("utf8");
    let path = write(&dir, "bad.plan", b"plan p {\n  goal \"caf\xe9\"\n}\n");
    let output = Test::new(["check", &path]).expect_code(1);
    assert!(output.stdout.contains("planc::syntax"), "{}", output.stdout);
    assert!(
        output
            .stdout
            .contains("the file is not valid UTF-8 (byte 20)"),
        "{}",
        output.stdout
    );
}

#[test]
fn binary_data_gets_syntax_errors() {
    let dir = temp_dir("binary");
    let bytes: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8 & 0x7f)
        .collect();
    let path = write(&dir, "binary.plan", &bytes);
    let output = Test::new(["check", &path]).expect_code(1);
    assert!(output.stdout.contains("planc::syntax"), "{}", output.stdout);
}

#[test]
fn a_ten_megabyte_line_is_reported_without_printing_it() {
    // Explained up to `MAX_EXPLAINED_BYTES` (4 MiB) after the mistake; past
    // that the mistake is one `planc::limit` error at its item. Neither
    // prints the line.
    for (megabytes, expected) in [
        (3, "unknown item `xxx"),
        (10, "a mistake with 10485763 bytes after it"),
    ] {
        let dir = temp_dir("long");
        let mut text = b"plan p {\n  goal \"g\"\n  task a \"A\"\n  ".to_vec();
        text.extend(std::iter::repeat_n(b'x', megabytes << 20));
        text.extend(b"\n}\n");
        let path = write(&dir, "long.plan", &text);
        let output = Test::new(["check", &path]).expect_code(1);
        assert!(
            output.stdout.contains(expected),
            "{}",
            &output.stdout[..output.stdout.len().min(500)]
        );
        assert!(
            output.stdout.len() < 20_000,
            "output is {} bytes",
            output.stdout.len()
        );
    }
}

#[test]
fn deep_nesting_hits_the_limit() {
    let dir = temp_dir("deep");
    let text = format!(
        "plan p {{ goal \"g\" {}{} }}",
        "{".repeat(100_000),
        "}".repeat(100_000)
    );
    let path = write(&dir, "deep.plan", text.as_bytes());
    let output = Test::new(["check", &path]).expect_code(1);
    assert!(output.stdout.contains("planc::limit"), "{}", output.stdout);
    assert!(
        output.stdout.contains("braces nest deeper than 64 levels"),
        "{}",
        output.stdout
    );
}

#[test]
fn malformed_json_points_at_the_problem() {
    let dir = temp_dir("json");
    let path = write(&dir, "plan.json", b"{\n  \"tasks\": [1,\n}");
    let output = Test::new(["check", &path]).expect_code(1);
    assert!(output.stdout.contains("invalid JSON"), "{}", output.stdout);
    assert!(output.stdout.contains("plan.json:3:1"), "{}", output.stdout);
}

#[test]
fn deeply_nested_json_hits_the_limit() {
    let dir = temp_dir("deep-json");
    let text = format!("{}{}", "[".repeat(200_000), "]".repeat(200_000));
    let path = write(&dir, "deep.json", text.as_bytes());
    let output = Test::new(["check", &path]).expect_code(1);
    assert!(
        output
            .stdout
            .contains("arrays and objects nest deeper than 64 levels"),
        "{}",
        output.stdout
    );
}

#[test]
fn a_string_over_a_mebibyte_hits_the_limit() {
    let dir = temp_dir("long-string");
    let text = format!("plan p {{ goal \"{}\" task a \"A\" }}", "x".repeat(2 << 20));
    let path = write(&dir, "long.plan", text.as_bytes());
    let output = Test::new(["check", &path]).expect_code(1);
    assert!(output.stdout.contains("planc::limit"), "{}", output.stdout);
    assert!(
        output
            .stdout
            .contains("a string may be at most 1048576 bytes"),
        "{}",
        output.stdout
    );
}

#[test]
fn templates_nested_too_deep_hit_the_limit() {
    // One `use` a level: deep, but small (two a level would hit the
    // expansion limit first).
    let mut text = String::from("template t0() { task a \"A\" }\n");
    for i in 1..24 {
        text.push_str(&format!("template t{i}() {{ use t{}() as x }}\n", i - 1));
    }
    text.push_str("plan p { goal \"g\" use t23() as top }\n");
    let output = Test::new(["check", "-"]).stdin(text).expect_code(1);
    assert!(
        output
            .stdout
            .contains("templates nest deeper than 16 levels"),
        "{}",
        output.stdout
    );
}

#[test]
fn an_unclosed_string_of_braces_is_one_error_read_in_linear_time() {
    // Each `{` once began a bad block that read on to the end of the file.
    let dir = temp_dir("string-braces");
    let text = format!("plan p {{\n  goal \"{}\n}}\n", "{".repeat(20_000));
    let path = write(&dir, "braces.plan", text.as_bytes());
    let started = std::time::Instant::now();
    let output = Test::new(["check", &path]).expect_code(1);
    // A hang guard, not a benchmark: this took minutes in a debug build.
    assert!(started.elapsed().as_secs() < 60, "{:?}", started.elapsed());
    assert!(
        output
            .stdout
            .contains("× this string is not closed on its line"),
        "{}",
        output.stdout
    );
    assert_eq!(
        output.stdout.matches("planc::").count(),
        1,
        "{}",
        output.stdout
    );
}

#[test]
fn megabytes_of_bare_words_are_one_error() {
    let dir = temp_dir("words");
    let mut text = String::from("plan p {\n  goal \"g\"\n  ");
    // 3.5 MB: explained (up to 4 MiB after a mistake are).
    text.push_str(&"word ".repeat(700_000));
    text.push_str("\n}\n");
    let path = write(&dir, "words.plan", text.as_bytes());
    let output = Test::new(["check", &path]).expect_code(1);
    assert!(
        output.stdout.contains("× unknown item `word` in a plan"),
        "{}",
        output.stdout
    );
    assert_eq!(
        output.stdout.matches("planc::").count(),
        1,
        "{}",
        output.stdout
    );
}

#[test]
fn syntax_errors_past_a_hundred_are_counted_not_shown() {
    let dir = temp_dir("many-errors");
    let text = format!("plan p {{\n  goal \"g\"\n{}}}\n", "  task\n".repeat(1000));
    let path = write(&dir, "many.plan", text.as_bytes());
    let output = Test::new(["check", &path]).expect_code(1);
    assert_eq!(
        output.stdout.matches("planc::syntax").count(),
        100,
        "{}",
        output.stdout
    );
    assert!(
        output
            .stdout
            .contains("× 900 more syntax errors not shown; planc reports at most 100 per file"),
        "{}",
        output.stdout
    );
    assert!(
        output.stdout.contains("many.plan:103:3"),
        "{}",
        output.stdout
    );
}
