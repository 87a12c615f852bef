//! A session's conversation from its transcript: the chain of entries
//! linked by `parentUuid`, from the newest main-thread message back to the
//! root, with the calls and results of parallel tool use put back.
//!
//! The transcript is a tree: every entry names its parent, a rewind or an
//! edited prompt starts a branch, and the CLI writes one assistant entry per
//! content block, so the results of N parallel tool calls hang off N
//! different entries and only one of them leads on. The algorithm is the
//! official SDKs'; see [`build_chain`] and [`recover_parallel`].

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::{MessageType, SessionMessage};

/// A transcript line kept for the chain.
pub(crate) type Entry = Map<String, Value>;

/// The entry types that take part in the `parentUuid` chain.
const CHAIN_TYPES: [&str; 5] = ["user", "assistant", "progress", "system", "attachment"];

fn str_of<'a>(e: &'a Entry, key: &str) -> Option<&'a str> {
    e.get(key).and_then(Value::as_str)
}

fn uuid(e: &Entry) -> &str {
    str_of(e, "uuid").unwrap_or_default()
}

fn kind(e: &Entry) -> Option<&str> {
    str_of(e, "type")
}

/// A non-empty `parentUuid`.
fn parent(e: &Entry) -> Option<&str> {
    str_of(e, "parentUuid").filter(|p| !p.is_empty())
}

/// JavaScript/Python truthiness of a field.
pub(crate) fn truthy(e: &Entry, key: &str) -> bool {
    match e.get(key) {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(o)) => !o.is_empty(),
    }
}

/// The transcript entries of a JSONL text: objects of a chain type with a
/// string `uuid`. Lines that do not parse are skipped.
pub(crate) fn parse_entries(content: &str) -> Vec<Entry> {
    content
        .split('\n')
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| match v {
            Value::Object(o) => Some(o),
            _ => None,
        })
        .filter(|o| {
            kind(o).is_some_and(|k| CHAIN_TYPES.contains(&k))
                && o.get("uuid").is_some_and(Value::is_string)
        })
        .collect()
}

/// The entries indexed by `uuid` (a repeated uuid: the last entry), and the
/// uuids in order of first appearance.
struct Index<'a> {
    by_uuid: HashMap<&'a str, usize>,
    order: Vec<&'a str>,
}

impl<'a> Index<'a> {
    fn new(entries: &'a [Entry]) -> Self {
        let mut by_uuid = HashMap::with_capacity(entries.len());
        let mut order = Vec::with_capacity(entries.len());
        for (i, e) in entries.iter().enumerate() {
            if by_uuid.insert(uuid(e), i).is_none() {
                order.push(uuid(e));
            }
        }
        Index { by_uuid, order }
    }

    fn parent_of(&self, entries: &[Entry], i: usize) -> Option<usize> {
        parent(&entries[i]).and_then(|p| self.by_uuid.get(p).copied())
    }

    /// From `leaf` along `parentUuid` to the root (a cycle ends the walk):
    /// the entries root first, and their uuids.
    fn walk_to_root(&self, entries: &'a [Entry], leaf: usize) -> (Vec<usize>, HashSet<&'a str>) {
        let mut chain = Vec::new();
        let mut seen = HashSet::new();
        let mut cur = Some(leaf);
        while let Some(i) = cur {
            if !seen.insert(uuid(&entries[i])) {
                break;
            }
            chain.push(i);
            cur = self.parent_of(entries, i);
        }
        chain.reverse();
        (chain, seen)
    }
}

/// The conversation, as indices into `entries`, root first.
///
/// The leaf: among the entries no other entry names as parent, walk each back
/// to its nearest user or assistant entry; of those, prefer main-thread ones
/// (not sidechain, team or meta) and then the latest in the file. Then walk
/// `parentUuid` from the leaf to the root (`logicalParentUuid`, the link
/// across a compaction, is not followed: the compaction summary stands for
/// what came before), and put back what parallel tool use left off
/// ([`recover_parallel`]).
pub(crate) fn build_chain(entries: &[Entry]) -> Vec<usize> {
    if entries.is_empty() {
        return Vec::new();
    }
    let index = Index::new(entries);
    let parents: HashSet<&str> = entries.iter().filter_map(parent).collect();
    let mut leaves = Vec::new();
    for (terminal, _) in entries
        .iter()
        .enumerate()
        .filter(|(_, e)| !parents.contains(uuid(e)))
    {
        let mut seen = HashSet::new();
        let mut cur = Some(terminal);
        while let Some(i) = cur {
            if !seen.insert(uuid(&entries[i])) {
                break;
            }
            if matches!(kind(&entries[i]), Some("user" | "assistant")) {
                leaves.push(i);
                break;
            }
            cur = index.parent_of(entries, i);
        }
    }
    let main: Vec<usize> = leaves
        .iter()
        .copied()
        .filter(|&i| {
            let e = &entries[i];
            !truthy(e, "isSidechain") && !truthy(e, "teamName") && !truthy(e, "isMeta")
        })
        .collect();
    let candidates = if main.is_empty() { &leaves } else { &main };
    // The latest in the file (a repeated uuid counts at its last position);
    // on a tie the first candidate.
    let position = |i: usize| index.by_uuid[uuid(&entries[i])];
    let Some(leaf) = candidates.iter().copied().reduce(|best, i| {
        if position(i) > position(best) {
            i
        } else {
            best
        }
    }) else {
        return Vec::new();
    };
    let (chain, seen) = index.walk_to_root(entries, leaf);
    recover_parallel(entries, &index, chain, seen)
}

/// The API `message.id` of an assistant entry.
fn message_id(e: &Entry) -> Option<&str> {
    if kind(e) != Some("assistant") {
        return None;
    }
    e.get("message")?
        .get("id")?
        .as_str()
        .filter(|id| !id.is_empty())
}

/// The `field` of each `block_type` block of an entry's `message.content`.
fn block_ids<'a>(e: &'a Entry, block_type: &str, field: &str) -> Vec<&'a str> {
    let Some(blocks) = e
        .get("message")
        .and_then(|m| m.get("content"))
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some(block_type))
        .filter_map(|b| b.get(field).and_then(Value::as_str))
        .collect()
}

/// A user entry with a parent that carries a `tool_result` block.
fn is_tool_result(e: &Entry) -> bool {
    kind(e) == Some("user")
        && parent(e).is_some()
        && e.get("message")
            .and_then(|m| m.get("content"))
            .and_then(Value::as_array)
            .is_some_and(|blocks| {
                blocks
                    .iter()
                    .any(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
            })
}

/// Written by the same (sub)agent.
fn same_writer(a: &Entry, b: &Entry) -> bool {
    truthy(a, "isSidechain") == truthy(b, "isSidechain") && a.get("agentId") == b.get("agentId")
}

fn timestamp(e: &Entry) -> &str {
    str_of(e, "timestamp").unwrap_or_default()
}

/// Puts back the tool calls and results a parallel turn left off the chain.
///
/// One API response with N parallel tool calls is N assistant entries that
/// share `message.id`, chained one after another; each result's parent is
/// its own call's entry, so the results fan out and the walk keeps only the
/// branch the next turn continued from. For each response on the chain, its
/// assistant entries and their results that the walk did not reach are
/// inserted right after the response's last entry on the chain: siblings
/// first, then results, each in timestamp order. A result belongs to a
/// response through its parent, its `sourceToolAssistantUUID` or the call
/// it answers (the last two only when written by the same agent); one whose
/// parent is elsewhere is taken only if it answers a call of the response
/// that nothing answered yet.
fn recover_parallel<'a>(
    entries: &'a [Entry],
    index: &Index<'a>,
    chain: Vec<usize>,
    mut seen: HashSet<&'a str>,
) -> Vec<usize> {
    let mut anchor: HashMap<&str, usize> = HashMap::new();
    let chain_assistants: Vec<usize> = chain
        .iter()
        .copied()
        .filter(|&i| kind(&entries[i]) == Some("assistant"))
        .collect();
    for &i in &chain_assistants {
        if let Some(id) = message_id(&entries[i]) {
            anchor.insert(id, i);
        }
    }
    if anchor.is_empty() {
        return chain;
    }
    let values: Vec<usize> = index.order.iter().map(|u| index.by_uuid[u]).collect();
    let mut siblings: HashMap<&str, Vec<usize>> = HashMap::new();
    // A call id claimed by two responses is ambiguous (`None`).
    let mut call_owner: HashMap<&str, Option<usize>> = HashMap::new();
    let mut results = Vec::new();
    for &i in &values {
        let e = &entries[i];
        if let Some(mid) = message_id(e) {
            siblings.entry(mid).or_default().push(i);
            for call in block_ids(e, "tool_use", "id") {
                let owner = match call_owner.get(call) {
                    None => Some(i),
                    Some(Some(o)) if message_id(&entries[*o]) == Some(mid) => Some(i),
                    Some(_) => None,
                };
                call_owner.insert(call, owner);
            }
        } else if is_tool_result(e) {
            results.push(i);
        }
    }
    let owner_of = |call: &str| call_owner.get(call).copied().flatten();
    let mut by_assistant: HashMap<&str, Vec<usize>> = HashMap::new();
    for &r in &results {
        let e = &entries[r];
        by_assistant
            .entry(parent(e).unwrap_or_default())
            .or_default()
            .push(r);
        if let Some(source) = str_of(e, "sourceToolAssistantUUID")
            && let Some(&s) = index.by_uuid.get(source)
            && same_writer(e, &entries[s])
        {
            by_assistant.entry(source).or_default().push(r);
        }
        for call in block_ids(e, "tool_result", "tool_use_id") {
            if let Some(o) = owner_of(call)
                && same_writer(e, &entries[o])
            {
                by_assistant.entry(uuid(&entries[o])).or_default().push(r);
            }
        }
    }
    let mut answered_on_chain: Option<HashSet<&str>> = None;
    let file_position: HashMap<&str, usize> = index
        .order
        .iter()
        .enumerate()
        .map(|(n, u)| (*u, n))
        .collect();
    let mut processed = HashSet::new();
    let mut inserts: HashMap<usize, Vec<usize>> = HashMap::new();
    for &a in &chain_assistants {
        let Some(mid) = message_id(&entries[a]) else {
            continue;
        };
        if !processed.insert(mid) {
            continue;
        }
        let group = siblings.get(mid).cloned().unwrap_or_else(|| vec![a]);
        let members: HashSet<&str> = group.iter().map(|&m| uuid(&entries[m])).collect();
        let mut orphan_siblings: Vec<usize> = group
            .iter()
            .copied()
            .filter(|&m| !seen.contains(uuid(&entries[m])))
            .collect();
        let mut orphan_results = Vec::new();
        let mut strays = Vec::new();
        let mut collected = HashSet::new();
        for &m in &group {
            for &r in by_assistant
                .get(uuid(&entries[m]))
                .map(Vec::as_slice)
                .unwrap_or_default()
            {
                let ru = uuid(&entries[r]);
                if seen.contains(ru) || !collected.insert(ru) {
                    continue;
                }
                if parent(&entries[r]).is_some_and(|p| members.contains(p)) {
                    orphan_results.push(r);
                } else {
                    strays.push(r);
                }
            }
        }
        if !strays.is_empty() {
            let on_chain = answered_on_chain.get_or_insert_with(|| {
                chain
                    .iter()
                    .flat_map(|&i| block_ids(&entries[i], "tool_result", "tool_use_id"))
                    .collect()
            });
            let mut answered = on_chain.clone();
            for &r in &orphan_results {
                answered.extend(block_ids(&entries[r], "tool_result", "tool_use_id"));
            }
            strays.sort_by_key(|&r| file_position[uuid(&entries[r])]);
            for r in strays {
                let calls = block_ids(&entries[r], "tool_result", "tool_use_id");
                let answers_open_call = calls.iter().any(|call| {
                    !answered.contains(call)
                        && owner_of(call).is_some_and(|o| members.contains(uuid(&entries[o])))
                });
                if answers_open_call {
                    answered.extend(calls);
                    orphan_results.push(r);
                }
            }
        }
        if orphan_siblings.is_empty() && orphan_results.is_empty() {
            continue;
        }
        orphan_siblings.sort_by_key(|&i| timestamp(&entries[i]));
        orphan_results.sort_by_key(|&i| timestamp(&entries[i]));
        let recovered: Vec<usize> = orphan_siblings.into_iter().chain(orphan_results).collect();
        for &r in &recovered {
            seen.insert(uuid(&entries[r]));
        }
        inserts.insert(anchor[mid], recovered);
    }
    if inserts.is_empty() {
        return chain;
    }
    let mut out = Vec::with_capacity(chain.len() + inserts.values().map(Vec::len).sum::<usize>());
    for i in chain {
        out.push(i);
        if let Some(extra) = inserts.remove(&i) {
            out.extend(extra);
        }
    }
    out
}

/// A subagent's conversation: its transcript is linear, so from the last
/// user or assistant entry back to the root, keeping those two types.
pub(crate) fn subagent_chain(entries: &[Entry]) -> Vec<usize> {
    let Some(leaf) = entries
        .iter()
        .rposition(|e| matches!(kind(e), Some("user" | "assistant")))
    else {
        return Vec::new();
    };
    let (mut chain, _) = Index::new(entries).walk_to_root(entries, leaf);
    chain.retain(|&i| matches!(kind(&entries[i]), Some("user" | "assistant")));
    chain
}

/// Whether a chain entry is shown: user and assistant entries (system ones
/// too when asked), not meta, sidechain or team entries. Compaction
/// summaries are shown: after a compaction they are all there is of what
/// came before.
pub(crate) fn is_visible(e: &Entry, include_system: bool) -> bool {
    let shown_kind = match kind(e) {
        Some("user" | "assistant") => true,
        Some("system") => include_system,
        _ => false,
    };
    shown_kind && !truthy(e, "isMeta") && !truthy(e, "isSidechain") && !truthy(e, "teamName")
}

/// A transcript entry as a [`SessionMessage`].
pub(crate) fn to_message(
    entry: &Entry,
    parent_tool_use_id: Option<&str>,
    parent_agent_id: Option<&str>,
) -> SessionMessage {
    let mut fields = entry.clone();
    let message = fields.remove("message").unwrap_or(Value::Null);
    let kind = match kind(entry) {
        Some("user") => MessageType::User,
        Some("system") => MessageType::System,
        _ => MessageType::Assistant,
    };
    SessionMessage {
        kind,
        uuid: uuid(entry).to_owned(),
        session_id: str_of(entry, "sessionId").unwrap_or_default().to_owned(),
        message,
        parent_tool_use_id: parent_tool_use_id.map(str::to_owned),
        parent_agent_id: parent_agent_id.map(str::to_owned),
        fields,
    }
}

/// `offset` then `limit` (`None` or 0: no limit), as the SDKs page.
pub(crate) fn page<T>(items: Vec<T>, offset: usize, limit: Option<usize>) -> Vec<T> {
    let items = items.into_iter().skip(offset);
    match limit.filter(|&n| n > 0) {
        Some(n) => items.take(n).collect(),
        None => items.collect(),
    }
}
