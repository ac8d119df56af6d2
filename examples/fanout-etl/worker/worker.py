"""Fan-out ETL worker: downloads one byte range of the data set and counts orders per region.

Event: {"worker": k, "start": a, "end": b}, with a and b multiples of the 32-byte record
(see ../generate.py). The data set's address comes from DATA_URL, which coldbrew points at
this execution environment's dependency proxy; on AWS it would be the object store's URL.
Answer: {"worker", "start", "end", "bytes", "download_ms", "compute_ms", "cold_start",
"regions": {region: orders}}.
"""
import http.client
import os
import time
import urllib.parse

RECORD = 32
REGIONS = ["us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-south-1", "sa-east-1"]
# A region's field as it appears inside a record: ",<region padded to 12>,".
NEEDLES = {r: ("," + r.ljust(12) + ",").encode("ascii") for r in REGIONS}

_cold = True


def download(url, start, end):
    """Bytes start..end-1 of url, read into one buffer."""
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=300)
    try:
        conn.request("GET", parts.path or "/", headers={"Range": f"bytes={start}-{end - 1}"})
        res = conn.getresponse()
        if res.status != 206:
            raise RuntimeError(f"GET {url} range {start}-{end - 1}: HTTP {res.status}")
        buf = bytearray(end - start)
        view, got = memoryview(buf), 0
        while got < len(buf):
            n = res.readinto(view[got:])
            if not n:
                raise RuntimeError(f"GET {url}: connection closed after {got} of {len(buf)} bytes")
            got += n
        return buf
    finally:
        conn.close()


def handler(event, context):
    global _cold
    cold, _cold = _cold, False
    start, end = int(event["start"]), int(event["end"])
    if start < 0 or end < start or start % RECORD or end % RECORD:
        raise ValueError(f"range {start}..{end} is not whole {RECORD}-byte records")
    began = time.perf_counter()
    buf = download(os.environ["DATA_URL"], start, end) if end > start else bytearray()
    downloaded = time.perf_counter()
    regions = {r: buf.count(n) for r, n in NEEDLES.items()}
    done = time.perf_counter()
    return {
        "worker": event.get("worker"),
        "start": start,
        "end": end,
        "bytes": len(buf),
        "download_ms": round((downloaded - began) * 1000, 3),
        "compute_ms": round((done - downloaded) * 1000, 3),
        "cold_start": cold,
        "regions": regions,
    }
