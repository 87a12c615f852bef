//! Tests of the byte budget: admission, and liveness whatever the sizes.
use super::*;
use proptest::prelude::*;
use serde_json::json;
use std::collections::VecDeque;
use std::time::Duration;

fn call(tool: &str) -> Demand {
    Demand::of(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool}}),
        1,
    )
}

/// Two tool names whose kinds do not share a bucket.
fn two_kinds() -> (String, String) {
    let big = "big".to_owned();
    let small = (0..)
        .map(|i| format!("small{i}"))
        .find(|s| call(s).kind != call(&big).kind)
        .unwrap();
    (big, small)
}

#[tokio::test]
async fn a_request_waits_while_answers_fill_the_budget_and_goes_once_they_are_taken() {
    let budget = Budget::new(1000 * 1024);
    // The first answers teach what a call of `t` holds: 300 KiB.
    let first = budget.try_admit(call("t")).unwrap().answered(300 * 1024);
    let second = budget.try_admit(call("t")).unwrap().answered(300 * 1024);
    assert_eq!(budget.held(), 600 * 1024);
    // One more running call (300 KiB expected) fits; two do not.
    let third = budget.try_admit(call("t")).unwrap();
    let blocked = tokio::time::timeout(
        Duration::from_millis(50),
        budget.admit_any(|| std::iter::once(call("t"))),
    )
    .await;
    assert!(blocked.is_err(), "a fourth would pass the budget");
    drop(third);
    drop(first);
    let fourth = tokio::time::timeout(
        Duration::from_secs(5),
        budget.admit_any(|| std::iter::once(call("t"))),
    )
    .await
    .expect("taken answers make room");
    drop((second, fourth));
    assert_eq!(budget.held(), 0);
    assert_eq!(budget.reserved(), (0, 0));
}

#[test]
fn an_answer_larger_than_the_budget_is_served_and_the_next_goes_once_it_is_taken() {
    let budget = Budget::new(1024 * 1024);
    let big = budget.try_admit(call("big")).unwrap().answered(3 << 20);
    assert!(
        budget.try_admit(call("big")).is_none(),
        "held past the budget: it waits"
    );
    drop(big);
    // Expected to be as large again: it reserves half the budget, and runs.
    let next = budget
        .try_admit(call("big"))
        .expect("nothing held: it runs");
    assert_eq!(budget.reserved(), (512 * 1024, 1));
    drop(next);
    assert_eq!(budget.reserved(), (0, 0));
}

#[test]
fn a_large_request_waiting_does_not_hold_up_small_ones() {
    let (big, small) = two_kinds();
    let budget = Budget::new(1024 * 1024);
    drop(budget.try_admit(call(&big)).unwrap().answered(4 << 20));
    drop(budget.try_admit(call(&small)).unwrap().answered(100));
    // Some is held: the large call (half the budget) does not fit, small ones do.
    let unread = budget.charge(600 * 1024);
    assert!(budget.try_admit(call(&big)).is_none());
    let smalls: Vec<Ticket> = (0..10)
        .map(|_| budget.try_admit(call(&small)).expect("a small call fits"))
        .collect();
    drop((smalls, unread));
    assert!(budget.try_admit(call(&big)).is_some());
}

#[test]
fn a_request_that_runs_for_long_does_not_hold_up_a_large_one() {
    let (big, small) = two_kinds();
    let budget = Budget::new(1024 * 1024);
    drop(budget.try_admit(call(&big)).unwrap().answered(4 << 20));
    drop(budget.try_admit(call(&small)).unwrap().answered(100));
    let listening = budget.try_admit(call(&small)).unwrap();
    let large = budget.try_admit(call(&big));
    assert!(large.is_some(), "a small request running leaves room");
    drop((large, listening));
}

#[test]
fn at_most_max_running_requests_run() {
    let budget = Budget::with_max_running(1 << 30, 3);
    let batch = Demand::of(&json!([{}, {}]), 2);
    let two = budget.try_admit(batch).unwrap();
    let one = budget.try_admit(call("x")).unwrap();
    assert!(budget.try_admit(call("x")).is_none());
    drop(two);
    assert!(budget.try_admit(batch).is_some());
    drop(one);
}

#[tokio::test]
async fn admit_any_takes_the_first_that_fits() {
    let (big, small) = two_kinds();
    let budget = Budget::new(1024 * 1024);
    drop(budget.try_admit(call(&big)).unwrap().answered(4 << 20));
    let unread = budget.charge(600 * 1024);
    let queue = [call(&big), call(&big), call(&small)];
    let (i, ticket) = tokio::time::timeout(
        Duration::from_secs(5),
        budget.admit_any(|| queue.iter().copied()),
    )
    .await
    .unwrap();
    assert_eq!(i, 2);
    drop((ticket, unread));
}

/// What a simulated session does next.
#[derive(Clone, Debug)]
enum Op {
    /// The client sends a call of kind `kind` that answers `size` bytes.
    Call { kind: u8, size: usize },
    /// The oldest running call answers (or, `cancel`, ends unanswered).
    Finish { cancel: bool },
    /// The client takes the oldest `n` answers it has not taken.
    Read { n: usize },
}

fn op(limit: usize) -> impl Strategy<Value = Op> {
    prop_oneof![
        (0u8..4, 0..3 * limit).prop_map(|(kind, size)| Op::Call { kind, size }),
        any::<bool>().prop_map(|cancel| Op::Finish { cancel }),
        (1usize..4).prop_map(|n| Op::Read { n }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Whatever the sizes and their order: once the client has taken every
    /// answer and nothing runs, a waiting call is always admitted; every
    /// call is answered; and the budget comes back to zero.
    #[test]
    fn every_call_is_answered_and_the_budget_comes_back_to_zero(
        ops in proptest::collection::vec(op(64 * 1024), 1..80),
    ) {
        let limit = 64 * 1024;
        let budget = Budget::new(limit);
        let tools = ["a", "b", "c", "d"];
        let mut waiting: VecDeque<(Demand, usize)> = VecDeque::new();
        let mut running: VecDeque<(Ticket, usize)> = VecDeque::new();
        let mut unread: VecDeque<Charge> = VecDeque::new();
        let mut answered = 0;
        let mut calls = 0;
        let admit = |waiting: &mut VecDeque<(Demand, usize)>,
                         running: &mut VecDeque<(Ticket, usize)>| {
            // As the stdio server does: every waiting call that fits goes.
            let mut i = 0;
            while i < waiting.len() {
                match budget.try_admit(waiting[i].0) {
                    Some(ticket) => {
                        let (_, size) = waiting.remove(i).unwrap();
                        running.push_back((ticket, size));
                    }
                    None => i += 1,
                }
            }
        };
        for op in ops {
            match op {
                Op::Call { kind, size } => {
                    calls += 1;
                    waiting.push_back((call(tools[usize::from(kind)]), size));
                }
                Op::Finish { cancel } => {
                    if let Some((ticket, size)) = running.pop_front() {
                        answered += 1;
                        if cancel {
                            drop(ticket);
                        } else {
                            unread.push_back(ticket.answered(size));
                        }
                    }
                }
                Op::Read { n } => {
                    for _ in 0..n {
                        unread.pop_front();
                    }
                }
            }
            admit(&mut waiting, &mut running);
        }
        // The client reads everything, and every call ends.
        loop {
            while let Some((ticket, size)) = running.pop_front() {
                answered += 1;
                unread.push_back(ticket.answered(size));
            }
            unread.clear();
            prop_assert_eq!(budget.held(), 0);
            prop_assert_eq!(budget.reserved(), (0, 0));
            if waiting.is_empty() {
                break;
            }
            admit(&mut waiting, &mut running);
            prop_assert!(!running.is_empty(), "nothing held, nothing running, and {} wait", waiting.len());
        }
        prop_assert_eq!(answered, calls);
    }
}
