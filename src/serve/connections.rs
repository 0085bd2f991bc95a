//! The connections `planc serve` accepts, and how long it keeps them: its
//! own accept loop over hyper's HTTP/1.1 server (axum's `serve` sets no
//! timer, so a half-sent request would hold its socket for ever).
//!
//! - **Header timeout**: a request's head must arrive whole within it, and
//!   so must the next one on a kept-alive connection (hyper counts the wait
//!   for the next request as header time): otherwise the connection closes.
//! - **Idle timeout**: a connection on which no byte moves either way for
//!   this long closes (a body sent a byte a minute, a stalled reader).
//! - **Connection cap**: at most this many connections at once, below the
//!   process's open-file limit. At the cap the server stops accepting until
//!   one closes: new clients wait in the kernel's listen queue (served as
//!   soon as a slot frees, which the header timeout bounds), never an error.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::extract::ConnectInfo;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::{watch, Semaphore};

/// How long a request's head may take to arrive, by default.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a connection may sit with no byte moving, by default.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// Open files kept free of connections for the store, the event log,
/// SSE streams' own work and the runtime, at least.
const FILE_HEADROOM: u64 = 128;

/// How many connections, and for how long.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// How long a request's head may take to arrive.
    pub header_timeout: Duration,
    /// How long a connection may sit with no byte read or written.
    pub idle_timeout: Duration,
    /// The most connections open at once.
    pub max_connections: usize,
}

impl Default for ConnectionLimits {
    fn default() -> ConnectionLimits {
        ConnectionLimits {
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            max_connections: default_max_connections(),
        }
    }
}

/// The connection cap by default: three quarters of the open-file limit
/// (after raising the soft limit to the hard one), leaving at least
/// [`FILE_HEADROOM`] files free.
pub fn default_max_connections() -> usize {
    let files = open_file_limit();
    let cap = (files / 4 * 3).min(files.saturating_sub(FILE_HEADROOM));
    usize::try_from(cap.max(16)).unwrap_or(usize::MAX)
}

/// The process's open-file limit, its soft limit first raised as far as
/// the hard one allows (as Go's runtime does): 1024 where it cannot be read.
#[cfg(unix)]
fn open_file_limit() -> u64 {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit only read and write `limit`.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return 1024;
        }
        if limit.rlim_cur < limit.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: limit.rlim_max.min(1 << 20),
                rlim_max: limit.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                limit.rlim_cur = raised.rlim_cur;
            }
        }
    }
    limit.rlim_cur
}

#[cfg(not(unix))]
fn open_file_limit() -> u64 {
    1024
}

/// The listen queue's length: clients the server has not taken yet wait
/// there (at the connection cap, or in a burst) instead of being dropped.
const LISTEN_BACKLOG: u32 = 4096;

/// A listener on `address` with a long listen queue.
pub fn listen(address: SocketAddr) -> io::Result<TcpListener> {
    let socket = match address {
        SocketAddr::V4(_) => TcpSocket::new_v4()?,
        SocketAddr::V6(_) => TcpSocket::new_v6()?,
    };
    #[cfg(unix)]
    socket.set_reuseaddr(true)?;
    socket.bind(address)?;
    socket.listen(LISTEN_BACKLOG)
}

/// What `/metrics` tells of the connections.
#[derive(Debug, Default)]
pub struct ConnectionMetrics {
    /// The cap.
    max: AtomicU64,
    /// Connections open now.
    open: AtomicU64,
    /// Connections accepted since the start.
    accepted: AtomicU64,
    /// Connections closed by the header or the idle timeout.
    timed_out: AtomicU64,
}

impl ConnectionMetrics {
    /// The Prometheus text of the connection gauges and counters.
    pub fn render(&self) -> String {
        let line = |name: &str, kind: &str, help: &str, value: &AtomicU64| {
            format!(
                "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {}\n",
                value.load(Ordering::Relaxed)
            )
        };
        [
            line(
                "planc_connections_open",
                "gauge",
                "HTTP connections open now.",
                &self.open,
            ),
            line(
                "planc_connections_max",
                "gauge",
                "The most HTTP connections open at once (--max-connections).",
                &self.max,
            ),
            line(
                "planc_connections_accepted_total",
                "counter",
                "HTTP connections accepted.",
                &self.accepted,
            ),
            line(
                "planc_connections_timed_out_total",
                "counter",
                "HTTP connections closed by the header or the idle timeout.",
                &self.timed_out,
            ),
        ]
        .concat()
    }
}

/// Serves `app` on `listener` within `limits` until `stop` becomes true;
/// then stops accepting, lets each connection finish the request it is
/// in, and returns once every connection has closed.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    metrics: Arc<ConnectionMetrics>,
    mut stop: watch::Receiver<bool>,
) {
    metrics
        .max
        .store(limits.max_connections as u64, Ordering::Relaxed);
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    // Every connection holds a receiver; all dropped means all closed.
    let (closed_tx, closed_rx) = watch::channel(());
    loop {
        let slot = tokio::select! {
            slot = Arc::clone(&slots).acquire_owned() => slot,
            _ = stop.wait_for(|stopped| *stopped) => break,
        };
        let Ok(slot) = slot else { break };
        let (socket, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                // Out of files, a connection reset before it was taken:
                // wait a moment rather than spin.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            },
            _ = stop.wait_for(|stopped| *stopped) => break,
        };
        metrics.accepted.fetch_add(1, Ordering::Relaxed);
        metrics.open.fetch_add(1, Ordering::Relaxed);
        let connection = Connection {
            app: app.clone(),
            limits,
            metrics: Arc::clone(&metrics),
            stop: stop.clone(),
        };
        let closed = closed_rx.clone();
        tokio::spawn(async move {
            connection.run(socket, peer).await;
            drop(slot);
            drop(closed);
        });
    }
    drop(listener);
    drop(closed_rx);
    closed_tx.closed().await;
}

/// One accepted connection.
struct Connection {
    app: Router,
    limits: ConnectionLimits,
    metrics: Arc<ConnectionMetrics>,
    stop: watch::Receiver<bool>,
}

impl Connection {
    /// Serves the connection until it closes, times out, or (on stop)
    /// finishes its request in flight.
    async fn run(mut self, socket: TcpStream, peer: SocketAddr) {
        let _ = socket.set_nodelay(true);
        let started = Instant::now();
        let moved = Arc::new(AtomicU64::new(0));
        let io = TokioIo::new(Watched {
            inner: socket,
            started,
            moved: Arc::clone(&moved),
        });
        let app = self.app.clone();
        let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
            request.extensions_mut().insert(ConnectInfo(peer));
            let mut app = app.clone();
            async move { tower_service::Service::call(&mut app, request).await }
        });
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(self.limits.header_timeout)
            .keep_alive(true);
        let connection = builder.serve_connection(io, service).with_upgrades();
        tokio::pin!(connection);
        let idle = self.limits.idle_timeout;
        let mut stopping = false;
        loop {
            let quiet = Duration::from_millis(moved.load(Ordering::Relaxed));
            let since = started.elapsed().saturating_sub(quiet);
            tokio::select! {
                served = connection.as_mut() => {
                    if served.as_ref().is_err_and(hyper::Error::is_timeout) {
                        self.metrics.timed_out.fetch_add(1, Ordering::Relaxed);
                    }
                    break;
                }
                () = tokio::time::sleep(idle.saturating_sub(since)) => {
                    let quiet = Duration::from_millis(moved.load(Ordering::Relaxed));
                    if started.elapsed().saturating_sub(quiet) >= idle {
                        self.metrics.timed_out.fetch_add(1, Ordering::Relaxed);
                        break;
                    }
                }
                _ = self.stop.wait_for(|stopped| *stopped), if !stopping => {
                    stopping = true;
                    connection.as_mut().graceful_shutdown();
                }
            }
        }
        self.metrics.open.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A socket that notes when a byte last moved on it (milliseconds since
/// `started`), for the idle timeout.
struct Watched {
    inner: TcpStream,
    started: Instant,
    moved: Arc<AtomicU64>,
}

impl Watched {
    fn note(&self, bytes: usize) {
        if bytes > 0 {
            let now = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
            self.moved.store(now, Ordering::Relaxed);
        }
    }
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        self.note(buf.filled().len() - before);
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(written)) = &polled {
            self.note(*written);
        }
        polled
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if let Poll::Ready(Ok(written)) = &polled {
            self.note(*written);
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_cap_leaves_files_for_the_store() {
        let files = open_file_limit();
        let cap = default_max_connections() as u64;
        assert!(cap >= 16);
        assert!(
            cap + FILE_HEADROOM <= files.max(16 + FILE_HEADROOM),
            "{cap} of {files}"
        );
        assert!(cap <= files / 4 * 3 || cap == 16, "{cap} of {files}");
    }
}
