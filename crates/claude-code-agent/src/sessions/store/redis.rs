//! [`RedisSessionStore`]: transcripts in Redis (or Valkey), through the
//! connection setup of the MCP crate's `RedisEventStore`.
//!
//! Keys, all of a project under one hash tag (one Redis Cluster slot):
//! `<prefix>{<project>}:t:<session>` a main transcript (a list of JSON
//! texts), `…:t:<session>:<subpath>` a subagent's, `<prefix>{<project>}:s`
//! the project's sessions (a sorted set scored by the time of their last
//! append, in milliseconds on the Redis clock) and
//! `<prefix>{<project>}:k:<session>` a session's subpaths (a set). Each
//! append and each delete is one Lua script: atomic, one round trip.

use std::time::Duration;

use serde_json::Value;

use super::{SessionKey, SessionStore, StoreError, StoreFuture, StoredSession, check_key};
use claude_code_agent_mcp::__private::redis::{
    self as redis, aio::ConnectionManager, connect, failed,
};

/// KEYS: the transcript, the sessions' sorted set, the subpaths' set.
/// ARGV: the session id, the subpath (`''` for the main transcript), then
/// the entries.
const APPEND: &str = r"
local t = redis.call('TIME')
local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local n = #ARGV
local i = 3
while i <= n do
  local j = math.min(i + 999, n)
  redis.call('RPUSH', KEYS[1], unpack(ARGV, i, j))
  i = j + 1
end
if ARGV[2] == '' then
  redis.call('ZADD', KEYS[2], ms, ARGV[1])
else
  redis.call('SADD', KEYS[3], ARGV[2])
end
return ms
";

/// KEYS: the transcript, the sessions' sorted set, the subpaths' set.
/// ARGV: the session id, the subpath (`''`: the whole session), the prefix
/// of the session's subagent transcripts.
const DELETE: &str = r"
if ARGV[2] == '' then
  for _, sub in ipairs(redis.call('SMEMBERS', KEYS[3])) do
    redis.call('DEL', ARGV[3] .. sub)
  end
  redis.call('DEL', KEYS[1], KEYS[3])
  redis.call('ZREM', KEYS[2], ARGV[1])
else
  redis.call('DEL', KEYS[1])
  redis.call('SREM', KEYS[3], ARGV[2])
end
return 1
";

/// A [`SessionStore`] in Redis 7 or later (or Valkey). Cheap to clone
/// (clones share the connection).
///
/// Nothing expires: retention is yours (delete sessions with
/// [`delete_session_in_store`](crate::sessions::delete_session_in_store),
/// or give Redis an eviction policy). Each operation is bounded by a
/// timeout ([`with_timeout`](Self::with_timeout)); without Redis, every
/// call fails with an error naming it, and the connection is made again in
/// the background.
#[derive(Clone)]
pub struct RedisSessionStore {
    conn: ConnectionManager,
    append: redis::Script,
    delete: redis::Script,
    address: String,
    prefix: String,
}

impl std::fmt::Debug for RedisSessionStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisSessionStore")
            .field("address", &self.address)
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl RedisSessionStore {
    /// A store at `url` (`redis://host:port/db`). Connects on first use,
    /// so a worker starts while Redis is still down. Call it inside a Tokio
    /// runtime. Keys are prefixed `claude:session:`; each operation is
    /// bounded by 5 s.
    pub fn new(url: &str) -> Result<Self, StoreError> {
        Self::with_timeout(url, Duration::from_secs(5))
    }

    /// [`new`](Self::new), each operation (and each connection attempt)
    /// bounded by `timeout`.
    pub fn with_timeout(url: &str, timeout: Duration) -> Result<Self, StoreError> {
        let (conn, address) = connect(url, timeout)?;
        Ok(Self {
            conn,
            append: redis::Script::new(APPEND),
            delete: redis::Script::new(DELETE),
            address,
            prefix: "claude:session:".into(),
        })
    }

    /// The prefix of every key (default `claude:session:`): deployments
    /// that must not see each other's sessions use different ones.
    pub fn key_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    fn transcript_key(&self, key: &SessionKey) -> String {
        let main = format!(
            "{}{{{}}}:t:{}",
            self.prefix, key.project_key, key.session_id
        );
        match &key.subpath {
            None => main,
            Some(sub) => format!("{main}:{sub}"),
        }
    }

    fn sessions_key(&self, project_key: &str) -> String {
        format!("{}{{{project_key}}}:s", self.prefix)
    }

    fn subkeys_key(&self, project_key: &str, session_id: &str) -> String {
        format!("{}{{{project_key}}}:k:{session_id}", self.prefix)
    }
}

impl SessionStore for RedisSessionStore {
    fn append<'a>(&'a self, key: &'a SessionKey, entries: &'a [Value]) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            check_key(key)?;
            if entries.is_empty() {
                return Ok(());
            }
            let mut conn = self.conn.clone();
            let mut call = self.append.prepare_invoke();
            call.key(self.transcript_key(key))
                .key(self.sessions_key(&key.project_key))
                .key(self.subkeys_key(&key.project_key, &key.session_id))
                .arg(&key.session_id)
                .arg(key.subpath.as_deref().unwrap_or(""));
            for entry in entries {
                call.arg(entry.to_string());
            }
            call.invoke_async::<i64>(&mut conn)
                .await
                .map(drop)
                .map_err(|e| failed(&format!("appending to {key}"), &self.address, e))
        })
    }

    fn load<'a>(&'a self, key: &'a SessionKey) -> StoreFuture<'a, Option<Vec<Value>>> {
        Box::pin(async move {
            check_key(key)?;
            let mut conn = self.conn.clone();
            let lines: Vec<String> = redis::cmd("LRANGE")
                .arg(self.transcript_key(key))
                .arg(0)
                .arg(-1)
                .query_async(&mut conn)
                .await
                .map_err(|e| failed(&format!("reading {key}"), &self.address, e))?;
            if lines.is_empty() {
                return Ok(None);
            }
            lines
                .iter()
                .map(|l| serde_json::from_str(l))
                .collect::<Result<Vec<Value>, _>>()
                .map(Some)
                .map_err(|e| {
                    StoreError::new(format!("{key} holds an entry that is not JSON")).with_source(e)
                })
        })
    }

    fn list_sessions<'a>(&'a self, project_key: &'a str) -> StoreFuture<'a, Vec<StoredSession>> {
        Box::pin(async move {
            check_key(&SessionKey::new(project_key, "probe"))?;
            let mut conn = self.conn.clone();
            let listed: Vec<(String, f64)> = redis::cmd("ZRANGE")
                .arg(self.sessions_key(project_key))
                .arg(0)
                .arg(-1)
                .arg("WITHSCORES")
                .query_async(&mut conn)
                .await
                .map_err(|e| failed("listing sessions", &self.address, e))?;
            Ok(listed
                .into_iter()
                .map(|(id, ms)| StoredSession::new(id, ms as i64))
                .collect())
        })
    }

    fn list_subkeys<'a>(
        &'a self,
        project_key: &'a str,
        session_id: &'a str,
    ) -> StoreFuture<'a, Vec<String>> {
        Box::pin(async move {
            check_key(&SessionKey::new(project_key, session_id))?;
            let mut conn = self.conn.clone();
            let mut subs: Vec<String> = redis::cmd("SMEMBERS")
                .arg(self.subkeys_key(project_key, session_id))
                .query_async(&mut conn)
                .await
                .map_err(|e| failed("listing subagent transcripts", &self.address, e))?;
            subs.sort();
            Ok(subs)
        })
    }

    fn delete<'a>(&'a self, key: &'a SessionKey) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            check_key(key)?;
            let mut conn = self.conn.clone();
            let main = SessionKey::new(key.project_key.clone(), key.session_id.clone());
            self.delete
                .key(self.transcript_key(key))
                .key(self.sessions_key(&key.project_key))
                .key(self.subkeys_key(&key.project_key, &key.session_id))
                .arg(&key.session_id)
                .arg(key.subpath.as_deref().unwrap_or(""))
                .arg(format!("{}:", self.transcript_key(&main)))
                .invoke_async::<i64>(&mut conn)
                .await
                .map(drop)
                .map_err(|e| failed(&format!("deleting {key}"), &self.address, e))
        })
    }
}
