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
        // Below the ephemeral range (32768 and up), where no outgoing
        // connection takes the port before redis-server binds it.
        let port = (0..12_000u32)
            .map(|n| (20_000 + (std::process::id() + n * 7) % 12_000) as u16)
            .find(|port| std::net::TcpListener::bind(("127.0.0.1", *port)).is_ok())
            .expect("a free port between 20000 and 32000");
        let child = Command::new(program)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .expect("start redis-server");
        let deadline = Instant::now() + Duration::from_secs(10);
        while tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
        {
            assert!(
                Instant::now() < deadline,
                "redis-server did not listen on {port}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Some(Redis {
            child: Some(child),
            port,
        })
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

impl Drop for Redis {
    fn drop(&mut self) {
        self.stop();
    }
}
