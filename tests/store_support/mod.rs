//! What the plan store tests share: plans to store, and the backends to
//! store them in (each in a temporary directory of its own).

#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex, PoisonError, Weak};

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
    _dir: Guard,
}

/// What keeps a backend alive.
pub enum Guard {
    Dir(tempfile::TempDir),
    Cluster(Arc<Cluster>),
}

impl Backend {
    /// One JSON state file.
    pub fn json_file() -> Backend {
        let dir = tempfile::tempdir().unwrap();
        Backend {
            url: dir.path().join("state.json").display().to_string(),
            multi: false,
            commit_ordered: true,
            _dir: Guard::Dir(dir),
        }
    }

    /// A directory of JSON state files.
    pub fn json_dir() -> Backend {
        let dir = tempfile::tempdir().unwrap();
        Backend {
            url: format!("dir:{}", dir.path().join("plans").display()),
            multi: true,
            commit_ordered: true,
            _dir: Guard::Dir(dir),
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
            _dir: Guard::Dir(dir),
        }
    }
}

/// A throwaway PostgreSQL cluster under a temporary directory: `initdb`,
/// `pg_ctl start` on a Unix socket in that directory (no TCP), stopped when
/// the last test using it is done. As root, the server runs as the
/// `postgres` user (or `nobody`), which owns the directory.
pub struct Cluster {
    bin: PathBuf,
    data: PathBuf,
    socket: PathBuf,
    port: u16,
    user: Option<String>,
    databases: AtomicUsize,
    dir: tempfile::TempDir,
}

impl Cluster {
    /// The cluster the tests of this binary share; `None` (saying why on
    /// standard error) when PostgreSQL is not installed.
    pub fn shared() -> Option<Arc<Cluster>> {
        static SHARED: Mutex<Weak<Cluster>> = Mutex::new(Weak::new());
        let mut shared = SHARED.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(cluster) = shared.upgrade() {
            return Some(cluster);
        }
        let cluster = Arc::new(Cluster::start(&["-c", "fsync=off"])?);
        *shared = Arc::downgrade(&cluster);
        Some(cluster)
    }

    /// A new cluster with the server settings `settings` (`-c name=value`…).
    pub fn start(settings: &[&str]) -> Option<Cluster> {
        let Some(initdb) = find_initdb() else {
            eprintln!(
                "skipped: no PostgreSQL server here (initdb is neither on PATH nor in \
                 /usr/lib/postgresql/*/bin); .ci/run installs Debian's postgresql"
            );
            return None;
        };
        let bin = initdb.parent().unwrap().to_path_buf();
        let dir = tempfile::Builder::new()
            .prefix("planc-pg-")
            .tempdir()
            .unwrap();
        let user = run_as();
        if let Some(user) = &user {
            let chown = Command::new("chown")
                .arg(user)
                .arg(dir.path())
                .status()
                .unwrap();
            assert!(chown.success(), "chown {user} {}", dir.path().display());
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let cluster = Cluster {
            data: dir.path().join("data"),
            socket: dir.path().to_path_buf(),
            bin,
            port,
            user,
            databases: AtomicUsize::new(0),
            dir,
        };
        cluster.command(
            "initdb",
            &[
                "-D",
                &cluster.data.display().to_string(),
                "-A",
                "trust",
                "-U",
                "planc",
                "-E",
                "UTF8",
                "--no-sync",
            ],
        );
        let mut options = format!(
            "-k {} -p {port} -c listen_addresses= -c max_connections=300",
            cluster.socket.display()
        );
        for setting in settings {
            options.push(' ');
            options.push_str(setting);
        }
        cluster.command(
            "pg_ctl",
            &[
                "start",
                "-w",
                "-D",
                &cluster.data.display().to_string(),
                "-l",
                &cluster.dir.path().join("log").display().to_string(),
                "-o",
                &options,
            ],
        );
        Some(cluster)
    }

    /// Runs one of the server's programs as the server's user.
    fn command(&self, program: &str, args: &[&str]) {
        let program = self.bin.join(program);
        let mut command = match &self.user {
            Some(user) => {
                let mut command = Command::new("runuser");
                command.args(["-u", user, "--"]).arg(&program);
                command
            }
            None => Command::new(&program),
        };
        let output = command.args(args).output().unwrap();
        assert!(
            output.status.success(),
            "{} {args:?}: {}{}",
            program.display(),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }

    /// The URL of database `name`.
    pub fn url(&self, name: &str) -> String {
        format!(
            "postgres:///{name}?host={}&port={}&user=planc",
            self.socket.display(),
            self.port
        )
    }

    /// A new empty database: its URL.
    pub fn database(&self) -> String {
        let name = format!(
            "t{}",
            self.databases
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst)
        );
        let mut client = postgres::Client::connect(&self.url("postgres"), postgres::NoTls)
            .expect("the cluster answers");
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .unwrap();
        self.url(&name)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.command(
            "pg_ctl",
            &[
                "stop",
                "-m",
                "immediate",
                "-D",
                &self.data.display().to_string(),
            ],
        );
    }
}

/// `initdb`: on PATH, or the newest of Debian's `/usr/lib/postgresql/*/bin`.
fn find_initdb() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join("initdb"))
            .find(|file| file.is_file())
    });
    if let Some(found) = on_path {
        return Some(std::fs::canonicalize(&found).unwrap_or(found));
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let version = entry.file_name().to_str()?.parse().ok()?;
            let initdb = entry.path().join("bin/initdb");
            initdb.is_file().then_some((version, initdb))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, initdb)| initdb)
}

/// The user to run the server as: none unless root (PostgreSQL refuses to
/// run as root), then `postgres` if there is one, else `nobody`.
fn run_as() -> Option<String> {
    let uid = Command::new("id").arg("-u").output().ok()?;
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        return None;
    }
    let postgres = Command::new("id").arg("postgres").output().ok()?;
    Some(
        if postgres.status.success() {
            "postgres"
        } else {
            "nobody"
        }
        .to_owned(),
    )
}

impl Backend {
    /// A new database on the shared cluster, if PostgreSQL is installed.
    pub fn postgres() -> Option<Backend> {
        let cluster = Cluster::shared()?;
        Some(Backend {
            url: cluster.database(),
            multi: true,
            commit_ordered: true,
            _dir: Guard::Cluster(cluster),
        })
    }
}
