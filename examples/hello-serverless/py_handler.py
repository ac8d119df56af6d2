"""pyhello (Python): greets and echoes the request, for REST (1.0) and HTTP API (2.0) events."""

import json
import os


def hello(event, context):
    v2 = event.get("version") == "2.0"
    method = event["requestContext"]["http"]["method"] if v2 else event["httpMethod"]
    path = event["rawPath"] if v2 else event["path"]
    name = (event.get("queryStringParameters") or {}).get("name", "world")
    print("{} {} (payload {})".format(method, path, "2.0" if v2 else "1.0"))
    return {
        "statusCode": 200,
        "headers": {"content-type": "application/json"},
        "body": json.dumps({
            "message": "{}, {}! From {}.".format(
                os.environ.get("GREETING"), name, os.environ.get("RUNTIME_LABEL")),
            "service": os.environ.get("SERVICE_NAME"),
            "stage": os.environ.get("STAGE"),
            "functionName": context.function_name,
            "payloadVersion": "2.0" if v2 else "1.0",
            "method": method,
            "path": path,
        }),
    }
