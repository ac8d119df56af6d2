#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora from the project's own fixtures.

    make_seeds.py OUT_DIR

OUT_DIR/<target>/ receives one file per seed: the committed seeds under tools/fuzz/seeds/,
then what the tests and examples already hold — templates, serverless.yml and coldbrew.yaml
files, scenario files, the YAML and JSON texts written inline in the unit tests (C++ raw
strings), fault rules wrapped in admin requests, handler outputs, and every distribution
expression the sources spell out. Seeds are named by their content's hash, so running it
again adds nothing twice.
"""

import hashlib
import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
RAW = re.compile(r'R"([a-z]*)\((.*?)\)\1"', re.S)
DIST = re.compile(r"\b(fixed|uniform|normal|lognormal|exponential|percentiles|empirical|mixture)\(")
MAX_SEED = 64 * 1024


def raw_strings(pattern):
    for path in sorted(ROOT.glob(pattern)):
        for m in RAW.finditer(path.read_text(errors="replace")):
            yield m.group(2)


def files(*patterns):
    for pattern in patterns:
        for path in sorted(ROOT.glob(pattern)):
            if "node_modules" in path.parts or ".aws-sam" in path.parts:
                continue
            yield path.read_bytes()


def kind_of(yaml_text):
    top = {line.split(":", 1)[0] for line in yaml_text.splitlines()
           if line and not line[0].isspace() and ":" in line}
    if top & {"AWSTemplateFormatVersion", "Transform", "Resources"}:
        return "sam_template"
    if {"service", "provider"} <= top:
        return "serverless_yml"
    if "flow" in top or "components" in top:
        return "scenario"
    return "coldbrew_yaml"


def distributions(text):
    """Every balanced `kind(...)` expression in text."""
    for m in DIST.finditer(text):
        depth, i = 0, m.end() - 1
        while i < len(text):
            if text[i] == "(":
                depth += 1
            elif text[i] == ")":
                depth -= 1
                if depth == 0:
                    yield text[m.start():i + 1]
                    break
            elif text[i] in "\n\"":
                break
            i += 1


def http_request(method, target, body=b"", headers=()):
    head = f"{method} {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    for name, value in headers:
        head += f"{name}: {value}\r\n"
    if body or method in ("POST", "PUT"):
        head += f"Content-Length: {len(body)}\r\n"
    return head.encode() + b"\r\n" + body


def json_texts(text_iter):
    for t in text_iter:
        try:
            json.loads(t)
        except ValueError:
            continue
        yield t


def main():
    out = pathlib.Path(sys.argv[1])
    seeds = {}

    def add(target, data):
        if isinstance(data, str):
            data = data.encode()
        if len(data) > MAX_SEED:
            return
        seeds.setdefault(target, set()).add(data)

    for d in sorted((ROOT / "tools/fuzz/seeds").glob("*")):
        for f in sorted(d.iterdir()):
            add(d.name, f.read_bytes())

    for data in files("examples/*/template.yaml", "examples/*/template.yml", "tests/fixtures/*/template.yaml"):
        add("sam_template", data)
    for data in files("examples/*/serverless.yml", "tests/fixtures/*/serverless.yml"):
        add("serverless_yml", data)
    for data in files("examples/*/coldbrew.yaml", "tests/fixtures/*/coldbrew.yaml"):
        add("coldbrew_yaml", data)
    for data in files("examples/whatif/*.yaml"):
        add("scenario", data)
    for text in raw_strings("tests/unit/config/*.cpp"):
        add(kind_of(text), text)
    for text in raw_strings("tests/unit/sim/*.cpp"):
        if kind_of(text) == "scenario":
            add("scenario", text)

    sources = list(ROOT.glob("tests/unit/**/*.cpp")) + list(ROOT.glob("examples/**/*.yaml")) + \
        list(ROOT.glob("models/profiles/*.yaml"))
    for path in sources:
        if "node_modules" in path.parts:
            continue
        for d in distributions(path.read_text(errors="replace")):
            add("distribution", d)

    # Fault rules as the admin API receives them, from the rule tests and the admin tests.
    for text in json_texts(raw_strings("tests/unit/models/faults*_test.cpp")):
        add("admin_api", http_request("POST", "/faults", text.encode(),
                                      [("Content-Type", "application/json")]))
    for text in json_texts(raw_strings("tests/unit/admin/*.cpp")):
        add("admin_api", http_request("PUT", "/faults", text.encode()))

    # Handler outputs, behind each of the four routes' selector bytes.
    for text in raw_strings("tests/unit/gateway/responses_test.cpp"):
        for selector in (0, 1, 2, 3):
            add("gateway_response", bytes([selector]) + text.encode())

    # Invoke payloads and Runtime API bodies.
    for text in json_texts(raw_strings("tests/unit/invoke/*.cpp")):
        add("invoke_api", http_request("POST", "/2015-03-31/functions/pay/invocations", text.encode()))
    for text in json_texts(raw_strings("tests/unit/runtime_api/*.cpp")):
        add("runtime_api", http_request(
            "POST", "/2018-06-01/runtime/invocation/8476a536-e9f4-11e8-9739-2dfe598c3fcd/error",
            text.encode(), [("Lambda-Runtime-Function-Error-Type", "Function.Bad")]))

    total = 0
    for target, items in sorted(seeds.items()):
        d = out / target
        d.mkdir(parents=True, exist_ok=True)
        for data in items:
            (d / hashlib.sha1(data).hexdigest()).write_bytes(data)
        total += len(items)
        print(f"seeds: {target}: {len(items)}")
    print(f"seeds: {total} in {out}")


if __name__ == "__main__":
    main()
