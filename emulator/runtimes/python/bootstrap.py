"""coldbrew's Python runtime shim: the `python3*` counterpart of a `provided` bootstrap.

The supervisor runs `python3 -u <repo>/emulator/runtimes/python/bootstrap.py` in the
function's code directory with the Lambda environment (spec §1.6). This file speaks the
Runtime API (spec §1.1-1.4, [RTAPI][OAS]) and reproduces what AWS's Python runtime interface
client does with the user's code (aws/aws-lambda-python-runtime-interface-client,
awslambdaric/bootstrap.py, lambda_context.py, lambda_runtime_marshaller.py,
lambda_runtime_exception.py). Standard library only, Python 3.9+.

Behaviour taken from awslambdaric:
  - `_HANDLER` = `module.func`, split on the last dot; `pkg/mod` means `pkg.mod`;
    LAMBDA_TASK_ROOT is first on sys.path.
  - init errors, posted to /runtime/init/error, then exit(1):
    Runtime.MalformedHandlerName "Bad handler 'x': not enough values to unpack (expected 2, got 1)",
    Runtime.ImportModuleError "Unable to import module 'm': No module named 'm'",
    Runtime.UserCodeSyntaxError "Syntax error in module 'm': <SyntaxError>",
    Runtime.HandlerNotFound "Handler 'f' missing on module 'm'",
    Runtime.BuiltInModuleConflict for a handler module named like a built-in module.
    Any other exception while importing is reported with its own type.
  - error body {"errorMessage", "errorType", "requestId", "stackTrace": traceback.format_list()}
    with this file's frames removed; the same error is logged as
    "[ERROR] Type: message\\rTraceback (most recent call last):\\r..." on stdout.
  - result via JSON (Runtime.MarshalError "Unable to marshal response: ..." when it fails);
    `bytes` results are posted as they are.
  - logging: a root handler formatting "[LEVEL]\\t<UTC time>.<ms>Z\\t<request id>\\t<message>\\n";
    the root level stays WARNING unless AWS_LAMBDA_LOG_LEVEL is set, exactly as on AWS, so
    logging.info() is dropped until the function raises its logger's level.
    AWS_LAMBDA_LOG_FORMAT=JSON switches to JSON lines.
  - _X_AMZN_TRACE_ID is set per invoke from Lambda-Runtime-Trace-Id [RTAPI].

Differences, chosen on purpose: JSON is encoded with the standard `json` module (AWS uses
simplejson); Decimal results are encoded as numbers, as simplejson does. The Runtime API is
reached over one persistent connection with no timeout (a /next long poll must not time out
[RTAPI]).
"""

import importlib
import json
import logging
import os
import socket
import sys
import time
import traceback

_THIS_FILE = os.path.abspath(__file__)
_API_PREFIX = "/2018-06-01/runtime"
_ERROR_TYPE_HEADER = "Lambda-Runtime-Function-Error-Type"

# --------------------------------------------------------------------------------------------
# Errors (lambda_runtime_exception.py)


class FaultException(Exception):
    MARSHAL_ERROR = "Runtime.MarshalError"
    UNMARSHAL_ERROR = "Runtime.UnmarshalError"
    USER_CODE_SYNTAX_ERROR = "Runtime.UserCodeSyntaxError"
    HANDLER_NOT_FOUND = "Runtime.HandlerNotFound"
    IMPORT_MODULE_ERROR = "Runtime.ImportModuleError"
    BUILT_IN_MODULE_CONFLICT = "Runtime.BuiltInModuleConflict"
    MALFORMED_HANDLER_NAME = "Runtime.MalformedHandlerName"
    LAMBDA_CONTEXT_UNMARSHAL_ERROR = "Runtime.LambdaContextUnmarshalError"

    def __init__(self, exception_type, msg, trace=None):
        super().__init__(msg)
        self.exception_type = exception_type
        self.msg = msg
        self.trace = trace


def make_error(error_message, error_type, stack_trace, invoke_id=None):
    return {
        "errorMessage": error_message if error_message else "",
        "errorType": error_type if error_type else "",
        "requestId": invoke_id if invoke_id is not None else "",
        "stackTrace": stack_trace if stack_trace else [],
    }


def _user_frames(tb):
    """Traceback entries from the first frame that is not this file onwards."""
    frames = traceback.extract_tb(tb)
    for i, frame in enumerate(frames):
        if os.path.abspath(frame.filename) != _THIS_FILE:
            return frames[i:]
    return frames


def build_fault_result(exc_info, invoke_id=None):
    etype, value, tb = exc_info
    return make_error(str(value), etype.__name__, traceback.format_list(_user_frames(tb)), invoke_id)


# --------------------------------------------------------------------------------------------
# Logging (bootstrap.py: StandardLogSink, log_error, _setup_logging)

_LOG_FORMAT_JSON = (os.environ.get("AWS_LAMBDA_LOG_FORMAT") or "").upper() == "JSON"
_LOG_LEVEL = {"TRACE": "DEBUG", "DEBUG": "DEBUG", "INFO": "INFO", "WARN": "WARNING",
              "ERROR": "ERROR", "FATAL": "CRITICAL"}.get(
    (os.environ.get("AWS_LAMBDA_LOG_LEVEL") or "").upper())
_ERROR_LOG_IDENT = "\u00a0"  # AWS indents traceback lines with NO-BREAK SPACE
_current_request_id = None


def _write(text):
    sys.stdout.write(text)
    sys.stdout.flush()


def log_error(error_result):
    if _LOG_FORMAT_JSON:
        record = {"timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "level": "ERROR"}
        record.update(error_result)
        _write(json.dumps(record) + "\n")
        return
    description = "[ERROR]"
    if error_result.get("errorType"):
        description += " " + error_result["errorType"]
    if error_result.get("errorMessage"):
        if error_result.get("errorType"):
            description += ":"
        description += " " + error_result["errorMessage"]
    lines = [description]
    stack = error_result.get("stackTrace")
    if stack is not None:
        lines.append("Traceback (most recent call last):")
        for element in stack:
            if element == "":
                lines.append("")
                continue
            for line in element.splitlines():
                stripped = line.lstrip(" ")
                lines.append(_ERROR_LOG_IDENT * (len(line) - len(stripped)) + stripped)
    # One CloudWatch event: lines joined with \r.
    _write("\r".join(lines) + "\n")


class _RequestIdFilter(logging.Filter):
    def filter(self, record):
        record.aws_request_id = _current_request_id or ""
        return True


class _SinkHandler(logging.Handler):
    """Writes formatted records as they are: the format carries its own newline."""

    def emit(self, record):
        try:
            _write(self.format(record))
        except Exception:  # logging must never break the invocation
            self.handleError(record)


class _JsonFormatter(logging.Formatter):
    def format(self, record):
        out = {
            "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + ".%03dZ" % record.msecs,
            "level": record.levelname,
            "message": record.getMessage(),
            "logger": record.name,
            "requestId": getattr(record, "aws_request_id", ""),
        }
        if record.exc_info:
            etype, value, tb = record.exc_info
            out["errorType"] = etype.__name__ if etype else None
            out["errorMessage"] = str(value)
            out["stackTrace"] = traceback.format_tb(tb)
        return json.dumps(out, default=str) + "\n"


def setup_logging():
    logging.Formatter.converter = time.gmtime
    handler = _SinkHandler()
    if _LOG_FORMAT_JSON:
        handler.setFormatter(_JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter(
            "[%(levelname)s]\t%(asctime)s.%(msecs)03dZ\t%(aws_request_id)s\t%(message)s\n",
            "%Y-%m-%dT%H:%M:%S"))
    handler.addFilter(_RequestIdFilter())
    root = logging.getLogger()
    if _LOG_LEVEL:
        root.setLevel(_LOG_LEVEL)
    root.addHandler(handler)


# --------------------------------------------------------------------------------------------
# Runtime API client


class _ConnectionClosed(ConnectionError):
    pass


class _Headers(dict):
    """Response headers by lower-case name; get() takes any case, as http.client's did."""

    def get(self, name, default=None):
        return dict.get(self, name.lower(), default)


class RuntimeClient:
    """One keep-alive connection with no timeout (a /next long poll must never time out
    [RTAPI]); HTTP/1.1 written and read on a plain socket. http.client parses every response's
    headers with the email package and pulls in ssl: more CPU per invocation than a small
    handler takes, and megabytes of resident memory in every environment."""

    def __init__(self, address):
        host, _, port = address.rpartition(":")
        self._host, self._port = host.strip("[]"), int(port)
        self._host_header = "Host: %s\r\n" % address
        self._sock = None
        self._buf = b""
        self._reused = False

    def _close(self):
        if self._sock is not None:
            self._sock.close()
        self._sock = None
        self._buf = b""

    def _recv(self):
        chunk = self._sock.recv(65536)
        if not chunk:
            raise _ConnectionClosed("the Runtime API closed the connection")
        return chunk

    def _read_response(self):
        buf = bytearray(self._buf)  # bytearray: appending is not quadratic for large bodies
        end = buf.find(b"\r\n\r\n")
        while end < 0:
            buf += self._recv()
            end = buf.find(b"\r\n\r\n")
        lines = buf[:end].decode("latin-1").split("\r\n")
        status = int(lines[0][9:12])
        headers = _Headers()
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if not sep:
                continue
            name, value = name.strip().lower(), value.strip()
            headers[name] = headers[name] + ", " + value if name in headers else value
        rest = buf[end + 4:]
        if "chunked" in headers.get("transfer-encoding", "").lower():
            parts = []
            while True:
                while b"\r\n" not in rest:
                    rest += self._recv()
                line, _, rest = rest.partition(b"\r\n")
                size = int(line.split(b";")[0], 16)
                if size == 0:
                    # Trailers, if any, end with an empty line.
                    while True:
                        while b"\r\n" not in rest:
                            rest += self._recv()
                        line, _, rest = rest.partition(b"\r\n")
                        if not line:
                            break
                    break
                while len(rest) < size + 2:
                    rest += self._recv()
                parts.append(rest[:size])
                rest = rest[size + 2:]
            body = b"".join(parts)
            rest = bytes(rest)
        else:
            length = int(headers.get("content-length") or 0)
            while len(rest) < length:
                rest += self._recv()
            body, rest = bytes(rest[:length]), bytes(rest[length:])
        self._buf = rest
        if headers.get("connection", "").lower() == "close":
            self._close()
        return status, headers, body

    def _request(self, method, path, body=None, headers=None):
        head = "%s %s HTTP/1.1\r\n%s" % (method, path, self._host_header)
        if headers:
            for name, value in headers.items():
                head += "%s: %s\r\n" % (name, value)
        if body is not None:
            head += "Content-Length: %d\r\n" % len(body)
        data = (head + "\r\n").encode("latin-1")
        if body:
            data += body
        for attempt in (0, 1):
            if self._sock is None:
                self._sock = socket.create_connection((self._host, self._port))
                self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                self._reused = False
            reused = self._reused
            try:
                self._sock.sendall(data)
                response = self._read_response()
                self._reused = True
                return response
            except (ConnectionResetError, BrokenPipeError, _ConnectionClosed):
                # The server closed our idle keep-alive connection before reading the request;
                # reconnect once and send it again.
                self._close()
                if attempt == 1 or not reused:
                    raise
        raise AssertionError("unreachable")

    def next(self):
        status, headers, data = self._request("GET", _API_PREFIX + "/invocation/next")
        if status != 200:
            # 403/500 from /next mean "the runtime must exit" [OAS].
            raise RuntimeError("GET /invocation/next returned %d: %s"
                               % (status, data.decode("utf-8", "replace")))
        return headers, data

    def post_result(self, invoke_id, payload, content_type="application/json"):
        self._request("POST", "%s/invocation/%s/response" % (_API_PREFIX, invoke_id), payload,
                      {"Content-Type": content_type})

    def post_error(self, invoke_id, error_result):
        self._request("POST", "%s/invocation/%s/error" % (_API_PREFIX, invoke_id),
                      to_json(error_result).encode("utf-8"),
                      {"Content-Type": "application/json",
                       _ERROR_TYPE_HEADER: _header_safe(error_result.get("errorType"))})

    def post_init_error(self, error_result):
        self._request("POST", _API_PREFIX + "/init/error", to_json(error_result).encode("utf-8"),
                      {"Content-Type": "application/json",
                       _ERROR_TYPE_HEADER: _header_safe(error_result.get("errorType"))})


def _header_safe(value):
    text = "".join(c if " " <= c <= "~" else "_" for c in str(value or ""))
    return text or "Unknown"


# --------------------------------------------------------------------------------------------
# Marshalling (lambda_runtime_marshaller.py)


def _json_default(obj):
    # decimal is imported only by code that makes Decimals; not loading it saves memory.
    decimal = sys.modules.get("decimal")
    if decimal is not None and isinstance(obj, decimal.Decimal):
        return int(obj) if obj == obj.to_integral_value() else float(obj)
    raise TypeError("Object of type %s is not JSON serializable" % type(obj).__name__)


# AWS's python3.12 runtime stopped escaping non-ASCII (ensure_ascii=False); older ones escape.
_ENSURE_ASCII = os.environ.get("AWS_EXECUTION_ENV", "") in (
    "AWS_Lambda_python3.8", "AWS_Lambda_python3.9", "AWS_Lambda_python3.10", "AWS_Lambda_python3.11")


def to_json(obj):
    return json.dumps(obj, default=_json_default, ensure_ascii=_ENSURE_ASCII)


def marshal_response(response):
    if isinstance(response, bytes):
        return response, "application/unknown"
    try:
        return to_json(response).encode("utf-8"), "application/json"
    except Exception as e:
        raise FaultException(FaultException.MARSHAL_ERROR,
                             "Unable to marshal response: {}".format(str(e)), None)


# --------------------------------------------------------------------------------------------
# Context (lambda_context.py)


class CognitoIdentity:
    __slots__ = ["cognito_identity_id", "cognito_identity_pool_id"]

    def __repr__(self):
        return "CognitoIdentity([cognito_identity_id={},cognito_identity_pool_id={}])".format(
            self.cognito_identity_id, self.cognito_identity_pool_id)


class Client:
    __slots__ = ["installation_id", "app_title", "app_version_name", "app_version_code",
                 "app_package_name"]


class ClientContext:
    __slots__ = ["custom", "env", "client"]


def _obj_from_dict(cls, d):
    if d is None:
        return None
    obj = cls()
    for field in cls.__slots__:
        setattr(obj, field, d.get(field))
    return obj


class LambdaContext:
    def __init__(self, invoke_id, client_context, cognito_identity, epoch_deadline_ms,
                 invoked_function_arn=None, tenant_id=None):
        self.aws_request_id = invoke_id
        self.log_group_name = os.environ.get("AWS_LAMBDA_LOG_GROUP_NAME")
        self.log_stream_name = os.environ.get("AWS_LAMBDA_LOG_STREAM_NAME")
        self.function_name = os.environ.get("AWS_LAMBDA_FUNCTION_NAME")
        self.memory_limit_in_mb = os.environ.get("AWS_LAMBDA_FUNCTION_MEMORY_SIZE")
        self.function_version = os.environ.get("AWS_LAMBDA_FUNCTION_VERSION")
        self.invoked_function_arn = invoked_function_arn
        self.tenant_id = tenant_id
        self.client_context = _obj_from_dict(ClientContext, client_context)
        if self.client_context is not None:
            self.client_context.client = _obj_from_dict(Client, self.client_context.client)
        self.identity = _obj_from_dict(CognitoIdentity, {})
        if cognito_identity is not None:
            self.identity.cognito_identity_id = cognito_identity.get("cognitoIdentityId")
            self.identity.cognito_identity_pool_id = cognito_identity.get("cognitoIdentityPoolId")
        self._epoch_deadline_ms = epoch_deadline_ms

    def get_remaining_time_in_millis(self):
        delta = self._epoch_deadline_ms - int(time.time() * 1000)
        return delta if delta > 0 else 0

    def log(self, msg):
        _write(str(msg))

    def __repr__(self):
        return ("LambdaContext([aws_request_id={},log_group_name={},log_stream_name={},"
                "function_name={},memory_limit_in_mb={},function_version={},"
                "invoked_function_arn={},client_context={},identity={}])").format(
            self.aws_request_id, self.log_group_name, self.log_stream_name, self.function_name,
            self.memory_limit_in_mb, self.function_version, self.invoked_function_arn,
            self.client_context, self.identity)


def _parse_json_header(value, name):
    if not value:
        return None
    try:
        return json.loads(value)
    except Exception as e:
        raise FaultException(FaultException.LAMBDA_CONTEXT_UNMARSHAL_ERROR,
                             "Unable to parse {} JSON: {}".format(name, str(e)), None)


# --------------------------------------------------------------------------------------------
# Handler loading (bootstrap.py _get_handler)


def get_handler(handler):
    try:
        modname, fname = handler.rsplit(".", 1)
    except ValueError as e:
        raise FaultException(FaultException.MALFORMED_HANDLER_NAME,
                             "Bad handler '{}': {}".format(handler, str(e)))
    try:
        if modname.split(".")[0] in sys.builtin_module_names:
            raise FaultException(FaultException.BUILT_IN_MODULE_CONFLICT,
                                 "Cannot use built-in module {} as a handler module".format(modname))
        module = importlib.import_module(modname.replace("/", "."))
    except ImportError as e:
        raise FaultException(FaultException.IMPORT_MODULE_ERROR,
                             "Unable to import module '{}': {}".format(modname, str(e)))
    except SyntaxError as e:
        trace = ['  File "%s" Line %s\n    %s' % (e.filename, e.lineno, e.text)]
        raise FaultException(FaultException.USER_CODE_SYNTAX_ERROR,
                             "Syntax error in module '{}': {}".format(modname, str(e)), trace)
    try:
        return getattr(module, fname)
    except AttributeError:
        raise FaultException(FaultException.HANDLER_NOT_FOUND,
                             "Handler '{}' missing on module '{}'".format(fname, modname), None)


# --------------------------------------------------------------------------------------------
# The loop (bootstrap.py run / handle_event_request)


def handle_invocation(client, request_handler, headers, body):
    global _current_request_id
    invoke_id = headers.get("Lambda-Runtime-Aws-Request-Id")
    _current_request_id = invoke_id
    trace_id = headers.get("Lambda-Runtime-Trace-Id")
    if trace_id is not None:
        os.environ["_X_AMZN_TRACE_ID"] = trace_id
    else:
        os.environ.pop("_X_AMZN_TRACE_ID", None)

    error_result = None
    try:
        context = LambdaContext(
            invoke_id,
            _parse_json_header(headers.get("Lambda-Runtime-Client-Context"), "Client Context"),
            _parse_json_header(headers.get("Lambda-Runtime-Cognito-Identity"), "Cognito Identity"),
            int(headers.get("Lambda-Runtime-Deadline-Ms") or 0),
            headers.get("Lambda-Runtime-Invoked-Function-Arn"),
            headers.get("Lambda-Runtime-Aws-Tenant-Id"),
        )
        try:
            event = json.loads(body)
        except Exception as e:
            raise FaultException(FaultException.UNMARSHAL_ERROR,
                                 "Unable to unmarshal input: {}".format(str(e)), None)
        response = request_handler(event, context)
        payload, content_type = marshal_response(response)
    except FaultException as e:
        error_result = make_error(e.msg, e.exception_type, e.trace, invoke_id)
    except Exception:
        error_result = build_fault_result(sys.exc_info(), invoke_id)

    if error_result is not None:
        log_error(error_result)
        client.post_error(invoke_id, error_result)
    else:
        client.post_result(invoke_id, payload, content_type)


def main():
    address = os.environ.get("AWS_LAMBDA_RUNTIME_API")
    if not address:
        sys.stderr.write("coldbrew python runtime: AWS_LAMBDA_RUNTIME_API is not set\n")
        sys.exit(1)

    # The user's code directory comes first, and this shim's own directory (which Python put at
    # sys.path[0]) must not shadow or be shadowed by the user's modules.
    task_root = os.environ.get("LAMBDA_TASK_ROOT") or os.getcwd()
    shim_dir = os.path.dirname(_THIS_FILE)
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != shim_dir]
    sys.path.insert(0, task_root)

    client = RuntimeClient(address)
    setup_logging()
    try:
        request_handler = get_handler(os.environ.get("_HANDLER", ""))
    except FaultException as e:
        error_result = make_error(e.msg, e.exception_type, e.trace)
        log_error(error_result)
        client.post_init_error(error_result)
        sys.exit(1)
    except Exception:
        error_result = build_fault_result(sys.exc_info())
        log_error(error_result)
        client.post_init_error(error_result)
        sys.exit(1)

    while True:
        try:
            headers, body = client.next()
        except Exception as e:
            sys.stderr.write("coldbrew python runtime: %s\n" % e)
            sys.exit(1)
        handle_invocation(client, request_handler, headers, body)


if __name__ == "__main__":
    main()
