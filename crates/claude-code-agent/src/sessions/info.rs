//! Listing sessions and describing one: each from the file's metadata and
//! its first and last 64 KiB, as the official SDKs do (never the whole
//! file).

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use serde_json::Value;

use super::paths::{
    MAX_SANITIZED_LENGTH, canonicalize, check_uuid, find_project_dir, is_absent, is_uuid,
    project_dirs, projects_dir, sanitize_path, search_projects, worktree_paths,
};
use super::scan::{
    first_non_empty, first_prompt, first_string_field, is_generated_prompt, last_non_empty,
    last_string_field,
};
use super::time::{parse_iso_ms, system_time_ms};
use super::{SessionError, SessionInfo, SessionOptions};

/// How much of each end of a session file listing reads.
pub(crate) const LITE_READ_BUF_SIZE: usize = 64 * 1024;

/// The most of `archived.json` read.
const ARCHIVE_MAX_BYTES: u64 = 4096;

/// A session file's metadata and both ends.
pub(crate) struct Lite {
    pub(crate) mtime: i64,
    pub(crate) size: u64,
    pub(crate) head: String,
    pub(crate) tail: String,
}

/// Reads the first and last 64 KiB of a file (the same text when it is
/// smaller), decoded as UTF-8 with invalid bytes replaced. `None` for an
/// empty or missing file.
pub(crate) fn read_lite(path: &Path) -> io::Result<Option<Lite>> {
    let mut file = match File::open(path) {
        Ok(f) => f,
        Err(e) if is_absent(&e) => {
            return Ok(None);
        }
        Err(e) => return Err(e),
    };
    let meta = file.metadata()?;
    let size = meta.len();
    let mtime = system_time_ms(meta.modified()?);
    let mut head = Vec::with_capacity(LITE_READ_BUF_SIZE.min(size as usize));
    (&mut file)
        .take(LITE_READ_BUF_SIZE as u64)
        .read_to_end(&mut head)?;
    if head.is_empty() {
        return Ok(None);
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let tail = if size <= LITE_READ_BUF_SIZE as u64 {
        head.clone()
    } else {
        file.seek(SeekFrom::Start(size - LITE_READ_BUF_SIZE as u64))?;
        let mut tail = Vec::with_capacity(LITE_READ_BUF_SIZE);
        file.take(LITE_READ_BUF_SIZE as u64)
            .read_to_end(&mut tail)?;
        String::from_utf8_lossy(&tail).into_owned()
    };
    Ok(Some(Lite {
        mtime,
        size,
        head,
        tail,
    }))
}

impl Lite {
    /// The ends of a whole transcript's text, as [`read_lite`] reads a file.
    pub(crate) fn of_text(text: &str, mtime: i64) -> Lite {
        let bytes = text.as_bytes();
        let head = String::from_utf8_lossy(&bytes[..bytes.len().min(LITE_READ_BUF_SIZE)]);
        let tail =
            String::from_utf8_lossy(&bytes[bytes.len().saturating_sub(LITE_READ_BUF_SIZE)..]);
        Lite {
            mtime,
            size: bytes.len() as u64,
            head: head.into_owned(),
            tail: tail.into_owned(),
        }
    }
}

/// A session's title: the last `customTitle` (end, then start of the file),
/// else the last `aiTitle`.
pub(crate) fn title(head: &str, tail: &str) -> Option<String> {
    last_non_empty(tail, "customTitle")
        .or_else(|| last_non_empty(head, "customTitle"))
        .or_else(|| last_non_empty(tail, "aiTitle"))
        .or_else(|| last_non_empty(head, "aiTitle"))
}

/// The session described by a file's ends; `None` for a subagent's
/// transcript (its first line is a sidechain entry) or a file with no title,
/// prompt or summary (metadata only).
pub(crate) fn parse_info(
    session_id: &str,
    lite: &Lite,
    project_path: Option<&str>,
) -> Option<SessionInfo> {
    let (head, tail) = (lite.head.as_str(), lite.tail.as_str());
    let first_line = head.split('\n').next().unwrap_or("");
    if first_line.contains("\"isSidechain\":true") || first_line.contains("\"isSidechain\": true") {
        return None;
    }
    let custom_title = title(head, tail);
    let first_prompt = Some(first_prompt(head)).filter(|p| !p.is_empty());
    let summary = custom_title
        .clone()
        .or_else(|| last_non_empty(tail, "lastPrompt"))
        .or_else(|| last_non_empty(tail, "summary"))
        .or_else(|| first_prompt.clone())?;
    let git_branch =
        last_non_empty(tail, "gitBranch").or_else(|| first_non_empty(head, "gitBranch"));
    let cwd = first_non_empty(head, "cwd").or_else(|| project_path.map(str::to_owned));
    // Only `{"type":"tag"` lines: a bare "tag" key is common in tool inputs.
    let tag = tail
        .split('\n')
        .rev()
        .find(|l| l.starts_with("{\"type\":\"tag\""))
        .and_then(|l| last_non_empty(l, "tag"));
    let created_at = first_string_field(head, "timestamp").and_then(|t| parse_iso_ms(&t));
    Some(SessionInfo {
        session_id: session_id.to_owned(),
        summary,
        last_modified: lite.mtime,
        file_size: lite.size,
        custom_title,
        first_prompt,
        git_branch,
        cwd,
        tag,
        created_at,
        archived: None,
    })
}

/// Whether a session was started by a program (the SDKs' and `claude -p`'s
/// entry points) or a daemon, as the TypeScript SDK tells.
pub(crate) fn is_programmatic(lite: &Lite) -> bool {
    let entrypoint = first_string_field(&lite.head, "entrypoint")
        .or_else(|| last_string_field(&lite.tail, "entrypoint"));
    if entrypoint.is_some_and(|e| matches!(e.as_str(), "sdk-cli" | "sdk-ts" | "sdk-py")) {
        return true;
    }
    let line = lite
        .head
        .split('\n')
        .find(|l| l.contains("\"parentUuid\":"))
        .unwrap_or(&lite.head);
    matches!(
        first_string_field(line, "sessionKind").as_deref(),
        Some("daemon" | "daemon-worker")
    )
}

/// `<project>/<id>/archived.json`: where `archive_session` keeps the mark.
pub(crate) fn archive_file(project_dir: &Path, session_id: &str) -> std::path::PathBuf {
    project_dir.join(session_id).join("archived.json")
}

/// Whether the session is archived: `None` without a mark; a mark saying
/// archived is void once a later prompt is in the file's ends.
fn archived(project_dir: &Path, session_id: &str, lite: &Lite) -> Option<bool> {
    let mut text = String::new();
    File::open(archive_file(project_dir, session_id))
        .ok()?
        .take(ARCHIVE_MAX_BYTES + 1)
        .read_to_string(&mut text)
        .ok()?;
    if text.len() as u64 > ARCHIVE_MAX_BYTES {
        return None;
    }
    let mark: Value = serde_json::from_str(&text).ok()?;
    let is_archived = mark.get("archived")?.as_bool()?;
    let at = parse_iso_ms(mark.get("at")?.as_str()?)?;
    if !is_archived {
        return Some(false);
    }
    let later = |text: &str| text.split('\n').any(|l| is_prompt_after(l, at));
    Some(!(later(&lite.tail) || (lite.head != lite.tail && later(&lite.head))))
}

/// Whether a transcript line is a prompt from a person (or a queued one)
/// sent after `at_ms`.
fn is_prompt_after(line: &str, at_ms: i64) -> bool {
    if !(line.contains("\"user\"") || line.contains("\"queued_command\""))
        || line.contains("\"tool_result\"")
    {
        return false;
    }
    let Ok(entry) = serde_json::from_str::<Value>(line) else {
        return false;
    };
    let flag = |v: &Value, k: &str| v.get(k).and_then(Value::as_bool).unwrap_or(false);
    if [
        "isCompactSummary",
        "isSidechain",
        "isVirtual",
        "isVisibleInTranscriptOnly",
        "isMeta",
    ]
    .iter()
    .any(|k| flag(&entry, k))
    {
        return false;
    }
    let (content, origin) = match entry.get("type").and_then(Value::as_str) {
        Some("user") => (entry.pointer("/message/content"), entry.get("origin")),
        Some("attachment") => {
            let a = entry.get("attachment");
            if a.and_then(|a| a.get("type")).and_then(Value::as_str) != Some("queued_command") {
                return false;
            }
            (
                a.and_then(|a| a.get("prompt")),
                a.and_then(|a| a.get("origin")),
            )
        }
        _ => return false,
    };
    if origin.is_some_and(|o| o.get("kind").and_then(Value::as_str) != Some("human")) {
        return false;
    }
    let is_prompt = match content {
        Some(Value::String(s)) => !s.trim().is_empty() && !is_generated_prompt(s.trim()),
        Some(Value::Array(blocks)) => {
            blocks
                .iter()
                .any(|b| match b.get("type").and_then(Value::as_str) {
                    Some("text") => b
                        .get("text")
                        .and_then(Value::as_str)
                        .is_some_and(|t| !t.trim().is_empty() && !is_generated_prompt(t.trim())),
                    Some("image" | "document") => true,
                    _ => false,
                })
        }
        _ => false,
    };
    is_prompt
        && entry
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(parse_iso_ms)
            .is_some_and(|t| t > at_ms)
}

/// The sessions in one project folder.
fn read_dir_sessions(project_dir: &Path, project_path: Option<&str>) -> Vec<(SessionInfo, bool)> {
    let entries = match std::fs::read_dir(project_dir) {
        Ok(entries) => entries,
        Err(e) => {
            tracing::debug!("sessions: cannot list {}: {e}", project_dir.display());
            return Vec::new();
        }
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(id) = name.to_str().and_then(|n| n.strip_suffix(".jsonl")) else {
            continue;
        };
        if !is_uuid(id) {
            continue;
        }
        let lite = match read_lite(&entry.path()) {
            Ok(Some(lite)) => lite,
            Ok(None) => continue,
            Err(e) => {
                tracing::debug!("sessions: cannot read {}: {e}", entry.path().display());
                continue;
            }
        };
        if let Some(mut info) = parse_info(id, &lite, project_path) {
            info.archived = archived(project_dir, id, &lite);
            out.push((info, is_programmatic(&lite)));
        }
    }
    out
}

/// See [`list_sessions`](super::list_sessions).
pub(crate) fn list(options: &SessionOptions) -> Result<Vec<SessionInfo>, SessionError> {
    let projects = projects_dir(options)?;
    let mut found = Vec::new();
    match &options.dir {
        Some(dir) => {
            let canonical = canonicalize(dir);
            let worktrees = if options.include_worktrees {
                worktree_paths(&canonical)
            } else {
                Vec::new()
            };
            let own = find_project_dir(&projects, &canonical);
            if let Some(own) = &own {
                found.extend(read_dir_sessions(own, Some(&canonical)));
            }
            if worktrees.len() > 1 {
                // Longest first, so that the most specific worktree wins.
                let mut prefixes: Vec<(String, String)> = worktrees
                    .into_iter()
                    .map(|wt| (sanitize_path(&wt), wt))
                    .collect();
                prefixes.sort_by_key(|(p, _)| std::cmp::Reverse(p.len()));
                for project in project_dirs(&projects)? {
                    if Some(&project) == own.as_ref() {
                        continue;
                    }
                    let name = project
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    // A prefix match only for names cut at 200 (a hash follows);
                    // otherwise /a/project would take /a/project-foo's sessions.
                    let matched = prefixes.iter().find(|(p, _)| {
                        name == *p
                            || (p.len() >= MAX_SANITIZED_LENGTH
                                && name.starts_with(&format!("{p}-")))
                    });
                    if let Some((_, wt)) = matched {
                        found.extend(read_dir_sessions(&project, Some(wt)));
                    }
                }
            }
        }
        None => {
            for project in project_dirs(&projects)? {
                found.extend(read_dir_sessions(&project, None));
            }
        }
    }
    // One entry per session (the newest file wins), newest first.
    found.sort_by(|(a, _), (b, _)| {
        b.last_modified
            .cmp(&a.last_modified)
            .then_with(|| a.session_id.cmp(&b.session_id))
    });
    let mut seen = std::collections::HashSet::new();
    let sessions = found
        .into_iter()
        .filter(|(_, programmatic)| options.include_programmatic || !programmatic)
        .map(|(info, _)| info)
        .filter(|info| seen.insert(info.session_id.clone()))
        .skip(options.offset);
    Ok(match options.limit.filter(|&n| n > 0) {
        Some(n) => sessions.take(n).collect(),
        None => sessions.collect(),
    })
}

/// See [`session_info`](super::session_info).
pub(crate) fn info(
    session_id: &str,
    options: &SessionOptions,
) -> Result<Option<SessionInfo>, SessionError> {
    check_uuid(session_id)?;
    let file_name = format!("{session_id}.jsonl");
    let (found, _) = search_projects(options, |project, project_path| {
        let path = project.join(&file_name);
        let lite = read_lite(&path).map_err(|e| SessionError::io("read", &path, e))?;
        Ok(lite.map(|lite| {
            parse_info(session_id, &lite, project_path).map(|mut info| {
                info.archived = archived(project, session_id, &lite);
                info
            })
        }))
    })?;
    Ok(found.flatten())
}
