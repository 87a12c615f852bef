//! Permission modes, rules and the answer to `can_use_tool`.

use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::shared_types::PermissionMode;
use crate::wire::{Wire, string_enum, wire_struct};

string_enum! {
    /// What a permission rule does.
    pub enum PermissionBehavior default Allow {
        /// Allow the tool.
        "allow" => Allow,
        /// Deny the tool.
        "deny" => Deny,
        /// Ask each time.
        "ask" => Ask,
    }
}

string_enum! {
    /// Where a permission update is stored.
    pub enum PermissionDestination default Session {
        /// `~/.claude/settings.json`.
        "userSettings" => UserSettings,
        /// `.claude/settings.json`.
        "projectSettings" => ProjectSettings,
        /// `.claude/settings.local.json`.
        "localSettings" => LocalSettings,
        /// This session only.
        "session" => Session,
        /// As if given on the command line.
        "cliArg" => CliArg,
    }
}

string_enum! {
    /// The kind of a [`PermissionUpdate`].
    pub enum PermissionUpdateKind default AddRules {
        /// Add rules.
        "addRules" => AddRules,
        /// Replace the rules of a behavior.
        "replaceRules" => ReplaceRules,
        /// Remove rules.
        "removeRules" => RemoveRules,
        /// Change the permission mode.
        "setMode" => SetMode,
        /// Add working directories.
        "addDirectories" => AddDirectories,
        /// Remove working directories.
        "removeDirectories" => RemoveDirectories,
    }
}

wire_struct! {
    /// A permission rule: `{"toolName":…,"ruleContent":…}`.
    pub struct PermissionRule {
        /// Tool name, e.g. `Bash` or `mcp__calc__add` (`mcp__calc` for a whole server).
        req tool_name: String = "toolName",
        /// Optional pattern, e.g. `npm test:*` for `Bash`.
        opt rule_content: String = "ruleContent",
    }
}

impl PermissionRule {
    /// A rule for a whole tool.
    pub fn new(tool_name: impl Into<String>) -> Self {
        Self {
            tool_name: tool_name.into(),
            ..Self::default()
        }
    }

    /// Restricts the rule with a pattern.
    pub fn with_content(mut self, content: impl Into<String>) -> Self {
        self.rule_content = Some(content.into());
        self
    }
}

wire_struct! {
    /// A change of permissions: sent in `permission_suggestions` by the CLI and
    /// in `updatedPermissions` of an allow answer.
    pub struct PermissionUpdate {
        /// `addRules`, `setMode`, …
        req kind: PermissionUpdateKind = "type",
        /// Rules (for the `*Rules` kinds).
        opt rules: Vec<PermissionRule> = "rules",
        /// Behavior of the rules.
        opt behavior: PermissionBehavior = "behavior",
        /// Where to store the update.
        opt destination: PermissionDestination = "destination",
        /// The mode (for `setMode`).
        opt mode: PermissionMode = "mode",
        /// Directories (for the `*Directories` kinds).
        opt directories: Vec<String> = "directories",
    }
}

impl PermissionUpdate {
    fn rules_update(
        kind: PermissionUpdateKind,
        rules: Vec<PermissionRule>,
        behavior: PermissionBehavior,
        destination: PermissionDestination,
    ) -> Self {
        Self {
            kind,
            rules: Some(rules),
            behavior: Some(behavior),
            destination: Some(destination),
            ..Self::default()
        }
    }

    /// `{"type":"addRules","rules":…,"behavior":…,"destination":…}`.
    pub fn add_rules(
        rules: Vec<PermissionRule>,
        behavior: PermissionBehavior,
        destination: PermissionDestination,
    ) -> Self {
        Self::rules_update(PermissionUpdateKind::AddRules, rules, behavior, destination)
    }

    /// `{"type":"replaceRules",…}`.
    pub fn replace_rules(
        rules: Vec<PermissionRule>,
        behavior: PermissionBehavior,
        destination: PermissionDestination,
    ) -> Self {
        Self::rules_update(
            PermissionUpdateKind::ReplaceRules,
            rules,
            behavior,
            destination,
        )
    }

    /// `{"type":"removeRules",…}`.
    pub fn remove_rules(
        rules: Vec<PermissionRule>,
        behavior: PermissionBehavior,
        destination: PermissionDestination,
    ) -> Self {
        Self::rules_update(
            PermissionUpdateKind::RemoveRules,
            rules,
            behavior,
            destination,
        )
    }

    /// `{"type":"setMode","mode":…,"destination":…}`.
    pub fn set_mode(mode: PermissionMode, destination: PermissionDestination) -> Self {
        Self {
            kind: PermissionUpdateKind::SetMode,
            mode: Some(mode),
            destination: Some(destination),
            ..Self::default()
        }
    }

    /// `{"type":"addDirectories","directories":…,"destination":…}`.
    pub fn add_directories(directories: Vec<String>, destination: PermissionDestination) -> Self {
        Self {
            kind: PermissionUpdateKind::AddDirectories,
            directories: Some(directories),
            destination: Some(destination),
            ..Self::default()
        }
    }

    /// `{"type":"removeDirectories",…}`.
    pub fn remove_directories(
        directories: Vec<String>,
        destination: PermissionDestination,
    ) -> Self {
        Self {
            kind: PermissionUpdateKind::RemoveDirectories,
            directories: Some(directories),
            destination: Some(destination),
            ..Self::default()
        }
    }

    /// The same update stored elsewhere (e.g. a suggestion for
    /// `localSettings` applied to the `session` only).
    pub fn with_destination(mut self, destination: PermissionDestination) -> Self {
        self.destination = Some(destination);
        self
    }
}

string_enum! {
    /// Who decided a [`PermissionResult`] (`decisionClassification`), for
    /// telemetry and for the call's stored record; the vocabulary of the
    /// CLI's `tool_decision` OpenTelemetry events. Unset, the CLI infers
    /// `user_temporary` for an allow and `user_reject` for a deny.
    pub enum PermissionDecisionClassification default UserTemporary {
        /// A person allowed this call once.
        "user_temporary" => UserTemporary,
        /// A person allowed it always (the click and later cache hits).
        "user_permanent" => UserPermanent,
        /// A person denied it.
        "user_reject" => UserReject,
        /// The host decided by itself (a mode, a policy, a rule no person's
        /// answer made) with nobody asked. The call's record then says no
        /// person answered, so an allow no longer counts as a sign that a
        /// person is present; a deny still does. Honoured only from the
        /// program that launched the CLI (TypeScript SDK 0.3.337).
        "config" => Config,
    }
}

/// The answer to a `can_use_tool` request, written as
/// `{"behavior":"allow","updatedInput":…,"updatedPermissions":…}` or
/// `{"behavior":"deny","message":…,"interrupt":true}`, each with
/// `toolUseID` and `decisionClassification` when set.
///
/// The CLI runs the tool with `updatedInput`; send the original input when it
/// is unchanged (the SDK session does this for an `Allow` without one). As
/// the TypeScript SDK does, the session sets `toolUseID` to the request's
/// `tool_use_id`, whatever the callback gave.
///
/// Build one with [`allow`](Self::allow), [`deny`](Self::deny) and the
/// `with_*` methods; the variants are non-exhaustive, since the protocol
/// adds fields.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum PermissionResult {
    /// Run the tool.
    #[non_exhaustive]
    Allow {
        /// Replacement input (`updatedInput`).
        updated_input: Option<Value>,
        /// Permission changes to apply, e.g. "always allow" (`updatedPermissions`).
        updated_permissions: Option<Vec<PermissionUpdate>>,
        /// The tool call this answers (`toolUseID`).
        tool_use_id: Option<String>,
        /// Who decided (`decisionClassification`).
        decision_classification: Option<PermissionDecisionClassification>,
    },
    /// Do not run the tool; the model sees `message` as the tool's error.
    #[non_exhaustive]
    Deny {
        /// The reason, shown to the model.
        message: String,
        /// Also stop the turn (`error_during_execution`).
        interrupt: bool,
        /// The tool call this answers (`toolUseID`).
        tool_use_id: Option<String>,
        /// Who decided (`decisionClassification`).
        decision_classification: Option<PermissionDecisionClassification>,
    },
}

impl PermissionResult {
    /// Allow with the original input.
    pub fn allow() -> Self {
        Self::Allow {
            updated_input: None,
            updated_permissions: None,
            tool_use_id: None,
            decision_classification: None,
        }
    }

    /// Allow with a replacement input.
    pub fn allow_with_input(input: Value) -> Self {
        Self::Allow {
            updated_input: Some(input),
            updated_permissions: None,
            tool_use_id: None,
            decision_classification: None,
        }
    }

    /// Deny; the model sees `message` and may go on.
    pub fn deny(message: impl Into<String>) -> Self {
        Self::Deny {
            message: message.into(),
            interrupt: false,
            tool_use_id: None,
            decision_classification: None,
        }
    }

    /// Deny and stop the turn.
    pub fn deny_and_interrupt(message: impl Into<String>) -> Self {
        Self::Deny {
            message: message.into(),
            interrupt: true,
            tool_use_id: None,
            decision_classification: None,
        }
    }

    /// Adds permission updates to an `Allow` (no effect on `Deny`).
    pub fn with_updated_permissions(mut self, updates: Vec<PermissionUpdate>) -> Self {
        if let Self::Allow {
            updated_permissions,
            ..
        } = &mut self
        {
            *updated_permissions = Some(updates);
        }
        self
    }

    /// Says who decided (`decisionClassification`): for example
    /// [`PermissionDecisionClassification::UserPermanent`] for an "always
    /// allow" click, or [`PermissionDecisionClassification::Config`] for an
    /// answer the host gave by itself, with nobody asked.
    ///
    /// ```
    /// use claude_code_agent::protocol::{PermissionDecisionClassification, PermissionResult};
    /// use serde_json::json;
    /// let answer = PermissionResult::deny("policy")
    ///     .with_decision_classification(PermissionDecisionClassification::Config)
    ///     .with_tool_use_id("toolu_1");
    /// assert_eq!(
    ///     answer.to_value(),
    ///     json!({"behavior": "deny", "message": "policy", "toolUseID": "toolu_1",
    ///            "decisionClassification": "config"})
    /// );
    /// ```
    pub fn with_decision_classification(
        mut self,
        classification: PermissionDecisionClassification,
    ) -> Self {
        match &mut self {
            Self::Allow {
                decision_classification,
                ..
            }
            | Self::Deny {
                decision_classification,
                ..
            } => *decision_classification = Some(classification),
        }
        self
    }

    /// Names the tool call this answers (`toolUseID`). The SDK session
    /// sets it from the request itself, as the TypeScript SDK does.
    pub fn with_tool_use_id(mut self, id: impl Into<String>) -> Self {
        self.set_tool_use_id(Some(id.into()));
        self
    }

    /// Sets or clears `toolUseID`.
    pub(crate) fn set_tool_use_id(&mut self, id: Option<String>) {
        match self {
            Self::Allow { tool_use_id, .. } | Self::Deny { tool_use_id, .. } => *tool_use_id = id,
        }
    }

    /// Whether this allows the tool.
    pub fn is_allow(&self) -> bool {
        matches!(self, Self::Allow { .. })
    }

    /// The tool call this answers (`toolUseID`), if set.
    pub fn tool_use_id(&self) -> Option<&str> {
        match self {
            Self::Allow { tool_use_id, .. } | Self::Deny { tool_use_id, .. } => {
                tool_use_id.as_deref()
            }
        }
    }

    /// Who decided (`decisionClassification`), if set.
    pub fn decision_classification(&self) -> Option<&PermissionDecisionClassification> {
        match self {
            Self::Allow {
                decision_classification,
                ..
            }
            | Self::Deny {
                decision_classification,
                ..
            } => decision_classification.as_ref(),
        }
    }

    /// Encodes as the CLI's JSON.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The answer to a `can_use_tool` request whose input was
    /// `original_input`: an allow always carries `updatedInput` (the
    /// original input when none was given), as the CLI expects. Moves
    /// everything; nothing is copied.
    ///
    /// ```
    /// use claude_code_agent::PermissionResult;
    /// use serde_json::json;
    /// let answer = PermissionResult::allow().into_answer(json!({"a": 1}));
    /// assert_eq!(answer, json!({"behavior": "allow", "updatedInput": {"a": 1}}));
    /// let answer = PermissionResult::deny("no").into_answer(json!({"a": 1}));
    /// assert_eq!(answer, json!({"behavior": "deny", "message": "no"}));
    /// ```
    pub fn into_answer(self, original_input: Value) -> Value {
        Value::Object(self.into_map(Some(original_input)))
    }

    /// The wire form; an allow without `updatedInput` gets `default_input`.
    fn into_map(self, default_input: Option<Value>) -> Map<String, Value> {
        let mut map = Map::new();
        let (tool_use_id, classification) = match self {
            Self::Allow {
                updated_input,
                updated_permissions,
                tool_use_id,
                decision_classification,
            } => {
                map.insert("behavior".into(), "allow".into());
                if let Some(input) = updated_input.or(default_input) {
                    map.insert("updatedInput".into(), input);
                }
                if let Some(updates) = updated_permissions {
                    map.insert(
                        "updatedPermissions".into(),
                        Value::Array(updates.iter().map(PermissionUpdate::to_value).collect()),
                    );
                }
                (tool_use_id, decision_classification)
            }
            Self::Deny {
                message,
                interrupt,
                tool_use_id,
                decision_classification,
            } => {
                map.insert("behavior".into(), "deny".into());
                map.insert("message".into(), message.into());
                if interrupt {
                    map.insert("interrupt".into(), true.into());
                }
                (tool_use_id, decision_classification)
            }
        };
        if let Some(id) = tool_use_id {
            map.insert("toolUseID".into(), id.into());
        }
        if let Some(c) = classification {
            map.insert("decisionClassification".into(), c.as_str().into());
        }
        map
    }

    /// Decodes the CLI's JSON (`behavior` must be `allow` or `deny`).
    pub fn from_value(value: Value) -> Result<Self, Value> {
        let Value::Object(mut map) = value else {
            return Err(value);
        };
        let allow = match map.get("behavior").and_then(Value::as_str) {
            Some("allow") => true,
            Some("deny") => false,
            _ => return Err(Value::Object(map)),
        };
        let tool_use_id = map
            .remove("toolUseID")
            .and_then(|v| String::from_wire(v).ok());
        let decision_classification = map
            .remove("decisionClassification")
            .and_then(|v| PermissionDecisionClassification::from_wire(v).ok());
        if allow {
            Ok(Self::Allow {
                updated_input: map.remove("updatedInput"),
                updated_permissions: map
                    .remove("updatedPermissions")
                    .and_then(|v| Vec::<PermissionUpdate>::from_wire(v).ok()),
                tool_use_id,
                decision_classification,
            })
        } else {
            Ok(Self::Deny {
                message: map
                    .remove("message")
                    .and_then(|v| String::from_wire(v).ok())
                    .unwrap_or_default(),
                interrupt: map
                    .get("interrupt")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
                tool_use_id,
                decision_classification,
            })
        }
    }
}

impl Serialize for PermissionResult {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.clone().into_map(None).serialize(s)
    }
}

impl<'de> Deserialize<'de> for PermissionResult {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Self::from_value(Value::deserialize(d)?).map_err(|_| {
            serde::de::Error::custom(
                "a permission result needs \"behavior\": \"allow\" or \"deny\"",
            )
        })
    }
}

/// As a field of a wire struct (a `PermissionRequest` hook's `decision`):
/// accepted only when it comes back unchanged, so that a decision with
/// fields this type does not model stays raw in the struct's `extra`.
impl Wire for PermissionResult {
    fn from_wire(v: Value) -> Result<Self, Value> {
        if Self::accepts(&v) {
            Self::from_value(v)
        } else {
            Err(v)
        }
    }
    fn accepts(v: &Value) -> bool {
        Self::from_value(v.clone()).is_ok_and(|r| &r.to_value() == v)
    }
}
