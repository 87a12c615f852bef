//! Finding the Claude Code CLI executable.

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The environment variable naming the CLI executable.
pub(crate) const CLI_PATH_VAR: &str = "CLAUDE_CLI_PATH";

/// Finds the Claude Code CLI executable.
///
/// The first match wins:
/// 1. `explicit`, when given: a path is used as is, a bare name (no `/`) is
///    looked up on `PATH`. Nothing else is tried if it is not an executable
///    file — an explicit choice never silently falls back to another CLI.
/// 2. The `CLAUDE_CLI_PATH` environment variable, when set and not empty
///    (same rules, no fallback either).
/// 3. `claude` in each `PATH` directory, in order.
/// 4. The usual install places: `~/.npm-global/bin/claude`; in the global
///    npm package roots (`$NPM_CONFIG_PREFIX/lib/node_modules`,
///    `~/.npm-global/lib/node_modules`, the one next to the `node` found on
///    `PATH`, `/usr/local/lib/node_modules`, `/usr/lib/node_modules`) the
///    npm package's native binary (`@anthropic-ai/claude-code/bin/claude.exe`,
///    then `@anthropic-ai/claude-code-<os>-<arch>/claude`, nested or
///    hoisted); `/usr/local/bin/claude`, `~/.local/bin/claude`,
///    `~/.claude/local/claude`, `~/node_modules/.bin/claude`,
///    `~/.yarn/bin/claude`; and the testkit's cache,
///    `~/.cache/claude-agent-rs/cli-<version>/node_modules/@anthropic-ai/claude-code-<os>-<arch>/claude`
///    (newest version first; `$XDG_CACHE_HOME` is honoured too).
///
/// A candidate must be a file (symlinks followed) with an execute bit. The
/// result is returned as found, not canonicalized. Nothing is run or
/// downloaded.
///
/// # Errors
///
/// [`Error::CliNotFound`] listing every place searched, in order.
pub fn find_cli(explicit: Option<&Path>) -> Result<PathBuf> {
    find_cli_in(explicit, &SearchEnv::from_process())
}

/// What the search depends on, so tests can supply it without touching the
/// process environment.
#[derive(Debug, Clone, Default)]
pub(crate) struct SearchEnv {
    /// `CLAUDE_CLI_PATH`.
    pub cli_path: Option<OsString>,
    /// `PATH`.
    pub path: Option<OsString>,
    /// The home directory.
    pub home: Option<PathBuf>,
    /// `NPM_CONFIG_PREFIX`.
    pub npm_prefix: Option<OsString>,
    /// `XDG_CACHE_HOME`.
    pub xdg_cache: Option<OsString>,
    /// Absolute system directories (`/usr/local`, `/usr`); replaced in tests.
    pub system_roots: Vec<PathBuf>,
}

impl SearchEnv {
    /// Reads the real process environment.
    pub(crate) fn from_process() -> Self {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        #[allow(deprecated)] // fine on Unix; only used without $HOME
        let home = var("HOME").map(PathBuf::from).or_else(std::env::home_dir);
        SearchEnv {
            cli_path: var(CLI_PATH_VAR),
            path: var("PATH"),
            home,
            npm_prefix: var("NPM_CONFIG_PREFIX").or_else(|| var("npm_config_prefix")),
            xdg_cache: var("XDG_CACHE_HOME"),
            system_roots: vec!["/usr/local".into(), "/usr".into()],
        }
    }
}

/// [`find_cli`] against an explicit environment.
pub(crate) fn find_cli_in(explicit: Option<&Path>, env: &SearchEnv) -> Result<PathBuf> {
    let mut searched = Vec::new();
    let try_path = |p: PathBuf, searched: &mut Vec<PathBuf>| -> Option<PathBuf> {
        if searched.contains(&p) {
            return None;
        }
        let hit = is_executable_file(&p);
        searched.push(p);
        hit.then(|| searched.last().cloned().expect("just pushed"))
    };

    let chosen = explicit
        .map(Path::as_os_str)
        .or(env.cli_path.as_deref().filter(|v| !v.is_empty()));
    if let Some(chosen) = chosen {
        let chosen = Path::new(chosen);
        if is_bare_name(chosen) {
            for dir in path_dirs(env) {
                if let Some(hit) = try_path(dir.join(chosen), &mut searched) {
                    return Ok(hit);
                }
            }
        } else if let Some(hit) = try_path(chosen.to_path_buf(), &mut searched) {
            return Ok(hit);
        }
        if searched.is_empty() {
            searched.push(chosen.to_path_buf());
        }
        return Err(Error::CliNotFound { searched });
    }

    for candidate in candidates(env) {
        if let Some(hit) = try_path(candidate, &mut searched) {
            return Ok(hit);
        }
    }
    Err(Error::CliNotFound { searched })
}

/// Every place to look, in order (after the explicit choices).
fn candidates(env: &SearchEnv) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = path_dirs(env).map(|d| d.join("claude")).collect();
    let home = env.home.as_deref();
    if let Some(home) = home {
        out.push(home.join(".npm-global/bin/claude"));
    }
    for root in npm_roots(env) {
        out.extend(npm_package_binaries(&root));
    }
    for sys in &env.system_roots {
        if sys.ends_with("local") {
            out.push(sys.join("bin/claude"));
        }
    }
    if let Some(home) = home {
        for rel in [
            ".local/bin/claude",
            ".claude/local/claude",
            "node_modules/.bin/claude",
            ".yarn/bin/claude",
        ] {
            out.push(home.join(rel));
        }
    }
    let mut caches: Vec<PathBuf> = Vec::new();
    if let Some(xdg) = &env.xdg_cache {
        caches.push(PathBuf::from(xdg).join("claude-agent-rs"));
    }
    if let Some(home) = home {
        caches.push(home.join(".cache/claude-agent-rs"));
    }
    caches.dedup();
    for cache in caches {
        let mut versions = cached_versions(&cache);
        if versions.is_empty() {
            // Listed as a pattern so the error shows where it would be.
            out.push(
                cache
                    .join("cli-*")
                    .join(platform_binary_rel(platform_packages()[0])),
            );
        }
        versions.sort_by(|a, b| b.0.cmp(&a.0));
        for (_, dir) in versions {
            for pkg in platform_packages() {
                out.push(dir.join(platform_binary_rel(pkg)));
            }
        }
    }
    out
}

/// Global `node_modules` directories worth checking.
fn npm_roots(env: &SearchEnv) -> Vec<PathBuf> {
    let mut roots = Vec::new();
    if let Some(prefix) = &env.npm_prefix {
        roots.push(PathBuf::from(prefix).join("lib/node_modules"));
    }
    if let Some(home) = &env.home {
        roots.push(home.join(".npm-global/lib/node_modules"));
    }
    // `<prefix>/bin/node` → `<prefix>/lib/node_modules` (nvm, volta, asdf…).
    if let Some(node_dir) = path_dirs(env).find(|d| is_executable_file(&d.join("node")))
        && let Some(prefix) = node_dir.parent()
    {
        roots.push(prefix.join("lib/node_modules"));
    }
    for sys in &env.system_roots {
        roots.push(sys.join("lib/node_modules"));
    }
    let mut seen = Vec::new();
    roots.retain(|r| {
        let new = !seen.contains(r);
        seen.push(r.clone());
        new
    });
    roots
}

/// Where the npm package keeps its native binary under one `node_modules`.
fn npm_package_binaries(root: &Path) -> Vec<PathBuf> {
    let mut out = vec![root.join("@anthropic-ai/claude-code/bin/claude.exe")];
    for pkg in platform_packages() {
        out.push(
            root.join("@anthropic-ai/claude-code")
                .join(platform_binary_rel(pkg)),
        );
        out.push(root.join(format!("@anthropic-ai/{pkg}/claude")));
    }
    out
}

fn platform_binary_rel(pkg: &str) -> PathBuf {
    PathBuf::from(format!("node_modules/@anthropic-ai/{pkg}/claude"))
}

/// The npm platform package names for this build, preferred first.
pub(crate) fn platform_packages() -> &'static [&'static str] {
    macro_rules! pkgs {
        ($os:literal, $arch:literal) => {
            if cfg!(target_env = "musl") {
                &[
                    concat!("claude-code-", $os, "-", $arch, "-musl"),
                    concat!("claude-code-", $os, "-", $arch),
                ]
            } else {
                &[
                    concat!("claude-code-", $os, "-", $arch),
                    concat!("claude-code-", $os, "-", $arch, "-musl"),
                ]
            }
        };
    }
    if cfg!(all(target_os = "linux", target_arch = "aarch64")) {
        pkgs!("linux", "arm64")
    } else if cfg!(all(target_os = "macos", target_arch = "aarch64")) {
        &["claude-code-darwin-arm64"]
    } else if cfg!(target_os = "macos") {
        &["claude-code-darwin-x64"]
    } else {
        pkgs!("linux", "x64")
    }
}

/// `cli-<version>` directories of a cache, with a sortable version key.
fn cached_versions(cache: &Path) -> Vec<(Vec<u64>, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(cache) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name();
            let version = name.to_str()?.strip_prefix("cli-")?.to_owned();
            let key = version
                .split(['.', '-'])
                .map(|part| part.parse::<u64>().unwrap_or(0))
                .collect();
            Some((key, e.path()))
        })
        .collect()
}

fn path_dirs(env: &SearchEnv) -> impl Iterator<Item = PathBuf> + '_ {
    env.path
        .iter()
        .flat_map(std::env::split_paths)
        .filter(|d| !d.as_os_str().is_empty())
}

fn is_bare_name(p: &Path) -> bool {
    let mut parts = p.components();
    matches!(
        (parts.next(), parts.next()),
        (Some(std::path::Component::Normal(_)), None)
    ) && !p.as_os_str().as_encoded_bytes().contains(&b'/')
}

fn is_executable_file(p: &Path) -> bool {
    std::fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}
