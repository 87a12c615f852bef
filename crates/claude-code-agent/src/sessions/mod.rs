//! The sessions the Claude Code CLI saved: list them, read their messages
//! and their subagents', rename, tag, fork, archive and delete them — by
//! reading and writing the files the CLI itself writes, with no CLI running.
//!
//! The CLI keeps each session in
//! `<config>/projects/<sanitised cwd>/<session id>.jsonl`, one JSON entry a
//! line, where `<config>` is `CLAUDE_CONFIG_DIR` or `~/.claude`
//! ([`SessionOptions::config_dir`] overrides both) and the folder name is the
//! session's working directory with every other character than ASCII letters
//! and digits turned into `-` ([`sanitize_path`]). A subagent's transcript is
//! `<session id>/subagents/agent-<agent id>.jsonl` beside it.
//!
//! | function | does |
//! |---|---|
//! | [`list_sessions`] | the sessions of a project (and its git worktrees) or of all projects, newest first |
//! | [`session_info`] | one session's [`SessionInfo`] |
//! | [`session_messages`] | a session's conversation, as [`SessionMessage`]s |
//! | [`list_subagents`], [`subagent_messages`] | its subagents and their conversations |
//! | [`rename_session`], [`tag_session`] | set the title or the tag (a line appended to the transcript) |
//! | [`fork_session`] | a copy under a new id, up to a message if asked, that the CLI resumes |
//! | [`archive_session`], [`unarchive_session`] | mark it archived (a file beside the transcript) |
//! | [`delete_session`] | remove it and its subagents' transcripts |
//!
//! # Session stores
//!
//! A [`SessionStore`] keeps transcripts besides the CLI's files, so that a
//! conversation started on one machine resumes on another
//! ([`Options::session_store`](crate::Options::session_store)): the stores
//! [`InMemorySessionStore`], [`DirSessionStore`] and `RedisSessionStore`
//! (feature `redis`), or your own. The functions above have twins that
//! work on a store ([`list_sessions_in_store`], [`session_messages_in_store`],
//! …, and [`import_session_to_store`]). Guide: docs/sessions.md.
//!
//! These are the official SDKs' sessions functions (Python's
//! `list_sessions`, `get_session_messages`, …; TypeScript's `listSessions`,
//! …), with the same results on the same files; `docs/parity/sessions.md`
//! lists them side by side.
//!
//! # Blocking
//!
//! The functions do blocking file I/O (and [`list_sessions`] may run `git
//! worktree list`), as `std::fs` does: a listing reads at most 128 KiB of
//! each session file, a transcript is read whole. They need no runtime, so
//! they serve synchronous programs as well; from async code, call them
//! through `tokio::task::spawn_blocking`:
//!
//! ```no_run
//! use claude_code_agent::sessions::{SessionOptions, list_sessions};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let options = SessionOptions::new().dir("/path/to/project").limit(10);
//! let sessions = tokio::task::spawn_blocking(move || list_sessions(&options)).await??;
//! for s in sessions {
//!     println!("{} {} ({} bytes)", s.session_id, s.summary, s.file_size);
//! }
//! # Ok(())
//! # }
//! ```
//!
//! # Errors and damaged files
//!
//! A line that is not JSON (a crash mid-write, a line cut by a concurrent
//! writer) is skipped; a file that cannot be read is skipped by
//! [`list_sessions`] and an error elsewhere. Errors are [`SessionError`]s and
//! name the session, message or file concerned.

mod chain;
mod fork;
mod info;
mod paths;
mod scan;
pub(crate) mod store;
mod time;
mod transcript;
mod types;
mod write;

#[cfg(test)]
mod tests;

use std::path::PathBuf;

pub(crate) use paths::home_config_dir;
pub use paths::sanitize_path;
#[cfg(feature = "redis")]
pub use store::RedisSessionStore;
pub use store::{
    DirSessionStore, InMemorySessionStore, SessionKey, SessionStore, SessionStoreFlush, StoreError,
    StoreFuture, StoredSession, delete_session_in_store, fork_session_in_store,
    import_session_to_store, list_sessions_in_store, list_subagents_in_store,
    rename_session_in_store, session_info_in_store, session_messages_in_store,
    subagent_messages_in_store, tag_session_in_store,
};
pub use types::{MessageType, SessionError, SessionInfo, SessionMessage};
pub(crate) use write::replace_private;
pub use write::sanitize_tag;

/// The project key of a working directory: the name of the folder the CLI
/// keeps its sessions in, [`sanitize_path`] of its canonical path. What a
/// session store files the directory's sessions under ([`SessionKey`]).
///
/// ```
/// use claude_code_agent::sessions::project_key;
/// assert_eq!(project_key("/"), "-");
/// ```
pub fn project_key(dir: impl AsRef<std::path::Path>) -> String {
    sanitize_path(&paths::canonicalize(dir.as_ref()))
}

/// Whether `id` can name a session (a UUID).
pub(crate) fn is_session_id(id: &str) -> bool {
    paths::is_uuid(id)
}

/// Where to look for sessions and which to return; shared by every function
/// of [`sessions`](self) (each reads the fields that concern it).
///
/// ```
/// use claude_code_agent::sessions::SessionOptions;
///
/// let options = SessionOptions::new()
///     .dir("/path/to/project")
///     .config_dir("/tmp/claude-config")
///     .limit(20)
///     .offset(40);
/// assert_eq!(options.limit, Some(20));
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SessionOptions {
    /// The project: the working directory the sessions ran in. `None`: every
    /// project (for one session, the first project folder that has it).
    pub dir: Option<PathBuf>,
    /// The CLI's configuration folder. `None`: `CLAUDE_CONFIG_DIR` if set and
    /// not empty, else `~/.claude`.
    pub config_dir: Option<PathBuf>,
    /// At most this many sessions or messages (`None` or 0: all).
    pub limit: Option<usize>,
    /// Skip this many first (after sorting).
    pub offset: usize,
    /// With [`dir`](Self::dir) in a git repository, include the sessions of
    /// its other worktrees (default `true`).
    pub include_worktrees: bool,
    /// [`list_sessions`]: include sessions run by programs (the SDKs' and
    /// `claude -p`'s entry points, which this SDK's sessions are too) and
    /// daemons (default `true`; `false` lists what the CLI's own `/resume`
    /// picker shows).
    pub include_programmatic: bool,
    /// [`session_messages`]: include the CLI's system entries of the
    /// conversation (default `false`).
    pub include_system_messages: bool,
}

impl Default for SessionOptions {
    fn default() -> Self {
        SessionOptions {
            dir: None,
            config_dir: None,
            limit: None,
            offset: 0,
            include_worktrees: true,
            include_programmatic: true,
            include_system_messages: false,
        }
    }
}

impl SessionOptions {
    /// Every project, the CLI's default configuration folder, no paging.
    pub fn new() -> Self {
        SessionOptions::default()
    }

    /// Sets [`dir`](Self::dir).
    pub fn dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.dir = Some(dir.into());
        self
    }

    /// Sets [`config_dir`](Self::config_dir).
    pub fn config_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.config_dir = Some(dir.into());
        self
    }

    /// Sets [`limit`](Self::limit).
    pub fn limit(mut self, limit: usize) -> Self {
        self.limit = Some(limit);
        self
    }

    /// Sets [`offset`](Self::offset).
    pub fn offset(mut self, offset: usize) -> Self {
        self.offset = offset;
        self
    }

    /// Sets [`include_worktrees`](Self::include_worktrees).
    pub fn include_worktrees(mut self, yes: bool) -> Self {
        self.include_worktrees = yes;
        self
    }

    /// Sets [`include_programmatic`](Self::include_programmatic).
    pub fn include_programmatic(mut self, yes: bool) -> Self {
        self.include_programmatic = yes;
        self
    }

    /// Sets [`include_system_messages`](Self::include_system_messages).
    pub fn include_system_messages(mut self, yes: bool) -> Self {
        self.include_system_messages = yes;
        self
    }
}

/// What [`fork_session`] copies and how it names the copy.
///
/// ```
/// use claude_code_agent::sessions::ForkOptions;
/// let fork = ForkOptions::new()
///     .up_to_message("7b3e04f5-be51-411f-8afc-050645919820")
///     .title("Try the other way");
/// # let _ = fork;
/// ```
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ForkOptions {
    /// Copy up to and including the entry with this `uuid`
    /// ([`SessionMessage::uuid`]); `None`: everything.
    pub up_to_message_id: Option<String>,
    /// The fork's title; `None` (or blank): the source's title, else its
    /// first prompt, followed by ` (fork)`.
    pub title: Option<String>,
}

impl ForkOptions {
    /// The whole session, with a derived title.
    pub fn new() -> Self {
        ForkOptions::default()
    }

    /// Sets [`up_to_message_id`](Self::up_to_message_id).
    pub fn up_to_message(mut self, uuid: impl Into<String>) -> Self {
        self.up_to_message_id = Some(uuid.into());
        self
    }

    /// Sets [`title`](Self::title).
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }
}

/// The sessions of [`SessionOptions::dir`]'s project (and of its other git
/// worktrees unless [`include_worktrees`](SessionOptions::include_worktrees)
/// is off), or of every project, newest first, after
/// [`offset`](SessionOptions::offset) and up to [`limit`](SessionOptions::limit).
///
/// Left out: subagent transcripts, files with nothing to show (no title,
/// prompt or summary), and with
/// [`include_programmatic`](SessionOptions::include_programmatic) off,
/// sessions run by programs. A session found in several project folders is
/// listed once, from its newest file. No projects folder: an empty list.
///
/// # Errors
///
/// [`SessionError::NoConfigDir`]; [`SessionError::Io`] when the projects
/// folder cannot be listed (an unreadable session file is skipped).
pub fn list_sessions(options: &SessionOptions) -> Result<Vec<SessionInfo>, SessionError> {
    info::list(options)
}

/// One session, read as [`list_sessions`] reads it; `None` when it is not
/// found, is a subagent's transcript or has nothing to show.
///
/// # Errors
///
/// [`SessionError::InvalidId`], [`SessionError::NoConfigDir`],
/// [`SessionError::Io`] (a file that exists but cannot be read).
pub fn session_info(
    session_id: &str,
    options: &SessionOptions,
) -> Result<Option<SessionInfo>, SessionError> {
    info::info(session_id, options)
}

/// A session's conversation, oldest first: the user and assistant messages
/// (and with [`include_system_messages`](SessionOptions::include_system_messages)
/// the system entries) on the chain from its latest main-thread message back
/// to the first, paged by [`offset`](SessionOptions::offset) and
/// [`limit`](SessionOptions::limit). Branches left by rewinds and edits are
/// not followed; a turn that ran tools in parallel is returned whole (every
/// call and every result). Meta and sidechain entries are left out.
///
/// # Errors
///
/// [`SessionError::InvalidId`], [`SessionError::NotFound`],
/// [`SessionError::NoConfigDir`], [`SessionError::Io`].
pub fn session_messages(
    session_id: &str,
    options: &SessionOptions,
) -> Result<Vec<SessionMessage>, SessionError> {
    transcript::messages(session_id, options)
}

/// The ids of a session's subagents (`agent-<id>.jsonl` under
/// `<session id>/subagents/`, nested folders included), in name order.
///
/// # Errors
///
/// [`SessionError::InvalidId`], [`SessionError::NotFound`] (the session),
/// [`SessionError::NoConfigDir`], [`SessionError::Io`].
pub fn list_subagents(
    session_id: &str,
    options: &SessionOptions,
) -> Result<Vec<String>, SessionError> {
    transcript::list_subagents(session_id, options)
}

/// A subagent's conversation, oldest first, paged like
/// [`session_messages`]. Every message's
/// [`parent_tool_use_id`](SessionMessage::parent_tool_use_id) is the tool
/// call that started the subagent (and
/// [`parent_agent_id`](SessionMessage::parent_agent_id) the subagent that
/// made it, if any), from the `agent-<id>.meta.json` beside the transcript.
///
/// # Errors
///
/// [`SessionError::SubagentNotFound`], and as [`list_subagents`].
pub fn subagent_messages(
    session_id: &str,
    agent_id: &str,
    options: &SessionOptions,
) -> Result<Vec<SessionMessage>, SessionError> {
    transcript::subagent_messages(session_id, agent_id, options)
}

/// Sets a session's title (trimmed): appends
/// `{"type":"custom-title","customTitle":…,"sessionId":…}` to its
/// transcript, as the CLI records `/rename`. The last title wins, and the
/// CLI resumes the session by it (`--resume=<title>`).
///
/// # Errors
///
/// [`SessionError::Empty`] for a blank title, [`SessionError::InvalidId`],
/// [`SessionError::NotFound`], [`SessionError::NoConfigDir`],
/// [`SessionError::Io`].
pub fn rename_session(
    session_id: &str,
    title: &str,
    options: &SessionOptions,
) -> Result<(), SessionError> {
    write::rename(session_id, title, options)
}

/// Sets a session's tag, sanitised ([`sanitize_tag`]), or clears it with
/// `None`: appends `{"type":"tag","tag":…,"sessionId":…}` (an empty tag
/// clears). The last tag wins.
///
/// # Errors
///
/// [`SessionError::Empty`] for a tag that sanitises to nothing, and as
/// [`rename_session`].
pub fn tag_session(
    session_id: &str,
    tag: Option<&str>,
    options: &SessionOptions,
) -> Result<(), SessionError> {
    write::tag(session_id, tag, options)
}

/// Deletes a session: its transcript, then the `<session id>/` folder beside
/// it (subagent transcripts and other per-session files). No undo.
///
/// # Errors
///
/// [`SessionError::InvalidId`], [`SessionError::NotFound`],
/// [`SessionError::NoConfigDir`], [`SessionError::Io`] (if the folder cannot
/// be removed, the transcript is already gone).
pub fn delete_session(session_id: &str, options: &SessionOptions) -> Result<(), SessionError> {
    write::delete(session_id, options)
}

/// Copies a session into a new one and returns its id: every transcript
/// entry (sidechains and progress entries left out) up to
/// [`ForkOptions::up_to_message_id`], each under a new uuid with its parent
/// re-linked, `sessionId` set to the new id and `forkedFrom` naming the
/// source; then the title ([`ForkOptions::title`], or the source's with
/// ` (fork)`). Written beside the source, created new (never overwriting),
/// readable by its owner only. The CLI resumes it like any session
/// (`Options::resume`); undo history (file checkpoints) is not copied.
///
/// # Errors
///
/// [`SessionError::InvalidId`] (the session or the message),
/// [`SessionError::NotFound`], [`SessionError::MessageNotFound`],
/// [`SessionError::NothingToFork`], [`SessionError::NoConfigDir`],
/// [`SessionError::Io`].
pub fn fork_session(
    session_id: &str,
    fork: &ForkOptions,
    options: &SessionOptions,
) -> Result<String, SessionError> {
    fork::fork(session_id, fork, options)
}

/// Marks a session archived: `<session id>/archived.json` beside each copy
/// of its transcript (`{"archived":true,"at":…,"by":"sdk"}`, owner-only),
/// as the TypeScript SDK does. The session stays listed, with
/// [`SessionInfo::archived`] `Some(true)` until it is unarchived or a prompt
/// is sent in it.
///
/// # Errors
///
/// [`SessionError::InvalidId`], [`SessionError::NotFound`],
/// [`SessionError::NoConfigDir`], [`SessionError::Io`].
pub fn archive_session(session_id: &str, options: &SessionOptions) -> Result<(), SessionError> {
    write::set_archived(session_id, true, options)
}

/// Marks a session not archived ([`SessionInfo::archived`] `Some(false)`).
///
/// # Errors
///
/// As [`archive_session`].
pub fn unarchive_session(session_id: &str, options: &SessionOptions) -> Result<(), SessionError> {
    write::set_archived(session_id, false, options)
}
