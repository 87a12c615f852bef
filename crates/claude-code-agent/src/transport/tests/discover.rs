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
