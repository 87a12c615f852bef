//! Every log event of the test's thread, kept, at every level: for the
//! tests that check what is logged. Run the test on a current-thread
//! runtime (`#[tokio::test]`) so that the tasks it spawns log here too.

use std::io::Write;
use std::sync::{Arc, Mutex};

/// The log of the test's thread while it lives.
pub struct Logs {
    buffer: Captured,
    _guard: tracing::subscriber::DefaultGuard,
}

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Logs {
    /// Starts keeping the thread's log.
    pub fn capture() -> Self {
        let buffer = Captured::default();
        let writer = buffer.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .finish();
        Self {
            buffer,
            _guard: tracing::subscriber::set_default(subscriber),
        }
    }

    /// What was logged so far.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.buffer.0.lock().unwrap()).into_owned()
    }
}
