"""`make compat` (compat/otlp.sh): an OTLP/HTTP receiver that decodes what `ladder run --otlp`
sends with the official OTLP definitions (PyPI's opentelemetry-proto), protobuf and JSON
(json_format.Parse into the same messages: the JSON must follow the protobuf JSON mapping; trace
and span ids, which OTLP/JSON writes as hex where protobuf JSON has base64, are checked on the
raw JSON), then checks
metric names, units, attributes and counts against the run's requests.csv, and one span per
request whose trace id is the request id.

usage: python otlp_receiver.py LADDER SCENARIO OUT_DIR
"""
import csv
import glob
import json
import http.server
import os
import subprocess
import sys
import threading
from collections import Counter, defaultdict

from google.protobuf import json_format
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

GOT = []  # (path, content type, message)
RAW = []  # (path, body)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if self.path == "/v1/metrics":
            msg = metrics_service_pb2.ExportMetricsServiceRequest()
            resp = metrics_service_pb2.ExportMetricsServiceResponse()
        elif self.path == "/v1/traces":
            msg = trace_service_pb2.ExportTraceServiceRequest()
            resp = trace_service_pb2.ExportTraceServiceResponse()
        else:
            self.send_error(404)
            return
        if self.headers["Content-Type"] == "application/json":
            json_format.Parse(body, msg)  # raises on anything the OTLP JSON mapping refuses
            out, ctype = json_format.MessageToJson(resp).encode(), "application/json"
        else:
            msg.ParseFromString(body)
            out, ctype = resp.SerializeToString(), "application/x-protobuf"
        GOT.append((self.path, self.headers["Content-Type"], msg))
        RAW.append((self.path, body))
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args):
        pass


def attrs(kvs):
    out = {}
    for kv in kvs:
        v = kv.value
        out[kv.key] = v.string_value if v.HasField("string_value") else v.int_value
    return out


def check(run_dir, want_ctype, traces):
    rows = list(csv.DictReader(open(os.path.join(run_dir, "requests.csv"))))
    ok = Counter(r["step"] for r in rows if r["status"] == "ok")
    failed = Counter(r["step"] for r in rows if r["status"] != "ok")
    out_tokens = defaultdict(int)
    for r in rows:
        if r["status"] == "ok":
            out_tokens[r["step"]] += int(r["output_tokens"])
    metrics = [m for p, c, m in GOT if p == "/v1/metrics"]
    assert metrics, "no metrics export arrived"
    assert all(c == want_ctype for p, c, m in GOT), {c for _, c, _ in GOT}
    last = metrics[-1]
    rm = last.resource_metrics[0]
    assert attrs(rm.resource.attributes)["service.name"] == "ladder"
    by_name = {m.name: m for m in rm.scope_metrics[0].metrics}
    units = {
        "gen_ai.client.operation.duration": "s",
        "gen_ai.client.token.usage": "{token}",
        "gen_ai.client.operation.time_to_first_chunk": "s",
        "gen_ai.client.operation.time_per_output_chunk": "s",
        "ladder.client.requests": "{request}",
    }
    for name, unit in units.items():
        assert name in by_name, f"{name} missing: {sorted(by_name)}"
        assert by_name[name].unit == unit, (name, by_name[name].unit)
    run_id = os.path.basename(run_dir)
    for p in by_name["gen_ai.client.operation.duration"].histogram.data_points:
        a = attrs(p.attributes)
        for key in ("gen_ai.request.model", "gen_ai.provider.name", "gen_ai.operation.name",
                    "ladder.scenario", "ladder.step", "ladder.run_id"):
            assert key in a, (key, a)
        assert a["ladder.run_id"] == run_id and a["gen_ai.operation.name"] == "chat"
        step = str(a["ladder.step"])
        if "error.type" not in a:
            assert p.count == ok[step], (step, p.count, ok[step])
        assert sum(p.bucket_counts) == p.count
        assert len(p.bucket_counts) == len(p.explicit_bounds) + 1
    for p in by_name["gen_ai.client.token.usage"].histogram.data_points:
        a = attrs(p.attributes)
        if a["gen_ai.token.type"] == "output":
            assert p.sum == out_tokens[str(a["ladder.step"])], (a, p.sum)
    errors = Counter()
    for p in by_name["ladder.client.requests"].sum.data_points:
        a = attrs(p.attributes)
        if a["ladder.outcome"] != "ok":
            errors[str(a["ladder.step"])] += p.as_int
    assert errors == failed, (errors, failed)
    checked = f"{len(rows)} requests, {sum(failed.values())} failed, {len(metrics)} metrics exports"
    if traces:
        spans = [s for p, c, m in GOT if p == "/v1/traces"
                 for s in m.resource_spans[0].scope_spans[0].spans]
        ids = sorted(attrs(s.attributes)["ladder.request_id"] for s in spans)
        assert ids == sorted(r["request_id"] for r in rows), "spans differ from requests.csv"
        if want_ctype == "application/json":
            trace_ids = [s["traceId"] for p, body in RAW if p == "/v1/traces"
                         for s in json.loads(body)["resourceSpans"][0]["scopeSpans"][0]["spans"]]
        else:
            trace_ids = [s.trace_id.hex() for s in spans]
        assert sorted(trace_ids) == sorted(i.replace("-", "") for i in ids), "trace ids"
        checked += f", {len(spans)} spans"
    return checked


def main():
    ladder, scenario, out = sys.argv[1:4]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    for label, extra, ctype in [("protobuf", [], "application/x-protobuf"),
                                ("json", ["--otlp-json"], "application/json")]:
        GOT.clear()
        RAW.clear()
        subprocess.run([ladder, "run", scenario, "--quiet", "--out", out, "--otlp", url] + extra,
                       check=True, stdout=subprocess.DEVNULL)
        run_dir = sorted(glob.glob(os.path.join(out, "*", "*")))[-1]
        print(f"otlp {label}: decoded with opentelemetry-proto: " + check(run_dir, ctype, True))
    server.shutdown()


if __name__ == "__main__":
    main()
