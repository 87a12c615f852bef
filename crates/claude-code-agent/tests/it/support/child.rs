//! One test of this binary run alone, in a child process of it: for what a
//! process has only once (its environment, its peak memory, a warning said
//! once per process), which the other tests of this binary, on threads of
//! the same process, would share.

use std::process::{Command, Output};

/// Runs the `#[ignore]`d test `name` of the module `module` (give
/// `module_path!()`), and nothing else, in a child process of this binary
/// with `envs` added to its environment. Returns its output once it has
/// passed; panics with that output when it did not.
pub fn run_alone(module: &str, name: &str, envs: &[(&str, &str)]) -> Output {
    // `it::cli_large` → `cli_large::name`, as libtest names the test.
    let module = module.split_once("::").map_or("", |(_, m)| m);
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            &format!("{module}::{name}"),
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .envs(envs.iter().copied())
        .output()
        .expect("run the child test");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the child test {module}::{name} failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    // A filter that matched nothing passes too: make sure the test ran.
    assert!(
        stdout.contains("running 1 test"),
        "no test {module}::{name} ran:\n{stdout}"
    );
    out
}
