//! `planc serve`: one process serving a store's plans over HTTP — MCP over
//! streamable HTTP (`/mcp`), a JSON API (`/api/plans…`), SSE event streams,
//! a live web view (`/`), `/health` and `/metrics`. Built on axum (the HTTP
//! stack rmcp's server transport uses) and tokio; every store call runs on
//! the blocking pool.
//!
//! What it guards (docs/serve.md, "Security"): a loopback address by
//! default; a bearer token required on any other, each token with a scope
//! (`scope.rs`, `tokens.rs`); the `Host` and `Origin` of every request (DNS
//! rebinding); the body size and each client's rate.

#![warn(missing_docs)]

mod api;
pub mod connections;
mod doc_cache;
pub mod events;
mod guard;
mod host;
mod mcp;
mod plain_errors;
mod plan_request;
mod reads;
pub mod scope;
pub mod sessions;
pub mod task_pages;
mod task_pages_kept;
pub mod tokens;

use std::net::{IpAddr, SocketAddr};
use std::sync::mpsc::Receiver;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::DefaultBodyLimit;
use axum::http::header;
use axum::response::{Html, IntoResponse};
use axum::routing::{get, post};
use axum::Router;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::sync::{broadcast, watch};
use tokio_util::sync::CancellationToken;

use crate::runner::{PlanStore, StoredEvent};

pub use mcp::{PlanServer, AGENT_HEADER, DIALECT_HEADER};
pub use reads::on_large_read;

/// The port `planc serve` listens on by default.
pub const DEFAULT_PORT: u16 = 7411;
/// The largest request body by default (bytes).
pub const DEFAULT_MAX_BODY: usize = 4 << 20;
/// Requests per second per client by default.
pub const DEFAULT_RATE_LIMIT: u32 = 1000;

/// How a server runs.
#[derive(Clone, Debug)]
pub struct Config {
    /// Where to listen.
    pub listen: SocketAddr,
    /// The bearer tokens requests must carry and what each grants
    /// (`--token`, `--tokens FILE`); none: no token is asked for.
    pub credentials: tokens::Credentials,
    /// The largest request body, in bytes.
    pub max_body: usize,
    /// Requests per second per client address (0: no limit).
    pub rate_limit: u32,
    /// The host names requests may be addressed to (empty: any).
    pub allowed_hosts: Vec<String>,
    /// Web origins besides the server's own that may call it.
    pub allowed_origins: Vec<String>,
    /// How often an idle SSE stream gets a keep-alive comment.
    pub keep_alive: Duration,
    /// How many connections, and how long each may wait or idle.
    pub connections: connections::ConnectionLimits,
    /// How many MCP sessions, and how long each may idle.
    pub sessions: sessions::SessionLimits,
}

impl Config {
    /// The defaults for `listen`: loopback names allowed as hosts when it
    /// is a loopback address, any host otherwise (the token guards it).
    pub fn new(listen: SocketAddr) -> Config {
        let allowed_hosts = if listen.ip().is_loopback() {
            vec![
                "localhost".to_owned(),
                "127.0.0.1".to_owned(),
                "::1".to_owned(),
            ]
        } else {
            Vec::new()
        };
        Config {
            listen,
            credentials: tokens::Credentials::default(),
            max_body: DEFAULT_MAX_BODY,
            rate_limit: DEFAULT_RATE_LIMIT,
            allowed_hosts,
            allowed_origins: Vec::new(),
            keep_alive: Duration::from_secs(15),
            connections: connections::ConnectionLimits::default(),
            sessions: sessions::SessionLimits::default(),
        }
    }

    /// Refuses what is unsafe: a non-loopback address without a token.
    pub fn check(&self) -> Result<(), String> {
        let ip: IpAddr = self.listen.ip();
        if !ip.is_loopback() && !self.credentials.required() {
            return Err(format!(
                "refusing to listen on {} without a token: anyone who reaches it could change every plan; \
                 set one with --token TOKEN or PLANC_TOKEN, or --tokens FILE (or listen on 127.0.0.1)",
                self.listen
            ));
        }
        Ok(())
    }
}

/// What every handler shares.
pub struct Shared {
    config: Config,
    store: Arc<dyn PlanStore>,
    metrics: guard::Metrics,
    /// What `/metrics` tells of the connections.
    connections: Arc<connections::ConnectionMetrics>,
    /// What `/metrics` tells of the MCP sessions.
    sessions: Arc<sessions::SessionMetrics>,
    limiter: guard::RateLimiter,
    /// Every committed change, as the store reports it.
    events: broadcast::Sender<StoredEvent>,
    /// Becomes true when the server stops: streams end.
    stop: watch::Receiver<bool>,
    /// The documents the paged reads last read.
    docs: doc_cache::DocCache,
}

/// The web view: one page, no build step.
const PAGE: &str = include_str!("page.html");

async fn page() -> impl IntoResponse {
    (
        [
            (header::CACHE_CONTROL, "no-store"),
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
            ),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        Html(PAGE),
    )
}

/// Serves `store` until SIGINT or SIGTERM; `ready` is called with the bound
/// address once the server listens. In-flight requests finish before it
/// returns, and every change it acknowledged is in the store.
///
/// The store is a blocking API (the PostgreSQL client runs its own small
/// runtime, which may not start on an async worker): the async side reaches
/// it only through `spawn_blocking`, it is subscribed to before the runtime
/// starts, and this function holds it until the runtime is gone, so that
/// its last handle is never dropped on a worker either.
pub fn run(
    config: Config,
    store: Arc<dyn PlanStore>,
    ready: impl FnOnce(SocketAddr),
) -> Result<(), String> {
    config.check()?;
    let committed = store.subscribe();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let served = runtime.block_on(serve(config, Arc::clone(&store), committed, ready));
    drop(runtime);
    drop(store);
    if served.is_ok() {
        #[allow(
            clippy::print_stderr,
            reason = "the server says it stopped, as it runs in the foreground"
        )]
        {
            eprintln!("planc serve: stopped");
        }
    }
    served
}

async fn serve(
    config: Config,
    store: Arc<dyn PlanStore>,
    committed: Receiver<StoredEvent>,
    ready: impl FnOnce(SocketAddr),
) -> Result<(), String> {
    let listener = connections::listen(config.listen)
        .map_err(|e| format!("cannot listen on {}: {e}", config.listen))?;
    let bound = listener
        .local_addr()
        .map_err(|e| format!("cannot read the bound address: {e}"))?;

    let (events, _) = broadcast::channel(4096);
    let (stop_tx, stop) = watch::channel(false);
    let shared = Arc::new(Shared {
        limiter: guard::RateLimiter::new(config.rate_limit),
        metrics: guard::Metrics::default(),
        connections: Arc::default(),
        sessions: Arc::default(),
        store: Arc::clone(&store),
        events: events.clone(),
        stop,
        docs: doc_cache::DocCache::default(),
        config: config.clone(),
    });
    forward_events(&shared, committed);

    let cancel = CancellationToken::new();
    let mcp_config = StreamableHttpServerConfig::default()
        // The guard checks Host and Origin for every route.
        .disable_allowed_hosts()
        .disable_allowed_origins()
        .with_max_request_body_bytes(config.max_body)
        .with_sse_keep_alive(Some(config.keep_alive))
        .with_cancellation_token(cancel.clone());
    let mcp_store = Arc::clone(&store);
    let mcp_service = StreamableHttpService::new(
        move || Ok(mcp::PlanServer::new(Arc::clone(&mcp_store))),
        Arc::new(sessions::BoundedSessions::new(
            config.sessions,
            Arc::clone(&shared.sessions),
        )),
        mcp_config,
    );

    let app = Router::new()
        .route("/", get(page))
        .route("/health", get(api::health))
        .route("/metrics", get(api::metrics))
        .route("/api/plans", get(api::list_plans).post(api::create_plan))
        .route(
            "/api/plans/{id}",
            get(api::get_plan).delete(api::delete_plan),
        )
        .route("/api/plans/{id}/tasks", get(reads::tasks))
        .route("/api/plans/{id}/summary", get(reads::plan_summary))
        .route("/api/plans/{id}/events", get(api::plan_events))
        .route("/api/plans/{id}/ops/{op}", post(api::apply_op))
        .route("/api/events", get(api::all_events))
        .route("/api/schema/events.json", get(api::events_schema))
        .nest_service("/mcp", mcp_service)
        .fallback(api::not_found)
        .layer(axum::middleware::from_fn(session_closed))
        .layer(DefaultBodyLimit::max(config.max_body))
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&shared),
            guard::guard,
        ))
        .with_state(Arc::clone(&shared));

    ready(bound);
    let stopped = shared.stop.clone();
    stop_on_signal(stop_tx, cancel);
    // An event stream quiet but for its keep-alive comments is not idle.
    let mut limits = config.connections;
    limits.idle_timeout = limits.idle_timeout.max(config.keep_alive * 2);
    connections::serve(
        listener,
        app,
        limits,
        Arc::clone(&shared.connections),
        stopped,
    )
    .await;
    Ok(())
}

/// `DELETE /mcp` ends a session: `204 No Content`, as other MCP servers
/// answer (rmcp says `202 Accepted`, which the official Python SDK logs as
/// "Session termination failed: 202" on every close).
async fn session_closed(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let closing = request.method() == axum::http::Method::DELETE && request.uri().path() == "/mcp";
    let mut response = next.run(request).await;
    if closing && response.status() == axum::http::StatusCode::ACCEPTED {
        *response.status_mut() = axum::http::StatusCode::NO_CONTENT;
        *response.body_mut() = axum::body::Body::empty();
    }
    response
}

/// Serves `server` over standard input and output until the client
/// disconnects (`planc mcp`): a store's plans ([`PlanServer::new`], the
/// connection one session bound to its plan as an HTTP session is), or one
/// state file's plan ([`PlanServer::one`]) — the tools, resources and
/// prompt of `/mcp` either way.
pub fn serve_stdio(server: PlanServer) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let served = runtime.block_on(crate::mcp::server::run_on_stdio(server.clone()));
    // The store's last handle is dropped off the async workers.
    drop(runtime);
    drop(server);
    served
}

/// Carries the store's committed changes to the streams (a thread: the
/// store's subscription blocks).
fn forward_events(shared: &Arc<Shared>, receiver: Receiver<StoredEvent>) {
    let sender = shared.events.clone();
    let weak = Arc::downgrade(shared);
    std::thread::Builder::new()
        .name("planc-events".to_owned())
        .spawn(move || {
            while let Ok(event) = receiver.recv() {
                let Some(shared) = weak.upgrade() else {
                    break;
                };
                shared
                    .metrics
                    .changes
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                // No stream listening is fine.
                let _ = sender.send(event);
            }
        })
        .ok();
}

/// On SIGINT or SIGTERM: tells the streams and connections to stop, and
/// rmcp's sessions to end.
fn stop_on_signal(stop: watch::Sender<bool>, cancel: CancellationToken) {
    tokio::spawn(async move {
        shutdown_signal().await;
        #[allow(
            clippy::print_stderr,
            reason = "a signal's effect is told where the server runs"
        )]
        {
            eprintln!("planc serve: stopping (finishing the requests in flight)");
        }
        let _ = stop.send(true);
        cancel.cancel();
    });
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
}
