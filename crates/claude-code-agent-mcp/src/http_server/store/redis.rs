//! [`RedisEventStore`]: an [`EventStore`] in Redis (or Valkey), through the
//! `redis` crate's connection manager (one multiplexed connection that
//! reconnects on its own).
//!
//! Keys, all of one session under one hash tag (so they share a Redis
//! Cluster slot): `<prefix>{<session>}` the session's record,
//! `<prefix>{<session>}:<stream>:e` a stream's events (a list) and
//! `…:<stream>:h` the rest of it (a hash: `r` the request it answers, as
//! JSON; `n` the seq of its last event; `b` the bytes of the events kept;
//! `x` set once it ended). Every key
//! has a TTL; a batch of writes is one Lua script, so each write is atomic
//! and a batch costs one round trip. A task is `<prefix>task:{<id>}`, a
//! hash: `r` its record, `x` set once it is final; its TTL is set when it
//! is created, and an update (a Lua script: atomic) keeps it.

use std::time::Duration;

use axum::body::Bytes;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use serde_json::Value;

use super::{EventStore, StoreError, StoreFuture, StoredStream, StreamWrite};
use crate::server::{StoredTask, TaskStore};

/// Applies a batch: 2 keys per write (events, hash), and per write 3
/// arguments (kind, seq, payload) after the TTL (ms) and the caps (events,
/// bytes). A run of events to one stream is one `RPUSH` (what they cost is
/// mostly Redis commands: one run, seven of them, whatever its length),
/// then the oldest events go while the stream is over a cap (the newest
/// stays); the hash's `b` counts the bytes kept.
const WRITE: &str = r"
local ttl = tonumber(ARGV[1])
local cap = tonumber(ARGV[2])
local bytecap = tonumber(ARGV[3])
local n = #KEYS / 2
local out = {}
local i = 0
while i < n do
  local e, h = KEYS[2 * i + 1], KEYS[2 * i + 2]
  local kind, seq, payload = ARGV[3 * i + 4], tonumber(ARGV[3 * i + 5]), ARGV[3 * i + 6]
  local run = 1
  if kind == 'open' then
    redis.call('HSET', h, 'r', payload)
    redis.call('PEXPIRE', h, ttl)
    out[i + 1] = 1
  elseif kind == 'forget' then
    redis.call('DEL', e, h)
    out[i + 1] = 1
  elseif redis.call('HEXISTS', h, 'x') == 1 then
    out[i + 1] = 0
  elseif kind == 'end' then
    redis.call('HSET', h, 'x', '1')
    redis.call('PEXPIRE', e, ttl)
    redis.call('PEXPIRE', h, ttl)
    out[i + 1] = 1
  elseif kind == 'take' and tonumber(redis.call('HGET', h, 'n') or '0') >= seq then
    out[i + 1] = 0
  else
    local frames = {payload}
    local bytes = tonumber(redis.call('HGET', h, 'b') or '0') + #payload
    if kind == 'event' then
      while i + run < n and KEYS[2 * (i + run) + 1] == e and ARGV[3 * (i + run) + 4] == 'event' do
        frames[run + 1] = ARGV[3 * (i + run) + 6]
        bytes = bytes + #frames[run + 1]
        seq = tonumber(ARGV[3 * (i + run) + 5])
        run = run + 1
      end
    end
    local len = redis.call('RPUSH', e, unpack(frames))
    while len > 1 and (len > cap or bytes > bytecap) do
      bytes = bytes - #redis.call('LPOP', e)
      len = len - 1
    end
    redis.call('HSET', h, 'n', seq, 'b', bytes)
    if kind == 'take' then
      redis.call('HSET', h, 'x', '1')
    end
    redis.call('PEXPIRE', e, ttl)
    redis.call('PEXPIRE', h, ttl)
    for j = 1, run do
      out[i + j] = 1
    end
  end
  i = i + run
end
return out
";

/// A page of a stream (`read_page`): KEYS[1] its events, KEYS[2] its
/// hash; ARGV: after (a seq), the most events, the most bytes. Events are
/// kept in order of their seqs, each at least one more than the one before
/// (more where a write failed), so every event before index
/// `len - (n - after)` (`n` the last one's seq) is at or before `after`:
/// the first one after it is found from there, at once when no write
/// failed, else by bisection. Returns the request, the end mark, then the
/// page.
const READ_PAGE: &str = r"
local h = redis.call('HMGET', KEYS[2], 'r', 'x', 'n')
local len = redis.call('LLEN', KEYS[1])
local after, count, bytecap = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local function early(i)
  local seq = string.match(redis.call('LINDEX', KEYS[1], i), '^id: %d+%-(%d+)\n')
  return seq ~= nil and tonumber(seq) <= after
end
local lo, hi = math.max(0, len - (tonumber(h[3] or '0') - after)), len
if lo < hi and early(lo) then
  lo = lo + 1
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if early(mid) then
      lo = mid + 1
    else
      hi = mid
    end
  end
end
local out = {h[1] or false, h[2] or false}
local bytes = 0
for _, frame in ipairs(redis.call('LRANGE', KEYS[1], lo, lo + count - 1)) do
  bytes = bytes + #frame
  if #out > 2 and bytes > bytecap then
    break
  end
  out[#out + 1] = frame
end
return out
";

/// Replaces a task's record unless it is final (or gone): KEYS[1] the
/// task's hash, ARGV[1] the record, ARGV[2] `1` to make it final.
const UPDATE_TASK: &str = r"
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('HEXISTS', KEYS[1], 'x') == 1 then
  return 0
end
redis.call('HSET', KEYS[1], 'r', ARGV[1])
if ARGV[2] == '1' then
  redis.call('HSET', KEYS[1], 'x', '1')
end
return 1
";

/// An [`EventStore`] in Redis 6.2 or later (or Valkey). Cheap to clone
/// (clones share the connection).
///
/// What it keeps expires: a stream [`ttl`](Self::ttl) after its last write
/// (and at once when its client has read it to the end), a session after
/// the service's idle timeout. Give Redis a `maxmemory` with the
/// `volatile-ttl` policy as a last bound (docs/deployment.md).
///
/// Without Redis the service degrades, never hangs: each operation is
/// bounded by a timeout ([`with_timeout`](Self::with_timeout); and the service's
/// `store_timeout`); a request that needs the store then fails with 503 and
/// a JSON-RPC error naming it, and the connection is made again in the
/// background.
#[derive(Clone)]
pub struct RedisEventStore {
    conn: ConnectionManager,
    script: redis::Script,
    read_page: redis::Script,
    update_task: redis::Script,
    address: String,
    prefix: String,
    ttl: Duration,
    events_per_stream: usize,
    bytes_per_stream: usize,
}

impl std::fmt::Debug for RedisEventStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisEventStore")
            .field("address", &self.address)
            .field("prefix", &self.prefix)
            .field("ttl", &self.ttl)
            .field("events_per_stream", &self.events_per_stream)
            .field("bytes_per_stream", &self.bytes_per_stream)
            .finish_non_exhaustive()
    }
}

/// The error of a failed Redis operation: `what` failed at `address`
/// (without its password), Redis's error as the source.
pub fn failed(what: &str, address: &str, e: redis::RedisError) -> StoreError {
    StoreError::new(format!("Redis at {address}: {what} failed")).with_source(e)
}

/// The connection every Redis store of this workspace uses (the SDK's
/// session store too): one multiplexed connection to `url`, made on first
/// use and again in the background after a failure, each connection attempt
/// and each answer bounded by `timeout`; and the address without its
/// password, for messages.
pub fn connect(url: &str, timeout: Duration) -> Result<(ConnectionManager, String), StoreError> {
    let address = without_password(url);
    let client =
        redis::Client::open(url).map_err(|e| failed("parsing the address", &address, e))?;
    let config = ConnectionManagerConfig::new()
        .set_connection_timeout(Some(timeout))
        .set_response_timeout(Some(timeout))
        .set_number_of_retries(2)
        .set_max_delay(Duration::from_millis(500));
    let conn = ConnectionManager::new_lazy_with_config(client, config)
        .map_err(|e| failed("connecting", &address, e))?;
    Ok((conn, address))
}

/// `redis://user:secret@host/` without the secret, for messages and `Debug`.
fn without_password(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let userinfo = &url[scheme + 3..at];
            let user = userinfo.split(':').next().unwrap_or_default();
            format!("{}{user}:***{}", &url[..scheme + 3], &url[at..])
        }
        _ => url.to_owned(),
    }
}

impl RedisEventStore {
    /// A store at `url` (`redis://host:port/db`, `rediss://` for TLS is not
    /// built in). Connects on first use, so a service starts while Redis is
    /// still down. Call it inside a Tokio runtime.
    ///
    /// Defaults: keys prefixed `mcp:`, streams kept 5 minutes after their
    /// last write and at most 1,024 events and 1 MiB of them each, each
    /// operation bounded by 2 s.
    pub fn new(url: &str) -> Result<Self, StoreError> {
        Self::with_timeout(url, Duration::from_secs(2))
    }

    /// [`new`](Self::new), each operation (and each connection attempt)
    /// bounded by `timeout`.
    pub fn with_timeout(url: &str, timeout: Duration) -> Result<Self, StoreError> {
        let (conn, address) = connect(url, timeout)?;
        Ok(Self {
            conn,
            script: redis::Script::new(WRITE),
            read_page: redis::Script::new(READ_PAGE),
            update_task: redis::Script::new(UPDATE_TASK),
            address,
            prefix: "mcp:".into(),
            ttl: Duration::from_secs(300),
            events_per_stream: 1024,
            bytes_per_stream: super::memory::BYTES_PER_STREAM,
        })
    }

    /// The prefix of every key (default `mcp:`): services that must not
    /// see each other's sessions use different ones.
    pub fn key_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// How long a stream is kept after its last write (default 5 minutes;
    /// at least 1 ms).
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl.max(Duration::from_millis(1));
        self
    }

    /// How many events a stream keeps (default 1,024; the oldest go first).
    pub fn events_per_stream(mut self, events: usize) -> Self {
        self.events_per_stream = events.max(1);
        self
    }

    /// How many bytes of events (their SSE frames) a stream keeps (default
    /// 1 MiB): the oldest go first, the newest is kept whatever its size.
    pub fn bytes_per_stream(mut self, bytes: usize) -> Self {
        self.bytes_per_stream = bytes;
        self
    }

    fn session_key(&self, id: &str) -> String {
        format!("{}{{{id}}}", self.prefix)
    }

    fn task_key(&self, id: &str) -> String {
        format!("{}task:{{{id}}}", self.prefix)
    }

    fn stream_key(&self, session: &str, stream: u64, part: &str) -> String {
        format!("{}{{{session}}}:{stream}:{part}", self.prefix)
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

impl TaskStore for RedisEventStore {
    fn create_task<'a>(
        &'a self,
        id: &'a str,
        record: &'a [u8],
        ttl: Duration,
    ) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let key = self.task_key(id);
            redis::pipe()
                .atomic()
                .cmd("DEL")
                .arg(&key)
                .ignore()
                .cmd("HSET")
                .arg(&key)
                .arg("r")
                .arg(record)
                .ignore()
                .cmd("PEXPIRE")
                .arg(&key)
                .arg(millis(ttl))
                .ignore()
                .query_async::<()>(&mut conn)
                .await
                .map_err(|e| failed("creating a task", &self.address, e))
        })
    }

    fn load_task<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<StoredTask>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let (record, last): (Option<Vec<u8>>, Option<String>) = redis::cmd("HMGET")
                .arg(self.task_key(id))
                .arg("r")
                .arg("x")
                .query_async(&mut conn)
                .await
                .map_err(|e| failed("reading a task", &self.address, e))?;
            Ok(record.map(|record| StoredTask::new(record, last.is_some())))
        })
    }

    fn update_task<'a>(
        &'a self,
        id: &'a str,
        record: &'a [u8],
        last: bool,
    ) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let applied: i64 = self
                .update_task
                .key(self.task_key(id))
                .arg(record)
                .arg(if last { "1" } else { "0" })
                .invoke_async(&mut conn)
                .await
                .map_err(|e| failed("updating a task", &self.address, e))?;
            Ok(applied == 1)
        })
    }
}

impl EventStore for RedisEventStore {
    fn save_session<'a>(
        &'a self,
        id: &'a str,
        record: &'a [u8],
        ttl: Duration,
    ) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            redis::cmd("SET")
                .arg(self.session_key(id))
                .arg(record)
                .arg("PX")
                .arg(millis(ttl))
                .query_async::<()>(&mut conn)
                .await
                .map_err(|e| failed("saving a session", &self.address, e))
        })
    }

    fn load_session<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<Vec<u8>>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            redis::cmd("GET")
                .arg(self.session_key(id))
                .query_async::<Option<Vec<u8>>>(&mut conn)
                .await
                .map_err(|e| failed("loading a session", &self.address, e))
        })
    }

    fn touch_session<'a>(&'a self, id: &'a str, ttl: Duration) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            redis::cmd("PEXPIRE")
                .arg(self.session_key(id))
                .arg(millis(ttl))
                .query_async::<()>(&mut conn)
                .await
                .map_err(|e| failed("keeping a session", &self.address, e))
        })
    }

    fn remove_session<'a>(&'a self, id: &'a str) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            redis::cmd("DEL")
                .arg(self.session_key(id))
                .query_async::<()>(&mut conn)
                .await
                .map_err(|e| failed("removing a session", &self.address, e))
        })
    }

    fn write<'a>(
        &'a self,
        session: &'a str,
        writes: &'a [StreamWrite],
    ) -> StoreFuture<'a, Vec<bool>> {
        Box::pin(async move {
            if writes.is_empty() {
                return Ok(Vec::new());
            }
            let mut call = self.script.prepare_invoke();
            call.arg(millis(self.ttl))
                .arg(self.events_per_stream)
                .arg(self.bytes_per_stream);
            for write in writes {
                let (stream, kind, seq, payload): (u64, &str, u64, Bytes) = match write {
                    StreamWrite::Open { stream, request } => {
                        let request = request.as_ref().unwrap_or(&Value::Null).to_string();
                        (*stream, "open", 0, Bytes::from(request))
                    }
                    StreamWrite::Event { stream, seq, frame } => {
                        (*stream, "event", *seq, frame.clone())
                    }
                    StreamWrite::TakeOver { stream, seq, frame } => {
                        (*stream, "take", *seq, frame.clone())
                    }
                    StreamWrite::End { stream } => (*stream, "end", 0, Bytes::new()),
                    StreamWrite::Forget { stream } => (*stream, "forget", 0, Bytes::new()),
                };
                call.key(self.stream_key(session, stream, "e"))
                    .key(self.stream_key(session, stream, "h"));
                call.arg(kind).arg(seq).arg(payload.as_ref());
            }
            let mut conn = self.conn.clone();
            let applied: Vec<i64> = call
                .invoke_async(&mut conn)
                .await
                .map_err(|e| failed("writing SSE events", &self.address, e))?;
            Ok(applied.into_iter().map(|n| n == 1).collect())
        })
    }

    fn read_page<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        after: u64,
        max_events: usize,
        max_bytes: usize,
    ) -> StoreFuture<'a, Option<StoredStream>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let mut got: Vec<Option<Vec<u8>>> = self
                .read_page
                .key(self.stream_key(session, stream, "e"))
                .key(self.stream_key(session, stream, "h"))
                .arg(after)
                .arg(max_events.max(1))
                .arg(max_bytes)
                .invoke_async(&mut conn)
                .await
                .map_err(|e| failed("reading an SSE stream", &self.address, e))?;
            let frames = got.split_off(2.min(got.len()));
            let mut fields = got.into_iter();
            let (request, ended) = (fields.next().flatten(), fields.next().flatten());
            if frames.is_empty() && request.is_none() && ended.is_none() {
                return Ok(None);
            }
            let events = frames
                .into_iter()
                .flatten()
                .filter_map(|frame| Some((frame_seq(&frame)?, Bytes::from(frame))))
                .filter(|(n, _)| *n > after)
                .collect();
            Ok(Some(StoredStream {
                request: parse_request(request.as_deref()),
                events,
                ended: ended.is_some(),
            }))
        })
    }

    fn read<'a>(&'a self, session: &'a str, stream: u64) -> StoreFuture<'a, Option<StoredStream>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            type Fields = (Option<String>, Option<String>);
            let (events, (request, ended)): (Vec<Vec<u8>>, Fields) = redis::pipe()
                .cmd("LRANGE")
                .arg(self.stream_key(session, stream, "e"))
                .arg(0)
                .arg(-1)
                .cmd("HMGET")
                .arg(self.stream_key(session, stream, "h"))
                .arg("r")
                .arg("x")
                .query_async(&mut conn)
                .await
                .map_err(|e| failed("reading an SSE stream", &self.address, e))?;
            if events.is_empty() && request.is_none() && ended.is_none() {
                return Ok(None);
            }
            let request = parse_request(request.as_deref().map(str::as_bytes));
            let events = events
                .into_iter()
                .filter_map(|frame| Some((frame_seq(&frame)?, Bytes::from(frame))))
                .collect();
            Ok(Some(StoredStream {
                request,
                events,
                ended: ended.is_some(),
            }))
        })
    }
}

/// The request a stream's hash keeps (JSON; `null` for a GET stream).
fn parse_request(kept: Option<&[u8]>) -> Option<Value> {
    kept.and_then(|r| serde_json::from_slice::<Value>(r).ok())
        .filter(|r| !r.is_null())
}

/// The seq of an SSE event written by this crate (`id: <stream>-<seq>`).
fn frame_seq(frame: &[u8]) -> Option<u64> {
    let line = frame.strip_prefix(b"id: ")?;
    let end = line.iter().position(|b| *b == b'\n')?;
    let id = std::str::from_utf8(&line[..end]).ok()?;
    id.rsplit_once('-')?.1.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_s_seq_is_read_from_its_id() {
        assert_eq!(
            frame_seq(b"id: 12-7\nevent: message\ndata: {}\n\n"),
            Some(7)
        );
        assert_eq!(frame_seq(b"data: {}\n\n"), None);
    }

    #[test]
    fn a_password_never_shows() {
        assert_eq!(
            without_password("redis://app:s3cret@db:6379/0"),
            "redis://app:***@db:6379/0"
        );
        assert_eq!(
            without_password("redis://127.0.0.1:6379"),
            "redis://127.0.0.1:6379"
        );
    }
}
