//! Blocking NDJSON I/O for the fake CLI: a line reader with deadlines (via
//! `poll(2)`) and a flushing frame writer. No threads, no runtime.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::time::Instant;

const INITIAL_BUF: usize = 1 << 20;
const MIN_READ: usize = 256 * 1024;

/// Reads `\n`-terminated lines from a file descriptor, with an optional
/// deadline per call. Lines of any size; the returned slice excludes `\n`.
pub struct LineReader {
    file: File,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    scanned: usize,
    eof: bool,
}

impl LineReader {
    /// Reads from `file` (a pipe: stdin, or a child's stdout).
    pub fn new(file: File) -> Self {
        LineReader {
            file,
            buf: vec![0; INITIAL_BUF],
            start: 0,
            end: 0,
            scanned: 0,
            eof: false,
        }
    }

    /// The next line; `Ok(None)` at EOF; an error of kind `TimedOut` when
    /// `deadline` passes first (nothing is lost: the next call continues).
    pub fn next_line(&mut self, deadline: Option<Instant>) -> io::Result<Option<&[u8]>> {
        loop {
            if let Some(pos) = memchr::memchr(b'\n', &self.buf[self.scanned..self.end]) {
                let nl = self.scanned + pos;
                let s = self.start;
                self.start = nl + 1;
                self.scanned = self.start;
                return Ok(Some(&self.buf[s..nl]));
            }
            self.scanned = self.end;
            if self.eof {
                if self.start < self.end {
                    let s = self.start;
                    self.start = self.end;
                    return Ok(Some(&self.buf[s..self.end]));
                }
                return Ok(None);
            }
            self.make_room();
            if let Some(deadline) = deadline {
                wait_readable(&self.file, deadline)?;
            }
            match self.file.read(&mut self.buf[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(n) => self.end += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    fn make_room(&mut self) {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
            self.scanned = 0;
            if self.buf.len() > 8 * INITIAL_BUF {
                self.buf = vec![0; INITIAL_BUF];
            }
        }
        if self.buf.len() - self.end >= MIN_READ {
            return;
        }
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.scanned -= self.start;
            self.start = 0;
        }
        if self.buf.len() - self.end < MIN_READ {
            let wanted = (self.buf.len() * 2).max(self.end + MIN_READ);
            self.buf.resize(wanted, 0);
        }
    }
}

/// Waits until `file` is readable (or at EOF/error), or fails with `TimedOut`.
fn wait_readable(file: &File, deadline: Instant) -> io::Result<()> {
    loop {
        let now = Instant::now();
        if now >= deadline {
            return Err(io::ErrorKind::TimedOut.into());
        }
        let ms = (deadline - now).as_millis().clamp(1, i32::MAX as u128) as libc::c_int;
        let mut fds = libc::pollfd {
            fd: file.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd for the duration of the call.
        let r = unsafe { libc::poll(&mut fds, 1, ms) };
        if r > 0 {
            return Ok(());
        }
        if r < 0 {
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

/// Writes whole frames (one JSON object and `\n`) and flushes each one, as
/// the real CLI does.
pub struct Out {
    file: File,
    buf: Vec<u8>,
}

impl Out {
    /// Writes to `file` (stdout, or a child's stdin).
    pub fn new(file: File) -> Self {
        Out {
            file,
            buf: Vec::with_capacity(64 * 1024),
        }
    }

    /// Serializes `value` as one line and writes it.
    pub fn frame<T: serde::Serialize + ?Sized>(&mut self, value: &T) -> io::Result<()> {
        self.buf.clear();
        serde_json::to_writer(&mut self.buf, value)?;
        self.buf.push(b'\n');
        let buf = std::mem::take(&mut self.buf);
        let r = self.raw(&buf);
        self.buf = buf;
        if self.buf.capacity() > (16 << 20) {
            self.buf = Vec::with_capacity(64 * 1024);
        }
        r
    }

    /// Writes bytes exactly as given (the caller supplies any `\n`).
    pub fn raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.file.write_all(bytes)
    }
}
