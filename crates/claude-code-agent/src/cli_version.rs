//! The Claude Code CLI versions this SDK is tested with, and what a session
//! does when it meets another one ([`CliVersionPolicy`]).
//!
//! The CLI says its version in its answer to `initialize`
//! (`claude_code_version`, from CLI 2.1.296 on; an answer without it comes
//! from an older CLI). Every version from [`OLDEST_TESTED_CLI_VERSION`] to
//! [`NEWEST_TESTED_CLI_VERSION`] passes the real-CLI test suite
//! (`scripts/test-cli-range` runs it on the oldest, `scripts/test` on the
//! newest). Outside that range the session still starts, and by default a
//! warning is written once per process to stderr (and to `tracing`).

use std::cmp::Ordering;
use std::fmt;
use std::sync::Once;

use crate::error::{Error, Result};

/// The oldest Claude Code CLI the SDK is tested with (the real-CLI tests
/// pass on it; older ones start in another permission mode or lack fields
/// the SDK reports).
pub const OLDEST_TESTED_CLI_VERSION: &str = "2.1.302";

/// The newest Claude Code CLI the SDK is tested with (the testkit's pinned
/// version). A newer CLI is untested, not known to be broken.
pub const NEWEST_TESTED_CLI_VERSION: &str = "2.1.337";

/// The first CLI whose `initialize` answer carries `claude_code_version`.
const FIRST_REPORTING_VERSION: &str = "2.1.296";

/// What a session does when the CLI's version is outside
/// [`OLDEST_TESTED_CLI_VERSION`]`..=`[`NEWEST_TESTED_CLI_VERSION`]
/// (see [`Options::cli_version_policy`](crate::Options::cli_version_policy)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum CliVersionPolicy {
    /// Start the session; the first time in the process, write a warning to
    /// stderr and to `tracing` (at `warn`).
    #[default]
    Warn,
    /// Do not start: connecting fails with
    /// [`Error::UntestedCliVersion`], and the CLI is stopped.
    Error,
    /// Start the session and say nothing.
    Ignore,
}

/// A CLI version as three numbers (`2.1.332`); what follows them (`-beta`)
/// is ignored in comparisons.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CliVersion(pub u32, pub u32, pub u32);

impl CliVersion {
    /// Parses `major.minor.patch` (anything after the patch number's digits is
    /// ignored). `None` if it has not three numbers.
    pub fn parse(text: &str) -> Option<CliVersion> {
        let mut parts = text.trim().splitn(3, '.');
        let mut number = |last: bool| -> Option<u32> {
            let part = parts.next()?;
            let digits = if last {
                let end = part
                    .find(|c: char| !c.is_ascii_digit())
                    .unwrap_or(part.len());
                &part[..end]
            } else {
                part
            };
            digits.parse().ok()
        };
        Some(CliVersion(number(false)?, number(false)?, number(true)?))
    }

    /// Whether this version is in the tested range.
    pub fn is_tested(self) -> bool {
        self >= parse_const(OLDEST_TESTED_CLI_VERSION)
            && self <= parse_const(NEWEST_TESTED_CLI_VERSION)
    }
}

impl fmt::Display for CliVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.0, self.1, self.2)
    }
}

fn parse_const(v: &str) -> CliVersion {
    CliVersion::parse(v).expect("the version constants parse")
}

/// Why a version is outside the range, in words; `None` when it is inside.
pub(crate) fn untested_reason(reported: Option<&str>) -> Option<String> {
    let range = format!("{OLDEST_TESTED_CLI_VERSION}..={NEWEST_TESTED_CLI_VERSION}");
    let Some(text) = reported else {
        return Some(format!(
            "the Claude Code CLI is older than {FIRST_REPORTING_VERSION} (its initialize answer \
             has no claude_code_version); this SDK is tested with CLI {range}"
        ));
    };
    let Some(version) = CliVersion::parse(text) else {
        return Some(format!(
            "the Claude Code CLI reports version {text:?}, which is not a version number; this \
             SDK is tested with CLI {range}"
        ));
    };
    match version.cmp(&parse_const(OLDEST_TESTED_CLI_VERSION)) {
        Ordering::Less => Some(format!(
            "the Claude Code CLI is version {version}, older than the oldest this SDK is tested \
             with; tested: {range}"
        )),
        _ if version > parse_const(NEWEST_TESTED_CLI_VERSION) => Some(format!(
            "the Claude Code CLI is version {version}, newer than the newest this SDK is tested \
             with; tested: {range}"
        )),
        _ => None,
    }
}

/// Applies `policy` to the version the CLI reported at `initialize`.
pub(crate) fn check(reported: Option<&str>, policy: CliVersionPolicy) -> Result<()> {
    if policy == CliVersionPolicy::Ignore {
        return Ok(());
    }
    let Some(reason) = untested_reason(reported) else {
        return Ok(());
    };
    if policy == CliVersionPolicy::Error {
        return Err(Error::UntestedCliVersion {
            found: reported.map(str::to_owned),
            message: reason,
        });
    }
    static WARNED: Once = Once::new();
    WARNED.call_once(|| {
        tracing::warn!("{reason}");
        eprintln!(
            "warning (claude-code-agent): {reason}. It may work; set \
             Options::cli_version_policy(CliVersionPolicy::Ignore) to silence this, or ::Error \
             to refuse it."
        );
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_and_compare_as_numbers() {
        assert_eq!(CliVersion::parse("2.1.332"), Some(CliVersion(2, 1, 332)));
        assert_eq!(
            CliVersion::parse(" 2.1.5-beta.1"),
            Some(CliVersion(2, 1, 5))
        );
        assert_eq!(CliVersion::parse("2.1"), None);
        assert_eq!(CliVersion::parse("x.1.2"), None);
        assert!(CliVersion(2, 1, 302) > CliVersion(2, 1, 40));
        assert!(CliVersion(2, 1, 302).is_tested());
        assert!(CliVersion(2, 1, 337).is_tested());
        assert!(!CliVersion(2, 1, 301).is_tested());
        assert!(!CliVersion(2, 1, 338).is_tested());
        assert!(!CliVersion(3, 0, 0).is_tested());
    }

    #[test]
    fn reasons_name_the_version_and_the_range() {
        assert_eq!(untested_reason(Some("2.1.310")), None);
        let old = untested_reason(Some("2.1.200")).unwrap();
        assert!(old.contains("2.1.200") && old.contains("older"), "{old}");
        assert!(old.contains("2.1.302..=2.1.337"), "{old}");
        let new = untested_reason(Some("2.2.0")).unwrap();
        assert!(new.contains("2.2.0") && new.contains("newer"), "{new}");
        let none = untested_reason(None).unwrap();
        assert!(none.contains("older than 2.1.296"), "{none}");
        let odd = untested_reason(Some("banana")).unwrap();
        assert!(odd.contains("\"banana\""), "{odd}");
    }

    #[test]
    fn the_policy_decides() {
        assert!(check(Some("2.1.1"), CliVersionPolicy::Ignore).is_ok());
        assert!(check(Some("2.1.1"), CliVersionPolicy::Warn).is_ok());
        assert!(check(Some("2.1.320"), CliVersionPolicy::Error).is_ok());
        match check(Some("2.1.1"), CliVersionPolicy::Error) {
            Err(Error::UntestedCliVersion { found, message }) => {
                assert_eq!(found.as_deref(), Some("2.1.1"));
                assert!(message.contains("2.1.302..=2.1.337"), "{message}");
            }
            other => panic!("{other:?}"),
        }
    }
}
