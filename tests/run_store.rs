//! The state file under stress: many processes at once, and writers killed
//! mid-write (SPEC §4, persistence and concurrency).

mod support;

use std::process::Stdio;
use std::time::Duration;

use support::{planc, Test};

/// A `.plan` source with `n` independent tasks.
fn wide_plan(n: usize) -> String {
    let mut text = String::from("plan wide {\n    goal \"Many independent tasks\"\n");
    for i in 0..n {
        text.push_str(&format!("    task t{i} \"Task {i}\"\n"));
    }
    text.push_str("}\n");
    text
}

/// 16 processes at once, 5 operations each: no update is lost.
#[test]
fn sixteen_processes_lose_no_update() {
    const PROCESSES: usize = 16;
    const OPS: usize = 5;
    let t = Test::new().file("wide.plan", &wide_plan(40));
    t.ok(&["init", "wide.plan", "-o", "s.json"]);
    let dir = t.dir().to_path_buf();
    let workers: Vec<_> = (0..PROCESSES)
        .map(|p| {
            let dir = dir.clone();
            std::thread::spawn(move || {
                for k in 0..OPS {
                    let args: Vec<String> = if p % 2 == 0 {
                        vec!["run".into(), "next".into(), "s.json".into()]
                    } else {
                        let name = format!("added by {p}.{k}");
                        vec![
                            "run".into(),
                            "add".into(),
                            "s.json".into(),
                            "--name".into(),
                            name,
                        ]
                    };
                    let status = planc()
                        .args(&args)
                        .current_dir(&dir)
                        .stdout(Stdio::null())
                        .status()
                        .unwrap();
                    assert!(status.success(), "{args:?}");
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    let total_ops = (PROCESSES * OPS) as u64;
    let state = t.state("s.json");
    assert_eq!(state["state"]["revision"].as_u64(), Some(1 + total_ops));
    let tasks = state["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 40 + PROCESSES / 2 * OPS);
    let started = tasks
        .iter()
        .filter(|t| t["status"] == "in_progress")
        .count();
    assert_eq!(started, PROCESSES / 2 * OPS);
    let events = t.events("s.json");
    assert_eq!(events.len() as u64, 1 + total_ops);
    let mut revisions: Vec<u64> = events
        .iter()
        .map(|e| e["revision"].as_u64().unwrap())
        .collect();
    revisions.dedup();
    assert_eq!(
        revisions,
        (1..=1 + total_ops).collect::<Vec<_>>(),
        "one record per revision, in order"
    );
}

/// Writers killed with SIGKILL at random moments: the state file always
/// parses, and is the old state or the new one.
#[test]
fn a_killed_writer_never_tears_the_state() {
    let t = Test::new().file("wide.plan", &wide_plan(2000));
    t.ok(&["init", "wide.plan", "-o", "s.json"]);
    // How long one uninterrupted writer takes, to spread the kills over it.
    let started = std::time::Instant::now();
    t.ok(&["add", "s.json", "--name", "timing"]);
    let span = started.elapsed().as_micros() as u64 * 6 / 5;
    let mut last_revision = 2;
    let mut changed = 0;
    for round in 0..40u64 {
        let mut child = planc()
            .args(["run", "add", "s.json", "--name", &format!("round {round}")])
            .current_dir(t.dir())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(span * round / 20));
        let _ = child.kill(); // SIGKILL on Unix
        let _ = child.wait();
        let text = std::fs::read_to_string(t.path("s.json")).unwrap();
        let state: serde_json::Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("round {round}: torn state file: {e}"));
        let revision = state["state"]["revision"].as_u64().unwrap();
        assert!(
            revision == last_revision || revision == last_revision + 1,
            "round {round}: {last_revision} → {revision}"
        );
        let tasks = state["tasks"].as_array().unwrap().len() as u64;
        assert_eq!(
            tasks,
            2000 + revision - 1,
            "the revision and the content agree"
        );
        changed += revision - last_revision;
        last_revision = revision;
    }
    // The state still works after all that.
    t.ok(&["add", "s.json", "--name", "after the storm"]);
    assert_eq!(
        t.state("s.json")["state"]["revision"].as_u64(),
        Some(last_revision + 1)
    );
    eprintln!("{changed} of 40 killed writers got their change in");
}
