//! Tests of `hub/`: numbering, replay, cut-off clients, what is kept.
use super::*;
use serde_json::json;

fn drain(rx: &mut Rx) -> Vec<String> {
    let mut out = Vec::new();
    while let Some(b) = rx.try_recv() {
        out.push(String::from_utf8(b.to_vec()).unwrap());
    }
    out
}

#[test]
fn priming_events_then_numbered_messages() {
    let hub = Hub::new(Some(Duration::from_millis(500)), 8, 1 << 20, 1 << 30);
    let (id, mut rx) = hub.open(true);
    hub.send(id, &json!({"a":1}));
    hub.finish(id);
    let got = drain(&mut rx);
    assert_eq!(got[0], format!("id: {id}-0\nretry: 500\ndata: \n\n"));
    assert_eq!(
        got[1],
        format!("id: {id}-1\nevent: message\ndata: {{\"a\":1}}\n\n")
    );
    assert!(rx.is_closed() || rx.try_recv().is_none());
}

#[test]
fn closed_early_streams_resume_with_what_was_missed() {
    let hub = Hub::new(None, 8, 1 << 20, 1 << 30);
    let (id, mut rx) = hub.open(true);
    hub.send(id, &json!(1));
    assert!(hub.close_early(id));
    hub.send(id, &json!(2));
    hub.finish(id);
    assert_eq!(drain(&mut rx).len(), 2);
    let mut again = hub.resume(&format!("{id}-1")).unwrap();
    let replay = drain(&mut again);
    assert_eq!(
        replay,
        vec![format!("id: {id}-2\nevent: message\ndata: 2\n\n")]
    );
    assert!(hub.resume("99-0").is_none());
    assert!(hub.resume("garbage").is_none());
}

#[test]
fn a_client_that_stops_reading_is_cut_off_and_can_resume() {
    let hub = Hub::new(None, 4, 1 << 20, 1 << 30);
    let (id, mut rx) = hub.open(true);
    // Nobody reads: the channel takes the priming event and 4 more.
    for n in 1..=10 {
        hub.send(id, &json!(n));
    }
    hub.finish(id);
    let got = drain(&mut rx);
    assert_eq!(got.len(), 5, "{got:?}");
    assert!(got[4].starts_with(&format!("id: {id}-4\n")), "{got:?}");
    assert!(
        rx.is_closed(),
        "the response ends where the client fell behind"
    );
    // What it missed is kept, up to the cap: events 7…10.
    let replay = drain(&mut hub.resume(&format!("{id}-4")).unwrap());
    let ids: Vec<&str> = replay.iter().map(|e| &e[..e.find('\n').unwrap()]).collect();
    let want: Vec<String> = (7..=10).map(|n| format!("id: {id}-{n}")).collect();
    assert_eq!(ids, want);
}

#[test]
fn messages_wait_for_a_get_stream() {
    let hub = Hub::new(None, 8, 1 << 20, 1 << 30);
    hub.deliver(json!("early"));
    let mut rx = hub.open_standalone(false);
    hub.deliver(json!("live"));
    let got = drain(&mut rx);
    assert_eq!(got.len(), 2);
    assert!(got[0].contains("\"early\"") && got[1].contains("\"live\""));
}
#[test]
fn a_stream_read_to_the_end_is_forgotten() {
    let hub = Hub::new(None, 8, 1 << 20, 1 << 30);
    for _ in 0..100 {
        let (id, mut rx) = hub.open(true);
        hub.send(id, &json!({"result": 3}));
        hub.finish(id);
        assert_eq!(drain(&mut rx).len(), 2);
        assert!(rx.try_recv().is_none(), "the body has read it all");
        hub.delivered(&rx);
    }
    let (bytes, streams) = hub.kept();
    assert_eq!(streams, DELIVERED_KEPT, "100 calls leave the last few");
    assert!(bytes < DELIVERED_KEPT * 100, "{bytes} bytes kept");
}

#[test]
fn a_stream_whose_client_vanished_stays_resumable() {
    let hub = Hub::new(None, 8, 1 << 20, 1 << 30);
    let (id, rx) = hub.open(true);
    drop(rx); // the client went away before the answer
    hub.send(id, &json!("answer"));
    hub.finish(id);
    let mut again = hub.resume(&format!("{id}-0")).unwrap();
    let replay = drain(&mut again);
    assert_eq!(replay.len(), 1);
    assert!(replay[0].contains("\"answer\""));
    // The replay read to its end: kept a little longer, until
    // DELIVERED_KEPT more streams have been delivered.
    hub.delivered(&again);
    assert!(hub.lock().streams.get(id).is_some());
    for _ in 0..DELIVERED_KEPT {
        let (other, mut rx) = hub.open(false);
        hub.send(other, &json!("x"));
        hub.finish(other);
        drain(&mut rx);
        hub.delivered(&rx);
    }
    assert!(hub.resume(&format!("{id}-0")).is_none());
}

#[test]
fn a_delivered_stream_asked_for_again_is_owed_again() {
    let hub = Hub::new(None, 8, 1 << 20, 1 << 30);
    let (id, mut rx) = hub.open(false);
    hub.send(id, &json!("answer"));
    hub.finish(id);
    drain(&mut rx);
    hub.delivered(&rx);
    // The client did not get it after all: it resumes, and that
    // response is cut off before its end.
    let again = hub.resume(&format!("{id}-0")).unwrap();
    drop(again);
    for _ in 0..2 * DELIVERED_KEPT {
        let (other, mut rx) = hub.open(false);
        hub.send(other, &json!("x"));
        hub.finish(other);
        drain(&mut rx);
        hub.delivered(&rx);
    }
    let replay = drain(&mut hub.resume(&format!("{id}-0")).unwrap());
    assert_eq!(replay.len(), 1, "still owed: {replay:?}");
    assert_eq!(hub.kept().1, DELIVERED_KEPT + 1);
}

#[test]
fn a_session_with_nothing_kept_holds_no_stream_buffer() {
    let hub = Hub::new(None, 8, 1 << 20, 1 << 30);
    let (id, rx) = hub.open(false);
    drop(rx);
    hub.finish(id); // no event: forgotten at once
    let state = hub.lock();
    assert_eq!(state.streams.len(), 0);
    assert_eq!(state.streams.capacity(), 0, "the list's buffer is freed");
}

#[test]
fn an_older_response_ending_does_not_forget_a_cut_stream() {
    let hub = Hub::new(None, 8, 1 << 20, 1 << 30);
    let (id, mut rx) = hub.open(false);
    hub.send(id, &json!(1));
    assert!(hub.close_early(id));
    hub.send(id, &json!(2));
    hub.finish(id);
    assert_eq!(drain(&mut rx).len(), 1);
    hub.delivered(&rx); // ended early: event 2 is still owed
    let replay = drain(&mut hub.resume(&format!("{id}-1")).unwrap());
    assert_eq!(replay.len(), 1, "{replay:?}");
}

#[test]
fn what_is_kept_for_replay_is_bounded_in_bytes() {
    let event = frame(1, 1, &json!("x".repeat(200))).len() + EVENT_OVERHEAD;
    let budget = 3 * event + event / 2; // room for three such events
    let hub = Hub::new(None, 1024, budget, 1 << 30);
    // Ten streams whose clients vanished, one event each: the oldest go.
    let mut ids = Vec::new();
    for _ in 0..10 {
        let (id, rx) = hub.open(false);
        drop(rx);
        hub.send(id, &json!("x".repeat(200)));
        hub.finish(id);
        ids.push(id);
    }
    let (bytes, streams) = hub.kept();
    assert!(bytes <= budget, "{bytes} > {budget}");
    assert_eq!(streams, 3, "the three newest streams fit");
    for old in &ids[..7] {
        assert!(
            hub.resume(&format!("{old}-0")).is_none(),
            "stream {old} evicted"
        );
    }
    for new in &ids[7..] {
        let replay = drain(&mut hub.resume(&format!("{new}-0")).unwrap());
        assert_eq!(replay.len(), 1);
    }
    // Within one long stream the oldest events go first.
    let hub = Hub::new(None, 1024, budget, 1 << 30);
    let (id, rx) = hub.open(false);
    drop(rx);
    for _ in 0..10 {
        hub.send(id, &json!("x".repeat(200)));
    }
    let replay = drain(&mut hub.resume(&format!("{id}-0")).unwrap());
    let ids: Vec<&str> = replay.iter().map(|e| &e[..e.find('\n').unwrap()]).collect();
    let want: Vec<String> = (8..=10).map(|n| format!("id: {id}-{n}")).collect();
    assert_eq!(ids, want);
    assert!(hub.kept().0 <= budget);
}

#[test]
fn a_stream_whose_unread_bytes_pass_the_budget_is_ended_and_kept_for_resuming() {
    let big = json!("x".repeat(40_000));
    let hub = Hub::new(None, 1024, 1 << 20, 100_000);
    let (id, mut rx) = hub.open(false);
    // Nobody reads: two events fit the budget, the third ends the response.
    for _ in 0..3 {
        hub.send(id, &big);
    }
    let got = drain(&mut rx);
    assert_eq!(got.len(), 2, "the response carries what fit");
    assert!(rx.is_closed(), "and then ends");
    // The third is kept: a client that resumes gets it.
    let replay = drain(&mut hub.resume(&format!("{id}-2")).unwrap());
    assert_eq!(replay.len(), 1);
    assert!(replay[0].starts_with(&format!("id: {id}-3\n")));
}

#[test]
fn what_waits_for_the_client_is_charged_until_taken_and_what_is_kept_is_not() {
    let hub = Hub::new(None, 8, 1 << 20, 1 << 20);
    let (id, mut rx) = hub.open(false);
    hub.send(id, &json!("x".repeat(1000)));
    assert!(hub.held() > 1000, "in the channel: {}", hub.held());
    let event = rx.try_recv().unwrap();
    assert_eq!(hub.held(), 0, "taken by the body: the client has it");
    drop(event);
    assert!(hub.kept().0 > 1000, "still kept for replay, not charged");
    let body = hub.json(&json!({"a": "y".repeat(500)}), None);
    assert!(hub.held() >= 500);
    drop(body);
    assert_eq!(hub.held(), 0);
    // Messages waiting for a GET stream are kept, not held; once a stream
    // opens they wait in its channel, charged.
    hub.deliver(json!("z".repeat(300)));
    assert_eq!(hub.held(), 0);
    let mut get = hub.open_standalone(false);
    assert!(hub.held() >= 300);
    drop(drain(&mut get));
    assert_eq!(hub.held(), 0);
    hub.close();
    assert_eq!(hub.held(), 0);
}

fn call(tool: &str) -> Demand {
    Demand::of(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool}}),
        1,
    )
}

#[tokio::test]
async fn a_request_waits_while_unread_answers_fill_the_budget() {
    let hub = Hub::new(None, 8, 0, 100_000);
    let (id, mut rx) = hub.open(false);
    let first = hub.admit(call("big")).await;
    hub.answer(id, &json!("x".repeat(150_000)), first);
    hub.finish(id);
    let waiting = tokio::time::timeout(Duration::from_millis(100), hub.admit(call("big"))).await;
    assert!(
        waiting.is_err(),
        "held past the budget: the next request waits"
    );
    drop(drain(&mut rx)); // the client reads the answer
    let next = tokio::time::timeout(Duration::from_secs(5), hub.admit(call("big")))
        .await
        .expect("read answers make room");
    drop(next);
    assert_eq!(hub.held(), 0);
}

#[tokio::test]
async fn answers_larger_than_the_budget_never_wedge_the_session() {
    // The default replay budget keeps the last streams' events: they are
    // never held, so they cannot keep a request waiting.
    let hub = Hub::new(None, 1024, 256 * 1024, 100_000);
    for round in 0..4 {
        for (tool, size) in [("echo", 10), ("big", 250_000), ("echo", 10)] {
            let ticket = tokio::time::timeout(Duration::from_secs(5), hub.admit(call(tool)))
                .await
                .unwrap_or_else(|_| panic!("round {round}: {tool} was never admitted"));
            let (id, mut rx) = hub.open(false);
            hub.answer(id, &json!("x".repeat(size)), ticket);
            hub.finish(id);
            let got = drain(&mut rx);
            assert_eq!(got.len(), 1);
            hub.delivered(&rx);
            drop(got);
            assert_eq!(hub.held(), 0, "round {round}: all read, nothing held");
        }
    }
}
