//! The rarer `system` subtypes of TypeScript SDK 0.3.332's `SDKMessage`
//! union (and `session_title_changed`, which CLI 2.1.332 sends but neither
//! official SDK types). Same field names as the TypeScript types; each
//! carries `session_id` and `uuid`; anything else stays in `extra`.

use serde_json::Value;

use crate::shared_types::SlashCommand;
use crate::wire::wire_struct;

/// Declares a `system` message struct with `session_id` and `uuid`.
macro_rules! system_event {
    ($(#[$m:meta])* $name:ident = $subtype:literal { $($body:tt)* }) => {
        wire_struct! {
            $(#[$m])*
            pub struct $name tags { "type" = "system", "subtype" = $subtype } {
                $($body)*
                /// The session id.
                opt session_id: String = "session_id",
                /// The message's uuid.
                opt uuid: String = "uuid",
            }
        }
    };
}

system_event! {
    /// `system/control_request_progress`: a control request (say
    /// `generate_session_title`) is being worked on.
    ControlRequestProgress = "control_request_progress" {
        /// The control request's id.
        opt request_id: String = "request_id",
        /// `started` or `api_retry`.
        opt status: String = "status",
        /// Retry attempt.
        opt attempt: u64 = "attempt",
        /// Maximum retries.
        opt max_retries: u64 = "max_retries",
        /// Delay before the retry.
        opt retry_delay_ms: u64 = "retry_delay_ms",
        /// HTTP status of the failure (`null` when none: `None`).
        opt error_status: u64 = "error_status",
    }
}

system_event! {
    /// `system/model_refusal_fallback`: the model refused and the CLI
    /// switched to a fallback model.
    ModelRefusalFallback = "model_refusal_fallback" {
        /// `refusal`.
        opt trigger: String = "trigger",
        /// `retry`, `revert` or `sticky`.
        opt direction: String = "direction",
        /// `session` or `local`.
        opt scope: String = "scope",
        /// The model that refused.
        opt original_model: String = "original_model",
        /// The model that answers instead.
        opt fallback_model: String = "fallback_model",
        /// The API request id.
        opt request_id: String = "request_id",
        /// The refusal category.
        opt api_refusal_category: String = "api_refusal_category",
        /// The refusal explanation.
        opt api_refusal_explanation: String = "api_refusal_explanation",
        /// Messages taken back.
        opt retracted_message_uuids: Vec<String> = "retracted_message_uuids",
        /// The user message that was refused.
        opt refused_user_message_uuid: String = "refused_user_message_uuid",
        /// Text for the user.
        opt content: String = "content",
    }
}

system_event! {
    /// `system/model_refusal_no_fallback`: the model refused; no fallback.
    ModelRefusalNoFallback = "model_refusal_no_fallback" {
        /// The model that refused.
        opt original_model: String = "original_model",
        /// The API request id.
        opt request_id: String = "request_id",
        /// The refusal category.
        opt api_refusal_category: String = "api_refusal_category",
        /// The refusal explanation.
        opt api_refusal_explanation: String = "api_refusal_explanation",
        /// The user message that was refused.
        opt refused_user_message_uuid: String = "refused_user_message_uuid",
        /// Text for the user.
        opt content: String = "content",
    }
}

system_event! {
    /// `system/local_command_output`: output of a local slash command
    /// (`/cost`, `/context`, …).
    LocalCommandOutput = "local_command_output" {
        /// The output.
        opt content: String = "content",
    }
}

system_event! {
    /// `system/plugin_install`: plugin installation progress.
    PluginInstall = "plugin_install" {
        /// `started`, `installed`, `failed` or `completed`.
        opt status: String = "status",
        /// The plugin.
        opt name: String = "name",
        /// Why it failed.
        opt error: String = "error",
    }
}

system_event! {
    /// `system/worker_shutting_down`.
    WorkerShuttingDown = "worker_shutting_down" {
        /// Why.
        opt reason: String = "reason",
    }
}

system_event! {
    /// `system/commands_changed`: the slash commands available now.
    CommandsChanged = "commands_changed" {
        /// The commands.
        opt commands: Vec<SlashCommand> = "commands",
    }
}

wire_struct! {
    /// A file of `files_persisted`.
    pub struct PersistedFile {
        /// The file's name.
        opt filename: String = "filename",
        /// Its id in the Files API.
        opt file_id: String = "file_id",
    }
}

wire_struct! {
    /// A file of `files_persisted` that failed.
    pub struct FileFailure {
        /// The file's name.
        opt filename: String = "filename",
        /// Why.
        opt error: String = "error",
    }
}

system_event! {
    /// `system/files_persisted`: files were uploaded to the Files API.
    FilesPersisted = "files_persisted" {
        /// Uploaded.
        opt files: Vec<PersistedFile> = "files",
        /// Failed.
        opt failed: Vec<FileFailure> = "failed",
        /// When (ISO 8601).
        opt processed_at: String = "processed_at",
    }
}

wire_struct! {
    /// A memory of `memory_recall`.
    pub struct RecalledMemory {
        /// The memory file.
        opt path: String = "path",
        /// `personal`, `team` or `organization`.
        opt scope: String = "scope",
        /// Its content.
        opt content: String = "content",
    }
}

system_event! {
    /// `system/memory_recall`: memories were recalled into the context.
    MemoryRecall = "memory_recall" {
        /// `select` or `synthesize`.
        opt mode: String = "mode",
        /// The memories.
        opt memories: Vec<RecalledMemory> = "memories",
    }
}

system_event! {
    /// `system/elicitation_complete`: an MCP server's URL elicitation
    /// finished.
    ElicitationComplete = "elicitation_complete" {
        /// The server.
        opt mcp_server_name: String = "mcp_server_name",
        /// The elicitation.
        opt elicitation_id: String = "elicitation_id",
    }
}

system_event! {
    /// `system/mirror_error`: writing to a session store failed. The
    /// official SDKs make this themselves (this SDK has no session store);
    /// typed so that a transcript holding one decodes.
    MirrorError = "mirror_error" {
        /// What failed.
        opt error: String = "error",
        /// `{projectKey, sessionId, subpath?}`.
        opt key: Value = "key",
    }
}

system_event! {
    /// `system/session_writes_lost`: the transcript could not be written
    /// (disk full, quota).
    SessionWritesLost = "session_writes_lost" {
        /// `ENOSPC` or `EDQUOT`.
        opt error_code: String = "error_code",
        /// What was lost: `transcript`, `global_config`.
        opt lost: Vec<String> = "lost",
        /// Sessions whose transcripts lost writes.
        opt transcript_session_ids: Vec<String> = "transcript_session_ids",
    }
}

system_event! {
    /// `system/session_title_changed`: the session's title changed
    /// (`initialize.title`, a hook's `sessionTitle`, a rename).
    SessionTitleChanged = "session_title_changed" {
        /// The new title.
        opt title: String = "title",
    }
}
