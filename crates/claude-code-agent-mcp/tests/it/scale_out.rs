//! Replicas behind a real load balancer: HAProxy (and nginx) from the
//! distribution, running the configurations of `docs/deploy/`, in front of
//! three `replica` processes (devtools) that share sessions and SSE events
//! through a real `redis-server`. Faults are real too: `kill -9` of a
//! replica with calls in flight, and of Redis.
//!
//! What must hold: the stateless revision is balanced round-robin with no
//! affinity; sessions stick to a replica; when it dies, every call on it
//! either completes exactly once, with each of its progress events once and
//! in order, or fails with an error saying it may be retried, and the
//! session carries on at another replica; the replica, restarted, takes new
//! sessions; what Redis keeps expires and stays small; without Redis,
//! requests that need it fail at once with a 503 naming it, and work again
//! once it is back. Tasks (the Tasks extension) started through the
//! balancer are followed, fetched and cancelled through any replica, and
//! the tasks of a killed replica are reported failed, none lost.
//!
//! `scripts/install-services` installs haproxy, nginx and redis-server
//! (Debian's packages); without them these tests are skipped, loudly,
//! unless `CI` or `CLAUDE_AGENT_PEERS_DIR` is set.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use claude_code_agent_mcp::client::{
    ClientOptions, HandshakeMode, HttpOptions, HttpTransport, McpClient, RequestOptions,
    ServerNotification,
};
use claude_code_agent_mcp::http_server::RedisEventStore;
use claude_code_agent_mcp::types::{Task, TaskStatus, ToolCallOutcome};
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::support::peers::{devtool, free_port};

/// `name` (haproxy, nginx, redis-server, redis-cli) from the system, or
/// `None` after a loud SKIPPED when it is missing and the tests need not run.
fn program(name: &str, test: &str) -> Option<PathBuf> {
    for dir in ["/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"] {
        let path = Path::new(dir).join(name);
        if path.exists() {
            return Some(path);
        }
    }
    let why = format!("{test}: {name} is not installed (run scripts/install-services)");
    if std::env::var_os("CI").is_some() || std::env::var_os("CLAUDE_AGENT_PEERS_DIR").is_some() {
        panic!("{why}");
    }
    eprintln!("\n!!!!!!!! SKIPPED: {why} !!!!!!!!\n");
    None
}

pub(crate) async fn wait_for_port(port: u16, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(Instant::now() < deadline, "{what} did not listen on {port}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A process of the test, killed (SIGKILL) when dropped.
pub(crate) struct Proc(Child);

impl Proc {
    pub(crate) fn spawn(cmd: &mut Command) -> Self {
        Self(
            cmd.stdin(Stdio::null())
                .kill_on_drop(true)
                .spawn()
                .expect("spawn"),
        )
    }

    /// `kill -9`, and waits for it to be gone.
    pub(crate) async fn kill(mut self) {
        self.0.kill().await.unwrap();
    }

    /// SIGTERM, then waits for it to exit (at most `within`, then
    /// `kill -9`): whether it exited on its own, and when.
    pub(crate) async fn terminate(mut self, within: Duration) -> (bool, Duration) {
        let pid = self.0.id().expect("running") as i32;
        let asked = Instant::now();
        // SAFETY: signals the child this test started and has not reaped.
        unsafe { libc::kill(pid, libc::SIGTERM) };
        match tokio::time::timeout(within, self.0.wait()).await {
            Ok(status) => (status.unwrap().success(), asked.elapsed()),
            Err(_) => {
                self.0.kill().await.unwrap();
                (false, asked.elapsed())
            }
        }
    }
}

pub(crate) struct Services {
    haproxy: PathBuf,
    nginx: PathBuf,
    pub(crate) redis: PathBuf,
    redis_cli: PathBuf,
    dir: Scratch,
}

/// A folder of the test's own, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Self {
        let dir =
            std::env::temp_dir().join(format!("scale-out-{}-{}", std::process::id(), free_port()));
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Services {
    pub(crate) fn find(test: &str) -> Option<Self> {
        Some(Self {
            haproxy: program("haproxy", test)?,
            nginx: program("nginx", test)?,
            redis: program("redis-server", test)?,
            redis_cli: program("redis-cli", test)?,
            dir: Scratch::new(),
        })
    }

    /// A folder of the test's own, removed with `self`.
    pub(crate) fn scratch(&self) -> &Path {
        self.dir.path()
    }

    pub(crate) async fn redis(&self, port: u16) -> Proc {
        let p = Proc::spawn(
            Command::new(&self.redis)
                .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
                .args(["--save", "", "--appendonly", "no"])
                .stdout(Stdio::null()),
        );
        wait_for_port(port, "redis-server").await;
        p
    }

    /// `redis-cli -p port args…`'s output.
    pub(crate) fn redis_cli(&self, port: u16, args: &[&str]) -> String {
        let out = std::process::Command::new(&self.redis_cli)
            .args(["-p", &port.to_string()])
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// The configuration `file` of docs/deploy with its ports replaced:
    /// 8080 by `front`, 8081… by `backs`.
    fn config(&self, file: &str, front: u16, backs: &[u16]) -> PathBuf {
        let source = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../docs/deploy")
            .join(file);
        let mut text = std::fs::read_to_string(&source).unwrap();
        text = text.replace("127.0.0.1:8080", &format!("127.0.0.1:{front}"));
        for (i, port) in backs.iter().enumerate() {
            text = text.replace(
                &format!("127.0.0.1:808{}", i + 1),
                &format!("127.0.0.1:{port}"),
            );
        }
        let path = self.dir.path().join(file);
        std::fs::write(&path, text).unwrap();
        path
    }

    async fn haproxy(&self, front: u16, backs: &[u16]) -> Proc {
        let config = self.config("haproxy.cfg", front, backs);
        let p = Proc::spawn(
            Command::new(&self.haproxy)
                .arg("-db")
                .arg("-f")
                .arg(config)
                .stdout(Stdio::null()),
        );
        wait_for_port(front, "haproxy").await;
        p
    }

    async fn nginx(&self, front: u16, backs: &[u16]) -> Proc {
        let config = self.config("nginx.conf", front, backs);
        let prefix = self.dir.path();
        let global = format!(
            "daemon off; master_process off; pid {}/nginx.pid; error_log {}/error.log;",
            prefix.display(),
            prefix.display()
        );
        let p = Proc::spawn(
            Command::new(&self.nginx)
                .arg("-p")
                .arg(prefix)
                .arg("-c")
                .arg(config)
                .args(["-g", &global])
                .stdout(Stdio::null()),
        );
        wait_for_port(front, "nginx").await;
        p
    }
}

/// A replica (devtools `replica`): the calculator named `name`, plus
/// `whoami`; with `redis`, sharing its sessions there; with `prefixed`, its
/// session ids start with `<name>.` (the nginx configuration routes by it).
pub(crate) async fn replica(port: u16, name: &str, redis: Option<u16>, prefixed: bool) -> Proc {
    let mut cmd = Command::new(devtool("replica"));
    cmd.args(["--port", &port.to_string(), "--name", name])
        .stdout(Stdio::piped());
    if let Some(redis) = redis {
        cmd.args(["--redis", &format!("redis://127.0.0.1:{redis}")]);
    }
    if prefixed {
        cmd.args(["--session-prefix", &format!("{name}.")]);
    }
    let mut p = Proc::spawn(&mut cmd);
    let stdout = p.0.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let line = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
        .await
        .expect("the replica starts")
        .unwrap();
    assert_eq!(line.as_deref(), Some("listening"));
    p
}

/// Three replicas, `r1` to `r3`, on `ports`.
async fn replicas(ports: &[u16; 3], redis: Option<u16>, prefixed: bool) -> Vec<Option<Proc>> {
    let mut all = Vec::new();
    for (i, port) in ports.iter().enumerate() {
        all.push(Some(
            replica(*port, &format!("r{}", i + 1), redis, prefixed).await,
        ));
    }
    all
}

/// Progress values seen per progress token.
type Seen = Arc<Mutex<HashMap<String, Vec<f64>>>>;

async fn client(url: &str, mode: HandshakeMode) -> (McpClient, Seen) {
    let http = HttpTransport::new(HttpOptions::new(url)).unwrap();
    let options = ClientOptions::new("scale-out-test", "1")
        .request_timeout(Duration::from_secs(20))
        .handshake(mode);
    let client = McpClient::connect(http, options).await.unwrap();
    let seen: Seen = Arc::default();
    let mut notes = client.notifications();
    let sink = Arc::clone(&seen);
    tokio::spawn(async move {
        while let Some(note) = notes.next().await {
            if let ServerNotification::Progress(p) = note {
                let token = p.progress_token.as_str().unwrap_or_default().to_owned();
                sink.lock()
                    .unwrap()
                    .entry(token)
                    .or_default()
                    .push(p.progress);
            }
        }
    });
    (client, seen)
}

async fn whoami(client: &McpClient) -> String {
    let result = client.call_tool("whoami", json!({})).await.unwrap();
    result.text_content()
}

/// Opens `n` sessions at `url`; checks that each is served, call after
/// call, by the replica that opened it, and that they spread over at least
/// two replicas. Returns each with its replica's name.
async fn sticky_sessions(url: &str, n: usize) -> Vec<(Arc<McpClient>, Seen, String)> {
    let mut sessions = Vec::new();
    let mut homes = BTreeMap::<String, usize>::new();
    for _ in 0..n {
        let (client, seen) = client(url, HandshakeMode::Initialize).await;
        let opener = client.server_info().unwrap().name.clone();
        for _ in 0..3 {
            assert_eq!(
                whoami(&client).await,
                opener,
                "a session is served by the replica that opened it"
            );
        }
        *homes.entry(opener.clone()).or_default() += 1;
        sessions.push((Arc::new(client), seen, opener));
    }
    assert!(homes.len() >= 2, "sessions spread over replicas: {homes:?}");
    sessions
}

/// How calls ended: completed (with every progress event once, in
/// order), or failed with an error that says it may be retried.
#[derive(Debug, Default)]
struct Tally {
    completed: usize,
    retryable: BTreeMap<String, usize>,
}

/// `slow` (8 progress steps) again and again on `client` until `stop`;
/// panics on any event lost or seen twice, and on an error that is not a
/// retryable one.
async fn calls(client: Arc<McpClient>, seen: Seen, who: usize, stop: Instant) -> Tally {
    let mut tally = Tally::default();
    let mut n = 0;
    while Instant::now() < stop {
        n += 1;
        let token = format!("{who}-{n}");
        let options = RequestOptions::new().progress_token(token.clone());
        let result = client
            .call_tool_with("slow", json!({"steps": 8, "ms": 25}), options)
            .await;
        // The notifications reach their stream's reader on their own time:
        // the whole answer came once 8 are there (or a while has passed).
        let settle = Instant::now() + Duration::from_secs(2);
        while result.is_ok() && Instant::now() < settle {
            if seen
                .lock()
                .unwrap()
                .get(&token)
                .is_some_and(|p| p.len() >= 8)
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        if result.is_err() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let progress = seen.lock().unwrap().remove(&token).unwrap_or_default();
        match result {
            Ok(done) => {
                assert_eq!(done.text_content(), "done after 8 steps");
                let want: Vec<f64> = (1..=8).map(f64::from).collect();
                assert_eq!(
                    progress, want,
                    "call {token}: every progress event, once, in order"
                );
                tally.completed += 1;
            }
            Err(e) => {
                let text = format!("{e:#}");
                let dup = progress.windows(2).any(|w| w[0] >= w[1]);
                assert!(
                    !dup,
                    "call {token}: progress seen twice or out of order: {progress:?}"
                );
                let class = if e.jsonrpc_error().is_some_and(|o| {
                    o.data.as_ref().and_then(|d| d.get("retryable")) == Some(&Value::Bool(true))
                }) {
                    "replica lost (retryable)"
                } else if e.status() == Some(502) || e.status() == Some(503) {
                    "balancer: 502/503"
                } else {
                    panic!("call {token} failed with an error that is not a retryable one: {text}");
                };
                *tally.retryable.entry(class.to_owned()).or_default() += 1;
            }
        }
    }
    tally
}

/// The balancer in front, with its configuration of `docs/deploy/`.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Balancer {
    Haproxy,
    /// Routes by session-id prefix: the replicas are given theirs.
    Nginx,
}

/// The deployment under test: three replicas, their store, the balancer.
pub(crate) struct Deployment {
    pub(crate) ports: [u16; 3],
    pub(crate) replicas: Vec<Option<Proc>>,
    /// Redis' port and process, with a store.
    pub(crate) redis: Option<(u16, Proc)>,
    prefixed: bool,
    pub(crate) url: String,
    _balancer: Proc,
}

impl Deployment {
    pub(crate) async fn start(services: &Services, balancer: Balancer, store: bool) -> Self {
        let redis = match store {
            true => {
                let port = free_port();
                Some((port, services.redis(port).await))
            }
            false => None,
        };
        let ports = [free_port(), free_port(), free_port()];
        let prefixed = balancer == Balancer::Nginx;
        let replicas = replicas(&ports, redis.as_ref().map(|r| r.0), prefixed).await;
        let front = free_port();
        let balancer = match balancer {
            Balancer::Haproxy => services.haproxy(front, &ports).await,
            Balancer::Nginx => services.nginx(front, &ports).await,
        };
        Self {
            ports,
            replicas,
            redis,
            prefixed,
            url: format!("http://127.0.0.1:{front}/mcp"),
            _balancer: balancer,
        }
    }

    /// The stateless revision reaches all three replicas, round-robin.
    async fn round_robin(&self) {
        let (client, _) = client(&self.url, HandshakeMode::Auto).await;
        assert!(client.server_state().stateless, "the stateless revision");
        let mut names = BTreeSet::new();
        for _ in 0..9 {
            names.insert(whoami(&client).await);
        }
        assert_eq!(names.len(), 3, "round-robin, no affinity: {names:?}");
    }

    /// With calls in flight on every session for `run`, the replica that
    /// opened the most of them gets `kill -9`. Every call completes with
    /// all its progress events once and in order, or fails with an error
    /// that says it may be retried (at most one per session of the dead
    /// replica); every session goes on, those of the dead replica at one
    /// other replica, the others where they were; restarted, the replica
    /// opens sessions again.
    async fn kill_one_under_load(
        &mut self,
        sessions: &[(Arc<McpClient>, Seen, String)],
        run: Duration,
    ) {
        let mut homes = BTreeMap::<&str, usize>::new();
        for (_, _, home) in sessions {
            *homes.entry(home).or_default() += 1;
        }
        let (victim, on_victim) = homes.iter().max_by_key(|(_, n)| **n).unwrap();
        let (victim, on_victim) = ((*victim).to_owned(), *on_victim);
        let stop = Instant::now() + run;
        let tasks: Vec<_> = sessions
            .iter()
            .enumerate()
            .map(|(who, (client, seen, _))| {
                tokio::spawn(calls(Arc::clone(client), Arc::clone(seen), who, stop))
            })
            .collect();
        tokio::time::sleep(run / 4).await;
        let index: usize = victim[1..].parse::<usize>().unwrap() - 1;
        self.replicas[index].take().unwrap().kill().await;
        let mut completed = 0;
        let mut retryable = BTreeMap::<String, usize>::new();
        for task in tasks {
            let tally = task.await.unwrap();
            completed += tally.completed;
            for (class, n) in tally.retryable {
                *retryable.entry(class).or_default() += n;
            }
        }
        let failed: usize = retryable.values().sum();
        eprintln!(
            "calls completed: {completed}, failed retryably: {retryable:?} \
             ({on_victim} sessions on {victim})"
        );
        assert!(completed > sessions.len() * 4, "calls went on: {completed}");
        assert!(
            failed <= on_victim,
            "at most the calls in flight on {victim} fail ({on_victim} sessions): {retryable:?}"
        );

        for (client, _, home) in sessions {
            let now = whoami(client).await;
            if *home == victim {
                assert_ne!(now, victim);
                assert_eq!(whoami(client).await, now, "moved to one replica");
            } else {
                assert_eq!(&now, home, "the other sessions did not move");
            }
        }

        let (port, redis) = (self.ports[index], self.redis.as_ref().map(|r| r.0));
        self.replicas[index] = Some(replica(port, &victim, redis, self.prefixed).await);
        // Back once the balancer sees it: HAProxy's health checks, or
        // nginx's fail_timeout.
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let (client, _) = client(&self.url, HandshakeMode::Initialize).await;
            if client.server_info().unwrap().name == victim {
                assert_eq!(whoami(&client).await, victim);
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the restarted replica opens sessions again"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_haproxy_the_stateless_revision_is_round_robin_and_sessions_stick_without_a_store()
{
    let test =
        "through_haproxy_the_stateless_revision_is_round_robin_and_sessions_stick_without_a_store";
    let Some(services) = Services::find(test) else {
        return;
    };
    let deployment = Deployment::start(&services, Balancer::Haproxy, false).await;
    deployment.round_robin().await;
    // Sessions at 2025-11-25, no store: affinity alone serves them.
    sticky_sessions(&deployment.url, 6).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_haproxy_sessions_stick_and_survive_a_replica_killed_under_load() {
    let test = "through_haproxy_sessions_stick_and_survive_a_replica_killed_under_load";
    let Some(services) = Services::find(test) else {
        return;
    };
    let mut deployment = Deployment::start(&services, Balancer::Haproxy, true).await;
    let sessions = sticky_sessions(&deployment.url, 12).await;
    deployment
        .kill_one_under_load(&sessions, Duration::from_millis(2400))
        .await;

    // What Redis keeps expires, and is small: a session record and the
    // last streams of each session.
    let redis_port = deployment.redis.as_ref().unwrap().0;
    let keys = services.redis_cli(redis_port, &["--scan"]);
    let keys: Vec<&str> = keys.lines().collect();
    assert!(!keys.is_empty());
    assert!(keys.len() < 40 * 8, "Redis keeps {} keys", keys.len());
    for key in &keys {
        let ttl: i64 = services
            .redis_cli(redis_port, &["pttl", key])
            .parse()
            .unwrap();
        assert!(ttl > 0, "{key} has no TTL ({ttl})");
    }
    let info = services.redis_cli(redis_port, &["info", "memory"]);
    let used: u64 = info
        .lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap();
    assert!(used < 8 << 20, "Redis holds {used} bytes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_nginx_sessions_stick_and_survive_a_replica_killed_under_load() {
    let test = "through_nginx_sessions_stick_and_survive_a_replica_killed_under_load";
    let Some(services) = Services::find(test) else {
        return;
    };
    let mut deployment = Deployment::start(&services, Balancer::Nginx, true).await;
    deployment.round_robin().await;
    let sessions = sticky_sessions(&deployment.url, 6).await;
    deployment
        .kill_one_under_load(&sessions, Duration::from_millis(1600))
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_redis_requests_that_need_it_fail_at_once_and_work_again_once_it_is_back() {
    let test = "without_redis_requests_that_need_it_fail_at_once_and_work_again_once_it_is_back";
    let Some(services) = Services::find(test) else {
        return;
    };
    let mut deployment = Deployment::start(&services, Balancer::Haproxy, true).await;
    let (redis_port, redis) = deployment.redis.take().unwrap();
    let url = deployment.url.clone();
    let (session, seen) = client(&url, HandshakeMode::Initialize).await;
    let session = Arc::new(session);
    assert_eq!(
        session
            .call_tool("add", json!({"a": 2, "b": 3}))
            .await
            .unwrap()
            .text_content(),
        "5"
    );

    // Redis dies with calls running: they complete (their events go out
    // unstored), and nothing hangs.
    let running = tokio::spawn(calls(
        Arc::clone(&session),
        seen,
        0,
        Instant::now() + Duration::from_millis(400),
    ));
    tokio::time::sleep(Duration::from_millis(100)).await;
    redis.kill().await;
    let bounded = Duration::from_secs(8);
    let tally = tokio::time::timeout(bounded, running)
        .await
        .expect("never hangs")
        .unwrap();
    assert!(tally.completed >= 1, "{tally:?}");

    // A streamed answer needs the store: 503, naming it, before the tool runs.
    let started = Instant::now();
    let refused = tokio::time::timeout(bounded, session.call_tool("add", json!({"a": 1, "b": 1})))
        .await
        .expect("never hangs")
        .unwrap_err();
    let text = format!("{refused:#}");
    assert!(
        text.contains("a streamed answer needs the event store, which failed"),
        "{text}"
    );
    assert!(
        !text.contains("127.0.0.1"),
        "the store's address stays in the log: {text}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    // So does a new session.
    let http = HttpTransport::new(HttpOptions::new(&url)).unwrap();
    let options = ClientOptions::new("t", "1").handshake(HandshakeMode::Initialize);
    let connected = tokio::time::timeout(bounded, McpClient::connect(http, options))
        .await
        .expect("never hangs");
    let Err(refused) = connected else {
        panic!("no session without the store");
    };
    assert!(
        format!("{refused:#}").contains("event store"),
        "{refused:#}"
    );

    // Redis is back (empty): the session goes on at its replica, and new
    // sessions open.
    let _redis = services.redis(redis_port).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match session.call_tool("add", json!({"a": 2, "b": 2})).await {
            Ok(result) => {
                assert_eq!(result.text_content(), "4");
                break;
            }
            Err(e) => assert!(Instant::now() < deadline, "still failing: {e:#}"),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (fresh, _) = client(&url, HandshakeMode::Initialize).await;
    assert_eq!(
        fresh
            .call_tool("add", json!({"a": 1, "b": 2}))
            .await
            .unwrap()
            .text_content(),
        "3"
    );
}

/// The task `id` once it ended, or as it is after `wait` (errors of a
/// replica the balancer has not yet seen die are retried).
async fn settled(client: &McpClient, id: &str, wait: Duration) -> Task {
    let deadline = Instant::now() + wait;
    let mut last = None;
    while Instant::now() < deadline {
        if let Ok(task) = client.get_task(id).await {
            if task.status.is_terminal() {
                return task;
            }
            last = Some(task);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    last.unwrap_or_else(|| panic!("task {id} could not be read for {wait:?}"))
}

/// `f`'s output, if it comes within 20 s.
async fn within<T>(f: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(20), f)
        .await
        .expect("in time")
}

/// Starts the replica's `job` (works `seconds`, answers the replica's
/// name) as a task on `client`: its id.
async fn job(client: &McpClient, seconds: f64) -> String {
    match client
        .call_tool_as_task("job", json!({"seconds": seconds}))
        .await
        .unwrap()
    {
        ToolCallOutcome::Task(task) => task.task_id,
        other => panic!("expected a task: {other:?}"),
    }
}

/// Each replica by name, the balancer beside them: tasks started on r1
/// are polled, fetched and cancelled through r2; `kill -9` of r3, which
/// runs none, leaves r1's task to complete, fetched through the
/// survivors; `kill -9` of r1 with a task running gets it reported
/// failed, saying why, through r2 and the balancer within the task lease
/// (the replicas' is 1 s): neither lost nor `working` forever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_haproxy_a_task_is_served_by_any_replica_and_a_kill_9_loses_none() {
    let test = "through_haproxy_a_task_is_served_by_any_replica_and_a_kill_9_loses_none";
    let Some(services) = Services::find(test) else {
        return;
    };
    let lease = Duration::from_secs(1);
    let mut deployment = Deployment::start(&services, Balancer::Haproxy, true).await;
    let direct = |i: usize| format!("http://127.0.0.1:{}/mcp", deployment.ports[i]);
    let (r1, _) = client(&direct(0), HandshakeMode::Auto).await;
    let (r2, _) = client(&direct(1), HandshakeMode::Auto).await;
    let (front, _) = client(&deployment.url, HandshakeMode::Auto).await;
    assert!(r1.server_state().stateless && r2.server_state().stateless);
    assert_eq!(
        (whoami(&r1).await, whoami(&r2).await),
        ("r1".into(), "r2".into())
    );

    // Started on r1, polled through r2, its result fetched there: r1 ran it.
    let id = job(&r1, 1.0).await;
    assert_eq!(r2.get_task(&id).await.unwrap().status, TaskStatus::Working);
    let result = within(r2.wait_task(&id)).await.unwrap();
    assert_eq!(result.text_content(), "r1");
    assert_eq!(
        r1.get_task(&id).await.unwrap().status,
        TaskStatus::Completed
    );

    // Another cancelled through r2: r1, still running it, says so at once
    // too (a task polled round-robin never goes back to working).
    let id = job(&r1, 60.0).await;
    r2.cancel_task(&id).await.unwrap();
    let on_r1 = r1.get_task(&id).await.unwrap();
    assert_eq!(on_r1.status, TaskStatus::Cancelled, "{on_r1:?}");
    let e = within(r2.wait_task(&id)).await.unwrap_err();
    assert!(e.is_cancelled(), "{e:?}");

    // kill -9 of r3, which runs no task: r1's completes, fetched through r2
    // and through the balancer.
    let id = job(&r1, 1.5).await;
    deployment.replicas[2].take().unwrap().kill().await;
    let result = within(r2.wait_task(&id)).await.unwrap();
    assert_eq!(result.text_content(), "r1");
    let task = settled(&front, &id, Duration::from_secs(10)).await;
    assert_eq!(task.status, TaskStatus::Completed, "{task:?}");
    assert_eq!(task.result.unwrap().text_content(), "r1");

    // kill -9 of r1 with a task running (its lease renewed by now): r2
    // reports it working while the lease runs, then failed, within it.
    let id = job(&r1, 60.0).await;
    tokio::time::sleep(lease).await;
    deployment.replicas[0].take().unwrap().kill().await;
    let killed = Instant::now();
    let first = r2.get_task(&id).await.unwrap();
    if killed.elapsed() < lease / 4 {
        assert_eq!(
            first.status,
            TaskStatus::Working,
            "not failed before its lease ran out"
        );
    }
    let failed = within(async {
        loop {
            let task = r2.get_task(&id).await.unwrap();
            if task.status.is_terminal() {
                break task;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    let took = killed.elapsed();
    assert_eq!(failed.status, TaskStatus::Failed, "{failed:?}");
    let why = "the server replica running this task stopped before it finished";
    assert_eq!(failed.status_message.as_deref(), Some(why));
    assert!(failed.error.unwrap().message.contains(why));
    // Within the lease (the last renewal vouched for at most one lease
    // from the kill), plus slack for a loaded machine: not the default
    // 30 s lease, nor never.
    assert!(took < lease * 2, "reported after {took:?}");
    let e = within(r2.wait_task(&id)).await.unwrap_err();
    assert_eq!(e.code(), Some(-32603), "{e}");
    let task = settled(&front, &id, Duration::from_secs(10)).await;
    assert_eq!(task.status, TaskStatus::Failed, "{task:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_haproxy_tasks_go_through_any_replica_and_a_killed_replicas_tasks_fail() {
    let test = "through_haproxy_tasks_go_through_any_replica_and_a_killed_replicas_tasks_fail";
    let Some(services) = Services::find(test) else {
        return;
    };
    let mut deployment = Deployment::start(&services, Balancer::Haproxy, true).await;
    let (client, _) = client(&deployment.url, HandshakeMode::Auto).await;
    assert!(client.server_state().stateless);
    let start = |seconds: f64| job(&client, seconds);

    // Polled (round-robin: through every replica) to its result.
    let short = start(0.5).await;
    let result = tokio::time::timeout(Duration::from_secs(20), client.wait_task(&short))
        .await
        .unwrap()
        .unwrap();
    assert!(result.text_content().starts_with('r'), "{result:?}");

    // Cancelled through whichever replica the balancer picks.
    let long = start(60.0).await;
    client.cancel_task(&long).await.unwrap();
    let e = tokio::time::timeout(Duration::from_secs(20), client.wait_task(&long))
        .await
        .unwrap()
        .unwrap_err();
    assert!(e.is_cancelled(), "{e:?}");

    // Six tasks, spread over the replicas; r2 gets kill -9. Its tasks are
    // reported failed once their lease (1 s) is over; the others run on.
    let mut ids = Vec::new();
    for _ in 0..6 {
        ids.push(start(60.0).await);
    }
    deployment.replicas[1].take().unwrap().kill().await;
    let mut failed = 0;
    for id in &ids {
        let task = settled(&client, id, Duration::from_secs(4)).await;
        match task.status {
            TaskStatus::Failed => {
                failed += 1;
                let error = task.error.unwrap();
                assert!(
                    error.message.contains("replica running this task stopped"),
                    "{error:?}"
                );
            }
            TaskStatus::Working => {}
            other => panic!("task {id}: {other:?}"),
        }
    }
    assert!(
        (1..6).contains(&failed),
        "r2's tasks failed, the others run: {failed}"
    );
    // None is lost: the others end too, cancelled.
    for id in &ids {
        let _ = client.cancel_task(id).await;
        let task = settled(&client, id, Duration::from_secs(10)).await;
        assert!(task.status.is_terminal(), "{id}: {task:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_redis_store_tasks_survive_their_replica() {
    let Some(services) = Services::find("with_the_redis_store_tasks_survive_their_replica") else {
        return;
    };
    let port = free_port();
    let _redis = services.redis(port).await;
    let url = format!("redis://127.0.0.1:{port}");
    crate::tasks::tasks_survive_their_replica(|| RedisEventStore::new(&url).unwrap()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_redis_store_keeps_the_contract() {
    let Some(services) = Services::find("the_redis_store_keeps_the_contract") else {
        return;
    };
    let port = free_port();
    let _redis = services.redis(port).await;
    let ttl = Duration::from_millis(200);
    let url = format!("redis://127.0.0.1:{port}");
    let paging = RedisEventStore::new(&url).unwrap().ttl(ttl);
    crate::replicas::the_store_pages_streams(&paging).await;
    let store = RedisEventStore::new(&url)
        .unwrap()
        .events_per_stream(2)
        .bytes_per_stream(crate::replicas::CONTRACT_BYTES)
        .ttl(ttl);
    crate::replicas::the_store_contract_holds(&store, ttl).await;
    let keys = services.redis_cli(port, &["--scan"]);
    assert_eq!(keys, "", "everything expired");
}
