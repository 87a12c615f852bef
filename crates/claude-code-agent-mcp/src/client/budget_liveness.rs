//! Both byte budgets of one NDJSON connection — the server's
//! ([`ServeOptions::max_held_bytes`](crate::server::ServeOptions::max_held_bytes))
//! and our client's ([`ClientOptions::max_held_bytes`](super::ClientOptions::max_held_bytes))
//! — driven with random answer sizes (up to three times the budget),
//! random numbers of calls at once and calls given up midway: every call
//! that was not given up is answered in full, and both budgets come back
//! to zero once every answer was taken.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::future::BoxFuture;
use proptest::prelude::*;
use serde_json::{Value, json};
use tokio::io::{DuplexStream, ReadHalf, WriteHalf};

use super::{ClientOptions, Error, Inbox, McpClient, SendOptions, Transport};
use crate::server::serve_lines_within;
use crate::transport::budget::Budget;
use crate::transport::lines::{Line, LineReader, LineWriter};
use crate::{Server, Tool};

const BUDGET: usize = 64 * 1024;

/// The client end of an in-memory NDJSON connection, read as the stdio
/// transport reads (waiting for the client's budget before each line).
struct Lines {
    reader: Mutex<Option<LineReader<ReadHalf<DuplexStream>>>>,
    writer: LineWriter<WriteHalf<DuplexStream>>,
}

impl Transport for Lines {
    fn start(&self, inbox: Inbox) -> Result<(), Error> {
        let mut lines = self
            .reader
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
            .expect("started once");
        tokio::spawn(async move {
            loop {
                inbox.ready().await;
                match lines.next_line().await {
                    Ok(Some(Line::Text(line))) => {
                        inbox.deliver_text(line.trim_ascii()).expect("JSON");
                    }
                    _ => break inbox.closed_with(Error::closed("the server hung up")),
                }
            }
        });
        Ok(())
    }

    fn send(&self, message: Value, _: SendOptions) -> BoxFuture<'_, Result<(), Error>> {
        Box::pin(async move {
            self.writer
                .send(&message)
                .await
                .map_err(|_| Error::closed("the server hung up"))
        })
    }

    fn close(&self) -> BoxFuture<'_, Result<(), Error>> {
        Box::pin(async {
            let _ = self.writer.close().await;
            Ok(())
        })
    }

    fn is_alive(&self) -> bool {
        !self.writer.is_closed()
    }
}

/// What one call of a case does: the size of its answer, and whether the
/// caller gives up on it (after `give_up` milliseconds).
#[derive(Clone, Debug)]
struct Call {
    size: usize,
    give_up: Option<u64>,
}

fn calls() -> impl Strategy<Value = Vec<Vec<Call>>> {
    let call = (0..3 * BUDGET, proptest::option::weighted(0.2, 0u64..5))
        .prop_map(|(size, give_up)| Call { size, give_up });
    // Rounds of calls made at once.
    proptest::collection::vec(proptest::collection::vec(call, 1..8), 1..5)
}

async fn case(rounds: Vec<Vec<Call>>) -> Result<(), TestCaseError> {
    let server = Server::builder("budget", "1")
        .tool(
            Tool::new("big", "n characters", |v: Value| async move {
                tokio::task::yield_now().await;
                "x".repeat(v["n"].as_u64().unwrap_or(0) as usize)
            })
            .max_result_chars(usize::MAX),
        )
        .build();
    let (client_end, server_end) = tokio::io::duplex(16 * 1024);
    let (server_in, server_out) = tokio::io::split(server_end);
    let served = Budget::with_max_running(BUDGET, 1024);
    let serving = tokio::spawn(serve_lines_within(
        Arc::new(server),
        server_in,
        server_out,
        None,
        Arc::clone(&served),
    ));
    let (client_in, client_out) = tokio::io::split(client_end);
    let transport = Lines {
        reader: Mutex::new(Some(LineReader::new(client_in, 1 << 30))),
        writer: LineWriter::new(client_out),
    };
    let options = ClientOptions::new("budget", "1")
        .request_timeout(Duration::from_secs(20))
        .max_held_bytes(BUDGET);
    let client = McpClient::connect(transport, options).await.unwrap();
    for round in rounds {
        let calls = round.into_iter().map(|call| {
            let client = &client;
            async move {
                let answer = client.call_tool("big", json!({"n": call.size}));
                match call.give_up {
                    Some(ms) => {
                        let _ = tokio::time::timeout(Duration::from_millis(ms), answer).await;
                        Ok(())
                    }
                    None => {
                        let answer = answer
                            .await
                            .map_err(|e| TestCaseError::fail(e.to_string()))?;
                        let len = answer.content[0].as_text().map_or(0, str::len);
                        prop_assert_eq!(len, call.size);
                        Ok(())
                    }
                }
            }
        });
        for outcome in futures::future::join_all(calls).await {
            outcome?;
        }
    }
    // Every answer was taken (or given up): both budgets come back to zero.
    let settled = async {
        while served.held() != 0 || served.reserved() != (0, 0) || client.inner.budget.held() != 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };
    let settled = tokio::time::timeout(Duration::from_secs(10), settled).await;
    prop_assert!(
        settled.is_ok(),
        "held by the server {}, reserved {:?}, held by the client {}",
        served.held(),
        served.reserved(),
        client.inner.budget.held()
    );
    client.close().await.unwrap();
    let served = tokio::time::timeout(Duration::from_secs(10), serving).await;
    prop_assert!(served.is_ok(), "the server did not end with the connection");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn every_call_is_answered_and_both_budgets_come_back_to_zero(rounds in calls()) {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(case(rounds))?;
    }
}
