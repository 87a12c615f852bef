//! Where the CLI keeps sessions: the configuration folder, the project folder
//! named after the session's working directory, git worktrees, and finding
//! one session's file.
//!
//! `<config>/projects/<sanitised cwd>/<session id>.jsonl`, where `<config>` is
//! `CLAUDE_CONFIG_DIR` or `~/.claude` and the cwd is canonical (symbolic links
//! resolved). See [`sanitize_path`] for the folder name.

use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use super::{SessionError, SessionOptions};

/// Longest sanitised project folder name kept whole; longer ones are cut
/// here and get a hash suffix.
pub(crate) const MAX_SANITIZED_LENGTH: usize = 200;

/// How long `git worktree list` may take.
const GIT_TIMEOUT: Duration = Duration::from_secs(5);

/// Whether `s` is a UUID in its usual text form (any case).
pub(crate) fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// `Ok(())` for a UUID, else [`SessionError::InvalidId`].
pub(crate) fn check_uuid(id: &str) -> Result<(), SessionError> {
    if is_uuid(id) {
        Ok(())
    } else {
        Err(SessionError::InvalidId { id: id.to_owned() })
    }
}

/// The CLI's configuration folder: the option, else `CLAUDE_CONFIG_DIR` (if
/// not empty), else `~/.claude`.
pub(crate) fn config_home(options: &SessionOptions) -> Result<PathBuf, SessionError> {
    if let Some(dir) = &options.config_dir {
        return Ok(dir.clone());
    }
    if let Some(dir) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    home_config_dir().ok_or(SessionError::NoConfigDir)
}

/// The CLI's configuration folder when `CLAUDE_CONFIG_DIR` does not name
/// one: `.claude` in the home folder (`$HOME`; Windows: `%USERPROFILE%`).
pub(crate) fn home_config_dir() -> Option<PathBuf> {
    let home = std::env::home_dir().filter(|h| !h.as_os_str().is_empty());
    home.map(|h| h.join(".claude"))
}

/// `<config>/projects`.
pub(crate) fn projects_dir(options: &SessionOptions) -> Result<PathBuf, SessionError> {
    Ok(config_home(options)?.join("projects"))
}

/// The name of the project folder the CLI keeps a working directory's
/// sessions in: every character but ASCII letters and digits becomes `-`
/// (counted in UTF-16 units, as the CLI does: a character outside the Basic
/// Multilingual Plane becomes `--`). A name longer than 200 is cut to 200 and
/// followed by `-` and a hash of the whole path (the SDKs' 32-bit string hash
/// in base 36; the CLI itself may use another hash there, which is why
/// lookups fall back to the first folder that starts with the 200-character
/// prefix and a `-`).
///
/// ```
/// use claude_code_agent::sessions::sanitize_path;
/// assert_eq!(sanitize_path("/tmp/my.project dir"), "-tmp-my-project-dir");
/// ```
pub fn sanitize_path(path: &str) -> String {
    let sanitized: String = path
        .encode_utf16()
        .map(|u| {
            if u < 128 && (u as u8).is_ascii_alphanumeric() {
                u as u8 as char
            } else {
                '-'
            }
        })
        .collect();
    if sanitized.len() <= MAX_SANITIZED_LENGTH {
        return sanitized;
    }
    format!(
        "{}-{}",
        &sanitized[..MAX_SANITIZED_LENGTH],
        simple_hash(path)
    )
}

/// The JavaScript string hash `h = (h << 5) - h + unit | 0` over UTF-16
/// units, its absolute value in base 36.
pub(crate) fn simple_hash(s: &str) -> String {
    let mut h: i32 = 0;
    for unit in s.encode_utf16() {
        h = (h << 5).wrapping_sub(h).wrapping_add(i32::from(unit));
    }
    let mut n = h.unsigned_abs();
    if n == 0 {
        return "0".to_owned();
    }
    let mut digits = Vec::new();
    while n > 0 {
        digits.push(b"0123456789abcdefghijklmnopqrstuvwxyz"[(n % 36) as usize]);
        n /= 36;
    }
    digits.reverse();
    String::from_utf8(digits).expect("ASCII digits")
}

/// The canonical form of a working directory, as the CLI names its project
/// folder: symbolic links resolved; a path that does not exist is kept as
/// given (made absolute). NFC-normalised on macOS, as the CLI does there;
/// on Windows without the `\\?\` prefix `canonicalize` gives (Node's
/// `realpath`, which the CLI uses, has none).
pub(crate) fn canonicalize(dir: &Path) -> String {
    let resolved = std::fs::canonicalize(dir)
        .or_else(|_| std::path::absolute(dir))
        .unwrap_or_else(|_| dir.to_owned());
    let s = without_verbatim_prefix(resolved.to_string_lossy().into_owned());
    #[cfg(target_os = "macos")]
    let s = {
        use unicode_normalization::UnicodeNormalization;
        s.nfc().collect::<String>()
    };
    s
}

/// `\\?\C:\dir` as `C:\dir`, `\\?\UNC\server\share` as `\\server\share`;
/// any other path as it is (a Unix path never starts so).
pub(crate) fn without_verbatim_prefix(path: String) -> String {
    if let Some(rest) = path.strip_prefix(r"\\?\UNC\") {
        return format!(r"\\{rest}");
    }
    match path.strip_prefix(r"\\?\") {
        // Only a drive path: other verbatim forms have no plain spelling.
        Some(rest) if rest.as_bytes().get(1) == Some(&b':') => rest.to_owned(),
        _ => path,
    }
}

/// The project folder for a canonical working directory: the exact name if
/// it exists; for a name longer than 200, else the first folder starting
/// with its 200-character prefix and `-`.
pub(crate) fn find_project_dir(projects: &Path, project_path: &str) -> Option<PathBuf> {
    let sanitized = sanitize_path(project_path);
    let exact = projects.join(&sanitized);
    if exact.is_dir() {
        return Some(exact);
    }
    if sanitized.len() <= MAX_SANITIZED_LENGTH {
        return None;
    }
    let prefix = format!("{}-", &sanitized[..MAX_SANITIZED_LENGTH]);
    let mut names: Vec<_> = std::fs::read_dir(projects)
        .ok()?
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    names.sort();
    names.into_iter().next()
}

/// The folders directly under `projects`, sorted by name; none if it does
/// not exist.
pub(crate) fn project_dirs(projects: &Path) -> Result<Vec<PathBuf>, SessionError> {
    let entries = match std::fs::read_dir(projects) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(SessionError::io("list", projects, e)),
    };
    let mut dirs: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    Ok(dirs)
}

/// The worktrees of the git repository containing `cwd`
/// (`git worktree list --porcelain`, at most 5 s); none when `cwd` is not in
/// a repository or git is missing.
pub(crate) fn worktree_paths(cwd: &str) -> Vec<String> {
    let child = Command::new("git")
        .args(["worktree", "list", "--porcelain"])
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn();
    let Ok(mut child) = child else {
        return Vec::new();
    };
    let Some(mut stdout) = child.stdout.take() else {
        return Vec::new();
    };
    let (tx, rx) = mpsc::channel();
    // A thread reads stdout to its end while this one keeps the child, so
    // the timeout below can kill it (on every platform).
    std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = tx.send(stdout.read_to_end(&mut out).map(|_| out));
    });
    let output = match rx.recv_timeout(GIT_TIMEOUT) {
        Ok(Ok(output)) => output,
        Ok(Err(_)) | Err(_) => {
            let _ = child.kill();
            let _ = child.wait();
            return Vec::new();
        }
    };
    if !child.wait().is_ok_and(|status| status.success()) {
        return Vec::new();
    }
    String::from_utf8_lossy(&output)
        .lines()
        .filter_map(|l| l.strip_prefix("worktree "))
        .map(str::to_owned)
        .collect()
}

/// A session file that was found.
#[derive(Debug)]
pub(crate) struct Located {
    /// `<project>/<id>.jsonl`.
    pub(crate) path: PathBuf,
    /// The project folder it is in.
    pub(crate) project_dir: PathBuf,
}

/// Every place `<id>.jsonl` may be, in the order the SDKs look: with a
/// directory, its project folder, then (when worktrees are included) each
/// other worktree's; without, every project folder. `visit` is called for
/// each existing project folder until it returns `Some`.
pub(crate) fn search_projects<T>(
    options: &SessionOptions,
    mut visit: impl FnMut(&Path, Option<&str>) -> Result<Option<T>, SessionError>,
) -> Result<(Option<T>, Vec<PathBuf>), SessionError> {
    let projects = projects_dir(options)?;
    let mut searched = Vec::new();
    match &options.dir {
        Some(dir) => {
            let canonical = canonicalize(dir);
            if let Some(project) = find_project_dir(&projects, &canonical) {
                if let Some(found) = visit(&project, Some(&canonical))? {
                    return Ok((Some(found), searched));
                }
                searched.push(project);
            }
            if options.include_worktrees {
                for wt in worktree_paths(&canonical) {
                    if wt == canonical {
                        continue;
                    }
                    if let Some(project) = find_project_dir(&projects, &wt) {
                        if let Some(found) = visit(&project, Some(&wt))? {
                            return Ok((Some(found), searched));
                        }
                        searched.push(project);
                    }
                }
            }
        }
        None => {
            for project in project_dirs(&projects)? {
                if let Some(found) = visit(&project, None)? {
                    return Ok((Some(found), searched));
                }
                searched.push(project);
            }
        }
    }
    Ok((None, searched))
}

/// Whether an error only says that the file is not there (nor its folder).
pub(crate) fn is_absent(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

/// Whether `path` is a file with something in it (an empty session file
/// means "not here, look on").
pub(crate) fn non_empty_file(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() > 0)
}

/// Finds the non-empty `<id>.jsonl` of a session.
pub(crate) fn locate_session(
    session_id: &str,
    options: &SessionOptions,
) -> Result<Located, SessionError> {
    check_uuid(session_id)?;
    let file_name = format!("{session_id}.jsonl");
    let (found, searched) = search_projects(options, |project, _| {
        let path = project.join(&file_name);
        Ok(non_empty_file(&path).then(|| Located {
            path,
            project_dir: project.to_owned(),
        }))
    })?;
    found.ok_or_else(|| SessionError::NotFound {
        session_id: session_id.to_owned(),
        searched,
    })
}
