//! MCP sessions, bounded: rmcp's in-memory session manager, each session
//! closed after an idle time, and at most so many at once — at the cap,
//! a new session evicts the one idle longest. A closed, expired or evicted
//! session's id gets `404 Not Found`, as the MCP specification says of an
//! unknown session; the client starts a new one with `initialize`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::{
    EventStore, RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};

/// How long an MCP session may go without a request, by default.
pub const DEFAULT_SESSION_IDLE: Duration = Duration::from_secs(600);
/// The most MCP sessions at once, by default.
pub const DEFAULT_MAX_SESSIONS: usize = 1000;

/// How many sessions, and for how long.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionLimits {
    /// How long a session may go without a request before it is closed.
    pub idle: Duration,
    /// The most sessions at once.
    pub max: usize,
}

impl Default for SessionLimits {
    fn default() -> SessionLimits {
        SessionLimits {
            idle: DEFAULT_SESSION_IDLE,
            max: DEFAULT_MAX_SESSIONS,
        }
    }
}

/// What `/metrics` tells of the sessions.
#[derive(Debug, Default)]
pub struct SessionMetrics {
    /// Sessions open now.
    open: AtomicU64,
    /// Sessions closed after their idle time.
    expired: AtomicU64,
    /// Sessions closed to make room for a new one.
    evicted: AtomicU64,
}

impl SessionMetrics {
    /// The Prometheus text of the session gauge and counters.
    pub fn render(&self) -> String {
        let line = |name: &str, kind: &str, help: &str, value: &AtomicU64| {
            format!(
                "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {}\n",
                value.load(Ordering::Relaxed)
            )
        };
        [
            line(
                "planc_mcp_sessions_open",
                "gauge",
                "MCP sessions open now.",
                &self.open,
            ),
            line(
                "planc_mcp_sessions_expired_total",
                "counter",
                "MCP sessions closed after their idle time (--session-idle).",
                &self.expired,
            ),
            line(
                "planc_mcp_sessions_evicted_total",
                "counter",
                "MCP sessions closed at the cap (--max-sessions) to make room for a new one.",
                &self.evicted,
            ),
        ]
        .concat()
    }
}

/// rmcp's local session manager within [`SessionLimits`].
pub struct BoundedSessions {
    inner: LocalSessionManager,
    limits: SessionLimits,
    /// When each open session last saw a request.
    seen: Mutex<HashMap<SessionId, Instant>>,
    metrics: Arc<SessionMetrics>,
}

impl BoundedSessions {
    /// Sessions within `limits`, counted in `metrics`.
    pub fn new(limits: SessionLimits, metrics: Arc<SessionMetrics>) -> BoundedSessions {
        let mut inner = LocalSessionManager::default();
        // rmcp's worker ends a session that sees nothing for this long, and
        // then closes it here (`close_session`).
        inner.session_config.keep_alive = Some(limits.idle);
        BoundedSessions {
            inner,
            limits,
            seen: Mutex::new(HashMap::new()),
            metrics,
        }
    }

    /// Notes a request on session `id`.
    fn touch(&self, id: &SessionId) {
        if let Ok(mut seen) = self.seen.lock() {
            if let Some(at) = seen.get_mut(id) {
                *at = Instant::now();
            }
        }
    }

    /// Takes the session idle longest out of the count, if the count is at
    /// the cap: its id, to be closed.
    fn make_room(&self) -> Option<SessionId> {
        let mut seen = self.seen.lock().ok()?;
        if seen.len() < self.limits.max.max(1) {
            return None;
        }
        let oldest = seen
            .iter()
            .min_by_key(|(_, at)| **at)
            .map(|(id, _)| id.clone())?;
        seen.remove(&oldest);
        self.metrics
            .open
            .store(seen.len() as u64, Ordering::Relaxed);
        Some(oldest)
    }

    /// Forgets session `id`: whether it had gone its idle time unseen.
    fn forget(&self, id: &SessionId) {
        let Ok(mut seen) = self.seen.lock() else {
            return;
        };
        if let Some(at) = seen.remove(id) {
            if at.elapsed() >= self.limits.idle {
                self.metrics.expired.fetch_add(1, Ordering::Relaxed);
            }
        }
        self.metrics
            .open
            .store(seen.len() as u64, Ordering::Relaxed);
    }
}

impl SessionManager for BoundedSessions {
    type Error = <LocalSessionManager as SessionManager>::Error;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        if let Some(oldest) = self.make_room() {
            self.metrics.evicted.fetch_add(1, Ordering::Relaxed);
            self.inner.close_session(&oldest).await?;
        }
        let (id, transport) = self.inner.create_session().await?;
        if let Ok(mut seen) = self.seen.lock() {
            seen.insert(id.clone(), Instant::now());
            self.metrics
                .open
                .store(seen.len() as u64, Ordering::Relaxed);
        }
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.touch(id);
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.forget(id);
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.touch(id);
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.resume(id, last_event_id).await
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        self.inner.restore_session(id).await
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.inner.event_store()
    }
}
