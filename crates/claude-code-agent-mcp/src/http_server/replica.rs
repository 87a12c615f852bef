//! Replicas sharing an [`EventStore`]: what the endpoint does with one.
//!
//! * A session's record is saved when `initialize` succeeds, again when
//!   the client changes what the session keeps after it (`logging/setLevel`,
//!   `resources/subscribe`, `resources/unsubscribe`: [`remember`]), kept
//!   while the session is used (a touch at most every quarter of the idle
//!   timeout), and replaced by an empty one, the mark of an ended session,
//!   by DELETE. A replica that gets a request for a session it does not
//!   have loads the record and takes the session over: the handler gets
//!   the client's `initialize` again (its answer unsent),
//!   `notifications/initialized`, then the client's level and
//!   subscriptions as requests of their own. Each request on a session
//!   reads its record first ([`check`]): a session ended on any replica is
//!   404 on every one.
//! * A stream's `Open` (its request id) is stored before its response
//!   starts; each event is stored before it goes to the client, by one
//!   writer task per session that batches what waits (one store round trip
//!   for many events). A store that fails lets events go unstored (logged):
//!   live clients keep getting them, only a failover loses what was not
//!   stored.
//! * `Last-Event-ID` naming a stream this replica does not have is served
//!   from the store: what came after it, page by page (each read once the
//!   client has taken the one before, at most 256 events and 256 KiB or
//!   the session's byte budget, and charged to that budget until taken),
//!   then, if nobody ended the stream, an error response to its request,
//!   written as an atomic take-over (so the dead replica's late answer is
//!   refused) — or, for a GET stream, this replica's own GET stream.
//! * The record names the replica that holds the session: the one that
//!   opened it, then the last one that took it over or that its client
//!   came back to ([`claim`]). A replica whose session has requests to
//!   the client waiting (elicitation, sampling, roots) reads the record
//!   every half second ([`watch`]): once another replica holds it, the
//!   client's answers go there, so those requests fail at once with
//!   [`ClientRequestError::SessionMoved`] rather than wait for an answer
//!   that cannot come. The replica that gets such an answer accepts it
//!   (202, as any response nobody waits for) and drops it.

use std::collections::BTreeSet;
use std::sync::{Arc, Weak};
use std::time::Duration;

use axum::body::Bytes;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::EndpointState;
use super::auth::chain;
use super::config::StreamableHttpConfig;
use super::hub::{Hub, Pages, Rx, frame_text};
use super::sessions::{HttpSession, Record};
use super::store::{EventStore, StoreError, StoreFuture, StoredStream, StreamWrite};
use crate::server::{ClientRequestError, RequestContext, answer};

/// Writes the writer task sends in one batch, at most.
const BATCH: usize = 256;
/// Attempts to take over a stream that its replica goes on writing.
const TAKE_OVER_TRIES: usize = 8;
/// How often a session's record is read while requests to its client
/// wait here ([`watch`]).
const MOVED_POLL: Duration = Duration::from_millis(500);

/// The record of an ended session (DELETE), kept for the idle timeout so
/// that the replicas holding a copy of the session learn it ended.
const ENDED: &[u8] = b"";

/// `request` (a copy), if it may change what a session keeps after
/// `initialize` and `config` has an event store: what [`remember`] then
/// takes.
pub(crate) fn change(config: &StreamableHttpConfig, request: &Value) -> Option<Value> {
    let method = request.get("method").and_then(Value::as_str)?;
    let changes = matches!(
        method,
        "logging/setLevel" | "resources/subscribe" | "resources/unsubscribe"
    );
    (changes && config.event_store.is_some()).then(|| request.clone())
}

/// `future`, failing once `timeout` has passed.
async fn bounded<T>(
    timeout: Duration,
    what: &str,
    future: StoreFuture<'_, T>,
) -> Result<T, StoreError> {
    match tokio::time::timeout(timeout, future).await {
        Ok(done) => done,
        Err(_) => Err(StoreError::new(format!(
            "the event store did not answer within {} ({what})",
            crate::server::limits::human(timeout)
        ))),
    }
}

/// From now on the events of `http` are stored before they are sent, and
/// its requests to the client fail once another replica holds it.
pub(crate) fn attach(shared: &EndpointState, store: &Arc<dyn EventStore>, http: &Arc<HttpSession>) {
    let timeout = shared.config.store_timeout;
    // Streams numbered from a random base below 2^48: replicas that take
    // the session over in turn number theirs apart.
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).expect("the operating system's random source works");
    let base = u64::from_le_bytes(bytes) >> 16;
    if let Some(queue) = http.hub.replicate(base) {
        tokio::spawn(writer(
            Arc::downgrade(&http.hub),
            Arc::clone(store),
            http.id.clone(),
            queue,
            timeout,
        ));
    }
    tokio::spawn(watch(
        Arc::downgrade(http),
        Arc::clone(&http.hub),
        Arc::clone(store),
        shared.replica.clone(),
        timeout,
    ));
}

/// The replica that holds a session by its record (`None`: an ended
/// session, or a record written before replicas were named).
fn holder(record: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Holder {
        replica: Option<String>,
    }
    serde_json::from_slice::<Holder>(record).ok()?.replica
}

/// While session `http` has requests to its client waiting for answers,
/// reads its record every [`MOVED_POLL`]: once another replica holds it
/// (its client's requests, its answers among them, go there now), those
/// requests fail with [`ClientRequestError::SessionMoved`] instead of
/// waiting for an answer that cannot come. Ends with the session.
async fn watch(
    http: Weak<HttpSession>,
    hub: Arc<Hub>,
    store: Arc<dyn EventStore>,
    me: String,
    timeout: Duration,
) {
    while hub.asked().await {
        loop {
            tokio::time::sleep(MOVED_POLL).await;
            let Some(http) = http.upgrade() else {
                return;
            };
            if http.session.waiting_on_client() == 0 {
                break;
            }
            let read = bounded(timeout, "reading a session", store.load_session(&http.id)).await;
            let moved = match read {
                Ok(record) => record.as_deref().and_then(holder).filter(|h| *h != me),
                Err(e) => {
                    tracing::debug!(error = %chain(&e), "MCP HTTP: a session's record was not read");
                    None
                }
            };
            if let Some(holder) = moved {
                let session = &http.id;
                let failed = http
                    .session
                    .fail_requests(|| ClientRequestError::SessionMoved {
                        session: session.clone(),
                    });
                tracing::warn!(
                    session = %session,
                    to = %holder,
                    failed,
                    "MCP HTTP: a session moved to another replica; its requests to the client \
                     waiting here failed (the client's answers go there)"
                );
                break;
            }
        }
    }
}

/// Stores what the session's hub queues, in order, then hands it on.
async fn writer(
    hub: Weak<Hub>,
    store: Arc<dyn EventStore>,
    session: String,
    mut queue: mpsc::UnboundedReceiver<StreamWrite>,
    timeout: Duration,
) {
    let mut batch = Vec::new();
    while let Some(first) = queue.recv().await {
        batch.push(first);
        while batch.len() < BATCH {
            match queue.try_recv() {
                Ok(next) => batch.push(next),
                Err(_) => break,
            }
        }
        let applied = bounded(timeout, "storing events", store.write(&session, &batch)).await;
        let applied = applied.unwrap_or_else(|e| {
            tracing::warn!(
                error = %chain(&e),
                events = batch.len(),
                "MCP HTTP: SSE events go out unstored (a client that fails over cannot resume them)"
            );
            Vec::new()
        });
        let Some(hub) = hub.upgrade() else {
            return;
        };
        let mut applied = applied.into_iter();
        for queued in batch.drain(..) {
            let stored = applied.next().unwrap_or(true);
            match queued {
                StreamWrite::Event { stream, seq, frame } if stored => {
                    hub.forward(stream, seq, frame);
                }
                StreamWrite::End { stream } if stored => hub.finish_local(stream),
                StreamWrite::Event { stream, .. } | StreamWrite::End { stream } => {
                    hub.taken_over(stream);
                }
                _ => {} // `Forget`; the hub queues nothing else
            }
        }
    }
}

/// Saves the record of `http`, just initialized by `initialize`.
pub(crate) async fn save(
    shared: &EndpointState,
    store: &Arc<dyn EventStore>,
    http: &HttpSession,
    initialize: Value,
) -> Result<(), StoreError> {
    let record = Record {
        protocol: http.protocol.get().cloned().unwrap_or_default(),
        owner: http.owner.get().map(|owner| (**owner).clone()),
        initialize,
        level: None,
        subscriptions: BTreeSet::new(),
        replica: Some(shared.replica.clone()),
    };
    let mut kept = http.record.lock().await;
    store_record(shared, store, &http.id, &record).await?;
    *kept = Some(Box::new(record));
    Ok(())
}

async fn store_record(
    shared: &EndpointState,
    store: &Arc<dyn EventStore>,
    id: &str,
    record: &Record,
) -> Result<(), StoreError> {
    let bytes = serde_json::to_vec(record).unwrap_or_default();
    let config = &shared.config;
    let saving = store.save_session(id, &bytes, config.idle_timeout);
    bounded(config.store_timeout, "saving a session", saving).await
}

/// After the handler answered `request` with `reply` on `http`: if the
/// request changed what the session keeps (its log level, its
/// subscriptions) and succeeded, the session's record in the store says so
/// before the answer goes out, so that a replica that takes the session
/// over keeps it. A store that fails is logged: the session goes on here,
/// and a takeover would miss the change.
pub(crate) async fn remember(
    shared: &EndpointState,
    http: &HttpSession,
    request: &Value,
    reply: Option<&Value>,
) {
    let Some(store) = &shared.config.event_store else {
        return;
    };
    let method = request.get("method").and_then(Value::as_str);
    if reply.is_none_or(|r| r.get("result").is_none()) {
        return;
    }
    let params = request.get("params");
    let uri = || {
        params
            .and_then(|p| p.get("uri"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let mut kept = http.record.lock().await;
    let Some(record) = kept.as_mut() else {
        return;
    };
    match method.unwrap_or_default() {
        "logging/setLevel" => record.level = params.and_then(|p| p.get("level")).cloned(),
        "resources/subscribe" => record.subscriptions.extend(uri()),
        _ => {
            if let Some(uri) = uri() {
                record.subscriptions.remove(&uri);
            }
        }
    }
    if let Err(e) = store_record(shared, store, &http.id, record).await {
        tracing::warn!(
            error = %chain(&e),
            "MCP HTTP: a session's level or subscriptions were not stored (a replica that \
             takes it over would not have them)"
        );
    }
}

/// What became of a session asked for from the store.
pub(crate) enum Adopted {
    /// Taken over by this replica.
    Session(Arc<HttpSession>),
    /// The store does not have it either.
    Unknown,
    /// This replica has as many sessions as it may hold.
    Full,
}

/// Session `id` from the store, taken over by this replica.
pub(crate) async fn adopt(
    shared: &EndpointState,
    store: &Arc<dyn EventStore>,
    id: &str,
) -> Result<Adopted, StoreError> {
    let timeout = shared.config.store_timeout;
    let Some(bytes) = bounded(timeout, "loading a session", store.load_session(id)).await? else {
        return Ok(Adopted::Unknown);
    };
    if bytes == ENDED {
        return Ok(Adopted::Unknown);
    }
    let record: Record = serde_json::from_slice(&bytes).map_err(|e| {
        StoreError::new(format!(
            "the event store's record of session {id} is not one this version wrote"
        ))
        .with_source(e)
    })?;
    let http = shared.sessions.build(id.to_owned(), &shared.config);
    attach(shared, store, &http);
    let ctx = RequestContext::with_session(http.session.clone());
    let handler = shared.handler.as_ref();
    let _ = answer(handler, record.initialize.clone(), ctx.clone()).await;
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let _ = answer(handler, initialized, ctx.clone()).await;
    // What the client set since, each as the request that set it (its
    // answer unsent).
    let level = record
        .level
        .iter()
        .map(|level| ("logging/setLevel", json!({"level": level})));
    let subscriptions =
        (record.subscriptions.iter()).map(|uri| ("resources/subscribe", json!({"uri": uri})));
    for (n, (method, params)) in level.chain(subscriptions).enumerate() {
        let request = json!({"jsonrpc": "2.0", "id": format!("takeover-{n}"),
            "method": method, "params": params});
        let _ = answer(handler, request, ctx.clone()).await;
    }
    let _ = http.protocol.set(record.protocol.clone());
    if let Some(owner) = record.owner.clone() {
        let _ = http.owner.set(Box::new(owner));
    }
    *http.record.lock().await = Some(Box::new(record));
    match shared.sessions.insert(http, &shared.config) {
        Some(http) => {
            // This replica holds it now: the one that held it learns so.
            claim(shared, store, &http).await;
            tracing::info!(
                session = id,
                "MCP HTTP: took a session over from the event store"
            );
            Ok(Adopted::Session(http))
        }
        None => Ok(Adopted::Full),
    }
}

/// Marks session `id` ended in the store (DELETE): its record becomes
/// the empty one, kept for the idle timeout (as long as a copy of the
/// session may live on another replica), which [`check`] and [`adopt`]
/// read as "ended".
pub(crate) async fn end(
    shared: &EndpointState,
    store: &Arc<dyn EventStore>,
    id: &str,
) -> Result<(), StoreError> {
    let config = &shared.config;
    let ending = store.save_session(id, ENDED, config.idle_timeout);
    bounded(config.store_timeout, "ending a session", ending).await
}

/// Whether session `http`, which this replica holds, still lives by its
/// record in the store (`false`: another replica ended it with DELETE).
/// A record gone (expired while a stream kept the session alive here) is
/// saved again; a store that fails or is slow leaves the session served
/// (requests answered here do not need the store), and is logged.
pub(crate) async fn check(
    shared: &EndpointState,
    store: &Arc<dyn EventStore>,
    http: &HttpSession,
) -> bool {
    let timeout = shared.config.store_timeout;
    match bounded(timeout, "reading a session", store.load_session(&http.id)).await {
        Ok(Some(bytes)) if bytes == ENDED => false,
        Ok(Some(bytes)) => {
            if holder(&bytes).is_some_and(|h| h != shared.replica) {
                // Its client came back from another replica.
                claim(shared, store, http).await;
            } else {
                touch(shared, store, http);
            }
            true
        }
        Ok(None) => {
            let kept = http.record.lock().await;
            if let Some(record) = kept.as_ref()
                && let Err(e) = store_record(shared, store, &http.id, record).await
            {
                tracing::warn!(error = %chain(&e), "MCP HTTP: a session's record was not saved again");
            }
            true
        }
        Err(e) => {
            tracing::warn!(error = %chain(&e), "MCP HTTP: a session's record was not read");
            true
        }
    }
}

/// Saves the record of `http` as held by this replica (logged if the store
/// fails: the replica that held it goes on waiting for its client).
async fn claim(shared: &EndpointState, store: &Arc<dyn EventStore>, http: &HttpSession) {
    let mut kept = http.record.lock().await;
    let Some(record) = kept.as_mut() else {
        return;
    };
    record.replica = Some(shared.replica.clone());
    if let Err(e) = store_record(shared, store, &http.id, record).await {
        tracing::warn!(error = %chain(&e), "MCP HTTP: a session's new replica was not stored");
    }
}

/// Keeps the record of `http` in the store while it is used: at most one
/// touch per quarter of the idle timeout, not waited for.
fn touch(shared: &EndpointState, store: &Arc<dyn EventStore>, http: &HttpSession) {
    let idle = shared.config.idle_timeout;
    if !http.store_touch_due(idle / 4) {
        return;
    }
    let (store, id, timeout) = (
        Arc::clone(store),
        http.id.clone(),
        shared.config.store_timeout,
    );
    tokio::spawn(async move {
        if let Err(e) = bounded(timeout, "keeping a session", store.touch_session(&id, idle)).await
        {
            tracing::warn!(error = %chain(&e), "MCP HTTP: a session's record was not kept");
        }
    });
}

/// Opens a stream of `http` whose `Open` is stored first: the answer to
/// `request`, or (`None`) the session's GET stream.
pub(crate) async fn open(
    shared: &EndpointState,
    store: &Arc<dyn EventStore>,
    http: &HttpSession,
    request: Option<Value>,
) -> Result<(u64, Rx), StoreError> {
    let stream = http.hub.next_stream();
    let standalone = request.is_none();
    let write = [StreamWrite::Open { stream, request }];
    let timeout = shared.config.store_timeout;
    bounded(timeout, "opening a stream", store.write(&http.id, &write)).await?;
    let rx = http.hub.open_as(stream, http.priming());
    if standalone {
        http.hub.make_standalone(stream);
    }
    Ok((stream, rx))
}

/// A GET's response when this replica does not have the stream `last`
/// (its `Last-Event-ID`) names: that stream from the store (another replica
/// served it), or a new GET stream whose opening is stored.
pub(crate) async fn get_stream(
    shared: &EndpointState,
    store: &Arc<dyn EventStore>,
    http: &HttpSession,
    last: Option<&str>,
) -> Result<Rx, StoreError> {
    let resumed = match last {
        Some(last) => resume(shared, store, http, last).await?,
        None => None,
    };
    match resumed {
        Some((frames, false)) => Ok(http.hub.replayed(frames, None)),
        Some((frames, true)) => {
            let (_, rx) = open(shared, store, http, None).await?;
            Ok(http.hub.replayed(frames, Some(rx)))
        }
        None => Ok(open(shared, store, http, None).await?.1),
    }
}

/// A stream this replica does not have, from the store: what came after
/// `last_event_id`, page by page ([`replay`]), and whether this replica's
/// GET stream carries on after it. `None` when the store does not have it
/// either.
async fn resume(
    shared: &EndpointState,
    store: &Arc<dyn EventStore>,
    http: &HttpSession,
    last_event_id: &str,
) -> Result<Option<(Pages, bool)>, StoreError> {
    let Some((stream, seq)) = last_event_id
        .trim()
        .split_once('-')
        .and_then(|(s, n)| Some((s.parse::<u64>().ok()?, n.parse::<u64>().ok()?)))
    else {
        return Ok(None);
    };
    let replay = Replay {
        store: Arc::clone(store),
        session: http.id.clone(),
        stream,
        after: seq,
        page_bytes: http.hub.page_bytes(),
        timeout: shared.config.store_timeout,
        tries: 0,
    };
    // The first page before the response: a store that fails is a 503.
    let Some(first) = replay.read().await? else {
        return Ok(None);
    };
    let standalone = first.request.is_none() && !first.ended;
    Ok(Some((replay.pages(first), standalone)))
}

/// Events of a stream read from the store at once, at most.
const PAGE_EVENTS: usize = 256;

/// A stream of another replica, read from the store page by page.
struct Replay {
    store: Arc<dyn EventStore>,
    session: String,
    stream: u64,
    /// The last event read (at first, the client's `Last-Event-ID`).
    after: u64,
    page_bytes: usize,
    timeout: Duration,
    /// Take-overs tried.
    tries: usize,
}

impl Replay {
    async fn read(&self) -> Result<Option<StoredStream>, StoreError> {
        let (after, bytes) = (self.after, self.page_bytes);
        let page = (self.store).read_page(&self.session, self.stream, after, PAGE_EVENTS, bytes);
        bounded(self.timeout, "reading a stream", page).await
    }

    /// The pages from `first` on, each read once the client has taken
    /// the one before; then, if nobody ended the stream, the error that
    /// ends it ([`take_over`](Self::take_over)).
    fn pages(self, first: StoredStream) -> Pages {
        let pages = futures::stream::unfold(
            (self, Some(first)),
            |(mut replay, mut read)| async move {
                loop {
                    let page = match read.take() {
                        Some(page) => page,
                        None => match replay.read().await {
                            Ok(Some(page)) => page,
                            Ok(None) => return None, // expired meanwhile
                            Err(e) => {
                                tracing::warn!(error = %chain(&e), "MCP HTTP: a stream's replay was cut short");
                                return Some((Err(()), (replay, None)));
                            }
                        },
                    };
                    if let Some((n, _)) = page.events.last() {
                        replay.after = *n;
                        let frames = page.events.into_iter().map(|(_, frame)| frame).collect();
                        return Some((Ok(frames), (replay, None)));
                    }
                    // Nothing more for now. Ended: replayed as it is. A GET
                    // stream: this replica's goes on.
                    let request = page.request.filter(|_| !page.ended)?;
                    if let Err(e) = replay.take_over(&request).await {
                        tracing::warn!(error = %chain(&e), "MCP HTTP: a stream was not taken over");
                        return Some((Err(()), (replay, None)));
                    }
                    // Taken over, ended meanwhile by its own replica, or
                    // written on by it since it was read: read on.
                }
            },
        );
        Box::pin(pages)
    }

    /// Ends the stream, which nobody ended, with an error response to its
    /// `request` after the last event read, atomically: the replica that
    /// ran it, if it answers late, is refused.
    async fn take_over(&mut self, request: &Value) -> Result<(), StoreError> {
        if self.tries == TAKE_OVER_TRIES {
            return Err(StoreError::new(format!(
                "stream {} of the session is still being written by another replica",
                self.stream
            )));
        }
        self.tries += 1;
        let error = crate::jsonrpc::error_response(
            request,
            crate::jsonrpc::ErrorObject::new(
                crate::jsonrpc::INTERNAL_ERROR,
                "The server replica that ran this request stopped before it answered; the \
                 request may or may not have run: retry it if that is safe",
            )
            .with_data(json!({"retryable": true})),
        );
        let seq = self.after + 1;
        let frame = Bytes::from(frame_text(self.stream, seq, &error));
        let stream = self.stream;
        let take_over = [StreamWrite::TakeOver { stream, seq, frame }];
        let writing = self.store.write(&self.session, &take_over);
        let taken = bounded(self.timeout, "taking a stream over", writing).await?;
        if taken.first() == Some(&true) {
            tracing::warn!(
                stream,
                "MCP HTTP: a stream nobody ended was taken over; its request gets an error"
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http_server::MemoryEventStore;

    #[tokio::test]
    async fn a_replay_holds_a_page_at_most_and_every_event_once() {
        let store: Arc<dyn EventStore> = Arc::new(MemoryEventStore::new());
        let limit = 8 * 1024;
        let hub = Hub::new(None, 16, 1 << 20, limit);
        let event = |seq: u64| {
            let frame = frame_text(1, seq, &json!({"pad": "x".repeat(1000)}));
            StreamWrite::Event {
                stream: 1,
                seq,
                frame: Bytes::from(frame),
            }
        };
        let open = StreamWrite::Open {
            stream: 1,
            request: None,
        };
        let mut writes = vec![open];
        writes.extend((1..=100).map(event));
        writes.push(StreamWrite::End { stream: 1 });
        store.write("s", &writes).await.unwrap();
        let replay = Replay {
            store: Arc::clone(&store),
            session: "s".into(),
            stream: 1,
            after: 0,
            page_bytes: hub.page_bytes(),
            timeout: Duration::from_secs(5),
            tries: 0,
        };
        let first = replay.read().await.unwrap().unwrap();
        let mut rx = hub.replayed(replay.pages(first), None);
        let (mut seqs, mut most) = (Vec::new(), 0);
        while let Some(frame) = rx.recv().await {
            // What waits for the client is charged, a page at most.
            most = most.max(hub.held());
            let text = String::from_utf8_lossy(&frame);
            let id = text.strip_prefix("id: 1-").unwrap();
            seqs.push(id.split('\n').next().unwrap().parse::<u64>().unwrap());
        }
        assert!(
            most <= limit && most > limit / 2,
            "{most} bytes held at most"
        );
        assert_eq!(hub.held(), 0);
        assert_eq!(seqs, (1..=100).collect::<Vec<u64>>());
    }
}
