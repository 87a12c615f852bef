//! The SSE streams of one session: each POST answered with SSE and each GET
//! gets a stream; every event is numbered (`<stream>-<seq>`) and kept (up to
//! a cap), so a client that reconnects with `Last-Event-ID` gets the rest.
//!
//! Nothing here waits for a client: a response body reads a bounded channel,
//! and a client so slow that its channel fills (it stopped reading) has its
//! response ended instead of the server buffering for it without bound. The
//! events stay kept for it to resume from, like after any disconnection.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use axum::body::Bytes;
use serde_json::Value;
use tokio::sync::mpsc;

type Tx = mpsc::Sender<Bytes>;
/// The receiving end a response body reads from.
pub(crate) type Rx = mpsc::Receiver<Bytes>;

/// Finished streams kept for replay (the oldest go first).
const FINISHED_KEPT: usize = 64;
/// Server messages kept while no GET stream is open.
const BACKLOG_CAP: usize = 1024;

pub(crate) struct Hub {
    state: Mutex<State>,
    retry: Option<Duration>,
    events_per_stream: usize,
}

#[derive(Default)]
struct State {
    next: u64,
    streams: HashMap<u64, Stream>,
    finished: VecDeque<u64>,
    /// The GET stream that carries messages not tied to a request.
    standalone: Option<u64>,
    backlog: VecDeque<Value>,
    closed: bool,
}

#[derive(Default)]
struct Stream {
    seq: u64,
    events: VecDeque<(u64, Bytes)>,
    tx: Option<Tx>,
    finished: bool,
}

fn frame(stream: u64, seq: u64, message: &Value) -> Bytes {
    Bytes::from(format!(
        "id: {stream}-{seq}\nevent: message\ndata: {message}\n\n"
    ))
}

impl Hub {
    pub(crate) fn new(retry: Option<Duration>, events_per_stream: usize) -> Self {
        Self {
            state: Mutex::default(),
            retry,
            events_per_stream,
        }
    }

    /// A response body's channel: room for the priming event and every
    /// kept event (a replay), and no more.
    fn channel(&self) -> (Tx, Rx) {
        mpsc::channel(self.events_per_stream.max(1) + 1)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Opens a stream; `priming` sends the event that gives the client an id
    /// to resume from (and the `retry` delay) before anything else.
    pub(crate) fn open(&self, priming: bool) -> (u64, Rx) {
        let (tx, rx) = self.channel();
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
        if state.closed {
            return (id, rx); // tx dropped: the body ends after the priming event
        }
        state.streams.insert(
            id,
            Stream {
                tx: Some(tx),
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
        let Some(stream) = state.streams.get_mut(&id) else {
            return;
        };
        stream.seq += 1;
        let bytes = frame(id, stream.seq, message);
        if stream.events.len() >= cap {
            stream.events.pop_front();
        }
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
                }
                Err(mpsc::error::TrySendError::Closed(_)) => stream.tx = None,
            }
        }
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

    /// The request of stream `id` is answered: the stream ends.
    pub(crate) fn finish(&self, id: u64) {
        let mut state = self.lock();
        if let Some(stream) = state.streams.get_mut(&id) {
            stream.finished = true;
            stream.tx = None;
            state.finished.push_back(id);
        }
        while state.finished.len() > FINISHED_KEPT {
            if let Some(old) = state.finished.pop_front() {
                state.streams.remove(&old);
            }
        }
    }

    /// Ends the HTTP response of stream `id` early; its later events are
    /// kept for the client to fetch by reconnecting.
    pub(crate) fn close_early(&self, id: u64) -> bool {
        let mut state = self.lock();
        state
            .streams
            .get_mut(&id)
            .is_some_and(|s| s.tx.take().is_some())
    }

    /// Resumes after `last_event_id` (`<stream>-<seq>`): replays what came
    /// after it, then carries on live unless the stream has finished.
    /// `None` when the id names no stream we still have.
    pub(crate) fn resume(&self, last_event_id: &str) -> Option<Rx> {
        let (stream, seq) = last_event_id.trim().split_once('-')?;
        let (stream, seq): (u64, u64) = (stream.parse().ok()?, seq.parse().ok()?);
        let (tx, rx) = self.channel();
        let mut state = self.lock();
        let s = state.streams.get_mut(&stream)?;
        // At most `events_per_stream` are kept: the channel holds them all.
        for (_, bytes) in s.events.iter().filter(|(n, _)| *n > seq) {
            let _ = tx.try_send(bytes.clone());
        }
        if !s.finished {
            s.tx = Some(tx);
        }
        Some(rx)
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn drain(rx: &mut Rx) -> Vec<String> {
        let mut out = Vec::new();
        while let Ok(b) = rx.try_recv() {
            out.push(String::from_utf8(b.to_vec()).unwrap());
        }
        out
    }

    #[test]
    fn priming_events_then_numbered_messages() {
        let hub = Hub::new(Some(Duration::from_millis(500)), 8);
        let (id, mut rx) = hub.open(true);
        hub.send(id, &json!({"a":1}));
        hub.finish(id);
        let got = drain(&mut rx);
        assert_eq!(got[0], format!("id: {id}-0\nretry: 500\ndata: \n\n"));
        assert_eq!(
            got[1],
            format!("id: {id}-1\nevent: message\ndata: {{\"a\":1}}\n\n")
        );
        assert!(rx.is_closed() || rx.try_recv().is_err());
    }

    #[test]
    fn closed_early_streams_resume_with_what_was_missed() {
        let hub = Hub::new(None, 8);
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
        let hub = Hub::new(None, 4);
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
            rx.is_closed(),
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
        let hub = Hub::new(None, 8);
        hub.deliver(json!("early"));
        let mut rx = hub.open_standalone(false);
        hub.deliver(json!("live"));
        let got = drain(&mut rx);
        assert_eq!(got.len(), 2);
        assert!(got[0].contains("\"early\"") && got[1].contains("\"live\""));
    }
}
