//! [`InMemorySessionStore`]: transcripts in this process's memory.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::{SessionKey, SessionStore, StoreFuture, StoredSession, check_key, now_ms};

#[derive(Debug, Default)]
struct State {
    transcripts: BTreeMap<SessionKey, (Vec<Value>, i64)>,
    last_mtime: i64,
}

/// A [`SessionStore`] in this process's memory: for tests, development and
/// sessions resumed in the same process. Clones share the transcripts; they
/// are gone when the last clone is dropped.
///
/// ```
/// use claude_code_agent::Options;
/// use claude_code_agent::sessions::InMemorySessionStore;
///
/// let store = InMemorySessionStore::new();
/// let options = Options::new().session_store(store.clone());
/// # let _ = options;
/// ```
#[derive(Debug, Clone, Default)]
pub struct InMemorySessionStore {
    state: Arc<Mutex<State>>,
}

impl InMemorySessionStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// The entries kept for `key` (empty when none).
    pub fn entries(&self, key: &SessionKey) -> Vec<Value> {
        self.lock()
            .transcripts
            .get(key)
            .map(|(e, _)| e.clone())
            .unwrap_or_default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl SessionStore for InMemorySessionStore {
    fn append<'a>(&'a self, key: &'a SessionKey, entries: &'a [Value]) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            check_key(key)?;
            let mut state = self.lock();
            // Strictly increasing, so that the newest session sorts first.
            let mtime = now_ms().max(state.last_mtime + 1);
            state.last_mtime = mtime;
            let slot = state
                .transcripts
                .entry(key.clone())
                .or_insert_with(|| (Vec::new(), mtime));
            slot.0.extend_from_slice(entries);
            slot.1 = mtime;
            Ok(())
        })
    }

    fn load<'a>(&'a self, key: &'a SessionKey) -> StoreFuture<'a, Option<Vec<Value>>> {
        Box::pin(async move {
            check_key(key)?;
            Ok(self.lock().transcripts.get(key).map(|(e, _)| e.clone()))
        })
    }

    fn list_sessions<'a>(&'a self, project_key: &'a str) -> StoreFuture<'a, Vec<StoredSession>> {
        Box::pin(async move {
            Ok(self
                .lock()
                .transcripts
                .iter()
                .filter(|(k, _)| k.project_key == project_key && k.subpath.is_none())
                .map(|(k, (_, mtime))| StoredSession::new(k.session_id.clone(), *mtime))
                .collect())
        })
    }

    fn list_subkeys<'a>(
        &'a self,
        project_key: &'a str,
        session_id: &'a str,
    ) -> StoreFuture<'a, Vec<String>> {
        Box::pin(async move {
            Ok(self
                .lock()
                .transcripts
                .keys()
                .filter(|k| k.project_key == project_key && k.session_id == session_id)
                .filter_map(|k| k.subpath.clone())
                .collect())
        })
    }

    fn delete<'a>(&'a self, key: &'a SessionKey) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            check_key(key)?;
            self.lock().transcripts.retain(|k, _| {
                !(k.project_key == key.project_key
                    && k.session_id == key.session_id
                    && (key.subpath.is_none() || k.subpath == key.subpath))
            });
            Ok(())
        })
    }
}
