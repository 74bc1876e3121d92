"""`make compat` (issue 38, part 2): the request bodies of an agent's turns, checked by the
official SDKs' own request types. Two `ladder sim`s (one whose model calls the declared tool on
every answer, `tool_call_share=1`, one that never does) sit behind a small recording proxy; a
3-turn agent task runs through it in each dialect (chat, Anthropic Messages with `cache: auto`,
the Responses API), streamed and, with model calls, whole (`stream: false`). Every body ladder
sent must validate against the SDK's request TypedDicts through pydantic (`openai`'s
`CompletionCreateParamsStreaming` and `ChatCompletionMessageParam`, `ResponseCreateParams*` and
`ResponseInputParam`, `anthropic`'s `MessageCreateParams*` and `MessageParam`), with no field the
type does not know; later turns must carry the previous answer's call (the simulator's id, or a
synthetic one in the dialect's shape) and a result answering it.

Usage: agent_bodies.py LADDER WORKDIR
"""

import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request

import anthropic.types as at
import openai.types.chat as oc
import openai.types.responses as orr
from anthropic.types import message_create_params as amc
from openai.types.chat import completion_create_params as occ
from openai.types.responses import response_create_params as orc
from pydantic import TypeAdapter

LADDER, WORK = sys.argv[1], os.path.abspath(sys.argv[2])
CAPTURED = []
SIMS = {}


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Proxy(http.server.BaseHTTPRequestHandler):
    """`/s<share>/v1/...` goes to the simulator of that tool-call share, recorded on the way."""

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        share, rest = self.path.lstrip("/s").split("/", 1)
        CAPTURED.append(json.loads(body))
        req = urllib.request.Request(
            f"http://127.0.0.1:{SIMS[share]}/{rest}",
            data=body,
            headers={k: v for k, v in self.headers.items() if k.lower() != "host"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(req) as r:
                status, ctype, answer = r.status, r.headers.get("content-type"), r.read()
        except urllib.error.HTTPError as e:
            status, ctype, answer = e.code, e.headers.get("content-type"), e.read()
        self.send_response(status)
        self.send_header("content-type", ctype or "application/json")
        self.send_header("content-length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


def plain(v):
    """The validated value as plain dicts and lists; pydantic's lazy iterables (an `Iterable`
    field) are left as they are, and their items are validated by a list type of their own
    (walking them trips a pydantic-core panic on the SDKs' recursive types)."""
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [plain(x) for x in v]
    return v


def unknown(sent, kept, path="$"):
    """The fields of `sent` the type dropped (it knows no such field)."""
    out = []
    if isinstance(sent, dict) and isinstance(kept, dict):
        for k, v in sent.items():
            if k not in kept:
                out.append(f"{path}.{k}")
            else:
                out += unknown(v, kept[k], f"{path}.{k}")
    elif isinstance(sent, list) and isinstance(kept, list):  # an iterable left lazy: its own check
        for i, (a, b) in enumerate(zip(sent, kept)):
            out += unknown(a, b, f"{path}[{i}]")
    return out


def strictly(type_, value, what):
    kept = plain(TypeAdapter(type_).validate_python(value))
    extra = unknown(value, kept)
    if extra:
        raise AssertionError(f"{what}: fields the SDK type does not know: {extra}")


def check_openai_chat(b, stream):
    t = occ.CompletionCreateParamsStreaming if stream else occ.CompletionCreateParamsNonStreaming
    strictly(t, b, "chat body")
    strictly(list[oc.ChatCompletionMessageParam], b["messages"], "chat messages")
    calls = [c for m in b["messages"] for c in m.get("tool_calls") or []]
    strictly(list[oc.ChatCompletionMessageToolCallUnionParam], calls, "tool calls")
    answers = [m["tool_call_id"] for m in b["messages"] if m["role"] == "tool"]
    return [c["id"] for c in calls], answers


def check_anthropic(b, stream):
    t = amc.MessageCreateParamsStreaming if stream else amc.MessageCreateParamsNonStreaming
    strictly(t, b, "messages body")
    strictly(list[at.MessageParam], b["messages"], "messages")
    blocks = [x for m in b["messages"] if isinstance(m["content"], list) for x in m["content"]]
    strictly(list[at.ContentBlockParam], blocks, "content blocks")
    roles = [m["role"] for m in b["messages"]]
    assert all(a != b for a, b in zip(roles, roles[1:])), f"roles alternate: {roles}"
    last = b["messages"][-1]["content"]
    if isinstance(last, list):
        assert "cache_control" in last[-1], "cache: auto marks the latest block"
    calls = [x["id"] for x in blocks if x["type"] == "tool_use"]
    answers = [x["tool_use_id"] for x in blocks if x["type"] == "tool_result"]
    return calls, answers


def check_responses(b, stream):
    t = orc.ResponseCreateParamsStreaming if stream else orc.ResponseCreateParamsNonStreaming
    strictly(t, b, "responses body")
    items = b["input"] if isinstance(b["input"], list) else []
    strictly(orr.ResponseInputParam, items, "input items")
    calls = [i["call_id"] for i in items if i.get("type") == "function_call"]
    answers = [i["call_id"] for i in items if i.get("type") == "function_call_output"]
    return calls, answers


DIALECTS = {
    "openai-chat": (check_openai_chat, "call_"),
    "anthropic-messages": (check_anthropic, "toolu_"),
    "openai-responses": (check_responses, "call_"),
}


def run(api, share, stream):
    name = f"agent-{api}-{share}-{'stream' if stream else 'whole'}"
    cache = "  cache: auto\n" if api == "anthropic-messages" else ""
    yaml = (
        f"name: {name}\ntarget:\n  api: {api}\n  base_url: http://127.0.0.1:{PROXY}/s{share}/v1\n"
        f"  models: [sim-model]\nrequest:\n  system_file: system.txt\n"
        f"  prompt: Fix the failing test.\n  tools: tools.json\n  max_tokens: 16\n"
        f"  stream: {'true' if stream else 'false'}\n{cache}"
        f"load:\n  ladder: [1]\n  requests_per_worker: 3\n"
        f"  agent: {{turns: 3, tool_result_tokens: 30, tool_latency: 0s}}\n"
    )
    path = os.path.join(WORK, "scenarios", f"{name}.yaml")
    with open(path, "w") as f:
        f.write(yaml)
    CAPTURED.clear()
    subprocess.run([LADDER, "run", "--quiet", path], cwd=WORK, check=True,
                   stdout=subprocess.DEVNULL)
    bodies = list(CAPTURED)
    assert len(bodies) == 3, f"{name}: {len(bodies)} requests"
    check, prefix = DIALECTS[api]
    for turn, b in enumerate(bodies, 1):
        calls, answers = check(b, stream)
        assert len(calls) == turn - 1 and answers == calls, f"{name} turn {turn}: {calls} {answers}"
        for c in calls:
            assert c.startswith(prefix), f"{name}: call id {c}"
            # The simulator's own ids (`call_sim7`, `toolu_sim7`), or ladder's synthetic ones.
            assert ("sim" in c) == (share == "1"), f"{name}: call id {c}"
    print(f"ok   {name}: 3 turns, {len(calls)} calls answered, every body valid for the SDK")
    with open(os.path.join(WORK, f"{name}.bodies.json"), "w") as f:
        json.dump(bodies, f, indent=1)


os.makedirs(os.path.join(WORK, "scenarios"), exist_ok=True)
with open(os.path.join(WORK, "scenarios", "system.txt"), "w") as f:
    f.write("You are a coding agent.")
with open(os.path.join(WORK, "scenarios", "tools.json"), "w") as f:
    json.dump([{"type": "function", "function": {
        "name": "run_tests", "description": "Runs the tests",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}], f)
procs = []
try:
    for share in ("0", "1"):
        SIMS[share] = free_port()
        procs.append(subprocess.Popen(
            [LADDER, "sim", "--quiet", "--port", str(SIMS[share]), "--set", "ttft=5ms",
             "--set", "tpot=1ms", "--set", "output_tokens=6", "--set", f"tool_call_share={share}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    for port in SIMS.values():
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models")
                break
            except OSError:
                time.sleep(0.1)
    PROXY = free_port()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", PROXY), Proxy)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    for api in DIALECTS:
        for share, stream in (("1", True), ("1", False), ("0", True)):
            run(api, share, stream)
finally:
    for p in procs:
        p.terminate()
        p.wait()
