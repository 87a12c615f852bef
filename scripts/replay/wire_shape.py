#!/usr/bin/env python3
"""Wire shapes of Claude Code CLI transcripts, and their differences between CLI versions.

A transcript is JSON lines `{"seq", "t", "dir", "msg"}` (`dir`: `meta`, `->cli` = what the
SDK wrote, `<-cli` = what the CLI wrote, `stderr`, `api`), as in the protocol captures and
as written by `replay.py`.

The *shape* of a message the CLI writes is a kind and a set of field paths:

* kind: `type[/subtype]`; `control_request/<request.subtype>[/<jsonrpc method>]`;
  `control_response/<subtype of the SDK request it answers>/<response.subtype>`;
  `stream_event/<event.type>`;
* fields: the top-level field names, and one level deeper for the containers that carry
  the protocol (`request.*`, `request.message.*` of `mcp_message`, `response.*`,
  `response.response.*`, `message.*` of assistant/user, `message.content[].type`, `usage.*`,
  `event.*`). Values are ignored, except kinds, subtypes, methods and block types.

Usage:
  wire_shape.py shape T.jsonl                 # the shapes, one line per CLI message
  wire_shape.py diff A.jsonl B.jsonl          # Markdown diff of one scenario
  wire_shape.py diffdir DIR_A DIR_B [-o OUT]  # pairs transcripts by scenario name, one report
  wire_shape.py summary DIR_A DIR_B           # only the union of kind/field differences
"""
from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import sys
from collections import Counter, OrderedDict, defaultdict

NESTED = {
    # container path -> include its keys as "<path>.<key>"
    "request": True,
    "response": True,
    "message": True,
    "usage": True,
    "event": True,
}


def load(path):
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                out.append({"dir": "garbage", "msg": line})
    return out


def meta(transcript):
    for rec in transcript:
        if rec.get("dir") == "meta" and isinstance(rec.get("msg"), dict) and "argv" in rec["msg"]:
            return rec["msg"]
    return {}


def keys_of(obj, prefix):
    if not isinstance(obj, dict):
        return set()
    return {f"{prefix}{k}" for k in obj}


def shape(msg, sdk_requests):
    """(kind, fields) of one message the CLI wrote. `sdk_requests` maps the ids of the
    SDK's control requests to their subtypes (to name what a control_response answers)."""
    if not isinstance(msg, dict):
        return ("<not an object>", frozenset())
    if msg.get("__cut__"):
        # a line too long to record whole: only its head is known
        m = re.search(r'"type"\s*:\s*"([^"]+)"', msg.get("head", ""))
        return (f"{m.group(1) if m else '?'} (cut, {msg.get('len')} bytes)".split(" (")[0] + " (too long to record)", frozenset())
    t = msg.get("type", "<no type>")
    fields = set(msg.keys())
    kind = str(t)
    if t == "control_request":
        req = msg.get("request") or {}
        kind += f"/{req.get('subtype')}"
        fields |= keys_of(req, "request.")
        if req.get("subtype") == "mcp_message":
            inner = req.get("message") or {}
            method = inner.get("method")
            kind += f"/{method}" if method else "/<response>"
            fields |= keys_of(inner, "request.message.")
            if isinstance(inner.get("params"), dict):
                fields |= keys_of(inner["params"], "request.message.params.")
        elif req.get("subtype") == "hook_callback":
            inp = req.get("input") or {}
            if inp.get("hook_event_name"):
                kind += f"/{inp['hook_event_name']}"
            fields |= keys_of(inp, "request.input.")
    elif t == "control_response":
        resp = msg.get("response") or {}
        answered = sdk_requests.get(resp.get("request_id"), "?")
        kind += f"/{answered}/{resp.get('subtype')}"
        fields |= keys_of(resp, "response.")
        if isinstance(resp.get("response"), dict):
            fields |= keys_of(resp["response"], "response.response.")
    elif t == "stream_event":
        ev = msg.get("event") or {}
        kind += f"/{ev.get('type')}"
        fields |= keys_of(ev, "event.")
    else:
        if "subtype" in msg:
            kind += f"/{msg['subtype']}"
        for c in ("message", "usage"):
            if isinstance(msg.get(c), dict):
                fields |= keys_of(msg[c], f"{c}.")
        m = msg.get("message")
        if isinstance(m, dict) and isinstance(m.get("content"), list):
            for block in m["content"]:
                if isinstance(block, dict):
                    fields.add(f"message.content[].type={block.get('type')}")
                    bt = block.get("type")
                    fields |= {f"message.content[{bt}].{k}" for k in block}
        elif isinstance(m, dict) and isinstance(m.get("content"), str):
            fields.add("message.content=<string>")
    return (kind, frozenset(fields))


def cli_shapes(transcript):
    """[(seq, kind, fields)] of every message the CLI wrote, in order."""
    sdk_requests = {}
    out = []
    for rec in transcript:
        d, msg = rec.get("dir"), rec.get("msg")
        if d == "->cli" and isinstance(msg, dict) and msg.get("type") == "control_request":
            sdk_requests[msg.get("request_id")] = (msg.get("request") or {}).get("subtype")
        elif d == "<-cli":
            kind, fields = shape(msg, sdk_requests)
            out.append((rec.get("seq"), kind, fields))
        elif d == "api" and isinstance(msg, dict) and WITH_API:
            out.append((rec.get("seq"),) + api_shape(msg))
    return out


# Also compare what the CLI sent to the model API (`api` lines): on by default, off with
# --no-api. Only coarse facts: the request kind, and the role of the last message.
WITH_API = True


def api_shape(msg):
    kind = msg.get("kind") or ("Conversation" if msg.get("stream") else "SideCall")
    last = msg.get("last_message") or msg.get("last") or {}
    if isinstance(last, str):  # abbreviated by mock-serve
        m = re.search(r'"role"\s*:\s*"(\w+)"', last)
        role = m.group(1) if m else "?"
    else:
        role = last.get("role")
    path = (msg.get("path") or "").split("?")[0]
    return (f"api {path} {kind}", frozenset({f"last_message.role={role}"}))


def by_kind(shapes):
    """kind -> (count, union of fields, intersection of fields)."""
    acc = OrderedDict()
    for _, kind, fields in shapes:
        n, union, inter = acc.get(kind, (0, set(), None))
        acc[kind] = (n + 1, union | fields, set(fields) if inter is None else inter & fields)
    return acc


def diff_shapes(a, b):
    """Differences between two shape lists: dict with kinds only in a/b, count changes,
    fields only in a/b per common kind, and the kind sequence diff."""
    ka, kb = by_kind(a), by_kind(b)
    res = {
        "only_a": [k for k in ka if k not in kb],
        "only_b": [k for k in kb if k not in ka],
        # how often the CLI calls the API (count_tokens, side calls) is noise: not counted
        "counts": [(k, ka[k][0], kb[k][0]) for k in ka
                   if k in kb and ka[k][0] != kb[k][0] and not k.startswith("api ")],
        "fields": [],
    }
    for k in ka:
        if k in kb:
            fa, fb = ka[k][1], kb[k][1]
            if fa != fb:
                res["fields"].append((k, sorted(fa - fb), sorted(fb - fa)))
    seq_a = [k for _, k, _ in a if not k.startswith("api ")]
    seq_b = [k for _, k, _ in b if not k.startswith("api ")]
    res["sequence"] = [
        line for line in difflib.unified_diff(seq_a, seq_b, "A", "B", n=1, lineterm="")
    ][2:]
    return res


def is_empty(d):
    return not (d["only_a"] or d["only_b"] or d["counts"] or d["fields"])


def md_scenario(name, d, label_a, label_b, out):
    if is_empty(d):
        out.append(f"### {name}: same kinds and fields" + (" (order differs)" if d["sequence"] else "") + "\n")
        return
    out.append(f"### {name}\n")
    if d["only_a"]:
        out.append(f"* kinds only in {label_a}: " + ", ".join(f"`{k}`" for k in d["only_a"]))
    if d["only_b"]:
        out.append(f"* kinds only in {label_b}: " + ", ".join(f"`{k}`" for k in d["only_b"]))
    for k, na, nb in d["counts"]:
        out.append(f"* `{k}`: {na} in {label_a}, {nb} in {label_b}")
    for k, fa, fb in d["fields"]:
        parts = []
        if fa:
            parts.append(f"only in {label_a}: " + ", ".join(f"`{f}`" for f in fa))
        if fb:
            parts.append(f"only in {label_b}: " + ", ".join(f"`{f}`" for f in fb))
        out.append(f"* `{k}` fields — " + "; ".join(parts))
    if d["sequence"] and (d["only_a"] or d["only_b"] or d["counts"]):
        out.append("\n  order of CLI messages (unified diff, A → B):\n")
        out.append("  ```diff")
        out.extend("  " + line for line in d["sequence"][:60])
        if len(d["sequence"]) > 60:
            out.append(f"  … {len(d['sequence']) - 60} more lines")
        out.append("  ```")
    out.append("")


def scenario_name(path):
    """Scenario of a transcript file: the captures' own name, or for tap files
    `<test-thread>-<pid>-<n>.jsonl` the test name plus the spawn's index within the test."""
    base = os.path.basename(path)[: -len(".jsonl")]
    m = re.match(r"^(.*)-(\d+)-(\d+)$", base)
    return m.group(1) if m else base


def pair_dir(d):
    groups = defaultdict(list)
    for f in sorted(os.listdir(d)):
        if f.endswith(".jsonl"):
            p = os.path.join(d, f)
            name = scenario_name(p)
            if name in ("tokio-rt-worker", "unnamed"):
                continue  # spawned off the test's thread: cannot be paired by name
            groups[name].append(p)
    out = {}
    for name, files in groups.items():
        # order the spawns of one test by their counter
        files.sort(key=lambda p: int(re.search(r"-(\d+)\.jsonl$", p).group(1)) if re.search(r"-(\d+)-(\d+)\.jsonl$", p) else 0)
        for i, p in enumerate(files):
            out[name if len(files) == 1 else f"{name}#{i}"] = p
    return out


def version_of(transcript):
    for rec in transcript:
        msg = rec.get("msg")
        if rec.get("dir") == "<-cli" and isinstance(msg, dict):
            v = msg.get("claude_code_version") or ((msg.get("response") or {}).get("response") or {}).get(
                "claude_code_version")
            if v:
                return v
    return None


def cmd_shape(args):
    t = load(args.file)
    for seq, kind, fields in cli_shapes(t):
        print(f"{seq:>4} {kind}  {{{', '.join(sorted(fields))}}}")


def cmd_diff(args):
    a, b = load(args.a), load(args.b)
    la = args.label_a or f"A ({version_of(a) or '?'})"
    lb = args.label_b or f"B ({version_of(b) or '?'})"
    out = [f"# Wire-shape diff: {args.a} ({la}) vs {args.b} ({lb})\n"]
    ma, mb = meta(a), meta(b)
    if ma.get("argv") != mb.get("argv"):
        out.append(f"(argv differ: {ma.get('argv')} vs {mb.get('argv')})\n")
    md_scenario(scenario_name(args.a), diff_shapes(cli_shapes(a), cli_shapes(b)), la, lb, out)
    print("\n".join(out))


def cmd_diffdir(args):
    pa, pb = pair_dir(args.a), pair_dir(args.b)
    la, lb = args.label_a or "A", args.label_b or "B"
    common = [n for n in pa if n in pb]
    out = [f"# Wire-shape report: {la} vs {lb}\n",
           f"{len(common)} scenarios in both; {len(set(pa) - set(pb))} only in {la}; "
           f"{len(set(pb) - set(pa))} only in {lb}.\n"]
    # 1. union over all scenarios: which kinds / fields appear in one version only
    all_a = [s for n in common for s in cli_shapes(load(pa[n]))]
    all_b = [s for n in common for s in cli_shapes(load(pb[n]))]
    tot = diff_shapes(all_a, all_b)
    out.append("## Summary over all common scenarios\n")
    if tot["only_a"]:
        out.append(f"* kinds only {la} wrote: " + ", ".join(f"`{k}`" for k in tot["only_a"]))
    if tot["only_b"]:
        out.append(f"* kinds only {lb} wrote: " + ", ".join(f"`{k}`" for k in tot["only_b"]))
    for k, fa, fb in tot["fields"]:
        parts = []
        if fa:
            parts.append(f"only {la}: " + ", ".join(f"`{f}`" for f in fa))
        if fb:
            parts.append(f"only {lb}: " + ", ".join(f"`{f}`" for f in fb))
        out.append(f"* `{k}` — " + "; ".join(parts))
    if is_empty(tot):
        out.append("* no difference in kinds or fields")
    out.append("\n## Per scenario\n")
    same = []
    known = {k: (set(fa), set(fb)) for k, fa, fb in tot["fields"]}
    for n in common:
        d = diff_shapes(cli_shapes(load(pa[n])), cli_shapes(load(pb[n])))
        # field differences already in the summary are not repeated per scenario
        rest = []
        for k, fa, fb in d["fields"]:
            ka, kb = known.get(k, (set(), set()))
            fa2, fb2 = [f for f in fa if f not in ka], [f for f in fb if f not in kb]
            if fa2 or fb2:
                rest.append((k, fa2, fb2))
        d["fields"] = rest
        if is_empty(d):
            same.append(n)
            continue
        md_scenario(n, d, la, lb, out)
    if same:
        out.append(f"### No difference beyond the summary ({len(same)}): " + ", ".join(same) + "\n")
    for n in sorted(set(pa) - set(pb)):
        out.append(f"* only in {la}: {n}")
    for n in sorted(set(pb) - set(pa)):
        out.append(f"* only in {lb}: {n}")
    text = "\n".join(out) + "\n"
    if args.o:
        with open(args.o, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("shape"); s.add_argument("file"); s.set_defaults(f=cmd_shape)
    for name, f in (("diff", cmd_diff), ("diffdir", cmd_diffdir)):
        s = sub.add_parser(name); s.add_argument("a"); s.add_argument("b")
        s.add_argument("--label-a"); s.add_argument("--label-b"); s.add_argument("-o")
        s.set_defaults(f=f)
    ap.add_argument("--no-api", action="store_true", help="ignore the requests to the model API")
    args = ap.parse_args()
    global WITH_API
    WITH_API = not args.no_api
    args.f(args)


if __name__ == "__main__":
    main()
