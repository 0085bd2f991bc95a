//! `POST /api/plans` takes any plan: parameter values (`?set=NAME=VALUE`,
//! repeated, or a JSON request's `set`) and a plan with the files it imports
//! (a JSON request's `files`), checked by the CLI's root rules (docs/serve.md).

#![cfg(unix)]

use crate::serve_support::{repo, store_url, Server};
use serde_json::{json, Value};

fn text(path: &str) -> String {
    std::fs::read_to_string(repo(path)).expect("read")
}

fn diagnostics(response: &crate::serve_support::Response) -> Vec<Value> {
    response.json()["error"]["details"]["diagnostics"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[test]
fn parameters_come_in_the_query_or_the_json_request() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let server = Server::start(&["--store", &store_url(dir.path())]);
    let source = text("examples/research_report.plan");

    // Without the value: the help says how to give it over HTTP.
    let missing = server.post("/api/plans?id=rr", &source);
    assert_eq!(
        (missing.status, missing.code()),
        (400, "INVALID_ARGUMENT".to_owned())
    );
    let listed = diagnostics(&missing);
    assert_eq!(listed[0]["code"], "planc::missing_param", "{listed:?}");
    assert_eq!(
        listed[0]["help"],
        "give it in the request: `?set=topic=VALUE` or the JSON request's `\"set\"`, or add a default: `param topic: string = …`"
    );

    let created = server.post(
        "/api/plans?id=rr&set=topic=vector%20databases&set=pages=7",
        &source,
    );
    assert_eq!(created.status, 201, "{}", created.text());
    let doc = server.get("/api/plans/rr").json()["data"].clone();
    assert_eq!(doc["meta"]["params"]["topic"], "vector databases");
    assert_eq!(doc["meta"]["params"]["pages"], 7);

    // A JSON request: the source and its values (a query's come first).
    let request =
        json!({"source": source, "set": {"topic": "CRDTs", "pages": 3, "peer_review": false}});
    let created = server.post("/api/plans?id=rr2&set=pages=9", &request.to_string());
    assert_eq!(created.status, 201, "{}", created.text());
    let doc = server.get("/api/plans/rr2").json()["data"].clone();
    assert_eq!(
        doc["meta"]["params"],
        json!({"topic": "CRDTs", "audience": "the engineering team", "pages": 3, "peer_review": false})
    );

    // A wrong value and a wrong name, worded for HTTP.
    let wrong = server.post(
        "/api/plans?id=rr3&set=topic=x&set=pages=many&set=pagez=1",
        &source,
    );
    let messages: Vec<Value> = diagnostics(&wrong)
        .iter()
        .map(|d| d["message"].clone())
        .collect();
    assert_eq!(
        messages,
        [
            json!("`set=pagez=…` names no parameter of this plan"),
            json!("`set=pages=many`: `many` is not an `int`"),
        ],
        "{}",
        wrong.text()
    );
    // A JSON plan document has its values already.
    let document = server.get("/api/plans/rr").json()["data"].clone();
    let refused = server.post("/api/plans?id=rr4&set=topic=x", &document.to_string());
    assert_eq!(refused.status, 400, "{}", refused.text());
    let unknown = server.post("/api/plans?id=rr5&sett=topic=x", &source);
    assert_eq!(
        unknown.json()["error"]["message"],
        "bad query: unknown parameter `sett`; it takes `id`, `force` and `set=NAME=VALUE`"
    );
}

#[test]
fn a_plan_comes_with_the_files_it_imports_inside_its_root() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let server = Server::start(&["--store", &store_url(dir.path())]);
    let request = json!({
        "source": text("examples/competitor_analysis.plan"),
        "files": {"lib/engineering.plan": text("examples/lib/engineering.plan")},
        "set": {"competitor": "Linear"},
    });
    let created = server.post("/api/plans?id=ca", &request.to_string());
    assert_eq!(created.status, 201, "{}", created.text());
    let doc = server.get("/api/plans/ca").json()["data"].clone();
    assert_eq!(doc["meta"]["title"], "Competitor analysis: Linear");
    assert_eq!(doc["tasks"][0]["key"], "market.search");

    // A file not sent: the import's diagnostic, no file read from disk.
    let alone = json!({"source": text("examples/competitor_analysis.plan")});
    let refused = server.post("/api/plans?id=ca2", &alone.to_string());
    assert_eq!(refused.status, 400, "{}", refused.text());
    assert_eq!(
        diagnostics(&refused)[0]["message"],
        "cannot import `lib/engineering.plan`: no file of that path was sent with the plan (the JSON request's `files`)"
    );
    // An import leaving the root, and a sent path leaving it.
    let outside = json!({"source": "import \"../secret.plan\"\nplan p { goal \"g\" task a \"A\" }\n",
                         "files": {"a.plan": ""}});
    let refused = server.post("/api/plans?id=ca3", &outside.to_string());
    let listed = diagnostics(&refused);
    assert_eq!(
        listed[0]["message"],
        "cannot import `../secret.plan`: it is outside the project root"
    );
    assert_eq!(
        listed[0]["help"],
        "an import names a file sent with the plan (the JSON request's `files`), by a path relative to the importing file that stays in the plan's directory"
    );
    for path in ["../secret.plan", "/etc/secret.plan", "lib/../../x.plan"] {
        let sent = json!({"source": "plan p { goal \"g\" task a \"A\" }\n", "files": {path: "plan q { goal \"g\" }"}});
        let refused = server.post("/api/plans?id=ca4", &sent.to_string());
        assert_eq!(
            refused.json()["error"]["message"],
            format!("`files.{path}`: a path relative to the plan that stays in its directory (no `..` above it, not absolute)")
        );
    }
    let not_plan =
        json!({"source": "plan p { goal \"g\" task a \"A\" }\n", "files": {"notes.txt": "x"}});
    let refused = server.post("/api/plans?id=ca5", &not_plan.to_string());
    assert_eq!(
        refused.json()["error"]["message"],
        "`files.notes.txt`: only `.plan` files can be imported"
    );
}
