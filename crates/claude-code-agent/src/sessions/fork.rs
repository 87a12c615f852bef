//! Forking a session: a new transcript with the same conversation (up to a
//! message, if asked), every entry under a fresh id, that the CLI resumes as
//! any other session.

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::Write;
#[cfg(unix)]
use std::os::unix::fs::OpenOptionsExt;

use serde_json::{Map, Value, json};

use super::chain::Entry;
use super::info::{Lite, title};
use super::paths::{check_uuid, locate_session};
use super::scan::first_prompt;
use super::time::now_iso;
use super::transcript::read_text;
use super::{ForkOptions, SessionError, SessionOptions};

/// The entry types a fork copies (progress entries only link the chain and
/// are left out).
const FORK_TYPES: [&str; 5] = ["user", "assistant", "attachment", "system", "progress"];

/// Fields that belong to the source session's writer, not to the fork.
const DROPPED_FIELDS: [&str; 4] = ["teamName", "agentName", "slug", "sourceToolAssistantUUID"];

/// A random (version 4) UUID.
pub(crate) fn new_uuid() -> String {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).expect("the operating system's random source");
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

fn str_of<'a>(e: &'a Entry, key: &str) -> Option<&'a str> {
    e.get(key).and_then(Value::as_str)
}

/// The transcript entries (chain types with a string `uuid`, sidechains
/// left out) and the replacement records of `content-replacement` entries
/// of this session, in file order.
fn parse_source(content: &str, session_id: &str) -> (Vec<Entry>, Vec<Value>) {
    let mut transcript = Vec::new();
    let mut replacements = Vec::new();
    for line in content.split('\n').map(str::trim).filter(|l| !l.is_empty()) {
        let Ok(Value::Object(entry)) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let kind = str_of(&entry, "type").unwrap_or_default();
        if FORK_TYPES.contains(&kind) && entry.get("uuid").is_some_and(Value::is_string) {
            if !super::chain::truthy(&entry, "isSidechain") {
                transcript.push(entry);
            }
        } else if kind == "content-replacement"
            && str_of(&entry, "sessionId") == Some(session_id)
            && let Some(Value::Array(r)) = entry.get("replacements")
        {
            replacements.extend(r.iter().cloned());
        }
    }
    (transcript, replacements)
}

/// See [`fork_session`](super::fork_session).
pub(crate) fn fork(
    session_id: &str,
    fork: &ForkOptions,
    options: &SessionOptions,
) -> Result<String, SessionError> {
    check_uuid(session_id)?;
    if let Some(id) = &fork.up_to_message_id {
        check_uuid(id)?;
    }
    let located = locate_session(session_id, options)?;
    let content = read_text(&located.path)?;
    let (fork_id, lines) = fork_lines(&content, session_id, fork, &located.path)?;
    let path = located.project_dir.join(format!("{fork_id}.jsonl"));
    let mut data = lines.join("\n");
    data.push('\n');
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    // Windows: the folder's permissions (the user's profile: the user's).
    #[cfg(unix)]
    options.mode(0o600);
    let mut file = options
        .open(&path)
        .map_err(|e| SessionError::io("create", &path, e))?;
    let written = file
        .write_all(data.as_bytes())
        .and_then(|()| file.sync_all());
    if let Err(e) = written {
        let _ = std::fs::remove_file(&path);
        return Err(SessionError::io("write", &path, e));
    }
    Ok(fork_id)
}

/// The fork of a transcript's text: its new id and its lines. `source`
/// names the transcript in errors.
pub(crate) fn fork_lines(
    content: &str,
    session_id: &str,
    fork: &ForkOptions,
    source: &std::path::Path,
) -> Result<(String, Vec<String>), SessionError> {
    let (mut transcript, replacements) = parse_source(content, session_id);
    let nothing = || SessionError::NothingToFork {
        session_id: session_id.to_owned(),
        path: source.to_owned(),
    };
    if transcript.is_empty() {
        return Err(nothing());
    }
    if let Some(cut) = &fork.up_to_message_id {
        let at = transcript
            .iter()
            .position(|e| str_of(e, "uuid") == Some(cut.as_str()))
            .ok_or_else(|| SessionError::MessageNotFound {
                session_id: session_id.to_owned(),
                message_id: cut.clone(),
                path: source.to_owned(),
            })?;
        transcript.truncate(at + 1);
    }
    // Progress entries get ids too: parents are re-linked past them.
    let mapping: HashMap<String, String> = transcript
        .iter()
        .map(|e| (str_of(e, "uuid").unwrap_or_default().to_owned(), new_uuid()))
        .collect();
    let by_uuid: HashMap<&str, &Entry> = transcript
        .iter()
        .map(|e| (str_of(e, "uuid").unwrap_or_default(), e))
        .collect();
    let writable: Vec<&Entry> = transcript
        .iter()
        .filter(|e| str_of(e, "type") != Some("progress"))
        .collect();
    if writable.is_empty() {
        return Err(nothing());
    }
    let fork_id = new_uuid();
    let now = now_iso();
    let mut lines = Vec::with_capacity(writable.len() + 2);
    for (n, original) in writable.iter().enumerate() {
        let old_uuid = str_of(original, "uuid").unwrap_or_default();
        // The nearest ancestor that is not a progress entry.
        let mut new_parent = Value::Null;
        let mut parent_id = str_of(original, "parentUuid").filter(|p| !p.is_empty());
        while let Some(p) = parent_id {
            let Some(parent) = by_uuid.get(p) else {
                break;
            };
            if str_of(parent, "type") != Some("progress") {
                new_parent = mapping.get(p).cloned().map_or(Value::Null, Value::String);
                break;
            }
            parent_id = str_of(parent, "parentUuid").filter(|p| !p.is_empty());
        }
        let mut forked: Map<String, Value> = (*original).clone();
        forked.insert("uuid".into(), Value::String(mapping[old_uuid].clone()));
        forked.insert("parentUuid".into(), new_parent);
        if let Some(logical) = forked.get("logicalParentUuid").and_then(Value::as_str) {
            // A compaction's link back: remapped when it points into the copy.
            let remapped = mapping
                .get(logical)
                .cloned()
                .map_or(Value::Null, Value::String);
            forked.insert("logicalParentUuid".into(), remapped);
        }
        forked.insert("sessionId".into(), Value::String(fork_id.clone()));
        // The last entry is stamped now, so that resuming takes it as the leaf.
        if n == writable.len() - 1 || !forked.contains_key("timestamp") {
            forked.insert("timestamp".into(), Value::String(now.clone()));
        }
        forked.insert("isSidechain".into(), Value::Bool(false));
        forked.insert(
            "forkedFrom".into(),
            json!({"sessionId": session_id, "messageUuid": old_uuid}),
        );
        for key in DROPPED_FIELDS {
            forked.shift_remove(key);
        }
        lines.push(Value::Object(forked).to_string());
    }
    if !replacements.is_empty() {
        lines.push(
            json!({
                "type": "content-replacement",
                "sessionId": fork_id,
                "replacements": replacements,
                "uuid": new_uuid(),
                "timestamp": now,
            })
            .to_string(),
        );
    }
    let title = match fork
        .title
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty())
    {
        Some(t) => t.to_owned(),
        None => format!(
            "{} (fork)",
            derived_title(content).unwrap_or_else(|| "Forked session".to_owned())
        ),
    };
    lines.push(
        json!({
            "type": "custom-title",
            "sessionId": fork_id,
            "customTitle": title,
            "uuid": new_uuid(),
            "timestamp": now,
        })
        .to_string(),
    );
    Ok((fork_id, lines))
}

/// The source's title, from its ends as listing reads it, else its first
/// prompt.
fn derived_title(content: &str) -> Option<String> {
    let lite = Lite::of_text(content, 0);
    title(&lite.head, &lite.tail)
        .or_else(|| Some(first_prompt(&lite.head)).filter(|p| !p.is_empty()))
}
