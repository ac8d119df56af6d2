#!/usr/bin/env python3
"""payments: why retries need idempotency keys once a gateway loses responses.

Starts `coldbrew up` on this directory with a fresh store, installs a phantom rule through
the admin API (the confirm route runs, charges, and its response is lost: the client sees
a timeout), then runs the retrying client (client.py) against the naive variant and the
idempotent one, each facing the same fault decisions. Prints what each variant did.

    python3 examples/payments/run.py                      # 20 payments per variant
    python3 examples/payments/run.py --phantom-rate 0.5 --payments 50 -v
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
import tempfile
import threading
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import client  # noqa: E402  (this directory's client.py)

CONFIRM_ROUTE = "POST /{variant}/payment_intents/{id}/confirm"  # as declared in template.yaml
BANNER = re.compile(r"^coldbrew up: (gateway|admin API) listening on (http://[\w.:\[\]-]+)")
CHARGE_LOG = re.compile(r"^\[Payments\] charge ch_\w+ intent pi_\w+ amount \d+ \w+ variant (\w+)$")


def end_with_parent():
    """In the child before exec: SIGTERM it if this script dies, even by SIGKILL, so coldbrew
    (and through it every handler) never outlives the run (Linux prctl PR_SET_PDEATHSIG)."""
    try:
        ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class Coldbrew:
    """`coldbrew up` as a child process, its output collected line by line."""

    def __init__(self, binary, seed, time_scale, store):
        self.lines = []
        self.urls = {}
        self.proc = subprocess.Popen(
            [binary, "up", HERE, "--port", "0", "--invoke-port", "0", "--admin-port", "0",
             "--seed", str(seed), "--time-scale", str(time_scale),
             "--parameter-overrides", f"StorePath={store}"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            preexec_fn=end_with_parent)
        both = threading.Event()
        gateway_seen = threading.Event()

        def read():
            for line in self.proc.stdout:
                line = line.rstrip("\n")
                self.lines.append(line)
                m = BANNER.match(line)
                if m:
                    self.urls[m.group(1)] = m.group(2)
                    if m.group(1) == "gateway":
                        gateway_seen.set()
                    if len(self.urls) == 2:
                        both.set()
            gateway_seen.set()
            both.set()

        self.reader = threading.Thread(target=read, daemon=True)
        self.reader.start()
        # The banner lines are printed together; once the gateway's is out, the admin API's
        # follows at once or not at all.
        if gateway_seen.wait(60):
            both.wait(5)
        if "gateway" not in self.urls or "admin API" not in self.urls:
            self.stop()
            tail = "\n".join("  " + line for line in self.lines[-15:])
            if "gateway" in self.urls or "--admin-port" in tail:
                sys.exit("this coldbrew has no admin API (no --admin-port flag or no 'admin API "
                         "listening' banner line); the phantom rule needs it. Build a newer "
                         "coldbrew (tools/build.sh) or pass --coldbrew.\n" + tail)
            sys.exit("coldbrew did not start:\n" + tail)
        self.gateway = self.urls["gateway"]
        self.admin_url = urllib.parse.urlsplit(self.urls["admin API"])

    def admin(self, method, path, body=None):
        """One admin API call → its JSON answer; any other outcome ends the run."""
        conn = http.client.HTTPConnection(self.admin_url.hostname, self.admin_url.port, timeout=10)
        try:
            data = json.dumps(body) if body is not None else None
            conn.request(method, path, body=data, headers={"Content-Type": "application/json"})
            res = conn.getresponse()
            raw = res.read().decode("utf-8", "replace")
        except (OSError, http.client.HTTPException) as e:
            sys.exit(f"admin API {method} {path}: {e}")
        finally:
            conn.close()
        if not 200 <= res.status < 300:
            sys.exit(f"admin API {method} {path} answered {res.status}: {raw}")
        try:
            return json.loads(raw)
        except ValueError:
            sys.exit(f"admin API {method} {path} answered non-JSON: {raw[:200]}")

    def stop(self):
        """SIGINT, as Ctrl-C would; → a complaint if coldbrew does not end cleanly, else None."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                self.reader.join(5)
                return "coldbrew did not stop within 30 s of SIGINT and was killed"
        self.reader.join(5)
        if self.proc.returncode != 0:
            return f"coldbrew exited with {self.proc.returncode}"
        return None


def by_action(counters):
    try:
        return dict(counters["faults"]["by_action"])
    except (KeyError, TypeError):
        sys.exit(f"admin API GET /counters has no faults.by_action: {json.dumps(counters)[:300]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--coldbrew", default=os.path.join(ROOT, "build", "coldbrew"),
                    help="the coldbrew binary (build/coldbrew)")
    ap.add_argument("--seed", type=int, default=42,
                    help="seed for coldbrew's fault draws and the client's keys and jitter (42)")
    ap.add_argument("--payments", type=int, default=20, help="payments per variant (20)")
    ap.add_argument("--phantom-rate", type=float, default=0.3,
                    help="probability that a confirm's response is lost (0.3)")
    ap.add_argument("--time-scale", type=float, default=0.01,
                    help="multiply modeled delays, the integration timeout included (0.01)")
    ap.add_argument("--timeout", type=float, default=2.0,
                    help="the client's per-attempt timeout, seconds (2)")
    ap.add_argument("--verbose", "-v", action="store_true", help="print every retry")
    ap.add_argument("--json", metavar="FILE", help="also write the figures to FILE as JSON")
    args = ap.parse_args()
    if args.payments < 1 or args.time_scale <= 0 or args.timeout <= 0 \
            or not 0 <= args.phantom_rate <= 1:
        ap.error("--payments must be >= 1, --time-scale and --timeout > 0, "
                 "--phantom-rate in [0, 1]")
    if not os.access(args.coldbrew, os.X_OK):
        sys.exit(f"{args.coldbrew} not found: build first (tools/build.sh) or pass --coldbrew")

    rule = {
        "name": "lose-confirm",
        "route": CONFIRM_ROUTE,
        "probability": args.phantom_rate,
        "fault": {"kind": "phantom", "when": "after", "client_sees": "timeout"},
    }
    log = print if args.verbose else None

    with tempfile.TemporaryDirectory(prefix="coldbrew-payments-") as work:
        cb = Coldbrew(args.coldbrew, args.seed, args.time_scale,
                      os.path.join(work, "payments.sqlite"))
        results, actions = {}, {}
        try:
            print(f"coldbrew: gateway {cb.gateway}, admin API {cb.admin_url.geturl()}")
            print(f"fault rule: {json.dumps(rule)}")
            for variant in client.VARIANTS:
                # The same rule, and the same seed with counting restarted: the k-th confirm
                # meets the same decision in both variants.
                cb.admin("PUT", "/faults", {"rules": [rule]})
                cb.admin("PUT", "/seed", {"seed": args.seed})
                before = by_action(cb.admin("GET", "/counters"))
                if log:
                    print(f"{variant}:")
                try:
                    results[variant] = client.run(cb.gateway, variant, args.payments, args.seed,
                                                  args.timeout, log)
                except client.GaveUp as e:
                    sys.exit(f"{variant}: could not read the charges: {e}")
                after = by_action(cb.admin("GET", "/counters"))
                actions[variant] = {k: v - before.get(k, 0) for k, v in after.items()
                                    if v - before.get(k, 0)}
            totals = by_action(cb.admin("GET", "/counters"))
        finally:
            stop_problem = cb.stop()

    logged = {v: 0 for v in client.VARIANTS}
    for line in cb.lines:
        m = CHARGE_LOG.match(line)
        if m and m.group(1) in logged:
            logged[m.group(1)] += 1

    print(f"\n{args.payments} payments per variant, phantom rate {args.phantom_rate:g} on "
          f"{CONFIRM_ROUTE}, seed {args.seed}, time_scale {args.time_scale:g}\n")
    head = (f"{'variant':<12}{'payments':>9}{'ok':>5}{'attempts':>10}{'timeouts':>10}"
            f"{'replayed':>10}{'charges':>9}{'logged':>8}{'double-charged':>16}")
    print(head)
    print("-" * len(head))
    for variant, s in results.items():
        print(f"{variant:<12}{s['payments']:>9}{s['succeeded']:>5}{s['attempts']:>10}"
              f"{s['timeouts']:>10}{s['replayed']:>10}{s['charges']:>9}{logged[variant]:>8}"
              f"{s['double_charged']:>16}")
    print("\ntimeouts: attempts the client saw time out (phantoms: the handler ran, the answer was "
          "lost).\nreplayed: answers the idempotent variant served from a stored key.  charges: "
          "in the store,\non this run's intents.  logged: 'charge' lines in the handler's own log.")
    print("\ncoldbrew fault counters (GET /counters, faults.by_action):")
    for variant in results:
        shown = ", ".join(f"{k} {v}" for k, v in sorted(actions[variant].items())) or "none"
        print(f"  {variant:<12}{shown}")
    print(f"  {'total':<12}" + (", ".join(f"{k} {v}" for k, v in sorted(totals.items())) or "none"))

    # Every figure has a second source; a disagreement is a bug in the example or in coldbrew.
    problems = []
    for variant, s in results.items():
        phantoms = actions[variant].get("phantom_after", 0)
        if s["timeouts"] != phantoms:
            problems.append(f"{variant}: the client saw {s['timeouts']} timeouts, coldbrew "
                            f"counted {phantoms} phantom_after faults")
        if s["charges"] != logged[variant]:
            problems.append(f"{variant}: {s['charges']} charges in the store, "
                            f"{logged[variant]} in the handler's log")
        for failure in s["failed"]:
            problems.append(f"{variant}: {failure}")
    idem = results["idempotent"]
    if idem["not_exactly_once"]:
        problems.append(f"idempotent: intents not charged exactly once: "
                        f"{', '.join(idem['not_exactly_once'])}")
    if (results["naive"]["attempts"], results["naive"]["timeouts"]) != \
            (idem["attempts"], idem["timeouts"]):
        problems.append("the variants met different fault decisions (attempts or timeouts "
                        "differ) although the seed was the same")
    if stop_problem:
        problems.append(stop_problem)

    naive_double = results["naive"]["double_charged"]
    if not problems:
        if naive_double:
            print(f"\nnaive: {naive_double} of {args.payments} customers were charged twice or "
                  "more, by retries of confirms that had already run.\nidempotent: the same "
                  "retries got the stored answer back; every intent was charged once.")
        else:
            print("\nno confirm lost its answer in this run, so neither variant double-charged; "
                  "raise --phantom-rate or --payments.")

    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rule": rule, "seed": args.seed, "time_scale": args.time_scale,
                       "variants": results, "handler_charge_lines": logged,
                       "fault_actions": actions, "fault_actions_total": totals,
                       "problems": problems}, f, indent=2)
    if problems:
        print("\nproblems:", file=sys.stderr)
        for p in problems:
            print(f"  {p}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
