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
//! session that served many calls keeps a few hundred bytes of them.
//!
//! Nothing here waits for a client: a response body reads a bounded channel,
//! and a client so slow that its channel fills (it stopped reading) has its
//! response ended instead of the server buffering for it without bound. The
//! events stay kept for it to resume from, like after any disconnection.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use axum::body::Bytes;
use serde_json::Value;
use tokio::sync::mpsc;

type Tx = mpsc::Sender<Bytes>;

/// Server messages kept while no GET stream is open.
const BACKLOG_CAP: usize = 1024;
/// What keeping one event costs beyond its bytes (counted in the budget).
const EVENT_OVERHEAD: usize = 32;
/// Streams whose response was read to the end, still kept for a client
/// whose connection broke as the last bytes went out.
const DELIVERED_KEPT: usize = 4;

/// The receiving end a response body reads: the stream's events, and which
/// attachment of which stream it is (to say when it has read them all).
pub(crate) struct Rx {
    pub(crate) events: mpsc::Receiver<Bytes>,
    stream: u64,
    attachment: u64,
}

pub(crate) struct Hub {
    state: Mutex<State>,
    retry: Option<Duration>,
    events_per_stream: usize,
    replay_bytes: usize,
}

#[derive(Default)]
struct State {
    next: u64,
    /// By id, so oldest first.
    streams: BTreeMap<u64, Stream>,
    /// Bytes kept for replay (events and their overhead).
    kept: usize,
    /// The GET stream that carries messages not tied to a request.
    standalone: Option<u64>,
    /// The last streams read to their end (oldest first).
    delivered: VecDeque<u64>,
    backlog: VecDeque<Value>,
    closed: bool,
}

#[derive(Default)]
struct Stream {
    seq: u64,
    events: VecDeque<(u64, Bytes)>,
    tx: Option<Tx>,
    /// Counts the responses attached to this stream (the last one is the
    /// one that matters).
    attachment: u64,
    /// The attached response has had every event since its client's
    /// starting point (none was cut off).
    whole: bool,
    finished: bool,
}

fn frame(stream: u64, seq: u64, message: &Value) -> Bytes {
    Bytes::from(format!(
        "id: {stream}-{seq}\nevent: message\ndata: {message}\n\n"
    ))
}

fn cost(bytes: &Bytes) -> usize {
    bytes.len() + EVENT_OVERHEAD
}

impl State {
    /// Forgets stream `id` and what it kept.
    fn forget(&mut self, id: u64) {
        if let Some(s) = self.streams.remove(&id) {
            self.kept -= s.events.iter().map(|(_, b)| cost(b)).sum::<usize>();
        }
    }

    /// Drops the oldest kept events until the budget holds; a finished
    /// stream left with nothing to replay goes too.
    fn evict(&mut self, budget: usize) {
        while self.kept > budget {
            let Some((&id, stream)) = self.streams.iter_mut().find(|(_, s)| !s.events.is_empty())
            else {
                return;
            };
            if let Some((_, bytes)) = stream.events.pop_front() {
                self.kept -= cost(&bytes);
            }
            if stream.finished && stream.events.is_empty() {
                self.streams.remove(&id);
            }
        }
    }
}

impl Hub {
    pub(crate) fn new(
        retry: Option<Duration>,
        events_per_stream: usize,
        replay_bytes: usize,
    ) -> Self {
        Self {
            state: Mutex::default(),
            retry,
            events_per_stream,
            replay_bytes,
        }
    }

    /// A response body's channel: room for the priming event and every
    /// kept event (a replay), and no more.
    fn channel(&self) -> (Tx, mpsc::Receiver<Bytes>) {
        mpsc::channel(self.events_per_stream.max(1) + 1)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Opens a stream; `priming` sends the event that gives the client an id
    /// to resume from (and the `retry` delay) before anything else.
    pub(crate) fn open(&self, priming: bool) -> (u64, Rx) {
        let (tx, events) = self.channel();
        let mut state = self.lock();
        state.next += 1;
        let id = state.next;
        if priming {
            let retry = self
                .retry
                .map(|r| format!("retry: {}\n", r.as_millis()))
                .unwrap_or_default();
            let _ = tx.try_send(Bytes::from(format!("id: {id}-0\n{retry}data: \n\n")));
        }
        let rx = Rx {
            events,
            stream: id,
            attachment: 1,
        };
        if state.closed {
            return (id, rx); // tx dropped: the body ends after the priming event
        }
        state.streams.insert(
            id,
            Stream {
                tx: Some(tx),
                attachment: 1,
                whole: true,
                ..Stream::default()
            },
        );
        (id, rx)
    }

    /// Opens the GET stream for messages not tied to a request, and sends
    /// what waited for one.
    pub(crate) fn open_standalone(&self, priming: bool) -> Rx {
        let (id, rx) = self.open(priming);
        let backlog: Vec<Value> = {
            let mut state = self.lock();
            state.standalone = Some(id);
            state.backlog.drain(..).collect()
        };
        for message in backlog {
            self.send(id, &message);
        }
        rx
    }

    /// Sends `message` on stream `id` (kept for replay either way).
    pub(crate) fn send(&self, id: u64, message: &Value) {
        let cap = self.events_per_stream;
        let mut state = self.lock();
        let state = &mut *state;
        let Some(stream) = state.streams.get_mut(&id) else {
            return;
        };
        stream.seq += 1;
        let bytes = frame(id, stream.seq, message);
        if stream.events.len() >= cap
            && let Some((_, old)) = stream.events.pop_front()
        {
            state.kept -= cost(&old);
        }
        state.kept += cost(&bytes);
        stream.events.push_back((stream.seq, bytes.clone()));
        if let Some(tx) = &stream.tx {
            match tx.try_send(bytes) {
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
        state.evict(self.replay_bytes);
    }

    /// A message not tied to a request: on the GET stream if one is open,
    /// else kept until one opens.
    pub(crate) fn deliver(&self, message: Value) {
        let target = {
            let mut state = self.lock();
            let live = state.standalone.filter(|id| {
                state
                    .streams
                    .get(id)
                    .is_some_and(|s| s.tx.as_ref().is_some_and(|t| !t.is_closed()))
            });
            if live.is_none() {
                if state.backlog.len() >= BACKLOG_CAP {
                    state.backlog.pop_front();
                }
                state.backlog.push_back(message);
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
        let mut state = self.lock();
        let Some(stream) = state.streams.get_mut(&id) else {
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

    /// The response `rx` belonged to has read its channel to the end. If
    /// that was the stream's last attachment, had every event and the
    /// stream is finished, the stream joins the last `DELIVERED_KEPT`
    /// delivered ones, and the oldest of those is forgotten.
    pub(crate) fn delivered(&self, rx: &Rx) {
        let mut state = self.lock();
        let done = state.streams.get(&rx.stream).is_some_and(|s| {
            s.finished && s.whole && s.attachment == rx.attachment && s.tx.is_none()
        });
        if done && !state.delivered.contains(&rx.stream) {
            state.delivered.push_back(rx.stream);
            while state.delivered.len() > DELIVERED_KEPT {
                if let Some(old) = state.delivered.pop_front() {
                    state.forget(old);
                }
            }
        }
    }

    /// Ends the HTTP response of stream `id` early; its later events are
    /// kept for the client to fetch by reconnecting.
    pub(crate) fn close_early(&self, id: u64) -> bool {
        let mut state = self.lock();
        state.streams.get_mut(&id).is_some_and(|s| {
            s.whole = false;
            s.tx.take().is_some()
        })
    }

    /// Resumes after `last_event_id` (`<stream>-<seq>`): replays what came
    /// after it, then carries on live unless the stream has finished.
    /// `None` when the id names no stream we still have.
    pub(crate) fn resume(&self, last_event_id: &str) -> Option<Rx> {
        let (stream, seq) = last_event_id.trim().split_once('-')?;
        let (stream, seq): (u64, u64) = (stream.parse().ok()?, seq.parse().ok()?);
        let (tx, events) = self.channel();
        let mut state = self.lock();
        let s = state.streams.get_mut(&stream)?;
        // At most `events_per_stream` are kept: the channel holds them all.
        for (_, bytes) in s.events.iter().filter(|(n, _)| *n > seq) {
            let _ = tx.try_send(bytes.clone());
        }
        s.attachment += 1;
        s.whole = true;
        if !s.finished {
            s.tx = Some(tx);
        }
        Some(Rx {
            events,
            stream,
            attachment: s.attachment,
        })
    }

    /// Whether some stream still has its client attached.
    pub(crate) fn has_open_stream(&self) -> bool {
        self.lock()
            .streams
            .values()
            .any(|s| s.tx.as_ref().is_some_and(|t| !t.is_closed()))
    }

    /// Ends every stream (the session is over).
    pub(crate) fn close(&self) {
        let mut state = self.lock();
        state.closed = true;
        for stream in state.streams.values_mut() {
            stream.tx = None;
        }
        state.backlog.clear();
    }

    /// Bytes kept for replay, and streams kept (for tests).
    #[cfg(test)]
    fn kept(&self) -> (usize, usize) {
        let state = self.lock();
        (state.kept, state.streams.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn drain(rx: &mut Rx) -> Vec<String> {
        let mut out = Vec::new();
        while let Ok(b) = rx.events.try_recv() {
            out.push(String::from_utf8(b.to_vec()).unwrap());
        }
        out
    }

    #[test]
    fn priming_events_then_numbered_messages() {
        let hub = Hub::new(Some(Duration::from_millis(500)), 8, 1 << 20);
        let (id, mut rx) = hub.open(true);
        hub.send(id, &json!({"a":1}));
        hub.finish(id);
        let got = drain(&mut rx);
        assert_eq!(got[0], format!("id: {id}-0\nretry: 500\ndata: \n\n"));
        assert_eq!(
            got[1],
            format!("id: {id}-1\nevent: message\ndata: {{\"a\":1}}\n\n")
        );
        assert!(rx.events.is_closed() || rx.events.try_recv().is_err());
    }

    #[test]
    fn closed_early_streams_resume_with_what_was_missed() {
        let hub = Hub::new(None, 8, 1 << 20);
        let (id, mut rx) = hub.open(true);
        hub.send(id, &json!(1));
        assert!(hub.close_early(id));
        hub.send(id, &json!(2));
        hub.finish(id);
        assert_eq!(drain(&mut rx).len(), 2);
        let mut again = hub.resume(&format!("{id}-1")).unwrap();
        let replay = drain(&mut again);
        assert_eq!(
            replay,
            vec![format!("id: {id}-2\nevent: message\ndata: 2\n\n")]
        );
        assert!(hub.resume("99-0").is_none());
        assert!(hub.resume("garbage").is_none());
    }

    #[test]
    fn a_client_that_stops_reading_is_cut_off_and_can_resume() {
        let hub = Hub::new(None, 4, 1 << 20);
        let (id, mut rx) = hub.open(true);
        // Nobody reads: the channel takes the priming event and 4 more.
        for n in 1..=10 {
            hub.send(id, &json!(n));
        }
        hub.finish(id);
        let got = drain(&mut rx);
        assert_eq!(got.len(), 5, "{got:?}");
        assert!(got[4].starts_with(&format!("id: {id}-4\n")), "{got:?}");
        assert!(
            rx.events.is_closed(),
            "the response ends where the client fell behind"
        );
        // What it missed is kept, up to the cap: events 7…10.
        let replay = drain(&mut hub.resume(&format!("{id}-4")).unwrap());
        let ids: Vec<&str> = replay.iter().map(|e| &e[..e.find('\n').unwrap()]).collect();
        let want: Vec<String> = (7..=10).map(|n| format!("id: {id}-{n}")).collect();
        assert_eq!(ids, want);
    }

    #[test]
    fn messages_wait_for_a_get_stream() {
        let hub = Hub::new(None, 8, 1 << 20);
        hub.deliver(json!("early"));
        let mut rx = hub.open_standalone(false);
        hub.deliver(json!("live"));
        let got = drain(&mut rx);
        assert_eq!(got.len(), 2);
        assert!(got[0].contains("\"early\"") && got[1].contains("\"live\""));
    }
    #[test]
    fn a_stream_read_to_the_end_is_forgotten() {
        let hub = Hub::new(None, 8, 1 << 20);
        for _ in 0..100 {
            let (id, mut rx) = hub.open(true);
            hub.send(id, &json!({"result": 3}));
            hub.finish(id);
            assert_eq!(drain(&mut rx).len(), 2);
            assert!(rx.events.try_recv().is_err(), "the body has read it all");
            hub.delivered(&rx);
        }
        let (bytes, streams) = hub.kept();
        assert_eq!(streams, DELIVERED_KEPT, "100 calls leave the last few");
        assert!(bytes < DELIVERED_KEPT * 100, "{bytes} bytes kept");
    }

    #[test]
    fn a_stream_whose_client_vanished_stays_resumable() {
        let hub = Hub::new(None, 8, 1 << 20);
        let (id, rx) = hub.open(true);
        drop(rx); // the client went away before the answer
        hub.send(id, &json!("answer"));
        hub.finish(id);
        let mut again = hub.resume(&format!("{id}-0")).unwrap();
        let replay = drain(&mut again);
        assert_eq!(replay.len(), 1);
        assert!(replay[0].contains("\"answer\""));
        // The replay read to its end: kept a little longer, until
        // DELIVERED_KEPT more streams have been delivered.
        hub.delivered(&again);
        assert!(hub.resume(&format!("{id}-0")).is_some());
        for _ in 0..DELIVERED_KEPT {
            let (other, mut rx) = hub.open(false);
            hub.send(other, &json!("x"));
            hub.finish(other);
            drain(&mut rx);
            hub.delivered(&rx);
        }
        assert!(hub.resume(&format!("{id}-0")).is_none());
    }

    #[test]
    fn an_older_response_ending_does_not_forget_a_cut_stream() {
        let hub = Hub::new(None, 8, 1 << 20);
        let (id, mut rx) = hub.open(false);
        hub.send(id, &json!(1));
        assert!(hub.close_early(id));
        hub.send(id, &json!(2));
        hub.finish(id);
        assert_eq!(drain(&mut rx).len(), 1);
        hub.delivered(&rx); // ended early: event 2 is still owed
        let replay = drain(&mut hub.resume(&format!("{id}-1")).unwrap());
        assert_eq!(replay.len(), 1, "{replay:?}");
    }

    #[test]
    fn what_is_kept_for_replay_is_bounded_in_bytes() {
        let event = frame(1, 1, &json!("x".repeat(200))).len() + EVENT_OVERHEAD;
        let budget = 3 * event + event / 2; // room for three such events
        let hub = Hub::new(None, 1024, budget);
        // Ten streams whose clients vanished, one event each: the oldest go.
        let mut ids = Vec::new();
        for _ in 0..10 {
            let (id, rx) = hub.open(false);
            drop(rx);
            hub.send(id, &json!("x".repeat(200)));
            hub.finish(id);
            ids.push(id);
        }
        let (bytes, streams) = hub.kept();
        assert!(bytes <= budget, "{bytes} > {budget}");
        assert_eq!(streams, 3, "the three newest streams fit");
        for old in &ids[..7] {
            assert!(
                hub.resume(&format!("{old}-0")).is_none(),
                "stream {old} evicted"
            );
        }
        for new in &ids[7..] {
            let replay = drain(&mut hub.resume(&format!("{new}-0")).unwrap());
            assert_eq!(replay.len(), 1);
        }
        // Within one long stream the oldest events go first.
        let hub = Hub::new(None, 1024, budget);
        let (id, rx) = hub.open(false);
        drop(rx);
        for _ in 0..10 {
            hub.send(id, &json!("x".repeat(200)));
        }
        let replay = drain(&mut hub.resume(&format!("{id}-0")).unwrap());
        let ids: Vec<&str> = replay.iter().map(|e| &e[..e.find('\n').unwrap()]).collect();
        let want: Vec<String> = (8..=10).map(|n| format!("id: {id}-{n}")).collect();
        assert_eq!(ids, want);
        assert!(hub.kept().0 <= budget);
    }
}
