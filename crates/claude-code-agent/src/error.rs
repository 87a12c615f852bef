//! The one error type of the SDK, with a kind per thing that can go wrong.

use std::path::PathBuf;
use std::time::Duration;

/// A `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong while driving the Claude Code CLI.
///
/// Match on the variant to tell the kinds apart; every message says what went
/// wrong and, where it helps, what to do about it. A variant with an
/// underlying cause (an I/O error, a JSON error) keeps it as its
/// [`source`](std::error::Error::source) and does not repeat it in its
/// message: print the chain with an error reporter (such as `anyhow`'s
/// `{:#}`) to see both.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No CLI executable was found. `searched` lists every place tried, in order.
    #[error("Claude Code CLI not found; searched: {}. Install it with `npm install -g @anthropic-ai/claude-code`, or set Options::cli_path or CLAUDE_CLI_PATH", display_paths(.searched))]
    CliNotFound {
        /// The places searched, in order.
        searched: Vec<PathBuf>,
    },

    /// The CLI could not be started.
    #[error("could not start the Claude Code CLI at {}", .program.display())]
    Spawn {
        /// The program that was run.
        program: PathBuf,
        /// Why it failed.
        #[source]
        source: std::io::Error,
    },

    /// The CLI exited (or closed its stdout) while the SDK still expected output.
    #[error("the Claude Code CLI exited{}{}{}", exit_desc(*.code, *.signal), if .stderr_tail.is_empty() { "" } else { "; stderr ends with:\n" }, .stderr_tail)]
    CliExited {
        /// Its exit code, if it exited normally.
        code: Option<i32>,
        /// The signal that ended it, if any.
        signal: Option<i32>,
        /// The last part of what it wrote to stderr.
        stderr_tail: String,
    },

    /// A control request sent to the CLI got no answer in time.
    #[error("control request `{subtype}` got no answer within {timeout:?}")]
    ControlTimeout {
        /// The request's subtype.
        subtype: String,
        /// How long the SDK waited.
        timeout: Duration,
    },

    /// The CLI answered a control request with an error.
    #[error("the CLI refused control request `{subtype}`: {message}")]
    ControlError {
        /// The request's subtype.
        subtype: String,
        /// The CLI's error text.
        message: String,
        /// The CLI's `error_code`, when it sent one (`unsupported_request`, `invalid_mode`, …).
        code: Option<String>,
    },

    /// The options cannot work together, or a value is invalid; the text
    /// names the option and what is wrong with it.
    #[error("invalid options: {0}")]
    InvalidOptions(String),

    /// [`Options::settings`](crate::Options::settings) could not be read,
    /// or is not a JSON object, so the sandbox
    /// ([`Options::sandbox`](crate::Options::sandbox)) cannot be merged
    /// into it.
    #[error("cannot merge the sandbox into the settings {}", settings_desc(.path.as_deref()))]
    Settings {
        /// The settings file, when the settings name one (`None`: they are
        /// JSON text).
        path: Option<PathBuf>,
        /// Why: the [`std::io::Error`] of reading the file, the
        /// [`serde_json::Error`] of text that is not JSON, or a message
        /// for JSON that is no object.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },

    /// The CLI wrote more messages than the SDK may keep while they are not
    /// read (over [`Options::max_buffered_bytes`](crate::Options::max_buffered_bytes)).
    /// The session was ended (the CLI killed); this error comes after the
    /// messages queued before it.
    #[error(
        "the CLI wrote more than {limit} bytes of messages that were not read; the session was ended (read messages as they come, or raise Options::max_buffered_bytes)"
    )]
    MessageBufferFull {
        /// The budget, in bytes.
        limit: usize,
    },

    /// Another stream is already receiving this client's messages; they go
    /// to one stream at a time. Drop it first.
    #[error("another stream is already receiving this client's messages")]
    AlreadyReceiving,

    /// The session is closed (after `disconnect`, or after the CLI ended).
    #[error("the session is closed")]
    Closed,

    /// Reading from or writing to the CLI failed.
    #[error("I/O error talking to the CLI")]
    Io(#[from] std::io::Error),

    /// A message could not be encoded or decoded.
    #[error("a message could not be encoded or decoded as JSON")]
    Json(#[from] serde_json::Error),

    /// The CLI's version is outside the tested range and
    /// [`Options::cli_version_policy`](crate::Options::cli_version_policy) is
    /// [`CliVersionPolicy::Error`](crate::CliVersionPolicy::Error). The CLI
    /// was stopped.
    #[error("{message} (Options::cli_version_policy is Error, so the session was not started)")]
    UntestedCliVersion {
        /// The version the CLI reported at `initialize`; `None` when it
        /// reported none (a CLI older than 2.1.296).
        found: Option<String>,
        /// What is wrong: the version found and the range tested.
        message: String,
    },

    /// The session store failed, or did not answer within
    /// [`Options::session_store_timeout`](crate::Options::session_store_timeout):
    /// appending what the CLI wrote (after three tries), or loading a
    /// session to resume. The session was ended (the CLI killed) rather than
    /// going on with a transcript the store does not have; the store's
    /// error is the [`source`](std::error::Error::source).
    #[error("the session store failed to {operation} session {session_id}")]
    SessionStore {
        /// What was being done (`"append to"`, `"load"`, `"mirror"`, …).
        operation: &'static str,
        /// The session concerned (empty when the CLI's file named none).
        session_id: String,
        /// The store's error (shared: the session's end is told to every
        /// waiter).
        #[source]
        source: std::sync::Arc<crate::sessions::StoreError>,
    },

    /// A session's transcript grew past
    /// [`Options::max_transcript_bytes`](crate::Options::max_transcript_bytes)
    /// (or the one to resume is already past it). The session was ended.
    #[error(
        "the transcript of session {session_id} is {size} bytes, over the limit of {limit} bytes (Options::max_transcript_bytes)"
    )]
    TranscriptTooLarge {
        /// The session.
        session_id: String,
        /// Its transcript's size as JSONL, in bytes.
        size: u64,
        /// The limit, in bytes.
        limit: u64,
    },
}

fn display_paths(paths: &[PathBuf]) -> String {
    if paths.is_empty() {
        return "(nothing)".into();
    }
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn settings_desc(path: Option<&std::path::Path>) -> String {
    match path {
        Some(path) => format!("file {}", path.display()),
        None => "given as JSON text".to_owned(),
    }
}

fn exit_desc(code: Option<i32>, signal: Option<i32>) -> String {
    match (code, signal) {
        (Some(c), _) => format!(" with code {c}"),
        (None, Some(s)) => format!(" on signal {s}"),
        (None, None) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_found_lists_what_was_searched() {
        let e = Error::CliNotFound {
            searched: vec!["/a/claude".into(), "/b/claude".into()],
        };
        let s = e.to_string();
        assert!(s.contains("/a/claude, /b/claude"), "{s}");
    }

    #[test]
    fn exited_shows_code_and_stderr() {
        let e = Error::CliExited {
            code: Some(1),
            signal: None,
            stderr_tail: "boom".into(),
        };
        assert_eq!(
            e.to_string(),
            "the Claude Code CLI exited with code 1; stderr ends with:\nboom"
        );
    }

    #[test]
    fn causes_are_sources_not_repeated_in_the_message() {
        use std::error::Error as _;
        let io = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        let e = Error::Spawn {
            program: "/x/claude".into(),
            source: io,
        };
        assert_eq!(
            e.to_string(),
            "could not start the Claude Code CLI at /x/claude"
        );
        let io = e
            .source()
            .unwrap()
            .downcast_ref::<std::io::Error>()
            .unwrap();
        assert_eq!(io.kind(), std::io::ErrorKind::PermissionDenied);

        let e = Error::Settings {
            path: Some("/etc/s.json".into()),
            source: "a JSON array, not an object".into(),
        };
        assert_eq!(
            e.to_string(),
            "cannot merge the sandbox into the settings file /etc/s.json"
        );
        assert_eq!(
            e.source().unwrap().to_string(),
            "a JSON array, not an object"
        );
    }
}
