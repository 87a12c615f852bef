//! Session stores: where a session's transcript is kept besides the CLI's
//! own files, so that a conversation started on one machine resumes on
//! another ([`Options::session_store`](crate::Options::session_store)).
//!
//! A store keeps transcripts by [`SessionKey`]: a project (the name of the
//! folder the CLI keeps the working directory's sessions in, see
//! [`sanitize_path`](super::sanitize_path)), a session id and, for a
//! subagent's transcript, a subpath (`subagents/agent-<id>`). Each entry is
//! one line of the CLI's JSONL transcript, as a JSON value, kept as given.
//!
//! Three stores come with the SDK: [`InMemorySessionStore`] (one process:
//! tests, development), [`DirSessionStore`] (a folder, such as a shared
//! volume) and `RedisSessionStore` (feature `redis`). Another database
//! implements [`SessionStore`]; its methods say what each must guarantee.
//! The sessions API reads and changes sessions in a store too
//! ([`list_sessions_in_store`](super::list_sessions_in_store) and the
//! functions beside it).

mod api;
mod dir;
mod memory;

#[cfg(feature = "redis")]
mod redis;

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

pub use api::{
    delete_session_in_store, fork_session_in_store, import_session_to_store,
    list_sessions_in_store, list_subagents_in_store, rename_session_in_store,
    session_info_in_store, session_messages_in_store, subagent_messages_in_store,
    tag_session_in_store,
};
pub use dir::DirSessionStore;
pub use memory::InMemorySessionStore;
#[cfg(feature = "redis")]
pub use redis::RedisSessionStore;

/// What a store call returns, and how it fails: the types of the MCP
/// crate's stores (`mcp::server::TaskStore`, the HTTP server's event
/// store), one home for both.
pub use claude_code_agent_mcp::server::{StoreError, StoreFuture};

/// Which transcript of which session: a project (the name of the folder the
/// CLI keeps the working directory's sessions in, [`project_key`](super::project_key)),
/// a session id and, for a subagent's transcript, a subpath.
///
/// ```
/// use claude_code_agent::sessions::SessionKey;
/// let key = SessionKey::new("-srv-app", "0b0f6c2e-3f43-4d43-9f5b-0d4bb1a6a8f3");
/// assert_eq!(key.subpath, None);
/// let sub = key.clone().with_subpath("subagents/agent-a1");
/// assert_eq!(sub.subpath.as_deref(), Some("subagents/agent-a1"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub struct SessionKey {
    /// The project: the CLI's folder name for the working directory
    /// (`sanitize_path` of its canonical path).
    pub project_key: String,
    /// The session's id.
    pub session_id: String,
    /// `None` for the session's own transcript; for a subagent's, its path
    /// under the session's folder without `.jsonl` (`subagents/agent-<id>`).
    /// Never empty.
    pub subpath: Option<String>,
}

impl SessionKey {
    /// The main transcript of `session_id` in `project_key`.
    pub fn new(project_key: impl Into<String>, session_id: impl Into<String>) -> Self {
        SessionKey {
            project_key: project_key.into(),
            session_id: session_id.into(),
            subpath: None,
        }
    }

    /// The transcript at `subpath` of the same session (an empty subpath
    /// means the main transcript).
    pub fn with_subpath(mut self, subpath: impl Into<String>) -> Self {
        let subpath = subpath.into();
        self.subpath = (!subpath.is_empty()).then_some(subpath);
        self
    }
}

impl fmt::Display for SessionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.project_key, self.session_id)?;
        if let Some(sub) = &self.subpath {
            write!(f, "/{sub}")?;
        }
        Ok(())
    }
}

/// A session a store keeps, as [`SessionStore::list_sessions`] lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoredSession {
    /// The session's id.
    pub session_id: String,
    /// When its main transcript was last appended to, in milliseconds since
    /// the Unix epoch, on the store's clock.
    pub mtime: i64,
}

impl StoredSession {
    /// A listed session.
    pub fn new(session_id: impl Into<String>, mtime: i64) -> Self {
        StoredSession {
            session_id: session_id.into(),
            mtime,
        }
    }
}

/// A failed store call: the [`StoreError`] the MCP crate's stores use too
/// (what failed, where, and the underlying error as its source).
pub(crate) fn io_error(action: &str, path: &std::path::Path, e: std::io::Error) -> StoreError {
    StoreError::new(format!("cannot {action} {}", path.display())).with_source(e)
}

/// When the SDK hands a session's new transcript entries to its store
/// ([`Options::session_store_flush`](crate::Options::session_store_flush)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum SessionStoreFlush {
    /// Gathered, and appended at the end of each turn (before its `Result`
    /// reaches you), at the end of the session, and whenever 500 entries or
    /// 1 MiB are waiting. The default.
    #[default]
    Batched,
    /// Each batch the CLI writes is appended as it comes, one
    /// [`append`](SessionStore::append) each.
    Eager,
}

/// Where session transcripts are kept besides the CLI's files, so that any
/// machine can resume them (docs/sessions.md). Entries are the lines of the
/// CLI's JSONL transcript, as JSON values, kept as given.
///
/// The SDK calls [`append`](Self::append) with what the CLI wrote (it
/// starts the CLI with `--session-mirror`, which sends each batch of
/// transcript entries it writes on stdout), and [`load`](Self::load) before
/// it resumes a session. Each call is bounded by
/// [`Options::session_store_timeout`](crate::Options::session_store_timeout);
/// a failing or silent store fails the turn with
/// [`Error::SessionStore`](crate::Error::SessionStore).
///
/// Implementations must be safe to call concurrently, for different keys
/// and for the same one.
pub trait SessionStore: fmt::Debug + Send + Sync + 'static {
    /// Appends `entries`, in order, after those kept for `key`, creating the
    /// transcript if it is new, atomically: all of them are kept or, on
    /// `Err`, none. Appends to one key from one process arrive in order,
    /// each after the previous one completed.
    fn append<'a>(&'a self, key: &'a SessionKey, entries: &'a [Value]) -> StoreFuture<'a, ()>;

    /// Every entry kept for `key`, in the order appended (each equal as
    /// JSON to what was appended); `None` for a key never appended to.
    fn load<'a>(&'a self, key: &'a SessionKey) -> StoreFuture<'a, Option<Vec<Value>>>;

    /// The sessions kept for `project_key` (main transcripts only), in any
    /// order. The default: an error saying the store cannot list.
    fn list_sessions<'a>(&'a self, project_key: &'a str) -> StoreFuture<'a, Vec<StoredSession>> {
        let _ = project_key;
        Box::pin(async { Err(StoreError::new("this session store cannot list sessions")) })
    }

    /// The subpaths kept for a session (its subagents' transcripts), in any
    /// order. The default: none, so a resume restores the main transcript
    /// only.
    fn list_subkeys<'a>(
        &'a self,
        project_key: &'a str,
        session_id: &'a str,
    ) -> StoreFuture<'a, Vec<String>> {
        let _ = (project_key, session_id);
        Box::pin(async { Ok(Vec::new()) })
    }

    /// Forgets `key`; for a main transcript, the session's subpaths too. A
    /// key not kept is not an error. The default: an error saying the store
    /// cannot delete.
    fn delete<'a>(&'a self, key: &'a SessionKey) -> StoreFuture<'a, ()> {
        let _ = key;
        Box::pin(async { Err(StoreError::new("this session store cannot delete sessions")) })
    }
}

/// A session store shared by the sessions that use it (cheap to clone).
pub(crate) type SharedStore = Arc<dyn SessionStore>;

/// The JSONL text of `entries` (one line each, `\n`-terminated).
pub(crate) fn to_jsonl(entries: &[Value]) -> String {
    let mut text = String::new();
    for e in entries {
        text.push_str(&e.to_string());
        text.push('\n');
    }
    text
}

/// The entries of a JSONL text; lines that are not JSON (a torn write) are
/// skipped.
pub(crate) fn from_jsonl(text: &str) -> Vec<Value> {
    text.split('\n')
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// The size a transcript of `entries` has as JSONL.
pub(crate) fn jsonl_size(entries: &[Value]) -> u64 {
    entries.iter().map(|e| e.to_string().len() as u64 + 1).sum()
}

/// Refuses keys that could name a file outside a store's folder or mix
/// with another key: empty parts, `.` and `..`, absolute paths,
/// backslashes, `:` and NUL.
pub(crate) fn check_key(key: &SessionKey) -> Result<(), StoreError> {
    let part =
        |s: &str| !s.is_empty() && s != "." && s != ".." && !s.contains(['/', '\\', ':', '\0']);
    let ok = part(&key.project_key)
        && part(&key.session_id)
        && key
            .subpath
            .as_deref()
            .is_none_or(|sub| sub.split('/').all(part));
    if ok {
        Ok(())
    } else {
        Err(StoreError::new(format!(
            "not a usable session key: {key:?}"
        )))
    }
}

/// Milliseconds since the Unix epoch, now.
pub(crate) fn now_ms() -> i64 {
    super::time::system_time_ms(std::time::SystemTime::now())
}

/// A shared store is a store: `Arc<dyn SessionStore>` and `Arc<S>` can be
/// passed wherever a store is taken.
impl<S: SessionStore + ?Sized> SessionStore for Arc<S> {
    fn append<'a>(&'a self, key: &'a SessionKey, entries: &'a [Value]) -> StoreFuture<'a, ()> {
        (**self).append(key, entries)
    }

    fn load<'a>(&'a self, key: &'a SessionKey) -> StoreFuture<'a, Option<Vec<Value>>> {
        (**self).load(key)
    }

    fn list_sessions<'a>(&'a self, project_key: &'a str) -> StoreFuture<'a, Vec<StoredSession>> {
        (**self).list_sessions(project_key)
    }

    fn list_subkeys<'a>(
        &'a self,
        project_key: &'a str,
        session_id: &'a str,
    ) -> StoreFuture<'a, Vec<String>> {
        (**self).list_subkeys(project_key, session_id)
    }

    fn delete<'a>(&'a self, key: &'a SessionKey) -> StoreFuture<'a, ()> {
        (**self).delete(key)
    }
}
