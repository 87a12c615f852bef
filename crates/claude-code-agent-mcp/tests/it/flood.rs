//! A stdio client that sends many calls to a tool answering ~1 MB and does
//! not read: the server (`serve_stdio_with`, in a child process: the
//! devtools `flood` program) holds no more than its byte budget plus a
//! fixed allowance, measured as its RSS, and once the client reads, every
//! call is answered exactly once (`flood` checks that and fails otherwise).
//! Without the budget the server held two copies of every answer of up to
//! `SERVE_MAX_REQUESTS_IN_FLIGHT` calls (here 48 × 2 MB).
//! The same over Streamable HTTP: a client that opens a stream per call
//! and reads none of them holds the session's budget plus the allowance.
//! Our client facing a server that floods notifications into a stream
//! nobody reads holds its budget plus the allowance, and loses the oldest.
//! `scripts/soak --only flood` runs the same with 100,000 calls (500
//! connections over HTTP).

use serde_json::Value;

use crate::support::peers;

/// RSS the server may hold past its budget: the write buffer, the pipe's
/// reader, answers being serialized, the allocator's slack.
const ALLOWANCE: u64 = 32 << 20;

/// Runs `flood <transport>` with `calls` answers (or notifications) of
/// `chars` characters and a budget of 4 MiB, and checks that what it held
/// stayed under the budget plus the allowance.
fn holds_under_the_budget(transport: &str, calls: u32, chars: u32, extra: &[&str]) {
    let budget: u64 = 4 << 20;
    let out = std::process::Command::new(peers::devtool("flood"))
        .arg(transport)
        .args(["--calls", &calls.to_string(), "--chars", &chars.to_string()])
        .args(["--budget", &budget.to_string()])
        .args(extra)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "flood failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let held = report["held_rss"].as_u64().unwrap();
    assert!(held < budget + ALLOWANCE, "held {held} bytes: {report}");
}

#[test]
#[cfg(target_os = "linux")]
fn a_client_that_does_not_read_holds_at_most_the_budget_and_every_call_is_answered_once() {
    holds_under_the_budget("stdio", 48, 1_000_000, &[]);
}

#[test]
#[cfg(target_os = "linux")]
fn cut_results_free_what_was_cut() {
    // Each answer is 5 MB cut to 1 MB by the result cap.
    holds_under_the_budget("stdio", 24, 1_000_000, &["--cut"]);
}

#[test]
#[cfg(target_os = "linux")]
fn an_http_client_that_opens_streams_and_reads_none_holds_at_most_the_session_budget() {
    // Without the budget this held about 110 MB (96 calls of 2 MB); the
    // client's small receive buffers keep the kernel from taking it all.
    holds_under_the_budget("http", 64, 2_000_000, &[]);
}

#[test]
#[cfg(target_os = "linux")]
fn a_client_whose_notification_stream_is_not_read_holds_at_most_its_budget() {
    // Without the budget: 1024 unread notifications of 200 KB, 200 MB.
    holds_under_the_budget("client", 600, 200_000, &[]);
}
