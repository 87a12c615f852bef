//! A minimal raw NDJSON driver for the real CLI (no SDK): spawn, write lines, read
//! lines, close. Every child is killed on drop (`kill_on_drop`) and waited for in
//! [`RawCli::finish`].

use std::path::PathBuf;
use std::process::ExitStatus;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use claude_code_agent_testkit::cli::{CliEnv, pinned_cli_async};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin};
use tokio::sync::mpsc;

/// Upper bound for any single wait in these tests.
pub const STEP_TIMEOUT: Duration = Duration::from_secs(60);

pub async fn cli_path() -> PathBuf {
    pinned_cli_async()
        .await
        .unwrap_or_else(|e| panic!("the pinned Claude Code CLI is needed for this test: {e}"))
}

pub struct RawCli {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::UnboundedReceiver<Value>,
    stderr: Arc<Mutex<String>>,
    /// Everything read from stdout so far.
    pub transcript: Vec<Value>,
    next_id: u64,
}

impl RawCli {
    /// Spawns the CLI with the stream-json flags plus `extra` arguments.
    pub async fn spawn(env: &CliEnv, extra: &[&str]) -> RawCli {
        let cli = cli_path().await;
        let mut cmd = env.command(&cli);
        cmd.args(extra);
        let mut child = cmd.spawn().expect("spawn claude");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout");
        let mut stderr_pipe = child.stderr.take().expect("stderr");
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut reader = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = reader.next_line().await {
                if line.trim().is_empty() {
                    continue;
                }
                let v = serde_json::from_str::<Value>(&line)
                    .unwrap_or_else(|_| json!({"type": "__non_json__", "line": line}));
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = stderr.clone();
        tokio::spawn(async move {
            let mut buf = [0u8; 8192];
            while let Ok(n) = stderr_pipe.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                let mut s = sink.lock().unwrap();
                s.push_str(&String::from_utf8_lossy(&buf[..n]));
                if s.len() > 64 * 1024 {
                    let cut = s.len() - 32 * 1024;
                    let cut = (cut..s.len()).find(|i| s.is_char_boundary(*i)).unwrap_or(0);
                    s.drain(..cut);
                }
            }
        });
        RawCli {
            child,
            stdin,
            lines: rx,
            stderr,
            transcript: Vec::new(),
            next_id: 0,
        }
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    fn context(&self) -> String {
        let tail: Vec<String> = self
            .transcript
            .iter()
            .rev()
            .take(6)
            .rev()
            .map(|v| {
                let s = v.to_string();
                match s.char_indices().nth(600) {
                    Some((cut, _)) => format!("{}…", &s[..cut]),
                    None => s,
                }
            })
            .collect();
        format!(
            "\n--- last stdout lines ---\n{}\n--- stderr ---\n{}",
            tail.join("\n"),
            self.stderr()
        )
    }

    pub async fn send(&mut self, v: Value) {
        let stdin = self.stdin.as_mut().expect("stdin already closed");
        let mut line = serde_json::to_vec(&v).unwrap();
        line.push(b'\n');
        stdin.write_all(&line).await.expect("write to claude stdin");
        stdin.flush().await.expect("flush claude stdin");
    }

    /// Sends a control request and returns its id.
    pub async fn control(&mut self, request: Value) -> String {
        self.next_id += 1;
        let id = format!("test_req_{}", self.next_id);
        self.send(json!({"type": "control_request", "request_id": id, "request": request}))
            .await;
        id
    }

    pub async fn initialize(&mut self) -> Value {
        let id = self
            .control(json!({"subtype": "initialize", "hooks": null}))
            .await;
        self.control_response(&id).await
    }

    pub async fn user(&mut self, text: &str) {
        self.send(json!({
            "type": "user",
            "message": {"role": "user", "content": text},
            "parent_tool_use_id": null,
            "session_id": ""
        }))
        .await;
    }

    /// The next stdout line; panics with context on timeout or EOF.
    pub async fn next(&mut self) -> Value {
        match tokio::time::timeout(STEP_TIMEOUT, self.lines.recv()).await {
            Ok(Some(v)) => {
                self.transcript.push(v.clone());
                v
            }
            Ok(None) => panic!("claude closed stdout unexpectedly{}", self.context()),
            Err(_) => panic!(
                "no output from claude for {STEP_TIMEOUT:?}{}",
                self.context()
            ),
        }
    }

    /// Reads until a line matches; returns it.
    pub async fn until(&mut self, mut pred: impl FnMut(&Value) -> bool) -> Value {
        loop {
            let v = self.next().await;
            if pred(&v) {
                return v;
            }
        }
    }

    pub async fn result(&mut self) -> Value {
        self.until(|v| v["type"] == "result").await
    }

    pub async fn control_response(&mut self, id: &str) -> Value {
        let id = id.to_owned();
        self.until(|v| v["type"] == "control_response" && v["response"]["request_id"] == id)
            .await
    }

    /// Messages of this `type` read so far.
    pub fn seen(&self, ty: &str) -> Vec<Value> {
        self.transcript
            .iter()
            .filter(|v| v["type"] == ty)
            .cloned()
            .collect()
    }

    /// Closes stdin, drains stdout and waits for the exit (killing the child after the timeout).
    pub async fn finish(mut self) -> ExitStatus {
        drop(self.stdin.take());
        let drain = async {
            while let Some(v) = self.lines.recv().await {
                self.transcript.push(v);
            }
        };
        let _ = tokio::time::timeout(STEP_TIMEOUT, drain).await;
        match tokio::time::timeout(Duration::from_secs(15), self.child.wait()).await {
            Ok(status) => status.expect("wait for claude"),
            Err(_) => {
                let _ = self.child.kill().await;
                panic!(
                    "claude did not exit after stdin was closed{}",
                    self.context()
                );
            }
        }
    }
}
