#!/usr/bin/env python3
"""Writes the fan-out ETL example's data set: data/orders.csv and its manifest
data/orders.json (size, records, orders per region), deterministically from a seed.

Every record is one 32-byte line, `<order id:10>,<region:12>,<amount in cents:7>\\n`, so any
byte range that starts and ends on a multiple of 32 holds whole records and can be processed
on its own.

    python3 examples/fanout-etl/generate.py --mb 256 --seed 42
"""
import argparse
import json
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
RECORD = 32
REGIONS = ["us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-south-1", "sa-east-1"]
WEIGHTS = [30, 15, 20, 15, 12, 8]  # a skewed mix, as real traffic is


def write(path, mb, seed):
    records = mb * 1_000_000 // RECORD
    rng = random.Random(seed)
    counts = dict.fromkeys(REGIONS, 0)
    block = 65_536
    with open(path + ".tmp", "wb") as f:
        for first in range(0, records, block):
            n = min(block, records - first)
            regions = rng.choices(REGIONS, WEIGHTS, k=n)
            amounts = [rng.randrange(100, 10_000_000) for _ in range(n)]
            for r in regions:
                counts[r] += 1
            f.write("".join(f"{first + i:010d},{regions[i]:<12},{amounts[i]:07d}\n"
                            for i in range(n)).encode("ascii"))
    os.replace(path + ".tmp", path)
    return {"bytes": records * RECORD, "records": records, "record_bytes": RECORD,
            "seed": seed, "regions": counts}


def ensure(mb, seed, data=os.path.join(HERE, "data")):
    """The data set for (mb, seed) in `data`: reused when its orders.json says it is there."""
    os.makedirs(data, exist_ok=True)
    csv, manifest = os.path.join(data, "orders.csv"), os.path.join(data, "orders.json")
    try:
        with open(manifest) as f:
            m = json.load(f)
        if m.get("seed") == seed and m.get("bytes") == mb * 1_000_000 // RECORD * RECORD \
                and os.path.getsize(csv) == m["bytes"]:
            return csv, m
    except (OSError, ValueError, KeyError):
        pass
    m = write(csv, mb, seed)
    with open(manifest, "w") as f:
        json.dump(m, f, indent=2)
    return csv, m


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=256, help="size in MB (256)")
    ap.add_argument("--seed", type=int, default=42, help="seed (42)")
    ap.add_argument("--data-dir", default=os.path.join(HERE, "data"),
                    help="where to write orders.csv and orders.json (data/)")
    args = ap.parse_args()
    if args.mb < 1:
        ap.error("--mb must be at least 1")
    csv, m = ensure(args.mb, args.seed, args.data_dir)
    print(f"{csv}: {m['bytes']:,} bytes, {m['records']:,} records")


if __name__ == "__main__":
    main()
