#!/usr/bin/env python3
"""A plain local HTTP server for the data set, with byte ranges (RFC 9110 §14): what an
object store such as S3 answers to `GET` with `Range: bytes=a-b` (206 Partial Content) and
to `HEAD` (the size). Only this directory's data/ folder is served.

    python3 examples/fanout-etl/dataserver.py --port 8642
"""
import argparse
import http.server
import os
import re
import socketserver

HERE = os.path.dirname(os.path.abspath(__file__))
RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as SDKs use it
    root = os.path.join(HERE, "data")  # serve() gives each server its own

    def log_message(self, *args):  # quiet: the example prints its own figures
        pass

    def _file(self):
        name = self.path.split("?", 1)[0].lstrip("/")
        if not name or "/" in name or name.startswith("."):
            return None
        path = os.path.join(self.root, name)
        return path if os.path.isfile(path) else None

    def _headers(self, status, length, extra=()):
        self.send_response(status)
        self.send_header("Content-Length", str(length))
        self.send_header("Accept-Ranges", "bytes")
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()

    def _error(self, status, message):
        body = (message + "\n").encode()
        self._headers(status, len(body), [("Content-Type", "text/plain")])
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        path = self._file()
        if path is None:
            return self._error(404, "no such object")
        size = os.path.getsize(path)
        start, end, status, extra = 0, size - 1, 200, []
        spec = self.headers.get("Range")
        if spec:
            m = RANGE.match(spec.strip())
            if not m or (m.group(1) == "" and m.group(2) == ""):
                return self._error(416, "only one range of the form bytes=a-b is served")
            if m.group(1) == "":  # the last n bytes
                start, end = max(0, size - int(m.group(2))), size - 1
            else:
                start = int(m.group(1))
                end = min(int(m.group(2)), size - 1) if m.group(2) else size - 1
            if start >= size or start > end:
                self._headers(416, 0, [("Content-Range", f"bytes */{size}")])
                return
            status, extra = 206, [("Content-Range", f"bytes {start}-{end}/{size}")]
        self._headers(status, end - start + 1,
                      extra + [("Content-Type", "text/csv")])
        if self.command == "HEAD":
            return
        self.wfile.flush()
        with open(path, "rb") as f:
            # Zero-copy from the page cache: the server should not be what limits throughput.
            self.connection.sendfile(f, offset=start, count=end - start + 1)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def serve(port, root=os.path.join(HERE, "data"), host="127.0.0.1"):
    """A server of the files in `root` (not yet serving: call serve_forever)."""
    handler = type("RootHandler", (Handler,), {"root": root})
    return Server((host, port), handler)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=8642, help="port on 127.0.0.1 (8642)")
    ap.add_argument("--root", default=os.path.join(HERE, "data"), help="folder served (data/)")
    args = ap.parse_args()
    with serve(args.port, args.root) as s:
        print(f"serving {args.root} on http://127.0.0.1:{s.server_address[1]}/", flush=True)
        s.serve_forever()


if __name__ == "__main__":
    main()
