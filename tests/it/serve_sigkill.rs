//! SIGKILL of `planc serve` mid-load loses nothing acknowledged: agents on
//! keep-alive connections start and complete tasks
//! (`POST /api/plans/{id}/ops/startNextTask`, then `completeTask`) and
//! record every change the server acknowledged; the server is killed
//! (SIGKILL, no chance to flush) while they run, started again on the same
//! store, and every acknowledged change must be in the plan's state and in
//! its event log, in each agent's order, the log's revisions without a gap.
//! On SQLite (one server) and on PostgreSQL (two servers, one killed; skipped
//! where PostgreSQL is not installed).

#![cfg(unix)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::serve_support::{store_url, EventStream, Server};
use crate::store_support::{wide_plan, Cluster};

/// Agents working at once.
const AGENTS: usize = 8;
/// Tasks in the plan: more than the agents finish before the kill.
const TASKS: usize = 400;
/// The acknowledged changes to wait for before the kill.
const BEFORE_KILL: usize = 60;

/// One acknowledged change: its operation and task.
#[derive(Clone, Debug, PartialEq)]
struct Acked {
    op: &'static str,
    task: u64,
}

/// A keep-alive HTTP/1.1 connection; any failure (the server gone) is an
/// `Err`.
struct Conn {
    addr: String,
    reader: BufReader<TcpStream>,
}

impl Conn {
    fn open(addr: &str) -> std::io::Result<Conn> {
        let stream = TcpStream::connect(addr)?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(Duration::from_secs(30)))?;
        Ok(Conn {
            addr: addr.to_owned(),
            reader: BufReader::new(stream),
        })
    }

    /// POSTs `body` to `path`: the status and the JSON answer.
    fn post(&mut self, path: &str, body: &Value) -> std::io::Result<(u16, Value)> {
        let body = body.to_string();
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            self.addr,
            body.len()
        );
        let stream = self.reader.get_mut();
        stream.write_all(head.as_bytes())?;
        stream.write_all(body.as_bytes())?;
        let mut line = String::new();
        if self.reader.read_line(&mut line)? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        let status = line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or(std::io::ErrorKind::InvalidData)?;
        let mut length = 0;
        loop {
            let mut line = String::new();
            if self.reader.read_line(&mut line)? == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((k, v)) = line.split_once(':') {
                if k.eq_ignore_ascii_case("content-length") {
                    length = v.trim().parse().unwrap_or(0);
                }
            }
        }
        let mut answer = vec![0; length];
        self.reader.read_exact(&mut answer)?;
        let answer =
            serde_json::from_slice(&answer).map_err(|_| std::io::ErrorKind::InvalidData)?;
        Ok((status, answer))
    }
}

/// Agent `name` on `addr`: starts and completes tasks of plan `w` until
/// `stop` or its server is gone, recording each acknowledged change in
/// `acked` (and counting it in `count`).
fn agent(
    addr: &str,
    name: &str,
    stop: &AtomicBool,
    count: &AtomicUsize,
    acked: &Mutex<Vec<Acked>>,
) {
    let Ok(mut conn) = Conn::open(addr) else {
        return;
    };
    let record = |op, task| {
        acked.lock().unwrap().push(Acked { op, task });
        count.fetch_add(1, Ordering::SeqCst);
    };
    while !stop.load(Ordering::SeqCst) {
        let Ok((status, answer)) =
            conn.post("/api/plans/w/ops/startNextTask", &json!({"agent": name}))
        else {
            return;
        };
        assert_eq!(status, 200, "{answer}");
        let Some(task) = answer["data"]["task"]["id"].as_u64() else {
            return; // nothing left
        };
        record("startNextTask", task);
        let body = json!({"agent": name, "task_id": task, "result": "done"});
        let Ok((status, answer)) = conn.post("/api/plans/w/ops/completeTask", &body) else {
            return;
        };
        assert_eq!(status, 200, "{answer}");
        record("completeTask", task);
    }
}

/// What each agent (by name) had acknowledged.
type Ledger = Vec<(String, Arc<Mutex<Vec<Acked>>>)>;

/// Runs [`AGENTS`] agents, agent `n` on `addrs[n % len]`, kills `victim`
/// once [`BEFORE_KILL`] changes are acknowledged (the others go on a
/// little), and stops them: what each acknowledged.
fn load_and_kill(addrs: &[String], victim: &mut Server) -> Ledger {
    let stop = Arc::new(AtomicBool::new(false));
    let count = Arc::new(AtomicUsize::new(0));
    let ledger: Ledger = (0..AGENTS)
        .map(|n| (format!("a{n}"), Arc::default()))
        .collect();
    let threads: Vec<_> = ledger
        .iter()
        .enumerate()
        .map(|(n, (name, acked))| {
            let (addr, name) = (addrs[n % addrs.len()].clone(), name.clone());
            let (stop, count, acked) = (Arc::clone(&stop), Arc::clone(&count), Arc::clone(acked));
            std::thread::spawn(move || agent(&addr, &name, &stop, &count, &acked))
        })
        .collect();
    let began = Instant::now();
    while count.load(Ordering::SeqCst) < BEFORE_KILL && began.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(5));
    }
    let at_kill = count.load(Ordering::SeqCst);
    // SIGKILL.
    victim.child.kill().expect("SIGKILL");
    victim.child.wait().expect("killed");
    std::thread::sleep(Duration::from_millis(200));
    stop.store(true, Ordering::SeqCst);
    for thread in threads {
        thread.join().expect("an agent");
    }
    assert!(
        at_kill >= BEFORE_KILL,
        "only {at_kill} changes acknowledged"
    );
    ledger
}

/// The plan's event log from `addr`, up to revision `revision`: each
/// change's (seq, op, task id).
fn event_log(addr: &str, revision: u64) -> Vec<(u64, String, Option<u64>)> {
    let mut stream = EventStream::open(addr, "/api/plans/w/events", &[]);
    assert_eq!(stream.status, 200);
    let mut log: Vec<(u64, String, Option<u64>)> = Vec::new();
    while log.last().map_or(0, |(seq, _, _)| *seq) < revision {
        let (_, data) = stream.next_json();
        let seq = data["seq"].as_u64().expect("a seq");
        if log.last().is_some_and(|(last, _, _)| *last == seq) {
            continue; // another event of the same change
        }
        let op = data["op"].as_str().unwrap_or_default().to_owned();
        log.push((seq, op, data["task_id"].as_u64()));
    }
    log
}

/// Checks the plan on `server` (started again on the store) against what
/// the agents acknowledged: every change in the log once, in each agent's
/// order, seqs 1..=revision; each task's state at least what was
/// acknowledged; and the plan takes a change again.
fn every_acknowledged_change_is_there(server: &Server, ledger: &Ledger) {
    let plan = server.get("/api/plans/w");
    assert_eq!(plan.status, 200, "{}", plan.text());
    let plan = plan.json();
    let revision = plan["data"]["state"]["revision"]
        .as_u64()
        .expect("a revision");
    let log = event_log(&server.addr, revision);
    let seqs: Vec<u64> = log.iter().map(|(seq, _, _)| *seq).collect();
    assert_eq!(seqs, (1..=revision).collect::<Vec<_>>(), "gaps in the log");
    let position: HashMap<(String, u64), u64> = log
        .iter()
        .filter_map(|(seq, op, task)| Some(((op.clone(), (*task)?), *seq)))
        .collect();
    let status: HashMap<u64, String> = plan["data"]["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .map(|t| {
            (
                t["id"].as_u64().unwrap(),
                t["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let mut total = 0;
    for (name, acked) in ledger {
        let acked = acked.lock().unwrap();
        total += acked.len();
        let mut last = 0;
        for change in acked.iter() {
            let key = (change.op.to_owned(), change.task);
            let Some(&seq) = position.get(&key) else {
                panic!("{name}'s acknowledged {change:?} is not in the event log");
            };
            assert!(seq > last, "{name}'s {change:?} at {seq}, before {last}");
            last = seq;
            let expected: &[&str] = match change.op {
                "completeTask" => &["completed"],
                _ => &["in_progress", "completed"],
            };
            assert!(
                expected.contains(&status[&change.task].as_str()),
                "{name}'s {change:?}: the task is {}",
                status[&change.task]
            );
        }
    }
    assert!(
        revision as usize > total,
        "{revision} ≤ {total} acknowledged"
    );
    // The store takes changes again, after the last.
    let started = server.op("w", "startNextTask", json!({"agent": "after"}));
    assert_eq!(started.status, 200, "{}", started.text());
    let again = server.get("/api/plans/w").json();
    assert_eq!(again["data"]["state"]["revision"], revision + 1);
}

#[test]
fn sigkill_of_a_sqlite_server_mid_load_loses_nothing_acknowledged() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let store = store_url(dir.path());
    let mut server = Server::start(&["--store", &store, "--rate-limit", "0"]);
    let created = server.post("/api/plans?id=w", &wide_plan(TASKS));
    assert_eq!(created.status, 201, "{}", created.text());
    let ledger = load_and_kill(&[server.addr.clone()], &mut server);
    drop(server);
    let again = Server::start(&["--store", &store, "--rate-limit", "0"]);
    every_acknowledged_change_is_there(&again, &ledger);
    let stderr = again.stderr.lock().unwrap().clone();
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn sigkill_of_one_of_two_postgres_servers_mid_load_loses_nothing_acknowledged() {
    let Some(cluster) = Cluster::shared() else {
        return;
    };
    let url = cluster.database();
    let mut one = Server::start(&["--store", &url, "--rate-limit", "0"]);
    let two = Server::start(&["--store", &url, "--rate-limit", "0"]);
    let created = one.post("/api/plans?id=w", &wide_plan(TASKS));
    assert_eq!(created.status, 201, "{}", created.text());
    let ledger = load_and_kill(&[one.addr.clone(), two.addr.clone()], &mut one);
    drop(one);
    // The one left sees every change; so does the one started again.
    every_acknowledged_change_is_there(&two, &ledger);
    let again = Server::start(&["--store", &url, "--rate-limit", "0"]);
    let plan = again.get("/api/plans/w").json();
    let there = two.get("/api/plans/w").json();
    assert_eq!(plan["data"]["state"], there["data"]["state"]);
}

/// `GET /api/plans/{id}` (the export) written from the plan's kept runner
/// after changes has the very bytes of the export read from the store's rows
/// by a server started afresh, and of its JSON read and written again (the
/// document's fields in their order, compact).
#[test]
fn the_export_from_the_kept_runner_is_the_export_from_the_rows() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let store = store_url(dir.path());
    let server = Server::start(&["--store", &store]);
    let created = server.post("/api/plans?id=w", &wide_plan(30));
    assert_eq!(created.status, 201, "{}", created.text());
    for n in 0..5 {
        let agent = json!({"agent": format!("a{n}"), "lease": 600});
        let started = server.op("w", "startNextTask", agent);
        assert_eq!(started.status, 200, "{}", started.text());
    }
    let done = json!({"agent": "a0", "task_id": 1, "result": "ünïcode \"quoted\"\n"});
    assert_eq!(server.op("w", "completeTask", done).status, 200);
    let kept = server.get("/api/plans/w");
    assert_eq!(kept.status, 200, "{}", kept.text());
    assert_eq!(kept.header("content-type"), Some("application/json"));
    assert_eq!(kept.json()["data"]["state"]["revision"], 7);
    drop(server);
    let fresh = Server::start(&["--store", &store]).get("/api/plans/w");
    assert_eq!(fresh.text(), kept.text());
    assert_eq!(serde_json::to_vec(&kept.json()).unwrap(), kept.body);
}
