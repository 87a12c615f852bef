//! `RedisEventStore` through Redis Sentinel: real `redis-server`s (a
//! primary, its replica) and a real sentinel watching them, from
//! `scripts/install-services`. The store keeps the contract through the
//! primary the sentinel names, and follows a failover: after a `kill -9`
//! of the primary, the same store reads what the replica had, and writes,
//! at the replica the sentinel promoted.

use std::process::Stdio;
use std::time::{Duration, Instant};

use claude_code_agent_mcp::__private::redis::{self, AsyncTypedCommands};
use claude_code_agent_mcp::http_server::{EventStore, RedisEventStore, StreamWrite};
use futures::StreamExt;
use serde_json::json;
use tokio::process::Command;

use crate::replicas::event;
use crate::scale_out::{Proc, Services, wait_for_port};
use crate::support::peers::free_port;

const SERVICE: &str = "store";

/// A primary, one replica in sync with it, and one sentinel (quorum 1) that
/// knows both and holds the primary down after `down_after` without an
/// answer.
struct Group {
    services: Services,
    primary: (u16, Option<Proc>),
    replica: (u16, Proc),
    sentinel: (u16, Proc),
}

impl Group {
    async fn start(test: &str, down_after: Duration) -> Option<Self> {
        let services = Services::find(test)?;
        let (p, r, s) = (free_port(), free_port(), free_port());
        let primary = server(&services, p, &[]).await;
        let replica = server(&services, r, &["--replicaof", "127.0.0.1", &p.to_string()]).await;
        // In sync: WAIT returns once the replica has acknowledged the write.
        let mut conn = connection(p).await;
        conn.set("synced", 1).await.unwrap();
        assert_eq!(wait(&mut conn).await, 1, "the replica is in sync");
        conn.del("synced").await.unwrap();

        let config = services.scratch().join(format!("sentinel-{s}.conf"));
        let text = format!(
            "port {s}\nbind 127.0.0.1\ndir {dir}\n\
             sentinel monitor {SERVICE} 127.0.0.1 {p} 1\n\
             sentinel down-after-milliseconds {SERVICE} {down_after}\n",
            dir = services.scratch().display(),
            down_after = down_after.as_millis(),
        );
        std::fs::write(&config, text).unwrap();
        let sentinel = Proc::spawn(
            Command::new(&services.redis)
                .arg(&config)
                .arg("--sentinel")
                .stdout(Stdio::null()),
        );
        wait_for_port(s, "the sentinel").await;
        // The sentinel knows the replica (the primary tells it at once):
        // without it, a failover has no one to promote.
        let mut discovered = pubsub(s, "+slave").await;
        let mut asking = connection(s).await;
        let mut replicas = async || -> usize {
            let replicas: Vec<redis::Value> = redis::cmd("SENTINEL")
                .arg("REPLICAS")
                .arg(SERVICE)
                .query_async(&mut asking)
                .await
                .unwrap();
            replicas.len()
        };
        if replicas().await == 0 {
            within(Duration::from_secs(5), discovered.next()).await;
        }
        assert_eq!(replicas().await, 1, "the sentinel knows the replica");
        Some(Self {
            services,
            primary: (p, Some(primary)),
            replica: (r, replica),
            sentinel: (s, sentinel),
        })
    }

    fn sentinels(&self) -> String {
        format!("redis://127.0.0.1:{}", self.sentinel.0)
    }
}

/// A `redis-server` on `port` with `args`, which sends a replica its data
/// at once (not after the default 5 s wait for more replicas), its files
/// (a replica's copy of the data) in the test's folder.
async fn server(services: &Services, port: u16, args: &[&str]) -> Proc {
    let server = Proc::spawn(
        Command::new(&services.redis)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(services.scratch())
            .args(["--repl-diskless-sync-delay", "0"])
            .args(args)
            .stdout(Stdio::null()),
    );
    wait_for_port(port, "redis-server").await;
    server
}

/// A connection to `port` that waits up to 10 s for an answer.
async fn connection(port: u16) -> redis::aio::MultiplexedConnection {
    let config =
        redis::AsyncConnectionConfig::new().set_response_timeout(Some(Duration::from_secs(10)));
    redis::Client::open(format!("redis://127.0.0.1:{port}"))
        .unwrap()
        .get_multiplexed_async_connection_with_config(&config)
        .await
        .unwrap()
}

/// `WAIT 1 5000` on `conn`: how many replicas acknowledged its writes.
async fn wait(conn: &mut redis::aio::MultiplexedConnection) -> i64 {
    redis::cmd("WAIT")
        .arg(1)
        .arg(5000)
        .query_async(conn)
        .await
        .unwrap()
}

/// The messages of the sentinel at `port` on `channel`, from now on.
async fn pubsub(port: u16, channel: &str) -> impl futures::Stream<Item = redis::Msg> + Unpin {
    let mut pubsub = redis::Client::open(format!("redis://127.0.0.1:{port}"))
        .unwrap()
        .get_async_pubsub()
        .await
        .unwrap();
    pubsub.subscribe(channel).await.unwrap();
    pubsub.into_on_message()
}

async fn within<T>(limit: Duration, f: impl Future<Output = T>) -> T {
    tokio::time::timeout(limit, f)
        .await
        .unwrap_or_else(|_| panic!("not within {limit:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_sentinel_the_redis_store_keeps_the_contract() {
    let test = "through_sentinel_the_redis_store_keeps_the_contract";
    let Some(group) = Group::start(test, Duration::from_secs(10)).await else {
        return;
    };
    let ttl = Duration::from_millis(100);
    let store = RedisEventStore::sentinel(&[&group.sentinels()], SERVICE)
        .unwrap()
        .events_per_stream(2)
        .bytes_per_stream(crate::replicas::CONTRACT_BYTES)
        .ttl(ttl);
    crate::replicas::the_store_contract_holds(&store, ttl).await;
    let keys = group.services.redis_cli(group.primary.0, &["--scan"]);
    assert_eq!(keys, "", "everything expired");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_sentinel_the_redis_store_follows_a_failover_keeping_what_the_replica_had() {
    let test = "through_sentinel_the_redis_store_follows_a_failover_keeping_what_the_replica_had";
    // Short, but not so short that a loaded machine's pause makes the
    // sentinel hold a living primary down.
    let Some(mut group) = Group::start(test, Duration::from_millis(500)).await else {
        return;
    };
    let (p, r, sentinels) = (group.primary.0, group.replica.0, group.sentinels());
    let store =
        RedisEventStore::sentinel_with_timeout(&[&sentinels], SERVICE, Duration::from_secs(1))
            .unwrap();
    let s = "failover";
    store
        .save_session(s, b"record", Duration::from_secs(60))
        .await
        .unwrap();
    let open = StreamWrite::Open {
        stream: 1,
        request: Some(json!(1)),
    };
    let done = store.write(s, &[open, event(1, 1), event(1, 2)]).await;
    assert_eq!(done.unwrap(), [true; 3]);
    // The store does not WAIT: the test does, for a write of its own after
    // the store's, so the replica has those too (replication is in order).
    let mut primary = connection(p).await;
    primary.set("marker", 1).await.unwrap();
    assert_eq!(wait(&mut primary).await, 1, "the replica has it all");

    let mut switched = pubsub(group.sentinel.0, "+switch-master").await;
    let killed = Instant::now();
    group.primary.1.take().unwrap().kill().await;
    // The operation that meets the dead primary fails, naming it; the next
    // ones, until the sentinel has promoted the replica, name the sentinel
    // and the service.
    let e = store.load_session(s).await.unwrap_err().to_string();
    assert!(
        e.contains(&format!(
            "127.0.0.1:{p}, the primary of \"{SERVICE}\" (Sentinel {sentinels})"
        )),
        "{e}"
    );
    let e = store.load_session(s).await.unwrap_err().to_string();
    assert_eq!(
        e,
        format!(
            "Redis Sentinel: finding the primary of \"{SERVICE}\" (Sentinel {sentinels}) failed"
        )
    );
    let switch = within(Duration::from_secs(10), switched.next())
        .await
        .unwrap();
    let switch: String = switch.get_payload().unwrap();
    assert_eq!(switch, format!("{SERVICE} 127.0.0.1 {p} 127.0.0.1 {r}"));
    let promoted = killed.elapsed();

    // The same store, at the promoted replica: what it had, and new writes.
    let record = store.load_session(s).await.unwrap();
    assert_eq!(record.as_deref(), Some(&b"record"[..]));
    let done = store.write(s, &[event(1, 3)]).await.unwrap();
    assert_eq!(done, [true]);
    let kept = store.read(s, 1).await.unwrap().unwrap();
    assert_eq!(kept.request, Some(json!(1)));
    let seqs: Vec<u64> = kept.events.iter().map(|(n, _)| *n).collect();
    assert_eq!(seqs, [1, 2, 3]);
    let role = group.services.redis_cli(r, &["role"]);
    assert!(role.starts_with("master"), "{role}");
    eprintln!(
        "failover: the sentinel switched {promoted:?} after the kill, the store wrote at the new primary {:?} after it",
        killed.elapsed()
    );
}
