//! Where a server keeps its tasks: the [`TaskStore`] trait (what a store
//! must guarantee), the server's own [`MemoryTaskStore`] (bounded by count
//! and bytes), and the error every store returns.
//!
//! A replica of a Streamable HTTP service with an event store keeps its
//! tasks there instead (`http_server::EventStore` is a `TaskStore`), so that
//! any replica answers `tasks/get` and `tasks/cancel` for them.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

/// The future a store method returns ([`TaskStore`], and the HTTP server's
/// `EventStore`).
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// Where the tasks of a server are kept: each task's record, opaque bytes
/// the server writes, and whether it is final.
///
/// The server writes a task's record when it creates the task (before it
/// answers the `tools/call`, so that a `tasks/get` right after it finds
/// the task), when its status changes, and, while it runs, every third of
/// its lease (so that another replica can tell a task whose replica died:
/// its lease runs out, and the replica that sees it writes it as failed).
/// A task's last record (completed, failed or cancelled) is final: nothing
/// replaces it, so a cancel and the task's own end cannot both win.
///
/// An implementation must guarantee:
/// * [`create_task`](Self::create_task): the record is readable by every
///   replica once the future is done (the server answers only then), and
///   kept at least `ttl`; then it may go;
/// * [`update_task`](Self::update_task) is atomic: it replaces the record
///   only if the one kept is not final, says whether it did, and keeps the
///   task's expiry;
/// * [`load_task`](Self::load_task) returns the last record written.
///
/// Every method is bounded by the caller (the HTTP service's
/// `store_timeout`): a store that does not answer in time is failing.
pub trait TaskStore: fmt::Debug + Send + Sync + 'static {
    /// Keeps a new task's record, not final, for `ttl`.
    fn create_task<'a>(
        &'a self,
        id: &'a str,
        record: &'a [u8],
        ttl: Duration,
    ) -> StoreFuture<'a, ()>;

    /// A task's record as kept, if it is.
    fn load_task<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<StoredTask>>;

    /// Replaces the record of a task whose record is not final (`last`
    /// makes this one final), keeping its expiry: `false` if the record
    /// kept is final, or none is.
    fn update_task<'a>(
        &'a self,
        id: &'a str,
        record: &'a [u8],
        last: bool,
    ) -> StoreFuture<'a, bool>;
}

/// A task's record as a [`TaskStore`] keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoredTask {
    /// The record, as the server wrote it.
    pub record: Vec<u8>,
    /// Whether it is final (written with `last`).
    pub last: bool,
}

impl StoredTask {
    /// A record as kept (for implementations of [`TaskStore::load_task`]).
    pub fn new(record: Vec<u8>, last: bool) -> Self {
        Self { record, last }
    }
}

/// A store failed, refused, or did not answer in time.
#[derive(Debug)]
pub struct StoreError {
    message: String,
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl StoreError {
    /// An error saying `message` (what failed, and where).
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            source: None,
        }
    }

    /// The same error, caused by `source`.
    pub fn with_source(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.source = Some(Box::new(source));
        self
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// Records this small are always kept, whatever the byte bound (the count
/// bounds them): a task's final record without a result (failed,
/// cancelled) must fit, or a task over the bound could not end.
const SMALL_RECORD: usize = 1024;

/// A [`TaskStore`] in memory, bounded: at most `max_tasks` tasks and
/// `max_bytes` of records (results, mostly) are kept; past either, a new
/// task or a larger record is refused with an error saying which bound.
/// A task goes when its TTL is over. What a [`Server`](crate::Server)
/// keeps its tasks in unless its transport brings a store of its own.
pub struct MemoryTaskStore {
    inner: Mutex<Kept>,
    max_tasks: usize,
    max_bytes: usize,
}

#[derive(Default)]
struct Kept {
    tasks: HashMap<String, Entry>,
    /// Task ids by expiry (tasks of one store share a TTL, mostly, so
    /// creation order is nearly expiry order): the front goes first.
    expiries: VecDeque<(Instant, String)>,
    bytes: usize,
}

struct Entry {
    record: Vec<u8>,
    last: bool,
    expires: Instant,
}

impl Kept {
    /// Forgets the tasks whose TTL is over.
    fn sweep(&mut self, now: Instant) {
        while let Some((expires, _)) = self.expiries.front() {
            if *expires > now {
                break;
            }
            let Some((_, id)) = self.expiries.pop_front() else {
                break;
            };
            match self.tasks.get(&id) {
                Some(entry) if entry.expires <= now => {
                    self.bytes -= entry.record.len();
                    self.tasks.remove(&id);
                }
                // Kept longer than its place says: back in the queue.
                Some(entry) => self.expiries.push_back((entry.expires, id)),
                None => {}
            }
        }
    }
}

impl MemoryTaskStore {
    /// A store keeping at most `max_tasks` tasks and `max_bytes` of records.
    pub fn new(max_tasks: usize, max_bytes: usize) -> Self {
        Self {
            inner: Mutex::new(Kept::default()),
            max_tasks,
            max_bytes,
        }
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How many tasks are kept.
    pub fn len(&self) -> usize {
        let mut kept = self.kept();
        kept.sweep(Instant::now());
        kept.tasks.len()
    }

    /// Whether no task is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes of the records kept.
    pub fn bytes(&self) -> usize {
        let mut kept = self.kept();
        kept.sweep(Instant::now());
        kept.bytes
    }

    fn create(&self, id: &str, record: &[u8], ttl: Duration) -> Result<(), StoreError> {
        let now = Instant::now();
        let mut kept = self.kept();
        kept.sweep(now);
        if kept.tasks.len() >= self.max_tasks {
            return Err(StoreError::new(format!(
                "the server keeps {} tasks, its limit (ServerBuilder::max_tasks): no more until some expire",
                self.max_tasks
            )));
        }
        if kept.bytes + record.len() > self.max_bytes && record.len() > SMALL_RECORD {
            return Err(self.over_bytes(record.len()));
        }
        let expires = now + ttl;
        kept.bytes += record.len();
        let entry = Entry {
            record: record.to_vec(),
            last: false,
            expires,
        };
        if let Some(old) = kept.tasks.insert(id.to_owned(), entry) {
            kept.bytes -= old.record.len();
        }
        kept.expiries.push_back((expires, id.to_owned()));
        Ok(())
    }

    fn update(&self, id: &str, record: &[u8], last: bool) -> Result<bool, StoreError> {
        let mut kept = self.kept();
        kept.sweep(Instant::now());
        let bytes = kept.bytes;
        let Some(entry) = kept.tasks.get_mut(id) else {
            return Ok(false);
        };
        if entry.last {
            return Ok(false);
        }
        let after = bytes - entry.record.len() + record.len();
        if after > self.max_bytes && record.len() > SMALL_RECORD {
            return Err(self.over_bytes(record.len()));
        }
        entry.record = record.to_vec();
        entry.last = last;
        kept.bytes = after;
        Ok(true)
    }

    fn over_bytes(&self, len: usize) -> StoreError {
        StoreError::new(format!(
            "a task record of {len} bytes is over what the server keeps of task results, \
             {} bytes in all (ServerBuilder::max_task_bytes)",
            self.max_bytes
        ))
    }
}

impl fmt::Debug for MemoryTaskStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryTaskStore")
            .field("max_tasks", &self.max_tasks)
            .field("max_bytes", &self.max_bytes)
            .finish_non_exhaustive()
    }
}

impl TaskStore for MemoryTaskStore {
    fn create_task<'a>(
        &'a self,
        id: &'a str,
        record: &'a [u8],
        ttl: Duration,
    ) -> StoreFuture<'a, ()> {
        let done = self.create(id, record, ttl);
        Box::pin(async move { done })
    }

    fn load_task<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<StoredTask>> {
        let mut kept = self.kept();
        kept.sweep(Instant::now());
        let found = kept
            .tasks
            .get(id)
            .map(|e| StoredTask::new(e.record.clone(), e.last));
        Box::pin(async move { Ok(found) })
    }

    fn update_task<'a>(
        &'a self,
        id: &'a str,
        record: &'a [u8],
        last: bool,
    ) -> StoreFuture<'a, bool> {
        let done = self.update(id, record, last);
        Box::pin(async move { done })
    }
}

/// A store and how long each of its operations may take.
#[derive(Clone, Debug)]
pub(crate) struct StoreRef {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) timeout: Duration,
}

impl StoreRef {
    pub(crate) async fn run<T>(
        &self,
        what: &str,
        future: StoreFuture<'_, T>,
    ) -> Result<T, StoreError> {
        match tokio::time::timeout(self.timeout, future).await {
            Ok(done) => done,
            Err(_) => Err(StoreError::new(format!(
                "the task store did not {what} within {:?}",
                self.timeout
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn the_memory_store_is_bounded_final_records_stay_and_tasks_expire() {
        let store = MemoryTaskStore::new(2, 4096);
        let ttl = Duration::from_secs(10);
        store.create_task("a", b"working", ttl).await.unwrap();
        store.create_task("b", b"working", ttl).await.unwrap();
        let full = store.create_task("c", b"working", ttl).await.unwrap_err();
        assert!(full.to_string().contains("keeps 2 tasks"), "{full}");

        assert!(store.update_task("a", b"done", true).await.unwrap());
        assert!(!store.update_task("a", b"cancelled", true).await.unwrap());
        assert_eq!(
            store.load_task("a").await.unwrap(),
            Some(StoredTask::new(b"done".to_vec(), true))
        );
        assert!(!store.update_task("nobody", b"x", false).await.unwrap());

        let big = vec![b'x'; 5000];
        let over = store.update_task("b", &big, true).await.unwrap_err();
        assert!(over.to_string().contains("4096 bytes"), "{over}");
        assert!(
            store
                .update_task("b", b"failed: too big", true)
                .await
                .unwrap()
        );
        assert_eq!(store.bytes(), b"done".len() + b"failed: too big".len());

        tokio::time::advance(Duration::from_secs(11)).await;
        assert_eq!(store.load_task("a").await.unwrap(), None);
        assert!(store.is_empty());
        assert_eq!(store.bytes(), 0);
        store.create_task("c", b"working", ttl).await.unwrap();
    }
}
