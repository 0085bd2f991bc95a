//! What the plan store tests share: plans to store, and the backends to
//! store them in (each in a temporary directory of its own).

#![allow(dead_code)]

use planc::document::PlanDocument;

/// A `.plan` source with `n` independent tasks.
pub fn wide_plan(n: usize) -> String {
    let mut text = String::from("plan wide {\n    goal \"Many independent tasks\"\n");
    for i in 0..n {
        text.push_str(&format!("    task t{i} \"Task {i}\"\n"));
    }
    text.push_str("}\n");
    text
}

/// The plan document of a `.plan` source without errors.
pub fn compile(source: &str) -> PlanDocument {
    let compilation = planc::compile::compile("test.plan", source, &Default::default());
    compilation.document().expect("a plan without errors")
}

/// A store to test: its URL, whether it holds many plans, and what keeps it
/// alive (a temporary directory).
pub struct Backend {
    pub url: String,
    pub multi: bool,
    /// Whether its feed is in commit order (a directory's is by time).
    pub commit_ordered: bool,
    _dir: tempfile::TempDir,
}

impl Backend {
    /// One JSON state file.
    pub fn json_file() -> Backend {
        let dir = tempfile::tempdir().unwrap();
        Backend {
            url: dir.path().join("state.json").display().to_string(),
            multi: false,
            commit_ordered: true,
            _dir: dir,
        }
    }

    /// A directory of JSON state files.
    pub fn json_dir() -> Backend {
        let dir = tempfile::tempdir().unwrap();
        Backend {
            url: format!("dir:{}", dir.path().join("plans").display()),
            multi: true,
            commit_ordered: false,
            _dir: dir,
        }
    }
}

impl Backend {
    /// A SQLite database file.
    pub fn sqlite() -> Backend {
        let dir = tempfile::tempdir().unwrap();
        Backend {
            url: format!("sqlite:{}", dir.path().join("plans.db").display()),
            multi: true,
            commit_ordered: true,
            _dir: dir,
        }
    }
}
