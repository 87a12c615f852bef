//! What replicas of one Streamable HTTP service share: the [`EventStore`]
//! trait (its documentation says what a store keeps and why), the store in
//! memory (`memory.rs`) and the one in Redis (`redis.rs`).

mod memory;
#[cfg(feature = "redis")]
pub(crate) mod redis;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use serde_json::Value;

use crate::server::TaskStore;
pub use crate::server::{StoreError, StoreFuture};
pub use memory::MemoryEventStore;
#[cfg(feature = "redis")]
pub use redis::RedisEventStore;

/// Where the replicas of a Streamable HTTP service keep their sessions and
/// the events of their SSE streams.
///
/// Without one, a service keeps its sessions and the events of its SSE
/// streams in its own memory (bounded: see
/// [`replay_bytes`](super::StreamableHttpConfig::replay_bytes)), which is
/// all one process needs. Behind a load balancer, replicas given the same
/// store ([`StreamableHttpConfig::event_store`](super::StreamableHttpConfig::event_store))
/// also keep there:
///
/// * each session's record (its `initialize` request, revision and owner,
///   and what its client set since: its logging level and resource
///   subscriptions), so that a replica that never saw a session takes it
///   over when the balancer sends it one of its requests (the replica that
///   served it died, or the balancer moved it); a DELETE replaces it with an
///   empty record, the mark of an ended session, which every replica reads
///   before serving a request on the session;
/// * each SSE stream's request id, written before the stream's first byte,
///   and its events, each written **before** it goes to the client, so that
///   a client whose replica died resumes with `Last-Event-ID` through any
///   other replica and gets every event it missed, each once;
/// * whether the stream ended: a replica resuming a stream that nobody ended
///   ends it itself with an error that tells the client to retry (an atomic
///   [`StreamWrite::TakeOver`]: the dead replica's answer, if it ever comes,
///   is refused).
///
/// * the records of the tasks of the server it serves (the Tasks
///   extension): an event store is a [`TaskStore`], whose three methods
///   say what each must guarantee, so that any replica answers
///   `tasks/get` and `tasks/cancel` for a task another one runs, and
///   reports failed a task whose replica died.
///
/// [`MemoryEventStore`] shares one process's memory (replicas in one
/// process, tests); `RedisEventStore` (feature `redis`) is the one to
/// deploy (docs/deployment.md). Another database
/// implements this trait and [`TaskStore`]: their nine methods say what
/// each must guarantee.
///
/// Every method is bounded by the service's
/// [`store_timeout`](super::StreamableHttpConfig::store_timeout): a store
/// that does not answer in time is treated as failing.
pub trait EventStore: TaskStore + fmt::Debug + Send + Sync + 'static {
    /// Keeps a session's record (opaque bytes; empty for an ended session)
    /// for `ttl`, replacing any.
    fn save_session<'a>(
        &'a self,
        id: &'a str,
        record: &'a [u8],
        ttl: Duration,
    ) -> StoreFuture<'a, ()>;

    /// A session's record, if it is kept.
    fn load_session<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<Vec<u8>>>;

    /// Keeps a session's record for `ttl` more (the session is in use).
    fn touch_session<'a>(&'a self, id: &'a str, ttl: Duration) -> StoreFuture<'a, ()>;

    /// Forgets a session's record. Its streams expire on their own. (The
    /// service marks a deleted session with an empty record instead,
    /// through [`save_session`](Self::save_session), so that the other
    /// replicas learn it ended.)
    fn remove_session<'a>(&'a self, id: &'a str) -> StoreFuture<'a, ()>;

    /// Applies `writes` to streams of `session`, in order and each one
    /// atomically, and says for each whether it was applied: an
    /// [`Event`](StreamWrite::Event) or [`End`](StreamWrite::End) to a
    /// stream that has ended is refused (`false`), and so is a
    /// [`TakeOver`](StreamWrite::TakeOver) of one, or of one that has an
    /// event numbered `seq` or later (its replica wrote on after the
    /// stream was read). Streams expire some time after their last write,
    /// and keep a bounded number of events, and of their bytes (the oldest
    /// go first; the newest is kept whatever its size).
    fn write<'a>(
        &'a self,
        session: &'a str,
        writes: &'a [StreamWrite],
    ) -> StoreFuture<'a, Vec<bool>>;

    /// Stream `stream` of `session` as kept, or `None` if it is not.
    fn read<'a>(&'a self, session: &'a str, stream: u64) -> StoreFuture<'a, Option<StoredStream>>;

    /// A page of stream `stream` of `session`: its kept events numbered
    /// after `after`, oldest first, at most `max_events` of them and no
    /// more than `max_bytes` of their frames (the first one whatever its
    /// size), with the stream's request and whether it ended, as
    /// [`read`](Self::read) gives them; `None` if the stream is not kept.
    /// A client that resumes a stream through another replica gets it page
    /// by page, each read as the client takes the one before.
    ///
    /// The default implementation [`read`](Self::read)s the whole stream
    /// and keeps the page: a store implements it natively so that no
    /// resume loads a long stream at once.
    fn read_page<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        after: u64,
        max_events: usize,
        max_bytes: usize,
    ) -> StoreFuture<'a, Option<StoredStream>> {
        Box::pin(async move {
            let stored = self.read(session, stream).await?;
            Ok(stored.map(|mut stored| {
                let after = stored
                    .events
                    .iter()
                    .map(|(n, _)| *n)
                    .take_while(|n| *n <= after);
                let skip = after.count();
                stored.events = page(stored.events.into_iter().skip(skip), max_events, max_bytes);
                stored
            }))
        })
    }
}

/// The first of `events` (in order), at most `max_events` of them and no
/// more than `max_bytes` of their frames (the first one whatever its size).
pub(crate) fn page(
    events: impl IntoIterator<Item = (u64, Bytes)>,
    max_events: usize,
    max_bytes: usize,
) -> Vec<(u64, Bytes)> {
    let mut bytes = 0;
    events
        .into_iter()
        .take(max_events.max(1))
        .take_while(|(_, frame)| {
            bytes += frame.len();
            bytes == frame.len() || bytes <= max_bytes
        })
        .collect()
}

/// The event store of a service, shared by the clones of its configuration.
///
/// Unwind-safe whatever the store, so that the configuration holding it
/// stays so: the server only calls it, and a panic in it is the request's,
/// never observed half-done by a catcher.
#[derive(Clone, Debug)]
pub(crate) struct SharedStore(pub(crate) Arc<dyn EventStore>);

impl std::panic::UnwindSafe for SharedStore {}
impl std::panic::RefUnwindSafe for SharedStore {}

impl std::ops::Deref for SharedStore {
    type Target = Arc<dyn EventStore>;

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

/// One change to a stream of a session (see [`EventStore::write`]).
///
/// More kinds may come: an implementation matches them with a wildcard arm
/// that fails the write with a [`StoreError`], so that a store written for
/// this version refuses a kind it does not know rather than ignoring it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum StreamWrite {
    /// A stream opens: the answer to the request `request` (its JSON-RPC
    /// id), or, with `None`, the session's stream for messages not tied to
    /// a request (GET).
    Open {
        /// The stream's number in its session.
        stream: u64,
        /// The id of the request it answers.
        request: Option<Value>,
    },
    /// Event `seq` of a stream: `frame` is the whole SSE event as the client
    /// gets it (`id: <stream>-<seq>`, `data: …`).
    Event {
        /// The stream's number in its session.
        stream: u64,
        /// The event's number in its stream (from 1).
        seq: u64,
        /// The SSE event.
        frame: Bytes,
    },
    /// The stream is complete: its replica sent its last event.
    End {
        /// The stream's number in its session.
        stream: u64,
    },
    /// A replica ends a stream nobody ended (its own replica is gone) with
    /// `frame`, event `seq`, as its last event — unless it has ended or
    /// already has an event numbered `seq` or later.
    TakeOver {
        /// The stream's number in its session.
        stream: u64,
        /// The event's number in its stream.
        seq: u64,
        /// The SSE event that ends it (an error response).
        frame: Bytes,
    },
    /// The stream is no longer needed (its client read it to the end).
    Forget {
        /// The stream's number in its session.
        stream: u64,
    },
}

/// A stream as an [`EventStore`] keeps it.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct StoredStream {
    /// The id of the request it answers; `None` for a session's GET stream.
    pub request: Option<Value>,
    /// Its kept events, oldest first: (seq, SSE event).
    pub events: Vec<(u64, Bytes)>,
    /// Whether it ended ([`StreamWrite::End`] or [`StreamWrite::TakeOver`]).
    pub ended: bool,
}

impl StoredStream {
    /// A stream answering `request` (`None`: a GET stream) with these
    /// events, ended or not (for implementations of [`EventStore::read`]).
    pub fn new(request: Option<Value>, events: Vec<(u64, Bytes)>, ended: bool) -> Self {
        Self {
            request,
            events,
            ended,
        }
    }
}
