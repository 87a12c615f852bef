//! stdin and stdout as Tokio pipes when both are pipes (a client spawned
//! the server, as MCP clients do): read and written through the reactor.
//! `tokio::io::stdin()` and `stdout()` hand every read and every write to
//! the blocking pool instead, a thread hand-off with its futex wakeups and
//! context switches for each line in and each reply out.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::os::unix::fs::FileTypeExt;

use tokio::net::unix::pipe;

/// stdin and stdout as pipes, and the guard that sets them back to
/// blocking mode; `None` when either is not a pipe (a file, a terminal,
/// closed) or cannot be one: then the caller serves through Tokio's own
/// stdin and stdout.
pub(super) fn stdio() -> Option<(pipe::Receiver, pipe::Sender, Restore)> {
    let (stdin, stdout) = (io::stdin(), io::stdout());
    let (input, output) = (fifo(stdin.as_fd())?, fifo(stdout.as_fd())?);
    // Non-blocking mode belongs to the stream, shared by every descriptor
    // of it (ours, and any a parent or child holds): noted, to be restored
    // (also if only one of the two could be converted).
    let restore = Restore {
        blocking: [
            (stdin.as_fd().as_raw_fd(), !nonblocking(input.as_raw_fd())?),
            (
                stdout.as_fd().as_raw_fd(),
                !nonblocking(output.as_raw_fd())?,
            ),
        ],
    };
    let input = pipe::Receiver::from_owned_fd(input).ok()?;
    let output = pipe::Sender::from_owned_fd(output).ok()?;
    Some((input, output, restore))
}

/// Sets stdin and stdout back to blocking mode, if they were, when dropped
/// (serving ended, or was dropped).
pub(super) struct Restore {
    blocking: [(RawFd, bool); 2],
}

impl Drop for Restore {
    fn drop(&mut self) {
        for (fd, blocking) in self.blocking {
            if blocking {
                set_blocking(fd);
            }
        }
    }
}

/// A copy of `fd` if it is a pipe (FIFO).
fn fifo(fd: BorrowedFd<'_>) -> Option<OwnedFd> {
    let file = File::from(fd.try_clone_to_owned().ok()?);
    let is_fifo = file.metadata().ok()?.file_type().is_fifo();
    is_fifo.then(|| OwnedFd::from(file))
}

/// Whether `fd` is in non-blocking mode; `None` if its flags cannot be read.
fn nonblocking(fd: RawFd) -> Option<bool> {
    // SAFETY: F_GETFL reads the flags of a descriptor this process holds.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    (flags >= 0).then_some(flags & libc::O_NONBLOCK != 0)
}

/// Clears `O_NONBLOCK` on `fd` (stdin or stdout, open for the process's
/// life); a failure leaves it as it is.
fn set_blocking(fd: RawFd) {
    // SAFETY: F_GETFL/F_SETFL on a standard descriptor of this process.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK);
        }
    }
}
