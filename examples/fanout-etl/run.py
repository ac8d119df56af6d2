#!/usr/bin/env python3
"""fanout-etl: the same network-bound query at 1,024 MB and at 10,240 MB.

Generates the data set (data/orders.csv, once), serves it with byte ranges
(dataserver.py on 127.0.0.1:8642), starts `coldbrew up` on this directory, and runs the
orchestrator's query with each worker size: first once to start the execution environments
(cold), then measured, warm. Prints download time, throughput per worker, aggregate
throughput and wall clock for each size, and checks both answers against the data set.

    python3 examples/fanout-etl/run.py                    # 256 MB, 8 workers
    python3 examples/fanout-etl/run.py --mb 512 --workers 4 --time-scale 20

Times are modeled times: coldbrew divides bandwidth by time_scale and the figures here are
measured real times divided by time_scale again. Eight workers at 3,000 Mbps move 3 GB/s,
more than a laptop's loopback and two cores carry through a proxy; the default time_scale of
10 slows the real transfer tenfold so the machine keeps up and the modeled figures hold.
"""
import argparse
import ctypes
import http.client
import json
import os
import re
import signal
import subprocess
import sys
import threading
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import dataserver  # noqa: E402  (this directory's)
import generate  # noqa: E402

MEMORY_SIZES = [1024, 10240]
DATA_PORT = 8642  # coldbrew.yaml: dependencies.datastore.upstream
BANNER = re.compile(r"^coldbrew up: (gateway|admin API) listening on (http://[\w.:\[\]-]+)")
BANDWIDTH = re.compile(r"^\s+(Worker\d+)\s+cold start .*, bandwidth ([\d.,]+ [KMG]?bps)")


def end_with_parent():
    """In the child before exec: SIGTERM it if this script dies, even by SIGKILL (Linux
    PR_SET_PDEATHSIG), so coldbrew and its handlers never outlive the run."""
    try:
        ctypes.CDLL(None).prctl(1, signal.SIGTERM)
    except (OSError, AttributeError):
        pass


class Coldbrew:
    """`coldbrew up` on this directory as a child process."""

    def __init__(self, binary, time_scale):
        self.lines, self.urls, self.bandwidth = [], {}, {}
        self.proc = subprocess.Popen(
            [binary, "up", HERE, "--port", "0", "--invoke-port", "0", "--admin-port", "0",
             "--seed", "42", "--time-scale", repr(time_scale)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            preexec_fn=end_with_parent)
        ready = threading.Event()

        def read():
            for line in self.proc.stdout:
                line = line.rstrip("\n")
                self.lines.append(line)
                m = BANDWIDTH.match(line)
                if m:
                    self.bandwidth[m.group(1)] = m.group(2)
                m = BANNER.match(line)
                if m:
                    self.urls[m.group(1)] = m.group(2)
                    if len(self.urls) == 2:
                        ready.set()
            ready.set()

        self.reader = threading.Thread(target=read, daemon=True)
        self.reader.start()
        if not ready.wait(60) or len(self.urls) < 2:
            self.stop()
            sys.exit("coldbrew did not start:\n" + "\n".join("  " + l for l in self.lines[-15:]))
        self.gateway = urllib.parse.urlsplit(self.urls["gateway"])
        self.admin = urllib.parse.urlsplit(self.urls["admin API"])

    def get(self, url, path, timeout=600):
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=timeout)
        try:
            conn.request("GET", path)
            res = conn.getresponse()
            return res.status, res.read().decode("utf-8", "replace")
        finally:
            conn.close()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.reader.join(5)


def query(cb, memory, workers):
    status, body = cb.get(cb.gateway, f"/query?memory={memory}&workers={workers}")
    if status != 200:
        sys.exit(f"GET /query?memory={memory} answered {status}: {body[:500]}")
    return json.loads(body)


def figures(answer, time_scale):
    """Modeled figures of one warm query."""
    per = answer["per_worker"]
    downloads = [w["download_ms"] / time_scale for w in per]
    rates = [w["bytes"] / 1e6 / (w["download_ms"] / 1000 / time_scale) for w in per if w["download_ms"]]
    wall_ms = answer["elapsed_ms"] / time_scale
    return {
        "memory_mb": answer["memory"],
        "workers": answer["workers"],
        "bytes": answer["bytes"],
        "download_ms_avg": sum(downloads) / len(downloads),
        "download_ms_max": max(downloads),
        "worker_mb_per_s": sum(rates) / len(rates) if rates else 0.0,
        "aggregate_mb_per_s": answer["bytes"] / 1e6 / (max(downloads) / 1000),
        "wall_clock_ms": wall_ms,
        "cold_starts": sum(1 for w in per if w["cold_start"]),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--coldbrew", default=os.path.join(ROOT, "build", "coldbrew"),
                    help="the coldbrew binary (build/coldbrew)")
    ap.add_argument("--mb", type=int, default=256, help="data set size in MB (256)")
    ap.add_argument("--workers", type=int, default=8, help="workers per query, 1..50 (8)")
    ap.add_argument("--time-scale", type=float, default=10.0,
                    help="coldbrew's time_scale; bandwidth is divided by it (10)")
    ap.add_argument("--data-dir", default=os.path.join(HERE, "data"),
                    help="where the data set is generated and served from (data/)")
    ap.add_argument("--json", metavar="FILE", help="also write the figures to FILE as JSON")
    args = ap.parse_args()
    if args.mb < 1 or not 1 <= args.workers <= 50 or not 0 < args.time_scale <= 1000:
        ap.error("--mb >= 1, --workers 1..50 and --time-scale in (0, 1000] please")
    if not os.access(args.coldbrew, os.X_OK):
        sys.exit(f"{args.coldbrew} not found: build first (tools/build.sh) or pass --coldbrew")
    if not os.path.isdir(os.path.join(HERE, "orchestrator", "node_modules", "@aws-sdk")):
        sys.exit("examples/fanout-etl/orchestrator/node_modules is missing: run tools/setup.sh "
                 "(or npm ci in examples/fanout-etl/orchestrator)")

    _, manifest = generate.ensure(args.mb, 42, args.data_dir)
    try:
        server = dataserver.serve(DATA_PORT, args.data_dir)
    except OSError as e:
        sys.exit(f"cannot serve the data set on 127.0.0.1:{DATA_PORT}, the datastore upstream "
                 f"coldbrew.yaml names: {e}. Stop what listens there (another run?) and retry.")
    threading.Thread(target=server.serve_forever, daemon=True).start()

    cb = Coldbrew(args.coldbrew, args.time_scale)
    results = []
    try:
        for memory in MEMORY_SIZES:
            query(cb, memory, args.workers)  # starts the environments: cold starts
            answer = query(cb, memory, args.workers)
            if answer["regions"] != manifest["regions"] or answer["bytes"] != manifest["bytes"]:
                sys.exit(f"{memory} MB: wrong answer {answer['regions']}, "
                         f"expected {manifest['regions']}")
            f = figures(answer, args.time_scale)
            f["bandwidth"] = cb.bandwidth.get(answer["worker_function"], "?")
            results.append(f)
        _, proxies = cb.get(cb.admin, "/proxies", timeout=10)
    finally:
        cb.stop()
        server.shutdown()

    mb = manifest["bytes"] / 1e6
    print(f"fan-out ETL: {mb:,.0f} MB in {args.workers} byte ranges through the datastore proxy"
          f" (time_scale {args.time_scale:g}; modeled times, warm environments)")
    print("orders per region (both sizes agree with the data set): " +
          ", ".join(f"{k} {v:,}" for k, v in manifest["regions"].items()))
    head = ["memory", "bandwidth", "download/worker avg", "max", "per worker", "aggregate",
            "wall clock"]
    rows = [[f"{r['memory_mb']:,} MB", r["bandwidth"], f"{r['download_ms_avg']:,.0f} ms",
             f"{r['download_ms_max']:,.0f} ms", f"{r['worker_mb_per_s']:,.1f} MB/s",
             f"{r['aggregate_mb_per_s']:,.0f} MB/s", f"{r['wall_clock_ms']:,.0f} ms"]
            for r in results]
    widths = [max(len(x) for x in col) for col in zip(head, *rows)]
    for row in [head] + rows:
        print("  ".join(x.rjust(w) for x, w in zip(row, widths)))
    small, large = results
    print(f"10,240 MB vs 1,024 MB: downloads {small['download_ms_avg'] / large['download_ms_avg']:.1f}x"
          f" faster, wall clock {small['wall_clock_ms'] / large['wall_clock_ms']:.1f}x faster")
    try:
        d = json.loads(proxies)["datastore"]
        print(f"datastore proxy: {d['connections']} connections, "
              f"{d['bytes_downstream'] / 1e6:,.0f} MB to the functions, "
              f"{d['shaped_ms']:,.0f} ms (modeled) held by bandwidth caps")
    except (ValueError, KeyError, TypeError):
        pass
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"data_bytes": manifest["bytes"], "time_scale": args.time_scale,
                       "results": results}, fh, indent=2)


if __name__ == "__main__":
    main()
