//! A hand-written HTTP/1.1 MCP server that misbehaves on purpose.
//!
//! It runs on plain threads (one per connection), not on the test's Tokio
//! runtime, so the runtime's task count is the client's alone. It answers
//! the handshake and `tools/list` properly; `tools/call` misbehaves by
//! tool name (see [`respond`]). `notifications/cancelled` is never
//! answered (a stalled server must not keep the client's tasks alive), nor,
//! from [`FaultServer::stalling_initialized`], `notifications/initialized`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;

use serde_json::{Value, json};

/// The most an endless answer writes before giving up (a client without
/// a cap then sees the stream end instead of its cap error).
const ENDLESS_LIMIT: usize = 64 << 20;

/// A running fault server; stops accepting when dropped.
pub struct FaultServer {
    /// Its MCP endpoint.
    pub url: String,
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
}

impl FaultServer {
    /// Listens on a free port of 127.0.0.1.
    pub fn start() -> Self {
        Self::with_stalls(&["notifications/cancelled"])
    }

    /// A server that never answers `notifications/initialized` either.
    pub fn stalling_initialized() -> Self {
        Self::with_stalls(&["notifications/cancelled", "notifications/initialized"])
    }

    fn with_stalls(stalls: &'static [&'static str]) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        thread::spawn(move || {
            for conn in listener.incoming() {
                if flag.load(Ordering::Acquire) {
                    return;
                }
                if let Ok(conn) = conn {
                    thread::spawn(move || serve(conn, stalls));
                }
            }
        });
        Self {
            url: format!("http://{addr}/mcp"),
            addr,
            stop,
        }
    }
}

impl Drop for FaultServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        let _ = TcpStream::connect(self.addr);
    }
}

/// What to do with the connection after an answer.
enum Then {
    KeepAlive,
    Close,
}

fn serve(conn: TcpStream, stalls: &[&str]) {
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let mut out = conn;
    while let Some((verb, body)) = read_request(&mut reader) {
        let then = respond(&mut out, &mut reader, &verb, &body, stalls).unwrap_or(Then::Close);
        if matches!(then, Then::Close) {
            return;
        }
    }
}

/// One request: its verb and body; `None` when the client hung up.
fn read_request(reader: &mut BufReader<TcpStream>) -> Option<(String, Vec<u8>)> {
    let mut line = String::new();
    reader.read_line(&mut line).ok().filter(|&n| n > 0)?;
    let verb = line.split_whitespace().next()?.to_owned();
    let mut length = 0;
    loop {
        line.clear();
        reader.read_line(&mut line).ok().filter(|&n| n > 0)?;
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().ok()?;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some((verb, body))
}

/// Blocks until the client closes the connection.
fn wait_for_close(reader: &mut BufReader<TcpStream>) -> std::io::Result<Then> {
    let mut buf = [0; 1024];
    while reader.read(&mut buf)? > 0 {}
    Ok(Then::Close)
}

fn head(out: &mut TcpStream, status: &str, headers: &str) -> std::io::Result<()> {
    write!(out, "HTTP/1.1 {status}\r\n{headers}\r\n")?;
    out.flush()
}

fn json_reply(out: &mut TcpStream, body: &Value, extra: &str) -> std::io::Result<Then> {
    json_text(out, &body.to_string(), extra)
}

fn json_text(out: &mut TcpStream, body: &str, extra: &str) -> std::io::Result<Then> {
    let headers = format!(
        "content-type: application/json\r\ncontent-length: {}\r\n{extra}",
        body.len()
    );
    head(out, "200 OK", &headers)?;
    out.write_all(body.as_bytes())?;
    Ok(Then::KeepAlive)
}

fn chunk(out: &mut TcpStream, data: &[u8]) -> std::io::Result<()> {
    write!(out, "{:x}\r\n", data.len())?;
    out.write_all(data)?;
    out.write_all(b"\r\n")?;
    out.flush()
}

const SSE_CHUNKED: &str = "content-type: text/event-stream\r\ntransfer-encoding: chunked\r\n";

/// Writes `x` in chunks (chunked encoding or raw) until the client hangs up.
fn endless(out: &mut TcpStream, chunked: bool) -> std::io::Result<Then> {
    let block = vec![b'x'; 16 * 1024];
    let mut written = 0;
    while written < ENDLESS_LIMIT {
        if chunked {
            chunk(out, &block)?;
        } else {
            out.write_all(&block)?;
        }
        written += block.len();
    }
    Ok(Then::Close)
}

/// Answers one request.
///
/// `tools/call` by tool name:
/// * `ok`: a JSON result with the text `ok`;
/// * `cut`: SSE (chunked) with one notification, then half a chunk, then
///   the connection is closed;
/// * `half`: SSE (close-delimited) with the response's `data:` line but
///   not its blank line, then the connection is closed;
/// * `stall_body`: SSE headers, then nothing until the client hangs up;
/// * `stall_head`: nothing at all until the client hangs up;
/// * `answer_then_stall`: SSE with the response, then nothing;
/// * `big_sse`: SSE with one notification, then an endless `data:` line;
/// * `big_json_declared`: a JSON body with a `Content-Length` of 1 GiB;
/// * `big_json_chunked`: an endless chunked JSON body;
/// * `big_error`: a 500 whose body has a `Content-Length` of 1 GiB;
/// * `bad_event`: SSE with one notification, then a response that is not
///   JSON (`tru`), then nothing until the client hangs up;
/// * `bad_note`: SSE (close-delimited) with a notification that is not
///   JSON (`NaN`), then the connection is closed;
/// * `cut_emoji`, `cut_emoji_sse`: the text `ab` and half an emoji, as
///   `JSON.stringify` writes it (a lone surrogate escape), in a JSON body
///   or an SSE event.
fn respond(
    out: &mut TcpStream,
    reader: &mut BufReader<TcpStream>,
    verb: &str,
    body: &[u8],
    stalls: &[&str],
) -> std::io::Result<Then> {
    match verb {
        "DELETE" => {
            head(out, "200 OK", "content-length: 0\r\n")?;
            return Ok(Then::KeepAlive);
        }
        "POST" => {}
        _ => {
            head(out, "405 Method Not Allowed", "content-length: 0\r\n")?;
            return Ok(Then::KeepAlive);
        }
    }
    let message: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let method = message["method"].as_str().unwrap_or("");
    let Some(id) = message.get("id").filter(|_| !method.is_empty()).cloned() else {
        if stalls.contains(&method) {
            return wait_for_close(reader);
        }
        head(out, "202 Accepted", "content-length: 0\r\n")?;
        return Ok(Then::KeepAlive);
    };
    let ok = |result: Value| json!({"jsonrpc":"2.0","id":id,"result":result});
    let text = |t: &str| ok(json!({"content":[{"type":"text","text":t}]}));
    let note = json!({"jsonrpc":"2.0","method":"notifications/message",
                      "params":{"level":"info","data":"working"}});
    match (method, message["params"]["name"].as_str().unwrap_or("")) {
        ("initialize", _) => json_reply(
            out,
            &ok(
                json!({"protocolVersion":"2025-11-25","capabilities":{"tools":{}},
                        "serverInfo":{"name":"faulty","version":"1"}}),
            ),
            "mcp-session-id: fault-1\r\n",
        ),
        ("tools/list", _) => json_reply(out, &ok(json!({"tools":[]})), ""),
        ("tools/call", "ok") => json_reply(out, &text("ok"), ""),
        ("tools/call", "cut") => {
            head(out, "200 OK", SSE_CHUNKED)?;
            chunk(out, format!("data: {note}\n\n").as_bytes())?;
            out.write_all(b"40\r\ndata: {\"jsonrpc\"")?;
            Ok(Then::Close)
        }
        ("tools/call", "half") => {
            head(
                out,
                "200 OK",
                "content-type: text/event-stream\r\nconnection: close\r\n",
            )?;
            writeln!(out, "data: {}", text("never dispatched"))?;
            Ok(Then::Close)
        }
        ("tools/call", "stall_body") => {
            head(out, "200 OK", SSE_CHUNKED)?;
            wait_for_close(reader)
        }
        ("tools/call", "stall_head") => wait_for_close(reader),
        ("tools/call", "answer_then_stall") => {
            head(out, "200 OK", SSE_CHUNKED)?;
            chunk(out, format!("data: {}\n\n", text("answered")).as_bytes())?;
            wait_for_close(reader)
        }
        ("tools/call", "big_sse") => {
            head(out, "200 OK", SSE_CHUNKED)?;
            chunk(out, format!("data: {note}\n\ndata: ").as_bytes())?;
            endless(out, true)
        }
        ("tools/call", "big_json_declared") => {
            let headers = "content-type: application/json\r\ncontent-length: 1073741824\r\n";
            head(out, "200 OK", headers)?;
            endless(out, false)
        }
        ("tools/call", "big_error") => {
            let headers = "content-type: application/json\r\ncontent-length: 1073741824\r\n";
            head(out, "500 Internal Server Error", headers)?;
            endless(out, false)
        }
        ("tools/call", "bad_event") => {
            head(out, "200 OK", SSE_CHUNKED)?;
            chunk(out, format!("data: {note}\n\n").as_bytes())?;
            let bad = format!(r#"data: {{"jsonrpc":"2.0","id":{id},"result":{{"isError":tru}}}}"#);
            chunk(out, format!("{bad}\n\n").as_bytes())?;
            wait_for_close(reader)
        }
        ("tools/call", "bad_note") => {
            head(
                out,
                "200 OK",
                "content-type: text/event-stream\r\nconnection: close\r\n",
            )?;
            let bad =
                r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":NaN}}"#;
            write!(out, "data: {bad}\n\n")?;
            Ok(Then::Close)
        }
        ("tools/call", "cut_emoji") => json_text(out, &cut_emoji(&id), ""),
        ("tools/call", "cut_emoji_sse") => {
            head(out, "200 OK", SSE_CHUNKED)?;
            chunk(out, format!("data: {}\n\n", cut_emoji(&id)).as_bytes())?;
            chunk(out, b"")?;
            Ok(Then::KeepAlive)
        }
        ("tools/call", "big_json_chunked") => {
            let headers = "content-type: application/json\r\ntransfer-encoding: chunked\r\n";
            head(out, "200 OK", headers)?;
            let start = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"pad":""#);
            chunk(out, start.as_bytes())?;
            endless(out, true)
        }
        (method, _) => json_reply(
            out,
            &json!({"jsonrpc":"2.0","id":id,"error":{"code":-32601,"message":method}}),
            "",
        ),
    }
}

/// A result whose text is `ab` and half an emoji, as JavaScript writes it.
fn cut_emoji(id: &Value) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"ab\ud83d"}}]}}}}"#
    )
}
