//! Reading whole transcripts: a session's messages, its subagents and
//! theirs.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::chain::{build_chain, is_visible, page, parse_entries, subagent_chain, to_message};
use super::paths::{is_absent, locate_session};
use super::{SessionError, SessionMessage, SessionOptions};

/// A file's text (invalid UTF-8 replaced).
pub(crate) fn read_text(path: &Path) -> Result<String, SessionError> {
    let bytes = std::fs::read(path).map_err(|e| SessionError::io("read", path, e))?;
    Ok(match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

/// See [`session_messages`](super::session_messages).
pub(crate) fn messages(
    session_id: &str,
    options: &SessionOptions,
) -> Result<Vec<SessionMessage>, SessionError> {
    let located = locate_session(session_id, options)?;
    Ok(messages_of(&read_text(&located.path)?, options))
}

/// The conversation of a transcript's text, paged.
pub(crate) fn messages_of(content: &str, options: &SessionOptions) -> Vec<SessionMessage> {
    let entries = parse_entries(content);
    let visible: Vec<SessionMessage> = build_chain(&entries)
        .into_iter()
        .map(|i| &entries[i])
        .filter(|e| is_visible(e, options.include_system_messages))
        .map(|e| to_message(e, None, None))
        .collect();
    page(visible, options.offset, options.limit)
}

/// `<project>/<id>/subagents` of a session that exists.
fn subagents_dir(session_id: &str, options: &SessionOptions) -> Result<PathBuf, SessionError> {
    let located = locate_session(session_id, options)?;
    Ok(located.project_dir.join(session_id).join("subagents"))
}

/// Every `agent-<id>.jsonl` under `dir`, nested folders included (as
/// `subagents/workflows/<run>/`): `(id, path)`, depth first with each
/// folder's entries in name order, as the SDKs walk.
fn agent_files(dir: &Path) -> Result<Vec<(String, PathBuf)>, SessionError> {
    fn walk(dir: &Path, found: &mut Vec<(String, PathBuf)>) -> Result<(), SessionError> {
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) if is_absent(&e) => {
                return Ok(());
            }
            Err(e) => return Err(SessionError::io("list", dir, e)),
        };
        let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for path in paths {
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            if path.is_file()
                && let Some(id) = name
                    .strip_prefix("agent-")
                    .and_then(|n| n.strip_suffix(".jsonl"))
            {
                found.push((id.to_owned(), path.clone()));
            } else if path.is_dir() {
                walk(&path, found)?;
            }
        }
        Ok(())
    }
    let mut found = Vec::new();
    walk(dir, &mut found)?;
    Ok(found)
}

/// See [`list_subagents`](super::list_subagents).
pub(crate) fn list_subagents(
    session_id: &str,
    options: &SessionOptions,
) -> Result<Vec<String>, SessionError> {
    let dir = subagents_dir(session_id, options)?;
    Ok(agent_files(&dir)?.into_iter().map(|(id, _)| id).collect())
}

/// See [`subagent_messages`](super::subagent_messages).
pub(crate) fn subagent_messages(
    session_id: &str,
    agent_id: &str,
    options: &SessionOptions,
) -> Result<Vec<SessionMessage>, SessionError> {
    let dir = subagents_dir(session_id, options)?;
    let not_found = || SessionError::SubagentNotFound {
        session_id: session_id.to_owned(),
        agent_id: agent_id.to_owned(),
        dir: dir.clone(),
    };
    if agent_id.is_empty() {
        return Err(not_found());
    }
    let path = agent_files(&dir)?
        .into_iter()
        .find(|(id, _)| id == agent_id)
        .map(|(_, path)| path)
        .ok_or_else(not_found)?;
    let content = read_text(&path)?;
    // The sidecar `agent-<id>.meta.json` says which tool call started the
    // subagent; missing or unusable, it is as if absent.
    let meta_path = path.with_file_name(format!("agent-{agent_id}.meta.json"));
    let meta: Value = std::fs::read(&meta_path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(Value::Null);
    Ok(subagent_messages_of(&content, &meta, options))
}

/// A subagent's conversation from its transcript's text and its
/// `.meta.json` (`Null` if none), paged.
pub(crate) fn subagent_messages_of(
    content: &str,
    meta: &Value,
    options: &SessionOptions,
) -> Vec<SessionMessage> {
    let tool_use_id = meta.get("toolUseId").and_then(Value::as_str);
    let parent_agent_id = meta.get("parentAgentId").and_then(Value::as_str);
    let entries = parse_entries(content);
    let messages = subagent_chain(&entries)
        .into_iter()
        .map(|i| to_message(&entries[i], tool_use_id, parent_agent_id))
        .collect();
    page(messages, options.offset, options.limit)
}
