//! A client of a server behind OAuth: the person authorizes in their
//! browser, which the authorization server sends back to a loopback
//! address this program listens on (RFC 8252 §7.3).
//!
//! ```text
//! cargo run -p claude-code-agent-mcp --features oauth-client --example oauth_client -- https://mcp.example.com/mcp
//! ```
//!
//! The browser is `$BROWSER` (a command, given the URL as its last
//! argument) or else `xdg-open` / `open`; the URL is printed too. Tokens
//! live in memory, so the next run asks again: a program of yours keeps
//! them with a [`TokenStore`](claude_code_agent_mcp::client::auth::TokenStore)
//! of its own.

use std::sync::Arc;

use claude_code_agent_mcp::client::auth::{AuthorizationRequest, AuthorizationResponse, OAuth};
use claude_code_agent_mcp::client::{ClientOptions, Error, HttpOptions, HttpTransport, McpClient};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

/// Opens `url` in the person's browser.
fn open_browser(url: &str) {
    let command = std::env::var("BROWSER").ok();
    let mut words: Vec<String> = match &command {
        Some(c) => c.split_whitespace().map(str::to_owned).collect(),
        None if cfg!(target_os = "macos") => vec!["open".into()],
        None => vec!["xdg-open".into()],
    };
    if words.is_empty() {
        return;
    }
    let program = words.remove(0);
    if let Err(e) = std::process::Command::new(&program)
        .args(words)
        .arg(url)
        .spawn()
    {
        eprintln!("could not start {program} ({e}): open the address above yourself");
    }
}

/// Waits for the browser's request to the redirect URI and reads the
/// answer from its query.
async fn wait_for_redirect(listener: &TcpListener) -> Result<AuthorizationResponse, Error> {
    let failed =
        |e: std::io::Error| Error::transport("the loopback redirect failed").with_source(e);
    loop {
        let (stream, _) = listener.accept().await.map_err(failed)?;
        let mut stream = BufReader::new(stream);
        let mut request_line = String::new();
        stream.read_line(&mut request_line).await.map_err(failed)?;
        // `GET /callback?code=…&state=… HTTP/1.1`
        let target = request_line.split_whitespace().nth(1).unwrap_or_default();
        if !target.starts_with("/callback") {
            let _ = stream
                .get_mut()
                .write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
                .await;
            continue; // a favicon, say
        }
        let answer = AuthorizationResponse::from_redirect(target);
        let page = match &answer {
            Ok(_) => "Authorized: you can close this window.",
            Err(_) => "The authorization failed: see the program's output.",
        };
        let reply = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{page}",
            page.len()
        );
        let _ = stream.get_mut().write_all(reply.as_bytes()).await;
        return answer;
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args()
        .nth(1)
        .ok_or("usage: oauth_client <mcp-server-url>")?;
    let listener = Arc::new(TcpListener::bind("127.0.0.1:0").await?);
    let redirect_uri = format!(
        "http://127.0.0.1:{}/callback",
        listener.local_addr()?.port()
    );
    let authorizer = move |request: AuthorizationRequest| {
        let listener = Arc::clone(&listener);
        async move {
            println!("Authorize this program at:\n\n    {}\n", request.url());
            open_browser(request.url());
            wait_for_redirect(&listener).await
        }
    };
    let oauth =
        OAuth::authorization_code(redirect_uri, authorizer).client_name("oauth_client example");
    let transport = HttpTransport::new(HttpOptions::new(url).oauth(oauth))?;
    let client = McpClient::connect(
        transport,
        ClientOptions::new("oauth_client-example", "0.1.0"),
    )
    .await?;
    println!("server: {:?}", client.server_info());
    for tool in client.list_tools().await? {
        println!("tool: {}", tool.name);
    }
    client.close().await?;
    Ok(())
}
