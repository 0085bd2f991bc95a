//! What every request passes before a handler sees it: the client's rate,
//! the `Host` and `Origin` (DNS rebinding), the bearer token and the
//! declared body size; and the counters `/metrics` shows.

use std::collections::{BTreeMap, HashMap};
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::host::{check_host, check_one_host, check_origin};
use super::plain_errors::{error_response, too_large};
use super::scope::{route_needs, Grant};
use super::tokens::Credentials;
use super::Shared;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use serde_json::{json, Value};

/// Request counters for `/metrics`.
#[derive(Debug, Default)]
pub struct Metrics {
    /// Requests by route and status code.
    requests: Mutex<BTreeMap<(&'static str, u16), u64>>,
    /// Error envelopes answered, by code.
    errors: Mutex<BTreeMap<String, u64>>,
    /// Changes committed to the store (seen on its event stream).
    pub changes: AtomicU64,
    /// Events written to SSE streams.
    pub events_streamed: AtomicU64,
    /// Open SSE streams.
    pub streams_open: AtomicU64,
}

impl Metrics {
    /// Counts one error envelope with `code`.
    pub fn error(&self, code: &str) {
        if let Ok(mut errors) = self.errors.lock() {
            *errors.entry(code.to_owned()).or_default() += 1;
        }
    }

    /// The Prometheus text exposition (format 0.0.4) of the counters.
    ///
    /// Written by hand: `prometheus-client` writes OpenMetrics, where a
    /// counter's `# HELP`/`# TYPE` lines drop the `_total` of its samples
    /// and the text ends in `# EOF`, and its families come out unordered.
    pub fn render(&self, plans: Option<usize>) -> String {
        let mut out = String::new();
        out.push_str(
            "# HELP planc_http_requests_total HTTP requests answered, by route and status.\n",
        );
        out.push_str("# TYPE planc_http_requests_total counter\n");
        if let Ok(requests) = self.requests.lock() {
            for ((route, status), n) in requests.iter() {
                out.push_str(&format!(
                    "planc_http_requests_total{{route=\"{route}\",status=\"{status}\"}} {n}\n"
                ));
            }
        }
        out.push_str("# HELP planc_errors_total Error envelopes answered, by error code.\n");
        out.push_str("# TYPE planc_errors_total counter\n");
        if let Ok(errors) = self.errors.lock() {
            for (code, n) in errors.iter() {
                let code = code.replace(['\\', '"', '\n'], "_");
                out.push_str(&format!("planc_errors_total{{code=\"{code}\"}} {n}\n"));
            }
        }
        let counters = [
            (
                "planc_changes_total",
                "counter",
                "Changes committed to the store (each one event record).",
                self.changes.load(Ordering::Relaxed),
            ),
            (
                "planc_events_streamed_total",
                "counter",
                "Event records written to SSE streams.",
                self.events_streamed.load(Ordering::Relaxed),
            ),
            (
                "planc_sse_streams_open",
                "gauge",
                "SSE event streams open now.",
                self.streams_open.load(Ordering::Relaxed),
            ),
        ];
        for (name, kind, help, value) in counters {
            out.push_str(&format!(
                "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}\n"
            ));
        }
        if let Some(plans) = plans {
            out.push_str("# HELP planc_plans Plans in the store.\n# TYPE planc_plans gauge\n");
            out.push_str(&format!("planc_plans {plans}\n"));
        }
        out
    }
}

/// The route a path counts under in the metrics (a fixed set: plan ids
/// never become labels).
fn route_of(path: &str) -> &'static str {
    match path {
        "/" => "/",
        "/health" => "/health",
        "/metrics" => "/metrics",
        "/api/plans" => "/api/plans",
        "/api/events" => "/api/events",
        _ if path.starts_with("/mcp") => "/mcp",
        _ if path.starts_with("/api/plans/") && path.ends_with("/events") => {
            "/api/plans/{id}/events"
        }
        _ if plan_read(path) == Some("tasks") => "/api/plans/{id}/tasks",
        _ if plan_read(path) == Some("summary") => "/api/plans/{id}/summary",
        _ if path.starts_with("/api/plans/") && path.contains("/ops/") => {
            "/api/plans/{id}/ops/{op}"
        }
        _ if path.starts_with("/api/plans/") => "/api/plans/{id}",
        _ => "other",
    }
}

/// What follows a plan's id in `/api/plans/{id}/…` (`tasks` of
/// `/api/plans/p/tasks`; none for `/api/plans/tasks`, plan `tasks`).
fn plan_read(path: &str) -> Option<&str> {
    let rest = path.strip_prefix("/api/plans/")?;
    rest.split_once('/').map(|(_, read)| read)
}

/// A token bucket per client address.
///
/// Written by hand: `governor` (GCRA) would bring a fourth `hashbrown`,
/// `parking_lot` and timer crates for these thirty lines.
#[derive(Debug)]
pub struct RateLimiter {
    /// Requests per second a client may make (the bucket refills at this
    /// rate and holds as many); 0: no limit.
    per_second: u32,
    buckets: Mutex<HashMap<IpAddr, (f64, Instant)>>,
}

impl RateLimiter {
    /// A limit of `per_second` requests per second per client (0: none).
    pub fn new(per_second: u32) -> RateLimiter {
        RateLimiter {
            per_second,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes one request from `client`'s bucket: `Err` with the seconds to
    /// wait when it is empty.
    fn take(&self, client: IpAddr) -> Result<(), u64> {
        if self.per_second == 0 {
            return Ok(());
        }
        let rate = f64::from(self.per_second);
        let now = Instant::now();
        let Ok(mut buckets) = self.buckets.lock() else {
            return Ok(());
        };
        if buckets.len() > 100_000 {
            // Forget clients whose bucket is full again.
            buckets.retain(|_, (tokens, at)| {
                *tokens + now.duration_since(*at).as_secs_f64() * rate < rate
            });
        }
        let (tokens, at) = buckets.entry(client).or_insert((rate, now));
        *tokens = (*tokens + now.duration_since(*at).as_secs_f64() * rate).min(rate);
        *at = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            Ok(())
        } else {
            Err(((1.0 - *tokens) / rate).ceil().max(1.0) as u64)
        }
    }
}

/// The outermost layer: counts the request, then checks rate, host,
/// origin, token (and what its scope allows) and declared size, in that
/// order; the request goes on with its [`Grant`].
pub async fn guard(
    State(shared): State<Arc<Shared>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    mut request: Request,
    next: Next,
) -> Response {
    let route = route_of(request.uri().path());
    let response = match check(&shared, peer, &request) {
        Ok(grant) => {
            request.extensions_mut().insert(grant);
            let response = next.run(request).await;
            // A body found too large while it was read, a method a route
            // does not take…: axum and rmcp answer in plain text; every
            // refusal is in the envelope.
            super::plain_errors::in_envelope(&shared, response).await
        }
        Err(response) => *response,
    };
    if let Ok(mut requests) = shared.metrics.requests.lock() {
        *requests
            .entry((route, response.status().as_u16()))
            .or_default() += 1;
    }
    response
}

fn check(shared: &Shared, peer: SocketAddr, request: &Request) -> Result<Grant, Box<Response>> {
    let config = &shared.config;
    let refuse = |status, code: &str, message: &str, details| {
        shared.metrics.error(code);
        Box::new(error_response(status, code, message, details))
    };
    if let Err(wait) = shared.limiter.take(peer.ip()) {
        let mut response = refuse(
            StatusCode::TOO_MANY_REQUESTS,
            "RATE_LIMITED",
            &format!(
                "too many requests: this server takes {} requests per second from one client; retry in {wait} s",
                config.rate_limit
            ),
            json!({"limit_per_second": config.rate_limit, "retry_after_seconds": wait}),
        );
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(wait));
        return Err(response);
    }
    let headers = request.headers();
    if let Err(message) = check_one_host(request) {
        return Err(refuse(
            StatusCode::BAD_REQUEST,
            "INVALID_HOST",
            &message,
            Value::Null,
        ));
    }
    if let Err(message) = check_host(config, headers) {
        return Err(refuse(
            StatusCode::FORBIDDEN,
            "FORBIDDEN_HOST",
            &message,
            json!({"allowed_hosts": config.allowed_hosts}),
        ));
    }
    if let Err(message) = check_origin(config, headers) {
        return Err(refuse(
            StatusCode::FORBIDDEN,
            "FORBIDDEN_ORIGIN",
            &message,
            json!({"allowed_origins": config.allowed_origins}),
        ));
    }
    let grant = authenticate(&config.credentials, request).map_err(|message| {
        refuse(
            StatusCode::UNAUTHORIZED,
            "UNAUTHORIZED",
            message,
            Value::Null,
        )
    })?;
    let (needed, plan) = route_needs(request.method(), request.uri().path());
    let what = format!("{} {}", request.method(), route_of(request.uri().path()));
    let allowed = grant
        .need(needed, &what)
        .and_then(|()| plan.as_deref().map_or(Ok(()), |plan| grant.plan(plan)));
    if let Err(error) = allowed {
        return Err(refuse(
            StatusCode::FORBIDDEN,
            error.code.as_str(),
            &error.message,
            error.details,
        ));
    }
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > config.max_body as u64) {
        return Err(Box::new(too_large(shared)));
    }
    Ok(grant)
}

/// What the request's token grants: everything on a server without
/// tokens; `Err` says what is missing.
fn authenticate(credentials: &Credentials, request: &Request) -> Result<Grant, &'static str> {
    if !credentials.required() {
        return Ok(Grant::everything());
    }
    let query = match takes_query_token(request.method(), request.uri().path()) {
        true => request.uri().query(),
        false => None,
    };
    let given = presented_token(request.headers(), query);
    if let Some(grant) = given.and_then(|token| credentials.grant_of(&token)) {
        return Ok(grant);
    }
    let in_query = request
        .uri()
        .query()
        .is_some_and(|q| presented_token(&HeaderMap::new(), Some(q)).is_some());
    if in_query && query.is_none() {
        return Err("`?access_token=` is taken only by the event streams and the page (URLs end up in logs): send `Authorization: Bearer TOKEN`");
    }
    Err("this server needs a token: send `Authorization: Bearer TOKEN` (the event streams and the page also take `?access_token=TOKEN`, where a header cannot be set)")
}

/// Whether a request may carry its token in the query: a `GET` of the page
/// or an event stream (a browser's `EventSource` cannot set a header).
fn takes_query_token(method: &Method, path: &str) -> bool {
    let stream = path == "/api/events"
        || path
            .strip_prefix("/api/plans/")
            .and_then(|rest| rest.strip_suffix("/events"))
            .is_some_and(|id| !id.is_empty() && !id.contains('/'));
    method == Method::GET && (path == "/" || stream)
}

/// The token a request presents: its bearer header, else (where `query`
/// is given) its `access_token` query parameter.
fn presented_token(headers: &HeaderMap, query: Option<&str>) -> Option<String> {
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            let (scheme, rest) = v.split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim())
        });
    let from_query = || {
        query.and_then(|q| {
            serde_urlencoded::from_str::<Vec<(String, String)>>(q)
                .ok()?
                .into_iter()
                .find(|(k, _)| k == "access_token")
                .map(|(_, v)| v)
        })
    };
    bearer.map(str::to_owned).or_else(from_query)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_is_taken_from_the_bearer_header_or_the_query() {
        let bearer = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::AUTHORIZATION, HeaderValue::from_str(value).unwrap());
            headers
        };
        let none = HeaderMap::new();
        let token = |headers: &HeaderMap, query| presented_token(headers, query);
        assert_eq!(
            token(&bearer("Bearer s3cret"), None).as_deref(),
            Some("s3cret")
        );
        assert_eq!(
            token(&bearer("bearer  s3cret "), None).as_deref(),
            Some("s3cret")
        );
        assert_eq!(
            token(&none, Some("a=1&access_token=s3cret")).as_deref(),
            Some("s3cret")
        );
        assert_eq!(token(&bearer("Basic s3cret"), None), None);
        assert_eq!(token(&none, None), None);
    }

    #[test]
    fn only_the_page_and_the_streams_take_the_token_in_the_query() {
        assert!(takes_query_token(&Method::GET, "/"));
        assert!(takes_query_token(&Method::GET, "/api/events"));
        assert!(takes_query_token(&Method::GET, "/api/plans/jd/events"));
        assert!(!takes_query_token(&Method::GET, "/api/plans"));
        assert!(!takes_query_token(
            &Method::POST,
            "/api/plans/jd/ops/completeTask"
        ));
        assert!(!takes_query_token(&Method::POST, "/api/events"));
        assert!(!takes_query_token(&Method::GET, "/api/plans/a/b/events"));
    }

    #[test]
    fn the_bucket_refuses_the_request_past_the_rate() {
        let limiter = RateLimiter::new(3);
        let client: IpAddr = [10, 0, 0, 1].into();
        assert!(limiter.take(client).is_ok());
        assert!(limiter.take(client).is_ok());
        assert!(limiter.take(client).is_ok());
        assert_eq!(limiter.take(client), Err(1));
        // Another client has its own bucket.
        assert!(limiter.take([10, 0, 0, 2].into()).is_ok());
        assert!(RateLimiter::new(0).take(client).is_ok());
    }
}
