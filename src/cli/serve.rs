//! `planc serve`: a store's plans over HTTP (MCP, JSON API, SSE, web view).

use std::net::SocketAddr;
use std::time::Duration;

use clap::Args;

use super::output;
use super::{EXIT_OK, EXIT_USAGE};

/// The store `planc serve` opens when none is given.
pub const DEFAULT_STORE: &str = "sqlite:.planc/plans.db";

#[derive(Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ServeArgs {
    #[command(subcommand)]
    command: Option<ServeCommand>,
    /// Where to listen (ADDR:PORT; port 0 picks a free one)
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:7411")]
    listen: SocketAddr,
    /// The store of plans: sqlite:PATH, postgres://…, or a directory of
    /// JSON states (dir:PATH)
    #[arg(long, value_name = "URL", env = "PLANC_STORE", default_value = DEFAULT_STORE)]
    store: String,
    /// The bearer token every request must carry, with every scope (at
    /// least 16 characters; a token is required to listen on an address
    /// other than loopback)
    #[arg(
        long,
        value_name = "TOKEN",
        env = "PLANC_TOKEN",
        hide_env_values = true
    )]
    token: Option<String>,
    /// A file of tokens with scopes: one a line, `sha256:HEX SCOPE
    /// [agent=NAME] [plans=ID,…]` (SCOPE read, work or admin; `planc serve
    /// hash-token` prints the hash)
    #[arg(long, value_name = "FILE", env = "PLANC_TOKENS")]
    tokens: Option<std::path::PathBuf>,
    /// The largest request body, in bytes (larger: 413)
    #[arg(long, value_name = "BYTES", default_value_t = planc::serve::DEFAULT_MAX_BODY)]
    max_body: usize,
    /// Requests per second one client address may make (more: 429); 0 for
    /// no limit
    #[arg(long, value_name = "N", default_value_t = planc::serve::DEFAULT_RATE_LIMIT)]
    rate_limit: u32,
    /// Another host name requests may be addressed to (the Host header);
    /// repeat for more
    #[arg(long, value_name = "NAME")]
    allow_host: Vec<String>,
    /// A web origin besides the server's own that may call it
    /// (https://example.com); repeat for more
    #[arg(long, value_name = "ORIGIN")]
    allow_origin: Vec<String>,
    /// Seconds between keep-alive comments on idle event streams
    #[arg(long, value_name = "SECONDS", default_value_t = 15)]
    keep_alive: u64,
    /// Seconds a request's head may take to arrive (also how long a
    /// kept-alive connection waits for its next request)
    #[arg(long, value_name = "SECONDS", default_value_t = planc::serve::connections::DEFAULT_HEADER_TIMEOUT.as_secs())]
    header_timeout: u64,
    /// Seconds a connection may sit with no byte read or written before it
    /// is closed
    #[arg(long, value_name = "SECONDS", default_value_t = planc::serve::connections::DEFAULT_IDLE_TIMEOUT.as_secs())]
    idle_timeout: u64,
    /// The most connections open at once; more wait to be accepted
    /// [default: three quarters of the open-file limit]
    #[arg(long, value_name = "N")]
    max_connections: Option<usize>,
    /// Seconds an MCP session may go without a request before it is closed
    #[arg(long, value_name = "SECONDS", default_value_t = planc::serve::sessions::DEFAULT_SESSION_IDLE.as_secs())]
    session_idle: u64,
    /// The most MCP sessions at once; a new one past it closes the session
    /// idle longest
    #[arg(long, value_name = "N", default_value_t = planc::serve::sessions::DEFAULT_MAX_SESSIONS)]
    max_sessions: usize,
}

#[derive(clap::Subcommand)]
enum ServeCommand {
    /// Print the hash of the token read from standard input (one line), as
    /// a tokens file (`--tokens`) holds it
    HashToken,
}

/// `planc serve hash-token`: the hash of the token on standard input.
fn hash_token() -> i32 {
    let mut line = String::new();
    if let Err(e) = std::io::stdin().read_line(&mut line) {
        output::fatal(&format!("cannot read the token from standard input: {e}"));
        return EXIT_USAGE;
    }
    let token = line.strip_suffix('\n').unwrap_or(&line);
    let token = token.strip_suffix('\r').unwrap_or(token);
    if let Err(message) = planc::serve::tokens::check_token(token) {
        output::fatal(&message);
        return EXIT_USAGE;
    }
    println!("{}", planc::serve::tokens::hash_token(token));
    EXIT_OK
}

/// The credentials of `--token` and `--tokens`.
fn credentials(args: &ServeArgs) -> Result<planc::serve::tokens::Credentials, String> {
    let mut credentials = planc::serve::tokens::Credentials::default();
    // An empty value is no token (an unset PLANC_TOKEN= in a script).
    if let Some(token) = args.token.as_deref().filter(|t| !t.is_empty()) {
        credentials
            .add_admin_token(token)
            .map_err(|message| format!("--token: {message}"))?;
    }
    if let Some(path) = &args.tokens {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the tokens file {}: {e}", path.display()))?;
        credentials.add_file(&text, &path.display().to_string())?;
    }
    Ok(credentials)
}

pub fn run(args: ServeArgs) -> i32 {
    if let Some(ServeCommand::HashToken) = args.command {
        return hash_token();
    }
    let mut config = planc::serve::Config::new(args.listen);
    config.credentials = match credentials(&args) {
        Ok(credentials) => credentials,
        Err(message) => {
            output::fatal(&message);
            return EXIT_USAGE;
        }
    };
    config.max_body = args.max_body;
    config.rate_limit = args.rate_limit;
    if !config.allowed_hosts.is_empty() || !args.allow_host.is_empty() {
        config
            .allowed_hosts
            .extend(args.allow_host.iter().map(|h| h.to_ascii_lowercase()));
    }
    config.allowed_origins = args.allow_origin;
    config.keep_alive = Duration::from_secs(args.keep_alive.max(1));
    config.connections.header_timeout = Duration::from_secs(args.header_timeout.max(1));
    config.connections.idle_timeout = Duration::from_secs(args.idle_timeout.max(1));
    config.sessions.idle = Duration::from_secs(args.session_idle.max(1));
    config.sessions.max = args.max_sessions.max(1);
    if let Some(max) = args.max_connections {
        config.connections.max_connections = max.max(1);
    }
    if let Err(message) = config.check() {
        output::fatal(&message);
        return EXIT_USAGE;
    }
    if let Some(path) = args
        .store
        .strip_prefix("sqlite://")
        .or_else(|| args.store.strip_prefix("sqlite:"))
    {
        if let Some(dir) = std::path::Path::new(path).parent() {
            if !dir.as_os_str().is_empty() {
                if let Err(e) = std::fs::create_dir_all(dir) {
                    output::fatal(&format!("cannot create {}: {e}", dir.display()));
                    return EXIT_USAGE;
                }
            }
        }
    }
    let store = match planc::runner::open_store(&args.store) {
        Ok(store) => store,
        Err(error) => {
            output::fatal(&error.message);
            return EXIT_USAGE;
        }
    };
    let url = store.url();
    crate::purge_freed_memory_at_once();
    planc::serve::on_large_read(crate::give_back_freed_memory);
    let ready = |bound: SocketAddr| {
        eprintln!("planc serve: listening on http://{bound} (store {url})");
    };
    match planc::serve::run(config, store, ready) {
        Ok(()) => EXIT_OK,
        Err(message) => {
            output::fatal(&message);
            EXIT_USAGE
        }
    }
}
