//! `claude_code_agent::sessions` on session files the real CLI (2.1.332) wrote,
//! compared field by field with what the official Python SDK (0.2.189) and
//! TypeScript SDK (0.3.332) read from the same files and did to them
//! (`tests/fixtures/sessions/`, see its README).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use claude_code_agent::sessions::{
    ForkOptions, MessageType, SessionError, SessionInfo, SessionOptions, archive_session,
    fork_session, list_sessions, list_subagents, rename_session, session_info, session_messages,
    subagent_messages, tag_session, unarchive_session,
};
use serde_json::{Value, json};

const DIR: &str = "/tmp/survey-sessions/my.project dir";
pub(crate) const SID: &str = "76cda3b6-e892-4d04-b040-468737ecb31f";
pub(crate) const OTHER: &str = "1aca9c5d-e476-4d16-9832-dadf44da1f21";
pub(crate) const AGENT: &str = "ab49f83965683eb8b";
const PROJECT: &str = "-tmp-survey-sessions-my-project-dir";

/// The files' modification times, in nanoseconds since the epoch: the
/// recorded milliseconds plus a fraction that tells rounding down (Python)
/// from rounding to the nearest (TypeScript), as the recorded outputs do.
const MTIMES_NS: [(&str, u64); 2] = [
    (SID, 1_796_137_208_768_400_000),
    (OTHER, 1_796_137_205_651_600_000),
];

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sessions")
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A fresh copy of the fixture as a CLI configuration folder, the file
/// times set as recorded; and options that read it for the project.
pub(crate) fn config() -> (tempfile::TempDir, SessionOptions) {
    let config = tempfile::tempdir().unwrap();
    copy_tree(&fixture().join("projects"), &config.path().join("projects"));
    for (id, ns) in MTIMES_NS {
        let path = config.path().join(format!("projects/{PROJECT}/{id}.jsonl"));
        let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
        file.set_modified(UNIX_EPOCH + Duration::from_nanos(ns))
            .unwrap();
    }
    let options = SessionOptions::new().config_dir(config.path()).dir(DIR);
    (config, options)
}

/// The recorded output of one SDK: label → the JSON values after it.
fn recorded(file: &str) -> HashMap<String, Vec<Value>> {
    let text = std::fs::read_to_string(fixture().join(file)).unwrap();
    let mut out = HashMap::new();
    for line in text.lines() {
        let at = line.find(['[', '{']).expect("a label and JSON");
        let (label, json) = (line[..at].trim().to_owned(), line[at..].replace('\'', "\""));
        let values: Vec<Value> = serde_json::Deserializer::from_str(&json)
            .into_iter::<Value>()
            .map(Result::unwrap)
            .collect();
        out.insert(label, values);
    }
    out
}

fn py(label: &str) -> Value {
    recorded("py-sdk-output.txt")
        .remove(label)
        .unwrap_or_else(|| panic!("no {label}"))
        .remove(0)
}

fn ts(label: &str) -> Vec<Value> {
    recorded("ts-sdk-output.txt")
        .remove(label)
        .unwrap_or_else(|| panic!("no {label}"))
}

/// A `SessionInfo` in the TypeScript SDK's shape (camelCase, no nulls),
/// with `lastModified` rounded to the nearest millisecond as it does.
fn ts_shape(info: &SessionInfo) -> Value {
    let mut v = json!({
        "sessionId": info.session_id,
        "summary": info.summary,
        "lastModified": ts_mtime(&info.session_id).unwrap_or(info.last_modified),
        "fileSize": info.file_size,
        "customTitle": info.custom_title,
        "firstPrompt": info.first_prompt,
        "gitBranch": info.git_branch,
        "cwd": info.cwd,
        "tag": info.tag,
        "createdAt": info.created_at,
        "archived": info.archived,
    });
    v.as_object_mut().unwrap().retain(|_, v| !v.is_null());
    v
}

fn ts_mtime(id: &str) -> Option<i64> {
    MTIMES_NS
        .iter()
        .find(|(i, _)| *i == id)
        .map(|(_, ns)| ((ns + 500_000) / 1_000_000) as i64)
}

fn without(mut v: Value, keys: &[&str]) -> Value {
    for k in keys {
        v.as_object_mut().unwrap().remove(*k);
    }
    v
}

#[test]
fn listing_and_info_equal_both_sdks() {
    let (_config, options) = config();
    let listed = list_sessions(&options).unwrap();
    assert_eq!(
        serde_json::to_value(&listed).unwrap(),
        py("list_sessions(dir)")
    );
    let ts_listed: Vec<Value> = listed.iter().map(ts_shape).collect();
    assert_eq!(Value::Array(ts_listed), ts("listSessions(dir)")[0]);
    // the Python SDK rounds the time down, as this SDK does
    assert_eq!(listed[1].last_modified, 1_796_137_205_651);

    let info = session_info(SID, &options).unwrap().unwrap();
    assert_eq!(serde_json::to_value(&info).unwrap(), py("get_session_info"));
    assert_eq!(ts_shape(&info), ts("getSessionInfo")[0]);

    // both sessions were run by a program (`claude -p` and stream-json)
    let hidden = list_sessions(&options.clone().include_programmatic(false)).unwrap();
    assert_eq!(
        serde_json::to_value(hidden).unwrap(),
        ts("listSessions(includeProgrammatic:false)")[0]
    );

    // without a directory: every project; paging
    let all = SessionOptions::new().config_dir(options.config_dir.clone().unwrap());
    assert_eq!(list_sessions(&all).unwrap(), listed);
    let page = list_sessions(&all.clone().offset(1).limit(5)).unwrap();
    assert_eq!(page, listed[1..]);
    assert_eq!(
        session_info(OTHER, &all).unwrap().as_ref(),
        Some(&listed[1])
    );
    // a subagent transcript is not a session; an unknown id is none
    assert_eq!(
        session_info("00000000-0000-4000-8000-000000000000", &options).unwrap(),
        None
    );
}

#[test]
fn messages_equal_both_sdks() {
    let (_config, options) = config();
    let messages = session_messages(SID, &options).unwrap();
    let ours: Vec<Value> = messages
        .iter()
        .map(|m| json!([m.kind, m.uuid, m.session_id, m.parent_tool_use_id]))
        .collect();
    assert_eq!(Value::Array(ours), py("get_session_messages"));
    let short: Vec<Value> = messages
        .iter()
        .map(|m| json!([m.kind, &m.uuid[..8], null]))
        .collect();
    // the label holds the count: 11
    assert_eq!(Value::Array(short), ts("getSessionMessages n= 11")[0]);
    let with_system =
        session_messages(SID, &options.clone().include_system_messages(true)).unwrap();
    let short: Vec<Value> = with_system
        .iter()
        .map(|m| json!([m.kind, &m.uuid[..8]]))
        .collect();
    assert_eq!(
        Value::Array(short),
        ts("getSessionMessages(includeSystemMessages) n= 11")[0]
    );

    // lossless: the raw message and every other field of the line
    assert_eq!(messages[0].kind, MessageType::User);
    assert_eq!(messages[0].text(), "add 2 and 3 then ask a subagent");
    assert_eq!(messages[0].timestamp(), Some("2026-12-01T15:00:07.241Z"));
    assert_eq!(messages[2].content_blocks()[0]["name"], "mcp__calc__add");
    assert_eq!(
        messages[2].message["id"], messages[1].message["id"],
        "one API message, one entry per block"
    );
    assert!(!messages[3].fields["toolUseResult"].is_null());
    assert_eq!(messages[3].parent_uuid(), Some(messages[2].uuid.as_str()));

    let paged = session_messages(SID, &options.clone().offset(2).limit(3)).unwrap();
    assert_eq!(paged, messages[2..5]);
}

#[test]
fn subagents_equal_both_sdks() {
    let (_config, options) = config();
    let agents = list_subagents(SID, &options).unwrap();
    assert_eq!(serde_json::to_value(&agents).unwrap(), py("list_subagents"));
    assert_eq!(
        serde_json::to_value(&agents).unwrap(),
        ts("listSubagents")[0]
    );
    let messages = subagent_messages(SID, AGENT, &options).unwrap();
    let ours: Vec<Value> = messages
        .iter()
        .map(|m| json!([m.kind, m.uuid, m.parent_tool_use_id, m.parent_agent_id]))
        .collect();
    assert_eq!(
        Value::Array(ours),
        py(&format!("get_subagent_messages {AGENT}"))
    );
    assert_eq!(messages[0].text(), "Say sub hi");
    assert_eq!(
        list_subagents(OTHER, &options).unwrap(),
        Vec::<String>::new()
    );
    assert!(matches!(
        subagent_messages(SID, "nope", &options),
        Err(SessionError::SubagentNotFound { .. })
    ));
}

#[test]
fn python_sdk_sequence_rename_tag_fork() {
    let (config, options) = config();
    let before = session_messages(SID, &options).unwrap();
    rename_session(SID, "  My title  ", &options).unwrap();
    tag_session(SID, Some("exp\u{200b}1"), &options).unwrap();
    let info = session_info(SID, &options).unwrap().unwrap();
    assert_eq!(
        without(serde_json::to_value(&info).unwrap(), &["last_modified"]),
        without(py("after rename+tag"), &["last_modified"]),
        "the same lines appended: the same size"
    );
    let tail = std::fs::read_to_string(
        config
            .path()
            .join(format!("projects/{PROJECT}/{SID}.jsonl")),
    )
    .unwrap();
    assert!(tail.ends_with(&format!(
        "{{\"type\":\"custom-title\",\"customTitle\":\"My title\",\"sessionId\":\"{SID}\"}}\n{{\"type\":\"tag\",\"tag\":\"exp1\",\"sessionId\":\"{SID}\"}}\n"
    )));

    let fork = fork_session(
        SID,
        &ForkOptions::new().up_to_message(&before[2].uuid),
        &options,
    )
    .unwrap();
    let info = session_info(&fork, &options).unwrap().unwrap();
    // the Python SDK writes JSON with non-ASCII escaped (\uXXXX) and a
    // `logicalParentUuid: null` on every line, so its file is larger
    assert_eq!(
        without(
            serde_json::to_value(&info).unwrap(),
            &["session_id", "last_modified", "file_size"]
        ),
        without(
            py("fork info"),
            &["session_id", "last_modified", "file_size"]
        ),
    );
    let forked = session_messages(&fork, &options).unwrap();
    let kinds: Vec<Value> = forked.iter().map(|m| json!(m.kind)).collect();
    let py_kinds: Vec<Value> = py("fork msgs")
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m[0].clone())
        .collect();
    assert_eq!(kinds, py_kinds);
    for (copy, source) in forked.iter().zip(&before) {
        assert_ne!(copy.uuid, source.uuid, "fresh ids");
        assert_eq!(copy.session_id, fork);
        assert_eq!(copy.message, source.message);
        assert_eq!(
            copy.fields["forkedFrom"],
            json!({"sessionId": SID, "messageUuid": source.uuid})
        );
    }
    // Every copied line links to the copy of its source's parent.
    let fork_file = config
        .path()
        .join(format!("projects/{PROJECT}/{fork}.jsonl"));
    let lines: Vec<Value> = std::fs::read_to_string(&fork_file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let source: HashMap<String, Value> = std::fs::read_to_string(
        config
            .path()
            .join(format!("projects/{PROJECT}/{SID}.jsonl")),
    )
    .unwrap()
    .lines()
    .filter_map(|l| serde_json::from_str::<Value>(l).ok())
    .filter_map(|v| Some((v["uuid"].as_str()?.to_owned(), v)))
    .collect();
    let copy_of: HashMap<&str, &str> = lines
        .iter()
        .filter_map(|l| {
            Some((
                l["forkedFrom"]["messageUuid"].as_str()?,
                l["uuid"].as_str()?,
            ))
        })
        .collect();
    assert_eq!(
        copy_of.len(),
        11,
        "the user entry, 8 attachments, 2 assistant entries"
    );
    for line in lines.iter().filter(|l| l.get("forkedFrom").is_some()) {
        let original = &source[line["forkedFrom"]["messageUuid"].as_str().unwrap()];
        let parent = original["parentUuid"].as_str().map(|p| copy_of[p]);
        assert_eq!(line["parentUuid"].as_str(), parent);
        assert_eq!(line["sessionId"], json!(fork));
        assert_eq!(line["message"], original["message"]);
    }
    assert_eq!(lines.last().unwrap()["customTitle"], "My title (fork)");
    let mode = std::fs::metadata(
        config
            .path()
            .join(format!("projects/{PROJECT}/{fork}.jsonl")),
    )
    .unwrap();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&mode.permissions()) & 0o777,
        0o600
    );
    assert!(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64
            - info.last_modified
            < 60_000
    );
}

#[test]
fn typescript_sdk_sequence_rename_tag_archive_fork() {
    let (_config, options) = config();
    let before = session_messages(SID, &options).unwrap();
    rename_session(SID, "  TS title ", &options).unwrap();
    tag_session(SID, Some("ts-tag"), &options).unwrap();
    archive_session(SID, &options).unwrap();
    let info = session_info(SID, &options).unwrap().unwrap();
    assert_eq!(
        without(ts_shape(&info), &["lastModified"]),
        without(ts("after rename/tag/archive")[0].clone(), &["lastModified"])
    );
    unarchive_session(SID, &options).unwrap();
    let info = session_info(SID, &options).unwrap().unwrap();
    assert_eq!(
        without(ts_shape(&info), &["lastModified"]),
        without(ts("after unarchive")[0].clone(), &["lastModified"])
    );
    assert_eq!(list_sessions(&options).unwrap()[0].archived, Some(false));

    let fork = fork_session(
        SID,
        &ForkOptions::new().up_to_message(&before[2].uuid),
        &options,
    )
    .unwrap();
    let info = session_info(&fork, &options).unwrap().unwrap();
    // The TypeScript SDK's fork also carries the `atis-latch` and
    // `tools-used` entries and marks assistant entries with
    // `requestSessionId`, so its file is larger (34587 bytes; this one's
    // equals the Python SDK's but for its escaping of non-ASCII characters
    // and a `logicalParentUuid: null` on every line).
    let recorded = ts("fork");
    assert_eq!(recorded[0]["sessionId"], recorded[1]["sessionId"]);
    assert_eq!(
        without(ts_shape(&info), &["sessionId", "lastModified", "fileSize"]),
        without(
            recorded[1].clone(),
            &["sessionId", "lastModified", "fileSize"]
        ),
    );
}
