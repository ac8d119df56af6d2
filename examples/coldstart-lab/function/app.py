"""The coldstart-lab handler: the same code for every variant. It reports whether this
invocation was its execution environment's first (a cold start) and how the environment
was initialised, so the lab script can count cold starts from the client side too."""
import json
import os

_first = True


def handler(event, context):
    global _first
    cold, _first = _first, False
    return {
        "statusCode": 200,
        "headers": {"content-type": "application/json"},
        "body": json.dumps({
            "cold": cold,
            "initialization_type": os.environ.get("AWS_LAMBDA_INITIALIZATION_TYPE"),
            "function": os.environ.get("AWS_LAMBDA_FUNCTION_NAME"),
        }),
    }
