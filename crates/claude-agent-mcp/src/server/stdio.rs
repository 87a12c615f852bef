//! Serving a [`Handler`] over NDJSON: stdin/stdout, or any reader and writer.

use std::sync::Arc;

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use super::{Handler, RequestContext, Session};
use crate::client::lines::{Line, LineReader};
use crate::jsonrpc::{self, ErrorObject};

/// The cap on one incoming line when serving (64 MiB).
pub const SERVE_MAX_LINE_BYTES: usize = crate::client::DEFAULT_MAX_LINE_BYTES;

/// Serves `handler` on this process's stdin and stdout until stdin ends.
///
/// One [`Session`] for the connection (so `notifications/cancelled`,
/// `logging/setLevel` and `list_changed` work); every request is answered
/// in its own task, so a slow tool never holds up `ping` or another call.
/// Lines that are not JSON get a `-32700` reply; lines over the cap a
/// `-32600`. Returns once stdin is closed and every request answered.
///
/// ```no_run
/// use claude_agent_mcp::{Server, server::serve_stdio};
///
/// #[tokio::main]
/// async fn main() -> std::io::Result<()> {
///     serve_stdio(Server::builder("demo", "1.0.0").build()).await
/// }
/// ```
pub async fn serve_stdio(handler: impl Handler) -> std::io::Result<()> {
    serve_lines(Arc::new(handler), tokio::io::stdin(), tokio::io::stdout()).await
}

/// [`serve_stdio`] over any reader and writer.
pub async fn serve_lines<R, W>(
    handler: Arc<dyn Handler>,
    input: R,
    output: W,
) -> std::io::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (tx, mut rx) = mpsc::unbounded_channel::<Value>();
    let writer = tokio::spawn(async move {
        let mut output = output;
        let mut buf = Vec::new();
        while let Some(message) = rx.recv().await {
            buf.clear();
            if serde_json::to_writer(&mut buf, &message).is_err() {
                continue;
            }
            buf.push(b'\n');
            output.write_all(&buf).await?;
            if rx.is_empty() {
                output.flush().await?;
            }
        }
        output.flush().await
    });
    let notify = tx.clone();
    let session = Session::with_notifier(move |m| {
        let _ = notify.send(m);
    });
    // Responses come back through `handle` with this session: tools may
    // send requests to the client (`ToolContext::request`).
    session.set_client_requests(true);
    let mut lines = LineReader::new(
        BufReader::with_capacity(64 * 1024, input),
        SERVE_MAX_LINE_BYTES,
    );
    let mut tasks = tokio::task::JoinSet::new();
    while let Some(line) = lines.next_line().await? {
        let line = match line {
            Line::Text(line) => line,
            Line::TooLong { len, .. } => {
                let error = ErrorObject::invalid_request(format!(
                    "a message of {len} bytes exceeds the cap of {SERVE_MAX_LINE_BYTES} bytes"
                ));
                let _ = tx.send(jsonrpc::error_response(&Value::Null, error));
                continue;
            }
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let message: Value = match serde_json::from_slice(&line) {
            Ok(m) => m,
            Err(e) => {
                let error = ErrorObject::new(jsonrpc::PARSE_ERROR, format!("Parse error: {e}"));
                let _ = tx.send(jsonrpc::error_response(&Value::Null, error));
                continue;
            }
        };
        let ctx = RequestContext::with_session(session.clone());
        if jsonrpc::kind(&message) == jsonrpc::Kind::Request {
            let handler = Arc::clone(&handler);
            let tx = tx.clone();
            tasks.spawn(async move {
                if let Some(reply) = handler.handle(message, ctx).await {
                    let _ = tx.send(reply);
                }
            });
        } else if let Some(reply) = handler.handle(message, ctx).await {
            // Notifications are handled in order (cancellation must see its call).
            let _ = tx.send(reply);
        }
        while tasks.try_join_next().is_some() {}
    }
    session.close();
    while tasks.join_next().await.is_some() {}
    drop(session);
    drop(tx);
    writer.await.map_err(std::io::Error::other)?
}
