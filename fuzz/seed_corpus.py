#!/usr/bin/env python3
"""Writes seed inputs for the fuzz targets from the CLI captures.

Usage: fuzz/seed_corpus.py CAPTURES_DIR OUT_DIR
Creates OUT_DIR/<target>/ for every target: `msg` fields of `<-cli` lines
(what the CLI writes on stdout) and the JSON-RPC `mcp_message` payloads, in
each target's input format. Run `cargo fuzz cmin` on the result.
"""
import glob, hashlib, json, os, sys

captures, out = sys.argv[1], sys.argv[2]
cli_lines, mcp = [], []
for path in sorted(glob.glob(os.path.join(captures, "*.jsonl"))):
    for raw in open(path, encoding="utf-8", errors="replace"):
        try:
            rec = json.loads(raw)
        except ValueError:
            continue
        msg = rec.get("msg")
        if rec.get("dir") != "<-cli" or not isinstance(msg, dict):
            continue
        line = json.dumps(msg, separators=(",", ":"), ensure_ascii=False).encode()
        if len(line) <= 8192:
            cli_lines.append(line)
        req = msg.get("request") if msg.get("type") == "control_request" else None
        if isinstance(req, dict) and req.get("subtype") == "mcp_message":
            payload = json.dumps(req.get("message"), separators=(",", ":")).encode()
            if len(payload) <= 8192:
                mcp.append(payload)

def write(target, data):
    d = os.path.join(out, target)
    os.makedirs(d, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)

cli_lines = list(dict.fromkeys(cli_lines))
mcp = list(dict.fromkeys(mcp))
for line in cli_lines:
    write("control_decoder", b"\x00" + line)
for line in mcp:
    write("control_decoder", b"\x00" + line)
# Streams of a few lines, with garbage and a CRLF, under several caps and chunkings.
for i in range(0, len(cli_lines), 4):
    group = cli_lines[i:i + 4]
    stream = b"\n".join(group) + b"\n[SandboxDebug] noise\r\n" + group[0][: len(group[0]) // 2]
    cap = (4, 6, 7)[(i // 4) % 3]
    write("ndjson_reader", bytes([cap, 3, 0, 7, 200]) + stream)
# Requests in batches, one per line.
for i in range(0, len(mcp), 3):
    write("server_handle", b"\n".join(mcp[i:i + 3]))
for i in range(0, len(mcp), 2):
    body = b"".join(b"event: message\r\nid: %d\r\ndata: %s\r\n\r\n" % (i + j, m) for j, m in enumerate(mcp[i:i + 2]))
    write("sse_parser", bytes([2, 5, 0]) + b": ping\n" + body + b"retry: 1000\n")
print({t: len(os.listdir(os.path.join(out, t))) for t in os.listdir(out)})
