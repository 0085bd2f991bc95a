//! The state file under stress: many processes at once, and writers killed
//! mid-write (docs/runner.md, persistence and concurrency).

use std::process::Stdio;
use std::time::Duration;

use crate::support::{self, planc, signal, wait_for_line, KillOnPanic, Test};

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
    let t = Test::temp().file("wide.plan", &wide_plan(40));
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
                    // Under a loaded machine a writer may queue for long.
                    let status = planc()
                        .args(&args)
                        .current_dir(&dir)
                        .env("PLANC_LOCK_TIMEOUT", "120")
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

/// Writers killed with SIGKILL: the state file always parses, and is the old
/// state or the new one. In debug builds every other writer is first
/// stopped in the middle of writing its new state (`stop@state-write`: half
/// of it written to the temporary file) and killed there, and the
/// half-written file it leaves proves the kill landed mid-write; the others
/// are killed at moments spread over a change.
#[cfg(unix)]
#[test]
fn a_killed_writer_never_tears_the_state() {
    let t = Test::temp().file("wide.plan", &wide_plan(2000));
    t.ok(&["init", "wide.plan", "-o", "s.json"]);
    // How long one uninterrupted writer takes, to spread the kills over it.
    let started = std::time::Instant::now();
    t.ok(&["add", "s.json", "--name", "timing"]);
    let span = started.elapsed().as_micros() as u64 * 6 / 5;
    let mut last_revision = 2;
    let (mut changed, mut mid_write) = (0, 0);
    for round in 0..40u64 {
        let stopped = cfg!(debug_assertions) && round % 2 == 0;
        let mut child = planc()
            .args(["run", "add", "s.json", "--name", &format!("round {round}")])
            .current_dir(t.dir())
            .env("PLANC_FAULT", if stopped { "stop@state-write" } else { "" })
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let _reap = KillOnPanic(child.id());
        if stopped {
            let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
            wait_for_line(&mut stderr, "planc: fault injected: stop at state-write");
        } else {
            std::thread::sleep(Duration::from_micros(span * round / 20));
        }
        let _ = child.kill(); // SIGKILL on Unix
        let _ = child.wait();
        let temps = temp_files(&t);
        if stopped {
            // Half a state: the kill came between the two halves of the write.
            assert_eq!(temps.len(), 1, "round {round}: {temps:?}");
            let half = std::fs::read(t.path(&temps[0])).unwrap();
            assert!(
                !half.is_empty() && serde_json::from_slice::<serde_json::Value>(&half).is_err(),
                "round {round}: the temporary state is half written"
            );
            mid_write += 1;
        }
        let text = std::fs::read_to_string(t.path("s.json")).unwrap();
        let state: serde_json::Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("round {round}: torn state file: {e}"));
        let revision = state["state"]["revision"].as_u64().unwrap();
        if stopped {
            assert_eq!(
                revision, last_revision,
                "round {round}: killed before its commit"
            );
        }
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
    assert_eq!(mid_write, if cfg!(debug_assertions) { 20 } else { 0 });
    // The state still works after all that (the next writer clears the
    // temporary files left), and its log agrees with it.
    t.ok(&["add", "s.json", "--name", "after the storm"]);
    assert_eq!(
        t.state("s.json")["state"]["revision"].as_u64(),
        Some(last_revision + 1)
    );
    assert_one_record_per_revision(&t, "s.json");
    assert_eq!(temp_files(&t), Vec::<String>::new());
    eprintln!("{changed} of 40 killed writers got their change in");
}

// ---------------------------------------------------------------------------
// The commit protocol: state and log always agree (docs/runner.md, "Files on
// disk"). Faults are injected with PLANC_FAULT=ACTION@POINT, which debug
// builds of planc obey (src/runner/store/fault.rs).

/// The revisions in a state's log, one per complete line; a torn final line
/// (no newline) is left out and reported.
fn log_revisions(t: &Test, name: &str) -> (Vec<u64>, bool) {
    let text = std::fs::read_to_string(t.path(&format!("{name}.events.jsonl"))).unwrap();
    let torn = !text.is_empty() && !text.ends_with('\n');
    let complete = match text.rfind('\n') {
        Some(end) => &text[..end],
        None => "",
    };
    let revisions = complete
        .lines()
        .map(|line| {
            let record: serde_json::Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("a log line that is not JSON ({e}): {line}"));
            record["revision"].as_u64().unwrap()
        })
        .collect();
    (revisions, torn)
}

fn revision(t: &Test, name: &str) -> u64 {
    t.state(name)["state"]["revision"].as_u64().unwrap()
}

/// The invariant: the log holds exactly one record per revision of the state, in order.
fn assert_one_record_per_revision(t: &Test, name: &str) {
    let revision = revision(t, name);
    let (revisions, torn) = log_revisions(t, name);
    assert!(!torn, "a torn line is left in the log");
    assert_eq!(revisions, (1..=revision).collect::<Vec<_>>());
}

/// Temporary files in the directory (`.NAME.XXXXXX.tmp`).
fn temp_files(t: &Test) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(t.dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.') && n.ends_with(".tmp"))
        .collect();
    names.sort();
    names
}

/// Runs `planc run ARGS` with `PLANC_FAULT=fault`.
fn run_with_fault(t: &Test, fault: &str, args: &[&str]) -> std::process::Output {
    planc()
        .arg("run")
        .args(args)
        .current_dir(t.dir())
        .env("PLANC_FAULT", fault)
        .output()
        .unwrap()
}

/// The lines `planc run watch STATE --no-follow --json` prints: the committed records.
fn watched_revisions(t: &Test, name: &str) -> Vec<u64> {
    let run = t.planc(&["run", "watch", name, "--no-follow", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.stdout
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["revision"]
                .as_u64()
                .unwrap()
        })
        .collect()
}

/// A writer killed (SIGKILL) at each step of a change: the kill lands exactly
/// there (the files show it), readers of the log never see the lost change,
/// and the next writer repairs the log so it holds one record per revision.
#[cfg(unix)]
#[test]
#[cfg_attr(
    not(debug_assertions),
    ignore = "faults are injected in debug builds only"
)]
fn a_writer_killed_at_each_step_leaves_state_and_log_in_agreement() {
    use std::os::unix::process::ExitStatusExt;
    // (point, state revision after the kill, log lines after it, torn tail, temp file left)
    let cases = [
        ("locked", 2, 2, false, false),
        ("state-write", 2, 2, false, true),
        ("log-append", 2, 2, false, true),
        ("log-half", 2, 2, true, true),
        ("state-rename", 2, 3, false, true),
        ("renamed", 3, 3, false, false),
    ];
    for (point, state_revision, log_lines, torn, temp_left) in cases {
        let t = Test::temp().file("wide.plan", &wide_plan(3));
        t.ok(&["init", "wide.plan", "-o", "s.json"]);
        t.ok(&["next", "s.json"]);
        let output = run_with_fault(
            &t,
            &format!("crash@{point}"),
            &["add", "s.json", "--name", "lost"],
        );
        assert_eq!(
            output.status.signal(),
            Some(9),
            "{point}: killed by SIGKILL"
        );
        assert_eq!(
            String::from_utf8_lossy(&output.stderr),
            format!("planc: fault injected: crash at {point}\n")
        );
        // The files are as the protocol leaves them at that point.
        assert_eq!(revision(&t, "s.json"), state_revision, "{point}");
        let (revisions, is_torn) = log_revisions(&t, "s.json");
        assert_eq!(revisions, (1..=log_lines).collect::<Vec<_>>(), "{point}");
        assert_eq!(is_torn, torn, "{point}");
        assert_eq!(temp_files(&t).len(), usize::from(temp_left), "{point}");
        // A reader sees the committed records only.
        assert_eq!(
            watched_revisions(&t, "s.json"),
            (1..=state_revision).collect::<Vec<_>>(),
            "{point}"
        );
        // The next writer repairs what the killed one left, then changes.
        t.ok(&["add", "s.json", "--name", "next"]);
        assert_eq!(revision(&t, "s.json"), state_revision + 1, "{point}");
        assert_one_record_per_revision(&t, "s.json");
        assert_eq!(temp_files(&t), Vec::<String>::new(), "{point}");
        let last = t.events("s.json").pop().unwrap();
        assert_eq!(last["op"], "addTask");
        assert_eq!(
            last["events"][0]["task_id"],
            if point == "renamed" { 5 } else { 4 }
        );
    }
}

/// SIGKILL at random moments against several writers at once: after each
/// round the log's committed part is one record per revision; once the next
/// writer has run, the whole log is.
#[test]
fn killed_concurrent_writers_never_lose_a_logged_revision() {
    const ROUNDS: u64 = 30;
    const WRITERS: usize = 4;
    let t = Test::temp().file("wide.plan", &wide_plan(1500));
    t.ok(&["init", "wide.plan", "-o", "s.json"]);
    let started = std::time::Instant::now();
    t.ok(&["add", "s.json", "--name", "timing"]);
    let span = started.elapsed().as_micros() as u64 * 3 / 2;
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut random = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    // Rounds where a kill landed between the log append and the rename.
    let mut mid_commit = 0;
    for round in 0..ROUNDS {
        let mut children: Vec<_> = (0..WRITERS)
            .map(|w| {
                planc()
                    .args(["run", "add", "s.json", "--name", &format!("{round}.{w}")])
                    .current_dir(t.dir())
                    .env("PLANC_LOCK_TIMEOUT", "120")
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect();
        if round % 2 == 0 {
            // Kill half of them, each at its own moment within a few writes' time.
            for child in children.iter_mut().take(WRITERS / 2) {
                std::thread::sleep(Duration::from_micros(random() % (span * 2)));
                let _ = child.kill();
            }
        } else {
            // Kill them all the moment the log grows: one of them is committing.
            let log = t.path("s.json.events.jsonl");
            let size = std::fs::metadata(&log).unwrap().len();
            let deadline = std::time::Instant::now() + Duration::from_secs(60);
            while std::fs::metadata(&log).map_or(size, |m| m.len()) == size
                && std::time::Instant::now() < deadline
            {
                std::hint::spin_loop();
            }
            for child in &mut children {
                let _ = child.kill();
            }
        }
        for mut child in children {
            let _ = child.wait();
        }
        let revision = revision(&t, "s.json");
        let (revisions, torn) = log_revisions(&t, "s.json");
        if torn || revisions.last() > Some(&revision) {
            mid_commit += 1;
        }
        let committed: Vec<u64> = revisions
            .iter()
            .copied()
            .filter(|&r| r <= revision)
            .collect();
        assert_eq!(
            committed,
            (1..=revision).collect::<Vec<_>>(),
            "round {round}"
        );
        assert!(
            revisions.len() as u64 <= revision + 1,
            "round {round}: at most one record ahead of the state"
        );
    }
    t.ok(&["add", "s.json", "--name", "after the storm"]);
    assert_one_record_per_revision(&t, "s.json");
    assert_eq!(temp_files(&t), Vec::<String>::new());
    eprintln!("{mid_commit} of {ROUNDS} rounds left a record ahead of the state or a torn line");
    // The odd rounds kill every writer the moment the log grows, while one
    // of them commits: at least one of those kills must land between its
    // log record and its rename, or this test tested nothing.
    assert!(mid_commit > 0, "no kill landed mid-commit");
    let state = t.state("s.json");
    assert_eq!(
        state["tasks"].as_array().unwrap().len() as u64,
        1500 + revision(&t, "s.json") - 1,
        "the revision and the content agree"
    );
}

/// A full disk at each write: the change fails with STATE_IO, and the state,
/// the log and the directory are exactly as before.
#[test]
#[cfg_attr(
    not(debug_assertions),
    ignore = "faults are injected in debug builds only"
)]
fn a_failed_write_leaves_everything_as_it_was() {
    let t = Test::temp().file("wide.plan", &wide_plan(3));
    t.ok(&["init", "wide.plan", "-o", "s.json"]);
    t.ok(&["next", "s.json"]);
    let state = std::fs::read(t.path("s.json")).unwrap();
    let log = std::fs::read(t.path("s.json.events.jsonl")).unwrap();
    for point in ["state-write", "log-append", "log-half", "state-rename"] {
        let output = run_with_fault(
            &t,
            &format!("fail@{point}"),
            &["--json", "add", "s.json", "--name", "x"],
        );
        assert_eq!(output.status.code(), Some(1), "{point}");
        let envelope: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(envelope["error"]["code"], "STATE_IO", "{point}");
        let message = envelope["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("No space left on device"),
            "{point}: {message}"
        );
        assert_eq!(
            std::fs::read(t.path("s.json")).unwrap(),
            state,
            "{point}: state untouched"
        );
        assert_eq!(
            std::fs::read(t.path("s.json.events.jsonl")).unwrap(),
            log,
            "{point}: log untouched"
        );
        assert_eq!(
            temp_files(&t),
            Vec::<String>::new(),
            "{point}: no temporary file left"
        );
    }
    t.ok(&["add", "s.json", "--name", "x"]);
    assert_one_record_per_revision(&t, "s.json");
}

/// `init --force` killed between its state and its log, and `init` whose log
/// cannot be written: the next change starts the log over from the new state.
#[cfg(unix)]
#[test]
#[cfg_attr(
    not(debug_assertions),
    ignore = "faults are injected in debug builds only"
)]
fn an_interrupted_init_gets_its_log_from_the_next_change() {
    use std::os::unix::process::ExitStatusExt;
    let t = Test::temp().file("wide.plan", &wide_plan(3));
    t.ok(&["init", "wide.plan", "-o", "s.json"]);
    t.ok(&["next", "s.json"]);
    t.ok(&["next", "s.json"]);
    let output = run_with_fault(
        &t,
        "crash@init-log",
        &["init", "wide.plan", "-o", "s.json", "--force"],
    );
    assert_eq!(output.status.signal(), Some(9));
    assert_eq!(revision(&t, "s.json"), 1);
    assert_eq!(
        log_revisions(&t, "s.json").0,
        [1, 2, 3],
        "the old state's log"
    );
    t.ok(&["next", "s.json"]);
    assert_one_record_per_revision(&t, "s.json");
    let events = t.events("s.json");
    assert_eq!(events[0]["op"], "init");
    assert_eq!(events[0]["at"], t.state("s.json")["meta"]["created_at"]);

    let t = Test::temp().file("wide.plan", &wide_plan(3));
    let output = run_with_fault(
        &t,
        "fail@init-log",
        &["--json", "init", "wide.plan", "-o", "s.json"],
    );
    assert_eq!(output.status.code(), Some(1));
    let envelope: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(envelope["error"]["message"]
        .as_str()
        .unwrap()
        .starts_with("created s.json, but cannot start its event log "));
    t.ok(&["next", "s.json"]);
    assert_one_record_per_revision(&t, "s.json");
}

/// A writer stopped (SIGSTOP) while holding the lock: others give up after
/// the lock timeout with STATE_LOCKED naming the lock file, instead of
/// hanging; once it goes on, everything works.
#[cfg(unix)]
#[test]
#[cfg_attr(
    not(debug_assertions),
    ignore = "faults are injected in debug builds only"
)]
fn a_stopped_lock_holder_makes_others_time_out() {
    use std::io::BufReader;
    let t = Test::temp().file("wide.plan", &wide_plan(3));
    t.ok(&["init", "wide.plan", "-o", "s.json"]);
    let mut holder = planc()
        .args(["run", "next", "s.json"])
        .current_dir(t.dir())
        .env("PLANC_FAULT", "stop@locked")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _reap = KillOnPanic(holder.id());
    let mut holder_err = BufReader::new(holder.stderr.take().unwrap());
    wait_for_line(&mut holder_err, "planc: fault injected: stop at locked");

    let lock = std::fs::canonicalize(t.dir()).unwrap().join("s.json.lock");
    let envelope = t.op(
        &["--lock-timeout", "0.2", "add", "s.json", "--name", "x"],
        1,
    );
    assert_eq!(
        envelope["error"],
        serde_json::json!({
            "code": "STATE_LOCKED",
            "message": format!(
                "another writer holds the lock {} (gave up after 0.2 s; a writer may be stopped \
                 or hung: --lock-timeout SECONDS or PLANC_LOCK_TIMEOUT waits longer)",
                lock.display()
            ),
            "details": {"path": lock.display().to_string(), "timeout_seconds": 0.2},
        })
    );
    // The environment sets it too; a wait over a second is announced.
    let run = planc()
        .args(["run", "skip", "s.json", "1"])
        .current_dir(t.dir())
        .env("PLANC_LOCK_TIMEOUT", "1.3")
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(
        stderr.lines().collect::<Vec<_>>(),
        [
            format!(
                "waiting for the lock {} (another planc is changing the state)…",
                lock.display()
            ),
            format!(
                "error[STATE_LOCKED]: another writer holds the lock {} (gave up after 1.3 s; a \
                 writer may be stopped or hung: --lock-timeout SECONDS or PLANC_LOCK_TIMEOUT waits \
                 longer)",
                lock.display()
            )
        ]
    );
    // Queries need no lock.
    assert_eq!(t.ok(&["status", "s.json"])["revision"], 1);
    assert_eq!(
        t.planc(&["run", "--lock-timeout", "soon", "status", "s.json"])
            .code,
        2
    );

    signal(holder.id(), "CONT");
    assert!(holder.wait().unwrap().success());
    t.ok(&["add", "s.json", "--name", "x"]);
    assert_one_record_per_revision(&t, "s.json");
}

/// The lock file removed while a writer holds it (and another waits), at
/// the last moment of its change (its log record appended, its state not
/// yet renamed in): a newcomer does not get in beside it, as the directory
/// stays locked; it waits, and every change goes in, each once. Every
/// temporary file has its own name.
#[cfg(unix)]
#[test]
#[cfg_attr(
    not(debug_assertions),
    ignore = "faults are injected in debug builds only"
)]
fn a_lock_file_removed_under_writers_lets_no_two_in() {
    use std::io::BufReader;
    let t = Test::temp().file("wide.plan", &wide_plan(3));
    t.ok(&["init", "wide.plan", "-o", "s.json"]);
    let spawn = |args: &[&str], fault: Option<&str>| {
        let mut command = planc();
        command
            .arg("run")
            .args(args)
            .current_dir(t.dir())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(fault) = fault {
            command.env("PLANC_FAULT", fault);
        }
        command.spawn().unwrap()
    };
    // A holds the lock, stopped just before its commit point.
    let mut a = spawn(
        &["--json", "add", "s.json", "--name", "by A"],
        Some("stop@state-rename"),
    );
    let _reap_a = KillOnPanic(a.id());
    let mut a_err = BufReader::new(a.stderr.take().unwrap());
    wait_for_line(&mut a_err, "planc: fault injected: stop at state-rename");
    assert_eq!(temp_files(&t).len(), 1);
    // B waits for it.
    let waiter = |name: &str| {
        let mut child = spawn(
            &["--lock-timeout", "30", "add", "s.json", "--name", name],
            None,
        );
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        wait_for_line(&mut stderr, "waiting for the lock");
        child
    };
    let b = waiter("by B");
    let _reap_b = KillOnPanic(b.id());
    // The lock file goes; C, who could lock a fresh one, waits too (with
    // the lock file alone, C got in, and A's rename then dropped C's task).
    std::fs::remove_file(t.path("s.json.lock")).unwrap();
    let c = waiter("by C");
    let _reap_c = KillOnPanic(c.id());
    // A goes on and commits; then B and C, each after the other.
    signal(a.id(), "CONT");
    let a = a.wait_with_output().unwrap();
    assert_eq!(a.status.code(), Some(0));
    let envelope: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
    assert_eq!(envelope["success"], true);
    assert!(b.wait_with_output().unwrap().status.success());
    assert!(c.wait_with_output().unwrap().status.success());
    let mut names: Vec<String> = t.state("s.json")["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    names[4..].sort();
    assert_eq!(
        names,
        ["Task 0", "Task 1", "Task 2", "by A", "by B", "by C"]
    );
    assert_one_record_per_revision(&t, "s.json");
    assert_eq!(temp_files(&t), Vec::<String>::new());
}

/// A state reached through a symlink: the lock, the log and the temporary
/// files are beside the real file, and the link stays a link.
#[cfg(unix)]
#[test]
fn a_state_through_a_symlink_is_the_real_file() {
    let t = Test::temp().file("wide.plan", &wide_plan(3));
    std::fs::create_dir(t.path("real")).unwrap();
    t.ok(&["init", "wide.plan", "-o", "real/s.json"]);
    std::os::unix::fs::symlink("real/s.json", t.path("link.json")).unwrap();
    t.ok(&["next", "link.json"]);
    t.ok(&["next", "real/s.json"]);
    assert!(std::fs::symlink_metadata(t.path("link.json"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(revision(&t, "real/s.json"), 3);
    assert_eq!(log_revisions(&t, "real/s.json").0, [1, 2, 3]);
    assert!(!t.path("link.json.lock").exists());
    assert!(!t.path("link.json.events.jsonl").exists());
    assert_eq!(watched_revisions(&t, "link.json"), [1, 2, 3]);
    // init through a dangling link creates its target.
    std::os::unix::fs::symlink("real/new.json", t.path("new.json")).unwrap();
    t.ok(&["init", "wide.plan", "-o", "new.json"]);
    assert!(std::fs::symlink_metadata(t.path("new.json"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(log_revisions(&t, "real/new.json").0, [1]);
}

/// `plan` and `plan.json` are two states with two locks and two logs.
#[test]
fn states_named_alike_share_nothing() {
    let t = Test::temp().file("wide.plan", &wide_plan(3));
    t.ok(&["init", "wide.plan", "-o", "plan"]);
    t.ok(&["init", "wide.plan", "-o", "plan.json"]);
    t.ok(&["next", "plan"]);
    t.ok(&["next", "plan.json"]);
    t.ok(&["next", "plan.json"]);
    assert_one_record_per_revision(&t, "plan");
    assert_one_record_per_revision(&t, "plan.json");
    assert_eq!(revision(&t, "plan"), 2);
    assert_eq!(revision(&t, "plan.json"), 3);
}

/// A state directory from planc 0.1 (`s.events.jsonl`, `s.lock`): `watch`
/// reads the old log, and the next change moves it to its new name.
#[test]
fn an_old_log_is_moved_to_its_new_name() {
    let t = Test::temp().file("wide.plan", &wide_plan(3));
    t.ok(&["init", "wide.plan", "-o", "s.json"]);
    t.ok(&["next", "s.json"]);
    std::fs::rename(t.path("s.json.events.jsonl"), t.path("s.events.jsonl")).unwrap();
    assert_eq!(watched_revisions(&t, "s.json"), [1, 2]);
    t.ok(&["next", "s.json"]);
    assert!(!t.path("s.events.jsonl").exists());
    assert_one_record_per_revision(&t, "s.json");
}

/// A read-only state file is refused, not silently replaced; the mode of a
/// writable one is kept across changes.
#[cfg(unix)]
#[test]
fn a_read_only_state_is_refused_and_modes_are_kept() {
    use std::os::unix::fs::PermissionsExt;
    let t = Test::temp().file("wide.plan", &wide_plan(3));
    t.ok(&["init", "wide.plan", "-o", "s.json"]);
    let set_mode = |mode| {
        std::fs::set_permissions(t.path("s.json"), std::fs::Permissions::from_mode(mode)).unwrap()
    };
    let mode = || {
        std::fs::metadata(t.path("s.json"))
            .unwrap()
            .permissions()
            .mode()
            & 0o7777
    };
    set_mode(0o640);
    t.ok(&["next", "s.json"]);
    assert_eq!(mode(), 0o640);
    // Root changing someone else's state leaves it theirs.
    let root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .unwrap()
        .stdout
        == b"0\n";
    if root {
        use std::os::unix::fs::MetadataExt;
        std::os::unix::fs::chown(t.path("s.json"), Some(65534), Some(65534)).unwrap();
        t.ok(&["skip", "s.json", "3"]);
        let metadata = std::fs::metadata(t.path("s.json")).unwrap();
        assert_eq!((metadata.uid(), metadata.gid()), (65534, 65534));
        assert_eq!(mode(), 0o640);
    }
    set_mode(0o444);
    let before = std::fs::read(t.path("s.json")).unwrap();
    let envelope = t.op(&["next", "s.json"], 1);
    assert_eq!(
        envelope["error"],
        serde_json::json!({
            "code": "STATE_IO",
            "message": "s.json is read-only; make it writable (chmod u+w) to change it",
            "details": {"path": "s.json", "access": "write"},
        })
    );
    assert_eq!(
        t.op(&["init", "wide.plan", "-o", "s.json", "--force"], 1)["error"]["code"],
        "STATE_IO"
    );
    assert_eq!(std::fs::read(t.path("s.json")).unwrap(), before);
    assert_eq!(mode(), 0o444);
    assert_eq!(
        t.ok(&["status", "s.json"])["revision"],
        if root { 3 } else { 2 },
        "reading still works"
    );
    assert_one_record_per_revision(&t, "s.json");
}

/// Counters at their largest value refuse the change and change nothing.
#[test]
fn counters_at_their_largest_value_change_nothing() {
    let t = Test::temp().file("wide.plan", &wide_plan(3));
    let cases: [(&str, &[&str]); 2] = [
        ("revision", &["next", "s.json"]),
        (
            "iteration_count",
            &["observe", "s.json", "--message", "[Done]"],
        ),
    ];
    for (field, op) in cases {
        t.ok(&["init", "wide.plan", "-o", "s.json", "--force"]);
        let mut state = t.state("s.json");
        state["state"][field] = serde_json::json!(u64::MAX);
        std::fs::write(
            t.path("s.json"),
            serde_json::to_string_pretty(&state).unwrap(),
        )
        .unwrap();
        let before = std::fs::read(t.path("s.json")).unwrap();
        let log = std::fs::read(t.path("s.json.events.jsonl")).unwrap();
        let envelope = t.op(op, 1);
        assert_eq!(envelope["error"]["code"], "COUNTER_OVERFLOW", "{field}");
        assert_eq!(
            envelope["error"]["details"],
            serde_json::json!({"counter": format!("state.{field}"), "max": u64::MAX})
        );
        assert_eq!(std::fs::read(t.path("s.json")).unwrap(), before, "{field}");
        assert_eq!(
            std::fs::read(t.path("s.json.events.jsonl")).unwrap(),
            log,
            "{field}"
        );
    }
}

/// A state path that names a device or a FIFO is refused before it is read:
/// `/dev/zero` would fill memory and a FIFO with no writer would block.
#[cfg(unix)]
#[test]
fn a_state_that_is_not_a_file_is_refused_unread() {
    let t = Test::temp();
    let envelope = t.op(&["status", "/dev/zero"], 2);
    assert_eq!(
        envelope["error"]["message"],
        "cannot read /dev/zero: it is a device, not a file"
    );
    assert_eq!(envelope["error"]["code"], "STATE_IO");

    let fifo = std::ffi::CString::new(t.dir().join("s.json").to_str().unwrap()).unwrap();
    // SAFETY: `fifo` is a valid C string.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let envelope = t.op(&["next", "s.json"], 2);
    assert_eq!(
        envelope["error"]["message"],
        "cannot read s.json: it is a pipe (FIFO), not a file"
    );
}

/// What `observe` and `replan` read from standard input is bounded like a file.
#[cfg(unix)]
#[test]
fn standard_input_is_read_within_the_file_limit() {
    let t = Test::temp();
    t.ok(&[
        "init",
        &support::repo("examples/jd_keyboard.plan"),
        "-o",
        "s.json",
    ]);
    for args in [&["observe", "s.json"][..], &["replan", "s.json", "-"]] {
        let run = planc()
            .arg("run")
            .args(args)
            .current_dir(t.dir())
            .stdin(std::fs::File::open("/dev/zero").unwrap())
            .output()
            .unwrap();
        assert_eq!(run.status.code(), Some(2), "{args:?}");
        assert_eq!(
            String::from_utf8_lossy(&run.stderr),
            "error: cannot read standard input: it is larger than 67108864 bytes, the most planc \
             reads from one file\n"
        );
    }
    assert_eq!(t.ok(&["status", "s.json"])["revision"], 1);
}
