"""Minimal OTLP/HTTP (protobuf) receiver for perfgraph-cli integration tests.

It stands in for an OpenTelemetry collector on 127.0.0.1 so tests can check
what the CLI exports. Usage:

    python receiver.py --out FILE [--status CODE] [--delay SECONDS] [--port PORT]

Once listening it prints exactly one line, ``port N``, to stdout, then serves
until killed. Every request appends one JSON line to FILE:

* decoded export:  {"path": "/v1/metrics", "bytes": N, "body": {...}}
  where body is MessageToDict(request, preserving_proto_field_name=True)
  (proto field names, int64/fixed64 values as strings);
* anything else:   {"path": ..., "method": ..., "status": ...} plus "error"
  for a body that failed to decode (answered 400).

POST /v1/metrics and /v1/traces are answered with --status (default 200) and
an empty serialized Export*ServiceResponse, after --delay seconds if given.
Other paths get 404, other methods 405.

Needs: pip install opentelemetry-proto protobuf
"""

import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf.json_format import MessageToDict
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

ROUTES = {
    "/v1/metrics": (ExportMetricsServiceRequest, ExportMetricsServiceResponse),
    "/v1/traces": (ExportTraceServiceRequest, ExportTraceServiceResponse),
}

_lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    opts = None  # argparse.Namespace, set in main()

    def record(self, entry):
        line = json.dumps(entry, sort_keys=True) + "\n"
        with _lock, open(self.opts.out, "a", encoding="utf-8") as f:
            f.write(line)
            f.flush()

    def reply(self, status, body=b"", ctype="application/x-protobuf"):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def read_body(self):
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def do_POST(self):
        body = self.read_body()
        route = ROUTES.get(self.path)
        if route is None:
            self.record({"path": self.path, "method": "POST", "status": 404})
            return self.reply(404, b"not found\n", "text/plain")
        req_cls, resp_cls = route
        msg = req_cls()
        try:
            msg.ParseFromString(body)
        except (DecodeError, ValueError) as e:
            self.record({"path": self.path, "method": "POST", "status": 400,
                         "error": f"{type(e).__name__}: {e}"})
            return self.reply(400, b"bad protobuf\n", "text/plain")
        self.record({"path": self.path, "bytes": len(body),
                     "body": MessageToDict(msg, preserving_proto_field_name=True)})
        if self.opts.delay:
            time.sleep(self.opts.delay)
        self.reply(self.opts.status, resp_cls().SerializeToString())

    def other_method(self):
        self.read_body()  # drain, keeps keep-alive connections sane
        self.record({"path": self.path, "method": self.command, "status": 405})
        self.reply(405, b"method not allowed\n", "text/plain")

    do_GET = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = other_method

    def log_message(self, fmt, *args):  # keep stderr quiet
        pass


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True, help="JSON-lines file to append to")
    p.add_argument("--status", type=int, default=200, help="HTTP status for exports")
    p.add_argument("--delay", type=float, default=0.0, help="seconds to wait before answering")
    p.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0 = any free)")
    Handler.opts = p.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", Handler.opts.port), Handler)
    server.daemon_threads = True
    print(f"port {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
