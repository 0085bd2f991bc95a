//! Input whose shape is deep (a dependency cycle of 25,000 tasks, the size
//! that once overflowed the stack) is answered with a diagnostic by every
//! command that checks it and by `planc serve`, which stays up. The walks
//! themselves are tested at a million nodes next to them (src/check/graph.rs,
//! src/modules.rs).

use planc::generate::hostile::long_cycle;

use crate::support::Test;

/// The size of the repro (#37): stacks overflowed from ~22,000.
const TASKS: usize = 25_000;

#[test]
fn a_long_cycle_is_a_cycle_diagnostic_for_every_command() {
    let t = Test::temp().file("cyc.plan", &long_cycle(TASKS));
    let commands: [&[&str]; 4] = [
        &["check", "cyc.plan"],
        &["build", "cyc.plan"],
        &["graph", "cyc.plan"],
        &["run", "init", "cyc.plan", "-o", "state.json"],
    ];
    for args in commands {
        let output = t.planc(args);
        // `check`'s report is its output; the others report on standard error.
        let report = if args[0] == "check" {
            &output.stdout
        } else {
            &output.stderr
        };
        assert_eq!(output.code, 1, "{args:?}: {report}");
        assert!(
            report.contains("dependency cycle through 25000 tasks: `t0` → `t24999` → "),
            "{args:?}: {report}"
        );
    }
}

#[cfg(unix)]
#[test]
fn serve_answers_a_long_cycle_with_its_diagnostic_and_stays_up() {
    use crate::serve_support::{store_url, Server};

    let dir = tempfile::tempdir().expect("a temporary directory");
    let server = Server::start(&["--store", &store_url(dir.path())]);
    let refused = server.post("/api/plans?id=cyc", &long_cycle(TASKS));
    assert_eq!(
        (refused.status, refused.code()),
        (400, "INVALID_ARGUMENT".to_owned())
    );
    let diagnostics = &refused.json()["error"]["details"]["diagnostics"];
    assert_eq!(diagnostics[0]["code"], "planc::cycle", "{diagnostics}");
    // Still up: the next request is served.
    server.create("jd", "examples/jd_keyboard.plan");
}
