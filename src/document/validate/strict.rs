//! The rules of a document that says `"format": "planc/1"`: exactly what the
//! shipped JSON Schema says (docs/json-format.md). Which fields an object
//! requires, and which objects are closed, is read from the schema generated
//! from the document types, so the checker and `planc schema` share one
//! source; the tests hold both to a corpus (`tests/documents`).
//!
//! A document without `format` is another shape (the PlanManager API's or the planManager's, a peer's):
//! read leniently, with defaults, and not held to the schema.

use std::collections::HashSet;
use std::sync::LazyLock;

use jsonc_parser::ast::{Object, Value};
use serde_json::Value as Json;

use super::{get, span, Validator};
use crate::diagnostic::{Code, Diagnostic};
use crate::span::Span;
use crate::suggest;

/// What the schema says of one kind of object.
pub(super) struct ObjectRule {
    /// The fields it must have, in schema order.
    pub required: Vec<String>,
    /// The fields it may have.
    pub known: Vec<String>,
    /// Whether other fields are refused (`additionalProperties: false`).
    pub closed: bool,
}

impl ObjectRule {
    fn from_schema(schema: &Json) -> ObjectRule {
        let names = |key: &str| -> Vec<String> {
            match &schema[key] {
                Json::Array(items) => items
                    .iter()
                    .filter_map(Json::as_str)
                    .map(str::to_owned)
                    .collect(),
                Json::Object(map) => map.keys().cloned().collect(),
                _ => Vec::new(),
            }
        };
        ObjectRule {
            required: names("required"),
            known: names("properties"),
            closed: schema["additionalProperties"] == Json::Bool(false),
        }
    }
}

/// The object rules of `planc/1`, from [`crate::document::schema`].
pub(super) struct Rules {
    pub root: ObjectRule,
    pub meta: ObjectRule,
    pub role: ObjectRule,
    pub step: ObjectRule,
    pub state: ObjectRule,
    pub task: ObjectRule,
    pub retry: ObjectRule,
    pub holder: ObjectRule,
}

/// The rules, read once from the generated schema.
pub(super) fn rules() -> &'static Rules {
    static RULES: LazyLock<Rules> = LazyLock::new(|| {
        let schema: Json = serde_json::from_str(&crate::document::schema()).unwrap_or_default();
        let def = |name: &str| ObjectRule::from_schema(&schema["$defs"][name]);
        Rules {
            root: ObjectRule::from_schema(&schema),
            meta: def("Meta"),
            role: def("RoleDoc"),
            step: def("StepDoc"),
            state: def("State"),
            task: def("TaskDoc"),
            retry: def("Retry"),
            holder: def("Holder"),
        }
    });
    &RULES
}

impl Validator {
    /// Holds `object` to `rule`: each required field present (but those in
    /// `reported_elsewhere`, which have their own diagnostic), and no
    /// unknown field in a closed object.
    pub(super) fn fields(
        &mut self,
        object: &Object<'_>,
        what: &str,
        rule: &ObjectRule,
        reported_elsewhere: &[&str],
    ) {
        // Fast path: planc writes the required fields first, in schema order.
        let in_order = object.properties.len() >= rule.required.len()
            && object
                .properties
                .iter()
                .zip(&rule.required)
                .all(|(p, r)| p.name.as_str() == r);
        let missing: Vec<String> = rule
            .required
            .iter()
            .filter(|_| !in_order)
            .filter(|f| get(object, f).is_none() && !reported_elsewhere.contains(&f.as_str()))
            .map(|f| format!("`{f}`"))
            .collect();
        if let [first, .., last] = missing.as_slice() {
            // One diagnostic for the object, however many fields it lacks.
            let at = span(object);
            let list = format!("{} and {last}", missing[..missing.len() - 1].join(", "));
            self.error(
                Code::InvalidDocument,
                Span::new(at.start(), at.start() + 1),
                &format!("{what} has no {list}"),
                &format!("{first} and the others are required in `planc/1`"),
            );
        } else if let [field] = missing.as_slice() {
            let at = span(object);
            self.error(
                Code::InvalidDocument,
                Span::new(at.start(), at.start() + 1),
                &format!("{what} has no {field}"),
                &format!("{field} is required here"),
            );
        }
        if !rule.closed {
            return;
        }
        for property in &object.properties {
            let name = property.name.as_str();
            if rule.known.iter().any(|k| k == name) {
                continue;
            }
            let known: Vec<&str> = rule.known.iter().map(String::as_str).collect();
            let label = match suggest::closest(name, known.iter().copied()) {
                Some(best) => format!("did you mean `{best}`?"),
                None => "unknown field".to_owned(),
            };
            self.diagnostics.push(
                Diagnostic::new(
                    Code::InvalidDocument,
                    format!("{what} has no field `{name}` in `planc/1`"),
                )
                .label(self.file, span(&property.name), label)
                .help(format!(
                    "{what} holds only {}",
                    known
                        .iter()
                        .map(|k| format!("`{k}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            );
        }
    }

    /// `meta`'s fields, each of its type (the lenient reading skips what it
    /// cannot use).
    pub(super) fn strict_meta(&mut self, meta: &Object<'_>) {
        // The goal has its own diagnostic (`planc::missing_goal`).
        self.fields(meta, "`meta`", &rules().meta, &["goal"]);
        self.not_empty(meta, "id", "`meta`");
        for (field, nullable) in [
            ("id", false),
            ("language", false),
            ("title", true),
            ("source", true),
            ("created_at", true),
            ("updated_at", true),
        ] {
            self.string_if_present(meta, field, "`meta`", nullable);
        }
        // Its type is checked by the lenient reading.
        if let Some(value @ Value::NumberLit(n)) = get(meta, "max_iterations") {
            if n.value == "0" {
                self.type_error(value, "`max_iterations`", "a whole number from 1");
            }
        }
        match get(meta, "params") {
            None => {}
            Some(Value::Object(params)) => {
                for param in &params.properties {
                    if let value @ (Value::Array(_) | Value::Object(_)) = &param.value {
                        self.type_error(
                            value,
                            &format!("parameter `{}`", param.name.as_str()),
                            "a string, number, boolean or null",
                        );
                    }
                }
            }
            Some(other) => self.type_error(other, "`params`", "an object"),
        }
    }

    /// What `planc/1` asks of a task beyond the lenient reading: its
    /// required fields, no shorthand (`"retry": N`, status `blocked`), no
    /// null where the type has none, dependencies without repeats, and a
    /// closed `retry` and `holder`.
    pub(super) fn strict_task(&mut self, task: &Object<'_>) {
        // A missing id or name is reported by the lenient reading.
        self.fields(task, "a task", &rules().task, &["id", "name"]);
        if let Some(Value::StringLit(s)) = get(task, "status") {
            if s.value == "blocked" {
                self.diagnostics.push(
                    Diagnostic::new(Code::InvalidStatus, "unknown task status `blocked`")
                        .label(self.file, span(&s.range), "not a `planc/1` status")
                        .help(
                            "`planc/1` works blocking out from the dependencies: write `pending` \
                             (the PlanManager API's `blocked` is read as `pending` in a document without `format`)",
                        ),
                );
            }
        }
        for (field, expected) in [
            ("dependencies", "an array of task ids"),
            ("optional", "true or false"),
            ("extra", "an object"),
            ("retry", "an object {\"max\": N, \"count\": N}"),
        ] {
            match get(task, field) {
                Some(value @ Value::NullKeyword(_)) => {
                    self.type_error(value, &format!("`{field}`"), expected)
                }
                Some(value @ Value::NumberLit(_)) if field == "retry" => {
                    self.type_error(value, "`retry`", expected)
                }
                _ => {}
            }
        }
        if let Some(Value::Array(deps)) = get(task, "dependencies") {
            let mut seen = HashSet::new();
            for dep in &deps.elements {
                if let Value::NumberLit(n) = dep {
                    if !seen.insert(n.value) {
                        self.error(
                            Code::InvalidDocument,
                            span(dep),
                            &format!("the dependency {} is listed twice", n.value),
                            "listed again here",
                        );
                    }
                }
            }
        }
        if let Some(Value::Object(retry)) = get(task, "retry") {
            self.fields(retry, "`retry`", &rules().retry, &[]);
            if let Some(value @ Value::NullKeyword(_)) = get(retry, "count") {
                self.type_error(value, "`retry.count`", "a whole number");
            }
        }
        if let Some(Value::Object(holder)) = get(task, "holder") {
            self.fields(holder, "`holder`", &rules().holder, &[]);
            if let Some(value @ Value::NumberLit(n)) = get(holder, "lease_seconds") {
                if n.value == "0" {
                    self.type_error(value, "`lease_seconds`", "a whole number from 1");
                }
            }
            if let Some(Value::StringLit(agent)) = get(holder, "agent") {
                if agent.value.is_empty() {
                    self.error(
                        Code::InvalidDocument,
                        span(&agent.range),
                        "`agent` of `holder` must not be empty",
                        "expected the agent's name",
                    );
                }
            }
        }
    }

    /// The type of a string field, when it is there (its presence is
    /// checked by [`Validator::fields`]).
    fn string_if_present(&mut self, object: &Object<'_>, field: &str, what: &str, nullable: bool) {
        match get(object, field) {
            None | Some(Value::StringLit(_)) => {}
            Some(Value::NullKeyword(_)) if nullable => {}
            Some(other) => {
                let expected = if nullable {
                    "a string or null"
                } else {
                    "a string"
                };
                self.type_error(other, &format!("`{field}` of {what}"), expected);
            }
        }
    }

    /// An empty string where a name is required.
    pub(super) fn not_empty(&mut self, object: &Object<'_>, field: &str, what: &str) {
        if let Some(Value::StringLit(s)) = get(object, field) {
            if s.value.is_empty() {
                self.error(
                    Code::InvalidDocument,
                    span(&s.range),
                    &format!("`{field}` of {what} must not be empty"),
                    "expected a name",
                );
            }
        }
    }
}
