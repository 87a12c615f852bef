//! Facts about the machine the benchmark ran on, for the document.

use std::process::Command;

use claude_code_agent_fake_cli::CLI_VERSION;

fn command_output(cmd: &str, args: &[&str]) -> String {
    Command::new(cmd)
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_else(|| "?".into())
}

pub fn machine() -> Vec<(String, String)> {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")
                .map(|r| r.trim_start_matches([' ', '\t', ':']).to_owned())
        })
        .unwrap_or_else(|| "?".into());
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(0);
    let mem = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .next()
                .map(|l| l.split_whitespace().nth(1).unwrap_or("0").to_owned())
        })
        .and_then(|kb| kb.parse::<u64>().ok())
        .map(|kb| format!("{:.1} GiB", kb as f64 / 1048576.0))
        .unwrap_or_else(|| "?".into());
    vec![
        (
            "date".into(),
            command_output("date", &["-u", "+%Y-%m-%d %H:%M UTC"]),
        ),
        ("CPU".into(), format!("{model}, {cores} cores available")),
        ("memory".into(), mem),
        (
            "kernel".into(),
            std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .unwrap_or_default()
                .trim()
                .to_owned(),
        ),
        ("load average at start".into(), load_average()),
        ("rustc".into(), command_output("rustc", &["-V"])),
        (
            "claude-code-agent".into(),
            format!(
                "{} (commit {})",
                env!("CARGO_PKG_VERSION"),
                command_output("git", &["rev-parse", "--short", "HEAD"])
            ),
        ),
        (
            "CLI".into(),
            format!("fake-claude (claims {CLI_VERSION}), release build"),
        ),
    ]
}

/// The 1, 5 and 15 minute load averages, as `/proc/loadavg` says them.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}
