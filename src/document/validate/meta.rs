//! The plan's `meta` and its goal, normalised: every field `planc/1` has,
//! defaults filled in.

use jsonc_parser::ast::{Object, Value};
use serde_json::json;

use super::{get, span, Validator};
use crate::diagnostic::{Code, Diagnostic};
use crate::span::Span;

impl Validator {
    /// `meta` normalised: every field planc/1 has, defaults filled in.
    pub(super) fn meta(
        &mut self,
        meta: Option<&Object<'_>>,
        fallback_id: &str,
        goal: Option<String>,
    ) -> serde_json::Value {
        let meta_string = |field: &str| {
            meta.and_then(|m| get(m, field)).and_then(|v| match v {
                Value::StringLit(s) => Some(s.value.to_string()),
                _ => None,
            })
        };
        let id = meta_string("id").unwrap_or_else(|| fallback_id.to_owned());
        let params = meta
            .and_then(|m| get(m, "params"))
            .map(|p| self.plain(p))
            .unwrap_or_else(|| json!({}));
        let max_iterations = meta
            .and_then(|m| get(m, "max_iterations"))
            .and_then(|v| match v {
                Value::NullKeyword(_) => None,
                other => self.integer(other, "`max_iterations`"),
            });
        let mut rounds = |field: &str, least: u64| {
            meta.and_then(|m| get(m, field)).and_then(|v| match v {
                Value::NullKeyword(_) => None,
                other => {
                    let value = self.integer(other, &format!("`meta.{field}`"))?;
                    if (least..=1000).contains(&value) {
                        Some(value)
                    } else {
                        self.error(
                            Code::InvalidValue,
                            span(other),
                            &format!(
                                "`meta.{field}` takes a number from {least} to 1000, not {value}"
                            ),
                            "out of range",
                        );
                        None
                    }
                }
            })
        };
        let transition_rounds = rounds("transition_rounds", 0);
        let fallback_rounds = rounds("fallback_rounds", 1);
        let retry = meta.and_then(|m| get(m, "retry")).and_then(|v| match v {
            Value::NullKeyword(_) => None,
            other => self.integer(other, "`meta.retry`"),
        });
        json!({
            "id": id,
            "title": meta_string("title"),
            "goal": goal.unwrap_or_default(),
            "language": meta_string("language").unwrap_or_else(|| "en".to_owned()),
            "max_iterations": max_iterations,
            "transition_rounds": transition_rounds,
            "fallback_rounds": fallback_rounds,
            "params": params,
            "source": meta_string("source"),
            "created_at": meta_string("created_at"),
            "updated_at": meta_string("updated_at"),
            "retry": retry,
        })
    }

    /// The goal: planc/1 and the PlanManager API keep it in `meta`, the
    /// planManager at the top; a missing goal is reported.
    pub(super) fn goal(&mut self, root: &Object<'_>, meta: Option<&Object<'_>>) -> Option<String> {
        match (meta, get(root, "overallGoal")) {
            (Some(meta), _) if get(meta, "goal").is_some() => {
                self.string(meta, "goal", "`meta`", true)
            }
            (_, Some(_)) => self.string(root, "overallGoal", "the plan", true),
            (Some(meta), None) => {
                self.diagnostics.push(
                    Diagnostic::new(Code::MissingGoal, "the plan has no goal")
                        .label(
                            self.file,
                            Span::new(span(meta).start(), span(meta).start() + 1),
                            "`meta` has no `goal`",
                        )
                        .help("add `\"goal\": \"…\"` to `meta`: agents read it to stay on course"),
                );
                None
            }
            (None, None) => {
                self.diagnostics.push(
                    Diagnostic::new(Code::MissingGoal, "the plan has no goal")
                        .label(
                            self.file,
                            Span::new(span(root).start(), span(root).start() + 1),
                            "no `meta.goal` or `overallGoal`",
                        )
                        .help(
                            "add `\"meta\": {\"goal\": \"…\"}`: agents read it to stay on course",
                        ),
                );
                None
            }
        }
    }
}
