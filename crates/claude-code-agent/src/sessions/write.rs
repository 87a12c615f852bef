//! Changing sessions: rename and tag (a line appended to the transcript, as
//! the CLI itself records them), delete, archive and unarchive.
//!
//! Appends open the existing file with `O_APPEND` and never create one: a
//! session that disappeared is an error, not a new one-line file, and the
//! kernel puts each write at the end even while the CLI writes too. A CLI
//! that has the session open reads the file's end before it re-appends its
//! own title, so what was appended here wins there as well.

use std::fs::OpenOptions;
use std::io::{self, Write};
#[cfg(unix)]
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde_json::json;
use unicode_general_category::{GeneralCategory, get_general_category};
use unicode_normalization::UnicodeNormalization;

use super::info::archive_file;
use super::paths::{check_uuid, is_absent, locate_session, non_empty_file, search_projects};
use super::time::now_iso;
use super::{SessionError, SessionOptions};

/// Appends `line` to an existing, non-empty file; `false` when there is no
/// such file here (so the search goes on).
fn try_append(path: &Path, line: &str) -> Result<bool, SessionError> {
    let mut file = match OpenOptions::new().append(true).open(path) {
        Ok(f) => f,
        Err(e) if is_absent(&e) => {
            return Ok(false);
        }
        Err(e) => return Err(SessionError::io("open for appending", path, e)),
    };
    let size = file
        .metadata()
        .map_err(|e| SessionError::io("inspect", path, e))?
        .len();
    if size == 0 {
        return Ok(false);
    }
    file.write_all(line.as_bytes())
        .map_err(|e| SessionError::io("append to", path, e))?;
    Ok(true)
}

/// Appends one JSON line to a session's transcript, wherever it is.
fn append_entry(
    session_id: &str,
    entry: serde_json::Value,
    options: &SessionOptions,
) -> Result<(), SessionError> {
    let line = format!("{entry}\n");
    let file_name = format!("{session_id}.jsonl");
    let (done, searched) = search_projects(options, |project, _| {
        Ok(try_append(&project.join(&file_name), &line)?.then_some(()))
    })?;
    done.ok_or_else(|| SessionError::NotFound {
        session_id: session_id.to_owned(),
        searched,
    })
}

/// See [`rename_session`](super::rename_session).
pub(crate) fn rename(
    session_id: &str,
    title: &str,
    options: &SessionOptions,
) -> Result<(), SessionError> {
    append_entry(session_id, title_entry(session_id, title)?, options)
}

/// The transcript line that sets a session's title.
pub(crate) fn title_entry(
    session_id: &str,
    title: &str,
) -> Result<serde_json::Value, SessionError> {
    check_uuid(session_id)?;
    let title = title.trim();
    if title.is_empty() {
        return Err(SessionError::Empty { what: "title" });
    }
    Ok(json!({"type": "custom-title", "customTitle": title, "sessionId": session_id}))
}

/// See [`tag_session`](super::tag_session).
pub(crate) fn tag(
    session_id: &str,
    tag: Option<&str>,
    options: &SessionOptions,
) -> Result<(), SessionError> {
    append_entry(session_id, tag_entry(session_id, tag)?, options)
}

/// The transcript line that sets (or with `None` clears) a session's tag.
pub(crate) fn tag_entry(
    session_id: &str,
    tag: Option<&str>,
) -> Result<serde_json::Value, SessionError> {
    check_uuid(session_id)?;
    let tag = match tag {
        Some(t) => {
            let clean = sanitize_tag(t);
            if clean.is_empty() {
                return Err(SessionError::Empty { what: "tag" });
            }
            clean
        }
        None => String::new(),
    };
    Ok(json!({"type": "tag", "tag": tag, "sessionId": session_id}))
}

/// Whether a character is dropped from tags: format (Cf), private-use (Co)
/// or unassigned (Cn), and the explicit ranges the SDKs also list
/// (zero-width and directional marks, the byte-order mark).
fn is_dropped(c: char) -> bool {
    matches!(
        get_general_category(c),
        GeneralCategory::Format | GeneralCategory::PrivateUse | GeneralCategory::Unassigned
    ) || matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}' | '\u{E000}'..='\u{F8FF}')
}

/// A tag as the SDKs store it: NFKC-normalised and stripped of invisible and
/// private characters (Unicode categories Cf, Co and Cn; zero-width and
/// directional marks, the byte-order mark) until that changes nothing (at
/// most ten rounds), then trimmed.
///
/// ```
/// use claude_code_agent::sessions::sanitize_tag;
/// assert_eq!(sanitize_tag(" exp\u{200b}1 "), "exp1");
/// assert_eq!(sanitize_tag("ｆｕｌｌ"), "full");
/// ```
pub fn sanitize_tag(tag: &str) -> String {
    let mut current = tag.to_owned();
    for _ in 0..10 {
        let next: String = current.nfkc().filter(|&c| !is_dropped(c)).collect();
        if next == current {
            break;
        }
        current = next;
    }
    current.trim().to_owned()
}

/// See [`delete_session`](super::delete_session).
pub(crate) fn delete(session_id: &str, options: &SessionOptions) -> Result<(), SessionError> {
    let located = locate_session(session_id, options)?;
    match std::fs::remove_file(&located.path) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(SessionError::NotFound {
                session_id: session_id.to_owned(),
                searched: vec![located.project_dir],
            });
        }
        Err(e) => return Err(SessionError::io("delete", &located.path, e)),
    }
    let dir = located.project_dir.join(session_id);
    match std::fs::remove_dir_all(&dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(SessionError::io(
            "delete the subagent transcripts in",
            dir,
            e,
        )),
    }
}

/// See [`archive_session`](super::archive_session) and
/// [`unarchive_session`](super::unarchive_session): writes
/// `<project>/<id>/archived.json` beside every copy of the session.
pub(crate) fn set_archived(
    session_id: &str,
    archived: bool,
    options: &SessionOptions,
) -> Result<(), SessionError> {
    check_uuid(session_id)?;
    let file_name = format!("{session_id}.jsonl");
    let mut projects: Vec<PathBuf> = Vec::new();
    let (_, searched) = search_projects(options, |project, _| {
        if non_empty_file(&project.join(&file_name)) {
            projects.push(project.to_owned());
        }
        Ok(None::<()>)
    })?;
    if projects.is_empty() {
        return Err(SessionError::NotFound {
            session_id: session_id.to_owned(),
            searched,
        });
    }
    let mark = format!(
        "{}",
        json!({"archived": archived, "at": now_iso(), "by": "sdk"})
    );
    for project in projects {
        write_private(&archive_file(&project, session_id), mark.as_bytes())?;
    }
    Ok(())
}

/// Writes a file readable by its owner only (0600, its folder 0700 if
/// created; Windows: the permissions the folder passes on, in the user's
/// profile the user's), replacing it whole: a temporary file renamed over
/// it.
fn write_private(path: &Path, data: &[u8]) -> Result<(), SessionError> {
    replace_private(path, data).map_err(|e| SessionError::io("write", path, e))
}

/// [`write_private`]'s I/O, for the session store's restore too.
pub(crate) fn replace_private(path: &Path, data: &[u8]) -> io::Result<()> {
    let dir = path.parent().expect("a file in a folder");
    let mut dirs = std::fs::DirBuilder::new();
    dirs.recursive(true);
    #[cfg(unix)]
    dirs.mode(0o700);
    dirs.create(dir)?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut options = OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        options.mode(0o600);
        let mut file = options.open(&tmp)?;
        file.write_all(data)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::sanitize_tag;

    #[test]
    fn tags_lose_invisible_and_private_characters() {
        assert_eq!(sanitize_tag("exp\u{200b}1"), "exp1");
        assert_eq!(sanitize_tag("\u{202e}rtl\u{2066}\u{feff}"), "rtl");
        assert_eq!(sanitize_tag("a\u{e000}b\u{f8ff}c"), "abc");
        // private use beyond the BMP (Co) and an unassigned code point (Cn)
        assert_eq!(sanitize_tag("x\u{f0000}\u{10ffff}y"), "xy");
        // NFKC: compatibility forms fold, composed forms compose
        assert_eq!(sanitize_tag("ﬁ①"), "fi1");
        assert_eq!(sanitize_tag("e\u{301}"), "\u{e9}");
        // soft hyphen and zero-width joiner are format characters
        assert_eq!(sanitize_tag("so\u{ad}ft\u{200d}"), "soft");
        assert_eq!(sanitize_tag("  \u{200b} "), "");
        assert_eq!(sanitize_tag("plain tag"), "plain tag");
    }
}
