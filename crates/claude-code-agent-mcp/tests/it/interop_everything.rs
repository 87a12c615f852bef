//! Interop with the reference server `@modelcontextprotocol/server-everything`
//! (installed by scripts/install-peers) over stdio and Streamable HTTP.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::support::peers;
use claude_code_agent_mcp::LogLevel;
use claude_code_agent_mcp::client::{
    ClientOptions, HttpOptions, HttpTransport, McpClient, RequestOptions, ServerNotification,
    StdioOptions, StdioTransport, Transport,
};
use serde_json::{Value, json};

fn everything_js(dir: &Path) -> std::path::PathBuf {
    dir.join("node/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
}

#[derive(Default)]
struct Seen {
    notes: Mutex<Vec<ServerNotification>>,
    roots_asked: Mutex<u32>,
}

fn options(seen: &Arc<Seen>) -> ClientOptions {
    let (a, b) = (seen.clone(), seen.clone());
    ClientOptions::new("interop-test", "1")
        .request_timeout(Duration::from_secs(30))
        .on_notification(move |n| a.notes.lock().unwrap().push(n))
        .on_roots_list(move |_| {
            *b.roots_asked.lock().unwrap() += 1;
            async { Ok(json!({"roots":[{"uri":"file:///tmp/interop-root","name":"interop"}]})) }
        })
        .on_sampling(|params| async move {
            let asked = params["messages"][0]["content"]["text"]
                .as_str()
                .unwrap_or("")
                .to_owned();
            Ok(
                json!({"role":"assistant","model":"test-model","stopReason":"endTurn",
                      "content":{"type":"text","text":format!("sampled: {asked}")}}),
            )
        })
        .on_elicitation(|_| async { Ok(json!({"action":"decline"})) })
}

async fn scenario(transport: impl Transport) {
    let seen = Arc::new(Seen::default());
    let client = McpClient::connect(transport, options(&seen)).await.unwrap();
    assert_eq!(client.server_info().unwrap().name, "mcp-servers/everything");
    assert_eq!(client.protocol_version(), "2025-11-25");

    let tools = client.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    for expected in [
        "echo",
        "get-sum",
        "trigger-long-running-operation",
        "trigger-sampling-request",
        "get-roots-list",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    let echo = client
        .call_tool("echo", json!({"message":"héllo"}))
        .await
        .unwrap();
    assert_eq!(echo.text_content(), "Echo: héllo");
    let sum = client
        .call_tool("get-sum", json!({"a":2,"b":40}))
        .await
        .unwrap();
    assert!(sum.text_content().contains("42"), "{}", sum.text_content());
    let e = client.call_tool("no-such-tool", json!({})).await;
    match e {
        Err(e) => assert!(e.code().is_some(), "{e:?}"),
        Ok(r) => assert!(r.is_error),
    }

    // Server → client requests through our handlers.
    let sampled = client
        .call_tool(
            "trigger-sampling-request",
            json!({"prompt":"two plus two","maxTokens":10}),
        )
        .await
        .unwrap();
    assert!(
        sampled.into_value().to_string().contains("sampled: "),
        "sampling handler not used"
    );
    let roots = client.call_tool("get-roots-list", json!({})).await.unwrap();
    assert!(
        roots.text_content().contains("file:///tmp/interop-root"),
        "{}",
        roots.text_content()
    );
    assert!(*seen.roots_asked.lock().unwrap() >= 1);

    // Progress reaches the callback.
    let long = client
        .call_tool_with(
            "trigger-long-running-operation",
            json!({"duration":0.3,"steps":3}),
            RequestOptions::new().progress_token("p-1"),
        )
        .await
        .unwrap();
    assert!(!long.is_error);
    let progress: Vec<f64> = seen
        .notes
        .lock()
        .unwrap()
        .iter()
        .filter_map(|n| match n {
            ServerNotification::Progress(p) if p.progress_token == json!("p-1") => Some(p.progress),
            _ => None,
        })
        .collect();
    assert_eq!(progress, [1.0, 2.0, 3.0]);

    // Resources, templates, prompts.
    let resources = client.list_resources().await.unwrap();
    assert!(!resources.is_empty());
    let read = client.read_resource(&resources[0].uri).await.unwrap();
    assert_eq!(read.contents[0].uri, resources[0].uri);
    assert!(
        read.contents[0]
            .text
            .as_deref()
            .is_some_and(|t| !t.is_empty())
    );
    assert!(!client.list_resource_templates().await.unwrap().is_empty());
    let prompts = client.list_prompts().await.unwrap();
    assert!(prompts.iter().any(|p| p.name == "args-prompt"));
    let mut args = serde_json::Map::new();
    args.insert("city".into(), Value::from("Paris"));
    let prompt = client.get_prompt("args-prompt", Some(args)).await.unwrap();
    assert!(
        serde_json::to_string(&prompt.messages)
            .unwrap()
            .contains("Paris")
    );
    client.set_log_level(LogLevel::Error).await.unwrap();
    client.ping().await.unwrap();
    client.close().await.unwrap();
    assert!(!client.is_alive());
}

#[tokio::test]
async fn server_everything_over_stdio() {
    let Some(dir) = peers::peers_dir("server_everything_over_stdio") else {
        return;
    };
    let transport = StdioTransport::spawn(
        StdioOptions::new("node")
            .arg(everything_js(&dir))
            .arg("stdio"),
    )
    .unwrap();
    let pid = transport.pid();
    tokio::time::timeout(Duration::from_secs(90), scenario(transport))
        .await
        .unwrap();
    assert!(
        std::fs::metadata(format!("/proc/{pid}")).is_err(),
        "node was not reaped"
    );
}

#[tokio::test]
async fn server_everything_over_streamable_http() {
    let Some(dir) = peers::peers_dir("server_everything_over_streamable_http") else {
        return;
    };
    let port = peers::free_port();
    let mut cmd = std::process::Command::new("node");
    cmd.arg("--require")
        .arg(dir.join("force-loopback.cjs"))
        .arg(everything_js(&dir))
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let _server = peers::PeerProcess::spawn(cmd);
    peers::wait_port(port).await;
    // The default options: the GET stream is on.
    let http =
        HttpTransport::new(HttpOptions::new(format!("http://127.0.0.1:{port}/mcp"))).unwrap();
    tokio::time::timeout(Duration::from_secs(90), scenario(http))
        .await
        .unwrap();
}
