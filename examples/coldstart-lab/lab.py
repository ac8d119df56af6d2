#!/usr/bin/env python3
"""coldstart-lab: a burst of concurrent requests against each cold-start variant.

Starts `coldbrew up` on this directory, sends CLIENTS concurrent clients x REQUESTS requests
to every variant in turn, stops coldbrew, and prints for each variant what the model
predicted (`coldbrew validate`) beside what the run produced: cold starts, Init Duration
percentiles from the REPORT lines, and client-side latency percentiles.

    python3 examples/coldstart-lab/lab.py                      # 50 clients x 10 requests
    python3 examples/coldstart-lab/lab.py --time-scale 0.1     # modeled delays 10x shorter

Init Duration is the modeled figure plus the real local init, at any time scale; client
latencies are wall-clock, so they shrink with --time-scale.
"""
import argparse
import ctypes
import http.client
import json
import os
import random
import re
import signal
import subprocess
import shutil
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

VARIANTS = [
    ("Baseline", "/baseline", "small package, no VPC"),
    ("LargePackage", "/large-package", "+ generated dependencies"),
    ("LegacyEni", "/legacy-eni", "VPC, pre-2019 ENI attach"),
    ("WithExtension", "/extension", "+ Go-based agent extension"),
    ("Provisioned", "/provisioned", "50 provisioned environments"),
]


def percentile(values, p):
    """Nearest-rank percentile; None for no values."""
    if not values:
        return None
    s = sorted(values)
    rank = max(1, int(-(-p * len(s) // 100)))  # ceil(p/100 * n)
    return s[min(rank, len(s)) - 1]


def fmt_ms(v):
    if v is None:
        return "-"
    return f"{v / 1000:.1f} s" if v >= 10000 else f"{v:.0f} ms"


def generate_package(app, mb):
    """Fills the Dependencies layer of the copy at `app` with `mb` MB of incompressible bytes (seeded, so every run models
    the same package), standing in for a large dependency tree."""
    vendor = os.path.join(app, "dependencies", "python", "vendor")
    os.makedirs(vendor, exist_ok=True)
    wanted = {f"blob-{i:03d}.bin" for i in range(mb)}
    for name in os.listdir(vendor):
        if name not in wanted:
            os.remove(os.path.join(vendor, name))
    rng = random.Random(20261130)
    for i in range(mb):
        path = os.path.join(vendor, f"blob-{i:03d}.bin")
        chunk = rng.randbytes(1 << 20)
        if os.path.exists(path) and os.path.getsize(path) == len(chunk):
            continue
        with open(path, "wb") as f:
            f.write(chunk)


def predicted(coldbrew, app):
    """Each function's modeled p50/p95/p99 as `coldbrew validate` prints them."""
    out = subprocess.run([coldbrew, "validate", app], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"coldbrew validate failed:\n{out.stderr}{out.stdout}")
    value = r"([\d.]+) (ms|s)"
    pattern = re.compile(rf"^\s+(\w+)\s+cold start p50 {value}\s+p95 {value}\s+p99 {value}")
    result = {}
    for line in out.stdout.splitlines():
        m = pattern.match(line)
        if m:
            nums = []
            for i in (2, 4, 6):
                v = float(m.group(i))
                nums.append(v * 1000 if m.group(i + 1) == "s" else v)
            result[m.group(1)] = nums
    return result


def end_with_parent():
    """In the child before exec: SIGTERM it if this script dies, even by SIGKILL, so coldbrew
    (and through it every handler) never outlives the lab (Linux prctl PR_SET_PDEATHSIG)."""
    try:
        ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class Coldbrew:
    """`coldbrew up` as a child process, its output collected line by line."""

    def __init__(self, coldbrew, app, seed, time_scale, decision_log):
        self.lines = []
        self.provisioned_ready = threading.Event()
        self.proc = subprocess.Popen(
            [coldbrew, "up", app, "--port", "0", "--invoke-port", "0", "--seed", str(seed),
             "--time-scale", str(time_scale), "--decision-log", decision_log],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            preexec_fn=end_with_parent)
        self.port = None
        ready = threading.Event()

        def read():
            for line in self.proc.stdout:
                self.lines.append(line.rstrip("\n"))
                m = re.search(r"gateway listening on http://[\d.]+:(\d+)", line)
                if m:
                    self.port = int(m.group(1))
                    ready.set()
                if "Provisioned: provisioned concurrency ready" in line:
                    self.provisioned_ready.set()
            ready.set()
            self.provisioned_ready.set()

        self.reader = threading.Thread(target=read, daemon=True)
        self.reader.start()
        if not ready.wait(60) or self.port is None:
            self.stop()
            sys.exit("coldbrew did not start:\n" + "\n".join(self.lines[-20:]))

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.reader.join(5)


def burst(port, path, clients, requests):
    """`clients` threads, each sending `requests` GETs over one keep-alive connection."""
    latencies, statuses, cold = [], [], 0
    lock = threading.Lock()
    start = threading.Barrier(clients)

    def client():
        nonlocal cold
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        start.wait()
        for _ in range(requests):
            t0 = time.perf_counter()
            try:
                conn.request("GET", path)
                res = conn.getresponse()
                body = res.read()
                status = res.status
            except (OSError, http.client.HTTPException):
                status, body = 0, b""
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            ms = (time.perf_counter() - t0) * 1000
            was_cold = False
            if status == 200:
                try:
                    was_cold = bool(json.loads(body).get("cold"))
                except ValueError:
                    pass
            with lock:
                latencies.append(ms)
                statuses.append(status)
                cold += was_cold
        conn.close()

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies, statuses, cold


REPORT = re.compile(r"^\[(\w+)\] REPORT RequestId: .*?\tInit Duration: ([\d.]+) ms")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clients", type=int, default=50, help="concurrent clients per variant (50)")
    ap.add_argument("--requests", type=int, default=10, help="requests per client (10)")
    ap.add_argument("--time-scale", type=float, default=1.0,
                    help="multiply modeled delays by this (1 = real time)")
    ap.add_argument("--seed", type=int, default=42, help="seed for every modeled draw (42)")
    ap.add_argument("--package-mb", type=int, default=20,
                    help="size of LargePackage's generated dependencies, MB (20)")
    ap.add_argument("--coldbrew", default=os.path.join(ROOT, "build", "coldbrew"),
                    help="the coldbrew binary (build/coldbrew)")
    ap.add_argument("--json", metavar="FILE", help="also write the figures to FILE as JSON")
    args = ap.parse_args()
    if args.clients < 1 or args.requests < 1 or args.time_scale <= 0 or args.package_mb < 0:
        ap.error("--clients and --requests must be >= 1, --time-scale > 0, --package-mb >= 0")
    if not os.access(args.coldbrew, os.X_OK):
        sys.exit(f"{args.coldbrew} not found: build first (tools/build.sh) or pass --coldbrew")

    # The lab runs on a copy, so the generated package never lands in the source tree.
    work = tempfile.TemporaryDirectory(prefix="coldstart-lab-")
    app = os.path.join(work.name, "app")
    shutil.copytree(HERE, app, ignore=shutil.ignore_patterns("python", "__pycache__"))
    generate_package(app, args.package_mb)
    model = predicted(args.coldbrew, app)

    decision_log = os.path.join(work.name, "decisions.jsonl")
    cb = Coldbrew(args.coldbrew, app, args.seed, args.time_scale, decision_log)
    results = {}
    try:
        # Provisioned environments start with coldbrew; measure once they are ready, as one
        # would after a deployment, and without their process starts competing with the
        # other variants' cold starts.
        if not cb.provisioned_ready.wait(120):
            sys.exit("the provisioned environments did not become ready")
        for name, path, _ in VARIANTS:
            results[name] = burst(cb.port, path, args.clients, args.requests)
    finally:
        cb.stop()

    # What the model drew for each new on-demand environment of this run.
    drawn = {}
    with open(decision_log) as f:
        for line in f:
            e = json.loads(line)
            if e["event"] == "created" and not e.get("provisioned"):
                drawn.setdefault(e["function"], []).append(e["init_ms"]["total"])

    inits = {}
    for line in cb.lines:
        m = REPORT.match(line)
        if m:
            inits.setdefault(m.group(1), []).append(float(m.group(2)))

    print(f"\n{args.clients} clients x {args.requests} requests per variant, seed {args.seed}, "
          f"time_scale {args.time_scale:g}\n")
    head = (f"{'variant':<14}{'model p50/p95/p99':>24}{'cold':>6}{'drawn p50/p95/p99':>24}"
            f"{'Init p50/p95/p99':>24}{'latency p50/p95/p99':>24}{'errors':>7}")
    print(head)
    print("-" * len(head))
    table = {}
    for name, _, lever in VARIANTS:
        lat, statuses, cold = results[name]
        errors = sum(1 for s in statuses if s != 200)
        pred = model.get(name)
        init = inits.get(name, [])
        trio = lambda xs: "/".join(fmt_ms(percentile(xs, p)) for p in (50, 95, 99))
        model_text = "/".join(fmt_ms(v) for v in pred) if pred else "-"
        print(f"{name:<14}{model_text:>24}{len(init):>6}{trio(drawn.get(name, [])):>24}"
              f"{trio(init):>24}{trio(lat):>24}{errors:>7}")
        table[name] = {
            "requests": len(statuses), "errors": errors, "cold_starts": len(init),
            "cold_seen_by_handler": cold, "model_ms": pred,
            "init_ms": [percentile(init, p) for p in (50, 95, 99)],
            "drawn_ms": [percentile(drawn.get(name, []), p) for p in (50, 95, 99)],
            "latency_ms": [percentile(lat, p) for p in (50, 95, 99)],
        }
    print("\nmodel: what `coldbrew validate` predicts for one cold start.  cold: cold starts in "
          "this run.\ndrawn: the modeled Init Durations this run drew (the decision log; with "
          "fewer than 100 cold starts\np99 is the largest draw, so one rare tail draw shows).  Init: "
          "the REPORT lines,\nmodeled + real local init (many processes starting at once on one "
          "machine add their own).\nlatency: what the clients saw, wall clock (modeled delays "
          "scaled by --time-scale).")
    for name, _, lever in VARIANTS:
        print(f"  {name}: {lever}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(table, f, indent=2)
    if cb.proc.returncode not in (0, None):
        sys.exit(f"coldbrew exited with {cb.proc.returncode}")


if __name__ == "__main__":
    main()
