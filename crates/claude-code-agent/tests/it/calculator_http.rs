//! The calculator example over Streamable HTTP: `--max-sessions N` caps the
//! live sessions (the `initialize` that would open session N+1 gets 503),
//! and a bad count is refused at start. Needs the `http-server` feature.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support;

/// One `initialize` POSTed on a fresh connection: the status code.
fn initialize(addr: &str) -> u16 {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut reply = String::new();
    s.read_to_string(&mut reply).unwrap();
    reply
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {reply:?}"))
}

#[test]
fn max_sessions_caps_the_live_sessions() {
    let (_server, url) = support::http_calculator(&["--max-sessions", "3"]);
    let addr = url
        .strip_prefix("http://")
        .and_then(|u| u.strip_suffix("/mcp"))
        .unwrap_or_else(|| panic!("the calculator's URL: {url}"));
    let codes: Vec<u16> = (0..4).map(|_| initialize(addr)).collect();
    assert_eq!(codes, [200, 200, 200, 503], "the 4th session is refused");
}

#[test]
fn a_bad_session_count_is_refused() {
    for bad in ["0", "many"] {
        let out = Command::new(support::example("calculator"))
            .args(["--http", "127.0.0.1:0", "--max-sessions", bad])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "--max-sessions {bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("--max-sessions wants a positive count"),
            "{err}"
        );
    }
}
