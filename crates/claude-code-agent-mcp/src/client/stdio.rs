//! The client end of stdio: a server process spoken to over its stdin and
//! stdout.

use std::fmt;
use std::pin::pin;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::Value;
use tokio::process::{ChildStdin, ChildStdout};

use crate::client::{Error, Inbox, SendOptions, Transport};
use crate::transport::StdioOptions;
use crate::transport::json::envelope;
use crate::transport::lines::{Line, LineReader, LineWriter, SendError};
use crate::transport::process::{self, DRAIN_AFTER_EXIT, Process, ProcessGroup, ProcessWatch};

/// How long, after stdout ended, the reader waits for the exit status and
/// the last stderr lines to explain why (only a server that closes stdout
/// and goes on running waits it out).
const EXPLAIN_WAIT: Duration = Duration::from_millis(500);

/// How many stderr lines explain an exit.
const EXPLAIN_LINES: usize = 8;

/// A server process spoken to over its stdin and stdout (NDJSON).
///
/// The child runs in its own process group, under the one
/// [orphan policy](crate::transport::process#the-orphan-policy):
/// [`close`](Transport::close) shuts it down gracefully (close stdin, wait;
/// SIGTERM the group, wait; SIGKILL); dropping the transport kills the
/// group at once (synchronously). The child is reaped as soon as it exits,
/// whatever the client is doing, and what it left in its group is ended
/// then. If it dies, waiting requests fail at once with
/// an [`ErrorKind::Closed`](crate::client::ErrorKind::Closed) error saying
/// how it exited (and what its stderr last said), and so does every later
/// request. stderr is drained to `tracing`
/// and to an optional callback. A stdout line that is not JSON (invalid
/// UTF-8 included) fails the request whose id it shows, with an error that
/// says so and shows its start; one that shows none is skipped with a
/// warning, and named when the transport closes. Lone surrogate escapes
/// (a string cut mid-emoji by a JavaScript or Python server) decode to
/// U+FFFD. A successful response's result
/// is kept as the text it arrived in and decoded once, into what the
/// request wants ([`Inbox::deliver_text`](crate::client::Inbox::deliver_text)).
///
/// A message is written by the sending task itself, or, while other
/// requests are in flight ([`SendOptions::others_in_flight`]), queued and
/// written by a task together with those sent beside it (one `write`);
/// at most 1 MiB
/// wait for a server that does not read, after which sends wait.
pub struct StdioTransport {
    options: StdioOptions,
    group: ProcessGroup,
    reader: Mutex<Option<LineReader<ChildStdout>>>,
    writer: LineWriter<ChildStdin>,
}

impl StdioTransport {
    /// Starts the process. Needs a Tokio runtime.
    pub fn spawn(options: StdioOptions) -> Result<Self, Error> {
        let Process {
            reader,
            writer,
            group,
        } = process::spawn(&options).map_err(|e| {
            Error::transport(format!("could not start MCP server {:?}", options.program))
                .with_source(e)
        })?;
        Ok(Self {
            options,
            group,
            reader: Mutex::new(Some(reader)),
            writer,
        })
    }

    /// The child's process id (also its process group id).
    pub fn pid(&self) -> u32 {
        self.group.pid()
    }
}

impl fmt::Debug for StdioTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StdioTransport")
            .field("program", &self.options.program)
            .field("pid", &self.group.pid())
            .finish_non_exhaustive()
    }
}

fn send_error(e: SendError) -> Error {
    match e {
        SendError::Serialize(e) => Error::transport("could not serialize a message").with_source(e),
        SendError::Io(e) => Error::closed("writing to the MCP server failed").with_source(e),
        _ => Error::closed("the MCP server's stdin is closed"),
    }
}

impl Transport for StdioTransport {
    fn start(&self, inbox: Inbox) -> Result<(), Error> {
        let reader = self
            .reader
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
            .ok_or_else(|| Error::transport("the stdio transport was already started"))?;
        tokio::spawn(read_stdout(reader, inbox, self.group.watch()));
        Ok(())
    }

    fn send(&self, message: Value, options: SendOptions) -> BoxFuture<'_, Result<(), Error>> {
        Box::pin(async move {
            if !options.others_in_flight {
                // Nothing else is coming: at once.
                return self.writer.send(&message).await.map_err(send_error);
            }
            // Queued, and written by a task that runs once the tasks ready
            // now have run: requests made together (the answers of one
            // read wake their callers together) go out in one `write`, and
            // the server reads them at once. Waits only when the buffer is
            // full.
            match self.writer.try_send(&message) {
                Err(SendError::Full) => self.writer.send(&message).await,
                queued => queued,
            }
            .map_err(send_error)
        })
    }

    fn close(&self) -> BoxFuture<'_, Result<(), Error>> {
        Box::pin(async move {
            self.group.shutdown(self.options.shutdown).await;
            Ok(())
        })
    }

    fn is_alive(&self) -> bool {
        !self.writer.is_closed() && self.group.is_running()
    }
}

/// Why stdout reading stopped.
enum End {
    Eof,
    HeldOpen,
    Failed(std::io::Error),
}

/// Delivers each JSON line of stdout until it ends (or the server exited
/// and the pipe stays open past [`DRAIN_AFTER_EXIT`]), then says the
/// transport closed, and why.
async fn read_stdout(mut lines: LineReader<ChildStdout>, inbox: Inbox, child: ProcessWatch) {
    let max = lines.max_line_bytes();
    let mut gone = pin!(async {
        child.wait().await;
        tokio::time::sleep(DRAIN_AFTER_EXIT).await;
    });
    let mut unparsed = Unparsed::default();
    let end = loop {
        // No more is read while the client holds its budget's worth of
        // what callers have not taken (the server then waits on the pipe).
        let line = tokio::select! {
            biased;
            line = async {
                inbox.ready().await;
                lines.next_line().await
            } => line,
            () = &mut gone => break End::HeldOpen,
        };
        match line {
            Ok(Some(Line::Text(line))) => {
                let text = line.trim_ascii();
                if text.is_empty() {
                    continue;
                }
                let Err(error) = inbox.deliver_text(text) else {
                    continue;
                };
                let len = line.len();
                let error = Error::undecodable(LINE, text, error);
                let id = envelope(text).response_id().cloned();
                if lines.ended_mid_line() {
                    // Cut off by the end of stdout: the end explains it.
                    unparsed.at_end = Some(len);
                    continue;
                }
                match id {
                    Some(id) => {
                        tracing::warn!("MCP stdio: {error}; failing request {id}");
                        inbox.fail(id, error);
                    }
                    None => {
                        tracing::warn!("MCP stdio: {error}; skipped");
                        unparsed.skipped += 1;
                        unparsed.last = Some(error);
                    }
                }
            }
            Ok(Some(Line::TooLong { len, head })) => {
                let message = format!(
                    "MCP stdio: a message of {len} bytes exceeds the line cap of {max} bytes and was skipped"
                );
                tracing::error!("{message}");
                if let Some(id) = envelope(head).response_id() {
                    inbox.fail(id.clone(), Error::invalid_response(message));
                }
            }
            Ok(None) => break End::Eof,
            Err(e) => break End::Failed(e),
        }
    };
    drop(lines);
    inbox.closed_with(explain(end, &child, &unparsed).await);
}

/// Where stdout lines come from, in errors.
const LINE: &str = "a line on the MCP server's stdout";

/// The stdout lines that did not decode and showed no request's id.
#[derive(Default)]
struct Unparsed {
    skipped: usize,
    /// The last one's error.
    last: Option<Error>,
    /// The length of the last line, when stdout ended inside it.
    at_end: Option<usize>,
}

/// Says how the server ended: its exit status and its last stderr lines,
/// if they come soon; the read error, if one ended it, is the source.
async fn explain(end: End, child: &ProcessWatch, unparsed: &Unparsed) -> Error {
    let _ = tokio::time::timeout(EXPLAIN_WAIT, async {
        child.stderr_finished(EXPLAIN_WAIT).await;
        child.wait().await;
    })
    .await;
    let exited = child.try_exit_status().map(|status| {
        if status.code().is_none() && process::exit_signal(&status).is_none() {
            "the MCP server exited".to_owned()
        } else {
            format!("the MCP server exited ({status})")
        }
    });
    let mut failed = None;
    let mut reason = match (end, exited) {
        (End::Eof, Some(exited)) => exited,
        (End::Eof, None) => "the MCP server closed its stdout".to_owned(),
        (End::HeldOpen, exited) => format!(
            "{}, but a process it left behind holds its stdout open",
            exited.as_deref().unwrap_or("the MCP server exited")
        ),
        (End::Failed(e), exited) => {
            failed = Some(e);
            match exited {
                Some(exited) => format!("reading from the MCP server failed; {exited}"),
                None => "reading from the MCP server failed".to_owned(),
            }
        }
    };
    if let Some(len) = unparsed.at_end {
        reason.push_str(&format!(
            "; its last message was cut off ({len} bytes with no line end, not JSON)"
        ));
    } else if unparsed.last.is_some() {
        let n = unparsed.skipped;
        let lines = if n == 1 { "line" } else { "lines" };
        reason.push_str(&format!(
            "; before that it wrote {n} {lines} that could not be read (the last is the source)"
        ));
    }
    let tail = child.stderr_tail();
    let lines: Vec<&str> = tail.lines().rev().take(EXPLAIN_LINES).collect();
    if !lines.is_empty() {
        let lines: Vec<&str> = lines.into_iter().rev().collect();
        reason.push_str(&format!("; its stderr ended with: {}", lines.join(" | ")));
    }
    // The cause: the read error, else the last line that could not be read.
    match (failed, unparsed.last.clone()) {
        (Some(e), _) => Error::closed(reason).with_source(e),
        (None, Some(last)) => Error::closed(reason).with_source(last),
        (None, None) => Error::closed(reason),
    }
}
