#!/usr/bin/env python3
"""payments client: creates and confirms N payments, retrying as a careful app would.

Each payment is two calls, create an intent then confirm it, and each call carries its own
Idempotency-Key (a UUID drawn from the seed, so runs repeat). A call is retried on what
leaves its outcome unknown or is meant to be retried: a timeout (the client's own, or the
gateway's integration timeout answer), a refused, reset or closed connection, a 5xx, a 429.
Backoff is exponential with full jitter: before retry n (0-based), sleep
uniform(0, min(cap, base * 2**n)), base 50 ms, cap 2 s, at most 6 attempts per call.

Afterwards it reads GET /{variant}/charges and counts charges per intent it created.

    python3 examples/payments/client.py --url http://127.0.0.1:3000 --variant naive
    python3 examples/payments/client.py --url http://127.0.0.1:3000 --variant idempotent \\
        --expect-exactly-once
"""
import argparse
import collections
import http.client
import json
import random
import sys
import time
import urllib.parse
import uuid

VARIANTS = ("naive", "idempotent")
CAUSES = ("timeout", "reset", "5xx", "429")
BACKOFF_BASE_S = 0.05
BACKOFF_CAP_S = 2.0
MAX_ATTEMPTS = 6

# What API Gateway answers when the integration does not answer in time: the request may
# well have run, exactly as when the client's own timeout fires.
GATEWAY_TIMEOUTS = {
    (503, "Service Unavailable"),        # HTTP API, after 30 s
    (504, "Endpoint request timed out"),  # REST API, after 29 s
}


class GaveUp(Exception):
    """A call that failed MAX_ATTEMPTS times, or was answered with a non-retryable status."""

    def __init__(self, what, status, body):
        super().__init__(f"{what}: {status} {body}")
        self.status, self.body = status, body


class Client:
    def __init__(self, url, timeout_s, seed, log=None):
        parts = urllib.parse.urlsplit(url)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"--url must be http://HOST:PORT, not {url!r}")
        self.host, self.port = parts.hostname, parts.port or 80
        self.prefix = parts.path.rstrip("/")
        self.timeout_s = timeout_s
        # Two streams from one seed: the keys and amounts do not shift when the number of
        # retries (and so of jitter draws) changes.
        self.keys = random.Random(f"{seed}/keys")
        self.jitter = random.Random(f"{seed}/jitter")
        self.log = log or (lambda message: None)
        self.attempts = 0
        self.retries = collections.Counter({cause: 0 for cause in CAUSES})
        self.timeouts = 0     # attempts that ended in a timeout, retried or not
        self.replayed = 0     # final answers marked Idempotent-Replayed (a stored response)
        self.faults_seen = 0  # answers carrying coldbrew's X-Coldbrew-Fault header

    def new_key(self):
        return str(uuid.UUID(int=self.keys.getrandbits(128), version=4))

    def attempt(self, method, path, body, key):
        """One HTTP exchange on a fresh connection → (status, parsed body, X-Coldbrew-Fault,
        replayed?).
        Raises TimeoutError or OSError / http.client.HTTPException on transport failures."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout_s)
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if key:
            headers["Idempotency-Key"] = key
        try:
            conn.request(method, self.prefix + path, body=data, headers=headers)
            res = conn.getresponse()
            raw = res.read()
        finally:
            conn.close()
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = raw.decode("utf-8", "replace")
        return (res.status, parsed, res.getheader("X-Coldbrew-Fault"),
                res.getheader("Idempotent-Replayed") == "true")

    @staticmethod
    def cause_of(status, body):
        """The retry cause for an answer, or None when the answer is final."""
        message = body.get("message") if isinstance(body, dict) else None
        if (status, message) in GATEWAY_TIMEOUTS:
            return "timeout"
        if status == 429:
            return "429"
        if status >= 500:
            return "5xx"
        return None

    def call(self, method, path, body=None, key=None):
        """The call, retried; → (status, body) of the first final answer. Raises GaveUp."""
        what = f"{method} {path}"
        for n in range(MAX_ATTEMPTS):
            self.attempts += 1
            started = time.monotonic()
            try:
                status, answer, fault, replayed = self.attempt(method, path, body, key)
            except TimeoutError:
                status, answer, fault, cause = None, "client timeout", None, "timeout"
            except (OSError, http.client.HTTPException) as e:
                status, answer, fault, cause = None, type(e).__name__, None, "reset"
            else:
                cause = self.cause_of(status, answer)
            if fault:
                self.faults_seen += 1
            if cause is None:
                if not 200 <= status < 300:
                    raise GaveUp(what, status, answer)
                self.replayed += replayed
                return status, answer
            if cause == "timeout":
                self.timeouts += 1
            elapsed_ms = (time.monotonic() - started) * 1000
            seen = f"{status} {json.dumps(answer)}" if status else answer
            if fault:
                seen += f" [X-Coldbrew-Fault: {fault}]"
            if n + 1 == MAX_ATTEMPTS:
                self.log(f"  {what} attempt {n + 1}: {cause} ({seen}, {elapsed_ms:.0f} ms); "
                         "giving up")
                raise GaveUp(what, status, answer)
            self.retries[cause] += 1
            delay = self.jitter.uniform(0, min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2 ** n))
            self.log(f"  {what} attempt {n + 1}: {cause} ({seen}, {elapsed_ms:.0f} ms); "
                     f"retrying in {delay * 1000:.0f} ms")
            time.sleep(delay)


def run(url, variant, payments=20, seed=42, timeout_s=2.0, log=None):
    """Creates and confirms `payments` payments in `variant`; → the summary dict."""
    client = Client(url, timeout_s, seed, log)
    succeeded, failed = 0, []
    confirmed, unconfirmed = [], []  # intent ids whose confirm succeeded / gave up
    for i in range(payments):
        amount = client.keys.randrange(100, 100_000)
        try:
            _, intent = client.call("POST", f"/{variant}/payment_intents",
                                    {"amount": amount, "currency": "usd"}, client.new_key())
        except GaveUp as e:
            failed.append(f"payment {i + 1}: create: {e}")
            continue
        try:
            client.call("POST", f"/{variant}/payment_intents/{intent['id']}/confirm",
                        key=client.new_key())
        except GaveUp as e:
            failed.append(f"payment {i + 1}: confirm: {e}")
            unconfirmed.append(intent["id"])
            continue
        confirmed.append(intent["id"])
        succeeded += 1

    _, listing = client.call("GET", f"/{variant}/charges")
    ours = set(confirmed) | set(unconfirmed)
    per_intent = collections.Counter(
        c["intent"] for c in listing["charges"] if c["intent"] in ours)
    # A confirm that succeeded charged exactly once; one the client gave up on may or may not
    # have run (a phantom), but never twice.
    wrong = sorted([i for i in confirmed if per_intent[i] != 1]
                   + [i for i in unconfirmed if per_intent[i] > 1])
    return {
        "variant": variant,
        "payments": payments,
        "succeeded": succeeded,
        "failed": failed,
        "attempts": client.attempts,
        "retries": dict(client.retries),
        "timeouts": client.timeouts,
        "replayed": client.replayed,
        "faults_seen": client.faults_seen,
        "charges": sum(per_intent.values()),
        "intents_charged": len(per_intent),
        "double_charged": sum(1 for n in per_intent.values() if n > 1),
        "not_exactly_once": wrong,
    }


def describe(s):
    r = s["retries"]
    lines = [
        f"{s['variant']}: {s['payments']} payments attempted, {s['succeeded']} succeeded, "
        f"{s['attempts']} attempts",
        f"{s['variant']}: retries: timeout {r['timeout']}, reset {r['reset']}, 5xx {r['5xx']}, "
        f"429 {r['429']}; {s['replayed']} answers replayed from an idempotency key",
        f"{s['variant']}: {s['charges']} charges on {s['intents_charged']} intents; "
        f"{s['double_charged']} intents charged more than once (double charges)",
    ]
    lines += [f"{s['variant']}: failed: {f}" for f in s["failed"]]
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", default="http://127.0.0.1:3000",
                    help="the gateway's base URL (http://127.0.0.1:3000)")
    ap.add_argument("--variant", choices=VARIANTS, action="append",
                    help="naive or idempotent; repeat for both (default: both)")
    ap.add_argument("--payments", type=int, default=20, help="payments per variant (20)")
    ap.add_argument("--seed", type=int, default=42,
                    help="seed for keys, amounts and backoff jitter (42)")
    ap.add_argument("--timeout", type=float, default=2.0,
                    help="per-attempt client timeout, seconds (2)")
    ap.add_argument("--json", action="store_true", help="print only a JSON summary")
    ap.add_argument("--verbose", "-v", action="store_true", help="print every retry to stderr")
    ap.add_argument("--expect-exactly-once", action="store_true",
                    help="exit 1 if an intent whose confirm succeeded has other than one "
                         "charge, or any intent has more than one")
    args = ap.parse_args(argv)
    if args.payments < 1 or args.timeout <= 0:
        ap.error("--payments must be >= 1 and --timeout > 0")
    log = (lambda m: print(m, file=sys.stderr)) if args.verbose else None

    summaries = []
    for variant in args.variant or VARIANTS:
        try:
            summary = run(args.url, variant, args.payments, args.seed, args.timeout, log)
        except GaveUp as e:
            sys.exit(f"{variant}: could not read the charges: {e}")
        except ValueError as e:
            sys.exit(str(e))
        summaries.append(summary)
        if not args.json:
            print(describe(summary))
    if args.json:
        print(json.dumps({s["variant"]: s for s in summaries}, indent=2))
    if args.expect_exactly_once:
        bad = [(s["variant"], i) for s in summaries for i in s["not_exactly_once"]]
        for variant, intent in bad:
            print(f"{variant}: intent {intent} was not charged exactly once", file=sys.stderr)
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
