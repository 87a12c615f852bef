//! What the sessions API returns, and its error type.

use std::path::PathBuf;

use serde::Serialize;
use serde_json::{Map, Value};

/// One session, as [`list_sessions`](super::list_sessions) and
/// [`session_info`](super::session_info) describe it: read from the session
/// file's first and last 64 KiB and its metadata, without parsing it all.
///
/// Serialises (`serde_json`) with the field names of the Python SDK's
/// `SDKSessionInfo`; `archived` (a TypeScript SDK field) only when known.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct SessionInfo {
    /// The session's id (a UUID): the file is `<id>.jsonl`.
    pub session_id: String,
    /// What to show for the session: the custom title, else the last prompt
    /// the CLI recorded (`last-prompt`), else the last `summary`, else the
    /// first prompt. Never empty: sessions without one are not listed.
    pub summary: String,
    /// When the file was last modified, in milliseconds since the Unix epoch
    /// (rounded down).
    pub last_modified: i64,
    /// The file's size in bytes.
    pub file_size: u64,
    /// The title set by [`rename_session`](super::rename_session), `/rename`,
    /// `--name`, a fork, or else the CLI's AI-generated title.
    pub custom_title: Option<String>,
    /// The first prompt a person typed (commands, interruptions and IDE
    /// context skipped), on one line, cut at 200 characters.
    pub first_prompt: Option<String>,
    /// The git branch at the end of the session (the CLI writes `HEAD`
    /// outside a repository).
    pub git_branch: Option<String>,
    /// The session's working directory.
    pub cwd: Option<String>,
    /// The tag set by [`tag_session`](super::tag_session).
    pub tag: Option<String>,
    /// When the session began (its first entry's timestamp), in milliseconds
    /// since the Unix epoch.
    pub created_at: Option<i64>,
    /// Whether the session is archived ([`archive_session`](super::archive_session)):
    /// `None` if it never was, `Some(false)` once unarchived or when a prompt
    /// was sent in it after it was archived.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub archived: Option<bool>,
}

/// Who wrote a [`SessionMessage`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum MessageType {
    /// A prompt or tool results sent to the model.
    User,
    /// What the model answered. The CLI writes one entry per content block,
    /// so one API response is usually several messages sharing `message.id`.
    Assistant,
    /// A system entry of the CLI (compaction boundaries, notices); only with
    /// [`SessionOptions::include_system_messages`](super::SessionOptions::include_system_messages).
    System,
}

/// One message of a session's conversation, as read from its transcript by
/// [`session_messages`](super::session_messages) or
/// [`subagent_messages`](super::subagent_messages).
///
/// Lossless: `message` is the transcript's `message` object as the CLI wrote
/// it (the Messages API shape: `role`, `content`, and for the model `id`,
/// `model`, `usage`, …), and [`fields`](Self::fields) holds every other field
/// of the line.
///
/// Serialises with the Python SDK's `SessionMessage` field names (`fields`
/// left out).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct SessionMessage {
    /// `user`, `assistant` or `system`.
    #[serde(rename = "type")]
    pub kind: MessageType,
    /// The entry's id in the transcript (what [`ForkOptions::up_to_message`](super::ForkOptions::up_to_message) takes).
    pub uuid: String,
    /// The session the entry belongs to (its `sessionId`).
    pub session_id: String,
    /// The API message, as written (`Null` if the entry has none, as system
    /// entries).
    pub message: Value,
    /// For a subagent's messages: the id of the `Task` (Agent) tool call that
    /// started the subagent. `None` in a main session.
    pub parent_tool_use_id: Option<String>,
    /// For a subagent started by another subagent: that subagent's id.
    pub parent_agent_id: Option<String>,
    /// Every other field of the transcript line (`timestamp`, `parentUuid`,
    /// `cwd`, `gitBranch`, `toolUseResult`, …).
    #[serde(skip)]
    pub fields: Map<String, Value>,
}

impl SessionMessage {
    /// The entry's `timestamp` (ISO 8601, as the CLI wrote it).
    pub fn timestamp(&self) -> Option<&str> {
        self.fields.get("timestamp").and_then(Value::as_str)
    }

    /// The `uuid` of the entry this one follows (`parentUuid`).
    pub fn parent_uuid(&self) -> Option<&str> {
        self.fields.get("parentUuid").and_then(Value::as_str)
    }

    /// The content blocks of `message.content` (a string content is one text
    /// block, returned as an empty slice here; see [`text`](Self::text)).
    pub fn content_blocks(&self) -> &[Value] {
        self.message
            .get("content")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// The message's text: a string content, or its `text` blocks joined by
    /// `\n`.
    pub fn text(&self) -> String {
        match self.message.get("content") {
            Some(Value::String(s)) => s.clone(),
            _ => self
                .content_blocks()
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }
}

/// What went wrong in the sessions API. Every variant names the session or
/// file concerned.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    /// The id is not a UUID (`8-4-4-4-12` hexadecimal digits), so it cannot
    /// name a session file or a transcript entry.
    #[error("not a session or message id (a UUID): {id:?}")]
    InvalidId {
        /// The id given.
        id: String,
    },

    /// No non-empty `<id>.jsonl` in the project folders searched.
    #[error("session {session_id} not found in {}", searched_desc(.searched))]
    NotFound {
        /// The session looked for.
        session_id: String,
        /// The project folders searched (those that exist).
        searched: Vec<PathBuf>,
    },

    /// The session has no subagent transcript `agent-<agent_id>.jsonl`.
    #[error("session {session_id} has no subagent {agent_id:?} under {}", .dir.display())]
    SubagentNotFound {
        /// The session.
        session_id: String,
        /// The subagent looked for.
        agent_id: String,
        /// The session's `subagents` folder.
        dir: PathBuf,
    },

    /// A title or tag is empty once trimmed (and, for a tag, sanitised).
    #[error("the {what} is empty once trimmed{}", if *.what == "tag" { " and sanitised (pass None to clear the tag)" } else { "" })]
    Empty {
        /// `"title"` or `"tag"`.
        what: &'static str,
    },

    /// [`fork_session`](super::fork_session): the message to cut at is not in
    /// the session's transcript (sidechain entries do not count).
    #[error("message {message_id} is not in session {session_id} ({})", .path.display())]
    MessageNotFound {
        /// The session.
        session_id: String,
        /// The message looked for.
        message_id: String,
        /// The session file.
        path: PathBuf,
    },

    /// [`fork_session`](super::fork_session): the transcript has no message
    /// to copy.
    #[error("session {session_id} has no messages to fork ({})", .path.display())]
    NothingToFork {
        /// The session.
        session_id: String,
        /// The session file.
        path: PathBuf,
    },

    /// Neither `SessionOptions::config_dir`, `CLAUDE_CONFIG_DIR` nor a home
    /// folder is set, so the CLI's configuration folder is unknown.
    #[error(
        "cannot tell where the CLI keeps its sessions: set SessionOptions::config_dir, CLAUDE_CONFIG_DIR or HOME"
    )]
    NoConfigDir,

    /// A file or folder could not be read or written; the
    /// [`std::io::Error`] is the [`source`](std::error::Error::source).
    #[error("cannot {action} {}", .path.display())]
    Io {
        /// What was being done (`"read"`, `"append to"`, …).
        action: &'static str,
        /// The file or folder.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },

    /// A session store failed (the functions `*_in_store`); the store's
    /// error is the [`source`](std::error::Error::source).
    #[error("the session store failed to {action} session {session_id}")]
    Store {
        /// What was being done (`"load"`, `"append to"`, …).
        action: &'static str,
        /// The session concerned.
        session_id: String,
        /// The store's error.
        #[source]
        source: claude_code_agent_mcp::server::StoreError,
    },
}

impl SessionError {
    pub(super) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> Self {
        SessionError::Io {
            action,
            path: path.into(),
            source,
        }
    }
}

fn searched_desc(searched: &[PathBuf]) -> String {
    if searched.is_empty() {
        return "any project folder (none exists)".to_owned();
    }
    searched
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
