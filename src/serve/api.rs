//! The JSON API (`/api/plans…`), the SSE event streams, `/health` and
//! `/metrics`. Every answer is the runner's envelope: `{"success": true,
//! "data": …}` or `{"success": false, "error": {code, message, details}}`.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Extension, Path, Query, RawQuery, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::{Stream, StreamExt};
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::sync::broadcast;

use crate::runner::{Caller, ErrorCode, Op, OpError, PlanStore, StoredEvent};

use super::events::stream_events;
use super::plain_errors::{error_response, too_large};
use super::plan_request::{load_plan, CreateQuery};
use super::scope::Grant;
use super::Shared;

/// The HTTP status of an operation error.
pub fn status_of(code: ErrorCode) -> StatusCode {
    match code.as_str() {
        "PLAN_NOT_FOUND" | "TASK_NOT_FOUND" => StatusCode::NOT_FOUND,
        "PLAN_EXISTS" | "STATE_CONFLICT" => StatusCode::CONFLICT,
        "STATE_LOCKED" => StatusCode::SERVICE_UNAVAILABLE,
        "STATE_IO" | "INVALID_STATE" => StatusCode::INTERNAL_SERVER_ERROR,
        "INVALID_ARGUMENT" | "INVALID_PLAN_ID" | "INVALID_PLAN" => StatusCode::BAD_REQUEST,
        "FORBIDDEN" => StatusCode::FORBIDDEN,
        _ => StatusCode::UNPROCESSABLE_ENTITY,
    }
}

/// An operation error as a response.
pub(super) fn op_error(shared: &Shared, error: &OpError) -> Response {
    shared.metrics.error(error.code.as_str());
    let mut response = (status_of(error.code), axum::Json(error.envelope())).into_response();
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-store"),
    );
    response
}

/// A success envelope.
pub(super) fn ok(status: StatusCode, data: Value) -> Response {
    (status, axum::Json(json!({"success": true, "data": data}))).into_response()
}

/// Runs `work` on the store off the async workers (SQLite and the file
/// lock block).
pub(super) async fn blocking<T: Send + 'static>(
    shared: &Arc<Shared>,
    work: impl FnOnce(&dyn PlanStore) -> Result<T, OpError> + Send + 'static,
) -> Result<T, OpError> {
    let store = Arc::clone(&shared.store);
    tokio::task::spawn_blocking(move || work(store.as_ref()))
        .await
        .unwrap_or_else(|e| {
            Err(OpError::new(
                ErrorCode::StateIo,
                format!("the store call stopped: {e}"),
            ))
        })
}

/// `GET /health`: the store answers.
pub async fn health(State(shared): State<Arc<Shared>>) -> Response {
    match blocking(&shared, |store| store.list().map(|plans| plans.len())).await {
        Ok(plans) => ok(
            StatusCode::OK,
            json!({"status": "ok", "plans": plans, "version": env!("CARGO_PKG_VERSION")}),
        ),
        Err(error) => {
            shared.metrics.error(error.code.as_str());
            let mut response = (
                StatusCode::SERVICE_UNAVAILABLE,
                axum::Json(error.envelope()),
            )
                .into_response();
            response.headers_mut().insert(
                header::CACHE_CONTROL,
                header::HeaderValue::from_static("no-store"),
            );
            response
        }
    }
}

/// `GET /metrics`: Prometheus text.
pub async fn metrics(State(shared): State<Arc<Shared>>) -> Response {
    let plans = blocking(&shared, |store| store.list().map(|plans| plans.len()))
        .await
        .ok();
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        [
            shared.metrics.render(plans),
            shared.connections.render(),
            shared.sessions.render(),
        ]
        .concat(),
    )
        .into_response()
}

/// `GET /api/plans`: the summary of every plan the token may touch.
pub async fn list_plans(
    State(shared): State<Arc<Shared>>,
    Extension(grant): Extension<Grant>,
) -> Response {
    match blocking(&shared, |store| store.list()).await {
        Ok(mut plans) => {
            plans.retain(|plan| grant.may_touch(&plan.plan_id));
            ok(StatusCode::OK, json!({"plans": plans}))
        }
        Err(error) => op_error(&shared, &error),
    }
}

/// `POST /api/plans[?id=ID][&force=true][&set=NAME=VALUE…]`: a plan from
/// `.plan` source, any JSON plan shape planc loads, or a JSON request
/// `{"source", "files", "set"}` (`plan_request.rs`).
pub async fn create_plan(
    State(shared): State<Arc<Shared>>,
    Extension(grant): Extension<Grant>,
    RawQuery(raw): RawQuery,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let query = match CreateQuery::parse(raw.as_deref()) {
        Ok(query) => query,
        Err(error) => return op_error(&shared, &error),
    };
    let body = match body {
        Ok(body) => body,
        Err(rejection) if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            return too_large(&shared)
        }
        Err(rejection) => {
            return op_error(
                &shared,
                &OpError::new(ErrorCode::InvalidArgument, rejection.body_text()),
            )
        }
    };
    let name = query.id.clone().unwrap_or_else(|| "plan".to_owned());
    let doc = match load_plan(&name, &body, &query.set) {
        Ok(doc) => doc,
        Err(error) => return op_error(&shared, &error),
    };
    let plan_id = query.id.unwrap_or_else(|| doc.meta.id.clone());
    if let Err(error) = grant.plan(&plan_id) {
        return op_error(&shared, &error);
    }
    let force = query.force;
    let id = plan_id.clone();
    match blocking(&shared, move |store| store.create(&id, doc, force)).await {
        Ok(doc) => ok(
            StatusCode::CREATED,
            json!({
                "plan_id": plan_id,
                "revision": doc.state.revision,
                "total_tasks": doc.tasks.len(),
                "message": format!("Created plan {plan_id} with {} task(s)", doc.tasks.len()),
            }),
        ),
        Err(error) => op_error(&shared, &error),
    }
}

/// `GET /api/plans/{id}`: the plan's state document (the export; paging
/// parameters are refused: `GET /api/plans/{id}/tasks` pages).
pub async fn get_plan(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    RawQuery(raw): RawQuery,
) -> Response {
    if let Err(error) = super::task_pages::refuse_paging(raw.as_deref()) {
        return op_error(&shared, &error);
    }
    match blocking(&shared, move |store| export(store, &id)).await {
        Ok(body) => (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "application/json")],
            body,
        )
            .into_response(),
        Err(error) => op_error(&shared, &error),
    }
}

/// The success envelope of plan `plan_id`'s whole document, its JSON
/// written by the store (from the state it keeps, when it keeps one): the
/// same bytes as the document made a `Value` first, without that copy or
/// any other, which cost many times the document's JSON size
/// (docs/performance.md, "Memory").
fn export(store: &dyn PlanStore, plan_id: &str) -> Result<Vec<u8>, OpError> {
    let mut body = br#"{"success":true,"data":"#.to_vec();
    store.export_json(plan_id, &mut body)?;
    body.push(b'}');
    Ok(body)
}

/// `DELETE /api/plans/{id}`.
pub async fn delete_plan(State(shared): State<Arc<Shared>>, Path(id): Path<String>) -> Response {
    let plan_id = id.clone();
    match blocking(&shared, move |store| store.delete(&id)).await {
        Ok(()) => {
            shared.docs.forget(&plan_id);
            ok(
                StatusCode::OK,
                json!({"plan_id": plan_id, "deleted": true, "message": format!("Deleted plan {plan_id}")}),
            )
        }
        Err(error) => op_error(&shared, &error),
    }
}

/// `POST /api/plans/{id}/ops/{op}`: one runner operation (`startNextTask`,
/// `completeTask`, …) with its arguments as the JSON body; `agent` and
/// `lease` are the caller's, as in the MCP tools (or the `X-Planc-Agent`
/// header).
pub async fn apply_op(
    State(shared): State<Arc<Shared>>,
    Extension(grant): Extension<Grant>,
    Path((id, op)): Path<(String, String)>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let body = match body {
        Ok(body) => body,
        Err(rejection) if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            return too_large(&shared)
        }
        Err(rejection) => {
            return op_error(
                &shared,
                &OpError::new(ErrorCode::InvalidArgument, rejection.body_text()),
            )
        }
    };
    let mut args: Value = if body.iter().all(u8::is_ascii_whitespace) {
        json!({})
    } else {
        match serde_json::from_slice(&body) {
            Ok(args) => args,
            Err(e) => {
                return op_error(
                    &shared,
                    &OpError::new(
                        ErrorCode::InvalidArgument,
                        format!("the body is not JSON arguments: {e}"),
                    ),
                )
            }
        }
    };
    if !Op::NAMES.contains(&op.as_str()) {
        return op_error(
            &shared,
            &OpError::new(
                ErrorCode::InvalidArgument,
                format!("no operation `{}`", crate::escape::line(&op)),
            )
            .with(json!({"operations": Op::NAMES})),
        );
    }
    let caller = match &mut args {
        Value::Object(map) => Caller::take_from(map),
        _ => Ok(Caller::default()),
    };
    let header_agent = super::mcp::header_agent(&headers);
    let result = caller.and_then(|mut caller| {
        caller.agent = caller.agent.or(header_agent);
        let caller = grant.caller(caller)?;
        Op::from_call(&op, args).map(|op| (op, caller))
    });
    let (op, caller) = match result {
        Ok(parts) => parts,
        Err(error) => return op_error(&shared, &error),
    };
    match blocking(&shared, move |store| store.apply_revised(&id, &op, &caller)).await {
        Ok((applied, revision)) => {
            let mut envelope = applied.envelope();
            if let Some(revision) = revision {
                envelope["revision"] = json!(revision);
            }
            (StatusCode::OK, axum::Json(envelope)).into_response()
        }
        Err(error) => op_error(&shared, &error),
    }
}

/// The query of the event streams.
#[derive(Debug, Default, Deserialize)]
pub struct EventsQuery {
    /// Start after this id (as `Last-Event-ID` does), or `now`: only what
    /// is committed from now on.
    after: Option<String>,
    /// The token, for clients that cannot set a header (`EventSource`).
    #[serde(rename = "access_token")]
    _access_token: Option<String>,
}

/// Where a stream starts: after the id of `Last-Event-ID` or `?after=`
/// (`None`: from now on). An id `N.I` is event `I` of change `N` (a change
/// with several events): the stream starts with change `N`, less its first
/// `I` events.
fn start_of(headers: &HeaderMap, query: &EventsQuery) -> Result<Option<Resume>, OpError> {
    let given = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .or_else(|| query.after.clone());
    let bad = |text: &str| {
        OpError::new(
            ErrorCode::InvalidArgument,
            format!(
                "the event id `{}` is not an event's id (Last-Event-ID or ?after= takes an event's id, N or N.I, or `now`)",
                crate::escape::line(text)
            ),
        )
    };
    match given.as_deref().map(str::trim) {
        None | Some("") => Ok(Some(Resume::default())),
        Some("now") => Ok(None),
        Some(text) => match text.split_once('.') {
            None => text
                .parse::<u64>()
                .map(|after| Some(Resume { after, skip: None }))
                .map_err(|_| bad(text)),
            Some((change, index)) => {
                let (Ok(change @ 1..), Ok(index)) = (change.parse::<u64>(), index.parse::<usize>())
                else {
                    return Err(bad(text));
                };
                Ok(Some(Resume {
                    after: change - 1,
                    skip: Some((change, index)),
                }))
            }
        },
    }
}

/// Where a resumed stream starts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Resume {
    /// The id of the last whole change the client has.
    after: u64,
    /// A change the client has the first events of: its id, and how many.
    skip: Option<(u64, usize)>,
}

/// `GET /api/plans/{id}/events`: the plan's events, `id:` = the revision.
pub async fn plan_events(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    Query(query): Query<EventsQuery>,
) -> Response {
    let start = match start_of(&headers, &query) {
        Ok(start) => start,
        Err(error) => return op_error(&shared, &error),
    };
    // The plan's creation (`PLAN_NOT_FOUND` when there is none): a client
    // that resumes after an id, or starts from now, has it.
    let plan_id = id.clone();
    let created = match blocking(&shared, move |store| store.events(&plan_id, 0, 1)).await {
        Ok(created) => created.first().map_or(0, |created| created.position),
        Err(error) => return op_error(&shared, &error),
    };
    let position = match start {
        Some(Resume { after: 0, .. }) => 0,
        _ => created,
    };
    stream(shared, Some(id), start, position)
}

/// `GET /api/events`: every plan's events, `id:` = the store's position
/// (refused to a token bound to some plans: it follows each plan's stream).
pub async fn all_events(
    State(shared): State<Arc<Shared>>,
    Extension(grant): Extension<Grant>,
    headers: HeaderMap,
    Query(query): Query<EventsQuery>,
) -> Response {
    if let Some(plans) = &grant.plans {
        let error = OpError::new(
            crate::runner::ErrorCode::Forbidden,
            "this token may touch only some plans: follow each one's stream, /api/plans/{id}/events",
        )
        .with(json!({"plans": plans}));
        return op_error(&shared, &error);
    }
    match start_of(&headers, &query) {
        Ok(start) => stream(shared, None, start, start.map_or(0, |s| s.after)),
        Err(error) => op_error(&shared, &error),
    }
}

/// The SSE messages of one stored change: one per event, seed 004's event
/// object as its data and its type as the `event:` name. The last carries
/// the change's id; the others `ID.I` (event `I` of the change), so a client
/// that comes back mid-change gets the rest of it.
fn messages(event: &StoredEvent, id: u64, skip: usize) -> Vec<SseEvent> {
    let items = stream_events(event);
    let count = items.len();
    items
        .into_iter()
        .enumerate()
        .skip(skip)
        .map(|(n, item)| {
            let sse_id = match n + 1 == count {
                true => id.to_string(),
                false => format!("{id}.{}", n + 1),
            };
            SseEvent::default()
                .id(sse_id)
                .event(item.name())
                .data(serde_json::to_string(&item).unwrap_or_default())
        })
        .collect()
}

/// `GET /api/schema/events.json`: the JSON Schema of the streams' events.
pub async fn events_schema() -> Response {
    (
        [(header::CONTENT_TYPE, "application/schema+json")],
        super::events::schema(),
    )
        .into_response()
}

/// Where a stream stands: the last event it sent, or the one its client
/// resumed after.
///
/// Every store but a single state file gives each event a position that no
/// other event has had or will have — a plan started over or created again
/// gets new ones — and both its reads and its subscription hand events out
/// in the order of their positions. So an event the stream has sent (or
/// that the client resumed after) is any event at or below the position of
/// the last one: what the live channel brings again after a read from the
/// store, or late (a server whose listener is behind the one the client
/// came from), is dropped by its position alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Cursor {
    /// Whether ids are `seq`s (a plan's stream) or positions (every plan's).
    by_seq: bool,
    /// The id of the last message sent, or the one the client resumed
    /// after: on a plan's stream its `seq` (the plan's revision, from 1
    /// again once the plan is started over), on every plan's its position.
    last: u64,
    /// The position of the last event sent, or of the last one the client
    /// has (0: none): nothing at or below it is sent.
    position: u64,
}

impl Cursor {
    /// The id of `event` in this stream.
    fn id(&self, event: &StoredEvent) -> u64 {
        match self.by_seq {
            true => event.seq,
            false => event.position,
        }
    }

    /// Whether `event` is to be sent (then it is the last one sent).
    ///
    /// On a plan's stream, a creation (`seq` 1) past the last event sent is
    /// the plan started over (forced, or deleted and created again): the
    /// stream follows the new plan from its first event, whatever id the
    /// client had. Any other event at or below the last id is one the
    /// client has: it resumed after that id of the plan as it is.
    fn admit(&mut self, event: &StoredEvent) -> bool {
        if event.position <= self.position {
            return false;
        }
        if self.by_seq && event.seq == 1 {
            self.last = 0;
        }
        let id = self.id(event);
        if id <= self.last {
            return false;
        }
        self.last = id;
        self.position = event.position;
        true
    }
}

/// The state of one stream.
struct Follow {
    shared: Arc<Shared>,
    plan: Option<String>,
    cursor: Cursor,
    /// The change the client has the first events of, and how many.
    skip: Option<(u64, usize)>,
    /// Read from the store, or brought by the live channel; not sent yet.
    backlog: VecDeque<StoredEvent>,
    /// Whether the store has nothing after the cursor that the live channel
    /// will not bring.
    caught_up: bool,
    live: broadcast::Receiver<StoredEvent>,
    stop: tokio::sync::watch::Receiver<bool>,
    _open: OpenStream,
}

/// Counts an open stream while it lives.
struct OpenStream(Arc<Shared>);

impl Drop for OpenStream {
    fn drop(&mut self) {
        self.0.metrics.streams_open.fetch_sub(1, Ordering::Relaxed);
    }
}

/// What a stream reads from the store at once.
const PAGE: usize = 512;

impl Follow {
    /// The next events from the store, after the last one sent: a page of
    /// the feed, or of the plan's events. A plan's page is read from the
    /// plan's first event instead when its creation is past the last event
    /// sent (the plan was started over since): read after its creation, a
    /// page could hold the new plan's later events without its first ones.
    async fn read(&mut self) -> Result<Vec<StoredEvent>, OpError> {
        let Cursor { last, position, .. } = self.cursor;
        let (plan, after) = (self.plan.clone(), last);
        blocking(&self.shared, move |store| {
            let Some(plan) = plan else {
                return store.feed(after, PAGE);
            };
            let page = store.events(&plan, after, PAGE)?;
            if after == 0 {
                return Ok(page);
            }
            let created = store.events(&plan, 0, 1)?;
            match created.first() {
                Some(created) if created.position > position => store.events(&plan, 0, PAGE),
                _ => Ok(page),
            }
        })
        .await
    }

    /// The next event to send, or `None` when the stream ends (shutdown,
    /// the plan deleted with nothing left to read, a store error).
    async fn next(&mut self) -> Option<StoredEvent> {
        loop {
            if let Some(event) = self.backlog.pop_front() {
                if self.cursor.admit(&event) {
                    return Some(event);
                }
                continue;
            }
            if !self.caught_up {
                let page = self.read().await.ok()?;
                if page.is_empty() {
                    self.caught_up = true;
                } else {
                    self.backlog.extend(page);
                }
                continue;
            }
            if *self.stop.borrow() {
                return None;
            }
            tokio::select! {
                received = self.live.recv() => match received {
                    Ok(event) => {
                        if self.plan.as_ref().is_some_and(|p| *p != event.plan_id) {
                            continue;
                        }
                        self.backlog.push_back(event);
                    }
                    // Missed some: read them from the store.
                    Err(broadcast::error::RecvError::Lagged(_)) => self.caught_up = false,
                    Err(broadcast::error::RecvError::Closed) => return None,
                },
                _ = self.stop.changed() => return None,
            }
        }
    }
}

/// A stream of plan `plan` (every plan's: `None`) after `start` (`None`:
/// from now on); `position`: the position of the last event the client has.
fn stream(
    shared: Arc<Shared>,
    plan: Option<String>,
    start: Option<Resume>,
    position: u64,
) -> Response {
    shared.metrics.streams_open.fetch_add(1, Ordering::Relaxed);
    let follow = Follow {
        cursor: Cursor {
            by_seq: plan.is_some(),
            last: start.map_or(0, |s| s.after),
            position,
        },
        skip: start.and_then(|s| s.skip),
        plan,
        backlog: VecDeque::new(),
        caught_up: start.is_none(),
        live: shared.events.subscribe(),
        stop: shared.stop.clone(),
        _open: OpenStream(Arc::clone(&shared)),
        shared: Arc::clone(&shared),
    };
    let events = futures_util::stream::unfold(follow, |mut follow| async move {
        let event = follow.next().await?;
        let id = follow.cursor.id(&event);
        // Only the first change sent may be one the client has a part of.
        let skip = match follow.skip.take() {
            Some((change, skip)) if change == id => skip,
            _ => 0,
        };
        let messages = messages(&event, id, skip);
        follow
            .shared
            .metrics
            .events_streamed
            .fetch_add(messages.len() as u64, Ordering::Relaxed);
        Some((messages, follow))
    })
    .flat_map(|messages| futures_util::stream::iter(messages.into_iter().map(Ok::<_, Infallible>)));
    sse(events, shared.config.keep_alive)
}

fn sse(
    events: impl Stream<Item = Result<SseEvent, Infallible>> + Send + 'static,
    keep_alive: std::time::Duration,
) -> Response {
    let mut response = Sse::new(events)
        .keep_alive(KeepAlive::new().interval(keep_alive).text("keep-alive"))
        .into_response();
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-store"),
    );
    response
}

/// A 404 in the envelope for paths the server does not have.
pub async fn not_found(State(shared): State<Arc<Shared>>, uri: axum::http::Uri) -> Response {
    shared.metrics.error("NOT_FOUND");
    error_response(
        StatusCode::NOT_FOUND,
        "NOT_FOUND",
        &format!(
            "no such endpoint: {}; see docs/serve.md",
            crate::escape::line(uri.path())
        ),
        Value::Null,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::PlanStatus;
    use crate::runner::LogRecord;

    /// A change of plan `plan`: (seq, position).
    fn event(plan: &str, (seq, position): (u64, u64)) -> StoredEvent {
        StoredEvent {
            plan_id: plan.to_owned(),
            seq,
            position,
            record: LogRecord {
                revision: seq,
                at: "2026-11-27T00:00:00Z".to_owned(),
                op: if seq == 1 { "init" } else { "pausePlan" }.to_owned(),
                plan_status: PlanStatus::Running,
                events: Vec::new(),
            },
        }
    }

    /// What a stream at `cursor` sends of `events` (plan `p`'s), in turn.
    fn sent(mut cursor: Cursor, events: &[(u64, u64)]) -> Vec<(u64, u64)> {
        events
            .iter()
            .filter(|&&e| cursor.admit(&event("p", e)))
            .copied()
            .collect()
    }

    #[test]
    fn a_plans_stream_follows_a_start_over_and_sends_nothing_twice() {
        let cursor = Cursor {
            by_seq: true,
            last: 0,
            position: 0,
        };
        let events = [
            // Read from the store.
            (1, 10),
            (2, 11),
            (3, 12),
            // Live: two again, then a new one.
            (2, 11),
            (3, 12),
            (4, 14),
            // Started over: the new plan's creation and change, one again,
            // and the old plan's last, late.
            (1, 20),
            (2, 21),
            (2, 21),
            (4, 14),
            (3, 22),
        ];
        assert_eq!(
            sent(cursor, &events),
            [
                (1, 10),
                (2, 11),
                (3, 12),
                (4, 14),
                (1, 20),
                (2, 21),
                (3, 22)
            ]
        );
    }

    #[test]
    fn a_resumed_plans_stream_sends_nothing_up_to_its_id_until_a_start_over() {
        // Resumed after 3; the plan's creation, which the client has, is at 10.
        let cursor = Cursor {
            by_seq: true,
            last: 3,
            position: 10,
        };
        let events = [(1, 10), (2, 11), (3, 12), (4, 13), (1, 30), (2, 31)];
        assert_eq!(sent(cursor, &events), [(4, 13), (1, 30), (2, 31)]);
    }

    #[test]
    fn every_plans_stream_sends_each_position_once_in_order() {
        let mut cursor = Cursor {
            by_seq: false,
            last: 5,
            position: 5,
        };
        let events = [
            event("p", (1, 3)),
            event("p", (2, 6)),
            event("q", (1, 7)),
            event("p", (2, 6)),
            // p started over.
            event("p", (1, 9)),
        ];
        let mut sent = Vec::new();
        for e in &events {
            if cursor.admit(e) {
                sent.push((e.plan_id.clone(), e.seq, cursor.id(e)));
            }
        }
        assert_eq!(
            sent,
            [
                ("p".to_owned(), 2, 6),
                ("q".to_owned(), 1, 7),
                ("p".to_owned(), 1, 9)
            ]
        );
    }
}
