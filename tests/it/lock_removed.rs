//! The state's lock file deleted again and again while writers queue: no
//! acknowledged change is lost, and the event log has no gap
//! (docs/runner.md, persistence and concurrency).

use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support::{planc, Test};

/// 8 writer processes add tasks while a thread keeps deleting `s.json.lock`:
/// every add that succeeded is in the state, and the log holds one record
/// per revision.
#[test]
fn a_lock_file_deleted_under_eight_writers_loses_no_acknowledged_add() {
    const WRITERS: usize = 8;
    const ADDS: usize = 8;
    let t = Test::temp().file("p.plan", "plan p {\n    goal \"g\"\n    task a \"A\"\n}\n");
    t.ok(&["init", "p.plan", "-o", "s.json"]);
    let stop = Arc::new(AtomicBool::new(false));
    let lock = t.path("s.json.lock");
    let deleter = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut deleted = 0;
            while !stop.load(Ordering::Relaxed) {
                if std::fs::remove_file(&lock).is_ok() {
                    deleted += 1;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            deleted
        })
    };
    let started = Instant::now();
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let dir = t.dir().to_path_buf();
            std::thread::spawn(move || {
                let mut acknowledged = Vec::new();
                for k in 0..ADDS {
                    let name = format!("added by {w}.{k}");
                    let status = planc()
                        .args(["run", "add", "s.json", "--name", &name])
                        .current_dir(&dir)
                        .env("PLANC_LOCK_TIMEOUT", "120")
                        .stdout(Stdio::null())
                        .stderr(Stdio::null())
                        .status()
                        .unwrap();
                    if status.success() {
                        acknowledged.push(name);
                    }
                }
                acknowledged
            })
        })
        .collect();
    let acknowledged: Vec<String> = writers
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect();
    stop.store(true, Ordering::Relaxed);
    let deleted = deleter.join().unwrap();
    eprintln!(
        "{} of {} adds acknowledged in {:?}, the lock file deleted {deleted} times",
        acknowledged.len(),
        WRITERS * ADDS,
        started.elapsed()
    );
    assert!(deleted > 0, "the lock file was deleted under the writers");
    let state = t.state("s.json");
    let names: Vec<&str> = state["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|task| task["name"].as_str().unwrap())
        .collect();
    let lost: Vec<&String> = acknowledged
        .iter()
        .filter(|name| !names.contains(&name.as_str()))
        .collect();
    assert_eq!(lost, Vec::<&String>::new(), "acknowledged adds lost");
    // Every add is acknowledged: the lock held is the directory's, which
    // deleting the lock file does not take away.
    assert_eq!(acknowledged.len(), WRITERS * ADDS);
    let revision = state["state"]["revision"].as_u64().unwrap();
    let logged: Vec<u64> = t
        .events("s.json")
        .iter()
        .map(|record| record["revision"].as_u64().unwrap())
        .collect();
    assert_eq!(
        logged,
        (1..=revision).collect::<Vec<_>>(),
        "the log has gaps"
    );
    assert_eq!(revision, 1 + (WRITERS * ADDS) as u64);
}
