//! Test support for claude-agent: a scripted mock of the Anthropic Messages
//! API, a fake CLI, and a helper that finds or installs the pinned Claude Code CLI.
#![warn(missing_docs)]
