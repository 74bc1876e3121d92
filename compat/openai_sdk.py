"""The official `openai` Python SDK reads `ladder sim`'s Responses API (compat/openai-sdk.sh).

usage: openai_sdk.py BASE_URL REASONING_BASE_URL RECORDED_DIR REQUESTS_CSV TOOLS_BASE_URL

- Every event of the recorded raw streams (RECORDED_DIR/*.sse, taken with curl: plain, cut at
  the limit, with streamed reasoning, failed mid-stream) validates against the SDK's own event
  models (pydantic: required fields and literals), is numbered 0, 1, 2, ... in order, and the
  stream ends with the terminal event it should.
- `client.responses.create(stream=True)` parses every event the simulator streams without error,
  plain and with streamed reasoning; the text of the deltas is the text of the final response.
- `client.responses.stream(...)`, the SDK's accumulating helper, rebuilds the same final
  response from the events (it follows output and content indices, so they must agree).
- `client.responses.create()` without streaming parses the whole response; a second one with
  `previous_response_id` continues the first (the simulator counts the stored conversation as
  input), and an unknown id is refused as the API refuses it.
- The SDK's text and usage agree with what `ladder run` recorded for the same request
  (REQUESTS_CSV: output and input tokens, finish reason).
- Tool calls (issue 38; TOOLS_BASE_URL is a simulator with `tool_call_share=1`): the recorded
  chat stream with a call (RECORDED_DIR/*.chat) validates chunk by chunk as the SDK's
  `ChatCompletionChunk`; `chat.completions.create(stream=True, tools=...)` and the SDK's
  accumulating `chat.completions.stream(...)` rebuild one call whose arguments are JSON, with
  `finish_reason: tool_calls`; the Responses API's `create(stream=True)` and `responses.stream()`
  end with a `function_call` output item whose arguments are the deltas joined.
"""

import csv
import json
import pathlib
import sys

import typing

import openai
from openai.types.chat import ChatCompletionChunk
from openai.types.responses import Response, ResponseStreamEvent

BASE, REASONING_BASE, RECORDED, REQUESTS, TOOLS_BASE = sys.argv[1:6]
# The SDK's model of each event type, from the union it declares (validated by type, so that a
# failure names the fields of that event rather than of every member of the union).
UNION = typing.get_args(typing.get_args(ResponseStreamEvent)[0])
MODELS = {typing.get_args(m.model_fields["type"].annotation)[0]: m for m in UNION}
PROMPT = "Say hello."
FAILED = []


def check(what, ok, detail=""):
    print(f"{'ok  ' if ok else 'FAIL'} {what}{': ' + detail if detail else ''}")
    if not ok:
        FAILED.append(what)


def sse_events(text):
    """(event name, data) of each block of a raw event stream."""
    for block in text.split("\n\n"):
        name, data = None, []
        for line in block.splitlines():
            if line.startswith("event: "):
                name = line[len("event: "):]
            elif line.startswith("data: "):
                data.append(line[len("data: "):])
        if data:
            yield name, "\n".join(data)


# 1. The recorded streams, validated event by event with the SDK's models.
for path in sorted(pathlib.Path(RECORDED).glob("*.sse")):
    types, errors = [], []
    for i, (name, data) in enumerate(sse_events(path.read_text())):
        try:
            payload = json.loads(data)
            model = MODELS.get(payload.get("type"))
            if model is None:
                raise ValueError(f"type {payload.get('type')!r} is not a ResponseStreamEvent")
            event = model.model_validate(payload, strict=False)
        except Exception as e:  # noqa: BLE001 - every failure is reported
            errors.append(f"event {i} ({name}): {e}")
            continue
        types.append(event.type)
        if event.type != name or event.sequence_number != i:
            errors.append(f"event {i}: named {name}, type {event.type}, number {event.sequence_number}")
    last = types[-1] if types else None
    check(
        f"{path.name}: {len(types)} events validate as ResponseStreamEvent, numbered in order, ending {last}",
        not errors and last == ("response.failed" if path.stem == "failed" else "response.completed" if path.stem != "cut" else "response.incomplete"),
        "; ".join(errors[:3]),
    )

client = openai.OpenAI(base_url=BASE, api_key="sk-compat-not-a-real-key", max_retries=0)
reasoning_client = openai.OpenAI(base_url=REASONING_BASE, api_key="sk-compat-not-a-real-key", max_retries=0)


def streamed(c, **kw):
    """The SDK's events of one streamed answer: text deltas, reasoning deltas, the final response."""
    text, reasoning, final, types = [], [], None, []
    for event in c.responses.create(model="sim-model", input=PROMPT, stream=True, store=False, **kw):
        types.append(event.type)
        if event.type == "response.output_text.delta":
            text.append(event.delta)
        elif event.type == "response.reasoning_summary_text.delta":
            reasoning.append(event.delta)
        elif event.type in ("response.completed", "response.incomplete"):
            final = event.response
    return "".join(text), "".join(reasoning), final, types


# 2. responses.create(stream=True): plain, cut at the limit, with streamed reasoning.
text, _, final, types = streamed(client, max_output_tokens=32)
check(
    f"create(stream=True): {len(types)} events parsed, text {text!r}",
    final is not None and final.status == "completed" and final.output_text == text and text,
)
sdk_usage = final.usage if final else None
text, _, final, _ = streamed(client, max_output_tokens=3)
check(
    "create(stream=True) cut at max_output_tokens: response.incomplete, reason max_output_tokens",
    final is not None and final.status == "incomplete"
    and final.incomplete_details.reason == "max_output_tokens" and final.usage.output_tokens == 3,
)
text, reasoning, final, types = streamed(reasoning_client, max_output_tokens=32, reasoning={"effort": "low", "summary": "auto"})
first_reasoning = types.index("response.reasoning_summary_text.delta")
first_text = types.index("response.output_text.delta")
check(
    f"create(stream=True) with streamed reasoning: summary {reasoning!r} before the text, reasoning tokens counted",
    final is not None and first_reasoning < first_text and reasoning
    and final.usage.output_tokens_details.reasoning_tokens > 0
    and final.output[0].type == "reasoning" and final.output_text == text,
)

# 3. The SDK's accumulating helper rebuilds the final response from the events.
with reasoning_client.responses.stream(model="sim-model", input=PROMPT, max_output_tokens=32) as stream:
    for _ in stream:
        pass
    helper = stream.get_final_response()
check(
    f"responses.stream(): final response {helper.output_text!r}",
    helper.status == "completed" and helper.output_text == text and len(helper.output) == 2,
)

# 4. Without streaming: the whole response.
whole = client.responses.create(model="sim-model", input=PROMPT, max_output_tokens=32, store=False)
check(
    f"create() without streaming: {type(whole).__name__}, {whole.usage.output_tokens} output tokens",
    isinstance(whole, Response) and whole.output_text and whole.usage.output_tokens > 0,
)

# 5. A chained turn: previous_response_id continues a stored response (session.chain).
first = client.responses.create(model="sim-model", input=PROMPT, max_output_tokens=32, store=True)
second = client.responses.create(
    model="sim-model", input=PROMPT, max_output_tokens=32, store=True, previous_response_id=first.id
)
u1, u2 = first.usage, second.usage
check(
    f"previous_response_id={first.id}: input {u2.input_tokens} = the stored {u1.input_tokens + u1.output_tokens} + the new turn's {u1.input_tokens}",
    u2.input_tokens == 2 * u1.input_tokens + u1.output_tokens,
)
try:
    client.responses.create(model="sim-model", input=PROMPT, previous_response_id="resp_never_stored")
    check("an unknown previous_response_id is refused", False)
except openai.BadRequestError as e:
    check(f"an unknown previous_response_id is refused: {e.message}", "not found" in e.message)

# 6. What ladder recorded for the same request.
rows = list(csv.DictReader(open(REQUESTS, newline="")))
ok_rows = [r for r in rows if r["status"] == "ok"]
outs = {r["output_tokens"] for r in ok_rows}
ins = {r["input_tokens"] for r in ok_rows}
finishes = {r["finish_reason"] for r in ok_rows}
check(
    f"ladder run recorded {len(ok_rows)}/{len(rows)} ok, output tokens {sorted(outs)}, input tokens "
    f"{sorted(ins)}, finish {sorted(finishes)}; the SDK read {sdk_usage.output_tokens if sdk_usage else None} "
    f"and {sdk_usage.input_tokens if sdk_usage else None}",
    rows and len(ok_rows) == len(rows) and sdk_usage is not None
    and outs == {str(sdk_usage.output_tokens)} and ins == {str(sdk_usage.input_tokens)}
    and finishes == {"stop"} and {r["tokens_source"] for r in ok_rows} == {"usage"},
)

# 7. Tool calls (issue 38): chat's recorded chunks, then the SDK's own readers, chat and Responses.
for path in sorted(pathlib.Path(RECORDED).glob("*.chat")):
    chunks, errors = [], []
    for i, (_, data) in enumerate(sse_events(path.read_text())):
        if data == "[DONE]":
            continue
        try:
            chunks.append(ChatCompletionChunk.model_validate(json.loads(data), strict=False))
        except Exception as e:  # noqa: BLE001 - every failure is reported
            errors.append(f"chunk {i}: {e}")
    calls = [t for c in chunks for ch in c.choices for t in (ch.delta.tool_calls or [])]
    check(
        f"{path.name}: {len(chunks)} chunks validate as ChatCompletionChunk, {len(calls)} tool-call deltas",
        not errors and calls and calls[0].id and calls[0].function.name == "get_weather",
        "; ".join(errors[:3]),
    )

TOOL = {"type": "function", "function": {"name": "get_weather", "description": "Weather of a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
FLAT = {"type": "function", "name": "get_weather", "description": "Weather of a city",
        "parameters": TOOL["function"]["parameters"]}
tools_client = openai.OpenAI(base_url=TOOLS_BASE, api_key="sk-compat-not-a-real-key", max_retries=0)
MESSAGES = [{"role": "user", "content": "Weather in Paris?"}]
args, finish, ids = [], None, set()
for chunk in tools_client.chat.completions.create(
    model="sim-model", messages=MESSAGES, tools=[TOOL], max_tokens=32, stream=True
):
    for ch in chunk.choices:
        for t in ch.delta.tool_calls or []:
            ids.add(t.id) if t.id else None
            args.append(t.function.arguments or "")
        finish = ch.finish_reason or finish
joined = "".join(args)
try:
    parsed = json.loads(joined)
except ValueError:
    parsed = None
check(
    f"chat create(stream=True, tools=...): one call {sorted(ids)}, arguments {joined!r}, finish {finish}",
    len(ids) == 1 and isinstance(parsed, dict) and finish == "tool_calls",
)
with tools_client.chat.completions.stream(
    model="sim-model", messages=MESSAGES, tools=[TOOL], max_tokens=32
) as stream:
    for _ in stream:
        pass
    completion = stream.get_final_completion()
call = (completion.choices[0].message.tool_calls or [None])[0]
check(
    f"chat.completions.stream(): the final message holds the call {call.function.name if call else None}({call.function.arguments if call else None})",
    call is not None and call.function.name == "get_weather" and json.loads(call.function.arguments) == parsed
    and completion.choices[0].finish_reason == "tool_calls",
)
deltas, final = [], None
for event in tools_client.responses.create(
    model="sim-model", input="Weather in Paris?", tools=[FLAT], max_output_tokens=32, stream=True, store=False
):
    if event.type == "response.function_call_arguments.delta":
        deltas.append(event.delta)
    elif event.type == "response.completed":
        final = event.response
item = final.output[-1] if final else None
check(
    f"responses create(stream=True, tools=...): function_call {item.name if item else None}({item.arguments if item else None})",
    item is not None and item.type == "function_call" and item.arguments == "".join(deltas)
    and isinstance(json.loads(item.arguments), dict),
)
with tools_client.responses.stream(
    model="sim-model", input="Weather in Paris?", tools=[FLAT], max_output_tokens=32
) as stream:
    for _ in stream:
        pass
    helper = stream.get_final_response()
check(
    f"responses.stream() with tools: final output {[o.type for o in helper.output]}",
    helper.output and helper.output[-1].type == "function_call"
    and helper.output[-1].arguments == item.arguments,
)

print(f"openai {openai.__version__}: {len(FAILED)} failed")
sys.exit(1 if FAILED else 0)
