"""The official `openai` Python SDK reads `ladder sim`'s embeddings (compat/openai-sdk.sh).

usage: openai_sdk_embeddings.py BASE_URL REQUESTS_CSV BATCH PROMPT

- `client.embeddings.create(input=…)` parses the simulator's answer into the SDK's own models
  (`CreateEmbeddingResponse`, `Embedding`, `Usage`: pydantic, required fields and literals):
  one string, and a list of BATCH texts (one vector each, indexes 0..BATCH-1 in order).
- `encoding_format="float"`: lists of `embed_dimensions` floats; `dimensions=64`: 64 of them.
- The SDK's default (it asks for base64 and decodes it itself) gives the same floats as the float
  answer, and `encoding_format="base64"` the raw string, which decodes (little-endian float32)
  to the same values: the simulator's base64 is what the SDK expects.
- What `ladder run --api openai-embeddings` recorded for a batch of BATCH texts (REQUESTS_CSV):
  every request ok, input tokens equal to the SDK's `usage.prompt_tokens` for the same texts,
  output tokens 0, tokens from usage, no TTFT.
"""

import base64
import csv
import struct
import sys

import openai
from openai.types import CreateEmbeddingResponse

BASE, REQUESTS, BATCH, PROMPT = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
FAILED = []


def check(what, ok, detail=""):
    print(f"{'ok  ' if ok else 'FAIL'} {what}{': ' + detail if detail else ''}")
    if not ok:
        FAILED.append(what)


client = openai.OpenAI(base_url=BASE, api_key="sim", max_retries=0)

# 1. One text, floats.
one = client.embeddings.create(model="sim-model", input=PROMPT, encoding_format="float")
vec = one.data[0].embedding
check(
    f"embeddings.create(input=str, float): {type(one).__name__}, {len(one.data)} vector of {len(vec)} floats, prompt_tokens {one.usage.prompt_tokens}",
    isinstance(one, CreateEmbeddingResponse) and one.object == "list" and len(one.data) == 1
    and one.data[0].object == "embedding" and one.data[0].index == 0 and len(vec) == 384
    and all(isinstance(x, float) for x in vec)
    and one.usage.prompt_tokens > 0 and one.usage.total_tokens == one.usage.prompt_tokens,
)

# 2. A batch: one vector per text, in order.
batch = client.embeddings.create(model="sim-model", input=[PROMPT] * BATCH, encoding_format="float")
check(
    f"embeddings.create(input=[{BATCH} texts], float): indexes {[d.index for d in batch.data]}, prompt_tokens {batch.usage.prompt_tokens}",
    [d.index for d in batch.data] == list(range(BATCH)) and batch.data[0].embedding == vec,
)

# 3. dimensions.
small = client.embeddings.create(model="sim-model", input=PROMPT, dimensions=64, encoding_format="float")
check(f"dimensions=64: {len(small.data[0].embedding)} floats", len(small.data[0].embedding) == 64)

# 4. base64: the SDK's default decodes it; explicit base64 is the raw little-endian float32s.
default = client.embeddings.create(model="sim-model", input=PROMPT)
check(
    "the SDK's default (base64 asked for and decoded by the SDK): the same floats as the float answer",
    len(default.data[0].embedding) == 384
    and all(abs(a - b) < 1e-6 for a, b in zip(default.data[0].embedding, vec)),
)
raw = client.embeddings.create(model="sim-model", input=[PROMPT] * 2, encoding_format="base64")
blob = raw.data[1].embedding
floats = struct.unpack(f"<{len(base64.b64decode(blob)) // 4}f", base64.b64decode(blob))
check(
    f"encoding_format=base64: a string of {len(blob)} characters, {len(floats)} little-endian float32s",
    isinstance(blob, str) and len(floats) == 384
    and all(abs(a - b) < 1e-6 for a, b in zip(floats, batch.data[1].embedding)),
)

# 5. What ladder recorded for the same batch.
rows = list(csv.DictReader(open(REQUESTS, newline="")))
ok_rows = [r for r in rows if r["status"] == "ok"]
ins = {r["input_tokens"] for r in ok_rows}
check(
    f"ladder run recorded {len(ok_rows)}/{len(rows)} ok, input tokens {sorted(ins)}, output "
    f"{sorted({r['output_tokens'] for r in ok_rows})}; the SDK read prompt_tokens {batch.usage.prompt_tokens} for the same {BATCH} texts",
    rows and len(ok_rows) == len(rows) and ins == {str(batch.usage.prompt_tokens)}
    and {r["output_tokens"] for r in ok_rows} == {"0"}
    and {r["tokens_source"] for r in ok_rows} == {"usage"}
    and {r["ttft_ms"] for r in ok_rows} == {""},
)

print(f"openai {openai.__version__} embeddings: {len(FAILED)} failed")
sys.exit(1 if FAILED else 0)
