//! Mirroring a session's transcript into its session store, and
//! restoring it from there before a resume (docs/protocol.md §8).
//!
//! Started with `--session-mirror`, the CLI writes a `transcript_mirror`
//! line (`{"type":"transcript_mirror","filePath":…,"entries":[…]}`) after
//! each batch of transcript entries it wrote to its own file. The reader
//! hands each one to the mirror task without waiting; the task gathers
//! them and appends them to the store (at once with
//! [`SessionStoreFlush::Eager`], else past 500 entries or 1 MiB). Before a
//! turn's `Result` reaches the user, everything the CLI mirrored until then
//! is in the store ([`Mirror::flush`]); what comes after the last result is
//! appended when the session ends, before `shutdown` returns.
//!
//! A failure is never silent: an append that still fails after three tries
//! (or does not answer in time), a transcript past its size limit or a
//! frame for a file outside the CLI's configuration folder ends the
//! session (the CLI is killed) with that error, which the turn's stream
//! yields as its last item.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, Weak};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::{mpsc, oneshot, watch};

use super::Connection;
use crate::error::{Error, Result};
use crate::sessions::store::{SharedStore, jsonl_size, to_jsonl};
use crate::sessions::{SessionKey, SessionStoreFlush, StoreError};

/// Past this many entries or bytes waiting, a batched mirror appends.
const MAX_PENDING_ENTRIES: usize = 500;
const MAX_PENDING_BYTES: u64 = 1024 * 1024;

/// Waits between the tries of a failed append (three tries in all).
const BACKOFF: [Duration; 2] = [Duration::from_millis(200), Duration::from_millis(800)];

/// What a session's mirror needs to know.
#[derive(Clone)]
pub(crate) struct MirrorConfig {
    pub(crate) store: SharedStore,
    pub(crate) flush: SessionStoreFlush,
    pub(crate) max_bytes: u64,
    pub(crate) timeout: Duration,
    /// `<CLAUDE_CONFIG_DIR>/projects` of the CLI.
    pub(crate) projects_dir: PathBuf,
}

impl MirrorConfig {
    /// The mirror `options` ask for: `None` without a session store.
    pub(crate) fn from_options(options: &crate::options::Options) -> Result<Option<MirrorConfig>> {
        let Some(store) = &options.session_store else {
            return Ok(None);
        };
        if options.no_session_persistence {
            return Err(Error::InvalidOptions(
                "a session store keeps what the CLI writes to its session files: it cannot be \
                 used with no_session_persistence"
                    .into(),
            ));
        }
        let config_dir = options.cli_config_dir().ok_or_else(|| {
            Error::InvalidOptions(
                "with a session store the SDK must know the CLI's configuration folder: set \
                 CLAUDE_CONFIG_DIR (Options::env) or HOME"
                    .into(),
            )
        })?;
        Ok(Some(MirrorConfig {
            store: store.clone(),
            flush: options.session_store_flush,
            max_bytes: options
                .max_transcript_bytes
                .unwrap_or(crate::options::DEFAULT_MAX_TRANSCRIPT_BYTES),
            timeout: options
                .session_store_timeout
                .unwrap_or(crate::options::DEFAULT_SESSION_STORE_TIMEOUT),
            projects_dir: config_dir.join("projects"),
        }))
    }
}

enum Command {
    Frame(Value),
    Flush(oneshot::Sender<Result<()>>),
}

/// The session's end of the mirror task.
pub(crate) struct Mirror {
    tx: Mutex<Option<mpsc::UnboundedSender<Command>>>,
    /// The task's outcome once it is over.
    done: watch::Receiver<Option<Result<(), Error>>>,
}

impl Mirror {
    /// Starts the mirror task. `sizes`: what the store already holds of
    /// the session's transcripts (those restored for a resume). The task
    /// kills the CLI of `conn` when it fails.
    pub(crate) fn start(
        config: MirrorConfig,
        sizes: HashMap<SessionKey, u64>,
        conn: Weak<Connection>,
    ) -> Mirror {
        let (tx, rx) = mpsc::unbounded_channel();
        let (done_tx, done) = watch::channel(None);
        let task = Task {
            config,
            sizes,
            pending: Vec::new(),
            pending_entries: 0,
            pending_bytes: 0,
            failed: None,
            conn,
        };
        tokio::spawn(async move {
            let outcome = task.run(rx).await;
            let _ = done_tx.send(Some(outcome));
        });
        Mirror {
            tx: Mutex::new(Some(tx)),
            done,
        }
    }

    fn sender(&self) -> Option<mpsc::UnboundedSender<Command>> {
        self.tx.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// A `transcript_mirror` line from the reader; never waits.
    pub(crate) fn frame(&self, frame: Value) {
        if let Some(tx) = self.sender() {
            let _ = tx.send(Command::Frame(frame));
        }
    }

    /// Appends everything received so far; the mirror's failure if it
    /// failed.
    pub(crate) async fn flush(&self) -> Result<()> {
        if let Some(tx) = self.sender() {
            let (reply, answer) = oneshot::channel();
            if tx.send(Command::Flush(reply)).is_ok()
                && let Ok(outcome) = answer.await
            {
                return outcome;
            }
        }
        self.finished().await
    }

    /// No more frames: the task appends what it holds and ends.
    pub(crate) fn close(&self) {
        self.tx.lock().unwrap_or_else(|e| e.into_inner()).take();
    }

    /// Waits for the task to end (after [`close`](Self::close)); its
    /// failure, if it failed.
    pub(crate) async fn finished(&self) -> Result<()> {
        let mut done = self.done.clone();
        match done.wait_for(Option::is_some).await {
            Ok(outcome) => outcome.as_ref().map_or(Ok(()), clone_result),
            Err(_) => Ok(()),
        }
    }
}

fn clone_result(r: &Result<()>) -> Result<()> {
    match r {
        Ok(()) => Ok(()),
        Err(e) => Err(clone_mirror_error(e)),
    }
}

/// The mirror's errors are rebuilt for each who asks.
pub(crate) fn clone_mirror_error(e: &Error) -> Error {
    match e {
        Error::SessionStore {
            operation,
            session_id,
            source,
        } => Error::SessionStore {
            operation,
            session_id: session_id.clone(),
            source: source.clone(),
        },
        Error::TranscriptTooLarge {
            session_id,
            size,
            limit,
        } => Error::TranscriptTooLarge {
            session_id: session_id.clone(),
            size: *size,
            limit: *limit,
        },
        other => Error::InvalidOptions(other.to_string()),
    }
}

struct Task {
    config: MirrorConfig,
    sizes: HashMap<SessionKey, u64>,
    pending: Vec<(SessionKey, Vec<Value>)>,
    pending_entries: usize,
    pending_bytes: u64,
    failed: Option<Error>,
    conn: Weak<Connection>,
}

impl Task {
    async fn run(mut self, mut rx: mpsc::UnboundedReceiver<Command>) -> Result<()> {
        while let Some(command) = rx.recv().await {
            match command {
                Command::Frame(frame) => {
                    if self.failed.is_some() {
                        continue;
                    }
                    let accepted = self.accept(frame);
                    let due = self.config.flush == SessionStoreFlush::Eager
                        || self.pending_entries > MAX_PENDING_ENTRIES
                        || self.pending_bytes > MAX_PENDING_BYTES;
                    let outcome = match accepted {
                        Ok(()) if due => self.append_pending().await,
                        other => other,
                    };
                    if let Err(e) = outcome {
                        self.fail(e);
                    }
                }
                Command::Flush(reply) => {
                    if self.failed.is_none()
                        && let Err(e) = self.append_pending().await
                    {
                        self.fail(e);
                    }
                    let _ = reply.send(self.outcome());
                }
            }
        }
        if self.failed.is_none()
            && let Err(e) = self.append_pending().await
        {
            self.fail(e);
        }
        self.outcome()
    }

    fn outcome(&self) -> Result<()> {
        self.failed
            .as_ref()
            .map_or(Ok(()), |e| Err(clone_mirror_error(e)))
    }

    /// Records the first failure and ends the session: the CLI is killed,
    /// so that nothing more is written that the store would not have.
    fn fail(&mut self, error: Error) {
        tracing::debug!("the session store failed: {error}");
        self.failed = Some(error);
        self.pending.clear();
        if let Some(conn) = self.conn.upgrade() {
            conn.child.kill_unless_clean();
        }
    }

    /// Takes a frame into the pending batch, counting its size.
    fn accept(&mut self, frame: Value) -> Result<()> {
        let path = frame.get("filePath").and_then(Value::as_str).unwrap_or("");
        let key = key_of(Path::new(path), &self.config.projects_dir).ok_or_else(|| {
            Error::SessionStore {
                operation: "mirror",
                session_id: String::new(),
                source: std::sync::Arc::new(StoreError::new(format!(
                    "the CLI wrote a transcript at {path:?}, not under {}: the CLI's \
                     CLAUDE_CONFIG_DIR is not the one the SDK was given",
                    self.config.projects_dir.display()
                ))),
            }
        })?;
        let entries = match frame.get("entries") {
            Some(Value::Array(entries)) => entries.clone(),
            _ => Vec::new(),
        };
        if entries.is_empty() {
            return Ok(());
        }
        let bytes = jsonl_size(&entries);
        let size = self.sizes.entry(key.clone()).or_default();
        *size += bytes;
        if *size > self.config.max_bytes {
            return Err(Error::TranscriptTooLarge {
                session_id: key.session_id.clone(),
                size: *size,
                limit: self.config.max_bytes,
            });
        }
        self.pending_entries += entries.len();
        self.pending_bytes += bytes;
        match self.pending.last_mut() {
            Some((last, batch)) if *last == key => batch.extend(entries),
            _ => self.pending.push((key, entries)),
        }
        Ok(())
    }

    async fn append_pending(&mut self) -> Result<()> {
        self.pending_entries = 0;
        self.pending_bytes = 0;
        for (key, entries) in std::mem::take(&mut self.pending) {
            append_with_retry(&self.config, &key, &entries).await?;
        }
        Ok(())
    }
}

/// One append, tried three times (a timeout is not tried again: the
/// append may still land).
async fn append_with_retry(
    config: &MirrorConfig,
    key: &SessionKey,
    entries: &[Value],
) -> Result<()> {
    let mut attempt = 0;
    loop {
        let error =
            match tokio::time::timeout(config.timeout, config.store.append(key, entries)).await {
                Ok(Ok(())) => return Ok(()),
                Ok(Err(e)) => e,
                Err(_) => {
                    return Err(store_error(
                        "append to",
                        key,
                        StoreError::new(format!("no answer within {:?}", config.timeout)),
                    ));
                }
            };
        match BACKOFF.get(attempt) {
            Some(wait) => {
                attempt += 1;
                tokio::time::sleep(*wait).await;
            }
            None => return Err(store_error("append to", key, error)),
        }
    }
}

pub(crate) fn store_error(operation: &'static str, key: &SessionKey, source: StoreError) -> Error {
    Error::SessionStore {
        operation,
        session_id: key.session_id.clone(),
        source: std::sync::Arc::new(source),
    }
}

/// The key of a transcript file the CLI wrote: `<project>/<session>.jsonl`
/// or `<project>/<session>/<subpath>.jsonl` under the projects folder.
fn key_of(path: &Path, projects: &Path) -> Option<SessionKey> {
    let rel = path.strip_prefix(projects).ok()?;
    let parts: Vec<&str> = rel
        .components()
        .map(|c| match c {
            std::path::Component::Normal(s) => s.to_str(),
            _ => None,
        })
        .collect::<Option<_>>()?;
    match parts.as_slice() {
        [project, file] => Some(SessionKey::new(*project, file.strip_suffix(".jsonl")?)),
        [project, session, rest @ ..] if rest.len() >= 2 => {
            let sub = rest.join("/");
            Some(SessionKey::new(*project, *session).with_subpath(sub.strip_suffix(".jsonl")?))
        }
        _ => None,
    }
}

/// Loads `session_id` from the store into the CLI's projects folder, so
/// that `--resume` finds it: the main transcript at
/// `<projects>/<project>/<id>.jsonl` and each subpath beside it (a
/// subagent's `agent_metadata` entry as its `.meta.json`), each written to a
/// temporary file renamed over any there. Returns what it restored and
/// the size of each, for the size limit.
pub(crate) async fn restore(
    config: &MirrorConfig,
    project_key: &str,
    session_id: &str,
) -> Result<HashMap<SessionKey, u64>> {
    let key = SessionKey::new(project_key, session_id);
    let entries = bounded(config, "load", &key, config.store.load(&key))
        .await?
        .filter(|e| !e.is_empty())
        .ok_or_else(|| {
            store_error(
                "load",
                &key,
                StoreError::new(format!(
                    "the store has no session {session_id} for project {project_key} \
                     (sessions started before the store was used can be copied in with \
                     sessions::import_session_to_store)"
                )),
            )
        })?;
    let mut sizes = HashMap::new();
    let dir = config.projects_dir.join(project_key);
    restore_file(
        config,
        &key,
        &dir.join(format!("{session_id}.jsonl")),
        &entries,
        &mut sizes,
    )?;
    let subs = bounded(
        config,
        "list the subagent transcripts of",
        &key,
        config.store.list_subkeys(project_key, session_id),
    )
    .await?;
    for sub in subs {
        let sub_key = key.clone().with_subpath(sub.clone());
        if sub_key.subpath.is_none() || sub.split('/').any(|p| p.is_empty() || p == "..") {
            continue;
        }
        let Some(entries) = bounded(config, "load", &sub_key, config.store.load(&sub_key)).await?
        else {
            continue;
        };
        let (meta, transcript): (Vec<Value>, Vec<Value>) = entries
            .into_iter()
            .partition(|e| e.get("type").and_then(Value::as_str) == Some("agent_metadata"));
        let path = dir.join(session_id).join(format!("{sub}.jsonl"));
        restore_file(config, &sub_key, &path, &transcript, &mut sizes)?;
        if let Some(Value::Object(mut meta)) = meta.into_iter().last() {
            meta.remove("type");
            let meta_path = dir.join(session_id).join(format!("{sub}.meta.json"));
            crate::sessions::replace_private(
                &meta_path,
                Value::Object(meta).to_string().as_bytes(),
            )
            .map_err(|e| {
                store_error(
                    "restore",
                    &sub_key,
                    crate::sessions::store::io_error("write", &meta_path, e),
                )
            })?;
        }
    }
    Ok(sizes)
}

fn restore_file(
    config: &MirrorConfig,
    key: &SessionKey,
    path: &Path,
    entries: &[Value],
    sizes: &mut HashMap<SessionKey, u64>,
) -> Result<()> {
    let size = jsonl_size(entries);
    if size > config.max_bytes {
        return Err(Error::TranscriptTooLarge {
            session_id: key.session_id.clone(),
            size,
            limit: config.max_bytes,
        });
    }
    crate::sessions::replace_private(path, to_jsonl(entries).as_bytes()).map_err(|e| {
        store_error(
            "restore",
            key,
            crate::sessions::store::io_error("write", path, e),
        )
    })?;
    sizes.insert(key.clone(), size);
    Ok(())
}

/// A store call bounded by the timeout, its failure named.
pub(crate) async fn bounded<T>(
    config: &MirrorConfig,
    operation: &'static str,
    key: &SessionKey,
    call: impl Future<Output = Result<T, StoreError>>,
) -> Result<T> {
    match tokio::time::timeout(config.timeout, call).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(store_error(operation, key, e)),
        Err(_) => Err(store_error(
            operation,
            key,
            StoreError::new(format!("no answer within {:?}", config.timeout)),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sessions::{InMemorySessionStore, SessionStore, StoreFuture, StoredSession};
    use serde_json::json;
    use std::sync::Arc;

    /// A store whose appends fail, counting the tries.
    #[derive(Debug, Default)]
    struct Failing(std::sync::atomic::AtomicUsize);

    impl SessionStore for Failing {
        fn append<'a>(&'a self, _: &'a SessionKey, _: &'a [Value]) -> StoreFuture<'a, ()> {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Box::pin(async { Err(StoreError::new("the disk is on fire")) })
        }

        fn load<'a>(&'a self, _: &'a SessionKey) -> StoreFuture<'a, Option<Vec<Value>>> {
            Box::pin(async { Ok(None) })
        }

        fn list_sessions<'a>(&'a self, _: &'a str) -> StoreFuture<'a, Vec<StoredSession>> {
            Box::pin(async { Ok(Vec::new()) })
        }
    }

    fn config(
        store: crate::sessions::store::SharedStore,
        flush: SessionStoreFlush,
    ) -> MirrorConfig {
        MirrorConfig {
            store,
            flush,
            max_bytes: 10_000,
            timeout: Duration::from_secs(5),
            projects_dir: PathBuf::from("/c/projects"),
        }
    }

    fn frame(n: usize) -> Value {
        json!({"type": "transcript_mirror", "filePath": "/c/projects/-w/s1.jsonl",
               "entries": [{"type": "user", "uuid": format!("u{n}")}]})
    }

    const KEY: (&str, &str) = ("-w", "s1");

    #[tokio::test]
    async fn batched_frames_wait_for_a_flush_and_eager_ones_do_not() {
        let store = InMemorySessionStore::new();
        let key = SessionKey::new(KEY.0, KEY.1);
        let batched = Mirror::start(
            config(Arc::new(store.clone()), SessionStoreFlush::Batched),
            HashMap::new(),
            Weak::new(),
        );
        batched.frame(frame(1));
        batched.frame(frame(2));
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(store.entries(&key).is_empty(), "held until the turn ends");
        batched.flush().await.unwrap();
        assert_eq!(store.entries(&key).len(), 2);
        batched.frame(frame(3));
        batched.close();
        batched.finished().await.unwrap();
        assert_eq!(
            store.entries(&key).len(),
            3,
            "the session's end appends the rest"
        );

        let store = InMemorySessionStore::new();
        let eager = Mirror::start(
            config(Arc::new(store.clone()), SessionStoreFlush::Eager),
            HashMap::new(),
            Weak::new(),
        );
        eager.frame(frame(1));
        for _ in 0..100 {
            if !store.entries(&key).is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(store.entries(&key).len(), 1, "appended without a flush");
        eager.close();
        eager.finished().await.unwrap();
    }

    #[tokio::test]
    async fn a_failing_store_is_tried_three_times_then_fails_every_flush() {
        let store = Arc::new(Failing::default());
        let mirror = Mirror::start(
            config(store.clone(), SessionStoreFlush::Batched),
            HashMap::new(),
            Weak::new(),
        );
        mirror.frame(frame(1));
        let error = mirror.flush().await.unwrap_err();
        assert!(
            matches!(&error, Error::SessionStore { operation: "append to", session_id, source }
                if session_id == "s1" && source.to_string() == "the disk is on fire"),
            "{error:?}"
        );
        assert_eq!(store.0.load(std::sync::atomic::Ordering::SeqCst), 3);
        mirror.frame(frame(2));
        assert!(mirror.flush().await.is_err(), "the failure stays");
        mirror.close();
        assert!(mirror.finished().await.is_err());
        assert_eq!(
            store.0.load(std::sync::atomic::Ordering::SeqCst),
            3,
            "nothing more tried"
        );
    }

    #[tokio::test]
    async fn a_transcript_past_its_limit_fails_without_reaching_the_store() {
        let store = InMemorySessionStore::new();
        let key = SessionKey::new(KEY.0, KEY.1);
        let mut cfg = config(Arc::new(store.clone()), SessionStoreFlush::Eager);
        cfg.max_bytes = 100;
        let restored = HashMap::from([(key.clone(), 90)]);
        let mirror = Mirror::start(cfg, restored, Weak::new());
        mirror.frame(frame(1));
        match mirror.flush().await {
            Err(Error::TranscriptTooLarge {
                session_id,
                size,
                limit: 100,
            }) => assert!(session_id == "s1" && size > 100),
            other => panic!("{other:?}"),
        }
        assert!(store.entries(&key).is_empty());
    }

    #[tokio::test]
    async fn a_frame_outside_the_projects_folder_is_an_error() {
        let mirror = Mirror::start(
            config(
                Arc::new(InMemorySessionStore::new()),
                SessionStoreFlush::Batched,
            ),
            HashMap::new(),
            Weak::new(),
        );
        mirror.frame(
            json!({"type": "transcript_mirror", "filePath": "/elsewhere/-w/s1.jsonl",
                            "entries": [{"type": "user"}]}),
        );
        let error = mirror.flush().await.unwrap_err();
        assert!(error.to_string().contains("mirror"), "{error}");
        let Error::SessionStore { source, .. } = &error else {
            panic!("{error:?}")
        };
        assert!(
            source.to_string().contains("/elsewhere/-w/s1.jsonl"),
            "{source}"
        );
    }

    #[test]
    fn transcript_paths_map_to_keys() {
        let projects = Path::new("/c/projects");
        let main = key_of(Path::new("/c/projects/-w/abc.jsonl"), projects).unwrap();
        assert_eq!(
            (main.project_key.as_str(), main.session_id.as_str()),
            ("-w", "abc")
        );
        assert_eq!(main.subpath, None);
        let sub = key_of(
            Path::new("/c/projects/-w/abc/subagents/agent-1.jsonl"),
            projects,
        )
        .unwrap();
        assert_eq!(sub.subpath.as_deref(), Some("subagents/agent-1"));
        assert!(key_of(Path::new("/elsewhere/-w/abc.jsonl"), projects).is_none());
        assert!(key_of(Path::new("/c/projects/-w/abc/x.jsonl"), projects).is_none());
        assert!(key_of(Path::new("/c/projects/-w/abc.txt"), projects).is_none());
    }
}
