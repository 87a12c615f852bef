//! [`DirSessionStore`]: transcripts as JSONL files under a folder.

use std::fs::OpenOptions;
use std::io::{self, Write};
#[cfg(unix)]
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{
    SessionKey, SessionStore, StoreError, StoreFuture, StoredSession, check_key, from_jsonl,
    io_error, to_jsonl,
};
use crate::sessions::time::system_time_ms;

/// A [`SessionStore`] in a folder, laid out as the CLI lays out its own:
/// `<root>/<project key>/<session id>.jsonl`, a subagent's transcript at
/// `<root>/<project key>/<session id>/<subpath>.jsonl`. Files and folders
/// are created readable by their owner only.
///
/// For a folder every worker mounts (NFS, a shared volume). An append is
/// one `write` to a file opened with `O_APPEND`, so appends of other
/// processes do not interleave within a batch on a local file system.
/// The file operations run on Tokio's blocking pool.
#[derive(Debug, Clone)]
pub struct DirSessionStore {
    root: PathBuf,
}

impl DirSessionStore {
    /// A store under `root` (created when first written to).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        DirSessionStore { root: root.into() }
    }

    /// The folder the store keeps its transcripts under.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn path(&self, key: &SessionKey) -> Result<PathBuf, StoreError> {
        check_key(key)?;
        let project = self.root.join(&key.project_key);
        Ok(match &key.subpath {
            None => project.join(format!("{}.jsonl", key.session_id)),
            Some(sub) => project.join(&key.session_id).join(format!("{sub}.jsonl")),
        })
    }
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| StoreError::new("a session store task failed").with_source(e))?
}

fn absent(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::NotFound
}

/// Every `*.jsonl` under `dir`, as paths relative to it without `.jsonl`.
fn walk(dir: &Path, prefix: &str, found: &mut Vec<String>) -> Result<(), StoreError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if absent(&e) => return Ok(()),
        Err(e) => return Err(io_error("list", dir, e)),
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let rel = if prefix.is_empty() {
            name.to_owned()
        } else {
            format!("{prefix}/{name}")
        };
        if path.is_dir() {
            walk(&path, &rel, found)?;
        } else if let Some(sub) = rel.strip_suffix(".jsonl") {
            found.push(sub.to_owned());
        }
    }
    Ok(())
}

impl SessionStore for DirSessionStore {
    fn append<'a>(&'a self, key: &'a SessionKey, entries: &'a [Value]) -> StoreFuture<'a, ()> {
        let path = self.path(key);
        let data = to_jsonl(entries);
        Box::pin(async move {
            let path = path?;
            blocking(move || {
                let dir = path.parent().expect("a file in a folder");
                // Readable by its owner only (Windows: what the folder
                // passes on).
                let mut dirs = std::fs::DirBuilder::new();
                dirs.recursive(true);
                #[cfg(unix)]
                dirs.mode(0o700);
                dirs.create(dir).map_err(|e| io_error("create", dir, e))?;
                let mut options = OpenOptions::new();
                options.append(true).create(true);
                #[cfg(unix)]
                options.mode(0o600);
                let mut file = options
                    .open(&path)
                    .map_err(|e| io_error("open", &path, e))?;
                file.write_all(data.as_bytes())
                    .and_then(|()| file.sync_data())
                    .map_err(|e| io_error("append to", &path, e))
            })
            .await
        })
    }

    fn load<'a>(&'a self, key: &'a SessionKey) -> StoreFuture<'a, Option<Vec<Value>>> {
        let path = self.path(key);
        Box::pin(async move {
            let path = path?;
            blocking(move || match std::fs::read(&path) {
                Ok(bytes) => Ok(Some(from_jsonl(&String::from_utf8_lossy(&bytes)))),
                Err(e) if absent(&e) => Ok(None),
                Err(e) => Err(io_error("read", &path, e)),
            })
            .await
        })
    }

    fn list_sessions<'a>(&'a self, project_key: &'a str) -> StoreFuture<'a, Vec<StoredSession>> {
        let probe = SessionKey::new(project_key, "probe");
        let dir = self.root.join(project_key);
        Box::pin(async move {
            check_key(&probe)?;
            blocking(move || {
                let entries = match std::fs::read_dir(&dir) {
                    Ok(entries) => entries,
                    Err(e) if absent(&e) => return Ok(Vec::new()),
                    Err(e) => return Err(io_error("list", &dir, e)),
                };
                let mut found = Vec::new();
                for entry in entries.flatten() {
                    let name = entry.file_name();
                    let Some(id) = name.to_str().and_then(|n| n.strip_suffix(".jsonl")) else {
                        continue;
                    };
                    let meta = entry
                        .metadata()
                        .map_err(|e| io_error("inspect", &entry.path(), e))?;
                    if meta.is_file() {
                        let mtime = meta.modified().map(system_time_ms).unwrap_or_default();
                        found.push(StoredSession::new(id, mtime));
                    }
                }
                Ok(found)
            })
            .await
        })
    }

    fn list_subkeys<'a>(
        &'a self,
        project_key: &'a str,
        session_id: &'a str,
    ) -> StoreFuture<'a, Vec<String>> {
        let probe = SessionKey::new(project_key, session_id);
        let dir = self.root.join(project_key).join(session_id);
        Box::pin(async move {
            check_key(&probe)?;
            blocking(move || {
                let mut found = Vec::new();
                walk(&dir, "", &mut found)?;
                found.sort();
                Ok(found)
            })
            .await
        })
    }

    fn delete<'a>(&'a self, key: &'a SessionKey) -> StoreFuture<'a, ()> {
        let path = self.path(key);
        let folder = self.root.join(&key.project_key).join(&key.session_id);
        let main = key.subpath.is_none();
        Box::pin(async move {
            let path = path?;
            blocking(move || {
                match std::fs::remove_file(&path) {
                    Ok(()) => {}
                    Err(e) if absent(&e) => {}
                    Err(e) => return Err(io_error("delete", &path, e)),
                }
                if main {
                    match std::fs::remove_dir_all(&folder) {
                        Ok(()) => {}
                        Err(e) if absent(&e) => {}
                        Err(e) => return Err(io_error("delete", &folder, e)),
                    }
                }
                Ok(())
            })
            .await
        })
    }
}
