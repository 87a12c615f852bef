//! The live sessions of a service, by `Mcp-Session-Id`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use super::config::StreamableHttpConfig;
use super::hub::Hub;
use crate::Session;

/// One client's session: the server-side [`Session`] and its SSE streams.
pub(crate) struct HttpSession {
    pub(crate) id: String,
    pub(crate) session: Session,
    pub(crate) hub: Arc<Hub>,
    last_seen: Mutex<Instant>,
    /// The revision `initialize` settled on.
    pub(crate) protocol: OnceLock<String>,
}

impl HttpSession {
    pub(crate) fn touch(&self) {
        *self
            .last_seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Instant::now();
    }

    fn idle_for(&self) -> Duration {
        if self.hub.has_open_stream() {
            return Duration::ZERO;
        }
        self.last_seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .elapsed()
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

pub(crate) struct SessionTable {
    map: Mutex<HashMap<String, Arc<HttpSession>>>,
}

impl SessionTable {
    pub(crate) fn new() -> Self {
        Self {
            map: Mutex::new(HashMap::new()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<HttpSession>>> {
        self.map.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A new session, or `None` when the cap is reached even after
    /// reaping idle ones.
    pub(crate) fn create(&self, config: &StreamableHttpConfig) -> Option<Arc<HttpSession>> {
        self.reap(config.idle_timeout);
        let hub = Arc::new(Hub::new(config.retry, config.events_per_stream));
        let sink = Arc::clone(&hub);
        let session = Session::with_notifier(move |message| sink.deliver(message));
        session.set_client_requests(true);
        let http = Arc::new(HttpSession {
            id: new_session_id(),
            session,
            hub,
            last_seen: Mutex::new(Instant::now()),
            protocol: OnceLock::new(),
        });
        let mut map = self.lock();
        if map.len() >= config.max_sessions {
            return None;
        }
        map.insert(http.id.clone(), Arc::clone(&http));
        Some(http)
    }

    /// The live session with this id (an expired one is ended and forgotten).
    pub(crate) fn get(&self, id: &str, idle_timeout: Duration) -> Option<Arc<HttpSession>> {
        let found = self.lock().get(id).cloned()?;
        if found.idle_for() > idle_timeout {
            self.remove(id);
            return None;
        }
        found.touch();
        Some(found)
    }

    pub(crate) fn remove(&self, id: &str) -> Option<Arc<HttpSession>> {
        let removed = self.lock().remove(id);
        if let Some(s) = &removed {
            s.end();
        }
        removed
    }

    /// How many sessions are live.
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }

    fn reap(&self, idle_timeout: Duration) {
        let expired: Vec<Arc<HttpSession>> = {
            let mut map = self.lock();
            let ids: Vec<String> = map
                .iter()
                .filter(|(_, s)| s.idle_for() > idle_timeout)
                .map(|(k, _)| k.clone())
                .collect();
            ids.iter().filter_map(|id| map.remove(id)).collect()
        };
        for s in expired {
            s.end();
        }
    }

    /// Ends every session.
    pub(crate) fn clear(&self) {
        let all: Vec<Arc<HttpSession>> = self.lock().drain().map(|(_, s)| s).collect();
        for s in all {
            s.end();
        }
    }
}

/// 128 random bits from the operating system, as 32 hex digits.
fn new_session_id() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the operating system's random source works");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_random_and_sessions_capped_and_expire() {
        let table = SessionTable::new();
        let config = StreamableHttpConfig::default().max_sessions(2);
        let a = table.create(&config).unwrap();
        let b = table.create(&config).unwrap();
        assert_ne!(a.id, b.id);
        assert_eq!(a.id.len(), 32);
        assert!(table.create(&config).is_none(), "capped");
        assert!(table.get(&a.id, Duration::from_secs(60)).is_some());
        std::thread::sleep(Duration::from_millis(5));
        assert!(
            table.get(&a.id, Duration::from_millis(1)).is_none(),
            "expired"
        );
        assert_eq!(table.len(), 1);
        let short = config
            .clone()
            .session_idle_timeout(Duration::from_millis(1));
        assert!(
            table.create(&short).is_some(),
            "idle sessions are reaped to make room"
        );
    }
}
