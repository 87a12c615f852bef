//! Finding the Claude Code CLI executable.

use std::ffi::{OsStr, OsString};
#[cfg(unix)]
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
/// On Windows, as the official SDKs do there: only native executables are
/// found (`claude.exe`; a bare name is looked up with the `PATHEXT`
/// extensions but `.bat` and `.cmd`), only in absolute `PATH` entries, and
/// a `.bat` or `.cmd` script given explicitly (such as npm's `claude.cmd`
/// shim) is refused, since Windows runs it through `cmd.exe`, which
/// re-parses the arguments. After `PATH`: `%USERPROFILE%\.local\bin\claude.exe`
/// (the native installer's), then the npm package's `claude.exe` (as
/// above) in the global package roots `%NPM_CONFIG_PREFIX%\node_modules`,
/// `%APPDATA%\npm\node_modules`, the one next to the `node.exe` found on
/// `PATH` and `%USERPROFILE%\.claude\local\node_modules`, then the
/// testkit's cache (the Python SDK stops after the native installer's
/// place; the npm places are ours, and find the `claude.exe` behind npm's
/// shim). The home folder is `%USERPROFILE%`.
///
/// # Errors
///
/// [`Error::CliNotFound`] listing every place searched, in order;
/// [`Error::Spawn`] (`InvalidInput`) for a `.bat` or `.cmd` script on
/// Windows.
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
    /// Search by the Windows rules (the build's platform; set in tests).
    pub windows: bool,
    /// `PATHEXT` (Windows).
    pub pathext: Option<OsString>,
    /// `APPDATA` (Windows).
    pub appdata: Option<OsString>,
}

impl SearchEnv {
    /// Reads the real process environment.
    pub(crate) fn from_process() -> Self {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        let windows = cfg!(windows);
        // Windows: `%USERPROFILE%`, as Node's `os.homedir()` and Python's
        // `Path.home()` (and, without it, the profile folder the system
        // gives `std::env::home_dir`).
        let home_var = if windows { "USERPROFILE" } else { "HOME" };
        #[allow(deprecated)] // only used without the variable
        let home = var(home_var).map(PathBuf::from).or_else(std::env::home_dir);
        SearchEnv {
            cli_path: var(CLI_PATH_VAR),
            path: var("PATH"),
            home,
            npm_prefix: var("NPM_CONFIG_PREFIX").or_else(|| var("npm_config_prefix")),
            xdg_cache: var("XDG_CACHE_HOME"),
            system_roots: if windows {
                Vec::new()
            } else {
                vec!["/usr/local".into(), "/usr".into()]
            },
            windows,
            pathext: var("PATHEXT"),
            appdata: var("APPDATA"),
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
        let hit = is_executable_file(&p, env.windows);
        searched.push(p);
        hit.then(|| searched.last().cloned().expect("just pushed"))
    };

    let chosen = explicit
        .map(Path::as_os_str)
        .or(env.cli_path.as_deref().filter(|v| !v.is_empty()));
    if let Some(chosen) = chosen {
        let chosen = Path::new(chosen);
        if env.windows && is_windows_batch_script(chosen.as_os_str()) {
            return Err(batch_script_refused(chosen));
        }
        if is_bare_name(chosen) {
            for dir in path_dirs(env) {
                for name in executable_names(chosen.as_os_str(), env) {
                    if let Some(hit) = try_path(dir.join(name), &mut searched) {
                        return Ok(hit);
                    }
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
    if env.windows {
        return windows_candidates(env);
    }
    let mut out: Vec<PathBuf> = path_dirs(env).map(|d| d.join("claude")).collect();
    let home = env.home.as_deref();
    if let Some(home) = home {
        out.push(home.join(".npm-global/bin/claude"));
    }
    for root in npm_roots(env) {
        out.extend(npm_package_binaries(&root, env.windows));
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
    out.extend(cache_candidates(env));
    out
}

/// Every place to look on Windows, in order (after the explicit choices).
fn windows_candidates(env: &SearchEnv) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = path_dirs(env)
        .flat_map(|d| {
            executable_names(OsStr::new("claude"), env)
                .into_iter()
                .map(move |name| d.join(name))
        })
        .collect();
    if let Some(home) = &env.home {
        out.push(home.join(".local").join("bin").join("claude.exe"));
    }
    for root in npm_roots(env) {
        out.extend(npm_package_binaries(&root, env.windows));
    }
    out.extend(cache_candidates(env));
    out
}

/// The testkit's cache: `cli-<version>` folders, newest first.
fn cache_candidates(env: &SearchEnv) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let home = env.home.as_deref();
    let mut caches: Vec<PathBuf> = Vec::new();
    if let Some(xdg) = &env.xdg_cache {
        caches.push(PathBuf::from(xdg).join("claude-agent-rs"));
    }
    if let Some(home) = home {
        caches.push(home.join(".cache").join("claude-agent-rs"));
    }
    caches.dedup();
    let packages = platform_packages_for(env.windows);
    for cache in caches {
        let mut versions = cached_versions(&cache);
        if versions.is_empty() {
            // Listed as a pattern so the error shows where it would be.
            out.push(
                cache
                    .join("cli-*")
                    .join(platform_binary_rel(packages[0], env.windows)),
            );
        }
        versions.sort_by(|a, b| b.0.cmp(&a.0));
        for (_, dir) in versions {
            for pkg in packages {
                out.push(dir.join(platform_binary_rel(pkg, env.windows)));
            }
        }
    }
    out
}

/// Global `node_modules` directories worth checking.
fn npm_roots(env: &SearchEnv) -> Vec<PathBuf> {
    let mut roots = if env.windows {
        windows_npm_roots(env)
    } else {
        unix_npm_roots(env)
    };
    let mut seen = Vec::new();
    roots.retain(|r| {
        let new = !seen.contains(r);
        seen.push(r.clone());
        new
    });
    roots
}

/// npm on Windows keeps global packages in `<prefix>\node_modules` (no
/// `lib`), its prefix by default `%APPDATA%\npm`, or the folder of
/// `node.exe` (nvm-windows); Claude Code's local install is a prefix of its
/// own, `~\.claude\local`.
fn windows_npm_roots(env: &SearchEnv) -> Vec<PathBuf> {
    let mut roots = Vec::new();
    if let Some(prefix) = &env.npm_prefix {
        roots.push(PathBuf::from(prefix).join("node_modules"));
    }
    if let Some(appdata) = &env.appdata {
        roots.push(PathBuf::from(appdata).join("npm").join("node_modules"));
    }
    if let Some(node_dir) = path_dirs(env).find(|d| is_executable_file(&d.join("node.exe"), true)) {
        roots.push(node_dir.join("node_modules"));
    }
    if let Some(home) = &env.home {
        roots.push(home.join(".claude").join("local").join("node_modules"));
    }
    roots
}

fn unix_npm_roots(env: &SearchEnv) -> Vec<PathBuf> {
    let mut roots = Vec::new();
    if let Some(prefix) = &env.npm_prefix {
        roots.push(PathBuf::from(prefix).join("lib/node_modules"));
    }
    if let Some(home) = &env.home {
        roots.push(home.join(".npm-global/lib/node_modules"));
    }
    // `<prefix>/bin/node` → `<prefix>/lib/node_modules` (nvm, volta, asdf…).
    if let Some(node_dir) = path_dirs(env).find(|d| is_executable_file(&d.join("node"), false))
        && let Some(prefix) = node_dir.parent()
    {
        roots.push(prefix.join("lib/node_modules"));
    }
    for sys in &env.system_roots {
        roots.push(sys.join("lib/node_modules"));
    }
    roots
}

/// Where the npm package keeps its native binary under one `node_modules`.
fn npm_package_binaries(root: &Path, windows: bool) -> Vec<PathBuf> {
    let package = root.join("@anthropic-ai").join("claude-code");
    let mut out = vec![package.join("bin").join("claude.exe")];
    for pkg in platform_packages_for(windows) {
        out.push(package.join(platform_binary_rel(pkg, windows)));
        out.push(
            root.join("@anthropic-ai")
                .join(pkg)
                .join(binary_name(windows)),
        );
    }
    out
}

fn binary_name(windows: bool) -> &'static str {
    if windows { "claude.exe" } else { "claude" }
}

fn platform_binary_rel(pkg: &str, windows: bool) -> PathBuf {
    ["node_modules", "@anthropic-ai", pkg, binary_name(windows)]
        .iter()
        .collect()
}

/// The npm platform package names for this build, preferred first.
#[cfg(test)]
pub(crate) fn platform_packages() -> &'static [&'static str] {
    platform_packages_for(cfg!(windows))
}

/// The npm platform package names for this build's architecture on
/// Windows (`windows`) or this build's platform, preferred first.
fn platform_packages_for(windows: bool) -> &'static [&'static str] {
    if windows {
        return if cfg!(target_arch = "aarch64") {
            &["claude-code-win32-arm64"]
        } else {
            &["claude-code-win32-x64"]
        };
    }
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

/// The `PATH` entries; on Windows only absolute ones, as the Python SDK
/// (a relative one would search the working directory).
fn path_dirs(env: &SearchEnv) -> impl Iterator<Item = PathBuf> + '_ {
    env.path
        .iter()
        .flat_map(std::env::split_paths)
        .filter(|d| !d.as_os_str().is_empty() && (!env.windows || d.is_absolute()))
}

/// The file names a bare `name` is looked up under: itself alone when it
/// has an extension or off Windows; on Windows `name` with each `PATHEXT`
/// extension (default `.COM;.EXE;.BAT;.CMD`) but the batch ones, which are
/// refused.
fn executable_names(name: &OsStr, env: &SearchEnv) -> Vec<OsString> {
    if !env.windows || Path::new(name).extension().is_some() {
        return vec![name.to_owned()];
    }
    let pathext = env
        .pathext
        .as_deref()
        .and_then(OsStr::to_str)
        .unwrap_or(".COM;.EXE;.BAT;.CMD");
    pathext
        .split(';')
        .map(str::trim)
        .filter(|ext| ext.starts_with('.') && !is_batch_segment(ext))
        .map(|ext| {
            let mut file = name.to_owned();
            file.push(ext.to_ascii_lowercase());
            file
        })
        .collect()
}

/// Whether a path names a `.bat` or `.cmd` script by the Windows rules, as
/// the Python SDK tells: any component, or any `:`-separated part of one
/// (drive prefixes, NTFS streams), ending so (any case), trailing dots and
/// spaces ignored (Windows strips them).
pub(crate) fn is_windows_batch_script(path: &OsStr) -> bool {
    let text = path.to_string_lossy();
    text.split(['\\', '/'])
        .flat_map(|component| component.split(':'))
        .any(is_batch_segment)
}

fn is_batch_segment(segment: &str) -> bool {
    let name = segment.trim_end_matches(['.', ' ']).to_ascii_lowercase();
    name.ends_with(".bat") || name.ends_with(".cmd")
}

/// Windows runs a `.bat`/`.cmd` file through `cmd.exe`, which re-parses the
/// whole command line: an argument (a session title to resume, a prompt)
/// could run commands. Refused, as both official SDKs do (Node.js refuses
/// to spawn one without a shell).
fn batch_script_refused(path: &Path) -> Error {
    Error::Spawn {
        program: path.to_path_buf(),
        source: std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "a .bat or .cmd script (such as npm's claude.cmd) runs through cmd.exe, which could \
             run commands smuggled in the arguments; give the native claude.exe instead \
             (npm keeps it in node_modules\\@anthropic-ai\\claude-code\\bin)",
        ),
    }
}

fn is_bare_name(p: &Path) -> bool {
    let mut parts = p.components();
    matches!(
        (parts.next(), parts.next()),
        (Some(std::path::Component::Normal(_)), None)
    ) && !p.as_os_str().as_encoded_bytes().contains(&b'/')
}

/// A file; off Windows with an execute bit too (`windows`: Windows has none).
fn is_executable_file(p: &Path, windows: bool) -> bool {
    std::fs::metadata(p)
        .map(|m| m.is_file() && (windows || has_execute_bit(&m)))
        .unwrap_or(false)
}

#[cfg(unix)]
fn has_execute_bit(m: &std::fs::Metadata) -> bool {
    m.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn has_execute_bit(_m: &std::fs::Metadata) -> bool {
    true
}
