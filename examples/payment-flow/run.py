#!/usr/bin/env python3
"""payment-flow: a Step Functions retrier charging twice, and the idempotency key that stops it.

Starts the card processor (psp.py) and `coldbrew up` on this directory, installs a phantom
rule on the state machine's Charge Task through the admin API (the charge function runs and
charges, and its answer never reaches Step Functions, which sees the Task time out
(States.Timeout) and retries it), then sends the same payments through API Gateway → the Express state
machine (StartSyncExecution) for the naive variant and the idempotent one, each facing the
same fault decisions. Prints what each variant did, and `coldbrew sim` on the same topology
(whatif.yaml) beside it.

    python3 examples/payment-flow/run.py                       # 20 payments per variant
    python3 examples/payment-flow/run.py --phantom-rate 0.5 --payments 50
"""
import argparse
import collections
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
import psp  # noqa: E402  (this directory's card processor)

PSP_PORT = 8643  # coldbrew.yaml: dependencies.psp.upstream
VARIANTS = ("naive", "idempotent")
BANNER = re.compile(r"^coldbrew up: (gateway|admin API|Step Functions API) listening on "
                    r"(http://[\w.:\[\]-]+)")


def end_with_parent():
    """In the child before exec: SIGTERM it if this script dies, even by SIGKILL, so coldbrew
    (and through it every handler) never outlives the run (Linux prctl PR_SET_PDEATHSIG)."""
    try:
        ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def call(url, method, path, body=None, timeout=30):
    """One HTTP call → (status, parsed JSON or raw text)."""
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
    try:
        data = json.dumps(body) if body is not None else None
        conn.request(method, path, body=data, headers={"Content-Type": "application/json"})
        res = conn.getresponse()
        raw = res.read().decode("utf-8", "replace")
    finally:
        conn.close()
    try:
        return res.status, json.loads(raw)
    except ValueError:
        return res.status, raw


class Coldbrew:
    """`coldbrew up` as a child process, its output collected line by line."""

    def __init__(self, binary, seed, time_scale, ledger):
        self.lines = []
        self.urls = {}
        self.proc = subprocess.Popen(
            [binary, "up", HERE, "--port", "0", "--invoke-port", "0", "--admin-port", "0",
             "--sfn-port", "0", "--seed", str(seed), "--time-scale", str(time_scale),
             "--parameter-overrides", f"LedgerPath={ledger}"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            preexec_fn=end_with_parent)
        ready = threading.Event()

        def read():
            for line in self.proc.stdout:
                line = line.rstrip("\n")
                self.lines.append(line)
                m = BANNER.match(line)
                if m:
                    self.urls[m.group(1)] = m.group(2)
                    if {"gateway", "admin API"} <= self.urls.keys():
                        ready.set()
            ready.set()

        self.reader = threading.Thread(target=read, daemon=True)
        self.reader.start()
        ready.wait(60)
        if not {"gateway", "admin API"} <= self.urls.keys():
            self.stop()
            tail = "\n".join("  " + line for line in self.lines[-20:])
            sys.exit("coldbrew did not start:\n" + tail)
        self.gateway = self.urls["gateway"]
        self.admin_url = self.urls["admin API"]

    def admin(self, method, path, body=None):
        status, answer = call(self.admin_url, method, path, body)
        if not 200 <= status < 300:
            sys.exit(f"admin API {method} {path} answered {status}: {answer}")
        return answer

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


def pay(gateway, variant, n):
    """n payments through POST /pay; → per-payment execution status."""
    statuses = {}
    for i in range(n):
        payment = f"{variant}-{i + 1:04d}"
        status, answer = call(gateway, "POST", "/pay",
                              {"payment": payment, "amount": 1000 + i, "currency": "usd",
                               "variant": variant})
        if status == 200 and isinstance(answer, dict):
            statuses[payment] = answer.get("status", "?")
        else:
            statuses[payment] = f"HTTP {status}"
    return statuses


def simulate(binary, phantom_rate, seed):
    """`coldbrew sim whatif.yaml --json` for both variants → {variant: report}."""
    out = {}
    for variant, idem in (("naive", "false"), ("idempotent", "true")):
        proc = subprocess.run(
            [binary, "sim", os.path.join(HERE, "whatif.yaml"), "--json", "--no-progress",
             "--seed", str(seed), "--set", f"components.charge_fn.idempotent={idem}",
             "--set", f"components.charge_fn.failures={{phantom_after: 1.0}}",
             "--set", f"components.charge_fn.availability={100 * (1 - phantom_rate):g}%"],
            capture_output=True, text=True, timeout=300)
        if proc.returncode != 0:
            sys.exit(f"coldbrew sim failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
        out[variant] = json.loads(proc.stdout)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--coldbrew", default=os.path.join(ROOT, "build", "coldbrew"),
                    help="the coldbrew binary (build/coldbrew)")
    ap.add_argument("--seed", type=int, default=42, help="seed for coldbrew's fault draws (42)")
    ap.add_argument("--payments", type=int, default=20, help="payments per variant (20)")
    ap.add_argument("--phantom-rate", type=float, default=0.3,
                    help="probability that a Charge Task's answer is lost (0.3)")
    ap.add_argument("--time-scale", type=float, default=0.01,
                    help="multiply modeled delays: retry intervals, latencies (0.01)")
    ap.add_argument("--no-sim", action="store_true", help="skip the coldbrew sim comparison")
    ap.add_argument("--json", metavar="FILE", help="also write the figures to FILE as JSON")
    args = ap.parse_args()
    if args.payments < 1 or args.time_scale <= 0 or not 0 <= args.phantom_rate < 1:
        ap.error("--payments must be >= 1, --time-scale > 0, --phantom-rate in [0, 1)")
    if not os.access(args.coldbrew, os.X_OK):
        sys.exit(f"{args.coldbrew} not found: build first (tools/build.sh) or pass --coldbrew")

    rule = {
        "name": "lose-charge-answer",
        "front": "states",
        "state_machine": "PaymentFlow",
        "state": "Charge",
        "probability": args.phantom_rate,
        "fault": {"kind": "phantom", "when": "after"},
    }
    try:
        server, processor = psp.serve(PSP_PORT)
    except OSError as e:
        sys.exit(f"cannot serve the card processor on 127.0.0.1:{PSP_PORT}, the psp upstream "
                 f"in coldbrew.yaml: {e}")
    results, actions, ledger_lines = {}, {}, {}
    with tempfile.TemporaryDirectory(prefix="coldbrew-payment-flow-") as work:
        ledger = os.path.join(work, "ledger.jsonl")
        open(ledger, "w").close()
        cb = Coldbrew(args.coldbrew, args.seed, args.time_scale, ledger)
        try:
            print(f"coldbrew: gateway {cb.gateway}, admin API {cb.admin_url}")
            print(f"fault rule: {json.dumps(rule)}")
            for variant in VARIANTS:
                # The same rule and the same seed with counting restarted: the k-th Charge
                # attempt meets the same decision in both variants.
                cb.admin("PUT", "/faults", {"rules": [rule]})
                cb.admin("PUT", "/seed", {"seed": args.seed})
                before = by_action(cb.admin("GET", "/counters"))
                results[variant] = pay(cb.gateway, variant, args.payments)
                after = by_action(cb.admin("GET", "/counters"))
                actions[variant] = {k: v - before.get(k, 0) for k, v in after.items()
                                    if v - before.get(k, 0)}
        finally:
            stop_problem = cb.stop()
            server.shutdown()
        with open(ledger) as f:
            for line in f:
                entry = json.loads(line)
                ledger_lines.setdefault(entry["variant"], []).append(entry)

    charges = collections.Counter(c["payment"] for c in processor.charges)
    rows, problems = {}, []
    for variant, statuses in results.items():
        ok = sum(1 for s in statuses.values() if s == "SUCCEEDED")
        n_charges = sum(charges[p] for p in statuses)
        double = sum(1 for p in statuses if charges[p] > 1)
        rows[variant] = {"payments": len(statuses), "succeeded": ok, "charges": n_charges,
                         "double_charged": double,
                         "ledger": len(ledger_lines.get(variant, [])),
                         "lost_answers": actions[variant].get("phantom_after", 0)}
        rows[variant]["failed"] = sum(1 for s in statuses.values() if s in ("FAILED", "TIMED_OUT"))
        for p, s in statuses.items():
            if s not in ("SUCCEEDED", "FAILED", "TIMED_OUT"):
                problems.append(f"{variant}: payment {p}: {s}")
    print(f"\n{args.payments} payments per variant, phantom-after rate {args.phantom_rate:g} on "
          f"the Charge Task, seed {args.seed}, time_scale {args.time_scale:g}\n")
    head = (f"{'variant':<12}{'payments':>9}{'ok':>5}{'failed':>8}{'lost answers':>14}{'charges':>9}"
            f"{'ledger':>8}{'double-charged':>16}")
    print(head)
    print("-" * len(head))
    for variant, r in rows.items():
        print(f"{variant:<12}{r['payments']:>9}{r['succeeded']:>5}{r['failed']:>8}{r['lost_answers']:>14}"
              f"{r['charges']:>9}{r['ledger']:>8}{r['double_charged']:>16}")
    print("\nlost answers: Charge attempts whose answer coldbrew dropped after the function ran "
          "(each one retried by the\nretrier on States.Timeout).  failed: executions that ran "
          "out of retries (ChargeFailed).\ncharges: what the card processor charged.  ledger: "
          "lines written.")

    naive, idem = rows["naive"], rows["idempotent"]
    if naive["lost_answers"] != idem["lost_answers"]:
        problems.append("the variants met different fault decisions although the seed was the same")
    if naive["charges"] != naive["payments"] + naive["lost_answers"]:
        problems.append(f"naive: {naive['charges']} charges, expected one per payment plus one per "
                        f"lost answer ({naive['payments'] + naive['lost_answers']})")
    if idem["charges"] != idem["payments"] or idem["double_charged"]:
        problems.append(f"idempotent: {idem['charges']} charges for {idem['payments']} payments")
    for variant, r in rows.items():
        if r["ledger"] != r["succeeded"]:
            problems.append(f"{variant}: {r['ledger']} ledger lines for {r['succeeded']} payments")
    if stop_problem:
        problems.append(stop_problem)

    sim = None
    if not args.no_sim:
        sim = simulate(args.coldbrew, args.phantom_rate, args.seed)
        print("\ncoldbrew sim whatif.yaml, the same topology and phantom rate, "
              f"{sim['naive']['requests']} requests per variant:")
        for variant in VARIANTS:
            rep = sim[variant]
            print(f"  {variant:<12}availability {rep['availability']['percent']:.3f}%  "
                  f"duplicates per request {rep['duplicates'] / rep['requests']:.3f}  "
                  f"p95 {rep['latency_ms']['p95']:.0f} ms")
        print(f"  live        duplicates per request: naive "
              f"{naive['double_charged'] / naive['payments']:.3f}, idempotent "
              f"{idem['double_charged'] / idem['payments']:.3f}")

    if not problems and naive["double_charged"]:
        print(f"\nnaive: {naive['double_charged']} of {naive['payments']} customers were charged "
              "twice or more, by the retrier re-running a Charge that had already charged.\n"
              "idempotent: the same retries got the processor's first charge back; every "
              "payment was charged once.")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rule": rule, "seed": args.seed, "time_scale": args.time_scale,
                       "variants": rows, "fault_actions": actions, "sim": sim,
                       "problems": problems}, f, indent=2)
    if problems:
        print("\nproblems:", file=sys.stderr)
        for p in problems:
            print(f"  {p}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
