//! `find_cli` against temporary directories and a synthetic environment.

use std::ffi::OsString;
use std::path::PathBuf;

use super::support::TempDir;
use crate::error::Error;
use crate::transport::discover::{SearchEnv, find_cli_in, platform_packages};

/// An environment confined to `t`: home `t/home`, system roots `t/usr/local`
/// and `t/usr`, PATH as given.
fn env_in(t: &TempDir, path: &[&str]) -> SearchEnv {
    let path: Vec<PathBuf> = path.iter().map(|p| t.path().join(p)).collect();
    SearchEnv {
        cli_path: None,
        path: Some(std::env::join_paths(path).unwrap()),
        home: Some(t.path().join("home")),
        npm_prefix: None,
        xdg_cache: None,
        system_roots: vec![t.path().join("usr/local"), t.path().join("usr")],
        windows: false,
        pathext: None,
        appdata: None,
    }
}

fn searched(err: Error) -> Vec<PathBuf> {
    match err {
        Error::CliNotFound { searched } => searched,
        other => panic!("{other:?}"),
    }
}

#[test]
fn explicit_path_wins_and_never_falls_back() {
    let t = TempDir::new("explicit");
    let on_path = t.exe("bin/claude");
    let mine = t.exe("mine/my-claude");
    let mut env = env_in(&t, &["bin"]);
    env.cli_path = Some(t.exe("envcli/claude").into_os_string());
    assert_eq!(find_cli_in(Some(&mine), &env).unwrap(), mine);

    let missing = t.path().join("nope/claude");
    let err = find_cli_in(Some(&missing), &env).unwrap_err();
    assert_eq!(searched(err), vec![missing]);
    let _ = on_path;
}

#[test]
fn explicit_bare_name_is_looked_up_on_path() {
    let t = TempDir::new("bare");
    t.file("a/claude-dev", "not executable", 0o644);
    let hit = t.exe("b/claude-dev");
    let env = env_in(&t, &["a", "b"]);
    let name = PathBuf::from("claude-dev");
    assert_eq!(find_cli_in(Some(&name), &env).unwrap(), hit);
    let other = PathBuf::from("claude-nope");
    assert_eq!(
        searched(find_cli_in(Some(&other), &env).unwrap_err()),
        vec![
            t.path().join("a/claude-nope"),
            t.path().join("b/claude-nope")
        ]
    );
}

#[test]
fn env_var_comes_next_and_never_falls_back() {
    let t = TempDir::new("envvar");
    t.exe("bin/claude");
    let from_env = t.exe("envcli/claude");
    let mut env = env_in(&t, &["bin"]);
    env.cli_path = Some(from_env.clone().into_os_string());
    assert_eq!(find_cli_in(None, &env).unwrap(), from_env);
    let stale = t.path().join("gone/claude");
    env.cli_path = Some(stale.clone().into_os_string());
    assert_eq!(searched(find_cli_in(None, &env).unwrap_err()), vec![stale]);
    env.cli_path = Some(OsString::new()); // empty means unset
    assert_eq!(
        find_cli_in(None, &env).unwrap(),
        t.path().join("bin/claude")
    );
}

#[test]
fn path_is_searched_in_order_and_only_executable_files_count() {
    let t = TempDir::new("path");
    t.file("p1/claude", "#!/bin/sh\n", 0o644); // not executable
    std::fs::create_dir_all(t.path().join("p2/claude")).unwrap(); // a directory
    let hit = t.exe("p3/claude");
    t.exe("p4/claude");
    t.exe("home/.local/bin/claude");
    let env = env_in(&t, &["p1", "p2", "p3", "p4"]);
    assert_eq!(find_cli_in(None, &env).unwrap(), hit);
}

#[test]
fn symlinks_are_followed() {
    let t = TempDir::new("symlink");
    let target = t.exe("real/claude-bin");
    std::fs::create_dir_all(t.path().join("bin")).unwrap();
    let link = t.path().join("bin/claude");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    std::os::unix::fs::symlink(t.path().join("dangling"), t.path().join("home-claude")).unwrap();
    let env = env_in(&t, &["bin"]);
    assert_eq!(find_cli_in(None, &env).unwrap(), link);
    let dangling = t.path().join("home-claude");
    assert!(find_cli_in(Some(&dangling), &env).is_err());
}

#[test]
fn home_install_places_in_order() {
    let t = TempDir::new("home");
    t.exe("home/.yarn/bin/claude");
    let env = env_in(&t, &["empty"]);
    assert_eq!(
        find_cli_in(None, &env).unwrap(),
        t.path().join("home/.yarn/bin/claude")
    );
    t.exe("home/node_modules/.bin/claude");
    assert_eq!(
        find_cli_in(None, &env).unwrap(),
        t.path().join("home/node_modules/.bin/claude")
    );
    t.exe("home/.claude/local/claude");
    assert_eq!(
        find_cli_in(None, &env).unwrap(),
        t.path().join("home/.claude/local/claude")
    );
    t.exe("home/.local/bin/claude");
    assert_eq!(
        find_cli_in(None, &env).unwrap(),
        t.path().join("home/.local/bin/claude")
    );
    t.exe("usr/local/bin/claude");
    assert_eq!(
        find_cli_in(None, &env).unwrap(),
        t.path().join("usr/local/bin/claude")
    );
    t.exe("home/.npm-global/bin/claude");
    assert_eq!(
        find_cli_in(None, &env).unwrap(),
        t.path().join("home/.npm-global/bin/claude")
    );
}

#[test]
fn npm_package_native_binary_under_global_roots() {
    let plat = platform_packages()[0];
    let t = TempDir::new("npm");
    // Nested under the main package, in the NPM_CONFIG_PREFIX root.
    let nested = t.exe(&format!(
        "prefix/lib/node_modules/@anthropic-ai/claude-code/node_modules/@anthropic-ai/{plat}/claude"
    ));
    let mut env = env_in(&t, &["empty"]);
    env.npm_prefix = Some(t.path().join("prefix").into_os_string());
    assert_eq!(find_cli_in(None, &env).unwrap(), nested);

    // Hoisted, in the root next to the `node` found on PATH (nvm & co).
    let t = TempDir::new("npm-node");
    t.exe("nvm/v22/bin/node");
    let hoisted = t.exe(&format!(
        "nvm/v22/lib/node_modules/@anthropic-ai/{plat}/claude"
    ));
    let env = env_in(&t, &["nvm/v22/bin"]);
    assert_eq!(find_cli_in(None, &env).unwrap(), hoisted);

    // The package's own bin/claude.exe, in /usr/local/lib/node_modules.
    let t = TempDir::new("npm-sys");
    let exe = t.exe("usr/local/lib/node_modules/@anthropic-ai/claude-code/bin/claude.exe");
    let env = env_in(&t, &["empty"]);
    assert_eq!(find_cli_in(None, &env).unwrap(), exe);
}

#[test]
fn testkit_cache_newest_version_first() {
    let plat = platform_packages()[0];
    let t = TempDir::new("cache");
    t.exe(&format!(
        "home/.cache/claude-agent-rs/cli-2.1.9/node_modules/@anthropic-ai/{plat}/claude"
    ));
    let newest = t.exe(&format!(
        "home/.cache/claude-agent-rs/cli-2.1.10/node_modules/@anthropic-ai/{plat}/claude"
    ));
    let env = env_in(&t, &["empty"]);
    assert_eq!(find_cli_in(None, &env).unwrap(), newest);
}

#[test]
fn not_found_lists_every_place_in_order() {
    let plat = platform_packages()[0];
    let t = TempDir::new("none");
    let env = env_in(&t, &["p1", "p2"]);
    let list = searched(find_cli_in(None, &env).unwrap_err());
    let p = |rel: &str| t.path().join(rel);
    let pos = |want: PathBuf| {
        list.iter()
            .position(|x| *x == want)
            .unwrap_or_else(|| panic!("{} not searched: {list:#?}", want.display()))
    };
    assert_eq!(list[0], p("p1/claude"));
    assert_eq!(list[1], p("p2/claude"));
    let order = [
        pos(p("home/.npm-global/bin/claude")),
        pos(p(
            "home/.npm-global/lib/node_modules/@anthropic-ai/claude-code/bin/claude.exe",
        )),
        pos(p(&format!(
            "usr/local/lib/node_modules/@anthropic-ai/{plat}/claude"
        ))),
        pos(p(&format!(
            "usr/lib/node_modules/@anthropic-ai/{plat}/claude"
        ))),
        pos(p("usr/local/bin/claude")),
        pos(p("home/.local/bin/claude")),
        pos(p("home/.claude/local/claude")),
        pos(p("home/node_modules/.bin/claude")),
        pos(p("home/.yarn/bin/claude")),
        pos(p(&format!(
            "home/.cache/claude-agent-rs/cli-*/node_modules/@anthropic-ai/{plat}/claude"
        ))),
    ];
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
    assert_eq!(*order.last().unwrap(), list.len() - 1);
    let mut dedup = list.clone();
    dedup.dedup();
    assert_eq!(dedup.len(), list.len(), "no place listed twice");
    let msg = Error::CliNotFound { searched: list }.to_string();
    assert!(msg.contains(&p("home/.yarn/bin/claude").display().to_string()));
}

#[test]
fn finds_the_installed_cli_in_the_real_cache() {
    let Some(home) = std::env::var_os("HOME").map(PathBuf::from) else {
        return;
    };
    let plat = platform_packages()[0];
    let cached = home.join(format!(
        ".cache/claude-agent-rs/cli-2.1.332/node_modules/@anthropic-ai/{plat}/claude"
    ));
    if !cached.exists() {
        eprintln!("skipped: {} is not installed", cached.display());
        return;
    }
    let env = SearchEnv {
        home: Some(home),
        system_roots: vec![],
        ..SearchEnv::default()
    };
    let found = find_cli_in(None, &env).unwrap();
    assert!(
        found.starts_with(env.home.unwrap().join(".cache/claude-agent-rs")),
        "{found:?}"
    );
}

/// The Windows rules, checked here: `t`'s folders as the profile
/// (`t/home`), `%APPDATA%` (`t/appdata`) and `PATH`.
fn windows_env_in(t: &TempDir, path: &[&str]) -> SearchEnv {
    SearchEnv {
        system_roots: Vec::new(),
        windows: true,
        appdata: Some(t.path().join("appdata").into_os_string()),
        ..env_in(t, path)
    }
}

fn spawn_refused(err: Error) -> std::io::Error {
    match err {
        Error::Spawn { source, .. } => source,
        other => panic!("{other:?}"),
    }
}

#[test]
fn windows_finds_native_executables_in_absolute_path_entries_only() {
    let t = TempDir::new("win-path");
    // No execute bits on Windows: a plain file counts.
    t.file("p1/claude", "extensionless", 0o644);
    t.file("p1/claude.cmd", "npm's shim", 0o644);
    let hit = t.file("p2/claude.exe", "native", 0o644);
    let mut env = windows_env_in(&t, &["p1", "p2"]);
    // A relative entry (the working directory's) is skipped, as by Python.
    let mut entries = vec![PathBuf::from("rel")];
    entries.extend(std::env::split_paths(env.path.as_ref().unwrap()));
    env.path = Some(std::env::join_paths(entries).unwrap());
    assert_eq!(find_cli_in(None, &env).unwrap(), hit);

    std::fs::remove_file(&hit).unwrap();
    let p = |rel: &str| t.path().join(rel);
    let pkg = "claude-code-win32-x64";
    let npm = |root: &str| {
        vec![
            p(root).join("@anthropic-ai/claude-code/bin/claude.exe"),
            p(root)
                .join("@anthropic-ai/claude-code")
                .join(format!("node_modules/@anthropic-ai/{pkg}/claude.exe")),
            p(root).join(format!("@anthropic-ai/{pkg}/claude.exe")),
        ]
    };
    if cfg!(target_arch = "x86_64") {
        let mut expected = vec![
            p("p1/claude.com"),
            p("p1/claude.exe"),
            p("p2/claude.com"),
            p("p2/claude.exe"),
            p("home/.local/bin/claude.exe"),
        ];
        expected.extend(npm("appdata/npm/node_modules"));
        expected.extend(npm("home/.claude/local/node_modules"));
        expected.push(p(&format!(
            "home/.cache/claude-agent-rs/cli-*/node_modules/@anthropic-ai/{pkg}/claude.exe"
        )));
        assert_eq!(searched(find_cli_in(None, &env).unwrap_err()), expected);
    }
}

#[test]
fn windows_install_places_in_order() {
    let t = TempDir::new("win-places");
    let local = t.file(
        "home/.claude/local/node_modules/@anthropic-ai/claude-code/bin/claude.exe",
        "",
        0o644,
    );
    let mut env = windows_env_in(&t, &["nodejs"]);
    assert_eq!(find_cli_in(None, &env).unwrap(), local);
    // npm's global packages next to node.exe (nvm-windows) come before it…
    t.file("nodejs/node.exe", "", 0o644);
    let by_node = t.file(
        "nodejs/node_modules/@anthropic-ai/claude-code/bin/claude.exe",
        "",
        0o644,
    );
    assert_eq!(find_cli_in(None, &env).unwrap(), by_node);
    // …%APPDATA%\npm before that, NPM_CONFIG_PREFIX before that…
    let appdata = t.file(
        "appdata/npm/node_modules/@anthropic-ai/claude-code/bin/claude.exe",
        "",
        0o644,
    );
    assert_eq!(find_cli_in(None, &env).unwrap(), appdata);
    env.npm_prefix = Some(t.path().join("prefix").into_os_string());
    let prefix = t.file(
        "prefix/node_modules/@anthropic-ai/claude-code/bin/claude.exe",
        "",
        0o644,
    );
    assert_eq!(find_cli_in(None, &env).unwrap(), prefix);
    // …and the native installer's before all of them.
    let native = t.file("home/.local/bin/claude.exe", "", 0o644);
    assert_eq!(find_cli_in(None, &env).unwrap(), native);
}

#[test]
fn windows_bare_names_take_the_pathext_extensions_but_batch_ones() {
    let t = TempDir::new("win-pathext");
    t.file("bin/claude-dev.bat", "", 0o644);
    let mut env = windows_env_in(&t, &["bin"]);
    env.pathext = Some(".BAT;.Exe;;cmd".into());
    let name = PathBuf::from("claude-dev");
    assert_eq!(
        searched(find_cli_in(Some(&name), &env).unwrap_err()),
        vec![t.path().join("bin/claude-dev.exe")]
    );
    let hit = t.file("bin/claude-dev.exe", "", 0o644);
    assert_eq!(find_cli_in(Some(&name), &env).unwrap(), hit);
    // With an extension, the name is taken as it is.
    let named = PathBuf::from("claude-dev.exe");
    assert_eq!(find_cli_in(Some(&named), &env).unwrap(), hit);
}

#[test]
fn windows_refuses_batch_scripts_given_explicitly() {
    let t = TempDir::new("win-batch");
    let shim = t.file("appdata/npm/claude.cmd", "@node ...", 0o644);
    let mut env = windows_env_in(&t, &["empty"]);
    let err = spawn_refused(find_cli_in(Some(&shim), &env).unwrap_err());
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    assert!(err.to_string().contains("claude.exe"), "{err}");
    env.cli_path = Some(r"C:\tools\Claude.BAT. ".into());
    spawn_refused(find_cli_in(None, &env).unwrap_err());
    spawn_refused(find_cli_in(Some(&PathBuf::from("claude.cmd")), &env).unwrap_err());
    // The same paths off Windows are files like any other.
    env.windows = false;
    assert!(matches!(
        find_cli_in(Some(&shim), &env).unwrap_err(),
        Error::CliNotFound { .. }
    ));
}

#[test]
fn windows_batch_scripts_are_told_by_every_component() {
    use crate::transport::discover::is_windows_batch_script as batch;
    for yes in [
        r"C:\npm\claude.cmd",
        "claude.CMD",
        "claude.bat. . ",
        r"C:claude.bat",
        "claude.cmd:stream",
        "claude:evil.cmd",
        r"x\claude.cmd\..\claude.exe",
        "a/b.bat/claude.exe",
        ".cmd",
    ] {
        assert!(batch(yes.as_ref()), "{yes}");
    }
    for no in [
        r"C:\bin\claude.exe",
        "claude",
        "claude.cmdx",
        "cmd",
        r"C:\cmd\claude.exe",
    ] {
        assert!(!batch(no.as_ref()), "{no}");
    }
}
