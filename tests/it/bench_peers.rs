//! `scripts/bench-peers` keeps working: its no-peers mode generates the
//! inputs and runs planc on them (no installs, no timing asserted), and the
//! plans it writes are the ones `planc::generate` writes, so the peer
//! benchmark and `cargo bench --bench compile` measure the same plans.

use std::path::Path;
use std::process::Command;

const PLANC: &str = env!("CARGO_BIN_EXE_planc");

#[test]
fn bench_peers_script_generates_and_checks() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = tempfile::tempdir().unwrap();
    // --quick, but 1,000 tasks only: the test binary is a debug build.
    let run = Command::new("python3")
        .arg(root.join("scripts/bench-peers"))
        .args([
            "--quick",
            "--no-peers",
            "--sizes",
            "1000",
            "--planc",
            PLANC,
            "--out",
        ])
        .arg(out.path())
        .output()
        .expect("python3 runs scripts/bench-peers");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        run.status.success(),
        "bench-peers failed\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("| 1,000 | cyclic | planc check |"),
        "{stdout}"
    );
    assert!(!stdout.contains("killed"), "{stdout}");

    // The same plans as src/generate.rs.
    let plan = out.path().join("plan-1000.plan");
    let cyclic = out.path().join("plan-1000-cycle.plan");
    assert_eq!(
        std::fs::read_to_string(&plan).unwrap(),
        planc::generate::plan_source(1000, false)
    );
    assert_eq!(
        std::fs::read_to_string(&cyclic).unwrap(),
        planc::generate::plan_source(1000, true)
    );

    // And planc's verdicts on them, checked here as well as by the script.
    let check = |file: &Path| Command::new(PLANC).arg("check").arg(file).output().unwrap();
    let acyclic = check(&plan);
    assert_eq!(acyclic.status.code(), Some(0), "{acyclic:?}");
    let cycle = check(&cyclic);
    assert_eq!(cycle.status.code(), Some(1), "{cycle:?}");
    assert!(String::from_utf8_lossy(&cycle.stdout).contains("planc::cycle"));

    // The peers' inputs describe the same graph: one line per edge for
    // tsort, one entry per node (tasks and step join nodes) in the JSON.
    let pairs = std::fs::read_to_string(out.path().join("plan-1000.pairs")).unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("plan-1000.json")).unwrap())
            .unwrap();
    let nodes = json["tasks"].as_array().unwrap();
    let edges: usize = nodes
        .iter()
        .map(|n| n["dependencies"].as_array().unwrap().len())
        .sum();
    assert_eq!(pairs.lines().count(), edges);
    assert_eq!(
        nodes
            .iter()
            .filter(|n| n["id"].as_str().unwrap().starts_with('t'))
            .count(),
        1000
    );
}
