//! [`startup()`]: the CLI started and its `initialize` handshake done
//! before the first prompt is known; [`WarmQuery`], the idle session it
//! gives. The one place a session is started: [`query()`](crate::query)
//! and [`Client::connect`](crate::Client::connect) start theirs here too.

use crate::control::Control;
use crate::error::Result;
use crate::options::Options;
use crate::protocol::InitializeResponse;
use crate::session::Session;
use crate::telemetry;
use tracing::Instrument;

/// Starts the CLI for `options` and completes its `initialize` handshake,
/// before any prompt: what [`query()`](crate::query) would do first, done
/// ahead of time, so that the first prompt only waits for the model.
/// TypeScript's `startup()`.
///
/// The [`WarmQuery`] it gives is an idle session: hand it its first prompt
/// with [`WarmQuery::query`] (one-shot, as [`query()`](crate::query)), or
/// turn it into a multi-turn [`Client`](crate::Client) with
/// `Client::from`. Fails as [`Client::connect`](crate::Client::connect)
/// does (the CLI not found, [`Error::CliExited`](crate::Error::CliExited)
/// before the handshake, the version policy, …), and the CLI is gone when
/// it fails. The handshake waits at least
/// [`DEFAULT_CONTROL_TIMEOUT`](crate::DEFAULT_CONTROL_TIMEOUT), or
/// [`Options::control_timeout`] when longer.
///
/// ```no_run
/// use claude_code_agent::{Message, Options, startup};
/// use futures::StreamExt;
///
/// # async fn run() -> claude_code_agent::Result<()> {
/// // While the user is still typing:
/// let warm = startup(Options::new()).await?;
/// // … later, the prompt:
/// let mut stream = warm.query("What is 2 + 2?");
/// while let Some(message) = stream.next().await {
///     if let Message::Assistant(m) = message? {
///         println!("{}", m.text());
///     }
/// }
/// # Ok(())
/// # }
/// ```
pub async fn startup(options: Options) -> Result<WarmQuery> {
    WarmQuery::start(&options, &tracing::Span::current()).await
}

/// A started CLI that has answered `initialize` and waits for its first
/// prompt (from [`startup()`]).
///
/// * Its first prompt: [`query`](Self::query) gives the one-shot
///   [`Query`](crate::Query) stream; `Client::from(warm)` a multi-turn
///   [`Client`](crate::Client). Either consumes it, so a `WarmQuery` is
///   used once; the compiler refuses a second use:
///
///   ```compile_fail,E0382
///   # async fn run(warm: claude_code_agent::WarmQuery) {
///   let first = warm.query("one");
///   let second = warm.query("two"); // error[E0382]: use of moved value
///   # }
///   ```
/// * Unused: [`close`](Self::close) ends the CLI gracefully (stdin closed,
///   then waited for and reaped); dropping it kills the CLI's process
///   group at once. Either way no process is left.
/// * While it waits, the session is live: its control requests work
///   ([`control`](Self::control)), the CLI's requests (hooks, tools of
///   in-process servers) are answered, and messages the CLI writes are
///   kept for the first prompt's stream (up to
///   [`Options::max_buffered_bytes`]).
/// * If the CLI exits while it waits (killed, crashed), nothing is
///   reported until it is used: the first item of its query's stream, or
///   the client's first [`query`](crate::Client::query), is how the CLI
///   ended ([`Error::CliExited`](crate::Error::CliExited)). Start another
///   one, or fall back to [`query()`](crate::query).
#[must_use = "an unused WarmQuery only holds a CLI process until it is dropped"]
pub struct WarmQuery {
    session: Session,
    control: Control,
}

impl WarmQuery {
    /// Spawns the CLI and completes the handshake: the start of every
    /// session, cold ([`query()`](crate::query), `Client::connect`) or warm.
    /// The session's span is a child of `parent` (the caller's span when
    /// the session was asked for).
    pub(crate) async fn start(options: &Options, parent: &tracing::Span) -> Result<Self> {
        let span = telemetry::session(parent, options.model.as_deref());
        let start = async {
            let session = Session::spawn(options, span.clone()).await?;
            let init = session.initialize().await?;
            let control = Control::new(&session, init);
            Ok(Self { session, control })
        };
        start.instrument(span.clone()).await
    }

    /// The session's control requests (a handle to keep: it outlives this
    /// value and serves the query or client it becomes).
    pub fn control(&self) -> &Control {
        &self.control
    }

    /// What the CLI said in the handshake (commands, models, agents,
    /// account…).
    pub fn initialize_response(&self) -> &InitializeResponse {
        self.control.initialize_response()
    }

    /// The pid of the process started (the CLI, or the wrapper of
    /// [`Options::spawn_with`]).
    pub fn pid(&self) -> u32 {
        self.control.pid()
    }

    /// Ends the CLI without a prompt: closes its stdin, waits for it to exit
    /// (then SIGTERM, then SIGKILL, after [`Options::shutdown_timeouts`])
    /// and reaps it. TypeScript's `WarmQuery.close()`.
    pub async fn close(self) {
        self.session.conn.shutdown().await;
        self.session.conn.wait_ended().await;
    }

    /// The session and its control, for the query or client it becomes.
    pub(crate) fn into_parts(self) -> (Session, Control) {
        (self.session, self.control)
    }
}

impl std::fmt::Debug for WarmQuery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WarmQuery")
            .field("pid", &self.pid())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Started in one task, used in another: a pool of started sessions
    /// can be shared.
    #[test]
    fn a_warm_query_is_send_and_sync() {
        fn shareable<T: Send + Sync>() {}
        shareable::<WarmQuery>();
    }
}
