//! An agent's reply as the text protocol reads it: its text and the tool
//! calls it makes. The steps system creates a plan on the first reply that
//! calls a tool, and a tool call that belongs to the next step is a sign
//! the agent moved on, so a reply is more than its text. It comes as plain
//! text, or as the assistant message of OpenAI chat completions, of the
//! OpenAI Responses API, or of Anthropic's Messages API.

use serde_json::Value;

/// One tool call of a reply: the tool's name and its arguments.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    /// The tool's name (`browser_navigate`).
    pub name: String,
    /// Its arguments: the JSON object the model wrote (a string when the
    /// model's arguments were not JSON).
    pub arguments: Value,
}

impl ToolCall {
    /// A call of `name` without arguments.
    pub fn named(name: impl Into<String>) -> ToolCall {
        ToolCall {
            name: name.into(),
            arguments: Value::Null,
        }
    }
}

/// One reply of the agent: what it wrote and the tools it called.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reply {
    /// The reply's text (its text parts joined by newlines).
    pub text: String,
    /// The tool calls, in order.
    pub tool_calls: Vec<ToolCall>,
}

/// What `Reply::from_json` accepts, for its error message.
const SHAPES: &str = "an assistant message of OpenAI chat completions ({\"role\": \"assistant\", \"content\", \"tool_calls\"}), \
     an OpenAI Responses output (a list of items, or {\"output\": [...]}) or an Anthropic message \
     ({\"role\": \"assistant\", \"content\": [{\"type\": \"text\"}, {\"type\": \"tool_use\"}]})";

impl Reply {
    /// A reply of text alone.
    pub fn text(text: impl Into<String>) -> Reply {
        Reply {
            text: text.into(),
            tool_calls: Vec::new(),
        }
    }

    /// The reply in an assistant message of OpenAI chat completions (or a
    /// whole completion: its first choice), an OpenAI Responses output (its
    /// list of items, or the response object) or an Anthropic message. The
    /// error says what the value is not.
    pub fn from_json(value: &Value) -> Result<Reply, String> {
        let mut reply = Reply::default();
        match value {
            Value::Array(items) => reply.items(items)?,
            Value::Object(map) => {
                if let Some(Value::Array(output)) = map.get("output") {
                    reply.items(output)?;
                } else if let Some(message) = map
                    .get("choices")
                    .and_then(|c| c.get(0))
                    .and_then(|c| c.get("message"))
                {
                    return Reply::from_json(message);
                } else if map.contains_key("content") || map.contains_key("tool_calls") {
                    reply.content(map.get("content").unwrap_or(&Value::Null))?;
                    if let Some(calls) = map.get("tool_calls") {
                        reply.chat_tool_calls(calls)?;
                    }
                } else {
                    return Err(format!("the reply is not {SHAPES}"));
                }
            }
            _ => return Err(format!("the reply is not {SHAPES}")),
        }
        Ok(reply)
    }

    fn push_text(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        if !self.text.is_empty() {
            self.text.push('\n');
        }
        self.text.push_str(text);
    }

    /// A message's `content`: a string, null, or a list of parts (text,
    /// Anthropic `tool_use`).
    fn content(&mut self, content: &Value) -> Result<(), String> {
        match content {
            Value::Null => Ok(()),
            Value::String(text) => {
                self.push_text(text);
                Ok(())
            }
            Value::Array(parts) => parts.iter().try_for_each(|part| self.part(part)),
            other => Err(format!(
                "a message's `content` is a string or a list of parts, not {}",
                kind(other)
            )),
        }
    }

    /// One part of a content list, or one item of a Responses output.
    fn part(&mut self, part: &Value) -> Result<(), String> {
        let kind_of = part.get("type").and_then(Value::as_str).unwrap_or("");
        match kind_of {
            "text" | "output_text" => {
                self.push_text(part.get("text").and_then(Value::as_str).unwrap_or(""));
            }
            "tool_use" => {
                let input = part.get("input").cloned().unwrap_or(Value::Null);
                self.tool_calls.push(ToolCall {
                    name: name_of(part, "a tool_use part")?,
                    arguments: input,
                });
            }
            "function_call" | "custom_tool_call" => {
                let arguments = part
                    .get("arguments")
                    .or_else(|| part.get("input"))
                    .map_or(Value::Null, arguments_value);
                self.tool_calls.push(ToolCall {
                    name: name_of(part, "a function_call item")?,
                    arguments,
                });
            }
            "message" => self.content(part.get("content").unwrap_or(&Value::Null))?,
            // Reasoning, refusals, images, tool results: no text of the reply.
            _ => {}
        }
        Ok(())
    }

    /// A Responses output: its items.
    fn items(&mut self, items: &[Value]) -> Result<(), String> {
        items.iter().try_for_each(|item| self.part(item))
    }

    /// Chat completions' `tool_calls`: `[{type: "function", function: {name, arguments}}]`.
    fn chat_tool_calls(&mut self, calls: &Value) -> Result<(), String> {
        let Value::Array(calls) = calls else {
            return Err(format!("`tool_calls` is a list, not {}", kind(calls)));
        };
        for call in calls {
            let function = call.get("function").unwrap_or(call);
            let arguments = function
                .get("arguments")
                .map_or(Value::Null, arguments_value);
            self.tool_calls.push(ToolCall {
                name: name_of(function, "a tool call")?,
                arguments,
            });
        }
        Ok(())
    }
}

/// The `name` of a tool call.
fn name_of(value: &Value, what: &str) -> Result<String, String> {
    match value.get("name").and_then(Value::as_str) {
        Some(name) if !name.trim().is_empty() => Ok(name.to_owned()),
        _ => Err(format!("{what} has no `name`")),
    }
}

/// Arguments as the model wrote them: a JSON string is read as JSON.
fn arguments_value(value: &Value) -> Value {
    match value {
        Value::String(text) => {
            serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone()))
        }
        other => other.clone(),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn names(reply: &Reply) -> Vec<&str> {
        reply.tool_calls.iter().map(|c| c.name.as_str()).collect()
    }

    #[test]
    fn the_three_shapes_give_the_same_reply() {
        let chat = json!({"role": "assistant", "content": "Opening it.",
            "tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": "browser_navigate", "arguments": "{\"url\": \"https://jd.com\"}"}}]});
        let completion = json!({"choices": [{"index": 0, "message": chat.clone()}]});
        let responses = json!([
            {"type": "reasoning", "summary": []},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Opening it."}]},
            {"type": "function_call", "call_id": "c1", "name": "browser_navigate", "arguments": "{\"url\": \"https://jd.com\"}"}
        ]);
        let response = json!({"id": "resp_1", "output": responses.clone()});
        let anthropic = json!({"role": "assistant", "content": [
            {"type": "text", "text": "Opening it."},
            {"type": "tool_use", "id": "t1", "name": "browser_navigate", "input": {"url": "https://jd.com"}}]});
        let expected = Reply {
            text: "Opening it.".to_owned(),
            tool_calls: vec![ToolCall {
                name: "browser_navigate".to_owned(),
                arguments: json!({"url": "https://jd.com"}),
            }],
        };
        for value in [chat, completion, responses, response, anthropic] {
            assert_eq!(Reply::from_json(&value).unwrap(), expected, "{value}");
        }
    }

    #[test]
    fn text_alone_and_calls_alone() {
        let reply = Reply::from_json(&json!({"role": "assistant", "content": null,
            "tool_calls": [{"type": "function", "function": {"name": "a", "arguments": "not json"}}]}))
        .unwrap();
        assert_eq!(reply.text, "");
        assert_eq!(reply.tool_calls[0].arguments, json!("not json"));
        let reply = Reply::from_json(&json!({"content": [{"type": "text", "text": "one"},
            {"type": "text", "text": "two"}]}))
        .unwrap();
        assert_eq!((reply.text.as_str(), names(&reply)), ("one\ntwo", vec![]));
    }

    #[test]
    fn what_is_not_a_reply_is_named() {
        assert!(Reply::from_json(&json!("text"))
            .unwrap_err()
            .starts_with("the reply is not an assistant message"));
        assert_eq!(
            Reply::from_json(&json!({"content": 3})).unwrap_err(),
            "a message's `content` is a string or a list of parts, not a number"
        );
        assert_eq!(
            Reply::from_json(&json!({"tool_calls": [{"function": {"arguments": "{}"}}]}))
                .unwrap_err(),
            "a tool call has no `name`"
        );
        assert_eq!(
            Reply::from_json(&json!({"tool_calls": {}})).unwrap_err(),
            "`tool_calls` is a list, not an object"
        );
    }
}
