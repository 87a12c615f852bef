//! The one table of requests in flight on a connection, both directions.
//!
//! Every peer-to-peer engine in this workspace keeps two tables: the
//! requests *we* sent that wait for the peer's answer, and the requests the
//! *peer* sent that we are still answering. [`RequestTable`] holds both
//! under one lock, so closing the connection drains both at once and no
//! request registered after the close can wait forever.
//!
//! The shape follows lsp-server's `req_queue.rs`: the table stores whatever
//! each side needs (a `oneshot::Sender` for our requests, a
//! `CancellationToken` for theirs) and never awaits; the waiting, the
//! timeouts and the answering stay with the engine that owns the table.
//!
//! ```
//! use claude_code_agent_mcp::__private::transport::RequestTable;
//! use tokio::sync::oneshot;
//!
//! let table: RequestTable<u64, oneshot::Sender<&str>, ()> = RequestTable::new();
//! let (tx, mut rx) = oneshot::channel();
//! table.register_ours(7, tx).unwrap();
//! // …the peer's response with id 7 arrives:
//! if let Some(waiter) = table.complete_ours(&7) {
//!     let _ = waiter.send("the answer");
//! }
//! assert_eq!(rx.try_recv(), Ok("the answer"));
//! assert!(table.complete_ours(&7).is_none(), "an id completes once");
//! ```

use std::collections::HashMap;
use std::collections::hash_map::{Entry, RandomState};
use std::fmt;
use std::hash::{BuildHasher, Hash};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Why a request could not be registered; carries the data back.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RegisterError<T> {
    /// A request with this id is already in the table.
    Duplicate(T),
    /// The table was closed: the connection is gone.
    Closed(T),
}

impl<T> RegisterError<T> {
    /// The data that was not registered.
    pub fn into_inner(self) -> T {
        match self {
            Self::Duplicate(t) | Self::Closed(t) => t,
        }
    }
}

impl<T> fmt::Display for RegisterError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Duplicate(_) => f.write_str("a request with this id is already in flight"),
            Self::Closed(_) => f.write_str("the connection is closed"),
        }
    }
}

impl<T: fmt::Debug> std::error::Error for RegisterError<T> {}

/// Requests in flight on one connection: ours (waiting for the peer's
/// answer, each with an `O`) and the peer's (being answered by us, each
/// with an `I`), by id.
///
/// All methods take `&self` and hold a `std` mutex only for the map
/// operation itself, never across an await. Each id completes at most once:
/// whoever removes it (the answer, a timeout, a cancellation, the close)
/// owns what it carried.
pub struct RequestTable<Id, O, I, S = RandomState> {
    inner: Mutex<Tables<Id, O, I, S>>,
}

struct Tables<Id, O, I, S> {
    ours: HashMap<Id, O, S>,
    theirs: HashMap<Id, I, S>,
    closed: bool,
    /// Our side only is closed: no new requests of ours.
    ours_closed: bool,
}

impl<Id, O, I, S: Default> Default for RequestTable<Id, O, I, S> {
    fn default() -> Self {
        Self {
            inner: Mutex::new(Tables {
                ours: HashMap::default(),
                theirs: HashMap::default(),
                closed: false,
                ours_closed: false,
            }),
        }
    }
}

impl<Id, O, I> RequestTable<Id, O, I> {
    /// An empty, open table.
    pub fn new() -> Self {
        Self::default()
    }
}

impl<Id, O, I, S> fmt::Debug for RequestTable<Id, O, I, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = self.lock();
        f.debug_struct("RequestTable")
            .field("ours", &t.ours.len())
            .field("theirs", &t.theirs.len())
            .field("closed", &t.closed)
            .finish()
    }
}

impl<Id, O, I, S> RequestTable<Id, O, I, S> {
    fn lock(&self) -> MutexGuard<'_, Tables<Id, O, I, S>> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How many of our requests wait for an answer.
    pub fn ours_len(&self) -> usize {
        self.lock().ours.len()
    }

    /// How many of the peer's requests we are answering.
    pub fn theirs_len(&self) -> usize {
        self.lock().theirs.len()
    }

    /// Whether [`close`](Self::close) was called.
    pub fn is_closed(&self) -> bool {
        self.lock().closed
    }

    /// Closes the table and hands back everything still in it: our waiters
    /// (to fail them) and the peer's requests (to withdraw them). Every
    /// later registration fails with [`RegisterError::Closed`].
    pub fn close(&self) -> (Vec<O>, Vec<I>) {
        let mut t = self.lock();
        t.closed = true;
        let ours = t.ours.drain().map(|(_, o)| o).collect();
        let theirs = t.theirs.drain().map(|(_, i)| i).collect();
        (ours, theirs)
    }

    /// Closes our side only and hands back our waiters (to fail them):
    /// every later [`register_ours`](RequestTable::register_ours) fails
    /// with [`RegisterError::Closed`], while the peer's requests stay and
    /// may still be answered (the way to the peer is gone for requests of
    /// ours, not for answers).
    pub fn close_ours(&self) -> Vec<O> {
        let mut t = self.lock();
        t.ours_closed = true;
        t.ours.drain().map(|(_, o)| o).collect()
    }

    /// Removes and returns every request of the peer's, leaving the table
    /// open (a session that stops its handlers but keeps the connection).
    pub fn drain_theirs(&self) -> Vec<I> {
        self.lock().theirs.drain().map(|(_, i)| i).collect()
    }
}

impl<Id: Eq + Hash, O, I, S: BuildHasher> RequestTable<Id, O, I, S> {
    /// Registers one of our requests before it is sent, so an answer that
    /// arrives at once finds its waiter.
    pub fn register_ours(&self, id: Id, waiter: O) -> Result<(), RegisterError<O>> {
        let mut t = self.lock();
        if t.closed || t.ours_closed {
            return Err(RegisterError::Closed(waiter));
        }
        match t.ours.entry(id) {
            Entry::Occupied(_) => Err(RegisterError::Duplicate(waiter)),
            Entry::Vacant(v) => {
                v.insert(waiter);
                Ok(())
            }
        }
    }

    /// Takes our request `id` out of the table: on its answer, its timeout,
    /// or when its waiter went away. `None` when it was already taken (a
    /// late or duplicate answer, or an id we never sent).
    pub fn complete_ours(&self, id: &Id) -> Option<O> {
        self.lock().ours.remove(id)
    }

    /// Looks at our request `id` without taking it.
    pub fn with_ours<R>(&self, id: &Id, f: impl FnOnce(&O) -> R) -> Option<R> {
        self.lock().ours.get(id).map(f)
    }

    /// Calls `f` on every request of ours still in the table.
    pub fn for_each_ours(&self, mut f: impl FnMut(&Id, &O)) {
        for (id, data) in &self.lock().ours {
            f(id, data);
        }
    }

    /// Registers a request of the peer's that we start answering. A second
    /// request with an id still in flight is refused
    /// ([`RegisterError::Duplicate`]): the peer broke the protocol, and the
    /// first request keeps its slot.
    pub fn register_theirs(&self, id: Id, data: I) -> Result<(), RegisterError<I>> {
        let mut t = self.lock();
        if t.closed {
            return Err(RegisterError::Closed(data));
        }
        match t.theirs.entry(id) {
            Entry::Occupied(_) => Err(RegisterError::Duplicate(data)),
            Entry::Vacant(v) => {
                v.insert(data);
                Ok(())
            }
        }
    }

    /// Takes the peer's request `id` out of the table, when we answer it or
    /// the peer withdraws it. `None` means someone else took it first: the
    /// request was withdrawn (answer nothing) or already answered.
    pub fn complete_theirs(&self, id: &Id) -> Option<I> {
        self.lock().theirs.remove(id)
    }

    /// Looks at the peer's request `id` without taking it.
    pub fn with_theirs<R>(&self, id: &Id, f: impl FnOnce(&I) -> R) -> Option<R> {
        self.lock().theirs.get(id).map(f)
    }

    /// Whether the peer's request `id` is in the table.
    pub fn has_theirs(&self, id: &Id) -> bool {
        self.lock().theirs.contains_key(id)
    }

    /// Calls `f` on every request of the peer's still in the table.
    pub fn for_each_theirs(&self, mut f: impl FnMut(&Id, &I)) {
        for (id, data) in &self.lock().theirs {
            f(id, data);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_id_completes_once_in_each_direction() {
        let t: RequestTable<String, u8, u8> = RequestTable::new();
        t.register_ours("a".into(), 1).unwrap();
        t.register_theirs("a".into(), 2).unwrap();
        assert_eq!(
            t.register_ours("a".into(), 3),
            Err(RegisterError::Duplicate(3))
        );
        assert_eq!(
            t.register_theirs("a".into(), 4),
            Err(RegisterError::Duplicate(4))
        );
        assert_eq!((t.ours_len(), t.theirs_len()), (1, 1));
        assert_eq!(t.with_theirs(&"a".into(), |v| *v), Some(2));
        assert_eq!(t.with_ours(&"a".into(), |v| *v), Some(1));
        let mut ours = Vec::new();
        t.for_each_ours(|id, v| ours.push((id.clone(), *v)));
        assert_eq!(ours, [("a".to_owned(), 1)]);
        assert_eq!(t.complete_ours(&"a".into()), Some(1));
        assert_eq!(t.complete_ours(&"a".into()), None);
        assert_eq!(t.complete_theirs(&"a".into()), Some(2));
        assert_eq!(t.complete_theirs(&"a".into()), None);
        // A finished id may be used again.
        t.register_theirs("a".into(), 5).unwrap();
        assert_eq!(t.drain_theirs(), vec![5]);
        assert!(!t.is_closed());
    }

    #[test]
    fn close_drains_both_sides_and_refuses_later_requests() {
        let t: RequestTable<u64, &str, &str> = RequestTable::new();
        t.register_ours(1, "waiter").unwrap();
        t.register_theirs(1, "token").unwrap();
        let (ours, theirs) = t.close();
        assert_eq!((ours, theirs), (vec!["waiter"], vec!["token"]));
        assert!(t.is_closed());
        assert_eq!(
            t.register_ours(2, "late"),
            Err(RegisterError::Closed("late"))
        );
        assert_eq!(
            t.register_theirs(2, "late")
                .map_err(RegisterError::into_inner),
            Err("late")
        );
        assert_eq!(
            format!("{t:?}"),
            "RequestTable { ours: 0, theirs: 0, closed: true }"
        );
    }

    #[test]
    fn closing_our_side_keeps_theirs() {
        let t: RequestTable<u64, &str, &str> = RequestTable::new();
        t.register_ours(1, "waiter").unwrap();
        t.register_theirs(1, "token").unwrap();
        assert_eq!(t.close_ours(), vec!["waiter"]);
        assert_eq!(
            t.register_ours(2, "late"),
            Err(RegisterError::Closed("late"))
        );
        assert!(t.has_theirs(&1));
        t.register_theirs(2, "another").unwrap();
        assert!(!t.is_closed());
        assert_eq!(t.complete_theirs(&1), Some("token"));
    }
}
