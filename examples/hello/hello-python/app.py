"""HelloPython: greets and echoes the request, for REST (payload 1.0) and HTTP API (2.0) events."""

import base64
import json
import logging
import os
import platform

logger = logging.getLogger()
logger.setLevel(logging.INFO)  # Lambda's root logger starts at WARNING; INFO lines need this


def lambda_handler(event, context):
    v2 = event.get("version") == "2.0"
    method = event["requestContext"]["http"]["method"] if v2 else event["httpMethod"]
    path = event["rawPath"] if v2 else event["path"]
    query = event.get("queryStringParameters") or {}
    name = query.get("name", "world")

    posted = None
    if event.get("body"):
        text = event["body"]
        if event.get("isBase64Encoded"):
            text = base64.b64decode(text).decode("utf-8")
        try:
            posted = json.loads(text)
        except ValueError:
            posted = text

    # Goes to the log stream as "[INFO]\t<time>\t<request id>\t<message>".
    logger.info("%s %s (payload %s)", method, path, "2.0" if v2 else "1.0")

    return {
        "statusCode": 201 if method == "POST" else 200,
        "headers": {"content-type": "application/json", "x-hello-runtime": "python"},
        "body": json.dumps({
            "message": "{}, {}! From {} {}.".format(
                os.environ.get("GREETING"), name, os.environ.get("RUNTIME_LABEL"),
                platform.python_version()),
            "deployedIn": os.environ.get("DEPLOYED_IN"),
            "payloadVersion": "2.0" if v2 else "1.0",
            "method": method,
            "path": path,
            "query": query,
            "posted": posted,
            "requestId": context.aws_request_id,
            "remainingTimeMs": context.get_remaining_time_in_millis(),
        }),
    }
