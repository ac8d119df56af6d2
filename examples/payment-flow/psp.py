#!/usr/bin/env python3
"""A card processor for the payment-flow example: charges, with Stripe-style idempotency keys.

POST /v1/charges {"payment", "amount", "currency"} charges once per call, or, with an
`Idempotency-Key` header it has seen before, answers that key's first charge again
(`"replayed": true`) and charges nothing. GET /v1/charges lists every charge; POST /v1/reset
forgets them. Standard library only; run.py starts it on 127.0.0.1:8643 (coldbrew.yaml's
`dependencies.psp.upstream`).
"""

import argparse
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Processor:
    def __init__(self):
        self.lock = threading.Lock()
        self.charges = []
        self.by_key = {}

    def charge(self, body, key):
        with self.lock:
            if key and key in self.by_key:
                return dict(self.by_key[key], replayed=True)
            c = {"id": f"ch_{len(self.charges) + 1:06d}", "payment": body.get("payment"),
                 "amount": body.get("amount"), "currency": body.get("currency"),
                 "replayed": False}
            self.charges.append(c)
            if key:
                self.by_key[key] = c
            return c

    def reset(self):
        with self.lock:
            self.charges.clear()
            self.by_key.clear()


def make_handler(processor):
    class Handler(BaseHTTPRequestHandler):
        def _send(self, status, obj):
            data = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path == "/v1/charges":
                with processor.lock:
                    self._send(200, {"charges": list(processor.charges)})
            else:
                self._send(404, {"error": "not found"})

        def do_POST(self):
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            if self.path == "/v1/reset":
                processor.reset()
                self._send(200, {"reset": True})
                return
            if self.path != "/v1/charges":
                self._send(404, {"error": "not found"})
                return
            try:
                body = json.loads(raw or b"{}")
                if not isinstance(body, dict) or not isinstance(body.get("amount"), int):
                    raise ValueError("amount must be an integer")
            except ValueError as e:
                self._send(400, {"error": str(e)})
                return
            self._send(200, processor.charge(body, self.headers.get("idempotency-key")))

        def log_message(self, *args):
            pass

    return Handler


def serve(port, processor=None):
    """Starts the processor on a daemon thread; returns (server, processor)."""
    processor = processor or Processor()
    server = ThreadingHTTPServer(("127.0.0.1", port), make_handler(processor))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, processor


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=8643)
    args = ap.parse_args()
    server, _ = serve(args.port)
    print(f"card processor on http://127.0.0.1:{args.port}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.shutdown()
