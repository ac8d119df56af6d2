#!/usr/bin/env python3
"""payments' CI suite, run under `coldbrew test`: the retrying client against the idempotent
variant while the gateway loses confirm responses after the charge (a phantom after).

    rm -f /tmp/payments-ci.sqlite
    build/coldbrew test examples/payments --time-scale 0.01 \
        --parameter-overrides StorePath=/tmp/payments-ci.sqlite \
        --ensure 'faults.phantom >= 1' --ensure 'emulator_errors == 0' \
        --ensure 'availability[POST /{variant}/payment_intents] >= 99%' \
        -- python3 examples/payments/ci_suite.py

It reads the stack's addresses from COLDBREW_GATEWAY_URL and COLDBREW_ADMIN_URL (set by
`coldbrew test`), installs the phantom rule through the admin API, runs client.py with
--expect-exactly-once and exits with its status: 1 when any intent was charged twice. That is
the duplicates gate: a live run cannot tell a retry from a new request, the store can.
coldbrew's own gates check that the phantoms really happened and that creates stayed
available. --payments and --phantom-rate change the run (defaults 10 and 0.3); --variant naive
shows the suite failing on the double charges idempotency keys prevent.
"""
import argparse
import json
import os
import subprocess
import sys
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIRM_ROUTE = "POST /{variant}/payment_intents/{id}/confirm"  # as declared in template.yaml


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--payments", type=int, default=10)
    ap.add_argument("--phantom-rate", type=float, default=0.3)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--variant", choices=["idempotent", "naive"], default="idempotent")
    args = ap.parse_args()
    gateway = os.environ.get("COLDBREW_GATEWAY_URL")
    admin = os.environ.get("COLDBREW_ADMIN_URL")
    if not gateway or not admin:
        sys.exit("ci_suite.py: run me under `coldbrew test … -- python3 ci_suite.py`")

    rule = {"rules": [{"name": "lose-confirm", "route": CONFIRM_ROUTE,
                       "probability": args.phantom_rate,
                       "fault": {"kind": "phantom", "when": "after", "client_sees": "timeout"}}]}
    req = urllib.request.Request(admin + "/faults", data=json.dumps(rule).encode(), method="PUT",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req) as r:
        if r.status != 200:
            sys.exit(f"ci_suite.py: PUT /faults answered {r.status}")

    return subprocess.call([sys.executable, os.path.join(HERE, "client.py"), "--url", gateway,
                            "--variant", args.variant, "--payments", str(args.payments),
                            "--seed", str(args.seed), "--expect-exactly-once"])


if __name__ == "__main__":
    sys.exit(main())
