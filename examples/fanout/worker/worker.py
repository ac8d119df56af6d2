"""Fan-out worker: the count, sum, min and max of its share of a generated data set.

Item i of the data set for a seed is a 32-bit counter hash (the MurmurHash3 finaliser of
i + seed * 0x9E3779B9, modulo 2**32) reduced to [0, 1_000_000). Any share can be computed
without the others, so the work splits across workers by index range and the partial
results combine exactly.
"""

import time

MASK = 0xFFFFFFFF
# Counts invocations of this execution environment: the first one is its cold start.
_invocations = 0


def value(seed, i):
    x = (i + seed * 0x9E3779B9) & MASK
    x ^= x >> 16
    x = (x * 0x85EBCA6B) & MASK
    x ^= x >> 13
    x = (x * 0xC2B2AE35) & MASK
    x ^= x >> 16
    return x % 1_000_000


def handler(event, context):
    """event: {"seed", "start", "end", "worker"} (items start ≤ i < end)."""
    global _invocations
    _invocations += 1
    seed, start, end = int(event["seed"]), int(event["start"]), int(event["end"])
    if not 0 <= start <= end:
        raise ValueError(f"bad range [{start}, {end})")

    began = time.perf_counter()
    values = [value(seed, i) for i in range(start, end)]
    compute_ms = (time.perf_counter() - began) * 1000

    return {
        "worker": event.get("worker"),
        "start": start,
        "end": end,
        "count": len(values),
        "sum": sum(values),
        "min": min(values) if values else None,
        "max": max(values) if values else None,
        "compute_ms": round(compute_ms, 3),
        "cold_start": _invocations == 1,
        "request_id": context.aws_request_id,
    }
