"""Small fixtures from real GuideLLM and AIPerf outputs (compat/peers.sh, PEERS_FIXTURES=DIR).

The tools' outputs are large (GuideLLM keeps each prompt, answer and request body: ~13 kB a
request); the fixtures under scenarios/logs/peers/ keep every field `ladder logs` reads, with
the values the tool recorded, and drop the rest. Nothing is computed or rounded.

Usage: python peers_trim.py guidellm REPORT.json OUT.json
       python peers_trim.py aiperf RUN_DIR OUT_DIR
       python peers_trim.py vllm RESULT.json OUT.json
"""

import json
import os
import sys

GUIDELLM_REQUEST = [
    "request_start_time",
    "request_end_time",
    "request_latency",
    "time_to_first_token_ms",
    "inter_token_latency_ms",
    "time_per_output_token_ms",
    "prompt_tokens",
    "output_tokens",
]
AIPERF_METRICS = [
    "time_to_first_token",
    "request_latency",
    "inter_token_latency",
    "inter_chunk_latency",
    "input_sequence_length",
    "output_sequence_length",
    "usage_prompt_tokens",
    "usage_completion_tokens",
]
AIPERF_METADATA = ["request_start_ns", "request_end_ns", "benchmark_phase", "was_cancelled"]


def guidellm(src, out):
    with open(src) as f:
        doc = json.load(f)
    spec = doc["config"]["spec"]
    data = [{k: d.get(k) for k in ("kind", "prompt_tokens", "output_tokens")} for d in spec["data"]]
    slim = {
        "metadata": doc["metadata"],
        "config": {"spec": {"backend": {"model": spec["backend"]["model"]}, "data": data}},
        "benchmarks": [],
    }
    for b in doc["benchmarks"]:
        reqs = {}
        for kind in ("successful", "errored", "incomplete"):
            rows = []
            for r in b["requests"].get(kind) or []:
                row = {k: r.get(k) for k in GUIDELLM_REQUEST}
                if kind == "errored":
                    row["info"] = {"error": (r.get("info") or {}).get("error")}
                rows.append(row)
            reqs[kind] = rows
        slim["benchmarks"].append(
            {
                "type_": b["type_"],
                "config": {"strategy": b["config"]["strategy"]},
                "duration": b["duration"],
                "requests": reqs,
            }
        )
    with open(out, "w") as f:
        json.dump(slim, f, separators=(",", ":"))


def aiperf(src, out):
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(src, "profile_export_aiperf.json")) as f:
        summary = json.load(f)
    cfg = summary["input_config"]
    slim = {
        "schema_version": summary["schema_version"],
        "aiperf_version": summary["aiperf_version"],
        "benchmark_duration": summary["benchmark_duration"],
        "input_config": {
            "models": cfg["models"],
            "datasets": [{"prompts": d.get("prompts")} for d in cfg["datasets"]],
            "phases": [
                {k: p.get(k) for k in ("kind", "type", "concurrency", "requests")}
                for p in cfg["phases"]
            ],
        },
    }
    with open(os.path.join(out, "profile_export_aiperf.json"), "w") as f:
        json.dump(slim, f, indent=1)
    with open(os.path.join(src, "profile_export.jsonl")) as f, open(
        os.path.join(out, "profile_export.jsonl"), "w"
    ) as g:
        for line in f:
            rec = json.loads(line)
            row = {
                "metadata": {k: rec["metadata"].get(k) for k in AIPERF_METADATA},
                "metrics": {k: v for k, v in rec["metrics"].items() if k in AIPERF_METRICS},
            }
            if rec.get("error"):
                row["error"] = rec["error"]
            g.write(json.dumps(row, separators=(",", ":")) + "\n")


def vllm(src, out):
    with open(src) as f:
        doc = json.load(f)
    # The answers' texts are the only large field; ladder does not read them.
    doc.pop("generated_texts", None)
    with open(out, "w") as f:
        json.dump(doc, f, separators=(",", ":"))


if __name__ == "__main__":
    {"guidellm": guidellm, "aiperf": aiperf, "vllm": vllm}[sys.argv[1]](sys.argv[2], sys.argv[3])
