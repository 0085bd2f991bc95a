//! What `planc run` reads besides its arguments: the plan `init` compiles,
//! the reply `observe` reads, the steps of `replan`, standard input.

use super::*;

pub(super) fn init(
    plan: &str,
    target: &Target,
    set: Vec<(String, String)>,
    imports: &input::ImportArgs,
    force: bool,
    json: bool,
) -> i32 {
    let state = target.plan.store().url();
    let (input, loaded) = match input::open_plan(plan, set, imports, Color::Auto) {
        Ok(opened) => opened,
        Err(code) => return code,
    };
    let (diagnostics, sources) = (loaded.diagnostics.clone(), loaded.sources.clone());
    let Some(document) = loaded.clean_document() else {
        output::human(&diagnostics, &sources, Color::Auto);
        eprintln!(
            "{}: no state created: the plan has errors",
            escape::path(&input.name)
        );
        return EXIT_FAILURE;
    };
    match PlanAccess::create(&target.plan, document, force) {
        Ok(doc) => {
            if json {
                let created = Created {
                    message: format!("Created {state} from {}", input.name),
                    state,
                    plan_id: doc.meta.id.clone(),
                    total_tasks: doc.tasks.len(),
                    revision: doc.state.revision,
                };
                let applied = Applied {
                    data: OpResult::Created(created),
                    events: Vec::new(),
                };
                print_json(&applied.envelope());
            } else {
                println!(
                    "created {}: plan `{}`, {} task(s)",
                    escape::path(&state),
                    escape::line(&doc.meta.id),
                    doc.tasks.len()
                );
            }
            EXIT_OK
        }
        Err(error) => report(Err(error), json),
    }
}

/// The reply `run observe` reads: the message as text, or as an assistant
/// message in JSON (`--assistant-json`), with the `--tool-call` names.
pub(super) fn reply_of(
    message: String,
    assistant_json: bool,
    tool_calls: Vec<String>,
) -> Result<runner::Reply, i32> {
    let mut reply = if assistant_json {
        let value: serde_json::Value = serde_json::from_str(&message)
            .map_err(|e| usage(&format!("--assistant-json: the message is not JSON: {e}")))?;
        runner::Reply::from_json(&value).map_err(|e| usage(&format!("--assistant-json: {e}")))?
    } else {
        runner::Reply::text(message)
    };
    for name in tool_calls {
        if name.trim().is_empty() {
            return Err(usage("--tool-call takes the name of a tool"));
        }
        reply.tool_calls.push(runner::ToolCall::named(name));
    }
    Ok(reply)
}

/// Standard input as text, bounded like a file (`planc::read`): exit 2 when
/// it cannot be read, is too large or is not UTF-8.
pub(super) fn read_stdin() -> Result<String, i32> {
    let text = planc::read::read_stream(std::io::stdin().lock(), planc::read::MAX_FILE_BYTES)
        .map_err(std::io::Error::from)
        .and_then(|bytes| {
            String::from_utf8(bytes)
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
        });
    text.map_err(|error| {
        output::fatal(&format!("cannot read standard input: {error}"));
        EXIT_USAGE
    })
}

/// The steps of `planc run replan`: a JSON list, or an object with `steps`.
pub(super) fn read_steps(path: &str) -> Result<Result<ReplanArgs, OpError>, i32> {
    let text = if path == "-" {
        read_stdin()?
    } else {
        match planc::read::read_to_string(Path::new(path), Bounds::FILES_AND_PIPES) {
            Ok(text) => text,
            Err(error) => {
                output::fatal(&format!("cannot read {path}: {error}"));
                return Err(EXIT_USAGE);
            }
        }
    };
    let bad = |message: String| OpError::new(runner::ErrorCode::InvalidArgument, message);
    let value: Value = match serde_json::from_str(&text) {
        Ok(value) => value,
        Err(error) => return Ok(Err(bad(format!("{path} is not JSON: {error}")))),
    };
    let value = match value {
        Value::Array(steps) => serde_json::json!({"steps": steps}),
        other => other,
    };
    Ok(serde_json::from_value(value).map_err(|error| {
        bad(format!(
            "{path}: expected a list of task names or task objects: {error}"
        ))
    }))
}
