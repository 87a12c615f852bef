//! The NDJSON writer: whole frames, never interleaved, batched.

use std::fmt;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde::Serialize;
use tokio::io::{AsyncWrite, AsyncWriteExt};

mod order;

#[cfg(unix)]
pub use order::unread_probe;
use order::{Marks, settle};
pub use order::{Order, SETTLE_CAP, UnreadProbe};

/// How many bytes of frames may wait to be written before senders wait
/// (and [`LineWriter::try_send`] refuses): 1 MiB. One frame larger than
/// this is always accepted when less is waiting.
pub const DEFAULT_WRITE_BUFFER_BYTES: usize = 1024 * 1024;

/// A buffer grown past this by a huge frame is given back once written.
const SHRINK_ABOVE: usize = 4 * 1024 * 1024;

/// Why a frame was not sent. The serde or I/O error is the
/// [`source`](std::error::Error::source), not repeated in the display.
#[derive(Debug)]
#[non_exhaustive]
pub enum SendError {
    /// The writer was closed, or an earlier write failed.
    Closed,
    /// The frame could not be serialized; nothing was written.
    Serialize(serde_json::Error),
    /// A pre-serialized frame was refused (it held a newline); nothing was
    /// written.
    Invalid(&'static str),
    /// Writing failed (`EPIPE`: the peer is gone); the writer is closed.
    Io(io::Error),
    /// [`LineWriter::try_send`] only: the buffer is full (the peer is not
    /// reading); nothing was queued.
    Full,
}

impl fmt::Display for SendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Closed => f.write_str("the writer is closed"),
            Self::Serialize(_) => f.write_str("could not serialize a message"),
            Self::Invalid(why) => write!(f, "refused a frame: {why}"),
            Self::Io(_) => f.write_str("writing failed"),
            Self::Full => f.write_str("the write buffer is full (the peer is not reading)"),
        }
    }
}

impl std::error::Error for SendError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Serialize(e) => Some(e),
            Self::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<SendError> for io::Error {
    fn from(e: SendError) -> Self {
        match e {
            SendError::Io(e) => e,
            SendError::Closed => io::Error::new(io::ErrorKind::BrokenPipe, e),
            SendError::Full => io::Error::new(io::ErrorKind::WouldBlock, e),
            other => io::Error::new(io::ErrorKind::InvalidInput, other),
        }
    }
}

/// Writes newline-delimited JSON: one whole frame per message, never
/// interleaved, never torn.
///
/// Cheap to clone; clones share the pipe. Each [`send`](Self::send)
/// serializes its message (in the caller's task, outside any lock) and
/// appends it to a shared buffer; whoever finds nobody writing becomes the
/// writer and writes everything queued, in as few `write` calls as the
/// pipe takes, until the buffer is empty. So a lone sender writes its own
/// frame at once (no task switch), and many concurrent senders share one
/// system call. A send returns once its frame is queued behind an active
/// writer, or written by itself.
///
/// Bounded: when more than the buffer limit
/// ([`DEFAULT_WRITE_BUFFER_BYTES`]) waits (the peer is not reading),
/// senders wait for the writer to drain it, and
/// [`try_send`](Self::try_send) refuses with [`SendError::Full`].
///
/// Cancellation: a send whose future is dropped mid-write leaves the rest
/// of its bytes queued; the next send or [`close`](Self::close) writes them
/// first, so the peer never sees a torn line. A frame is queued whole or
/// not at all.
///
/// Order: frames go out in the order they were queued. A frame sent as an
/// [`Order::Answer`] is never written together with a [`Order::Notice`] of
/// the same key queued before it: those are written first and, when the
/// writer has an [`UnreadProbe`] ([`with_unread_probe`](Self::with_unread_probe)),
/// the answer waits (at most [`SETTLE_CAP`]) until the peer has read them,
/// so a peer that acts on what one read brings out of order (the
/// TypeScript MCP SDK) still sees a call's progress before its answer.
///
/// Errors: a failed write (`EPIPE` because the peer exited) is
/// [`SendError::Io`] for the send that was writing and closes the writer;
/// every later send is [`SendError::Closed`].
pub struct LineWriter<W> {
    shared: Arc<Shared<W>>,
}

struct Shared<W> {
    queue: Mutex<Queue>,
    io: tokio::sync::Mutex<Io<W>>,
    limit: usize,
    probe: Option<UnreadProbe>,
}

struct Queue {
    /// Whole frames waiting to be handed to the writer.
    pending: Vec<u8>,
    /// A buffer to serialize the next frame into.
    spare: Vec<u8>,
    /// Someone is draining `pending` (or is about to).
    writing: bool,
    open: bool,
    /// Where answers must wait for the notices before them.
    marks: Marks,
}

struct Io<W> {
    out: Option<W>,
    /// The batch being written, `written` bytes of it already out.
    batch: Vec<u8>,
    written: usize,
    /// Offsets into `batch` (ascending) where the peer must have read what
    /// was written before writing on.
    marks: Vec<usize>,
}

impl<W> Clone for LineWriter<W> {
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<W> fmt::Debug for LineWriter<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let q = self.shared.lock();
        f.debug_struct("LineWriter")
            .field("queued", &q.pending.len())
            .field("open", &q.open)
            .finish_non_exhaustive()
    }
}

impl<W> Shared<W> {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn shrunk(mut buf: Vec<u8>) -> Vec<u8> {
    buf.clear();
    if buf.capacity() > SHRINK_ABOVE {
        Vec::new()
    } else {
        buf
    }
}

impl<W: AsyncWrite + Unpin> LineWriter<W> {
    /// Writes frames to `out`, with the default buffer limit.
    pub fn new(out: W) -> Self {
        Self::with_limit(out, DEFAULT_WRITE_BUFFER_BYTES)
    }

    /// Writes frames to `out`; at most `limit` bytes of frames wait.
    pub fn with_limit(out: W, limit: usize) -> Self {
        Self::with_unread_probe(out, limit, None)
    }

    /// [`with_limit`](Self::with_limit), with a way to tell what the peer
    /// has not read yet ([`unread_probe`] of the descriptor `out` writes
    /// to): an [`Order::Answer`] then waits until the peer has read the
    /// notices before it.
    pub fn with_unread_probe(out: W, limit: usize, probe: Option<UnreadProbe>) -> Self {
        Self {
            shared: Arc::new(Shared {
                queue: Mutex::new(Queue {
                    pending: Vec::new(),
                    spare: Vec::new(),
                    writing: false,
                    open: true,
                    marks: Marks::default(),
                }),
                io: tokio::sync::Mutex::new(Io {
                    out: Some(out),
                    batch: Vec::new(),
                    written: 0,
                    marks: Vec::new(),
                }),
                limit,
                probe,
            }),
        }
    }

    /// Serializes `value` as one line of JSON and queues it (or writes it,
    /// when nobody else is writing). Waits while the buffer is full.
    pub async fn send<T: Serialize + ?Sized>(&self, value: &T) -> Result<(), SendError> {
        self.send_ordered(value, Order::Any).await
    }

    /// [`send`](Self::send), with what the frame is to the order the peer
    /// observes (see the type's docs).
    pub async fn send_ordered<T: Serialize + ?Sized>(
        &self,
        value: &T,
        order: Order,
    ) -> Result<(), SendError> {
        let frame = self.serialize(value)?;
        self.send_frame(frame, order).await
    }

    /// Writes one pre-serialized JSON value as a line (a trailing `\n` is
    /// optional; one inside is refused, since it would split the frame).
    pub async fn send_raw(&self, line: &[u8]) -> Result<(), SendError> {
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        if memchr::memchr(b'\n', line).is_some() {
            return Err(SendError::Invalid("a frame must not contain a newline"));
        }
        let mut frame = std::mem::take(&mut self.shared.lock().spare);
        frame.clear();
        frame.extend_from_slice(line);
        frame.push(b'\n');
        self.send_frame(frame, Order::Any).await
    }

    /// Queues `value` without waiting, for callers that cannot (a
    /// notifier called from synchronous code). Fails with
    /// [`SendError::Full`] when the buffer is full: the caller decides
    /// what to drop. When nobody is writing, a task is spawned to write
    /// (so this needs a Tokio runtime).
    pub fn try_send<T: Serialize + ?Sized>(&self, value: &T) -> Result<(), SendError>
    where
        W: Send + 'static,
    {
        self.try_send_ordered(value, Order::Any)
    }

    /// [`try_send`](Self::try_send), with what the frame is to the order
    /// the peer observes (see the type's docs).
    pub fn try_send_ordered<T: Serialize + ?Sized>(
        &self,
        value: &T,
        order: Order,
    ) -> Result<(), SendError>
    where
        W: Send + 'static,
    {
        let frame = self.serialize(value)?;
        let mut q = self.shared.lock();
        if !q.open {
            return Err(SendError::Closed);
        }
        if q.pending.len() >= self.shared.limit {
            q.spare = shrunk(frame);
            return Err(SendError::Full);
        }
        let runtime = if q.writing {
            None
        } else {
            let runtime = tokio::runtime::Handle::try_current()
                .map_err(|_| SendError::Io(io::Error::other("no Tokio runtime to write with")))?;
            q.writing = true;
            Some(runtime)
        };
        append(&mut q, frame, order);
        drop(q);
        if let Some(runtime) = runtime {
            let writer = self.clone();
            runtime.spawn(async move {
                if let Err(e) = writer.drain().await {
                    tracing::debug!(error = %e, "NDJSON writer: a background write failed");
                }
            });
        }
        Ok(())
    }

    /// Queues `value` as one line without writing it and without waiting:
    /// it goes out with the next [`flush_queued`](Self::flush_queued), or
    /// with any send or [`close`](Self::close) before that, in order.
    /// For a reader answering several messages it read at once: queue
    /// each answer, then flush them with one `write` before waiting for
    /// more input. The caller must flush (nothing else writes a frame
    /// queued while nobody is writing). Fails with [`SendError::Full`]
    /// (nothing queued) when the buffer is full: send instead, and wait.
    pub fn queue<T: Serialize + ?Sized>(&self, value: &T) -> Result<(), SendError> {
        let frame = self.serialize(value)?;
        let mut q = self.shared.lock();
        if !q.open {
            q.spare = shrunk(frame);
            return Err(SendError::Closed);
        }
        if q.pending.len() >= self.shared.limit {
            q.spare = shrunk(frame);
            return Err(SendError::Full);
        }
        append(&mut q, frame, Order::Any);
        Ok(())
    }

    /// Writes what [`queue`](Self::queue) left, unless someone is writing
    /// already (they write it): as much as the pipe takes now, right here,
    /// and the rest from a task of its own, so this never waits. Needs a
    /// Tokio runtime when the pipe is full.
    pub fn flush_queued(&self)
    where
        W: Send + 'static,
    {
        {
            let mut q = self.shared.lock();
            if q.pending.is_empty() || q.writing || !q.open {
                return;
            }
            q.writing = true;
        }
        let writer = self.clone();
        let mut drain = Box::pin(async move {
            if let Err(e) = writer.drain().await {
                tracing::debug!(error = %e, "NDJSON writer: writing queued frames failed");
            }
        });
        // The no-op waker is never needed: a drain still pending after
        // this poll is polled again at once by its task.
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        if drain.as_mut().poll(&mut cx).is_pending() {
            tokio::spawn(drain);
        }
    }

    /// Writes what is queued (a frame a cancelled send left half-written
    /// included), then shuts the pipe down (the peer sees the end of its
    /// input). Idempotent; sends after it fail with [`SendError::Closed`].
    pub async fn close(&self) -> Result<(), SendError> {
        let mut io = self.shared.io.lock().await;
        let result = loop {
            if let Err(e) = io.finish(self.shared.probe.as_ref()).await {
                break Err(SendError::Io(e));
            }
            let mut q = self.shared.lock();
            if q.pending.is_empty() {
                q.open = false;
                break Ok(());
            }
            io.take(&mut q);
        };
        self.shared.lock().open = false;
        if let Some(mut out) = io.out.take() {
            let _ = out.shutdown().await;
        }
        result
    }

    /// Whether the writer is closed (by [`close`](Self::close) or after a
    /// failed write).
    pub fn is_closed(&self) -> bool {
        !self.shared.lock().open
    }

    /// Serializes `value` into a frame for [`send_frame`](Self::send_frame):
    /// for a caller that frees the value before it waits for room, so only
    /// one copy of a large answer is held while the peer does not read.
    pub(crate) fn serialize<T: Serialize + ?Sized>(&self, value: &T) -> Result<Vec<u8>, SendError> {
        let mut frame = std::mem::take(&mut self.shared.lock().spare);
        frame.clear();
        if let Err(e) = serde_json::to_writer(&mut frame, value) {
            self.shared.lock().spare = shrunk(frame);
            return Err(SendError::Serialize(e));
        }
        frame.push(b'\n');
        Ok(frame)
    }

    /// Sends a frame made by [`serialize`](Self::serialize); see
    /// [`send_ordered`](Self::send_ordered).
    pub(crate) async fn send_frame(&self, frame: Vec<u8>, order: Order) -> Result<(), SendError> {
        enum Next {
            Wait(Vec<u8>),
            Queued,
            Write,
        }
        let mut frame = frame;
        loop {
            let next = {
                let mut q = self.shared.lock();
                if !q.open {
                    q.spare = shrunk(frame);
                    return Err(SendError::Closed);
                }
                if q.writing && q.pending.len() >= self.shared.limit {
                    Next::Wait(frame)
                } else {
                    append(&mut q, frame, order);
                    if q.writing {
                        Next::Queued
                    } else {
                        q.writing = true;
                        Next::Write
                    }
                }
            };
            match next {
                // Full: wait for the writer, which holds the pipe until the
                // buffer is drained.
                Next::Wait(f) => {
                    frame = f;
                    drop(self.shared.io.lock().await);
                }
                Next::Queued => return Ok(()),
                Next::Write => return self.drain().await,
            }
        }
    }

    /// Writes batches until nothing is queued. Called by whoever set
    /// `writing`; if this future is dropped, `writing` is cleared so the
    /// next sender takes over (and finishes the batch first).
    async fn drain(&self) -> Result<(), SendError> {
        struct Writing<'a, W>(&'a Shared<W>, bool);
        impl<W> Drop for Writing<'_, W> {
            fn drop(&mut self) {
                if self.1 {
                    self.0.lock().writing = false;
                }
            }
        }
        let mut writing = Writing(&self.shared, true);
        let mut io = self.shared.io.lock().await;
        loop {
            if let Err(e) = io.finish(self.shared.probe.as_ref()).await {
                return Err(self.fail(&mut io, e));
            }
            {
                let mut q = self.shared.lock();
                if !q.pending.is_empty() {
                    io.take(&mut q);
                    continue;
                }
            }
            if let Some(out) = io.out.as_mut()
                && let Err(e) = out.flush().await
            {
                return Err(self.fail(&mut io, e));
            }
            let mut q = self.shared.lock();
            if q.pending.is_empty() {
                q.writing = false;
                writing.1 = false;
                return Ok(());
            }
            io.take(&mut q);
        }
    }

    fn fail(&self, io: &mut Io<W>, e: io::Error) -> SendError {
        tracing::debug!(error = %e, "NDJSON writer: writing failed; closing");
        io.out = None;
        io.batch.clear();
        io.written = 0;
        io.marks.clear();
        let mut q = self.shared.lock();
        q.open = false;
        q.pending = Vec::new();
        q.marks = Marks::default();
        SendError::Io(e)
    }
}

/// Appends a whole frame to the queue (taking the frame's buffer when the
/// queue is empty: no copy), marking where it must wait for the notices
/// before it.
fn append(q: &mut Queue, frame: Vec<u8>, order: Order) {
    q.marks.note(order, q.pending.len());
    if q.pending.is_empty() {
        let old = std::mem::replace(&mut q.pending, frame);
        if q.spare.capacity() < old.capacity() {
            q.spare = shrunk(old);
        }
    } else {
        q.pending.extend_from_slice(&frame);
        if q.spare.capacity() < frame.capacity() {
            q.spare = shrunk(frame);
        }
    }
}

impl<W: AsyncWrite + Unpin> Io<W> {
    /// Makes what is queued the batch to write (the current one is done).
    fn take(&mut self, q: &mut Queue) {
        std::mem::swap(&mut q.pending, &mut self.batch);
        self.marks = std::mem::take(&mut q.marks.at);
    }

    /// Writes the rest of the current batch, waiting at each mark until
    /// the peer has read what came before it. Each `write` either happens
    /// or not when cancelled, and the progress is recorded at once; a mark
    /// is passed only once its wait is over.
    async fn finish(&mut self, probe: Option<&UnreadProbe>) -> io::Result<()> {
        let Self {
            out,
            batch,
            written,
            marks,
        } = self;
        if *written >= batch.len() {
            marks.clear();
            return Ok(());
        }
        let Some(out) = out.as_mut() else {
            batch.clear();
            *written = 0;
            marks.clear();
            return Err(io::Error::new(io::ErrorKind::BrokenPipe, "closed"));
        };
        while *written < batch.len() {
            let end = match marks.first() {
                Some(&mark) if mark <= *written => {
                    // What is before the mark goes out on its own, and is
                    // read before the answer after it is written.
                    out.flush().await?;
                    if let Some(probe) = probe {
                        settle(probe).await;
                    }
                    marks.remove(0);
                    continue;
                }
                Some(&mark) => mark,
                None => batch.len(),
            };
            match out.write(&batch[*written..end]).await {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => *written += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        marks.clear();
        *batch = shrunk(std::mem::take(batch));
        *written = 0;
        Ok(())
    }
}
