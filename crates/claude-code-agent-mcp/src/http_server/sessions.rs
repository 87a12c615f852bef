//! The live sessions of a service, by `Mcp-Session-Id`.
//!
//! Opening a session costs the same beside 10 or 10,000 live ones: nothing
//! on the request path walks the sessions. A request stamps its session's
//! last activity (one atomic store); expiry is a min-heap of due times that
//! only the sessions whose time has come leave — popped by a background
//! task every `reap_period`, and by an `initialize` that finds the table
//! full (to make room before it answers 503). A popped session that was
//! active since goes back with its new due time; one that was not ends,
//! unless an SSE stream has its client attached (that counts as activity). A session removed
//! otherwise (DELETE) leaves the schedule at once. No lock is held across a
//! walk or an await.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::config::StreamableHttpConfig;
use super::hub::Hub;
use crate::Session;

/// What a replica needs to take a session over: a session's record in
/// the event store (replica.rs). A replica of an older version reads it
/// without the fields it does not know.
#[derive(Clone, Serialize, Deserialize)]
pub(crate) struct Record {
    pub(crate) protocol: String,
    pub(crate) owner: Option<Owner>,
    pub(crate) initialize: Value,
    /// The `level` of the client's last `logging/setLevel`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) level: Option<Value>,
    /// The resources the client subscribed to (`resources/subscribe`) and
    /// did not unsubscribe from.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub(crate) subscriptions: BTreeSet<String>,
    /// The replica that holds the session: the last one its client
    /// reached (the others fail their requests to the client: its answers
    /// go to this one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) replica: Option<String>,
}

/// One client's session: the server-side [`Session`] and its SSE streams.
/// The subject and client of the access token that opened a session.
pub(crate) type Owner = (Option<String>, Option<String>);

pub(crate) struct HttpSession {
    pub(crate) id: String,
    pub(crate) session: Session,
    pub(crate) hub: Arc<Hub>,
    /// The last request, µs since the table's epoch.
    last_seen: AtomicU64,
    epoch: Instant,
    /// Its key in the table's schedule: (due µs, `serial`); the due time
    /// changes only under the schedule's lock.
    due_at: AtomicU64,
    serial: u64,
    /// The revision `initialize` settled on.
    pub(crate) protocol: OnceLock<String>,
    /// Who opened it, on a protected resource: the subject and client of
    /// its access token. Other tokens do not find it.
    /// Boxed: most servers have no OAuth, and a session's size counts.
    pub(crate) owner: OnceLock<Box<Owner>>,
    /// When its record in the event store was last kept (µs, as
    /// `last_seen`).
    store_touched: AtomicU64,
    /// With an event store: its record there, as last saved (replica.rs).
    /// Each change is saved under this lock, so saves keep their order.
    pub(crate) record: tokio::sync::Mutex<Option<Box<Record>>>,
}

impl HttpSession {
    fn now(&self) -> u64 {
        micros(self.epoch.elapsed())
    }

    pub(crate) fn touch(&self) {
        self.last_seen.store(self.now(), Ordering::Relaxed);
    }

    /// Whether its record in the event store was kept more than `period`
    /// ago (then it counts as kept now).
    pub(crate) fn store_touch_due(&self, period: Duration) -> bool {
        let now = self.now();
        let last = self.store_touched.load(Ordering::Relaxed);
        now.saturating_sub(last) > micros(period)
            && self
                .store_touched
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
    }

    /// Whether the session has been idle longer than `timeout`: no request
    /// for that long, and no SSE stream with its client attached (only
    /// looked at, a walk of the session's streams, once the time is up).
    fn expired(&self, timeout: Duration) -> bool {
        let idle = self
            .now()
            .saturating_sub(self.last_seen.load(Ordering::Relaxed));
        idle > micros(timeout) && !self.hub.has_open_stream()
    }

    /// Whether SSE streams start with a priming event (2025-11-25 and later:
    /// older clients may choke on an event with empty data).
    pub(crate) fn priming(&self) -> bool {
        self.protocol
            .get()
            .is_some_and(|v| v.as_str() >= "2025-11-25")
    }

    /// Ends the session: streams close, requests to the client fail.
    pub(crate) fn end(&self) {
        self.hub.close();
        self.session.close();
        self.session.cancel_all();
    }
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// How often the background task looks for expired sessions: a quarter of
/// the idle timeout, between 10 ms and 10 s.
fn reap_period(timeout: Duration) -> Duration {
    (timeout / 4).clamp(Duration::from_millis(10), Duration::from_secs(10))
}

/// When each session is to be looked at: (due µs, serial) → the session.
type Schedule = BTreeMap<(u64, u64), Weak<HttpSession>>;

struct Inner {
    map: Mutex<HashMap<String, Arc<HttpSession>>>,
    /// Every live session once, by when it may have expired.
    due: Mutex<Schedule>,
    epoch: Instant,
    idle_timeout: Duration,
    serial: AtomicU64,
    /// Whether the reaper task runs (it runs while sessions are live).
    reaping: AtomicBool,
    /// Wakes the reaper early (the table emptied: it ends).
    wake: tokio::sync::Notify,
}

pub(crate) struct SessionTable {
    inner: Arc<Inner>,
}

impl Inner {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<HttpSession>>> {
        self.map.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn now(&self) -> u64 {
        micros(self.epoch.elapsed())
    }

    fn schedule(&self) -> std::sync::MutexGuard<'_, Schedule> {
        self.due.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes `session` out of the schedule.
    fn unschedule(&self, session: &HttpSession) {
        let mut due = self.schedule();
        let key = (session.due_at.load(Ordering::Relaxed), session.serial);
        due.remove(&key);
    }

    /// Ends the sessions that expired: only those whose due time has come
    /// are looked at (O(log n) each).
    fn reap_due(&self) {
        let timeout = micros(self.idle_timeout);
        let now = self.now();
        loop {
            let session = {
                let mut due = self.schedule();
                match due.first_key_value() {
                    Some((&(at, _), _)) if at <= now => {}
                    _ => return,
                }
                let Some((_, session)) = due.pop_first() else {
                    return;
                };
                session
            };
            let Some(session) = session.upgrade() else {
                continue;
            };
            let idle = now.saturating_sub(session.last_seen.load(Ordering::Relaxed));
            if idle > timeout {
                if !session.hub.has_open_stream() {
                    let removed = self.lock().remove(&session.id);
                    if let Some(s) = removed {
                        s.end();
                    }
                    continue;
                }
                // A stream with its client attached counts as activity.
                session.touch();
            }
            // Look again when it could have expired at the earliest.
            let last = session.last_seen.load(Ordering::Relaxed);
            let at = last
                .saturating_add(timeout)
                .saturating_add(1)
                .max(now.saturating_add(1));
            let mut due = self.schedule();
            session.due_at.store(at, Ordering::Relaxed);
            due.insert((at, session.serial), Arc::downgrade(&session));
            drop(due);
            if !self.lock().contains_key(&session.id) {
                self.unschedule(&session); // removed meanwhile
            }
        }
    }
}

impl SessionTable {
    /// Sessions that end after `idle_timeout` without a request and
    /// without an open stream.
    pub(crate) fn new(idle_timeout: Duration) -> Self {
        Self {
            inner: Arc::new(Inner {
                map: Mutex::new(HashMap::new()),
                due: Mutex::new(BTreeMap::new()),
                epoch: Instant::now(),
                idle_timeout,
                serial: AtomicU64::new(0),
                reaping: AtomicBool::new(false),
                wake: tokio::sync::Notify::new(),
            }),
        }
    }

    /// Starts the background reaper unless it runs (on the current
    /// runtime; none outside one). It holds the table weakly and ends once
    /// no session is left, so a stopped service leaves no task behind.
    fn start_reaper(&self) {
        if self.inner.reaping.swap(true, Ordering::AcqRel) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            self.inner.reaping.store(false, Ordering::Release);
            return;
        };
        let table = Arc::downgrade(&self.inner);
        let period = reap_period(self.inner.idle_timeout);
        runtime.spawn(async move {
            loop {
                let Some(inner) = table.upgrade() else {
                    return;
                };
                tokio::select! {
                    () = tokio::time::sleep(period) => {}
                    () = inner.wake.notified() => {}
                }
                inner.reap_due();
                if inner.lock().is_empty() {
                    inner.reaping.store(false, Ordering::Release);
                    // A session created meanwhile saw the reaper running.
                    if inner.lock().is_empty() || inner.reaping.swap(true, Ordering::AcqRel) {
                        return;
                    }
                }
            }
        });
    }

    /// A new session, or `None` when the cap is reached even after
    /// reaping idle ones.
    pub(crate) fn create(&self, config: &StreamableHttpConfig) -> Option<Arc<HttpSession>> {
        let http = self.build(new_session_id(&config.session_id_prefix), config);
        self.insert(http, config)
    }

    /// A session with this id, not yet in the table ([`insert`](Self::insert)).
    pub(crate) fn build(&self, id: String, config: &StreamableHttpConfig) -> Arc<HttpSession> {
        let hub = Arc::new(Hub::new(
            config.retry,
            config.events_per_stream,
            config.replay_bytes,
            config.max_held_bytes,
        ));
        let sink = Arc::clone(&hub);
        let session = Session::with_notifier(move |message| sink.deliver(message));
        session.set_client_requests(true);
        let now = self.inner.now();
        let at = now
            .saturating_add(micros(self.inner.idle_timeout))
            .saturating_add(1);
        Arc::new(HttpSession {
            id,
            session,
            hub,
            last_seen: AtomicU64::new(now),
            epoch: self.inner.epoch,
            due_at: AtomicU64::new(at),
            serial: self.inner.serial.fetch_add(1, Ordering::Relaxed),
            protocol: OnceLock::new(),
            owner: OnceLock::new(),
            store_touched: AtomicU64::new(now),
            record: tokio::sync::Mutex::new(None),
        })
    }

    /// Puts `http` in the table: `None` when the cap is reached even after
    /// reaping idle ones (then `http` ends). If a session with its id is there already (two
    /// requests took it over from the event store at once), that one stays
    /// and `http` ends.
    pub(crate) fn insert(
        &self,
        http: Arc<HttpSession>,
        config: &StreamableHttpConfig,
    ) -> Option<Arc<HttpSession>> {
        self.start_reaper();
        if self.len() >= config.max_sessions {
            self.inner.reap_due();
        }
        let at = http.due_at.load(Ordering::Relaxed);
        self.inner
            .schedule()
            .insert((at, http.serial), Arc::downgrade(&http));
        let mut map = self.inner.lock();
        if let Some(there) = map.get(&http.id).cloned() {
            drop(map);
            self.inner.unschedule(&http);
            http.end();
            return Some(there);
        }
        if map.len() >= config.max_sessions {
            drop(map);
            self.inner.unschedule(&http);
            http.end();
            return None;
        }
        map.insert(http.id.clone(), Arc::clone(&http));
        Some(http)
    }

    /// The live session with this id (an expired one is ended and forgotten).
    pub(crate) fn get(&self, id: &str) -> Option<Arc<HttpSession>> {
        let found = self.inner.lock().get(id).cloned()?;
        if found.expired(self.inner.idle_timeout) {
            self.remove(id);
            return None;
        }
        found.touch();
        Some(found)
    }

    pub(crate) fn remove(&self, id: &str) -> Option<Arc<HttpSession>> {
        let (removed, empty) = {
            let mut map = self.inner.lock();
            let removed = map.remove(id);
            (removed, map.is_empty())
        };
        if let Some(s) = &removed {
            self.inner.unschedule(s);
            s.end();
        }
        if empty {
            self.inner.wake.notify_one(); // the reaper ends
        }
        removed
    }

    /// How many sessions are live.
    pub(crate) fn len(&self) -> usize {
        self.inner.lock().len()
    }

    /// Ends the response of every session's GET stream (its client
    /// reconnects); the sessions go on. How many ended.
    pub(crate) fn end_get_streams(&self) -> usize {
        let all: Vec<Arc<HttpSession>> = self.inner.lock().values().cloned().collect();
        all.iter().filter(|s| s.hub.end_standalone()).count()
    }

    /// Ends every session.
    pub(crate) fn clear(&self) {
        let all: Vec<Arc<HttpSession>> = self.inner.lock().drain().map(|(_, s)| s).collect();
        self.inner.schedule().clear();
        self.inner.wake.notify_one(); // the reaper ends
        for s in all {
            s.end();
        }
    }
}

/// 128 random bits from the operating system, as 32 hex digits.
/// `prefix`, then 128 random bits in hex.
pub(crate) fn new_session_id(prefix: &str) -> String {
    use std::fmt::Write;
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the operating system's random source works");
    let mut id = String::with_capacity(prefix.len() + 32);
    id.push_str(prefix);
    for b in bytes {
        let _ = write!(id, "{b:02x}");
    }
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scheduled(table: &SessionTable) -> usize {
        table.inner.schedule().len()
    }

    #[test]
    #[should_panic(expected = "is not at most 64 visible ASCII characters")]
    fn a_session_id_prefix_that_no_id_may_hold_is_refused() {
        let _ = StreamableHttpConfig::default().session_id_prefix("r 1");
    }

    #[test]
    fn ids_are_random_and_sessions_capped_and_expire() {
        let table = SessionTable::new(Duration::from_millis(20));
        let config = StreamableHttpConfig::default().max_sessions(2);
        let a = table.create(&config).unwrap();
        let b = table.create(&config).unwrap();
        assert_eq!(a.id.len(), 32);
        let prefixed = StreamableHttpConfig::default().session_id_prefix("r1.");
        let id = new_session_id(&prefixed.session_id_prefix);
        assert!(id.starts_with("r1.") && id.len() == 35, "{id}");
        assert_ne!(a.id, b.id);
        assert_eq!(a.id.len(), 32);
        assert!(table.create(&config).is_none(), "capped");
        assert!(table.get(&a.id).is_some());
        std::thread::sleep(Duration::from_millis(40));
        assert!(table.get(&a.id).is_none(), "expired");
        assert_eq!(table.len(), 1);
        let c = table.create(&config).unwrap();
        assert!(table.get(&c.id).is_some());
        // Full again (b, c): b's time has come, so it makes room.
        assert!(
            table.create(&config).is_some(),
            "idle sessions are reaped to make room"
        );
        assert!(table.get(&b.id).is_none());
        assert_eq!(table.len(), 2);
        assert_eq!(scheduled(&table), 2, "one schedule entry per live session");
    }

    #[test]
    fn a_session_in_use_outlives_its_timeout_and_delete_unschedules() {
        let table = SessionTable::new(Duration::from_millis(30));
        let config = StreamableHttpConfig::default();
        let used = table.create(&config).unwrap();
        let deleted = table.create(&config).unwrap();
        assert!(table.remove(&deleted.id).is_some());
        assert_eq!(scheduled(&table), 1, "DELETE leaves the schedule");
        for _ in 0..8 {
            std::thread::sleep(Duration::from_millis(10));
            assert!(table.get(&used.id).is_some(), "in use: not expired");
            table.inner.reap_due();
        }
        assert_eq!((table.len(), scheduled(&table)), (1, 1));
        std::thread::sleep(Duration::from_millis(50));
        table.inner.reap_due();
        assert_eq!((table.len(), scheduled(&table)), (0, 0), "then it expires");
    }

    #[tokio::test]
    async fn the_background_reaper_ends_idle_sessions_without_a_request() {
        let table = SessionTable::new(Duration::from_millis(20));
        let config = StreamableHttpConfig::default();
        for _ in 0..100 {
            table.create(&config).unwrap();
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while table.len() > 0 && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!((table.len(), scheduled(&table)), (0, 0));
    }

    #[test]
    fn opening_a_session_beside_many_does_not_look_at_them() {
        // 20,000 live sessions, all past due: opening one more with room
        // to spare ends none of them (expiry is the reaper's job).
        let table = SessionTable::new(Duration::from_millis(1));
        let config = StreamableHttpConfig::default().max_sessions(30_000);
        for _ in 0..20_000 {
            table.create(&config).unwrap();
        }
        std::thread::sleep(Duration::from_millis(5));
        table.create(&config).unwrap();
        assert_eq!(table.len(), 20_001);
    }
}
