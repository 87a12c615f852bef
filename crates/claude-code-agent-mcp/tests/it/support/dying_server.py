"""A stdio MCP server that answers the handshake, then dies in the middle
of a `tools/call` in the way the tool's name says (`ok` just answers;
`cut` answers with a string cut mid-emoji, which json.dumps writes as a
lone surrogate escape; `broken` writes a line that is not JSON, then an
answer that is not JSON either, and goes on)."""
import json
import os
import signal
import subprocess
import sys

out = sys.stdout.buffer


def send(message):
    out.write(json.dumps(message).encode() + b"\n")
    out.flush()


def result(id, value):
    send({"jsonrpc": "2.0", "id": id, "result": value})


for line in sys.stdin.buffer:
    message = json.loads(line)
    method, id = message.get("method"), message.get("id")
    if id is None:
        continue
    if method == "initialize":
        result(id, {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                    "serverInfo": {"name": "dying", "version": "1"}})
        continue
    tool = message.get("params", {}).get("name")
    if method != "tools/call":
        send({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": method}})
    elif tool == "ok":
        result(id, {"content": [{"type": "text", "text": "ok"}]})
    elif tool == "cut":
        result(id, {"content": [{"type": "text", "text": "ab\ud83d"}]})
    elif tool == "broken":
        out.write(b"not json at all\n")
        out.write(b'{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"\\q"}]}}\n' % id)
        out.flush()
    elif tool == "exit":
        sys.stderr.write("giving up\n")
        sys.stderr.flush()
        os._exit(3)
    elif tool == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    elif tool == "garbage":
        out.write(b"this is not json\n")
        out.write(b"\xff\xfe\xfd not utf-8 \xc3\x28\n")
        out.write(b'{"jsonrpc":"2.0","id":%d,"result":{"content":[' % id)
        out.flush()
        os._exit(0)
    elif tool == "leftovers":
        # Both inherit stdout and stderr; one stays in the group, one leaves it.
        inside = subprocess.Popen(["sleep", "300"])
        outside = subprocess.Popen(["sleep", "300"], start_new_session=True)
        sys.stderr.write("helpers %d %d\n" % (inside.pid, outside.pid))
        sys.stderr.flush()
        os._exit(0)
