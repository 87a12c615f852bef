//! Cassettes (feature `cassette`): record a real agent session once —
//! what the CLI asked the Messages API and what it answered, streamed
//! replies included — and replay it offline in every later run, failing
//! with a readable diff when the agent asks something new. VCR.py and Ruby's
//! VCR do this for HTTP clients; here a proxy stands between the CLI and the
//! API (`ANTHROPIC_BASE_URL` points at it), so your tools run in process,
//! the real CLI runs, and only the model is recorded.
//!
//! ```no_run
//! use claude_code_agent::query;
//! use claude_code_agent_testkit::cassette::Cassette;
//! use futures::StreamExt;
//!
//! #[tokio::test]
//! async fn the_agent_reports_the_weather() {
//!     let cassette = Cassette::new("tests/cassettes/weather.json").start().await.unwrap();
//!     let mut stream = query("What is the weather in Paris?", cassette.options());
//!     while let Some(message) = stream.next().await {
//!         message.unwrap();
//!     }
//!     cassette.finish().await.unwrap(); // the diff, if the agent asked something new
//! }
//! ```
//!
//! Modes ([`RecordMode`]): replay only (the default in CI, and whenever
//! `CLAUDE_AGENT_CASSETTE=replay`), record when the file is missing (the
//! default elsewhere, `once`), re-record (`all`). Recording forwards to
//! [`upstream`](Cassette::upstream) (the real API by default) with the key
//! of [`api_key`](Cassette::api_key) or `ANTHROPIC_API_KEY`; the CLI itself
//! only ever sees a dummy key.
//!
//! What is written: the request's method, path and body as matched (see
//! below), and the response's status, content type and body, each SSE event
//! one JSON object. No header is written, so neither `x-api-key` nor
//! `authorization`; the key itself and whatever matches the patterns of
//! [`redact`](Cassette::redact) are replaced by `[REDACTED]` in every
//! string before the file is written. The file is pretty-printed JSON
//! with one element per request: diffs of a re-recording are a few lines,
//! and a reviewer reads what the model was asked and said.
//!
//! What a request is matched on: method, path, and the whole body — model,
//! system prompt, messages, tools, tool results — less what changes between
//! runs: `metadata` (user and session ids), `cache_control` markers, the
//! CLI's temporary working and config folders (written `<WORK_DIR>`,
//! `<CONFIG_DIR>`), the machine's OS version and shell, and dates in the
//! system prompt (`<DATE>`). Requests are
//! matched in any order (the CLI's side calls race its main one); each
//! recorded answer is used once. A request that matches nothing is answered
//! with an API error (the CLI's turn fails) and [`finish`](CassetteSession::finish)
//! returns [`CassetteError::Mismatch`] with the diff against the closest
//! recorded request (it is also printed to stderr at once).

mod format;
mod matching;
mod proxy;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use claude_code_agent::Options;
use serde_json::Value;

use crate::cli::{CliEnv, CliError, pinned_cli_async};
use format::File;
use matching::Volatile;

/// The real Messages API, where recording forwards by default.
pub const DEFAULT_UPSTREAM: &str = "https://api.anthropic.com";

/// What replaces a redacted value.
pub const REDACTED: &str = "[REDACTED]";

/// When a cassette records and when it replays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RecordMode {
    /// Replay only; a missing file is an error (VCR's `none`).
    Replay,
    /// Record when the file is missing, else replay (VCR's `once`).
    Once,
    /// Record anew, replacing the file (VCR's `all`).
    All,
}

impl RecordMode {
    /// `CLAUDE_AGENT_CASSETTE` (`replay`, `once`, `all`), else `Replay`
    /// when `CI` is set, else `Once`.
    pub fn from_env() -> RecordMode {
        match std::env::var("CLAUDE_AGENT_CASSETTE").as_deref() {
            Ok("replay" | "none") => RecordMode::Replay,
            Ok("once") => RecordMode::Once,
            Ok("all" | "record") => RecordMode::All,
            _ if std::env::var_os("CI").is_some() => RecordMode::Replay,
            _ => RecordMode::Once,
        }
    }
}

/// Why a cassette could not be used, or what its run found.
///
/// Its `Debug` is its message and causes as text (so that
/// `finish().await.unwrap()` shows a mismatch's diff as lines).
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum CassetteError {
    /// The file could not be read or written.
    #[error("cassette {}: {source}", path.display())]
    Io {
        /// The cassette.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The file is not a cassette.
    #[error("cassette {}: not a cassette file{}", path.display(), where_in(source))]
    Format {
        /// The cassette.
        path: PathBuf,
        /// Where the JSON is wrong.
        source: serde_json::Error,
    },
    /// The file is of another format version.
    #[error("cassette {}: format version {found}, this testkit reads 1 to {}", path.display(), format::VERSION)]
    Version {
        /// The cassette.
        path: PathBuf,
        /// The version it has.
        found: u64,
    },
    /// A redaction pattern does not compile.
    #[error("cassette redaction pattern {pattern:?} is no regular expression")]
    Pattern {
        /// The pattern.
        pattern: String,
        /// Why.
        source: regex_lite::Error,
    },
    /// The pinned CLI could not be found or installed.
    #[error("the pinned Claude Code CLI is not available")]
    Cli(#[from] CliError),
    /// The CLI asked what the cassette does not hold: each request that
    /// matched nothing, with the diff against the closest recorded one.
    /// Requests that came closest to the same recorded request (the CLI
    /// retrying one it got an error for) make one report: the closest.
    #[error("cassette {}: {} request(s) matched no recorded one\n{report}", path.display(), count)]
    Mismatch {
        /// The cassette.
        path: PathBuf,
        /// How many requests matched nothing, the CLI's retries included.
        count: usize,
        /// The diffs, one per recorded request they came closest to.
        report: String,
    },
    /// Recording: the upstream could not be reached for some requests.
    #[error("cassette {}: recording failed\n{report}", path.display())]
    Upstream {
        /// The cassette.
        path: PathBuf,
        /// What failed.
        report: String,
    },
}

/// Where in the file a format error is (" (line L, column C)"), or what it
/// is when the JSON parsed and its content is wrong.
fn where_in(error: &serde_json::Error) -> String {
    if error.line() == 0 {
        format!(": {error}")
    } else {
        format!(" (line {}, column {})", error.line(), error.column())
    }
}

impl std::fmt::Debug for CassetteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self}")?;
        let mut source = std::error::Error::source(self);
        while let Some(cause) = source {
            write!(f, "\n\nCaused by: {cause}")?;
            source = cause.source();
        }
        Ok(())
    }
}

/// A cassette to record or replay: [`start`](Self::start) it, run the
/// agent with its [`options`](CassetteSession::options), then
/// [`finish`](CassetteSession::finish). See the [module docs](self). Its
/// `Debug` shows no key.
#[derive(Clone)]
pub struct Cassette {
    path: PathBuf,
    mode: RecordMode,
    upstream: String,
    api_key: Option<String>,
    redact: Vec<String>,
}

impl Cassette {
    /// The cassette at `path`, in the mode of [`RecordMode::from_env`].
    pub fn new(path: impl Into<PathBuf>) -> Cassette {
        Cassette {
            path: path.into(),
            mode: RecordMode::from_env(),
            upstream: DEFAULT_UPSTREAM.to_owned(),
            api_key: None,
            redact: Vec::new(),
        }
    }

    /// The cassette at `path`, replayed only.
    pub fn replay(path: impl Into<PathBuf>) -> Cassette {
        Cassette::new(path).mode(RecordMode::Replay)
    }

    /// The cassette at `path`, recorded anew.
    pub fn record(path: impl Into<PathBuf>) -> Cassette {
        Cassette::new(path).mode(RecordMode::All)
    }

    /// Sets the mode.
    pub fn mode(mut self, mode: RecordMode) -> Cassette {
        self.mode = mode;
        self
    }

    /// Where recording forwards (default [`DEFAULT_UPSTREAM`]).
    pub fn upstream(mut self, url: impl Into<String>) -> Cassette {
        self.upstream = url.into().trim_end_matches('/').to_owned();
        self
    }

    /// The API key recording sends upstream (default: `ANTHROPIC_API_KEY`).
    /// It is never written: it is redacted wherever it shows.
    pub fn api_key(mut self, key: impl Into<String>) -> Cassette {
        self.api_key = Some(key.into());
        self
    }

    /// A regular expression (`regex-lite` syntax) whose matches in any
    /// string of the cassette are written as [`REDACTED`]. The cassette
    /// keeps its patterns: a replay writes what the CLI asks the same way
    /// before it matches.
    pub fn redact(mut self, pattern: impl Into<String>) -> Cassette {
        self.redact.push(pattern.into());
        self
    }

    /// Finds the pinned CLI, prepares its environment and starts the proxy,
    /// recording or replaying as the mode and the file say.
    pub async fn start(self) -> Result<CassetteSession, CassetteError> {
        let cli = pinned_cli_async().await?;
        let io = |source| CassetteError::Io {
            path: self.path.clone(),
            source,
        };
        let recording = match self.mode {
            RecordMode::All => true,
            RecordMode::Once => !self.path.exists(),
            RecordMode::Replay => false,
        };
        let file = match recording {
            true => None,
            false => Some(File::load(&self.path)?),
        };
        let mut sources = self.redact.clone();
        for p in file.iter().flat_map(|f| &f.redact) {
            if !sources.contains(p) {
                sources.push(p.clone());
            }
        }
        let mut patterns = Vec::new();
        for pattern in &sources {
            let regex =
                regex_lite::Regex::new(pattern).map_err(|source| CassetteError::Pattern {
                    pattern: pattern.clone(),
                    source,
                })?;
            patterns.push(regex);
        }
        let active = if let Some(file) = file {
            proxy::Active::Replay {
                used: Mutex::new(vec![false; file.interactions.len()]),
                interactions: file.interactions,
            }
        } else {
            let key = self
                .api_key
                .clone()
                .or_else(|| std::env::var("ANTHROPIC_API_KEY").ok());
            proxy::Active::Record {
                upstream: self.upstream.clone(),
                api_key: key,
                http: reqwest::Client::new(),
            }
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(io)?;
        let url = format!("http://{}", listener.local_addr().map_err(io)?);
        let env = CliEnv::new(&url).map_err(io)?;
        let mut paths = Vec::new();
        for (dir, placeholder) in [
            (env.work_dir(), "<WORK_DIR>"),
            (env.config_dir(), "<CONFIG_DIR>"),
        ] {
            paths.push((dir.to_string_lossy().into_owned(), placeholder));
            if let Ok(real) = dir.canonicalize() {
                paths.push((real.to_string_lossy().into_owned(), placeholder));
            }
        }
        let shared = Arc::new(proxy::Shared {
            active,
            volatile: Volatile {
                paths,
                patterns: patterns.clone(),
            },
            recorded: Mutex::new(Vec::new()),
            problems: Mutex::new(Vec::new()),
        });
        let task = tokio::spawn(proxy::serve(listener, Arc::clone(&shared)));
        Ok(CassetteSession {
            path: self.path,
            patterns: sources,
            redact: patterns,
            api_key: self.api_key,
            shared,
            task,
            env,
            cli,
            url,
            recording,
        })
    }
}

/// A started [`Cassette`]: the proxy, and the CLI's environment pointed at
/// it. Its `Debug` shows no key.
pub struct CassetteSession {
    path: PathBuf,
    patterns: Vec<String>,
    redact: Vec<regex_lite::Regex>,
    api_key: Option<String>,
    shared: Arc<proxy::Shared>,
    task: tokio::task::JoinHandle<()>,
    env: CliEnv,
    cli: PathBuf,
    url: String,
    recording: bool,
}

impl std::fmt::Debug for Cassette {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cassette")
            .field("path", &self.path)
            .field("mode", &self.mode)
            .field("upstream", &self.upstream)
            .field("api_key", &self.api_key.as_ref().map(|_| REDACTED))
            .field("redact", &self.redact)
            .finish()
    }
}

impl std::fmt::Debug for CassetteSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CassetteSession")
            .field("path", &self.path)
            .field("url", &self.url)
            .field("recording", &self.recording)
            .field("env", &self.env)
            .finish_non_exhaustive()
    }
}

impl CassetteSession {
    /// Options that run the pinned CLI against the proxy, in a temporary
    /// environment of its own. Add your servers, tools and callbacks.
    pub fn options(&self) -> Options {
        let mut options = Options::new().cli_path(&self.cli).cwd(self.env.work_dir());
        for (k, v) in self.env.vars() {
            options = options.env(k, v);
        }
        options
    }

    /// The proxy's base URL (the CLI's `ANTHROPIC_BASE_URL`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The CLI's environment (its config and working folders).
    pub fn env(&self) -> &CliEnv {
        &self.env
    }

    /// Whether this run records (else it replays).
    pub fn is_recording(&self) -> bool {
        self.recording
    }

    /// The cassette's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Stops the proxy; when recording, writes the cassette (redacted).
    /// Fails with what went wrong: requests that matched nothing (the
    /// diffs), an upstream that could not be reached, a file that could not
    /// be written.
    pub async fn finish(self) -> Result<(), CassetteError> {
        self.task.abort();
        let _ = self.task.await;
        let problems = std::mem::take(
            &mut *self
                .shared
                .problems
                .lock()
                .unwrap_or_else(|e| e.into_inner()),
        );
        if self.recording {
            let interactions = std::mem::take(
                &mut *self
                    .shared
                    .recorded
                    .lock()
                    .unwrap_or_else(|e| e.into_inner()),
            );
            let mut file = serde_json::to_value(File {
                cassette: format::VERSION,
                redact: Vec::new(),
                shared: Vec::new(),
                interactions,
            })
            .expect("a cassette serializes");
            let key = self
                .api_key
                .clone()
                .or_else(|| std::env::var("ANTHROPIC_API_KEY").ok())
                .filter(|k| k.len() >= 8);
            redact(&mut file, key.as_deref(), &self.redact);
            let mut file: File =
                serde_json::from_value(file).expect("a redacted cassette is a cassette");
            file.redact = self.patterns.clone();
            if problems.is_empty() {
                file.save(&self.path)?;
            } else {
                return Err(CassetteError::Upstream {
                    path: self.path,
                    report: problems
                        .into_iter()
                        .map(|p| p.report)
                        .collect::<Vec<_>>()
                        .join("\n"),
                });
            }
            return Ok(());
        }
        if problems.is_empty() {
            return Ok(());
        }
        Err(CassetteError::Mismatch {
            path: self.path,
            count: problems.len(),
            report: fold(problems),
        })
    }
}

/// Folds the requests that came closest to the same recorded request (the
/// CLI retries a request it got an error for, sometimes changed) into one
/// report: the closest of them, with how many there were; the reports in
/// the order their first request came.
fn fold(problems: Vec<proxy::Problem>) -> String {
    // (recorded request, lines changed, report, requests folded into it)
    let mut folded: Vec<(Option<usize>, usize, String, usize)> = Vec::new();
    for p in problems {
        match p.closest {
            Some((recorded, changed)) => match folded.iter_mut().find(|f| f.0 == Some(recorded)) {
                Some(f) => {
                    f.3 += 1;
                    if changed < f.1 {
                        (f.1, f.2) = (changed, p.report);
                    }
                }
                None => folded.push((Some(recorded), changed, p.report, 1)),
            },
            None => folded.push((None, 0, p.report, 1)),
        }
    }
    folded
        .iter()
        .map(|(_, _, report, n)| match n {
            1 => report.clone(),
            n => format!("{report}\n({n} requests, the CLI's retries, came closest to that recorded request: this is the closest of them)"),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Replaces `key` and the matches of `patterns` in every string of `value`.
fn redact(value: &mut Value, key: Option<&str>, patterns: &[regex_lite::Regex]) {
    match value {
        Value::String(s) => {
            if let Some(key) = key
                && s.contains(key)
            {
                *s = s.replace(key, REDACTED);
            }
            for p in patterns {
                if p.is_match(s) {
                    *s = p.replace_all(s, REDACTED).into_owned();
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| redact(v, key, patterns)),
        Value::Object(map) => map.values_mut().for_each(|v| redact(v, key, patterns)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn debug_shows_no_key() {
        let c = Cassette::record("x.json").api_key("sk-ant-DEBUG-KEY-1");
        assert!(!format!("{c:?}").contains("DEBUG-KEY"), "{c:?}");
    }

    #[test]
    fn the_key_and_the_patterns_are_redacted_everywhere() {
        let mut v = json!({"a": ["my sk-ant-KEY123 here", {"b": "token=abc123; ok"}], "n": 1});
        let patterns = [regex_lite::Regex::new(r"token=[a-z0-9]+").unwrap()];
        redact(&mut v, Some("sk-ant-KEY123"), &patterns);
        assert_eq!(
            v,
            json!({"a": ["my [REDACTED] here", {"b": "[REDACTED]; ok"}], "n": 1})
        );
    }
}
