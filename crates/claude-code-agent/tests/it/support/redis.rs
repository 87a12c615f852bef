//! A `redis-server` of the test's own, on a free port, killed when dropped.
//! Installed by `scripts/install-services` (Debian's package); without it a
//! test that needs it is skipped, loudly, unless `CI` or
//! `CLAUDE_AGENT_PEERS_DIR` is set (then it fails).

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Redis {
    child: Option<Child>,
    port: u16,
}

impl Redis {
    /// Starts one; `None` after a loud SKIPPED when it is not installed.
    pub async fn start(test: &str) -> Option<Redis> {
        let program = ["/usr/bin", "/usr/sbin", "/usr/local/bin"]
            .iter()
            .map(|d| Path::new(d).join("redis-server"))
            .find(|p| p.exists());
        let Some(program) = program else {
            let why =
                format!("{test}: redis-server is not installed (run scripts/install-services)");
            if std::env::var_os("CI").is_some()
                || std::env::var_os("CLAUDE_AGENT_PEERS_DIR").is_some()
            {
                panic!("{why}");
            }
            eprintln!("\n!!!!!!!! SKIPPED: {why} !!!!!!!!\n");
            return None;
        };
        // A port no other Redis of this process had, and a server that
        // answers with our child's pid: two tests starting at once once
        // shared one server, and a test that stopped it broke the other.
        for _ in 0..20 {
            let port = next_port();
            let mut child = Command::new(&program)
                .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
                .args(["--save", "", "--appendonly", "no"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .spawn()
                .expect("start redis-server");
            if listens_as(&mut child, port).await {
                return Some(Redis {
                    child: Some(child),
                    port,
                });
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("{test}: no redis-server of its own listened, on 20 ports");
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// `kill -9`, and waits for it to be gone.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Ports below the ephemeral range (32768 and up), where no outgoing
/// connection takes one before redis-server binds it; handed out in turn
/// within the test binary, from a start that differs per process.
fn next_port() -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let start = std::process::id().wrapping_mul(2_654_435_761);
    for _ in 0..12_000 {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let port = (20_000 + start.wrapping_add(n) % 12_000) as u16;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free port between 20000 and 32000")
}

/// Whether the server on `port` is `child` (its `INFO` names the child's
/// pid); false once the child has exited (the port was taken) or after 10 s.
async fn listens_as(child: &mut Child, port: u16) -> bool {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let want = format!("process_id:{}\r\n", child.id());
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if !matches!(child.try_wait(), Ok(None)) {
            return false;
        }
        if let Ok(mut conn) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await
            && conn.write_all(b"INFO server\r\n").await.is_ok()
        {
            let mut said = Vec::new();
            let mut buf = [0u8; 4096];
            while let Ok(Ok(n @ 1..)) =
                tokio::time::timeout(Duration::from_secs(2), conn.read(&mut buf)).await
            {
                said.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&said);
                if text.contains(&want) {
                    return true;
                }
                if text.contains("process_id:") && text.contains("\r\n\r\n") {
                    return false;
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.stop();
    }
}
