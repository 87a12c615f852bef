//! [`MemoryEventStore`]: an [`EventStore`] in this process's memory.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use serde_json::Value;

use super::{EventStore, StoreFuture, StoredStream, StreamWrite};
use crate::server::limits::{DEFAULT_MAX_TASK_BYTES, DEFAULT_MAX_TASKS};
use crate::server::{MemoryTaskStore, StoredTask, TaskStore};

/// How long a stream is kept after its last write, by default.
const STREAM_TTL: Duration = Duration::from_secs(300);
/// Events kept per stream, by default.
const EVENTS_PER_STREAM: usize = 1024;
/// Bytes of events kept per stream, by default.
pub(crate) const BYTES_PER_STREAM: usize = 1 << 20;
/// Writes between two sweeps of what expired.
const SWEEP_EVERY: u64 = 1024;

/// An [`EventStore`] in this process's memory, shared by the services it is
/// given to (clones share it): replicas in one process, and tests. What it
/// keeps expires (streams [`ttl`](Self::ttl) after their last write,
/// sessions after theirs) and is swept as writes come. Its tasks are a
/// [`MemoryTaskStore`] bounded as a server's own are by default (1000
/// tasks, 64 MiB).
#[derive(Clone, Debug)]
pub struct MemoryEventStore {
    inner: Arc<Mutex<Inner>>,
    /// The tasks, bounded as a server's own are by default.
    tasks: Arc<MemoryTaskStore>,
    ttl: Duration,
    events_per_stream: usize,
    bytes_per_stream: usize,
}

#[derive(Debug, Default)]
struct Inner {
    sessions: HashMap<String, (Vec<u8>, Instant)>,
    streams: HashMap<(String, u64), Kept>,
    writes: u64,
}

#[derive(Debug, Default)]
struct Kept {
    request: Option<Value>,
    events: VecDeque<(u64, Bytes)>,
    /// The bytes of `events`' frames.
    bytes: usize,
    /// The seq of the last event written (kept or not).
    last: u64,
    ended: bool,
    expires: Option<Instant>,
}

impl Default for MemoryEventStore {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryEventStore {
    /// An empty store: streams kept 5 minutes after their last write, at
    /// most 1,024 events and 1 MiB of them each.
    pub fn new() -> Self {
        Self {
            inner: Arc::default(),
            tasks: Arc::new(MemoryTaskStore::new(
                DEFAULT_MAX_TASKS,
                DEFAULT_MAX_TASK_BYTES,
            )),
            ttl: STREAM_TTL,
            events_per_stream: EVENTS_PER_STREAM,
            bytes_per_stream: BYTES_PER_STREAM,
        }
    }

    /// How long a stream is kept after its last write.
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// How many events a stream keeps (the oldest go first; at least 1).
    pub fn events_per_stream(mut self, events: usize) -> Self {
        self.events_per_stream = events.max(1);
        self
    }

    /// How many bytes of events (their SSE frames) a stream keeps: the
    /// oldest go first, the newest is kept whatever its size.
    pub fn bytes_per_stream(mut self, bytes: usize) -> Self {
        self.bytes_per_stream = bytes;
        self
    }

    /// How many sessions and streams are kept now (expired ones included
    /// until the next sweep, which comes every 1,024 writes).
    pub fn kept(&self) -> (usize, usize) {
        let inner = self.lock();
        (inner.sessions.len(), inner.streams.len())
    }

    /// Stream `stream` of `session` if it is kept, with the events `page`
    /// takes of it.
    fn view(
        &self,
        session: &str,
        stream: u64,
        page: impl FnOnce(&VecDeque<(u64, Bytes)>) -> Vec<(u64, Bytes)>,
    ) -> Option<StoredStream> {
        let now = Instant::now();
        let inner = self.lock();
        let kept = inner.streams.get(&(session.to_owned(), stream))?;
        live(kept.expires, now).then(|| StoredStream {
            request: kept.request.clone(),
            events: page(&kept.events),
            ended: kept.ended,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn live(expires: Option<Instant>, now: Instant) -> bool {
    expires.is_none_or(|at| at > now)
}

impl Inner {
    fn sweep(&mut self, now: Instant) {
        self.sessions.retain(|_, (_, at)| *at > now);
        self.streams.retain(|_, kept| live(kept.expires, now));
    }

    /// The stream as kept, a new one in place of an expired one.
    fn stream(&mut self, session: &str, stream: u64, now: Instant) -> &mut Kept {
        let kept = self
            .streams
            .entry((session.to_owned(), stream))
            .or_default();
        if !live(kept.expires, now) {
            *kept = Kept::default();
        }
        kept
    }
}

impl TaskStore for MemoryEventStore {
    fn create_task<'a>(
        &'a self,
        id: &'a str,
        record: &'a [u8],
        ttl: Duration,
    ) -> StoreFuture<'a, ()> {
        self.tasks.create_task(id, record, ttl)
    }

    fn load_task<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<StoredTask>> {
        self.tasks.load_task(id)
    }

    fn update_task<'a>(
        &'a self,
        id: &'a str,
        record: &'a [u8],
        last: bool,
    ) -> StoreFuture<'a, bool> {
        self.tasks.update_task(id, record, last)
    }
}

impl EventStore for MemoryEventStore {
    fn save_session<'a>(
        &'a self,
        id: &'a str,
        record: &'a [u8],
        ttl: Duration,
    ) -> StoreFuture<'a, ()> {
        let at = Instant::now() + ttl;
        self.lock()
            .sessions
            .insert(id.to_owned(), (record.to_vec(), at));
        Box::pin(async { Ok(()) })
    }

    fn load_session<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<Vec<u8>>> {
        let now = Instant::now();
        let found = self
            .lock()
            .sessions
            .get(id)
            .filter(|(_, at)| *at > now)
            .map(|(record, _)| record.clone());
        Box::pin(async { Ok(found) })
    }

    fn touch_session<'a>(&'a self, id: &'a str, ttl: Duration) -> StoreFuture<'a, ()> {
        if let Some((_, at)) = self.lock().sessions.get_mut(id) {
            *at = Instant::now() + ttl;
        }
        Box::pin(async { Ok(()) })
    }

    fn remove_session<'a>(&'a self, id: &'a str) -> StoreFuture<'a, ()> {
        self.lock().sessions.remove(id);
        Box::pin(async { Ok(()) })
    }

    fn write<'a>(
        &'a self,
        session: &'a str,
        writes: &'a [StreamWrite],
    ) -> StoreFuture<'a, Vec<bool>> {
        let now = Instant::now();
        let expires = Some(now + self.ttl);
        let mut inner = self.lock();
        let mut applied = Vec::with_capacity(writes.len());
        for write in writes {
            let done = match write {
                StreamWrite::Open { stream, request } => {
                    let kept = inner.stream(session, *stream, now);
                    kept.request.clone_from(request);
                    kept.expires = expires;
                    true
                }
                StreamWrite::Event { stream, seq, frame }
                | StreamWrite::TakeOver { stream, seq, frame } => {
                    let take_over = matches!(write, StreamWrite::TakeOver { .. });
                    let kept = inner.stream(session, *stream, now);
                    if kept.ended || (take_over && kept.last >= *seq) {
                        false
                    } else {
                        kept.events.push_back((*seq, frame.clone()));
                        kept.bytes += frame.len();
                        while kept.events.len() > 1
                            && (kept.events.len() > self.events_per_stream
                                || kept.bytes > self.bytes_per_stream)
                        {
                            if let Some((_, old)) = kept.events.pop_front() {
                                kept.bytes -= old.len();
                            }
                        }
                        kept.last = kept.last.max(*seq);
                        kept.ended = take_over;
                        kept.expires = expires;
                        true
                    }
                }
                StreamWrite::End { stream } => {
                    let kept = inner.stream(session, *stream, now);
                    let open = !kept.ended;
                    kept.ended = true;
                    kept.expires = expires;
                    open
                }
                StreamWrite::Forget { stream } => {
                    inner.streams.remove(&(session.to_owned(), *stream));
                    true
                }
            };
            applied.push(done);
        }
        inner.writes += 1;
        if inner.writes.is_multiple_of(SWEEP_EVERY) {
            inner.sweep(now);
        }
        Box::pin(async { Ok(applied) })
    }

    fn read_page<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        after: u64,
        max_events: usize,
        max_bytes: usize,
    ) -> StoreFuture<'a, Option<StoredStream>> {
        let found = self.view(session, stream, |events| {
            let from = events.partition_point(|(n, _)| *n <= after);
            super::page(events.range(from..).cloned(), max_events, max_bytes)
        });
        Box::pin(async { Ok(found) })
    }

    fn read<'a>(&'a self, session: &'a str, stream: u64) -> StoreFuture<'a, Option<StoredStream>> {
        let found = self.view(session, stream, |events| events.iter().cloned().collect());
        Box::pin(async { Ok(found) })
    }
}
