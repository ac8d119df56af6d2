"""Payments: payment intents and their charges, behind an HTTP API (payload format 2.0).

Every route starts with a variant:
  naive       ignores the Idempotency-Key header: every create makes an intent, every
              confirm inserts a charge, so a client that retries a lost response pays twice.
  idempotent  Stripe-style keys: the first request with a key stores its response; a retry
              with the same key and the same request gets that response back and changes
              nothing; the same key on a different request is refused with 422.

The store is SQLite at $STORE_PATH, shared by every execution environment (each a separate
process) and kept across restarts. Each effect is logged as one line on stdout, so the
handler's own log shows what really ran, whatever the client saw.
"""

import base64
import contextlib
import json
import os
import re
import sqlite3
import time
import uuid

VARIANTS = ("naive", "idempotent")
MAX_AMOUNT = 99_999_999  # cents; Stripe's limit for USD

SCHEMA = """
CREATE TABLE IF NOT EXISTS intents (
    id       TEXT PRIMARY KEY,
    variant  TEXT NOT NULL,
    amount   INTEGER NOT NULL,
    currency TEXT NOT NULL,
    status   TEXT NOT NULL,
    created  REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS charges (
    id       TEXT PRIMARY KEY,
    variant  TEXT NOT NULL,
    intent   TEXT NOT NULL REFERENCES intents (id),
    amount   INTEGER NOT NULL,
    currency TEXT NOT NULL,
    created  REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS charges_by_intent ON charges (intent);
-- One row per key that completed a request: what was asked, and what was answered.
CREATE TABLE IF NOT EXISTS idempotency_keys (
    variant  TEXT NOT NULL,
    key      TEXT NOT NULL,
    request  TEXT NOT NULL,
    status   INTEGER NOT NULL,
    body     TEXT NOT NULL,
    created  REAL NOT NULL,
    UNIQUE (variant, key)
);
"""


def connect(path):
    # isolation_level=None: the module issues BEGIN itself, so a transaction is exactly the
    # span written below. The timeout makes a writer wait for another environment's
    # transaction instead of failing with "database is locked".
    db = sqlite3.connect(path, timeout=10, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")  # readers never wait for the writer
    db.executescript(SCHEMA)
    return db


# Opened once per execution environment, during init, and reused by its invocations.
db = connect(os.environ.get("STORE_PATH", "/tmp/coldbrew-payments.sqlite"))


class BadRequest(Exception):
    """Raised before any effect: the request is answered 400 and nothing is stored."""


@contextlib.contextmanager
def transaction():
    # IMMEDIATE takes the write lock at BEGIN, so two environments handling the same key
    # queue up here: the second one then finds the first one's stored response. With a
    # deferred BEGIN both could read "no such key" and both charge; the UNIQUE constraint
    # would then fail one of them, but only after its effect had been attempted.
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def reply(status, body, headers=None):
    return {
        "statusCode": status,
        "headers": {"content-type": "application/json", **(headers or {})},
        "body": json.dumps(body),
    }


def new_id(prefix):
    return f"{prefix}_{uuid.uuid4().hex[:24]}"


def parse_body(event, required):
    text = event.get("body")
    if not text:
        if required:
            raise BadRequest("a JSON body is required")
        return {}
    if event.get("isBase64Encoded"):
        text = base64.b64decode(text).decode("utf-8", "replace")
    try:
        body = json.loads(text)
    except ValueError as e:
        raise BadRequest(f"malformed JSON body: {e}") from None
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object")
    return body


def validate_create(body):
    unknown = sorted(set(body) - {"amount", "currency"})
    if unknown:
        raise BadRequest(f"unknown field(s): {', '.join(unknown)}")
    amount = body.get("amount")
    # bool is an int in Python; `true` is not an amount.
    if not isinstance(amount, int) or isinstance(amount, bool) or not 0 < amount <= MAX_AMOUNT:
        raise BadRequest(f"amount must be an integer number of cents, 1..{MAX_AMOUNT}")
    currency = body.get("currency")
    if not isinstance(currency, str) or not re.fullmatch(r"[a-z]{3}", currency):
        raise BadRequest('currency must be a lowercase ISO 4217 code, e.g. "usd"')
    return amount, currency


def intent_json(intent_id):
    row = db.execute(
        "SELECT id, amount, currency, status, created FROM intents WHERE id = ?",
        (intent_id,)).fetchone()
    charges = db.execute(
        "SELECT id, amount, currency, created FROM charges WHERE intent = ? ORDER BY rowid",
        (intent_id,)).fetchall()
    return {
        "id": row[0], "object": "payment_intent", "amount": row[1], "currency": row[2],
        "status": row[3], "created": int(row[4]),
        "charges": [{"id": c[0], "amount": c[1], "currency": c[2], "created": int(c[3])}
                    for c in charges],
    }


# The effects. Each runs inside the caller's transaction and returns
# (status, body, log line or None); the line is printed only once the transaction commits.

def create_intent(variant, amount, currency):
    intent_id = new_id("pi")
    db.execute(
        "INSERT INTO intents (id, variant, amount, currency, status, created)"
        " VALUES (?, ?, ?, ?, 'requires_confirmation', ?)",
        (intent_id, variant, amount, currency, time.time()))
    return 201, intent_json(intent_id), (
        f"intent {intent_id} amount {amount} {currency} variant {variant}")


def confirm_intent(variant, intent_id):
    row = db.execute("SELECT amount, currency FROM intents WHERE id = ? AND variant = ?",
                     (intent_id, variant)).fetchone()
    if row is None:
        return 404, {"message": f"no payment intent {intent_id} in variant {variant}"}, None
    # No "already succeeded?" check on purpose: the point is what the key alone protects.
    # (A status check would also race between concurrent retries unless it ran in this same
    # transaction, and many real effects, such as a top-up or a transfer, have no such status.)
    amount, currency = row
    charge_id = new_id("ch")
    db.execute(
        "INSERT INTO charges (id, variant, intent, amount, currency, created)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (charge_id, variant, intent_id, amount, currency, time.time()))
    db.execute("UPDATE intents SET status = 'succeeded' WHERE id = ?", (intent_id,))
    return 200, intent_json(intent_id), (
        f"charge {charge_id} intent {intent_id} amount {amount} {currency} variant {variant}")


def describe(event, body):
    """What was asked (method, path, canonical body): a stored response is replayed only for
    the same request under the same key."""
    method = event["requestContext"]["http"]["method"]
    return f"{method} {event['rawPath']} {json.dumps(body, sort_keys=True)}"


def perform(variant, key, request, effect):
    """Runs effect() once per idempotency key in the idempotent variant, always in the naive one.

    `request` names what was asked (method, path, canonical body): a stored response is only
    replayed for the very same request, as Stripe does."""
    use_key = variant == "idempotent" and key
    with transaction():
        if use_key:
            row = db.execute(
                "SELECT request, status, body FROM idempotency_keys WHERE variant = ? AND key = ?",
                (variant, key)).fetchone()
            if row is not None:
                first_request, status, body = row
                if first_request != request:
                    return reply(422, {
                        "message": f"Idempotency-Key {key!r} was first used for "
                                   f"'{first_request}'; this request is '{request}'. "
                                   "Use a new key for a new request.",
                    })
                print(f"replay key {key} status {status} variant {variant} (no new effect)")
                return reply(status, json.loads(body), {"idempotent-replayed": "true"})
        status, body, line = effect()
        # Only a completed effect is remembered: a 4xx changed nothing, so the same key may
        # be retried once its cause is fixed.
        if use_key and 200 <= status < 300:
            db.execute(
                "INSERT INTO idempotency_keys (variant, key, request, status, body, created)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (variant, key, request, status, json.dumps(body), time.time()))
    if line:
        print(line)
    return reply(status, body)


def handler(event, context):
    params = event.get("pathParameters") or {}
    variant = params.get("variant")
    if variant not in VARIANTS:
        return reply(404, {"message": f"unknown variant {variant!r}: use naive or idempotent"})
    headers = {k.lower(): v for k, v in (event.get("headers") or {}).items()}
    key = headers.get("idempotency-key")
    route = event.get("routeKey")
    try:
        if route == "GET /{variant}/charges":
            rows = db.execute(
                "SELECT id, intent, amount, currency, created FROM charges WHERE variant = ?"
                " ORDER BY rowid", (variant,)).fetchall()
            return reply(200, {"charges": [
                {"id": r[0], "intent": r[1], "amount": r[2], "currency": r[3], "created": int(r[4])}
                for r in rows]})

        if route == "GET /{variant}/payment_intents/{id}":
            found = db.execute("SELECT 1 FROM intents WHERE id = ? AND variant = ?",
                               (params["id"], variant)).fetchone()
            if found is None:
                return reply(404, {
                    "message": f"no payment intent {params['id']} in variant {variant}"})
            return reply(200, intent_json(params["id"]))

        if route == "POST /{variant}/payment_intents":
            body = parse_body(event, required=True)
            amount, currency = validate_create(body)
            return perform(variant, key, describe(event, body),
                           lambda: create_intent(variant, amount, currency))

        if route == "POST /{variant}/payment_intents/{id}/confirm":
            body = parse_body(event, required=False)
            if body:
                raise BadRequest("confirm takes no body fields")
            return perform(variant, key, describe(event, body),
                           lambda: confirm_intent(variant, params["id"]))
    except BadRequest as e:
        return reply(400, {"message": str(e)})
    return reply(404, {"message": f"no route {route}"})
