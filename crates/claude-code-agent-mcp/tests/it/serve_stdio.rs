//! `serve_stdio` on the process's real stdin and stdout: pipes are read and
//! written through the reactor (non-blocking while serving, set back to
//! blocking after), and anything else (a file) through Tokio's stdin.

use std::io::{BufRead, BufReader, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::process::{Command, Stdio};

use crate::support::peers;
use serde_json::{Value, json};

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
const CALL: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}"#;

fn nonblocking(fd: &OwnedFd) -> bool {
    // SAFETY: F_GETFL on a descriptor we own.
    let flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) };
    assert!(flags >= 0);
    flags & libc::O_NONBLOCK != 0
}

fn reply(lines: &mut impl BufRead) -> Value {
    let mut line = String::new();
    lines.read_line(&mut line).unwrap();
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
}

#[test]
fn pipes_are_served_non_blocking_and_set_back_to_blocking_when_serving_ends() {
    let (stdin_read, mut stdin_write) = std::io::pipe().unwrap();
    let (stdout_read, stdout_write) = std::io::pipe().unwrap();
    // Our copy of the server's end of its stdin: the blocking mode is the
    // stream's, so it shows what the server did to it.
    let servers_stdin = OwnedFd::from(stdin_read.try_clone().unwrap());
    assert!(!nonblocking(&servers_stdin));
    let mut server = Command::new(peers::stdio_server())
        .stdin(Stdio::from(stdin_read))
        .stdout(Stdio::from(stdout_write))
        .spawn()
        .unwrap();
    let mut replies = BufReader::new(stdout_read);
    writeln!(stdin_write, "{INITIALIZE}").unwrap();
    assert_eq!(reply(&mut replies)["id"], 1);
    writeln!(stdin_write, "{CALL}").unwrap();
    let answer = reply(&mut replies);
    assert_eq!(answer["result"]["content"][0]["text"], "5", "{answer}");
    assert!(
        nonblocking(&servers_stdin),
        "serving a pipe: read through the reactor"
    );
    drop(stdin_write);
    assert!(server.wait().unwrap().success());
    assert!(
        !nonblocking(&servers_stdin),
        "set back to blocking when serving ended"
    );
}

#[test]
fn a_file_on_stdin_is_served_too() {
    let dir = std::env::temp_dir().join(format!("serve-stdio-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("requests.ndjson");
    std::fs::write(&input, format!("{INITIALIZE}\n{CALL}\n")).unwrap();
    let output = Command::new(peers::stdio_server())
        .stdin(std::fs::File::open(&input).unwrap())
        .stdout(Stdio::piped())
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(output.status.success());
    let replies: Vec<Value> = output
        .stdout
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    assert_eq!(replies.len(), 2, "{replies:?}");
    assert_eq!(
        replies[1]["result"]["content"][0],
        json!({"type": "text", "text": "5"})
    );
}
