//! The SSE streams of one session: each POST answered with SSE and each GET
//! gets a stream; every event is numbered (`<stream>-<seq>`) and kept while
//! a client may still want it, so a client that reconnects with
//! `Last-Event-ID` gets the rest.
//!
//! What is kept is bounded in bytes (`replay_bytes` per session; the oldest
//! streams' events go first) and in events per stream. A stream whose events
//! all went out to its client — it finished while a response was attached,
//! and that response's body was read to its end — is kept only among the
//! last `DELIVERED_KEPT` such streams (the body's end is no proof that the
//! client got it: a connection that broke meanwhile is noticed later), so a
//! session that served many calls keeps a few hundred bytes of them. The
//! streams are a short list sorted by id (never more than the streams in
//! flight plus those kept), freed when it empties: an idle session that has
//! served calls holds no stream memory beyond what it keeps for replay.
//!
//! Nothing here waits for a client: a response body reads a bounded channel,
//! and a client so slow that its channel fills (it stopped reading: more
//! events than are kept per stream, or more bytes than the session's
//! budget, wait in it) has its response ended instead of the server
//! buffering for it without bound. The events stay kept for it to resume
//! from, like after any disconnection.
//!
//! What waits for the client is charged to the session's byte budget
//! ([`Budget`], `transport/budget.rs`) until the client takes it: an event
//! while it is in its response's channel, a JSON answer until hyper lets go
//! of its body, a page of a replay from the event store (one at a time, no
//! larger than the budget) until the body has read it. What is kept after that (for replay, or for a GET stream to
//! come) is bounded by `replay_bytes` and never charged, so a client that
//! reads everything brings the budget back to zero. A request of the session
//! is taken only while the budget has room for it ([`Hub::admit`]), so a
//! client that opens streams and reads none of them makes the server wait,
//! not grow.

mod sink;

use std::collections::VecDeque;
use std::fmt::Display;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use axum::body::Bytes;
use serde_json::Value;
use tokio::sync::mpsc;

use super::store::StreamWrite;
use crate::transport::budget::{Budget, Charge, Demand, Ticket};
use sink::Replay;
use sink::{Event, Sink, charged, with_charge};
pub(crate) use sink::{Pages, Rx, frame_text};

/// Server messages kept while no GET stream is open.
const BACKLOG_CAP: usize = 1024;
/// What keeping one event costs beyond its bytes (counted in the budget).
const EVENT_OVERHEAD: usize = 32;
/// The most bytes of a page of a replay from the event store (less if the
/// session's budget is smaller).
const PAGE_BYTES: usize = 256 * 1024;
/// Streams whose response was read to the end, still kept for a client
/// whose connection broke as the last bytes went out.
const DELIVERED_KEPT: usize = 2;

pub(crate) struct Hub {
    state: Mutex<State>,
    retry: Option<Duration>,
    events_per_stream: usize,
    replay_bytes: usize,
    /// What the session holds for its client, and which of its requests run.
    budget: Arc<Budget>,
    /// With an event store: where events go to be stored before they are
    /// sent (`replica.rs` stores them, then calls [`Hub::forward`]).
    /// What it queues: `Event` (sent to its client once stored), `End`
    /// (the request was answered: [`Hub::finish_local`] once stored) and
    /// `Forget` (its client read the stream to the end).
    replica: OnceLock<Replicated>,
}

/// What a session replicated through an event store has beside its hub.
struct Replicated {
    /// Where its writes go, in order.
    writes: mpsc::UnboundedSender<StreamWrite>,
    /// Told when a request to the client goes out (`replica.rs` then
    /// watches whether the session moves elsewhere), and when the session
    /// ends.
    asked: tokio::sync::Notify,
}

/// Whether `message` is a request (to the client).
fn is_request(message: &Value) -> bool {
    message.get("method").is_some() && message.get("id").is_some()
}

#[derive(Default)]
struct State {
    next: u64,
    streams: Streams,
    /// Bytes kept for replay (events and their overhead).
    kept: usize,
    /// The GET stream that carries messages not tied to a request.
    standalone: Option<u64>,
    /// How many kept streams were read to their end (`Stream::delivered`).
    delivered: usize,
    /// Messages waiting for a GET stream (their JSON text), and their bytes.
    backlog: VecDeque<Bytes>,
    backlog_bytes: usize,
    /// With an event store: the charges of the events queued to be stored
    /// and not yet handed to their client's channel (stream, event), in
    /// the order the store takes them.
    unforwarded: VecDeque<(u64, u64, Charge)>,
    closed: bool,
}

// ---------------------------------------------------------------------------
// The streams of one session ([`Stream`]), by id ([`Streams`]).

/// The streams of a session by id, oldest first: a short sorted list (a
/// replica's ids only grow, so a new stream goes last), its buffer freed
/// when it empties.
#[derive(Default)]
struct Streams(VecDeque<(u64, Stream)>);

impl Streams {
    fn index(&self, id: u64) -> Option<usize> {
        self.0.binary_search_by_key(&id, |(k, _)| *k).ok()
    }

    fn get(&self, id: u64) -> Option<&Stream> {
        self.index(id).map(|i| &self.0[i].1)
    }

    fn get_mut(&mut self, id: u64) -> Option<&mut Stream> {
        self.index(id).map(|i| &mut self.0[i].1)
    }

    /// Adds stream `id` (usually newer than every stream here: it goes
    /// last).
    fn push(&mut self, id: u64, stream: Stream) {
        match self.0.back() {
            Some((last, _)) if *last > id => {
                let at = self.0.partition_point(|(k, _)| *k < id);
                self.0.insert(at, (id, stream));
            }
            _ => self.0.push_back((id, stream)),
        }
    }

    fn remove(&mut self, id: u64) -> Option<Stream> {
        let stream = self
            .index(id)
            .and_then(|i| self.0.remove(i))
            .map(|(_, s)| s);
        if self.0.is_empty() {
            self.0 = VecDeque::new();
        }
        stream
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.0.len()
    }

    /// The room its buffer holds (for tests).
    #[cfg(test)]
    fn capacity(&self) -> usize {
        self.0.capacity()
    }

    fn iter(&self) -> impl Iterator<Item = &(u64, Stream)> {
        self.0.iter()
    }

    fn iter_mut(&mut self) -> impl Iterator<Item = &mut (u64, Stream)> {
        self.0.iter_mut()
    }
}

#[derive(Default)]
struct Stream {
    seq: u64,
    /// The last event handed to the client's channel (with an event store,
    /// events wait to be stored first; without, it is `seq`).
    forwarded: u64,
    events: VecDeque<(u64, Bytes)>,
    tx: Option<Sink>,
    /// Counts the responses attached to this stream (the last one is the
    /// one that matters).
    attachment: u64,
    /// The attached response has had every event since its client's
    /// starting point (none was cut off).
    whole: bool,
    finished: bool,
    /// Finished, and its last response read it all to the end: kept only
    /// while it is among the last `DELIVERED_KEPT` such streams.
    delivered: bool,
    /// A GET stream (it answers no request).
    get: bool,
}

#[cfg(test)]
fn frame(stream: u64, seq: u64, message: &Value) -> Bytes {
    Bytes::from(frame_text(stream, seq, message))
}

fn cost(bytes: &Bytes) -> usize {
    bytes.len() + EVENT_OVERHEAD
}

impl State {
    /// Forgets stream `id` and what it kept.
    fn forget(&mut self, id: u64) {
        if let Some(s) = self.streams.remove(id) {
            self.kept -= s.events.iter().map(|(_, b)| cost(b)).sum::<usize>();
            self.delivered -= usize::from(s.delivered);
        }
    }

    /// Drops the oldest kept events until the budget holds; a finished
    /// stream left with nothing to replay goes too.
    fn evict(&mut self, budget: usize) {
        while self.kept > budget {
            let Some((id, stream)) = self.streams.iter_mut().find(|(_, s)| !s.events.is_empty())
            else {
                return;
            };
            if let Some((_, bytes)) = stream.events.pop_front() {
                self.kept -= cost(&bytes);
            }
            if stream.finished && stream.events.is_empty() {
                let id = *id;
                self.forget(id);
            }
        }
    }
}

impl Hub {
    pub(crate) fn new(
        retry: Option<Duration>,
        events_per_stream: usize,
        replay_bytes: usize,
        held_bytes: usize,
    ) -> Self {
        Self {
            state: Mutex::default(),
            retry,
            events_per_stream,
            replay_bytes,
            budget: Budget::new(held_bytes),
            replica: OnceLock::new(),
        }
    }

    /// From now on, events are stored before they are sent: the receiver
    /// gets them in order (stored by `replica.rs`, which then calls
    /// [`forward`](Self::forward) and [`finish_local`](Self::finish_local)).
    /// Streams are numbered from `base` (random, so that replicas that
    /// take the session over in turn number theirs apart).
    pub(crate) fn replicate(&self, base: u64) -> Option<mpsc::UnboundedReceiver<StreamWrite>> {
        let (tx, rx) = mpsc::unbounded_channel();
        let replicated = Replicated {
            writes: tx,
            asked: tokio::sync::Notify::new(),
        };
        self.replica.set(replicated).ok()?;
        self.lock().next = base;
        Some(rx)
    }

    fn queue(&self, item: StreamWrite) -> bool {
        self.replica
            .get()
            .is_some_and(|replica| replica.writes.send(item).is_ok())
    }

    /// A response body's channel: room for the priming event and every
    /// kept event (a replay), and no more.
    fn channel(&self, stream: u64, attachment: u64) -> (Sink, Rx) {
        let (tx, events) = mpsc::channel(self.events_per_stream.max(1) + 1);
        let pending = Arc::new(AtomicUsize::new(0));
        let sink = Sink {
            tx,
            pending: Arc::clone(&pending),
        };
        let rx = Rx {
            prefix: VecDeque::new(),
            replay: None,
            events,
            pending,
            stream,
            attachment,
        };
        (sink, rx)
    }

    /// Waits until the session's byte budget has room for the request
    /// `demand` describes, and counts it as running until the ticket is
    /// used for its answer ([`answer`](Self::answer), [`json`](Self::json))
    /// or dropped.
    pub(crate) async fn admit(&self, demand: Demand) -> Ticket {
        self.budget.admit_any(|| std::iter::once(demand)).await.1
    }

    /// A JSON answer's body, charged to the request's ticket (or to the
    /// session) while it lives.
    pub(crate) fn json(&self, reply: &Value, ticket: Option<Ticket>) -> Bytes {
        charged(&self.budget, reply.to_string(), ticket)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Opens a stream; `priming` sends the event that gives the client an id
    /// to resume from (and the `retry` delay) before anything else.
    pub(crate) fn open(&self, priming: bool) -> (u64, Rx) {
        let id = self.next_stream();
        (id, self.open_as(id, priming))
    }

    /// A number for a stream to open with [`open_as`](Self::open_as).
    pub(crate) fn next_stream(&self) -> u64 {
        let mut state = self.lock();
        state.next += 1;
        state.next
    }

    /// Opens stream `id` (from [`next_stream`](Self::next_stream)).
    pub(crate) fn open_as(&self, id: u64, priming: bool) -> Rx {
        let mut state = self.lock();
        let (tx, rx) = self.channel(id, 1);
        if priming {
            let retry = self
                .retry
                .map(|r| format!("retry: {}\n", r.as_millis()))
                .unwrap_or_default();
            let _ = tx.try_send((Bytes::from(format!("id: {id}-0\n{retry}data: \n\n")), None));
        }
        if state.closed {
            return rx; // tx dropped: the body ends after the priming event
        }
        state.streams.push(
            id,
            Stream {
                tx: Some(tx),
                attachment: 1,
                whole: true,
                ..Stream::default()
            },
        );
        rx
    }

    /// Opens the GET stream for messages not tied to a request, and sends
    /// what waited for one.
    pub(crate) fn open_standalone(&self, priming: bool) -> Rx {
        let (id, rx) = self.open(priming);
        self.make_standalone(id);
        rx
    }

    /// Makes stream `id` the one for messages not tied to a request, and
    /// sends what waited for one.
    pub(crate) fn make_standalone(&self, id: u64) {
        let backlog: Vec<Bytes> = {
            let mut state = self.lock();
            state.standalone = Some(id);
            if let Some(stream) = state.streams.get_mut(id) {
                stream.get = true;
            }
            state.backlog_bytes = 0;
            state.backlog.drain(..).collect()
        };
        for message in backlog {
            // The text is valid UTF-8: it was written by serde_json.
            self.send_text(id, &String::from_utf8_lossy(&message), None);
        }
    }

    /// Sends `message` on stream `id` (kept for replay either way).
    pub(crate) fn send(&self, id: u64, message: &Value) {
        self.note_request(message);
        self.send_text(id, message, None);
    }

    /// With an event store, tells [`asked`](Self::asked) when `message` is
    /// a request to the client (without, nobody waits there).
    fn note_request(&self, message: &Value) {
        if let Some(replica) = self.replica.get()
            && is_request(message)
        {
            replica.asked.notify_one();
        }
    }

    /// Waits until a request to the client goes out on the session (one
    /// sent since the last call counts); `false` once the session has
    /// ended, or at once if it is not replicated.
    pub(crate) async fn asked(&self) -> bool {
        let Some(replica) = self.replica.get() else {
            return false;
        };
        let notified = replica.asked.notified();
        let mut notified = std::pin::pin!(notified);
        notified.as_mut().enable();
        if self.lock().closed {
            return false;
        }
        notified.await;
        !self.lock().closed
    }

    /// Sends the answer to the request `ticket` admitted on stream `id`:
    /// its bytes are charged instead of the running request's estimate.
    pub(crate) fn answer(&self, id: u64, message: &Value, ticket: Ticket) {
        self.send_text(id, message, Some(ticket));
    }

    fn send_text(&self, id: u64, message: &dyn Display, ticket: Option<Ticket>) {
        let cap = self.events_per_stream;
        let mut state = self.lock();
        let state = &mut *state;
        let Some(stream) = state.streams.get_mut(id) else {
            return;
        };
        stream.seq += 1;
        let (text, charge) = with_charge(&self.budget, frame_text(id, stream.seq, message), ticket);
        let bytes = Bytes::from(text);
        if stream.events.len() >= cap
            && let Some((_, old)) = stream.events.pop_front()
        {
            state.kept -= cost(&old);
        }
        state.kept += cost(&bytes);
        stream.events.push_back((stream.seq, bytes.clone()));
        let seq = stream.seq;
        if self.replica.get().is_none() {
            stream.forwarded = seq;
            self.to_client(id, stream, (bytes, Some(charge)));
        } else {
            // Charged until it is stored and handed to the client's channel.
            state.unforwarded.push_back((id, seq, charge));
            self.queue(StreamWrite::Event {
                stream: id,
                seq,
                frame: bytes,
            });
        }
        state.evict(self.replay_bytes);
    }

    /// Event `seq` of stream `id` is stored: it goes to the client.
    pub(crate) fn forward(&self, id: u64, seq: u64, frame: Bytes) {
        let mut state = self.lock();
        let state = &mut *state;
        // The store takes events in the order they were queued: those
        // before this one were forwarded or never will be.
        let charge = state
            .unforwarded
            .iter()
            .position(|(s, n, _)| (*s, *n) == (id, seq))
            .and_then(|at| state.unforwarded.drain(..=at).next_back())
            .map(|(_, _, charge)| charge);
        let Some(stream) = state.streams.get_mut(id) else {
            return;
        };
        if seq > stream.forwarded {
            stream.forwarded = seq;
            self.to_client(id, stream, (frame, charge));
        }
    }

    /// Sends `bytes` into the channel of the response attached to `stream`
    /// (`id`), if any; a client that does not keep up is cut off (it may
    /// resume).
    fn to_client(&self, id: u64, stream: &mut Stream, event: Event) {
        if let Some(tx) = &stream.tx {
            // Past the budget in bytes the client is not reading either
            // (an event larger than the whole budget still goes alone).
            let unread = tx.pending();
            let sent = if unread > 0 && unread + event.0.len() > self.budget.limit() {
                Err(mpsc::error::TrySendError::Full(event))
            } else {
                tx.try_send(event)
            };
            match sent {
                Ok(()) => {}
                Err(mpsc::error::TrySendError::Full(_)) => {
                    tracing::warn!(
                        stream = id,
                        "an SSE client stopped reading; its response ends here (it may \
                         resume with Last-Event-ID)"
                    );
                    stream.tx = None;
                    stream.whole = false;
                }
                Err(mpsc::error::TrySendError::Closed(_)) => {
                    stream.tx = None;
                    stream.whole = false;
                }
            }
        }
    }

    /// A message not tied to a request: on the GET stream if one is open,
    /// else kept until one opens.
    pub(crate) fn deliver(&self, message: Value) {
        self.note_request(&message);
        let target = {
            let mut state = self.lock();
            let live = state.standalone.filter(|id| {
                state
                    .streams
                    .get(*id)
                    .is_some_and(|s| s.tx.as_ref().is_some_and(|t| !t.is_closed()))
            });
            if live.is_none() {
                // Kept as text, within the replay budget and BACKLOG_CAP
                // messages: past either, the oldest go.
                let text = Bytes::from(message.to_string());
                state.backlog_bytes += text.len();
                state.backlog.push_back(text);
                let mut dropped = 0;
                while state.backlog.len() > BACKLOG_CAP
                    || (state.backlog_bytes > self.replay_bytes && state.backlog.len() > 1)
                {
                    if let Some(old) = state.backlog.pop_front() {
                        state.backlog_bytes -= old.len();
                        dropped += 1;
                    }
                }
                if dropped > 0 {
                    tracing::warn!(
                        dropped,
                        "an HTTP session's messages waiting for a GET stream passed their bound; \
                         the oldest were dropped"
                    );
                }
                return;
            }
            live
        };
        if let Some(id) = target {
            self.send(id, &message);
        }
    }

    /// The request of stream `id` is answered: the stream ends. Its events
    /// stay kept until its response has read them all ([`Hub::delivered`]),
    /// or, if it has none attached, for a client to resume.
    pub(crate) fn finish(&self, id: u64) {
        if !self.queue(StreamWrite::End { stream: id }) {
            self.finish_local(id);
        }
    }

    /// [`finish`](Self::finish), done (with an event store: once the end
    /// is stored).
    pub(crate) fn finish_local(&self, id: u64) {
        let mut state = self.lock();
        let Some(stream) = state.streams.get_mut(id) else {
            return;
        };
        stream.finished = true;
        if stream.tx.take().is_some_and(|tx| tx.is_closed()) {
            stream.whole = false;
        }
        if stream.events.is_empty() {
            state.forget(id);
        }
    }

    /// The store refused an event or the end of stream `id`: another
    /// replica ended it (this one was thought gone). Its response ends, and
    /// it is forgotten.
    pub(crate) fn taken_over(&self, id: u64) {
        let mut state = self.lock();
        if let Some(stream) = state.streams.get_mut(id) {
            stream.tx = None;
            stream.finished = true;
        }
        state.forget(id);
    }

    /// A response body that reads `pages` (a replay from the event store,
    /// each page charged to the session's budget until the client takes
    /// it) and ends; with `then`, it carries on with what that stream's
    /// channel gets instead.
    pub(crate) fn replayed(&self, pages: Pages, then: Option<Rx>) -> Rx {
        let mut rx = then.unwrap_or_else(|| self.channel(0, 0).1);
        rx.replay = Some(Box::new(Replay {
            pages,
            budget: Arc::clone(&self.budget),
        }));
        rx
    }

    /// The most bytes of a page of a replay from the event store: 256 KiB,
    /// or the session's budget if that is smaller.
    pub(crate) fn page_bytes(&self) -> usize {
        PAGE_BYTES.min(self.budget.limit())
    }

    /// The response `rx` belonged to has read its channel to the end. If
    /// that was the stream's last attachment, had every event and the
    /// stream is finished, the stream joins the last `DELIVERED_KEPT`
    /// delivered ones, and the oldest of those is forgotten.
    pub(crate) fn delivered(&self, rx: &Rx) {
        let mut state = self.lock();
        let Some(stream) = state.streams.get_mut(rx.stream) else {
            return;
        };
        let done = stream.finished
            && stream.whole
            && stream.attachment == rx.attachment
            && stream.tx.is_none();
        if !done || stream.delivered {
            return;
        }
        stream.delivered = true;
        // Kept as it is from now on: no room to grow (each event is in a
        // buffer of its own size already, see `charged`).
        stream.events.shrink_to_fit();
        state.delivered += 1;
        while state.delivered > DELIVERED_KEPT {
            let oldest = state
                .streams
                .iter()
                .find(|(_, s)| s.delivered)
                .map(|(id, _)| *id);
            match oldest {
                Some(old) => {
                    state.forget(old);
                    self.queue(StreamWrite::Forget { stream: old });
                }
                None => break,
            }
        }
    }

    /// Ends the HTTP response of stream `id` early; its later events are
    /// kept for the client to fetch by reconnecting.
    pub(crate) fn close_early(&self, id: u64) -> bool {
        let mut state = self.lock();
        state.streams.get_mut(id).is_some_and(|s| {
            s.whole = false;
            s.tx.take().is_some()
        })
    }

    /// Ends the responses of the GET streams still attached (the one in
    /// use, and any older one whose client has not let go): their clients
    /// reconnect with `Last-Event-ID` (elsewhere, while the service
    /// drains); what comes meanwhile waits as when no GET stream is open.
    /// Whether one was attached.
    pub(crate) fn end_standalone(&self) -> bool {
        let mut state = self.lock();
        let mut ended = false;
        for (_, stream) in state.streams.iter_mut().filter(|(_, s)| s.get) {
            stream.whole = false;
            ended |= stream.tx.take().is_some();
        }
        ended
    }

    /// Whether `last_event_id` names a stream here that answers a request
    /// (not a GET stream).
    pub(crate) fn answers_a_request(&self, last_event_id: &str) -> bool {
        let stream = last_event_id.trim().split_once('-');
        let Some(id) = stream.and_then(|(s, _)| s.parse::<u64>().ok()) else {
            return false;
        };
        self.lock().streams.get(id).is_some_and(|s| !s.get)
    }

    /// Resumes after `last_event_id` (`<stream>-<seq>`): replays what came
    /// after it, then carries on live unless the stream has finished.
    /// `None` when the id names no stream we still have.
    pub(crate) fn resume(&self, last_event_id: &str) -> Option<Rx> {
        let (stream, seq) = last_event_id.trim().split_once('-')?;
        let (stream, seq): (u64, u64) = (stream.parse().ok()?, seq.parse().ok()?);
        let mut state = self.lock();
        let state = &mut *state;
        let s = state.streams.get_mut(stream)?;
        let (tx, rx) = self.channel(stream, s.attachment + 1);
        // Asked for again: owed until this response reads it to the end.
        if std::mem::take(&mut s.delivered) {
            state.delivered -= 1;
        }
        // At most `events_per_stream` are kept: the channel holds them all.
        // Events not yet stored go out once they are (`forward`).
        let upto = s.forwarded;
        for (_, bytes) in s.events.iter().filter(|(n, _)| *n > seq && *n <= upto) {
            let charge = self.budget.charge(bytes.len());
            let _ = tx.try_send((bytes.clone(), Some(charge)));
        }
        s.attachment += 1;
        s.whole = true;
        if !s.finished {
            s.tx = Some(tx);
        }
        Some(rx)
    }

    /// Whether some stream still has its client attached.
    pub(crate) fn has_open_stream(&self) -> bool {
        self.lock()
            .streams
            .iter()
            .any(|(_, s)| s.tx.as_ref().is_some_and(|t| !t.is_closed()))
    }

    /// Ends every stream (the session is over).
    pub(crate) fn close(&self) {
        let mut state = self.lock();
        state.closed = true;
        for (_, stream) in state.streams.iter_mut() {
            stream.tx = None;
        }
        state.backlog.clear();
        state.backlog_bytes = 0;
        drop(state);
        if let Some(replica) = self.replica.get() {
            replica.asked.notify_one();
        }
    }

    /// Bytes the session's responses hold now (for tests).
    #[cfg(test)]
    pub(crate) fn held(&self) -> usize {
        self.budget.held()
    }

    /// Bytes kept for replay, and streams kept (for tests).
    #[cfg(test)]
    fn kept(&self) -> (usize, usize) {
        let state = self.lock();
        (state.kept, state.streams.len())
    }
}

#[cfg(test)]
mod tests;
