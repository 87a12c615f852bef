//! `CLAUDE_AGENT_TOOL_TIMEOUT` sets the default tool timeout (clamped), and
//! the builder's setting wins over it. The variable is read from the
//! process environment, which the tests of this binary share (they run on
//! threads of one process): so each value is tried in a child process of
//! this binary that runs only [`child_reports_the_tool_timeout`], started
//! with that environment. No test here changes the environment.
use std::process::Command;
use std::time::Duration;

use claude_code_agent_mcp::Server;
use claude_code_agent_mcp::server::limits::TOOL_TIMEOUT_ENV;

/// What the child prints before the default timeout, in milliseconds.
const DEFAULT_IS: &str = "default tool timeout ms: ";
/// What it prints before the timeout the builder set, in milliseconds.
const EXPLICIT_IS: &str = "builder tool timeout ms: ";

/// The default and the builder's tool timeout, as a child process of this
/// binary with `CLAUDE_AGENT_TOOL_TIMEOUT` set to `value` (unset: `None`)
/// sees them.
fn timeouts_with(value: Option<&str>) -> (Duration, Duration) {
    // `it::timeout_env` → the test's name as libtest knows it.
    let module = module_path!().split_once("::").map_or("", |(_, m)| m);
    let mut child = Command::new(std::env::current_exe().unwrap());
    child.args([
        "--exact",
        &format!("{module}::child_reports_the_tool_timeout"),
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ]);
    match value {
        Some(v) => child.env(TOOL_TIMEOUT_ENV, v),
        None => child.env_remove(TOOL_TIMEOUT_ENV),
    };
    let out = child.output().expect("run the child test");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the child failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let said = |what: &str| -> Duration {
        // libtest's `test … ` may open the child's first line.
        let ms = stdout
            .lines()
            .find_map(|l| l.split_once(what).map(|(_, ms)| ms))
            .unwrap_or_else(|| panic!("the child did not say {what:?}:\n{stdout}"));
        Duration::from_millis(ms.trim().parse().unwrap())
    };
    (said(DEFAULT_IS), said(EXPLICIT_IS))
}

#[test]
fn env_sets_default_timeout_and_builder_overrides_it() {
    let explicit = Duration::from_millis(400);
    assert_eq!(timeouts_with(None), (Duration::from_secs(60), explicit));
    assert_eq!(timeouts_with(Some("7")), (Duration::from_secs(7), explicit));
    assert_eq!(
        timeouts_with(Some("100000")),
        (Duration::from_secs(300), explicit)
    );
    assert_eq!(
        timeouts_with(Some("0.01")),
        (Duration::from_secs(1), explicit)
    );
}

/// Prints the tool timeout of a server built with the environment of this
/// process, and of one whose builder sets 400 ms.
#[test]
#[ignore = "run in a child process by env_sets_default_timeout_and_builder_overrides_it"]
fn child_reports_the_tool_timeout() {
    let default = Server::builder("s", "1").build().tool_timeout();
    let explicit = Server::builder("s", "1")
        .tool_timeout(Duration::from_millis(400))
        .build()
        .tool_timeout();
    println!("{DEFAULT_IS}{}", default.as_millis());
    println!("{EXPLICIT_IS}{}", explicit.as_millis());
}
