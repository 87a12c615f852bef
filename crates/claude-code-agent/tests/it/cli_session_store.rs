//! Sessions that move between machines: the real CLI, started with a
//! session store (`--session-mirror`), mirrors its transcript into the
//! store; a second worker, with an empty `CLAUDE_CONFIG_DIR` of its own,
//! resumes the session from the store, and the model sees the first turn.
//! A store that is down, or a transcript past its limit, ends the turn
//! with an error that says so.

use crate::cli_sessions::text_of;
use crate::support::*;
use claude_code_agent::sessions::{
    InMemorySessionStore, MessageType, SessionKey, SessionOptions, project_key,
    session_messages_in_store,
};
use claude_code_agent::{Error, Message, query};
use claude_code_agent_testkit::mock_api::RecordedRequest;
use claude_code_agent_testkit::{MockModel, Turn};

const FIRST: &str = "Remember the word avocado.";
const SECOND: &str = "Which word did I ask you to remember?";

/// Answers the second prompt only from what the request carries.
fn model(req: &RecordedRequest) -> Turn {
    let texts: Vec<String> = req.messages().iter().map(text_of).collect();
    if req.last_user_text().unwrap_or_default().contains(SECOND) {
        let remembered = texts.iter().any(|t| t.contains(FIRST));
        return Turn::text(if remembered {
            "You said avocado."
        } else {
            "I was never told."
        });
    }
    Turn::text("Noted.")
}

fn session_of(messages: &[Message]) -> String {
    messages
        .iter()
        .find_map(|m| match m {
            Message::System(s) => s.session_id().map(str::to_owned),
            _ => None,
        })
        .expect("an init message names the session")
}

#[cfg(feature = "redis")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_moves_between_workers_through_redis() {
    use claude_code_agent::sessions::RedisSessionStore;
    let test = "a_conversation_moves_between_workers_through_redis";
    let Some(redis) = crate::support::redis::Redis::start(test).await else {
        return;
    };
    with_timeout(async {
        let h = Harness::start(MockModel::builder().fallback(model)).await;
        let store = RedisSessionStore::new(&redis.url()).unwrap();

        // Worker 1: the first turn, mirrored into Redis.
        let (first, error) = drain(query(FIRST, h.options().session_store(store.clone()))).await;
        assert!(error.is_none(), "{error:?}\n{}", h.stderr_text());
        let result = results(&first).into_iter().next().expect("a result");
        assert_eq!(result.result.as_deref(), Some("Noted."));
        let sid = result.session_id.clone().unwrap();
        let project = project_key(h.env().work_dir());
        let stored = SessionKey::new(project.clone(), sid.clone());
        let kept = claude_code_agent::sessions::SessionStore::load(&store, &stored)
            .await
            .unwrap()
            .expect("the first turn is in the store");
        assert!(kept.iter().any(|e| e["type"] == "user"), "{kept:?}");

        // Worker 2: its own, empty configuration folder; the session comes
        // from Redis.
        let worker2 = tempfile::tempdir().unwrap();
        let options = h
            .options()
            .env("CLAUDE_CONFIG_DIR", worker2.path().to_str().unwrap())
            .session_store(store.clone())
            .resume(sid.clone());
        let (second, error) = drain(query(SECOND, options)).await;
        assert!(error.is_none(), "{error:?}\n{}", h.stderr_text());
        let result = results(&second).into_iter().next().expect("a result");
        assert_eq!(
            result.result.as_deref(),
            Some("You said avocado."),
            "{second:#?}"
        );
        assert_eq!(result.session_id.as_deref(), Some(sid.as_str()));

        // What the model was sent for the second turn holds the first.
        let last = h.mock().last_conversation_request().unwrap();
        let sent: Vec<(String, String)> = last
            .messages()
            .iter()
            .map(|m| (m["role"].as_str().unwrap_or("").to_owned(), text_of(m)))
            .filter(|(_, t)| !t.is_empty())
            .collect();
        let at = |role: &str, text: &str| {
            sent.iter()
                .position(|(r, t)| r == role && t.contains(text))
                .unwrap_or_else(|| panic!("no {role} {text:?} in {sent:#?}"))
        };
        assert!(
            at("user", FIRST) < at("assistant", "Noted.")
                && at("assistant", "Noted.") < at("user", SECOND)
        );
        assert!(
            worker2
                .path()
                .join("projects")
                .join(&project)
                .join(format!("{sid}.jsonl"))
                .is_file(),
            "restored for the CLI of worker 2"
        );

        // The store holds both turns, as the sessions API reads them.
        let options = SessionOptions::new().dir(h.env().work_dir());
        let messages = session_messages_in_store(&store, &sid, &options)
            .await
            .unwrap();
        let got: Vec<(MessageType, String)> = messages.iter().map(|m| (m.kind, m.text())).collect();
        assert_eq!(
            got,
            [
                (MessageType::User, FIRST.to_owned()),
                (MessageType::Assistant, "Noted.".to_owned()),
                (MessageType::User, SECOND.to_owned()),
                (MessageType::Assistant, "You said avocado.".to_owned()),
            ]
        );
        // The connection's task goes with the store.
        drop(store);
        h.finish().await;
    })
    .await;
}

#[cfg(feature = "redis")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_that_is_down_fails_the_turn_and_says_so() {
    use claude_code_agent::sessions::RedisSessionStore;
    let test = "a_store_that_is_down_fails_the_turn_and_says_so";
    let Some(mut redis) = crate::support::redis::Redis::start(test).await else {
        return;
    };
    with_timeout(async {
        let h = Harness::start(MockModel::builder().fallback(model)).await;
        let url = redis.url();
        let store =
            RedisSessionStore::with_timeout(&url, std::time::Duration::from_secs(1)).unwrap();
        redis.stop();
        let options = h
            .options()
            .session_store(store)
            .session_store_timeout(std::time::Duration::from_secs(5));
        let (messages, error) = drain(query(FIRST, options)).await;
        assert!(
            results(&messages).is_empty(),
            "no result without the store: {messages:#?}"
        );
        let sid = session_of(&messages);
        let error = error.expect("the turn fails");
        let Error::SessionStore {
            operation,
            session_id,
            source,
        } = &error
        else {
            panic!("{error:?}")
        };
        assert_eq!(
            (*operation, session_id.as_str()),
            ("append to", sid.as_str())
        );
        let said = format!("{error}: {source}");
        assert!(
            said.contains(&sid) && said.contains(url.trim_end_matches('/')),
            "{said}"
        );
        assert!(
            std::error::Error::source(source).is_some(),
            "Redis's own error is kept"
        );
        h.finish().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transcript_over_its_limit_ends_the_session() {
    with_timeout(async {
        let h = Harness::start(MockModel::builder().fallback(model)).await;
        let store = InMemorySessionStore::new();
        let options = h
            .options()
            .session_store(store.clone())
            .max_transcript_bytes(1500);
        let (messages, error) = drain(query(FIRST, options)).await;
        assert!(results(&messages).is_empty(), "{messages:#?}");
        let sid = session_of(&messages);
        match error {
            Some(Error::TranscriptTooLarge {
                session_id,
                size,
                limit,
            }) => {
                assert_eq!((session_id.as_str(), limit), (sid.as_str(), 1500));
                assert!(size > 1500);
                let said = Error::TranscriptTooLarge {
                    session_id,
                    size,
                    limit,
                }
                .to_string();
                assert!(
                    said.contains(&sid)
                        && said.contains(&size.to_string())
                        && said.contains("1500"),
                    "{said}"
                );
            }
            other => panic!("{other:?}"),
        }
        let key = SessionKey::new(project_key(h.env().work_dir()), sid);
        assert!(
            store.entries(&key).is_empty(),
            "nothing past the limit was kept"
        );
        h.finish().await;
    })
    .await;
}
