//! Session stores: one contract, checked against every store the SDK ships
//! (in memory, a folder, Redis with the `redis` feature and a
//! `redis-server`), and the sessions API on each, against the same API on
//! the files the real CLI wrote (`tests/fixtures/sessions/`, imported into
//! the store).

use std::collections::BTreeSet;
use std::sync::Arc;

use claude_code_agent::sessions::{
    DirSessionStore, ForkOptions, InMemorySessionStore, SessionKey, SessionOptions, SessionStore,
    delete_session_in_store, fork_session_in_store, import_session_to_store, list_sessions,
    list_sessions_in_store, list_subagents, list_subagents_in_store, rename_session_in_store,
    session_info, session_info_in_store, session_messages, session_messages_in_store,
    subagent_messages, subagent_messages_in_store, tag_session_in_store,
};
use serde_json::{Value, json};

use crate::sessions_fixture::{AGENT, OTHER, SID, config};

const A: &str = "0b0f6c2e-3f43-4d43-9f5b-0d4bb1a6a8f3";
const B: &str = "7c1d1a52-52a8-4c0b-9d7e-51f5e0b1c2d4";
const C: &str = "c3b1a1e2-0d4f-4e51-8a3b-2f6e9d7c5b10";

fn entry(n: usize) -> Value {
    json!({"type": "user", "uuid": format!("u-{n}"), "n": n,
           "message": {"role": "user", "content": [{"type": "text", "text": format!("é ✓ 🎉 line {n}\n\"quoted\"")}]}})
}

/// What every store must do: keep each key's entries in the order
/// appended and equal as JSON, keep keys apart, list sessions (main
/// transcripts only, newer later) and subpaths, apply concurrent appends
/// whole, delete a session with its subpaths, and refuse keys that could
/// escape it.
async fn keeps_the_contract(store: Arc<dyn SessionStore>) {
    let project = "-srv-app";
    let a = SessionKey::new(project, A);
    assert_eq!(store.load(&a).await.unwrap(), None, "never written");

    store.append(&a, &[entry(1), entry(2)]).await.unwrap();
    store.append(&a, &[entry(3)]).await.unwrap();
    assert_eq!(
        store.load(&a).await.unwrap(),
        Some(vec![entry(1), entry(2), entry(3)])
    );

    let sub = a.clone().with_subpath("subagents/agent-x1");
    store.append(&sub, &[entry(10)]).await.unwrap();
    assert_eq!(store.load(&sub).await.unwrap(), Some(vec![entry(10)]));
    assert_eq!(
        store.load(&a).await.unwrap().unwrap().len(),
        3,
        "kept apart"
    );
    assert_eq!(
        store.list_subkeys(project, A).await.unwrap(),
        ["subagents/agent-x1"]
    );

    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let b = SessionKey::new(project, B);
    store.append(&b, &[entry(20)]).await.unwrap();
    let other = SessionKey::new("-srv-other", A);
    store.append(&other, &[entry(30)]).await.unwrap();
    let mut listed = store.list_sessions(project).await.unwrap();
    listed.sort_by(|x, y| x.session_id.cmp(&y.session_id));
    let ids: Vec<&str> = listed.iter().map(|s| s.session_id.as_str()).collect();
    assert_eq!(ids, [A, B], "main transcripts of the project only");
    let mtime = |id: &str| listed.iter().find(|s| s.session_id == id).unwrap().mtime;
    assert!(mtime(B) >= mtime(A), "{listed:?}");
    assert!(mtime(A) > 1_700_000_000_000, "milliseconds since the epoch");
    assert_eq!(store.load(&other).await.unwrap(), Some(vec![entry(30)]));

    // Concurrent appends to one key: every batch kept, whole and in order.
    let c = SessionKey::new(project, C);
    let tasks: Vec<_> = (0..6)
        .map(|t| {
            let (store, c) = (store.clone(), c.clone());
            tokio::spawn(async move {
                for batch in 0..10 {
                    let entries: Vec<Value> = (0..3)
                        .map(|i| json!({"type": "user", "t": t, "batch": batch, "i": i}))
                        .collect();
                    store.append(&c, &entries).await.unwrap();
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    let all = store.load(&c).await.unwrap().unwrap();
    assert_eq!(all.len(), 180);
    for chunk in all.chunks(3) {
        let (t, batch) = (&chunk[0]["t"], &chunk[0]["batch"]);
        for (i, e) in chunk.iter().enumerate() {
            assert_eq!(
                (&e["t"], &e["batch"], e["i"].as_u64()),
                (t, batch, Some(i as u64)),
                "{all:?}"
            );
        }
    }
    for t in 0..6 {
        let batches: Vec<u64> = all
            .iter()
            .filter(|e| e["t"] == t && e["i"] == 0)
            .map(|e| e["batch"].as_u64().unwrap())
            .collect();
        assert_eq!(
            batches,
            (0..10).collect::<Vec<_>>(),
            "in the order appended"
        );
    }

    // Deleting a session deletes its subpaths; deleting again is no error.
    store.delete(&a).await.unwrap();
    assert_eq!(store.load(&a).await.unwrap(), None);
    assert_eq!(store.load(&sub).await.unwrap(), None);
    assert!(store.list_subkeys(project, A).await.unwrap().is_empty());
    let left: BTreeSet<String> = store
        .list_sessions(project)
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.session_id)
        .collect();
    assert_eq!(left, BTreeSet::from([B.to_owned(), C.to_owned()]));
    store.delete(&a).await.unwrap();

    for bad in [
        SessionKey::new(project, ".."),
        SessionKey::new("..", A),
        SessionKey::new(project, "a/b"),
        SessionKey::new(project, A).with_subpath("subagents/../../x"),
    ] {
        assert!(store.append(&bad, &[entry(0)]).await.is_err(), "{bad:?}");
        assert!(store.load(&bad).await.is_err(), "{bad:?}");
    }
}

/// The sessions API on a store holds what it holds on the CLI's files.
async fn the_sessions_api_works_on(store: Arc<dyn SessionStore>) {
    let (_config, files) = config();
    for id in [SID, OTHER] {
        import_session_to_store(&store, id, &files).await.unwrap();
    }
    let options = SessionOptions::new().dir(files.dir.clone().unwrap());
    let texts = |m: &[claude_code_agent::sessions::SessionMessage]| {
        m.iter()
            .map(|m| {
                (
                    m.kind,
                    m.uuid.clone(),
                    m.message.clone(),
                    m.parent_tool_use_id.clone(),
                )
            })
            .collect::<Vec<_>>()
    };
    for id in [SID, OTHER] {
        let from_store = session_messages_in_store(&store, id, &options)
            .await
            .unwrap();
        assert!(!from_store.is_empty());
        assert_eq!(
            texts(&from_store),
            texts(&session_messages(id, &files).unwrap())
        );
    }

    let listed = list_sessions_in_store(&store, &options).await.unwrap();
    let shown = |i: &claude_code_agent::sessions::SessionInfo| {
        (
            i.session_id.clone(),
            i.summary.clone(),
            i.first_prompt.clone(),
            i.custom_title.clone(),
            i.git_branch.clone(),
            i.created_at,
        )
    };
    let mut got: Vec<_> = listed.iter().map(shown).collect();
    let mut expected: Vec<_> = list_sessions(&files).unwrap().iter().map(shown).collect();
    got.sort();
    expected.sort();
    assert_eq!(got, expected);

    assert_eq!(
        list_subagents_in_store(&store, SID, &options)
            .await
            .unwrap(),
        list_subagents(SID, &files).unwrap()
    );
    assert_eq!(
        texts(
            &subagent_messages_in_store(&store, SID, AGENT, &options)
                .await
                .unwrap()
        ),
        texts(&subagent_messages(SID, AGENT, &files).unwrap())
    );

    rename_session_in_store(&store, SID, "Moved title", &options)
        .await
        .unwrap();
    tag_session_in_store(&store, SID, Some("moved"), &options)
        .await
        .unwrap();
    let info = session_info_in_store(&store, SID, &options)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(info.custom_title.as_deref(), Some("Moved title"));
    assert_eq!(info.tag.as_deref(), Some("moved"));
    assert_eq!(
        session_info(SID, &files).unwrap().unwrap().custom_title,
        expected_title(&files),
        "the files are left alone"
    );

    let fork = fork_session_in_store(&store, SID, &ForkOptions::new(), &options)
        .await
        .unwrap();
    let forked = session_messages_in_store(&store, &fork, &options)
        .await
        .unwrap();
    let source = session_messages_in_store(&store, SID, &options)
        .await
        .unwrap();
    assert_eq!(
        forked.iter().map(|m| &m.message).collect::<Vec<_>>(),
        source.iter().map(|m| &m.message).collect::<Vec<_>>()
    );
    assert!(forked.iter().all(|m| m.session_id == fork));
    let info = session_info_in_store(&store, &fork, &options)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(info.custom_title.as_deref(), Some("Moved title (fork)"));

    delete_session_in_store(&store, SID, &options)
        .await
        .unwrap();
    assert_eq!(
        session_info_in_store(&store, SID, &options).await.unwrap(),
        None
    );
    assert!(
        list_subagents_in_store(&store, SID, &options)
            .await
            .is_err()
    );
    let ids: BTreeSet<String> = list_sessions_in_store(&store, &options)
        .await
        .unwrap()
        .into_iter()
        .map(|i| i.session_id)
        .collect();
    assert_eq!(ids, BTreeSet::from([OTHER.to_owned(), fork]));
}

fn expected_title(files: &SessionOptions) -> Option<String> {
    list_sessions(files)
        .unwrap()
        .into_iter()
        .find(|i| i.session_id == SID)
        .unwrap()
        .custom_title
}

#[tokio::test]
async fn the_memory_store_keeps_the_contract() {
    keeps_the_contract(Arc::new(InMemorySessionStore::new())).await;
    the_sessions_api_works_on(Arc::new(InMemorySessionStore::new())).await;
}

#[tokio::test]
async fn the_folder_store_keeps_the_contract() {
    let dir = tempfile::tempdir().unwrap();
    keeps_the_contract(Arc::new(DirSessionStore::new(dir.path().join("a")))).await;
    the_sessions_api_works_on(Arc::new(DirSessionStore::new(dir.path().join("b")))).await;
}

#[cfg(feature = "redis")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_redis_store_keeps_the_contract() {
    use claude_code_agent::sessions::RedisSessionStore;
    let Some(redis) =
        crate::support::redis::Redis::start("the_redis_store_keeps_the_contract").await
    else {
        return;
    };
    let store = RedisSessionStore::new(&redis.url()).unwrap();
    keeps_the_contract(Arc::new(store.clone().key_prefix("contract:"))).await;
    the_sessions_api_works_on(Arc::new(store.key_prefix("api:"))).await;
}
