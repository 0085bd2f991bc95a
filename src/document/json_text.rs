//! The JSON text planc writes: pretty, two-space indented, with arrays of
//! scalars kept on one line (`"dependencies": [1, 2]`), so a 100,000-task
//! plan stays readable and diffable.

use std::fmt::Write;

use serde_json::Value;

/// `value` as planc's JSON text, with a final newline.
pub fn to_text(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value, 0);
    out.push('\n');
    out
}

fn is_scalar(value: &Value) -> bool {
    !matches!(value, Value::Array(_) | Value::Object(_))
}

fn indent(out: &mut String, level: usize) {
    for _ in 0..level {
        out.push_str("  ");
    }
}

fn write_value(out: &mut String, value: &Value, level: usize) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            let _ = write!(out, "{n}");
        }
        Value::String(s) => write_string(out, s),
        Value::Array(items) if items.is_empty() => out.push_str("[]"),
        Value::Array(items) if items.iter().all(is_scalar) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(out, item, level);
            }
            out.push(']');
        }
        Value::Array(items) => {
            out.push_str("[\n");
            for (i, item) in items.iter().enumerate() {
                indent(out, level + 1);
                write_value(out, item, level + 1);
                if i + 1 < items.len() {
                    out.push(',');
                }
                out.push('\n');
            }
            indent(out, level);
            out.push(']');
        }
        Value::Object(map) if map.is_empty() => out.push_str("{}"),
        Value::Object(map) => {
            out.push_str("{\n");
            for (i, (key, item)) in map.iter().enumerate() {
                indent(out, level + 1);
                write_string(out, key);
                out.push_str(": ");
                write_value(out, item, level + 1);
                if i + 1 < map.len() {
                    out.push(',');
                }
                out.push('\n');
            }
            indent(out, level);
            out.push('}');
        }
    }
}

fn write_string(out: &mut String, s: &str) {
    // serde_json's escaping: the exact JSON string syntax, UTF-8 kept as is.
    out.push_str(&serde_json::to_string(s).expect("strings serialise"));
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn scalar_arrays_stay_inline() {
        let text = super::to_text(&json!({"a": [1, 2], "b": [], "c": [{"d": "é\n"}], "e": {}}));
        assert_eq!(
            text,
            "{\n  \"a\": [1, 2],\n  \"b\": [],\n  \"c\": [\n    {\n      \"d\": \"é\\n\"\n    }\n  ],\n  \"e\": {}\n}\n"
        );
    }
}
