//! The plan's `roles`, and the check that an assignee is one of them.

use jsonc_parser::ast::{Object, Value};
use serde_json::json;

use super::{get, span, strict, Validator};
use crate::diagnostic::{Code, Diagnostic};

impl Validator {
    /// The declared roles: their ids (for `assignee` checks) and normalised form.
    pub(super) fn roles(
        &mut self,
        root: &Object<'_>,
    ) -> Option<(Vec<String>, Vec<serde_json::Value>)> {
        let value = get(root, "roles")?;
        let Value::Array(array) = value else {
            self.type_error(value, "`roles`", "an array");
            return None;
        };
        let mut ids = Vec::new();
        let mut out = Vec::new();
        for role in &array.elements {
            let Value::Object(role) = role else {
                self.type_error(role, "a role", "an object");
                continue;
            };
            if self.strict {
                self.fields(role, "a role", &strict::rules().role, &["id"]);
                self.not_empty(role, "id", "a role");
            }
            let id = self.string(role, "id", "a role", true);
            let description = self.string(role, "description", "a role", false);
            if let Some(id) = id {
                self.role_names.insert(id.clone());
                ids.push(id.clone());
                out.push(json!({"id": id, "description": description}));
            }
        }
        Some((ids, out))
    }

    /// An assignee must be one of the document's roles.
    pub(super) fn check_assignee(
        &mut self,
        task: &Object<'_>,
        assignee: &str,
        role_ids: &[String],
    ) {
        if self.role_names.contains(assignee) {
            return;
        }
        let at = get(task, "assignee").map(span).unwrap_or_default();
        let suggestion = self
            .suggestions
            .closest(assignee, role_ids.iter().map(String::as_str));
        let label = match suggestion {
            Some(best) => format!("did you mean `{best}`?"),
            None => "unknown role".to_owned(),
        };
        self.diagnostics.push(
            Diagnostic::new(Code::UnknownRole, format!("no role named `{assignee}`"))
                .label(self.file, at, label)
                .help("an assignee must be the `id` of an entry of `roles`"),
        );
    }
}
