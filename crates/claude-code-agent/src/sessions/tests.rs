//! Unit tests of the sessions module: folder names, the conversation chain
//! (branches, parallel tool use), paging, and the files written.

use serde_json::{Value, json};

use super::chain::{build_chain, is_visible, parse_entries};
use super::paths::{is_uuid, simple_hash, without_verbatim_prefix};
use super::*;

#[test]
fn project_folders_are_named_as_the_cli_names_them() {
    assert_eq!(
        sanitize_path("/tmp/survey-sessions/my.project dir"),
        "-tmp-survey-sessions-my-project-dir"
    );
    assert_eq!(sanitize_path("/home/Zoë/a_b"), "-home-Zo--a-b");
    // UTF-16 units: a character beyond the BMP is two
    assert_eq!(sanitize_path("/x😀"), "-x--");
    assert_eq!(sanitize_path(&"a".repeat(200)), "a".repeat(200));
}

#[test]
fn windows_working_directories_are_named_without_the_verbatim_prefix() {
    // What `fs::canonicalize` gives on Windows, as Node's `realpath` spells it.
    let plain = |p: &str| without_verbatim_prefix(p.to_owned());
    assert_eq!(plain(r"\\?\C:\Users\me\proj"), r"C:\Users\me\proj");
    assert_eq!(plain(r"\\?\UNC\server\share\proj"), r"\\server\share\proj");
    // No plain spelling: kept.
    assert_eq!(plain(r"\\?\Volume{x}\proj"), r"\\?\Volume{x}\proj");
    assert_eq!(plain("/home/me/proj"), "/home/me/proj");
    // The CLI's folder for a Windows directory.
    assert_eq!(
        sanitize_path(&plain(r"\\?\C:\Users\me\proj")),
        "C--Users-me-proj"
    );
}

#[test]
fn long_folder_names_are_cut_and_hashed() {
    // Values of the JavaScript expression (and of both SDKs' code):
    // [...s].reduce((h, c) => (h << 5) - h + c.charCodeAt(0) | 0, 0), abs, base 36.
    assert_eq!(simple_hash(""), "0");
    assert_eq!(simple_hash("a"), "2p");
    assert_eq!(simple_hash("hello"), "1n1e4y");
    let long = format!("/{}", "d".repeat(250));
    let name = sanitize_path(&long);
    assert_eq!(name.len(), 201 + simple_hash(&long).len());
    assert!(name.starts_with(&format!("-{}", "d".repeat(199))));
    assert_eq!(&name[200..201], "-");
    assert_eq!(name[201..], simple_hash(&long));
}

#[test]
fn a_long_project_folder_is_found_by_its_prefix() {
    let config = tempfile::tempdir().unwrap();
    let long = format!("/{}", "p".repeat(230));
    let prefix = &sanitize_path(&long)[..200];
    // the CLI's hash suffix differs from the SDKs' (it uses another hash)
    let folder = config.path().join("projects").join(format!("{prefix}-zzz"));
    std::fs::create_dir_all(&folder).unwrap();
    let id = "00000000-0000-4000-8000-000000000001";
    std::fs::write(folder.join(format!("{id}.jsonl")), line(json!({"type":"user","uuid":"u1","parentUuid":null,"sessionId":id,"message":{"role":"user","content":"hi"}}))).unwrap();
    let options = SessionOptions::new()
        .config_dir(config.path())
        .dir(&long)
        .include_worktrees(false);
    let listed = list_sessions(&options).unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        listed[0].cwd.as_deref(),
        Some(long.as_str()),
        "the directory asked for, when entries carry no cwd"
    );
    assert_eq!(session_messages(id, &options).unwrap().len(), 1);
}

#[test]
fn ids_must_be_uuids() {
    assert!(is_uuid("76cda3b6-e892-4d04-b040-468737ecb31f"));
    assert!(is_uuid("76CDA3B6-E892-4D04-B040-468737ECB31F"));
    for bad in [
        "",
        "76cda3b6e8924d04b040468737ecb31f",
        "76cda3b6-e892-4d04-b040-468737ecb31g",
        "../../etc/passwd",
    ] {
        assert!(!is_uuid(bad), "{bad}");
    }
    let options = SessionOptions::new().config_dir("/nonexistent");
    assert!(matches!(
        session_messages("../x", &options),
        Err(SessionError::InvalidId { .. })
    ));
    assert!(matches!(
        rename_session("x", "t", &options),
        Err(SessionError::InvalidId { .. })
    ));
}

fn line(v: Value) -> String {
    format!("{v}\n")
}

fn user(uuid: &str, parent: Option<&str>, content: Value) -> Value {
    json!({"type": "user", "uuid": uuid, "parentUuid": parent, "sessionId": "s", "timestamp": format!("2026-01-01T00:00:{:02}.000Z", ts(uuid)), "message": {"role": "user", "content": content}})
}

fn assistant(uuid: &str, parent: Option<&str>, message_id: &str, block: Value) -> Value {
    json!({"type": "assistant", "uuid": uuid, "parentUuid": parent, "sessionId": "s", "timestamp": format!("2026-01-01T00:00:{:02}.000Z", ts(uuid)), "message": {"id": message_id, "role": "assistant", "content": [block]}})
}

/// Timestamps follow the digits in the test uuids (`a3` → second 3).
fn ts(uuid: &str) -> u32 {
    uuid.trim_start_matches(|c: char| !c.is_ascii_digit())
        .parse()
        .unwrap_or(0)
}

fn tool_use(id: &str) -> Value {
    json!({"type": "tool_use", "id": id, "name": "t", "input": {}})
}

fn tool_result(id: &str) -> Value {
    json!([{"type": "tool_result", "tool_use_id": id, "content": "r"}])
}

fn chain_uuids(lines: &[Value]) -> Vec<String> {
    let text: String = lines.iter().map(|v| line(v.clone())).collect();
    let entries = parse_entries(&text);
    build_chain(&entries)
        .into_iter()
        .map(|i| &entries[i])
        .filter(|e| is_visible(e, false))
        .map(|e| e["uuid"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn the_chain_follows_the_latest_main_branch() {
    let lines = [
        user("u1", None, json!("first")),
        assistant(
            "a2",
            Some("u1"),
            "m1",
            json!({"type": "text", "text": "one"}),
        ),
        // a rewind: a second answer to u1's follow-up on another branch
        user("u3", Some("a2"), json!("old branch")),
        assistant(
            "a4",
            Some("u3"),
            "m2",
            json!({"type": "text", "text": "old"}),
        ),
        user("u5", Some("a2"), json!("new branch")),
        assistant(
            "a6",
            Some("u5"),
            "m3",
            json!({"type": "text", "text": "new"}),
        ),
        // a sidechain and a meta entry written later do not become the leaf
        json!({"type": "user", "uuid": "s7", "parentUuid": "a6", "isSidechain": true, "message": {"content": "side"}}),
        json!({"type": "user", "uuid": "m8", "parentUuid": "a4", "isMeta": true, "message": {"content": "meta"}}),
        // a trailing attachment walks back to its user/assistant ancestor
        json!({"type": "attachment", "uuid": "t9", "parentUuid": "a6"}),
        json!({"type": "attachment", "uuid": "t10", "parentUuid": "t9"}),
        "not json".into(),
        json!({"type": "last-prompt", "lastPrompt": "x"}),
    ];
    assert_eq!(chain_uuids(&lines), ["u1", "a2", "u5", "a6"]);
}

#[test]
fn parallel_tool_calls_and_results_are_put_back() {
    // One response (m1) with three parallel calls: the CLI writes one entry
    // per block, chained; each result hangs off its own call's entry, and
    // the next turn continues from the last result only.
    let lines = [
        user("u1", None, json!("go")),
        assistant("a2", Some("u1"), "m1", tool_use("c1")),
        assistant("a3", Some("a2"), "m1", tool_use("c2")),
        assistant("a4", Some("a3"), "m1", tool_use("c3")),
        user("r5", Some("a2"), tool_result("c1")),
        user("r6", Some("a3"), tool_result("c2")),
        user("r7", Some("a4"), tool_result("c3")),
        assistant(
            "a8",
            Some("r7"),
            "m2",
            json!({"type": "text", "text": "done"}),
        ),
    ];
    // the walk alone: u1 a2 a3 a4 r7 a8; r5, r6 are put back after a4
    assert_eq!(
        chain_uuids(&lines),
        ["u1", "a2", "a3", "a4", "r5", "r6", "r7", "a8"]
    );
}

#[test]
fn parallel_siblings_off_the_chain_and_stray_results() {
    // The next turn continued from the first call's result (r4), so the
    // second call (a3) is off the chain too. r6 hangs off u1 but names a3 as
    // its source and answers c2, a call nothing answered: it is put back. r9
    // answers c1 again (r4 did, on the chain): it is not.
    let mut r6 = user("r6", Some("u1"), tool_result("c2"));
    r6["sourceToolAssistantUUID"] = json!("a3");
    let mut r9 = user("r9", Some("u1"), tool_result("c1"));
    r9["sourceToolAssistantUUID"] = json!("a2");
    let lines = [
        user("u1", None, json!("go")),
        assistant("a2", Some("u1"), "m1", tool_use("c1")),
        assistant("a3", Some("a2"), "m1", tool_use("c2")),
        user("r4", Some("a2"), tool_result("c1")),
        r6,
        r9,
        assistant(
            "a7",
            Some("r4"),
            "m2",
            json!({"type": "text", "text": "done"}),
        ),
    ];
    // The official Python SDK (0.2.189) gives the same on these lines.
    assert_eq!(chain_uuids(&lines), ["u1", "a2", "a3", "r6", "r4", "a7"]);
}

#[test]
fn a_stray_result_is_placed_by_the_call_it_answers_unless_ambiguous() {
    let stray = user("r5", Some("u1"), tool_result("c9"));
    let lines = [
        user("u1", None, json!("go")),
        assistant("a2", Some("u1"), "m1", tool_use("c1")),
        assistant("a3", Some("a2"), "m1", tool_use("c9")),
        user("r4", Some("a2"), tool_result("c1")),
        stray,
        assistant("a6", Some("r4"), "m3", json!({"type": "text", "text": "x"})),
    ];
    assert_eq!(chain_uuids(&lines), ["u1", "a2", "a3", "r5", "r4", "a6"]);
    // the same call id in two responses: the result is placed by nothing
    let stray = user("r5", Some("u1"), tool_result("dup"));
    let lines = [
        user("u1", None, json!("go")),
        assistant("a2", Some("u1"), "m1", tool_use("dup")),
        assistant("a3", Some("a2"), "m2", tool_use("dup")),
        user("r4", Some("a3"), tool_result("dup")),
        stray,
        assistant("a6", Some("r4"), "m3", json!({"type": "text", "text": "x"})),
    ];
    assert_eq!(chain_uuids(&lines), ["u1", "a2", "a3", "r4", "a6"]);
}

#[test]
fn cycles_end_the_walk() {
    let lines = [
        user("u1", Some("a2"), json!("loop")),
        assistant("a2", Some("u1"), "m1", json!({"type": "text", "text": "x"})),
        user("u3", Some("a2"), json!("leaf")),
    ];
    assert_eq!(chain_uuids(&lines), ["u1", "a2", "u3"]);
}

fn git(dir: &std::path::Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A session file with one prompt in the project folder of `cwd`.
fn session_in(config: &std::path::Path, cwd: &std::path::Path, id: &str, prompt: &str) {
    let cwd = std::fs::canonicalize(cwd).unwrap();
    let folder = config
        .join("projects")
        .join(sanitize_path(cwd.to_str().unwrap()));
    std::fs::create_dir_all(&folder).unwrap();
    let entry = json!({"type": "user", "uuid": id, "parentUuid": null, "sessionId": id, "cwd": cwd, "message": {"role": "user", "content": prompt}});
    std::fs::write(folder.join(format!("{id}.jsonl")), line(entry)).unwrap();
}

#[test]
fn the_sessions_of_every_worktree_of_a_repository() {
    let root = tempfile::tempdir().unwrap();
    let (repo, other, config) = (
        root.path().join("repo"),
        root.path().join("repo-wt"),
        root.path().join("config"),
    );
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    git(
        &repo,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "x",
        ],
    );
    git(
        &repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "side",
            other.to_str().unwrap(),
        ],
    );
    let (a, b) = (
        "00000000-0000-4000-8000-00000000000a",
        "00000000-0000-4000-8000-00000000000b",
    );
    session_in(&config, &repo, a, "in the main worktree");
    session_in(&config, &other, b, "in the other worktree");
    // a folder whose name only starts like the repository's is not one of its worktrees
    std::fs::create_dir_all(root.path().join("repo-wt2")).unwrap();
    session_in(
        &config,
        &root.path().join("repo-wt2"),
        "00000000-0000-4000-8000-00000000000c",
        "elsewhere",
    );

    let options = SessionOptions::new().config_dir(&config).dir(&repo);
    let mut ids: Vec<String> = list_sessions(&options)
        .unwrap()
        .into_iter()
        .map(|s| s.session_id)
        .collect();
    ids.sort();
    assert_eq!(ids, [a, b]);
    let own: Vec<String> = list_sessions(&options.clone().include_worktrees(false))
        .unwrap()
        .into_iter()
        .map(|s| s.session_id)
        .collect();
    assert_eq!(own, [a]);
    // one session is found in another worktree's folder too
    assert_eq!(
        session_messages(b, &options).unwrap()[0].text(),
        "in the other worktree"
    );
    assert!(matches!(
        session_messages(b, &options.clone().include_worktrees(false)),
        Err(SessionError::NotFound { .. })
    ));
    assert_eq!(
        list_sessions(&SessionOptions::new().config_dir(&config))
            .unwrap()
            .len(),
        3
    );
}
