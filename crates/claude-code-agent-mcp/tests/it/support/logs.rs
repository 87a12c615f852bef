//! Every log event of the test's thread, kept, at every level: for the
//! tests that check what is logged. Run the test on a current-thread
//! runtime (`#[tokio::test]`) so that the tasks it spawns log here too.
//!
//! One subscriber serves the whole test binary, set once as the global
//! default, with a static filter (this crate at every level, the others
//! from warnings on); it keeps an event only on a thread that is
//! capturing. A subscriber per test (`set_default`), or a filter asking
//! the thread, lost events while other tests of the binary ran without:
//! what a callsite may log is decided once, for every thread.

use std::cell::RefCell;
use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};

use tracing_subscriber::Layer;
use tracing_subscriber::layer::SubscriberExt;

thread_local! {
    /// The buffer of the thread's capture, while there is one.
    static CAPTURE: RefCell<Option<Arc<Mutex<Vec<u8>>>>> = const { RefCell::new(None) };
}

/// Writes into the thread's capture (nothing when there is none).
struct ThreadWriter;

impl Write for ThreadWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        CAPTURE.with(|c| {
            if let Some(buffer) = &*c.borrow() {
                buffer.lock().unwrap().extend_from_slice(bytes);
            }
        });
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Installs the binary's one subscriber: the capturing log writer and,
/// with the feature `opentelemetry`, the span recorder of `otel.rs`.
pub fn install() {
    static INSTALLED: OnceLock<()> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        // A static filter (what a callsite may log is then the same on every
        // thread): this crate at every level, the others from warnings on;
        // the writer keeps what a capturing thread writes.
        let targets = tracing_subscriber::filter::Targets::new()
            .with_default(tracing::Level::WARN)
            .with_target("claude_code_agent_mcp", tracing::Level::TRACE);
        let layer = tracing_subscriber::fmt::layer()
            .with_ansi(false)
            .with_writer(|| ThreadWriter)
            .with_filter(targets);
        let subscriber = tracing_subscriber::registry().with(layer);
        #[cfg(feature = "opentelemetry")]
        let subscriber = subscriber.with(super::otel::layer());
        tracing::subscriber::set_global_default(subscriber)
            .expect("no other global subscriber in the MCP crate's tests");
    });
}

/// The log of the test's thread while it lives.
pub struct Logs {
    buffer: Arc<Mutex<Vec<u8>>>,
}

impl Logs {
    /// Starts keeping the thread's log.
    pub fn capture() -> Self {
        install();
        let buffer = Arc::new(Mutex::new(Vec::new()));
        CAPTURE.with(|c| *c.borrow_mut() = Some(Arc::clone(&buffer)));
        Self { buffer }
    }

    /// What was logged so far.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.buffer.lock().unwrap()).into_owned()
    }
}

impl Drop for Logs {
    fn drop(&mut self) {
        CAPTURE.with(|c| *c.borrow_mut() = None);
    }
}

/// The crate's events at every level reach the capture of their thread.
#[tokio::test]
async fn logs_capture_every_level() {
    let logs = Logs::capture();
    tracing::error!(target: "claude_code_agent_mcp::t", "E-one");
    tracing::warn!(target: "claude_code_agent_mcp::t", "W-one");
    tracing::info!(target: "claude_code_agent_mcp::t", "I-one");
    tracing::debug!(target: "claude_code_agent_mcp::t", "D-one");
    let text = logs.text();
    for m in ["E-one", "W-one", "I-one", "D-one"] {
        assert!(text.contains(m), "{m}: {text}");
    }
}
