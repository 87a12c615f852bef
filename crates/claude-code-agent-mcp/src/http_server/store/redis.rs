//! [`RedisEventStore`]: an [`EventStore`] in Redis (or Valkey), through the
//! `redis` crate's connection manager (one multiplexed connection that
//! reconnects on its own), to one address or to the primary that Redis
//! Sentinel names (asked again when that primary fails or turns replica).
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

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::sentinel::{Sentinel, SentinelNodeConnectionInfo};
use redis::{IntoConnectionInfo, RedisError, RedisResult};
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
///
/// For high availability, [`sentinel`](Self::sentinel) finds the primary
/// through Redis Sentinel and follows it through a failover.
#[derive(Clone)]
pub struct RedisEventStore {
    link: Link,
    script: redis::Script,
    read_page: redis::Script,
    update_task: redis::Script,
    prefix: String,
    ttl: Duration,
    events_per_stream: usize,
    bytes_per_stream: usize,
}

impl std::fmt::Debug for RedisEventStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisEventStore")
            .field("address", &self.link.address())
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
    let conn = ConnectionManager::new_lazy_with_config(client, manager_config(timeout))
        .map_err(|e| failed("connecting", &address, e))?;
    Ok((conn, address))
}

/// The connection manager's settings: each connection attempt and each
/// answer bounded by `timeout`, two quick retries of a connection.
fn manager_config(timeout: Duration) -> ConnectionManagerConfig {
    ConnectionManagerConfig::new()
        .set_connection_timeout(Some(timeout))
        .set_response_timeout(Some(timeout))
        .set_number_of_retries(2)
        .set_max_delay(Duration::from_millis(500))
}

/// Where the store's commands go.
#[derive(Clone)]
enum Link {
    /// The one address it was given.
    Fixed {
        conn: ConnectionManager,
        address: Arc<str>,
    },
    /// The primary Redis Sentinel names.
    Sentinel(Arc<ViaSentinel>),
}

/// The connection one operation uses, what names it in errors, and which
/// primary it is to (0 for a fixed address; through Sentinel, the round of
/// asking that named it).
#[derive(Clone)]
struct Conn {
    conn: ConnectionManager,
    address: Arc<str>,
    primary: u64,
}

impl Link {
    fn address(&self) -> String {
        match self {
            Self::Fixed { address, .. } => address.to_string(),
            Self::Sentinel(sentinel) => sentinel.address.to_string(),
        }
    }

    async fn get(&self) -> Result<Conn, StoreError> {
        match self {
            Self::Fixed { conn, address } => Ok(Conn {
                conn: conn.clone(),
                address: address.clone(),
                primary: 0,
            }),
            Self::Sentinel(sentinel) => sentinel.get().await,
        }
    }

    /// The outcome of `what` through `conn`. Through Sentinel, an error that
    /// says the primary is gone or is one no more makes the next operation
    /// ask the sentinels again.
    fn done<T>(&self, conn: &Conn, what: &str, result: RedisResult<T>) -> Result<T, StoreError> {
        result.map_err(|e| {
            if let Self::Sentinel(sentinel) = self
                && primary_lost(&e)
            {
                sentinel.forget(conn.primary);
            }
            failed(what, &conn.address, e)
        })
    }
}

/// Whether `e` says the connection is not to a primary any more: it broke,
/// timed out or was refused (the primary died, or Sentinel closed its
/// clients when it made it a replica), or the server refuses writes
/// (`READONLY`: a replica now), in a transaction or a script too.
fn primary_lost(e: &RedisError) -> bool {
    use redis::{ErrorKind, ServerErrorKind};
    let readonly = |e: &redis::ServerError| e.kind() == Some(ServerErrorKind::ReadOnly);
    e.is_io_error()
        || e.is_unrecoverable_error()
        || e.kind() == ErrorKind::Server(ServerErrorKind::ReadOnly)
        || e.clone()
            .into_server_errors()
            .is_some_and(|errors| errors.iter().any(|(_, e)| readonly(e)))
}

/// The primary of a service, as Redis Sentinel names it: asked on first
/// use, and again after an operation found it gone.
struct ViaSentinel {
    /// The sentinels' addresses, as given.
    sentinels: Vec<String>,
    service: String,
    /// How to reach the primary: its user, password and database.
    node: SentinelNodeConnectionInfo,
    timeout: Duration,
    /// The sentinels and the service, without passwords, for messages.
    address: Arc<str>,
    /// The primary last named, while it is one.
    current: Mutex<Option<Conn>>,
    /// Rounds of asking done.
    asked: AtomicU64,
    /// Held while the sentinels are asked, so that one operation asks and
    /// those that waited take its answer; the last round's failure.
    asking: tokio::sync::Mutex<Option<RedisError>>,
}

impl ViaSentinel {
    fn current(&self) -> Option<Conn> {
        let current = self.current.lock().unwrap_or_else(|e| e.into_inner());
        current.clone()
    }

    async fn get(&self) -> Result<Conn, StoreError> {
        if let Some(conn) = self.current() {
            return Ok(conn);
        }
        let before = self.asked.load(Ordering::Acquire);
        let mut failure = self.asking.lock().await;
        if let Some(conn) = self.current() {
            return Ok(conn);
        }
        // A round failed while this one waited: its answer is this one's
        // too, rather than one more round of up to the timeout.
        let round = self.asked.load(Ordering::Acquire);
        if round != before
            && let Some(e) = failure.clone()
        {
            return Err(self.not_found(e));
        }
        let asked = tokio::time::timeout(self.timeout, self.ask(round)).await;
        self.asked.store(round + 1, Ordering::Release);
        let found = asked.unwrap_or_else(|_| {
            let why = format!("no primary named within {:?}", self.timeout);
            Err(std::io::Error::new(std::io::ErrorKind::TimedOut, why).into())
        });
        match found {
            Ok(conn) => {
                *failure = None;
                *self.current.lock().unwrap_or_else(|e| e.into_inner()) = Some(conn.clone());
                Ok(conn)
            }
            Err(e) => {
                *failure = Some(e.clone());
                Err(self.not_found(e))
            }
        }
    }

    /// Round `round` (from 0) of asking the sentinels which node is the
    /// primary: it checks that the node says so (`ROLE`), and connects to
    /// it. Each round starts one further down the list, so that a sentinel
    /// that hangs is not always the first asked.
    async fn ask(&self, round: u64) -> RedisResult<Conn> {
        let mut sentinels = self.sentinels.clone();
        let turn = usize::try_from(round).unwrap_or_default() % sentinels.len();
        sentinels.rotate_left(turn);
        let mut sentinel = Sentinel::build(sentinels)?;
        let client = sentinel
            .async_master_for(&self.service, Some(&self.node))
            .await?;
        let at = client.get_connection_info().addr().to_string();
        let conn = ConnectionManager::new_with_config(client, manager_config(self.timeout)).await?;
        Ok(Conn {
            conn,
            address: format!("{at}, the primary of {}", self.address).into(),
            primary: round + 1,
        })
    }

    /// After an operation on primary `primary` found it gone: the next asks
    /// the sentinels again (unless one already did).
    fn forget(&self, primary: u64) {
        let mut current = self.current.lock().unwrap_or_else(|e| e.into_inner());
        if current.as_ref().is_some_and(|c| c.primary == primary) {
            *current = None;
        }
    }

    fn not_found(&self, e: RedisError) -> StoreError {
        StoreError::new(format!(
            "Redis Sentinel: finding the primary of {} failed",
            self.address
        ))
        .with_source(e)
    }
}

/// The service name of [`RedisEventStore::sentinel`]'s `service`, and the
/// login and database for its primary: a bare name, or
/// `redis://user:password@name/db`.
fn service_and_login(service: &str) -> Result<(String, SentinelNodeConnectionInfo), StoreError> {
    let node = SentinelNodeConnectionInfo::default();
    if !service.contains("://") {
        return Ok((service.to_owned(), node));
    }
    let bad = |why: &str| {
        StoreError::new(format!(
            "Redis Sentinel: the service {} {why}",
            without_password(service)
        ))
    };
    if !service.starts_with("redis://") {
        return Err(bad("is not a name nor redis://user:password@name/db"));
    }
    let info = service
        .into_connection_info()
        .map_err(|e| bad("is not a name nor redis://user:password@name/db").with_source(e))?;
    match info.addr() {
        redis::ConnectionAddr::Tcp(name, _) if !name.is_empty() => Ok((
            name.clone(),
            node.set_redis_connection_info(info.redis_settings().clone()),
        )),
        _ => Err(bad("names no service")),
    }
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
        Ok(Self::over(Link::Fixed {
            conn,
            address: address.into(),
        }))
    }

    /// A store in the primary that Redis Sentinel names for `service`,
    /// asking the sentinels at `sentinels` (`redis://host:26379`, with
    /// `user:password@` if they want one). `service` is the name the
    /// sentinels monitor the primary by (`mymaster`), or
    /// `redis://user:password@mymaster/db` to log in to the primary (and
    /// its successors) and pick a database. Defaults as [`new`](Self::new);
    /// it asks on first use, so a service starts while Redis is down.
    ///
    /// Failover: an operation that finds the primary gone (the connection
    /// breaks, times out or is refused) or demoted (`READONLY`) fails, like
    /// any failed operation; the next one asks the sentinels again, one at
    /// a time (those waiting take that answer), and goes to the primary
    /// they name, once `ROLE` there confirms it. Until the sentinels have
    /// promoted a replica (their `down-after-milliseconds`, then the
    /// failover) operations fail, each within the timeout, with an error
    /// naming the sentinels and the service. Nothing is retried: a write
    /// that failed may or may not have been applied, as with one Redis.
    ///
    /// Redis replicates asynchronously and the store does not `WAIT` for
    /// replicas: a write the old primary acknowledged but had not yet sent
    /// to the replica that is promoted is lost (docs/deployment.md, "Redis
    /// Sentinel").
    pub fn sentinel(sentinels: &[&str], service: &str) -> Result<Self, StoreError> {
        Self::sentinel_with_timeout(sentinels, service, Duration::from_secs(2))
    }

    /// [`sentinel`](Self::sentinel), each operation, each connection
    /// attempt and each round of asking the sentinels bounded by `timeout`.
    pub fn sentinel_with_timeout(
        sentinels: &[&str],
        service: &str,
        timeout: Duration,
    ) -> Result<Self, StoreError> {
        let shown: Vec<String> = sentinels.iter().map(|s| without_password(s)).collect();
        let (name, node) = service_and_login(service)?;
        let address = format!("{name:?} (Sentinel {})", shown.join(", "));
        let bad = |e: RedisError| {
            StoreError::new(format!(
                "Redis Sentinel: the sentinels of {address} are unusable"
            ))
            .with_source(e)
        };
        // Parses them: a bad address fails here, not on first use.
        Sentinel::build(sentinels.to_vec()).map_err(bad)?;
        Ok(Self::over(Link::Sentinel(Arc::new(ViaSentinel {
            sentinels: sentinels.iter().map(|s| (*s).to_owned()).collect(),
            service: name,
            node,
            timeout,
            address: address.into(),
            current: Mutex::new(None),
            asked: AtomicU64::new(0),
            asking: tokio::sync::Mutex::new(None),
        }))))
    }

    fn over(link: Link) -> Self {
        Self {
            link,
            script: redis::Script::new(WRITE),
            read_page: redis::Script::new(READ_PAGE),
            update_task: redis::Script::new(UPDATE_TASK),
            prefix: "mcp:".into(),
            ttl: Duration::from_secs(300),
            events_per_stream: 1024,
            bytes_per_stream: super::memory::BYTES_PER_STREAM,
        }
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
            let mut c = self.link.get().await?;
            let key = self.task_key(id);
            let r = redis::pipe()
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
                .query_async::<()>(&mut c.conn)
                .await;
            self.link.done(&c, "creating a task", r)
        })
    }

    fn load_task<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<StoredTask>> {
        Box::pin(async move {
            let mut c = self.link.get().await?;
            let r = redis::cmd("HMGET")
                .arg(self.task_key(id))
                .arg("r")
                .arg("x")
                .query_async(&mut c.conn)
                .await;
            let (record, last): (Option<Vec<u8>>, Option<String>) =
                self.link.done(&c, "reading a task", r)?;
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
            let mut c = self.link.get().await?;
            let r = self
                .update_task
                .key(self.task_key(id))
                .arg(record)
                .arg(if last { "1" } else { "0" })
                .invoke_async(&mut c.conn)
                .await;
            let applied: i64 = self.link.done(&c, "updating a task", r)?;
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
            let mut c = self.link.get().await?;
            let r = redis::cmd("SET")
                .arg(self.session_key(id))
                .arg(record)
                .arg("PX")
                .arg(millis(ttl))
                .query_async::<()>(&mut c.conn)
                .await;
            self.link.done(&c, "saving a session", r)
        })
    }

    fn load_session<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<Vec<u8>>> {
        Box::pin(async move {
            let mut c = self.link.get().await?;
            let r = redis::cmd("GET")
                .arg(self.session_key(id))
                .query_async::<Option<Vec<u8>>>(&mut c.conn)
                .await;
            self.link.done(&c, "loading a session", r)
        })
    }

    fn touch_session<'a>(&'a self, id: &'a str, ttl: Duration) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let mut c = self.link.get().await?;
            let r = redis::cmd("PEXPIRE")
                .arg(self.session_key(id))
                .arg(millis(ttl))
                .query_async::<()>(&mut c.conn)
                .await;
            self.link.done(&c, "keeping a session", r)
        })
    }

    fn remove_session<'a>(&'a self, id: &'a str) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let mut c = self.link.get().await?;
            let r = redis::cmd("DEL")
                .arg(self.session_key(id))
                .query_async::<()>(&mut c.conn)
                .await;
            self.link.done(&c, "removing a session", r)
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
            let mut c = self.link.get().await?;
            let r = call.invoke_async(&mut c.conn).await;
            let applied: Vec<i64> = self.link.done(&c, "writing SSE events", r)?;
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
            let mut c = self.link.get().await?;
            let r = self
                .read_page
                .key(self.stream_key(session, stream, "e"))
                .key(self.stream_key(session, stream, "h"))
                .arg(after)
                .arg(max_events.max(1))
                .arg(max_bytes)
                .invoke_async(&mut c.conn)
                .await;
            let mut got: Vec<Option<Vec<u8>>> = self.link.done(&c, "reading an SSE stream", r)?;
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
            let mut c = self.link.get().await?;
            type Fields = (Option<String>, Option<String>);
            let r = redis::pipe()
                .cmd("LRANGE")
                .arg(self.stream_key(session, stream, "e"))
                .arg(0)
                .arg(-1)
                .cmd("HMGET")
                .arg(self.stream_key(session, stream, "h"))
                .arg("r")
                .arg("x")
                .query_async(&mut c.conn)
                .await;
            let (events, (request, ended)): (Vec<Vec<u8>>, Fields) =
                self.link.done(&c, "reading an SSE stream", r)?;
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
    fn a_sentinel_service_is_a_name_or_a_url_with_the_primary_s_login() {
        let (name, node) = service_and_login("mymaster").unwrap();
        assert_eq!(name, "mymaster");
        assert!(format!("{node:?}").contains("redis_connection_info: None"));
        let (name, node) = service_and_login("redis://app:s3cret@mymaster/2").unwrap();
        assert_eq!(name, "mymaster");
        let node = format!("{node:?}");
        assert!(node.contains("db: 2") && node.contains("app"), "{node}");
        for bad in ["rediss://mymaster", "redis://", "unix:///tmp/r.sock"] {
            let e = service_and_login(bad).unwrap_err().to_string();
            assert!(e.starts_with("Redis Sentinel: the service"), "{bad}: {e}");
        }
    }

    #[test]
    fn sentinels_are_checked_when_the_store_is_made_and_their_passwords_never_show() {
        let e = RedisEventStore::sentinel(&[], "mymaster").unwrap_err();
        assert!(e.to_string().contains("unusable"), "{e}");
        let e = RedisEventStore::sentinel(&["redis://:s3cret@host:26379", "nonsense"], "m");
        let e = e.unwrap_err().to_string();
        assert!(
            e.contains("redis://:***@host:26379") && !e.contains("s3cret"),
            "{e}"
        );
        let store = RedisEventStore::sentinel(&["redis://:s3cret@host:26379"], "m").unwrap();
        let shown = format!("{store:?}");
        assert!(
            shown.contains(r#""\"m\" (Sentinel redis://:***@host:26379)""#),
            "{shown}"
        );
    }

    /// Redis's answer `resp` (one RESP value) as the error it is.
    fn answer(resp: &str) -> RedisError {
        let value = redis::parse_redis_value(resp.as_bytes()).unwrap();
        value.extract_error().unwrap_err()
    }

    #[test]
    fn a_dead_or_demoted_primary_is_told_from_other_errors() {
        // What Redis 7 answers a write at a replica: a command, a script.
        assert!(primary_lost(&answer(
            "-READONLY You can't write against a read only replica.\r\n"
        )));
        assert!(primary_lost(&answer(
            "-READONLY You can't write against a read only replica. script: 82cd, on @user_script:1.\r\n"
        )));
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        assert!(primary_lost(&refused.into()));
        let timed_out = std::io::Error::from(std::io::ErrorKind::TimedOut);
        assert!(primary_lost(&timed_out.into()));
        // Errors of the command itself, or of a primary refusing writes
        // without replicas (`min-replicas-to-write`), keep the primary.
        assert!(!primary_lost(&answer("-ERR wrong number of arguments\r\n")));
        assert!(!primary_lost(&answer(
            "-NOREPLICAS Not enough good replicas to write.\r\n"
        )));
        assert!(!primary_lost(&answer("-NOSCRIPT No matching script.\r\n")));
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
