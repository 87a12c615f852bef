//! What the supported CLIs do differently, by version: tests whose expectations
//! depend on the CLI under test ask [`tested_cli_has`] instead of naming versions
//! (`docs/protocol.md` lists the same changes).

use claude_code_agent::CliVersion;

use super::tested_cli_version;

/// A change in the CLI's behaviour within the supported range, and the first
/// version that has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CliChange {
    /// From 2.1.307 the CLI answers `set_model` with `{"model": <the model>}`;
    /// before it, `success` with no payload.
    SetModelAnswersModel,
    /// From 2.1.314 the last message of a request to the model is the user's (or
    /// the tool results); before it, a `system` message
    /// (`<total_tokens>… tokens left</total_tokens>`) follows them.
    NoTrailingSystemMessage,
    /// From 2.1.323 the CLI's error answer to a control request of an unknown
    /// subtype carries `error_code: "unsupported_request"`.
    UnsupportedRequestErrorCode,
    /// From 2.1.335 the CLI calls an `Interrupt` hook when a turn is interrupted
    /// (the `interrupt` control request: `source: "user"`, `reason: "stop"`,
    /// `via: "client"`); before it, never.
    InterruptHook,
    /// From 2.1.336 the CLI records a `can_use_tool` answer's
    /// `decisionClassification: "config"` as who decided (the transcript's
    /// `permissionDecision.source`); before it, it does not know the value and
    /// records such an allow as `user_temporary`.
    ConfigDecisionClassification,
}

impl CliChange {
    /// The first CLI version with the change.
    pub fn since(self) -> &'static str {
        match self {
            CliChange::SetModelAnswersModel => "2.1.307",
            CliChange::NoTrailingSystemMessage => "2.1.314",
            CliChange::UnsupportedRequestErrorCode => "2.1.323",
            CliChange::InterruptHook => "2.1.335",
            CliChange::ConfigDecisionClassification => "2.1.336",
        }
    }
}

/// Whether the CLI under test ([`tested_cli_version`]) has `change`.
///
/// # Panics
///
/// If the version under test is not a version number.
pub fn tested_cli_has(change: CliChange) -> bool {
    let tested = CliVersion::parse(tested_cli_version()).unwrap_or_else(|| {
        panic!(
            "the CLI version under test {:?} is not x.y.z",
            tested_cli_version()
        )
    });
    let since = CliVersion::parse(change.since()).expect("CliChange::since is x.y.z");
    tested >= since
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pinned_cli_has_every_change_and_the_oldest_none() {
        let pinned = CliVersion::parse(super::super::PINNED_CLI_VERSION).unwrap();
        let oldest = CliVersion::parse(super::super::OLDEST_SUPPORTED_CLI_VERSION).unwrap();
        for change in [
            CliChange::SetModelAnswersModel,
            CliChange::NoTrailingSystemMessage,
            CliChange::UnsupportedRequestErrorCode,
            CliChange::InterruptHook,
            CliChange::ConfigDecisionClassification,
        ] {
            let since = CliVersion::parse(change.since()).unwrap();
            assert!(oldest < since && since <= pinned, "{change:?}");
        }
    }

    #[test]
    fn the_testkit_and_the_sdk_agree_on_the_range() {
        assert_eq!(
            super::super::OLDEST_SUPPORTED_CLI_VERSION,
            claude_code_agent::OLDEST_TESTED_CLI_VERSION
        );
        assert_eq!(
            super::super::PINNED_CLI_VERSION,
            claude_code_agent::NEWEST_TESTED_CLI_VERSION
        );
    }
}
