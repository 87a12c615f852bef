#!/usr/bin/env python3
"""Replays a recorded transcript against another Claude Code CLI and records the new one.

    replay.py CAPTURE.jsonl CLI OUT.jsonl [--mock-serve PATH]

* The model: every assistant turn of the capture (the `<-cli` `assistant` messages, grouped
  by `message.id`) becomes a scripted turn of the testkit's `MockModel` (served by the
  devtools binary `mock-serve`), with the same content blocks and tool-use ids.
* The CLI is started with the capture's argv and environment overrides, except
  `ANTHROPIC_BASE_URL` (the mock), `CLAUDE_CONFIG_DIR` and the working folder (fresh
  temporary folders).
* The SDK side: messages the capture's SDK started (`->cli` user messages, control requests,
  keep_alive, closing stdin) are sent in the same order, each once the new CLI has written
  the message that preceded it in the capture (its *anchor*: the answer to the same SDK
  request, the n-th result, the n-th CLI request of the same kind) or after a timeout.
  Requests the CLI sends (mcp_message, can_use_tool, hook_callback, …) are answered with the
  capture's answer to the request of the same kind (subtype, server, JSON-RPC method, tool,
  hook callback id), in order, with the new request id (and JSON-RPC id) and the same delay.
  A request the capture left unanswered stays unanswered.

The output has the capture's format (`meta`, `->cli`, `<-cli`, `stderr`, `api` lines), so
`wire_shape.py diff CAPTURE OUT` compares the two.
"""
from __future__ import annotations

import argparse
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict, deque

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wire_shape  # noqa: E402

ANCHOR_TIMEOUT = 20.0
EXIT_TIMEOUT = 30.0


def turns_of(capture):
    """Scripted model turns: the capture's assistant messages grouped by message id."""
    turns, last_id = [], None
    for rec in capture:
        m = rec.get("msg")
        if rec.get("dir") != "<-cli" or not isinstance(m, dict):
            continue
        if m.get("type") == "system" and m.get("subtype") == "api_retry":
            # the API failed once, the retry succeeded
            turns.append({"error": {"status": m.get("error_status") or 500, "once": True}})
            last_id = None
            continue
        if m.get("type") != "assistant":
            continue
        if m.get("is_api_error_message") or (m.get("message") or {}).get("model") == "<synthetic>":
            # the CLI's own message for an API error it gave up on
            text = "".join(b.get("text", "") for b in (m.get("message") or {}).get("content") or [])
            status = re.search(r"API Error: (\d{3})", text)
            turns.append({"error": {"status": int(status.group(1)) if status else 500,
                                    "message": text.split(" ", 3)[-1] if status else text}})
            last_id = None
            continue
        if m.get("parent_tool_use_id"):
            continue  # a subagent's turn; not replayed
        msg = m.get("message") or {}
        blocks = [b for b in msg.get("content") or [] if isinstance(b, dict)]
        if msg.get("id") == last_id and turns:
            turns[-1]["blocks"].extend(blocks)
        else:
            turns.append({"blocks": blocks})
            last_id = msg.get("id")
    for t in turns:
        if "error" in t:
            continue
        # text, tool_use and thinking are streamed as such; other blocks (server_tool_use,
        # web_search_tool_result, redacted_thinking, …) are sent raw
        t["blocks"] = [b for b in t["blocks"] if b.get("type")]
        t["stop_reason"] = "tool_use" if any(b["type"] == "tool_use" for b in t["blocks"]) else "end_turn"
    return turns


def request_key(req):
    """How a CLI request is matched with the capture's: most specific first."""
    sub = req.get("subtype")
    keys = []
    if sub == "mcp_message":
        inner = req.get("message") or {}
        keys.append((sub, req.get("server_name"), inner.get("method"), (inner.get("params") or {}).get("name")))
        keys.append((sub, req.get("server_name"), inner.get("method")))
    elif sub == "can_use_tool":
        keys.append((sub, req.get("tool_name")))
        return keys  # never answer one JSON-RPC method with another's answer
    elif sub == "hook_callback":
        keys.append((sub, req.get("callback_id")))
    keys.append((sub,))
    return keys


class Responder:
    """The capture's answers to the CLI's requests, by kind, in order."""

    def __init__(self, capture):
        asked = {}  # request_id -> (request, t)
        self.answers = defaultdict(deque)
        self.unanswered = defaultdict(int)
        answered = set()
        for rec in capture:
            m = rec.get("msg")
            if not isinstance(m, dict):
                continue
            if rec["dir"] == "<-cli" and m.get("type") == "control_request":
                asked[m.get("request_id")] = (m.get("request") or {}, rec.get("t", 0))
            elif rec["dir"] == "->cli" and m.get("type") == "control_response":
                rid = (m.get("response") or {}).get("request_id")
                if rid in asked:
                    req, t0 = asked[rid]
                    delay = max(0.0, rec.get("t", 0) - t0)
                    answered.add(rid)
                    for k in request_key(req):
                        self.answers[k].append((m, delay, id(m)))
        for rid, (req, _) in asked.items():
            if rid not in answered:
                self.unanswered[request_key(req)[0]] += 1
        self.used = set()
        self.last = {}

    def answer(self, req):
        """The next unused answer of the most specific kind; when the CLI asks more often
        than the capture did, the last answer of that kind again."""
        for k in request_key(req):
            q = self.answers.get(k)
            while q:
                m, delay, ident = q[0]
                if ident in self.used:
                    self.last[k] = (m, delay)
                    q.popleft()
                    continue
                self.used.add(ident)
                self.last[k] = (m, delay)
                q.popleft()
                return m, delay
        for k in request_key(req):
            if k in self.last:
                return self.last[k]
        return None, 0.0


def restamp(resp, request_id, req):
    out = json.loads(json.dumps(resp))
    out["response"]["request_id"] = request_id
    inner = (out["response"].get("response") or {}).get("mcp_response")
    if isinstance(inner, dict) and "id" in inner:
        inner["id"] = (req.get("message") or {}).get("id")
    return out


def anchor_of(capture, index, sdk_req_ordinal):
    """What the new CLI must have written before the SDK action at `index` is replayed:
    ("resp", k) = the answer to the SDK's k-th control request; ("kind", kind, n) = the
    n-th CLI message of that kind; None = nothing."""
    counts = defaultdict(int)
    last = None
    sdk_requests = {}
    for rec in capture[:index]:
        m = rec.get("msg")
        if rec.get("dir") == "->cli" and isinstance(m, dict) and m.get("type") == "control_request":
            sdk_requests[m.get("request_id")] = (m.get("request") or {}).get("subtype")
        if rec.get("dir") != "<-cli" or not isinstance(m, dict):
            continue
        t = m.get("type")
        if t == "control_response":
            rid = (m.get("response") or {}).get("request_id")
            if rid in sdk_req_ordinal:
                last = ("resp", sdk_req_ordinal[rid])
        elif t == "result":
            counts["result"] += 1
            last = ("kind", "result", counts["result"])
        elif t == "control_request":
            kind = wire_shape.shape(m, sdk_requests)[0]
            counts[kind] += 1
            last = ("kind", kind, counts[kind])
        elif t == "system" and m.get("subtype") == "init":
            counts["system/init"] += 1
            last = ("kind", "system/init", counts["system/init"])
    return last


class Run:
    def __init__(self, capture, cli, out_path, mock_serve):
        self.capture = capture
        self.meta = wire_shape.meta(capture)
        self.out = open(out_path, "w", encoding="utf-8")
        self.t0 = time.time()
        self.seq = 0
        self.lock = threading.Lock()
        self.cond = threading.Condition(self.lock)
        self.responder = Responder(capture)
        # state the anchors wait on
        self.resp_ordinals = set()   # ordinals of our SDK requests answered
        self.kind_counts = defaultdict(int)
        self.our_req_ordinal = {}    # our request_id -> ordinal
        self.our_req_subtype = {}
        self.eof = False
        self.tmp = tempfile.mkdtemp(prefix="replay-")
        turns = turns_of(capture)
        turns_path = os.path.join(self.tmp, "turns.json")
        with open(turns_path, "w") as f:
            json.dump(turns, f)
        self.mock = subprocess.Popen([mock_serve, turns_path], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        self.url = self.mock.stdout.readline().strip()
        cfg = os.path.join(self.tmp, "config")
        cwd = os.path.join(self.tmp, "project")
        os.makedirs(cfg)
        os.makedirs(cwd)
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("CLAUDE", "ANTHROPIC")) and k not in ("NODE_OPTIONS", "DEBUG")}
        for k, v in (self.meta.get("env_overrides") or {}).items():
            if v is None:
                env.pop(k, None)  # the capture removed it
            else:
                env[k] = v
        env.update(ANTHROPIC_BASE_URL=self.url, CLAUDE_CONFIG_DIR=cfg, NO_PROXY="127.0.0.1,localhost")
        argv = [cli] + list(self.meta.get("argv") or [])
        self.record("meta", {"scenario": self.meta.get("scenario"), "replayed_from": True,
                             "argv": argv[1:], "env_overrides": {k: env.get(k) for k in (self.meta.get("env_overrides") or {})},
                             "cli": cli, "turns": len(turns)})
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=env, cwd=cwd)
        threading.Thread(target=self.read_stdout, daemon=True).start()
        threading.Thread(target=self.read_stderr, daemon=True).start()

    def record(self, d, msg):
        with self.lock:
            line = {"seq": self.seq, "t": round(time.time() - self.t0, 3), "dir": d, "msg": msg}
            self.seq += 1
            self.out.write(json.dumps(line) + "\n")
            self.out.flush()

    def send(self, msg):
        self.record("->cli", msg)
        try:
            self.proc.stdin.write((json.dumps(msg) + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError, OSError) as e:
            self.record("meta", {"note": f"write failed: {e}"})

    def read_stderr(self):
        for line in self.proc.stderr:
            self.record("stderr", line.decode(errors="replace").rstrip("\n"))

    def read_stdout(self):
        for raw in self.proc.stdout:
            raw = raw.strip()
            if not raw:
                continue
            try:
                m = json.loads(raw)
            except json.JSONDecodeError:
                self.record("<-cli", raw.decode(errors="replace"))
                continue
            self.record("<-cli", m)
            if not isinstance(m, dict):
                continue
            t = m.get("type")
            with self.cond:
                if t == "control_response":
                    rid = (m.get("response") or {}).get("request_id")
                    if rid in self.our_req_ordinal:
                        self.resp_ordinals.add(self.our_req_ordinal[rid])
                elif t == "result":
                    self.kind_counts["result"] += 1
                elif t == "control_request":
                    kind = wire_shape.shape(m, self.our_req_subtype)[0]
                    self.kind_counts[kind] += 1
                elif t == "system" and m.get("subtype") == "init":
                    self.kind_counts["system/init"] += 1
                self.cond.notify_all()
            if t == "control_request":
                req = m.get("request") or {}
                resp, delay = self.responder.answer(req)
                if resp is None:
                    self.record("meta", {"note": f"no recorded answer for {request_key(req)[0]}"})
                    continue
                out = restamp(resp, m.get("request_id"), req)
                if delay > 0.2:
                    threading.Timer(min(delay, 60.0), self.send, args=(out,)).start()
                else:
                    self.send(out)
        with self.cond:
            self.eof = True
            self.cond.notify_all()
        self.record("meta", {"note": "stdout EOF"})

    def wait_anchor(self, anchor):
        if anchor is None:
            return True
        deadline = time.time() + ANCHOR_TIMEOUT
        with self.cond:
            while True:
                if anchor[0] == "resp" and anchor[1] in self.resp_ordinals:
                    return True
                if anchor[0] == "kind" and self.kind_counts[anchor[1]] >= anchor[2]:
                    return True
                if self.eof:
                    return False
                left = deadline - time.time()
                if left <= 0:
                    return False
                self.cond.wait(left)

    def play(self):
        cap = self.capture
        cap_ordinal = {}
        n = 0
        for rec in cap:
            m = rec.get("msg")
            if rec.get("dir") == "->cli" and isinstance(m, dict) and m.get("type") == "control_request":
                n += 1
                cap_ordinal[m.get("request_id")] = n
        ours = 0
        prev_t = 0.0
        for i, rec in enumerate(cap):
            d, m = rec.get("dir"), rec.get("msg")
            closing = d == "meta" and isinstance(m, dict) and m.get("note", "").startswith("closing stdin")
            sdk_action = d == "->cli" and not (isinstance(m, dict) and m.get("type") == "control_response")
            if not (closing or sdk_action):
                continue
            anchor = anchor_of(cap, i, cap_ordinal)
            if not self.wait_anchor(anchor):
                self.record("meta", {"note": f"anchor {anchor} not reached within {ANCHOR_TIMEOUT}s; going on"})
            # keep deliberate pauses of the original SDK (e.g. keep_alive, then a user message)
            gap = rec.get("t", 0) - prev_t
            prev_t = rec.get("t", 0)
            if anchor is None and gap > 0.3:
                time.sleep(min(gap, 5.0))
            if closing:
                self.record("meta", {"note": "closing stdin (EOF)"})
                try:
                    self.proc.stdin.close()
                except OSError:
                    pass
                break
            if isinstance(m, dict) and m.get("type") == "control_request":
                ours += 1
                rid = f"req_{ours}_replay"
                m = dict(m, request_id=rid)
                with self.cond:
                    self.our_req_ordinal[rid] = ours
                    self.our_req_subtype[rid] = (m.get("request") or {}).get("subtype")
            self.send(m)
        try:
            rc = self.proc.wait(EXIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
            self.record("meta", {"note": "killed after the exit timeout"})
        time.sleep(0.2)
        self.record("meta", {"note": "process exited", "returncode": rc})
        self.mock.stdin.close()
        for line in self.mock.stdout:
            try:
                self.record("api", json.loads(line))
            except json.JSONDecodeError:
                pass
        self.mock.wait()
        self.out.close()
        shutil.rmtree(self.tmp, ignore_errors=True)
        return rc


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("capture")
    ap.add_argument("cli")
    ap.add_argument("out")
    ap.add_argument("--mock-serve", default=os.environ.get("MOCK_SERVE", "target/debug/mock-serve"),
                    help="the devtools binary mock-serve (default $MOCK_SERVE or target/debug/mock-serve)")
    args = ap.parse_args()
    capture = wire_shape.load(args.capture)
    t = time.time()
    rc = Run(capture, args.cli, args.out, args.mock_serve).play()
    print(f"{os.path.basename(args.capture)}: exit {rc} in {time.time() - t:.1f}s -> {args.out}")


if __name__ == "__main__":
    main()
