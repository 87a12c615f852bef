//! Finds a Claude Code CLI, installing it with npm into the cache folder if needed,
//! and prints its path on stdout: the CLI under test (the pinned one unless
//! `CLAUDE_AGENT_TEST_CLI_VERSION` names another), or the version given with
//! `--version <x.y.z|oldest|pinned>`.
//!
//! ```text
//! cargo run -q -p claude-agent-devtools --bin install-cli [-- --version oldest]
//! ```
//!
//! Honours `CLAUDE_AGENT_TEST_CLI` (without `--version`) and `XDG_CACHE_HOME` (see
//! `claude_agent_testkit::cli`). Exits 1 with the reason on stderr on failure.

use std::process::ExitCode;

use claude_agent_testkit::cli;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!(
            "install-cli [--version <x.y.z|oldest|pinned>]: print the path of Claude Code {} \
             (or of the version given; oldest = {}), installing it with npm into the cache \
             folder if needed",
            cli::PINNED_CLI_VERSION,
            cli::OLDEST_SUPPORTED_CLI_VERSION
        );
        return ExitCode::SUCCESS;
    }
    let result = match args.as_slice() {
        [] => cli::pinned_cli(),
        [flag, version] if flag == "--version" => {
            cli::install_version(cli::resolve_version(version))
        }
        _ => {
            eprintln!("install-cli: unexpected arguments {args:?} (see --help)");
            return ExitCode::FAILURE;
        }
    };
    match result {
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
