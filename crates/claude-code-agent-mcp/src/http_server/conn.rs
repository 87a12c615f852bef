//! The accept loop behind [`serve`](super::StreamableHttpService::serve):
//! HTTP/1.1 connections on hyper, each in its own task, with a deadline on
//! request headers and a bounded shutdown.
//!
//! `axum::serve` would do, except that it sets no header deadline (a client
//! can hold a connection open forever by never finishing its headers) and its
//! graceful shutdown waits for every connection without limit (an open SSE
//! stream or a stalled request would hold it forever). Here, once asked to
//! stop, the listener closes and ([`Stop`]) either the service ends its
//! sessions at once (which closes their streams and cancels their calls),
//! every connection is asked to finish its exchange, and what is left after
//! the grace period is aborted; or the service drains first (its calls run
//! to their answers), within a deadline, while connections finish.

use std::future::Future;
use std::time::Duration;

use axum::Router;
use futures::future::BoxFuture;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;

/// How the accept loop treats its connections.
pub(crate) struct ConnLimits {
    /// The most a client may take to send a request's headers.
    pub(crate) header_read_timeout: Duration,
    /// How long connections get to finish once the server stops.
    pub(crate) shutdown_grace: Duration,
}

/// What the accept loop does once asked to stop (its listener closed).
pub(crate) enum Stop<'a> {
    /// Runs this (the service ends its sessions), then gives connections
    /// their grace period to finish.
    Now(Box<dyn FnOnce() + Send + 'a>),
    /// Connections finish their exchange while `drain` runs; once it is
    /// over and no connection is left, or at the deadline, `then` runs and
    /// what is left is closed.
    Drain {
        drain: BoxFuture<'a, usize>,
        deadline: Duration,
        then: Box<dyn FnOnce() + Send + 'a>,
    },
}

/// Serves `router` on `listener` until `shutdown` completes (or forever).
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    limits: ConnLimits,
    shutdown: impl Future<Output = ()>,
    stop: Stop<'_>,
) -> std::io::Result<()> {
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut connections = JoinSet::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => {
                    connections.spawn(connection(
                        tcp,
                        router.clone(),
                        limits.header_read_timeout,
                        stop_rx.clone(),
                    ));
                }
                Err(e) => accept_failed(e).await,
            },
            // Reap finished connections as they go.
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }

    drop(listener);
    match stop {
        Stop::Now(on_stop) => {
            on_stop();
            let _ = stop_tx.send(true);
            finish(&mut connections, limits.shutdown_grace).await;
        }
        Stop::Drain {
            mut drain,
            deadline,
            then,
        } => {
            let started = tokio::time::Instant::now();
            let _ = stop_tx.send(true);
            // The drain is bounded by the same deadline; connections are
            // reaped meanwhile.
            loop {
                tokio::select! {
                    _ = &mut drain => break,
                    Some(_) = connections.join_next(), if !connections.is_empty() => {}
                }
            }
            let left = deadline.saturating_sub(started.elapsed());
            // The answers of the last calls go out on their connections.
            wait_for(&mut connections, left.min(limits.shutdown_grace)).await;
            then();
            finish(&mut connections, Duration::ZERO).await;
        }
    }
    Ok(())
}

/// Waits up to `grace` for the connections to end.
async fn wait_for(connections: &mut JoinSet<()>, grace: Duration) {
    let grace = tokio::time::sleep(grace);
    let mut grace = std::pin::pin!(grace);
    loop {
        tokio::select! {
            next = connections.join_next() => if next.is_none() { return },
            () = &mut grace => return,
        }
    }
}

/// Waits up to `grace` for the connections to end, then closes those left.
async fn finish(connections: &mut JoinSet<()>, grace: Duration) {
    wait_for(connections, grace).await;
    if !connections.is_empty() {
        tracing::debug!(
            left = connections.len(),
            "closing the connections left after the grace period"
        );
        connections.abort_all();
        while connections.join_next().await.is_some() {}
    }
}

/// One connection: served until it ends, or asked to finish when `stop`
/// turns true.
async fn connection(
    tcp: TcpStream,
    router: Router,
    header_read_timeout: Duration,
    mut stop: watch::Receiver<bool>,
) {
    if let Err(e) = tcp.set_nodelay(true) {
        tracing::trace!("could not set TCP_NODELAY: {e}");
    }
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(header_read_timeout);
    let conn = builder.serve_connection(TokioIo::new(tcp), TowerToHyperService::new(router));
    let mut conn = std::pin::pin!(conn);
    let mut stopping = false;
    loop {
        tokio::select! {
            result = conn.as_mut() => {
                if let Err(e) = result {
                    tracing::trace!("connection ended: {e}");
                }
                return;
            }
            changed = stop.wait_for(|stop| *stop), if !stopping => {
                stopping = true;
                if changed.is_ok() {
                    conn.as_mut().graceful_shutdown();
                }
            }
        }
    }
}

/// A failed `accept`: the connection's own trouble is skipped; running out
/// of file descriptors or memory waits a moment instead of spinning.
async fn accept_failed(e: std::io::Error) {
    use std::io::ErrorKind::*;
    if matches!(
        e.kind(),
        ConnectionAborted | ConnectionReset | ConnectionRefused | Interrupted
    ) {
        return;
    }
    tracing::error!("accepting a connection failed: {e}; retrying in 1 s");
    tokio::time::sleep(Duration::from_secs(1)).await;
}
