//! The CLI installer with a fake `npm` (no network): one install for many concurrent
//! callers, atomic publication, clear errors.

use std::ffi::OsStr;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use claude_code_agent_testkit::cli::{
    CliError, PINNED_CLI_VERSION, cli_version, find_in, install_with_npm,
};

/// Writes an executable shell script.
fn script(path: &Path, body: &str) {
    fs::write(path, format!("#!/bin/sh\n{body}")).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

/// A fake npm that "installs" a fake claude printing `version`, after a short sleep, and
/// counts its runs in `<tools>/runs`.
fn fake_npm(tools: &Path, version: &str) -> PathBuf {
    let npm = tools.join("npm");
    let runs = tools.join("runs");
    script(
        &npm,
        &format!(
            r#"echo run >> '{runs}'
test -f package.json || {{ echo "no package.json in $PWD" >&2; exit 3; }}
case "$*" in *@anthropic-ai/claude-code@{PINNED_CLI_VERSION}*) ;; *) echo "unexpected args: $*" >&2; exit 4;; esac
sleep 0.3
mkdir -p node_modules/@anthropic-ai/claude-code/bin
printf '#!/bin/sh\necho "{version} (Claude Code)"\n' > node_modules/@anthropic-ai/claude-code/bin/claude.exe
chmod +x node_modules/@anthropic-ai/claude-code/bin/claude.exe
echo "added 2 packages"
"#,
            runs = runs.display()
        ),
    );
    npm
}

fn runs(tools: &Path) -> usize {
    fs::read_to_string(tools.join("runs"))
        .map(|s| s.lines().count())
        .unwrap_or(0)
}

#[test]
fn concurrent_installs_run_npm_once() {
    let tools = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let npm = fake_npm(tools.path(), PINNED_CLI_VERSION);
    let dir = cache.path().join(format!("cli-{PINNED_CLI_VERSION}"));
    let paths: Vec<PathBuf> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| s.spawn(|| install_with_npm(&dir, npm.as_os_str()).unwrap()))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(runs(tools.path()), 1, "npm must run once");
    assert!(paths.iter().all(|p| p == &paths[0]));
    assert!(paths[0].starts_with(&dir));
    assert_eq!(cli_version(&paths[0]).unwrap(), PINNED_CLI_VERSION);
    assert_eq!(find_in(&dir).as_ref(), Some(&paths[0]));
    // no staging folders left behind
    let leftovers: Vec<_> = fs::read_dir(cache.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("staging") || n.contains(".old-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // installed already: npm is not run again
    install_with_npm(&dir, npm.as_os_str()).unwrap();
    assert_eq!(runs(tools.path()), 1);
}

#[test]
fn a_broken_install_is_replaced() {
    let tools = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let dir = cache.path().join("cli");
    fs::create_dir_all(dir.join("node_modules")).unwrap();
    fs::write(dir.join("garbage"), "x").unwrap();
    let npm = fake_npm(tools.path(), PINNED_CLI_VERSION);
    let path = install_with_npm(&dir, npm.as_os_str()).unwrap();
    assert!(path.is_file());
    assert!(!dir.join("garbage").exists());
}

#[test]
fn npm_failure_reports_its_output() {
    let tools = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let npm = tools.path().join("npm");
    script(&npm, "echo 'npm ERR! code E404' >&2\nexit 1\n");
    let err = install_with_npm(&cache.path().join("cli"), npm.as_os_str()).unwrap_err();
    match &err {
        CliError::NpmFailed { output, .. } => assert!(output.contains("E404"), "{output}"),
        other => panic!("unexpected error {other:?}"),
    }
    assert!(err.to_string().contains("npm ERR! code E404"));
    assert!(!cache.path().join("cli").exists());
}

/// The platform package this machine's install falls back to (the testkit's first
/// candidate).
fn platform_package() -> String {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        other => other,
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => other,
    };
    format!("claude-code-{os}-{arch}")
}

/// A fake npm whose main package lacks the version (npm's `ETARGET`) and whose
/// platform package has it; records every package it was asked for in `<tools>/runs`.
fn fake_npm_platform_only(tools: &Path) -> PathBuf {
    let npm = tools.join("npm");
    let runs = tools.join("runs");
    let platform = platform_package();
    script(
        &npm,
        &format!(
            r#"echo "$*" >> '{runs}'
case "$*" in
*@anthropic-ai/{platform}@{PINNED_CLI_VERSION}*)
    mkdir -p node_modules/@anthropic-ai/{platform}
    printf '#!/bin/sh\necho "{PINNED_CLI_VERSION} (Claude Code)"\n' > node_modules/@anthropic-ai/{platform}/claude
    chmod +x node_modules/@anthropic-ai/{platform}/claude
    echo "added 1 package";;
*@anthropic-ai/claude-code@{PINNED_CLI_VERSION}*)
    echo "npm error code ETARGET" >&2
    echo "npm error notarget No matching version found for @anthropic-ai/claude-code@{PINNED_CLI_VERSION}." >&2
    exit 1;;
*) echo "unexpected args: $*" >&2; exit 4;;
esac
"#,
            runs = runs.display()
        ),
    );
    npm
}

#[test]
fn a_version_only_in_the_platform_package_is_installed_from_it() {
    let tools = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let dir = cache.path().join(format!("cli-{PINNED_CLI_VERSION}"));
    let npm = fake_npm_platform_only(tools.path());
    let path = install_with_npm(&dir, npm.as_os_str()).unwrap();
    assert_eq!(
        path,
        dir.join("node_modules/@anthropic-ai")
            .join(platform_package())
            .join("claude")
    );
    assert_eq!(cli_version(&path).unwrap(), PINNED_CLI_VERSION);
    let asked = fs::read_to_string(tools.path().join("runs")).unwrap();
    let asked: Vec<&str> = asked.lines().collect();
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert!(asked[0].ends_with(&format!("@anthropic-ai/claude-code@{PINNED_CLI_VERSION}")));
    assert!(asked[1].ends_with(&format!(
        "@anthropic-ai/{}@{PINNED_CLI_VERSION}",
        platform_package()
    )));
}

/// `scripts/install-cli` follows the same rule as the testkit, with the same fake npm:
/// the main package, then on `ETARGET` the platform package, into the testkit's layout.
#[test]
fn the_install_script_falls_back_to_the_platform_package_too() {
    let tools = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let npm = fake_npm_platform_only(tools.path());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/install-cli");
    let out = std::process::Command::new("bash")
        .arg(&script)
        .args(["--version", PINNED_CLI_VERSION])
        .env("NPM", &npm)
        .env("XDG_CACHE_HOME", cache.path())
        .env_remove("CLAUDE_AGENT_TEST_CLI")
        .env_remove("CLAUDE_AGENT_TEST_CLI_VERSION")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}\n{stdout}\n{stderr}", out.status);
    let dir = cache
        .path()
        .join("claude-agent-rs")
        .join(format!("cli-{PINNED_CLI_VERSION}"));
    let path = dir
        .join("node_modules/@anthropic-ai")
        .join(platform_package())
        .join("claude");
    assert_eq!(stdout.trim(), path.to_str().unwrap());
    assert_eq!(cli_version(&path).unwrap(), PINNED_CLI_VERSION);
    // What the testkit finds there is what the script installed.
    assert_eq!(find_in(&dir).as_ref(), Some(&path));
    let asked = fs::read_to_string(tools.path().join("runs")).unwrap();
    let asked: Vec<&str> = asked.lines().collect();
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert!(asked[0].ends_with(&format!("@anthropic-ai/claude-code@{PINNED_CLI_VERSION}")));
    assert!(asked[1].ends_with(&format!(
        "@anthropic-ai/{}@{PINNED_CLI_VERSION}",
        platform_package()
    )));
}

#[test]
fn missing_npm_is_a_clear_error() {
    let cache = tempfile::tempdir().unwrap();
    let err = install_with_npm(
        &cache.path().join("cli"),
        OsStr::new("/nonexistent/definitely-not-npm"),
    )
    .unwrap_err();
    assert!(matches!(err, CliError::NpmNotFound { .. }), "{err:?}");
    assert!(err.to_string().contains("install Node.js/npm"));
    // The spawn's error is the source.
    let io = std::error::Error::source(&err).and_then(|s| s.downcast_ref::<std::io::Error>());
    assert_eq!(
        io.map(std::io::Error::kind),
        Some(std::io::ErrorKind::NotFound),
        "{err:?}"
    );
}

#[test]
fn wrong_version_is_not_accepted() {
    let tools = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let npm = fake_npm(tools.path(), "9.9.9");
    let err = install_with_npm(&cache.path().join("cli"), npm.as_os_str()).unwrap_err();
    assert!(matches!(err, CliError::NoBinary { .. }), "{err:?}");
}
