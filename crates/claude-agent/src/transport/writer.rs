//! NDJSON to the CLI's stdin: one whole frame per write, never interleaved,
//! never half-written (even when a send is cancelled).

use std::sync::Arc;

use serde::Serialize;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::process::ChildStdin;
use tokio::sync::Mutex;

use crate::error::{Error, Result};

/// A frame buffer grown past this by a huge message is given back afterwards.
const SHRINK_ABOVE: usize = 4 * 1024 * 1024;
const INITIAL_BUF: usize = 8 * 1024;

/// Writes newline-delimited JSON objects.
///
/// Cheap to clone; clones share the pipe and a lock, so frames from
/// concurrent senders never interleave. Each frame is serialized into a
/// reused buffer, terminated with `\n` and written completely before the
/// next one starts. A send whose future is dropped mid-write leaves its
/// remainder in the buffer; the next `send` or `close` writes it first, so a
/// cancelled send never leaves a torn line on the CLI's stdin (which the
/// CLI treats as fatal).
///
/// Errors: a serialization failure is [`Error::Json`] and writes nothing; a
/// failed write (e.g. `EPIPE` because the CLI exited) is [`Error::Io`] and
/// closes the writer; sends after that or after [`close`](Self::close) are
/// [`Error::Closed`].
pub(crate) struct LineWriter<W = ChildStdin> {
    state: Arc<Mutex<State<W>>>,
}

struct State<W> {
    io: Option<W>,
    buf: Vec<u8>,
    /// How much of `buf` is already written.
    written: usize,
}

impl<W> Clone for LineWriter<W> {
    fn clone(&self) -> Self {
        LineWriter {
            state: Arc::clone(&self.state),
        }
    }
}

impl<W> std::fmt::Debug for LineWriter<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LineWriter").finish_non_exhaustive()
    }
}

impl<W: AsyncWrite + Unpin> LineWriter<W> {
    /// Writes frames to `io`.
    pub(crate) fn new(io: W) -> Self {
        LineWriter {
            state: Arc::new(Mutex::new(State {
                io: Some(io),
                buf: Vec::with_capacity(INITIAL_BUF),
                written: 0,
            })),
        }
    }

    /// Serializes `value` as one line of JSON, writes it and flushes.
    pub(crate) async fn send<T: Serialize + ?Sized>(&self, value: &T) -> Result<()> {
        let mut st = self.state.lock().await;
        st.finish_pending().await?;
        if st.io.is_none() {
            return Err(Error::Closed);
        }
        st.buf.clear();
        if let Err(err) = serde_json::to_writer(&mut st.buf, value) {
            st.buf.clear();
            return Err(Error::Json(err));
        }
        st.buf.push(b'\n');
        st.finish_pending().await
    }

    /// Writes one pre-serialized JSON value as a line (a trailing `\n` is
    /// optional). The bytes are checked first: they must be valid JSON
    /// ([`Error::Json`] otherwise) and must not contain a newline
    /// ([`Error::Io`] with kind `InvalidInput`), because either would make
    /// the CLI exit.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) async fn send_raw(&self, line: &[u8]) -> Result<()> {
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        if memchr::memchr(b'\n', line).is_some() {
            return Err(Error::Io(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "a pre-serialized frame must not contain a newline",
            )));
        }
        serde_json::from_slice::<serde::de::IgnoredAny>(line)?;
        let mut st = self.state.lock().await;
        st.finish_pending().await?;
        if st.io.is_none() {
            return Err(Error::Closed);
        }
        st.buf.clear();
        st.buf.extend_from_slice(line);
        st.buf.push(b'\n');
        st.finish_pending().await
    }

    /// Finishes a frame a cancelled send left half-written, then closes the
    /// pipe (the CLI sees EOF on stdin). Idempotent.
    pub(crate) async fn close(&self) -> Result<()> {
        let mut st = self.state.lock().await;
        let pending = st.finish_pending().await;
        if let Some(mut io) = st.io.take() {
            let _ = io.shutdown().await;
        }
        pending
    }

    /// Whether the writer is closed (by `close` or after a failed write).
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn is_closed(&self) -> bool {
        match self.state.try_lock() {
            Ok(st) => st.io.is_none(),
            Err(_) => false, // someone is writing, so it was open a moment ago
        }
    }
}

impl<W: AsyncWrite + Unpin> State<W> {
    /// Writes the rest of `buf`, flushes, and resets the buffer.
    async fn finish_pending(&mut self) -> Result<()> {
        if self.written >= self.buf.len() {
            return Ok(());
        }
        let Some(io) = self.io.as_mut() else {
            self.reset();
            return Err(Error::Closed);
        };
        let mut result = Ok(());
        while self.written < self.buf.len() {
            // Each `write` either happens or not when cancelled, and the
            // progress is recorded right away.
            match io.write(&self.buf[self.written..]).await {
                Ok(0) => {
                    result = Err(std::io::Error::from(std::io::ErrorKind::WriteZero));
                    break;
                }
                Ok(n) => self.written += n,
                Err(err) => {
                    result = Err(err);
                    break;
                }
            }
        }
        if result.is_ok() {
            result = io.flush().await;
        }
        match result {
            Ok(()) => {
                self.reset();
                Ok(())
            }
            Err(err) => {
                tracing::debug!(error = %err, "writing to the CLI's stdin failed; closing it");
                self.io = None;
                self.reset();
                Err(Error::Io(err))
            }
        }
    }

    fn reset(&mut self) {
        self.written = 0;
        if self.buf.capacity() > SHRINK_ABOVE {
            self.buf = Vec::with_capacity(INITIAL_BUF);
        } else {
            self.buf.clear();
        }
    }
}
