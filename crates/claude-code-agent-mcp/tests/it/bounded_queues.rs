//! No peer can make us buffer without bound, and a slow consumer never
//! stalls a response:
//!
//! * a notification stream nobody reads keeps at most
//!   `NOTIFICATION_BUFFER` notifications and loses the oldest (counted),
//!   while responses go on arriving;
//! * responses their callers have not taken past the client's byte budget
//!   make `Inbox::ready` wait (a transport then reads no more), until the
//!   callers take them;
//! * `serve_lines` facing a client that stops reading drops the server's
//!   notifications past its write buffer (counted), never a reply, and
//!   reads no more than `SERVE_MAX_REQUESTS_IN_FLIGHT` requests ahead.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use claude_code_agent_mcp::client::{
    ClientOptions, Error, HandshakeMode, Inbox, McpClient, NOTIFICATION_BUFFER, SendOptions,
    Transport,
};
use claude_code_agent_mcp::server::serve_lines;
use claude_code_agent_mcp::types::LogLevel;
use claude_code_agent_mcp::{Server, Tool, ToolContext};
use futures::StreamExt;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// A server that answers every request at once, and before answering a
/// `tools/call` sends `notes` progress notifications.
struct Chatty {
    inbox: Mutex<Option<Inbox>>,
    notes: usize,
}

impl Transport for Chatty {
    fn start(&self, inbox: Inbox) -> Result<(), Error> {
        *self.inbox.lock().unwrap() = Some(inbox);
        Ok(())
    }

    fn send(&self, message: Value, _: SendOptions) -> BoxFuture<'_, Result<(), Error>> {
        let inbox = self.inbox.lock().unwrap().clone().unwrap();
        let (Some(id), Some(method)) = (message.get("id"), message["method"].as_str()) else {
            return Box::pin(async { Ok(()) });
        };
        let result = match method {
            "initialize" => json!({"protocolVersion":"2025-11-25","capabilities":{},
                                   "serverInfo":{"name":"chatty","version":"1"}}),
            "tools/call" => {
                for i in 0..self.notes {
                    inbox.deliver(json!({"jsonrpc":"2.0","method":"notifications/progress",
                        "params":{"progressToken":"t","progress":i}}));
                }
                json!({"content":[{"type":"text","text":"done"}],"isError":false})
            }
            _ => json!({}),
        };
        inbox.deliver(json!({"jsonrpc":"2.0","id":id,"result":result}));
        Box::pin(async { Ok(()) })
    }

    fn close(&self) -> BoxFuture<'_, Result<(), Error>> {
        Box::pin(async { Ok(()) })
    }

    fn is_alive(&self) -> bool {
        true
    }
}

#[tokio::test]
async fn an_unread_notification_stream_loses_the_oldest_and_never_holds_up_a_response() {
    let extra = 300;
    let transport = Chatty {
        inbox: Mutex::new(None),
        notes: NOTIFICATION_BUFFER + extra,
    };
    let options = ClientOptions::new("bounded", "1").handshake(HandshakeMode::Initialize);
    let client = McpClient::connect(transport, options).await.unwrap();
    let mut stream = client.notifications();
    // Nobody reads the stream during the call: the response still arrives.
    let result = tokio::time::timeout(Duration::from_secs(5), client.call_tool("any", json!({})))
        .await
        .expect("a response never waits for a notification stream")
        .unwrap();
    assert_eq!(result.text_content(), "done");
    client.close().await.unwrap();
    let mut seen = Vec::new();
    while let Some(note) = stream.next().await {
        let claude_code_agent_mcp::client::ServerNotification::Progress(p) = note else {
            panic!("{note:?}")
        };
        seen.push(p.progress as usize);
    }
    // The oldest were dropped; the newest NOTIFICATION_BUFFER kept, in order.
    assert_eq!(stream.missed(), extra as u64);
    assert_eq!(seen.len(), NOTIFICATION_BUFFER);
    assert_eq!(seen[0], extra);
    assert!(seen.windows(2).all(|w| w[1] == w[0] + 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_lines_drops_notifications_not_replies_for_a_client_that_stops_reading() {
    let notes = 50_000;
    let emitted = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let done = Arc::clone(&emitted);
    let server = Server::builder("chatty", "1")
        .tool(
            Tool::new(
                "chatter",
                "logs a lot",
                move |_: Value, ctx: ToolContext| {
                    let done = Arc::clone(&done);
                    async move {
                        for i in 0..notes {
                            ctx.log(LogLevel::Info, json!({"i": i, "pad": "x".repeat(100)}));
                        }
                        done.store(true, std::sync::atomic::Ordering::SeqCst);
                        "done"
                    }
                },
            )
            .input_schema(json!({"type":"object"})),
        )
        .build();
    let (mut input, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, output) = tokio::io::duplex(1 << 16);
    let served = tokio::spawn(serve_lines(Arc::new(server), server_in, server_out));
    let call = json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
        "params":{"name":"chatter","arguments":{}}});
    input
        .write_all(format!("{call}\n").as_bytes())
        .await
        .unwrap();
    // The client reads nothing while the tool runs (about 6 MiB of logs).
    tokio::time::timeout(Duration::from_secs(30), async {
        while !emitted.load(std::sync::atomic::Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the tool never waits for the client");
    input.shutdown().await.unwrap();
    let mut lines = BufReader::new(output).lines();
    let mut logs = 0;
    let mut reply = None;
    while let Some(line) = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
        .await
        .expect("serving goes on")
        .unwrap()
    {
        let message: Value = serde_json::from_str(&line).unwrap();
        match message["method"].as_str() {
            Some("notifications/message") => {
                assert_eq!(message["params"]["data"]["i"], logs, "in order, none twice");
                logs += 1;
            }
            _ => reply = Some(message),
        }
    }
    served.await.unwrap().unwrap();
    let reply = reply.expect("the reply is never dropped");
    assert_eq!(reply["id"], 1);
    assert_eq!(reply["result"]["content"][0]["text"], "done");
    // What was kept is bounded by the write buffer (1 MiB) and the pipe:
    // the first ones, then nothing (the logs above check there is no gap).
    assert!(logs > 0 && logs < notes / 4, "{logs} of {notes} logs kept");
}

/// A server whose answers to `tools/call` arrive later, as text of
/// `chars` characters, from a task of their own (as a transport's reader
/// would deliver them).
struct Later {
    inbox: Arc<Mutex<Option<Inbox>>>,
    chars: usize,
}

impl Transport for Later {
    fn start(&self, inbox: Inbox) -> Result<(), Error> {
        *self.inbox.lock().unwrap() = Some(inbox);
        Ok(())
    }

    fn send(&self, message: Value, _: SendOptions) -> BoxFuture<'_, Result<(), Error>> {
        let inbox = self.inbox.lock().unwrap().clone().unwrap();
        let (Some(id), Some(method)) = (message.get("id"), message["method"].as_str()) else {
            return Box::pin(async { Ok(()) });
        };
        if method == "initialize" {
            inbox.deliver(json!({"jsonrpc":"2.0","id":id,"result":{
                "protocolVersion":"2025-11-25","capabilities":{},
                "serverInfo":{"name":"later","version":"1"}}}));
            return Box::pin(async { Ok(()) });
        }
        let text = json!({"jsonrpc":"2.0","id":id,"result":{
            "content":[{"type":"text","text":"x".repeat(self.chars)}],"isError":false}})
        .to_string();
        tokio::spawn(async move { inbox.deliver_text(text.as_bytes()).unwrap() });
        Box::pin(async { Ok(()) })
    }

    fn close(&self) -> BoxFuture<'_, Result<(), Error>> {
        Box::pin(async { Ok(()) })
    }

    fn is_alive(&self) -> bool {
        true
    }
}

#[tokio::test]
async fn responses_not_taken_past_the_budget_hold_the_transport_back_until_taken() {
    use futures::FutureExt;
    let slot = Arc::new(Mutex::new(None));
    let transport = Later {
        inbox: Arc::clone(&slot),
        chars: 600_000,
    };
    let options = ClientOptions::new("bounded", "1")
        .handshake(HandshakeMode::Initialize)
        .max_held_bytes(1 << 20);
    let client = McpClient::connect(transport, options).await.unwrap();
    let inbox = slot.lock().unwrap().clone().unwrap();
    // Three calls sent, their answers (600 KB each) delivered, none taken.
    let mut calls: Vec<_> = (0..3)
        .map(|_| Box::pin(client.call_tool("big", json!({}))))
        .collect();
    for call in &mut calls {
        assert!(call.now_or_never().is_none(), "not answered yet");
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let waited = tokio::time::timeout(Duration::from_millis(100), inbox.ready()).await;
    assert!(waited.is_err(), "1.8 MB not taken: no room for more");
    for call in calls {
        let result = call.await.unwrap();
        assert_eq!(result.text_content().len(), 600_000);
    }
    tokio::time::timeout(Duration::from_secs(1), inbox.ready())
        .await
        .expect("taken: room again");
}
