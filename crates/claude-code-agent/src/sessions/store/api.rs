//! The sessions API on a session store: the functions of
//! [`sessions`](crate::sessions) that read and change the CLI's files, on
//! the transcripts a [`SessionStore`] keeps instead.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{SessionKey, SessionStore, StoreError, to_jsonl};
use crate::sessions::fork::fork_lines;
use crate::sessions::info::{Lite, is_programmatic, parse_info};
use crate::sessions::paths::{canonicalize, check_uuid, locate_session};
use crate::sessions::transcript::{messages_of, read_text, subagent_messages_of};
use crate::sessions::write::{tag_entry, title_entry};
use crate::sessions::{
    ForkOptions, SessionError, SessionInfo, SessionMessage, SessionOptions, project_key,
};

/// The project key of [`SessionOptions::dir`] (else of the current
/// directory) and its canonical path.
fn project_of(options: &SessionOptions) -> Result<(String, String), SessionError> {
    let dir = match &options.dir {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().map_err(|e| SessionError::io("find", ".", e))?,
    };
    Ok((project_key(&dir), canonicalize(&dir)))
}

fn failed(action: &'static str, session_id: &str) -> impl FnOnce(StoreError) -> SessionError {
    let session_id = session_id.to_owned();
    move |source| SessionError::Store {
        action,
        session_id,
        source,
    }
}

/// How errors name a transcript kept in a store.
fn place(key: &SessionKey) -> PathBuf {
    PathBuf::from(format!("session store: {key}"))
}

/// The entries of a session's main transcript; `NotFound` when none.
async fn load_session(
    store: &(impl SessionStore + ?Sized),
    session_id: &str,
    options: &SessionOptions,
) -> Result<(SessionKey, Vec<Value>), SessionError> {
    check_uuid(session_id)?;
    let (project, _) = project_of(options)?;
    let key = SessionKey::new(project, session_id);
    match store.load(&key).await.map_err(failed("load", session_id))? {
        Some(entries) if !entries.is_empty() => Ok((key, entries)),
        _ => Err(SessionError::NotFound {
            session_id: session_id.to_owned(),
            searched: vec![place(&key)],
        }),
    }
}

/// The session's [`SessionInfo`] from its entries and store time.
fn info_of(
    session_id: &str,
    entries: &[Value],
    mtime: i64,
    cwd: &str,
) -> Option<(SessionInfo, bool)> {
    let lite = Lite::of_text(&to_jsonl(entries), mtime);
    let info = parse_info(session_id, &lite, Some(cwd))?;
    Some((info, is_programmatic(&lite)))
}

/// [`list_sessions`](crate::sessions::list_sessions) on a store: the
/// sessions it keeps for [`SessionOptions::dir`]'s project (else the
/// current directory's), newest first, paged and filtered as there
/// (`last_modified` is the store's time of the last append, `file_size`
/// the transcript's size as JSONL). Each listed session is loaded whole.
///
/// # Errors
///
/// [`SessionError::Store`] when the store cannot list or load.
pub async fn list_sessions_in_store(
    store: &(impl SessionStore + ?Sized),
    options: &SessionOptions,
) -> Result<Vec<SessionInfo>, SessionError> {
    let (project, cwd) = project_of(options)?;
    let mut listed = store
        .list_sessions(&project)
        .await
        .map_err(failed("list the sessions of the project of", ""))?;
    listed.sort_by(|a, b| {
        b.mtime
            .cmp(&a.mtime)
            .then_with(|| a.session_id.cmp(&b.session_id))
    });
    let mut found = Vec::new();
    for stored in listed {
        let key = SessionKey::new(project.clone(), stored.session_id.clone());
        let Some(entries) = store
            .load(&key)
            .await
            .map_err(failed("load", &stored.session_id))?
        else {
            continue;
        };
        if let Some((info, programmatic)) =
            info_of(&stored.session_id, &entries, stored.mtime, &cwd)
            && (options.include_programmatic || !programmatic)
        {
            found.push(info);
        }
    }
    let sessions = found.into_iter().skip(options.offset);
    Ok(match options.limit.filter(|&n| n > 0) {
        Some(n) => sessions.take(n).collect(),
        None => sessions.collect(),
    })
}

/// [`session_info`](crate::sessions::session_info) on a store; `None`
/// when it does not keep the session.
///
/// # Errors
///
/// [`SessionError::InvalidId`], [`SessionError::Store`].
pub async fn session_info_in_store(
    store: &(impl SessionStore + ?Sized),
    session_id: &str,
    options: &SessionOptions,
) -> Result<Option<SessionInfo>, SessionError> {
    check_uuid(session_id)?;
    let (project, cwd) = project_of(options)?;
    let listed = store
        .list_sessions(&project)
        .await
        .map_err(failed("list the sessions of the project of", session_id))?;
    let Some(stored) = listed.into_iter().find(|s| s.session_id == session_id) else {
        return Ok(None);
    };
    let key = SessionKey::new(project, session_id);
    let Some(entries) = store.load(&key).await.map_err(failed("load", session_id))? else {
        return Ok(None);
    };
    Ok(info_of(session_id, &entries, stored.mtime, &cwd).map(|(info, _)| info))
}

/// [`session_messages`](crate::sessions::session_messages) on a store.
///
/// # Errors
///
/// [`SessionError::InvalidId`], [`SessionError::NotFound`],
/// [`SessionError::Store`].
pub async fn session_messages_in_store(
    store: &(impl SessionStore + ?Sized),
    session_id: &str,
    options: &SessionOptions,
) -> Result<Vec<SessionMessage>, SessionError> {
    let (_, entries) = load_session(store, session_id, options).await?;
    Ok(messages_of(&to_jsonl(&entries), options))
}

/// The subagent id of a subpath (`subagents/…/agent-<id>`).
fn agent_of(subpath: &str) -> Option<&str> {
    if !subpath.starts_with("subagents/") {
        return None;
    }
    subpath.rsplit('/').next()?.strip_prefix("agent-")
}

/// [`list_subagents`](crate::sessions::list_subagents) on a store, in name
/// order.
///
/// # Errors
///
/// As [`session_messages_in_store`].
pub async fn list_subagents_in_store(
    store: &(impl SessionStore + ?Sized),
    session_id: &str,
    options: &SessionOptions,
) -> Result<Vec<String>, SessionError> {
    let (key, _) = load_session(store, session_id, options).await?;
    let mut subs = store
        .list_subkeys(&key.project_key, session_id)
        .await
        .map_err(failed("list the subagents of", session_id))?;
    subs.sort();
    Ok(subs
        .iter()
        .filter_map(|s| agent_of(s))
        .map(str::to_owned)
        .collect())
}

/// [`subagent_messages`](crate::sessions::subagent_messages) on a store
/// (the subagent's `agent_metadata` entry, as the SDK stores its
/// `.meta.json`, names the tool call that started it).
///
/// # Errors
///
/// [`SessionError::SubagentNotFound`], and as [`list_subagents_in_store`].
pub async fn subagent_messages_in_store(
    store: &(impl SessionStore + ?Sized),
    session_id: &str,
    agent_id: &str,
    options: &SessionOptions,
) -> Result<Vec<SessionMessage>, SessionError> {
    let (key, _) = load_session(store, session_id, options).await?;
    let subs = store
        .list_subkeys(&key.project_key, session_id)
        .await
        .map_err(failed("list the subagents of", session_id))?;
    let not_found = || SessionError::SubagentNotFound {
        session_id: session_id.to_owned(),
        agent_id: agent_id.to_owned(),
        dir: place(&key),
    };
    let sub = subs
        .into_iter()
        .find(|s| !agent_id.is_empty() && agent_of(s) == Some(agent_id))
        .ok_or_else(not_found)?;
    let sub_key = key.clone().with_subpath(sub);
    let entries = store
        .load(&sub_key)
        .await
        .map_err(failed("load", session_id))?
        .ok_or_else(not_found)?;
    let (meta, transcript): (Vec<Value>, Vec<Value>) = entries
        .into_iter()
        .partition(|e| e.get("type").and_then(Value::as_str) == Some("agent_metadata"));
    let meta = meta.into_iter().last().unwrap_or(Value::Null);
    Ok(subagent_messages_of(&to_jsonl(&transcript), &meta, options))
}

/// Appends one entry to a session the store keeps.
async fn append_to_session(
    store: &(impl SessionStore + ?Sized),
    session_id: &str,
    entry: Value,
    options: &SessionOptions,
) -> Result<(), SessionError> {
    let (key, _) = load_session(store, session_id, options).await?;
    store
        .append(&key, &[entry])
        .await
        .map_err(failed("append to", session_id))
}

/// [`rename_session`](crate::sessions::rename_session) on a store: the
/// title entry is appended to the stored transcript.
///
/// # Errors
///
/// [`SessionError::Empty`], and as [`session_messages_in_store`].
pub async fn rename_session_in_store(
    store: &(impl SessionStore + ?Sized),
    session_id: &str,
    title: &str,
    options: &SessionOptions,
) -> Result<(), SessionError> {
    let entry = title_entry(session_id, title)?;
    append_to_session(store, session_id, entry, options).await
}

/// [`tag_session`](crate::sessions::tag_session) on a store.
///
/// # Errors
///
/// As [`rename_session_in_store`].
pub async fn tag_session_in_store(
    store: &(impl SessionStore + ?Sized),
    session_id: &str,
    tag: Option<&str>,
    options: &SessionOptions,
) -> Result<(), SessionError> {
    let entry = tag_entry(session_id, tag)?;
    append_to_session(store, session_id, entry, options).await
}

/// [`fork_session`](crate::sessions::fork_session) on a store: the fork is
/// appended to the store under a new id in the same project, and a worker
/// resumes it from there (`Options::session_store` with `Options::resume`).
///
/// # Errors
///
/// [`SessionError::MessageNotFound`], [`SessionError::NothingToFork`], and
/// as [`session_messages_in_store`].
pub async fn fork_session_in_store(
    store: &(impl SessionStore + ?Sized),
    session_id: &str,
    fork: &ForkOptions,
    options: &SessionOptions,
) -> Result<String, SessionError> {
    if let Some(id) = &fork.up_to_message_id {
        check_uuid(id)?;
    }
    let (key, entries) = load_session(store, session_id, options).await?;
    let (fork_id, lines) = fork_lines(&to_jsonl(&entries), session_id, fork, &place(&key))?;
    let forked: Vec<Value> = lines
        .iter()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    store
        .append(&SessionKey::new(key.project_key, fork_id.clone()), &forked)
        .await
        .map_err(failed("append to", &fork_id))?;
    Ok(fork_id)
}

/// [`delete_session`](crate::sessions::delete_session) on a store: its
/// transcript and its subagents'.
///
/// # Errors
///
/// As [`session_messages_in_store`].
pub async fn delete_session_in_store(
    store: &(impl SessionStore + ?Sized),
    session_id: &str,
    options: &SessionOptions,
) -> Result<(), SessionError> {
    let (key, _) = load_session(store, session_id, options).await?;
    store
        .delete(&key)
        .await
        .map_err(failed("delete", session_id))
}

/// How many entries [`import_session_to_store`] appends at a time.
const IMPORT_BATCH: usize = 500;

/// Copies a session the CLI saved on this machine (found as
/// [`session_messages`](crate::sessions::session_messages) finds it) into
/// `store`, with its subagents' transcripts (each `.meta.json` as an
/// `agent_metadata` entry), under the key of its project folder, in batches
/// of 500 entries: for sessions started before the store was used. Run it
/// once per session: the store appends what it is given.
///
/// # Errors
///
/// [`SessionError::Store`], and as
/// [`session_messages`](crate::sessions::session_messages).
pub async fn import_session_to_store(
    store: &(impl SessionStore + ?Sized),
    session_id: &str,
    options: &SessionOptions,
) -> Result<(), SessionError> {
    let located = locate_session(session_id, options)?;
    let project = located
        .project_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let key = SessionKey::new(project, session_id);
    let mut files = vec![(key.clone(), located.path.clone(), None)];
    let folder = located.project_dir.join(session_id);
    let mut subs = Vec::new();
    collect_jsonl(&folder.join("subagents"), "subagents", &mut subs);
    subs.sort();
    for sub in subs {
        let path = folder.join(format!("{sub}.jsonl"));
        let meta = folder.join(format!("{sub}.meta.json"));
        files.push((key.clone().with_subpath(sub), path, Some(meta)));
    }
    for (key, path, meta) in files {
        let mut entries = super::from_jsonl(&read_text(&path)?);
        if let Some(Ok(Value::Object(mut m))) = meta
            .and_then(|m| std::fs::read(m).ok())
            .map(|b| serde_json::from_slice::<Value>(&b))
        {
            m.insert("type".into(), Value::String("agent_metadata".into()));
            entries.push(Value::Object(m));
        }
        for batch in entries.chunks(IMPORT_BATCH) {
            store
                .append(&key, batch)
                .await
                .map_err(failed("append to", session_id))?;
        }
    }
    Ok(())
}

/// Every `*.jsonl` under `dir`, as `<prefix>/<relative path>` without
/// `.jsonl`.
fn collect_jsonl(dir: &Path, prefix: &str, found: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let rel = format!("{prefix}/{name}");
        if path.is_dir() {
            collect_jsonl(&path, &rel, found);
        } else if let Some(sub) = rel.strip_suffix(".jsonl") {
            found.push(sub.to_owned());
        }
    }
}
