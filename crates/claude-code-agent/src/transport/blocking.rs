//! The CLI's stdout read with blocking `read`s, for the session's reader
//! thread ([`LineReader::into_blocking`](super::LineReader::into_blocking)).
//!
//! Why a thread and blocking reads: a tool call is one line in and one
//! line out, and on a Tokio reactor every line costs an `epoll_wait`, a
//! wakeup of the worker parked in it and a pass through the scheduler
//! before the `read`. A thread blocked in `read` is woken straight by the
//! pipe (with the kernel's synchronous-wakeup hint, so usually on the
//! CPU of the writer that is about to wait for the answer): one system
//! call per line, as a plain blocking loop does.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};
use tokio::process::ChildStdout;

/// A pipe read with blocking `read`s behind the [`AsyncRead`] interface
/// the shared [`LineReader`](claude_code_agent_mcp::__private::transport::LineReader)
/// takes: every poll is ready, after waiting in `read` as long as it
/// takes. Only for a thread of its own, never a runtime's worker.
#[derive(Debug)]
pub(crate) struct BlockingPipe(File);

impl BlockingPipe {
    /// Takes the pipe out of the reactor and makes it blocking.
    pub(crate) fn new(stdout: ChildStdout) -> io::Result<Self> {
        Ok(Self(File::from(stdout.into_owned_fd()?)))
    }
}

impl AsyncRead for BlockingPipe {
    fn poll_read(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        // Read straight into the spare, uninitialised room: no zero-fill.
        // SAFETY: the bytes `read` reports are initialised by it, and only
        // those are marked initialised and filled.
        let room = unsafe { buf.unfilled_mut() };
        loop {
            let n = unsafe { libc::read(self.0.as_raw_fd(), room.as_mut_ptr().cast(), room.len()) };
            if let Ok(n) = usize::try_from(n) {
                unsafe { buf.assume_init(n) };
                buf.advance(n);
                return Poll::Ready(Ok(()));
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Poll::Ready(Err(e));
            }
        }
    }
}
