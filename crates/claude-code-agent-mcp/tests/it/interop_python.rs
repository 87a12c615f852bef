//! Interop with a server on the official Python SDK (`mcp` 2.x, see
//! tests/peers/py_server.py), which speaks the stateless 2026-07-28
//! revision: `server/discover`, `_meta` on every request, and over HTTP
//! `Mcp-Method`/`Mcp-Name`/`Mcp-Param-*` headers that it checks.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::support::{peer_checks, peers};
use claude_code_agent_mcp::client::{
    ClientOptions, HandshakeMode, HttpOptions, HttpTransport, McpClient, StdioOptions,
    StdioTransport, Transport,
};
use serde_json::{Map, Value, json};

fn python(dir: &Path) -> PathBuf {
    dir.join("venv/bin/python")
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/py_server.py")
}

async fn scenario(transport: impl Transport, mode: HandshakeMode) {
    let options = ClientOptions::new("interop-test", "1")
        .request_timeout(Duration::from_secs(30))
        .handshake(mode);
    let client = McpClient::connect(transport, options).await.unwrap();
    match mode {
        HandshakeMode::Initialize => assert!(!client.server_state().stateless),
        _ => {
            assert!(client.server_state().stateless);
            assert_eq!(client.protocol_version(), "2026-07-28");
        }
    }
    assert_eq!(client.server_info().unwrap().name, "py-peer");
    assert_eq!(client.instructions(), Some("Python interop peer."));

    let names = peer_checks::tool_names(&client).await;
    assert_eq!(names, ["add", "echo", "region_echo", "fail"]);
    let sum = client
        .call_tool("add", json!({"a":2,"b":40}))
        .await
        .unwrap();
    assert_eq!(sum.text_content(), "42");
    assert_eq!(sum.structured_content, Some(json!({"result":42})));
    let echo = client
        .call_tool("echo", json!({"text":"héllo\nworld"}))
        .await
        .unwrap();
    assert_eq!(echo.text_content(), "héllo\nworld");
    let region = client
        .call_tool("region_echo", json!({"region":"eu-west-1"}))
        .await
        .unwrap();
    assert_eq!(region.text_content(), "region=eu-west-1");
    let unicode = client
        .call_tool("region_echo", json!({"region":"zürich"}))
        .await
        .unwrap();
    assert_eq!(unicode.text_content(), "region=zürich");
    let fail = client.call_tool("fail", json!({})).await.unwrap();
    assert!(fail.is_error);

    // A value with CR/LF arrives as it is (over HTTP its Mcp-Param header
    // is base64-wrapped, which the Python SDK decodes and checks).
    let crlf = client
        .call_tool("region_echo", json!({"region":"eu\r\nX-Evil: 1"}))
        .await;
    assert_eq!(crlf.unwrap().text_content(), "region=eu\r\nX-Evil: 1");

    let resources = client.list_resources().await.unwrap();
    assert_eq!(resources[0].uri, "demo://hello");
    let hello = client.read_resource("demo://hello").await.unwrap();
    assert_eq!(hello.contents[0].text.as_deref(), Some("Hello from Python"));
    let templates = client.list_resource_templates().await.unwrap();
    assert_eq!(templates[0].uri_template, "demo://item/{id}");
    let item = client.read_resource("demo://item/7").await.unwrap();
    assert_eq!(item.contents[0].text.as_deref(), Some("item 7"));
    let mut args = Map::new();
    args.insert("name".into(), Value::from("Ada"));
    let prompt = client.get_prompt("greet", Some(args)).await.unwrap();
    assert_eq!(prompt.messages[0].content.as_text(), Some("Hello, Ada!"));
    let e = client.get_prompt("nope", None).await.unwrap_err();
    assert!(e.jsonrpc_error().is_some(), "{e:?}");
    client.close().await.unwrap();
}

fn stdio(dir: &Path) -> StdioTransport {
    StdioTransport::spawn(StdioOptions::new(python(dir)).arg(script()).arg("stdio")).unwrap()
}

#[tokio::test]
async fn python_server_over_stdio_stateless() {
    let Some(dir) = peers::peers_dir("python_server_over_stdio_stateless") else {
        return;
    };
    tokio::time::timeout(
        Duration::from_secs(60),
        scenario(stdio(&dir), HandshakeMode::Auto),
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn python_server_over_stdio_with_initialize() {
    let Some(dir) = peers::peers_dir("python_server_over_stdio_with_initialize") else {
        return;
    };
    tokio::time::timeout(
        Duration::from_secs(60),
        scenario(stdio(&dir), HandshakeMode::Initialize),
    )
    .await
    .unwrap();
}

async fn http_server(dir: &Path) -> (peers::PeerProcess, String) {
    let port = peers::free_port();
    let mut cmd = std::process::Command::new(python(dir));
    cmd.arg(script())
        .arg("http")
        .arg(port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let server = peers::PeerProcess::spawn(cmd);
    peers::wait_port(port).await;
    (server, format!("http://127.0.0.1:{port}/mcp"))
}

#[tokio::test]
async fn python_server_over_streamable_http_stateless() {
    let Some(dir) = peers::peers_dir("python_server_over_streamable_http_stateless") else {
        return;
    };
    let (_server, url) = http_server(&dir).await;
    let http = HttpTransport::new(HttpOptions::new(url)).unwrap();
    tokio::time::timeout(Duration::from_secs(60), scenario(http, HandshakeMode::Auto))
        .await
        .unwrap();
}

#[tokio::test]
async fn python_server_over_streamable_http_with_initialize() {
    let Some(dir) = peers::peers_dir("python_server_over_streamable_http_with_initialize") else {
        return;
    };
    let (_server, url) = http_server(&dir).await;
    let http = HttpTransport::new(HttpOptions::new(url)).unwrap();
    tokio::time::timeout(
        Duration::from_secs(60),
        scenario(http, HandshakeMode::Initialize),
    )
    .await
    .unwrap();
}
