//! A fake Claude Code CLI for tests and benchmarks; see
//! `claude_agent_testkit::fake_cli` for the scenarios it plays.

fn main() {
    std::process::exit(claude_agent_testkit::fake_cli::main());
}
