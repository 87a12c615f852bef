//! Finds the pinned Claude Code CLI, installing it with npm into the cache folder if
//! needed, and prints its path on stdout.
//!
//! ```text
//! cargo run -q -p claude-agent-testkit --bin install-cli
//! ```
//!
//! Honours `CLAUDE_AGENT_TEST_CLI` and `XDG_CACHE_HOME` (see `claude_agent_testkit::cli`).
//! Exits 1 with the reason on stderr on failure.

use std::process::ExitCode;

fn main() -> ExitCode {
    if std::env::args().skip(1).any(|a| a == "-h" || a == "--help") {
        println!(
            "install-cli: print the path of Claude Code {} (installing it with npm into the cache folder if needed)",
            claude_agent_testkit::PINNED_CLI_VERSION
        );
        return ExitCode::SUCCESS;
    }
    match claude_agent_testkit::pinned_cli() {
        Ok(path) => {
            println!("{}", path.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("install-cli: {e}");
            ExitCode::FAILURE
        }
    }
}
