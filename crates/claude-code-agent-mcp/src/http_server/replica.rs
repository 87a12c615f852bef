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
//!   from the store: what came after it, then, if nobody ended the stream,
//!   an error response to its request, written as an atomic take-over (so
//!   the dead replica's late answer is refused) — or, for a GET stream,
//!   this replica's own GET stream.

use std::collections::BTreeSet;
use std::sync::{Arc, Weak};
use std::time::Duration;

use axum::body::Bytes;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::EndpointState;
use super::auth::chain;
use super::config::StreamableHttpConfig;
use super::hub::{Hub, Rx, frame_text};
use super::sessions::{HttpSession, Record};
use super::store::{EventStore, StoreError, StoreFuture, StreamWrite};
use crate::server::{RequestContext, answer};

/// Writes the writer task sends in one batch, at most.
const BATCH: usize = 256;
/// Attempts to take over a stream that its replica goes on writing.
const TAKE_OVER_TRIES: usize = 8;

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

/// From now on the events of `http` are stored before they are sent.
pub(crate) fn attach(http: &HttpSession, store: &Arc<dyn EventStore>, timeout: Duration) {
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
    attach(&http, store, timeout);
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
        Ok(Some(_)) => {
            touch(shared, store, http);
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
/// `last_event_id`, and whether this replica's GET stream carries on
/// after it. `None` when the store does not have it either.
async fn resume(
    shared: &EndpointState,
    store: &Arc<dyn EventStore>,
    http: &HttpSession,
    last_event_id: &str,
) -> Result<Option<(Vec<Bytes>, bool)>, StoreError> {
    let Some((stream, seq)) = last_event_id
        .trim()
        .split_once('-')
        .and_then(|(s, n)| Some((s.parse::<u64>().ok()?, n.parse::<u64>().ok()?)))
    else {
        return Ok(None);
    };
    let timeout = shared.config.store_timeout;
    let read = || bounded(timeout, "reading a stream", store.read(&http.id, stream));
    let Some(mut stored) = read().await? else {
        return Ok(None);
    };
    let after = |events: Vec<(u64, Bytes)>| -> Vec<Bytes> {
        events
            .into_iter()
            .filter(|(n, _)| *n > seq)
            .map(|(_, frame)| frame)
            .collect()
    };
    for _ in 0..TAKE_OVER_TRIES {
        let Some(request) = stored.request.clone().filter(|_| !stored.ended) else {
            // Ended: replayed as it is. A GET stream: this replica's goes on.
            let standalone = stored.request.is_none() && !stored.ended;
            return Ok(Some((after(stored.events), standalone)));
        };
        let next = stored.events.last().map_or(seq, |(n, _)| *n).max(seq) + 1;
        let error = crate::jsonrpc::error_response(
            &request,
            crate::jsonrpc::ErrorObject::new(
                crate::jsonrpc::INTERNAL_ERROR,
                "The server replica that ran this request stopped before it answered; the \
                 request may or may not have run: retry it if that is safe",
            )
            .with_data(json!({"retryable": true})),
        );
        let frame = Bytes::from(frame_text(stream, next, &error));
        let take_over = [StreamWrite::TakeOver {
            stream,
            seq: next,
            frame,
        }];
        let taken = bounded(
            timeout,
            "taking a stream over",
            store.write(&http.id, &take_over),
        )
        .await?;
        if taken.first() == Some(&true) {
            tracing::warn!(
                stream,
                "MCP HTTP: a stream nobody ended was taken over; its request gets an error"
            );
        }
        // Taken over, ended meanwhile by its own replica, or written on by
        // it since it was read (then taken over again, after its events).
        stored = read().await?.unwrap_or_default();
        if stored.ended {
            return Ok(Some((after(stored.events), false)));
        }
    }
    Err(StoreError::new(format!(
        "stream {stream} of the session is still being written by another replica"
    )))
}
