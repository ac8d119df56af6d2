#include "emulator/codec/base64.hpp"
#include "emulator/invoke/invoke_api.hpp"
#include "tests/catch.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

using namespace coldbrew;
using namespace coldbrew::invoke;

namespace {
constexpr const char* rid = "8f5a5c1e-0000-4000-8000-000000000001";
const context ctx{"us-east-1", "123456789012", rid};

http::request make(std::string target, std::string body = "{}", http::header_list headers = {},
                   std::string method = "POST") {
    http::request r;
    r.method = std::move(method);
    r.target = std::move(target);
    r.body = std::move(body);
    r.headers = std::move(headers);
    return r;
}

std::string path_for(std::string_view function_name) {
    return "/2015-03-31/functions/" + std::string(function_name) + "/invocations";
}

invoke_request parsed(const http::request& r) {
    auto v = parse_invoke(r, ctx);
    if (auto* res = std::get_if<http::response>(&v)) {
        INFO("rejected: " << res->status << " " << res->body);
        FAIL("expected the request to parse");
    }
    return std::get<invoke_request>(v);
}

http::response rejected(const http::request& r) {
    auto v = parse_invoke(r, ctx);
    REQUIRE(std::holds_alternative<http::response>(v));
    return std::get<http::response>(v);
}

std::string header(const http::response& r, std::string_view name) {
    auto v = r.header(name);
    return v ? std::string(*v) : std::string("<absent>");
}

// Every service error carries these four things.
void check_error(const http::response& r, int status, std::string_view code, std::string_view body,
                 std::string_view request_id = rid) {
    CHECK(r.status == status);
    CHECK(header(r, "x-amzn-ErrorType") == code);
    CHECK(header(r, "x-amzn-RequestId") == request_id);
    CHECK(header(r, "Content-Type") == "application/json");
    CHECK(r.body == body);
}

std::string base64(std::string_view s) {
    return codec::base64_encode(s);
}
} // namespace

// ---------------------------------------------------------------- FunctionName forms

TEST_CASE("invoke: a plain function name", "[unit]") {
    auto r = parsed(make(path_for("my-function"), R"js({"a":1})js"));
    CHECK(r.function == "my-function");
    CHECK_FALSE(r.qualifier);
    CHECK(r.as_given == "my-function");
    CHECK(r.type == invocation_type::request_response);
    CHECK_FALSE(r.tail_log);
    CHECK(r.client_context.empty());
    CHECK(r.payload == R"js({"a":1})js");
    CHECK(serves_qualifier(r));
    CHECK(function_arn(r, ctx) == "arn:aws:lambda:us-east-1:123456789012:function:my-function");
}

TEST_CASE("invoke: name:qualifier, raw and with %3A", "[unit]") {
    for (auto seg : {"worker:live", "worker%3Alive", "worker%3alive"}) {
        INFO(seg);
        auto r = parsed(make(path_for(seg)));
        CHECK(r.function == "worker");
        REQUIRE(r.qualifier);
        CHECK(*r.qualifier == "live");
        CHECK(r.as_given == "worker:live");
        CHECK_FALSE(serves_qualifier(r));
        CHECK(function_arn(r, ctx) == "arn:aws:lambda:us-east-1:123456789012:function:worker:live");
    }
    auto latest = parsed(make(path_for("worker%3A%24LATEST")));
    CHECK(latest.function == "worker");
    CHECK(latest.qualifier == std::optional<std::string>("$LATEST"));
    CHECK(serves_qualifier(latest));
    auto version = parsed(make(path_for("worker:7")));
    CHECK(version.qualifier == std::optional<std::string>("7"));
    CHECK_FALSE(serves_qualifier(version));
}

TEST_CASE("invoke: partial ARN with and without qualifier", "[unit]") {
    auto r = parsed(make(path_for("123456789012%3Afunction%3Aworker")));
    CHECK(r.function == "worker");
    CHECK_FALSE(r.qualifier);
    CHECK(r.as_given == "123456789012:function:worker");
    auto q = parsed(make(path_for("123456789012:function:worker:$LATEST")));
    CHECK(q.function == "worker");
    CHECK(q.qualifier == std::optional<std::string>("$LATEST"));
}

TEST_CASE("invoke: full ARN, raw and URL-encoded", "[unit]") {
    for (auto seg : {"arn:aws:lambda:us-east-1:123456789012:function:Fan_Out-1",
                     "arn%3Aaws%3Alambda%3Aus-east-1%3A123456789012%3Afunction%3AFan_Out-1"}) {
        INFO(seg);
        auto r = parsed(make(path_for(seg)));
        CHECK(r.function == "Fan_Out-1");
        CHECK_FALSE(r.qualifier);
        CHECK(r.as_given == "arn:aws:lambda:us-east-1:123456789012:function:Fan_Out-1");
    }
    auto q = parsed(make(path_for("arn:aws:lambda:us-east-1:123456789012:function:w.x:prod")));
    CHECK(q.function == "w.x");
    CHECK(q.qualifier == std::optional<std::string>("prod"));
}

TEST_CASE("invoke: ?Qualifier= sets the qualifier and must agree with the name's", "[unit]") {
    auto r = parsed(make(path_for("worker") + "?Qualifier=%24LATEST"));
    CHECK(r.function == "worker");
    CHECK(r.qualifier == std::optional<std::string>("$LATEST"));
    CHECK(serves_qualifier(r));

    auto alias = parsed(make(path_for("worker") + "?Qualifier=live"));
    CHECK(alias.qualifier == std::optional<std::string>("live"));
    CHECK_FALSE(serves_qualifier(alias));

    auto same = parsed(make(path_for("worker:live") + "?Qualifier=live"));
    CHECK(same.qualifier == std::optional<std::string>("live"));

    auto empty = parsed(make(path_for("worker") + "?Qualifier="));
    CHECK_FALSE(empty.qualifier);

    auto other_params = parsed(make(path_for("worker") + "?x=1&Qualifier=3"));
    CHECK(other_params.qualifier == std::optional<std::string>("3"));

    check_error(
        rejected(make(path_for("worker:live") + "?Qualifier=dev")), 400,
        "InvalidParameterValueException",
        R"js({"Type":"User","message":"The derived qualifier from the function name does not match the specified qualifier."})js");
}

TEST_CASE("invoke: a function name outside the model's constraints is a ValidationException",
          "[unit]") {
    const std::string pattern =
        R"js((arn:(aws[a-zA-Z-]*)?:lambda:)?([a-z]{2}((-gov)|(-iso([a-z]?)))?-[a-z]+-\\d{1}:)?(\\d{12}:)?(function:)?([a-zA-Z0-9-_\\.]+)(:(\\$LATEST|[a-zA-Z0-9-_]+))?)js";
    check_error(
        rejected(make(path_for("bad%20name"))), 400, "ValidationException",
        R"js({"message":"1 validation error detected: Value 'bad name' at 'functionName' failed to satisfy constraint: Member must satisfy regular expression pattern: )js" +
            pattern + R"js("})js");
    // %2F decodes into the name; it is not a path separator.
    CHECK(rejected(make(path_for("a%2Fb"))).status == 400);
    check_error(
        rejected(make(path_for(std::string(171, 'a')))), 400, "ValidationException",
        R"js({"message":"1 validation error detected: Value ')js" + std::string(171, 'a') +
            R"js(' at 'functionName' failed to satisfy constraint: Member must have length less than or equal to 170"})js");
    CHECK(parsed(make(path_for(std::string(170, 'a')))).function == std::string(170, 'a'));
    check_error(
        rejected(make(path_for("worker") + "?Qualifier=a.b")), 400, "ValidationException",
        R"js({"message":"1 validation error detected: Value 'a.b' at 'qualifier' failed to satisfy constraint: Member must satisfy regular expression pattern: (|[a-zA-Z0-9$_-]+)"})js");
}

TEST_CASE("invoke: an ARN of another region or account names no function here", "[unit]") {
    check_error(
        rejected(make(path_for("arn:aws:lambda:eu-west-1:123456789012:function:worker"))), 404,
        "ResourceNotFoundException",
        R"js({"Type":"User","Message":"Functions from 'eu-west-1' are not reachable in this region ('us-east-1')"})js");
    check_error(
        rejected(make(path_for("210987654321:function:worker:live"))), 404,
        "ResourceNotFoundException",
        R"js({"Type":"User","Message":"Function not found: arn:aws:lambda:us-east-1:210987654321:function:worker:live"})js");
}

// ---------------------------------------------------------------- routing

TEST_CASE("invoke: other paths and methods are UnknownOperationException", "[unit]") {
    auto expect_unknown = [](const http::request& req) {
        INFO(req.method << " " << req.target);
        auto r = rejected(req);
        CHECK(r.status == 404);
        CHECK(header(r, "x-amzn-ErrorType") == "UnknownOperationException");
        CHECK(header(r, "x-amzn-RequestId") == rid);
        CHECK(header(r, "Content-Type") == "application/json");
        auto body = nlohmann::json::parse(r.body);
        CHECK(body["message"].get<std::string>().find(req.method + " ") != std::string::npos);
    };
    expect_unknown(make(path_for("worker"), "{}", {}, "GET"));
    expect_unknown(make("/2015-03-31/functions/worker"));
    expect_unknown(make("/2015-03-31/functions/worker/invocations/"));
    expect_unknown(make("/2015-03-31/functions/a/b/invocations"));
    expect_unknown(make("/2015-03-31/functions//invocations/x"));
    expect_unknown(make("/2021-11-15/functions/worker/response-streaming-invocations"));
    expect_unknown(make("/"));
    check_error(
        rejected(make("/nope", "{}", {}, "GET")), 404, "UnknownOperationException",
        R"js({"message":"coldbrew serves only the Invoke operation (POST /2015-03-31/functions/{FunctionName}/invocations); got GET /nope"})js");
}

TEST_CASE("invoke: an empty FunctionName violates its minimum length", "[unit]") {
    check_error(
        rejected(make("/2015-03-31/functions//invocations")), 400, "ValidationException",
        R"js({"message":"1 validation error detected: Value '' at 'functionName' failed to satisfy constraint: Member must have length greater than or equal to 1"})js");
}

// ---------------------------------------------------------------- invocation and log types

TEST_CASE("invoke: X-Amz-Invocation-Type selects the type", "[unit]") {
    CHECK(parsed(make(path_for("f"), "{}", {{"X-Amz-Invocation-Type", "RequestResponse"}})).type ==
          invocation_type::request_response);
    CHECK(parsed(make(path_for("f"), "{}", {{"x-amz-invocation-type", "Event"}})).type ==
          invocation_type::event);
    CHECK(parsed(make(path_for("f"), "{}", {{"X-Amz-Invocation-Type", "DryRun"}})).type ==
          invocation_type::dry_run);
    CHECK(parsed(make(path_for("f"), "{}", {{"X-Amz-Invocation-Type", ""}})).type ==
          invocation_type::request_response);
}

TEST_CASE("invoke: an unknown invocation or log type is a ValidationException", "[unit]") {
    check_error(
        rejected(make(path_for("f"), "{}", {{"X-Amz-Invocation-Type", "dry_run"}})), 400,
        "ValidationException",
        R"js({"message":"1 validation error detected: Value 'dry_run' at 'invocationType' failed to satisfy constraint: Member must satisfy enum value set: [DryRun, RequestResponse, Event]"})js");
    check_error(
        rejected(make(path_for("f"), "{}", {{"X-Amz-Log-Type", "tail"}})), 400,
        "ValidationException",
        R"js({"message":"1 validation error detected: Value 'tail' at 'logType' failed to satisfy constraint: Member must satisfy enum value set: [None, Tail]"})js");
    // Every violation is reported at once, as the AWS front end does.
    check_error(
        rejected(make(path_for("b%21d"), "{}",
                      {{"X-Amz-Invocation-Type", "Async"}, {"X-Amz-Log-Type", "All"}})),
        400, "ValidationException",
        R"js({"message":"3 validation errors detected: Value 'b!d' at 'functionName' failed to satisfy constraint: Member must satisfy regular expression pattern: (arn:(aws[a-zA-Z-]*)?:lambda:)?([a-z]{2}((-gov)|(-iso([a-z]?)))?-[a-z]+-\\d{1}:)?(\\d{12}:)?(function:)?([a-zA-Z0-9-_\\.]+)(:(\\$LATEST|[a-zA-Z0-9-_]+))?; Value 'Async' at 'invocationType' failed to satisfy constraint: Member must satisfy enum value set: [DryRun, RequestResponse, Event]; Value 'All' at 'logType' failed to satisfy constraint: Member must satisfy enum value set: [None, Tail]"})js");
}

TEST_CASE("invoke: X-Amz-Log-Type Tail applies to RequestResponse only", "[unit]") {
    CHECK(parsed(make(path_for("f"), "{}", {{"X-Amz-Log-Type", "Tail"}})).tail_log);
    CHECK_FALSE(parsed(make(path_for("f"), "{}", {{"X-Amz-Log-Type", "None"}})).tail_log);
    CHECK_FALSE(parsed(make(path_for("f"), "{}",
                            {{"X-Amz-Log-Type", "Tail"}, {"X-Amz-Invocation-Type", "Event"}}))
                    .tail_log);
    CHECK_FALSE(parsed(make(path_for("f"), "{}",
                            {{"X-Amz-Log-Type", "Tail"}, {"X-Amz-Invocation-Type", "DryRun"}}))
                    .tail_log);
}

// ---------------------------------------------------------------- client context

TEST_CASE("invoke: X-Amz-Client-Context is base64-decoded JSON", "[unit]") {
    const std::string cc = R"js({"custom":{"k":"v"},"env":{},"client":{}})js";
    auto r = parsed(make(path_for("f"), "{}", {{"X-Amz-Client-Context", base64(cc)}}));
    CHECK(r.client_context == cc);
    // Passed to the function for synchronous invocations only [INVOKE].
    auto e =
        parsed(make(path_for("f"), "{}",
                    {{"X-Amz-Client-Context", base64(cc)}, {"X-Amz-Invocation-Type", "Event"}}));
    CHECK(e.client_context.empty());
    CHECK(parsed(make(path_for("f"), "{}", {{"X-Amz-Client-Context", ""}})).client_context.empty());
}

TEST_CASE("invoke: a malformed client context is InvalidRequestContentException", "[unit]") {
    const std::string body =
        R"js({"Type":"User","message":"Client context must be a valid Base64-encoded JSON object."})js";
    check_error(rejected(make(path_for("f"), "{}", {{"X-Amz-Client-Context", "not base64!"}})), 400,
                "InvalidRequestContentException", body);
    check_error(rejected(make(path_for("f"), "{}", {{"X-Amz-Client-Context", base64("{oops")}})),
                400, "InvalidRequestContentException", body);
    check_error(rejected(make(path_for("f"), "{}", {{"X-Amz-Client-Context", base64("[1,2]")}})),
                400, "InvalidRequestContentException", body);
    // Malformed is malformed whatever the invocation type.
    check_error(
        rejected(make(path_for("f"), "{}",
                      {{"X-Amz-Client-Context", "%%%"}, {"X-Amz-Invocation-Type", "Event"}})),
        400, "InvalidRequestContentException", body);
}

TEST_CASE("invoke: client context is limited to 3583 bytes of base64", "[unit]") {
    // A 2687-byte JSON object encodes to 3584 characters ending in one '='; without the
    // padding (which the decoder does not require) it is 3583.
    const std::string json = R"({"k":")" + std::string(2687 - 8, 'x') + R"("})";
    REQUIRE(json.size() == 2687);
    const std::string padded = base64(json);
    REQUIRE(padded.size() == 3584);
    REQUIRE(padded.back() == '=');
    const std::string at_limit = padded.substr(0, 3583);
    CHECK(parsed(make(path_for("f"), "{}", {{"X-Amz-Client-Context", at_limit}})).client_context ==
          json);
    check_error(
        rejected(make(path_for("f"), "{}", {{"X-Amz-Client-Context", padded}})), 400,
        "InvalidRequestContentException",
        R"js({"Type":"User","message":"Client context must be at most 3583 bytes of base64-encoded data."})js");
}

// ---------------------------------------------------------------- payload

TEST_CASE("invoke: an empty payload becomes {}", "[unit]") {
    CHECK(parsed(make(path_for("f"), "")).payload == "{}");
    CHECK(parsed(make(path_for("f"), "", {{"X-Amz-Invocation-Type", "Event"}})).payload == "{}");
}

TEST_CASE("invoke: any JSON value is a payload; Content-Type is not checked", "[unit]") {
    for (std::string body : {"{}", "[]", "42", "\"text\"", "null", " {\"a\" : [1, 2]} \n"}) {
        INFO(body);
        CHECK(
            parsed(make(path_for("f"), body, {{"Content-Type", "binary/octet-stream"}})).payload ==
            body);
    }
    CHECK(
        parsed(make(path_for("f"), "{}", {{"Content-Type", "application/octet-stream"}})).payload ==
        "{}");
    CHECK(parsed(make(path_for("f"), "{}", {{"Content-Type", "text/plain"}})).payload == "{}");
}

TEST_CASE("invoke: a payload that is not JSON is InvalidRequestContentException", "[unit]") {
    for (std::string body :
         std::vector<std::string>{"hello", "{", "{} {}", "{\"a\":1,}", " ", "\"\xff\"",
                                  // too large for a double: refused, not a 500 (found by fuzzing)
                                  "{\"a\":1e999}", "-22222222222222222222e11111111111111"}) {
        INFO(body);
        auto r = rejected(make(path_for("f"), body));
        CHECK(r.status == 400);
        CHECK(header(r, "x-amzn-ErrorType") == "InvalidRequestContentException");
        CHECK(header(r, "x-amzn-RequestId") == rid);
        auto j = nlohmann::json::parse(r.body); // valid JSON even for invalid UTF-8 input
        CHECK(j["Type"] == "User");
        auto msg = j["message"].get<std::string>();
        CHECK(
            msg.rfind("Could not parse request body into json: Could not parse payload into json: ",
                      0) == 0);
        CHECK(msg.find("[json.exception") == std::string::npos);
    }
    // Event payloads are checked the same way.
    CHECK(rejected(make(path_for("f"), "nope", {{"X-Amz-Invocation-Type", "Event"}})).status ==
          400);
}

TEST_CASE("invoke: sync payload limit is 6291456 bytes inclusive", "[unit]") {
    auto json_of = [](std::size_t n) { return "\"" + std::string(n - 2, 'x') + "\""; };
    for (auto type : {"RequestResponse", "DryRun"}) {
        INFO(type);
        auto ok = parsed(make(path_for("f"), json_of(6291456), {{"X-Amz-Invocation-Type", type}}));
        CHECK(ok.payload.size() == 6291456);
        check_error(
            rejected(make(path_for("f"), json_of(6291457), {{"X-Amz-Invocation-Type", type}})), 413,
            "RequestEntityTooLargeException",
            R"js({"Type":"User","message":"Request must be smaller than 6291456 bytes for the InvokeFunction operation"})js");
    }
    // Size is checked before JSON: an oversize non-JSON body is 413, not 400.
    CHECK(rejected(make(path_for("f"), std::string(6291457, 'x'))).status == 413);
}

TEST_CASE("invoke: Event payload limit is 1048576 bytes inclusive", "[unit]") {
    auto json_of = [](std::size_t n) { return "\"" + std::string(n - 2, 'x') + "\""; };
    http::header_list event{{"X-Amz-Invocation-Type", "Event"}};
    CHECK(parsed(make(path_for("f"), json_of(1048576), event)).payload.size() == 1048576);
    check_error(
        rejected(make(path_for("f"), json_of(1048577), event)), 413,
        "RequestEntityTooLargeException",
        R"js({"Type":"User","message":"1048577 byte payload is too large for the Event invocation type (limit 1048576 bytes)"})js");
    // The same size is fine synchronously.
    CHECK(parsed(make(path_for("f"), json_of(1048577))).payload.size() == 1048577);
}

// ---------------------------------------------------------------- responses

TEST_CASE("invoke: function_not_found names the ARN with its qualifier", "[unit]") {
    auto r = parsed(make(path_for("ghost")));
    check_error(
        function_not_found(r, context{"us-east-1", "123456789012", "req-1"}), 404,
        "ResourceNotFoundException",
        R"js({"Type":"User","Message":"Function not found: arn:aws:lambda:us-east-1:123456789012:function:ghost"})js",
        "req-1");
    auto q = parsed(make(path_for("arn:aws:lambda:us-east-1:123456789012:function:worker:live")));
    check_error(
        function_not_found(q, context{"us-east-1", "123456789012", "req-2"}), 404,
        "ResourceNotFoundException",
        R"js({"Type":"User","Message":"Function not found: arn:aws:lambda:us-east-1:123456789012:function:worker:live"})js",
        "req-2");
    // The ARN uses coldbrew's configured region and account.
    auto other = function_not_found(r, context{"eu-central-1", "000000000000", "req-3"});
    CHECK(nlohmann::json::parse(other.body)["Message"] ==
          "Function not found: arn:aws:lambda:eu-central-1:000000000000:function:ghost");
}

TEST_CASE("invoke: throttled is 429 TooManyRequestsException with Reason and Retry-After",
          "[unit]") {
    auto r = throttled("ReservedFunctionConcurrentInvocationLimitExceeded", "req-9");
    check_error(
        r, 429, "TooManyRequestsException",
        R"js({"Type":"User","message":"Rate Exceeded.","Reason":"ReservedFunctionConcurrentInvocationLimitExceeded"})js",
        "req-9");
    CHECK(header(r, "Retry-After") == "1");
}

namespace {
functions::invocation_result result(functions::outcome kind, std::string payload = "") {
    functions::invocation_result r;
    r.kind = kind;
    r.request_id = "inv-1";
    r.payload = std::move(payload);
    return r;
}
} // namespace

TEST_CASE("invoke: a successful RequestResponse is 200 with the function's payload", "[unit]") {
    auto req = parsed(make(path_for("f")));
    auto res = invocation_response(result(functions::outcome::success, R"js({"ok":true})js"), req);
    CHECK(res.status == 200);
    CHECK(res.body == R"js({"ok":true})js");
    CHECK(header(res, "Content-Type") == "application/json");
    CHECK(header(res, "x-amzn-RequestId") == "inv-1");
    CHECK(header(res, "X-Amz-Executed-Version") == "$LATEST");
    CHECK(header(res, "X-Amz-Function-Error") == "<absent>");
    CHECK(header(res, "X-Amz-Log-Result") == "<absent>");
    CHECK(header(res, "x-amzn-ErrorType") == "<absent>");
}

TEST_CASE("invoke: a function error is 200 with X-Amz-Function-Error: Unhandled", "[unit]") {
    auto req = parsed(make(path_for("f")));
    const std::string err =
        R"js({"errorType":"Runtime.ExitError","errorMessage":"RequestId: inv-1 Error: Runtime exited with error: exit status 1"})js";
    auto res = invocation_response(result(functions::outcome::function_error, err), req);
    CHECK(res.status == 200);
    CHECK(res.body == err);
    CHECK(header(res, "X-Amz-Function-Error") == "Unhandled");
    CHECK(header(res, "X-Amz-Executed-Version") == "$LATEST");
    CHECK(header(res, "x-amzn-RequestId") == "inv-1");
}

TEST_CASE("invoke: Tail returns the base64 of exactly the last 4096 bytes of the log", "[unit]") {
    auto req = parsed(make(path_for("f"), "{}", {{"X-Amz-Log-Type", "Tail"}}));
    auto with_log = [](functions::outcome kind, std::string log) {
        auto r = result(kind, "{}");
        r.log = std::move(log);
        return r;
    };
    std::string log;
    for (int i = 0; log.size() < 10000; ++i)
        log += "line " + std::to_string(i) + "\n";
    auto res = invocation_response(with_log(functions::outcome::success, log), req);
    auto decoded = codec::base64_decode(header(res, "X-Amz-Log-Result"));
    REQUIRE(decoded);
    CHECK(decoded->size() == 4096);
    CHECK(*decoded == log.substr(log.size() - 4096));

    // Exactly 4096 and shorter logs come back whole; an empty log gives an empty header.
    std::string exact(4096, 'a');
    exact.back() = '\n';
    CHECK(header(invocation_response(with_log(functions::outcome::success, exact), req),
                 "X-Amz-Log-Result") == base64(exact));
    std::string one_more = "Z" + exact;
    CHECK(header(invocation_response(with_log(functions::outcome::success, one_more), req),
                 "X-Amz-Log-Result") == base64(exact));
    CHECK(header(invocation_response(with_log(functions::outcome::success, "START\n"), req),
                 "X-Amz-Log-Result") == base64("START\n"));
    CHECK(header(invocation_response(with_log(functions::outcome::success, ""), req),
                 "X-Amz-Log-Result") == "");
    // Function errors carry the log too.
    auto fe = invocation_response(with_log(functions::outcome::function_error, "boom\n"), req);
    CHECK(header(fe, "X-Amz-Log-Result") == base64("boom\n"));
    CHECK(header(fe, "X-Amz-Function-Error") == "Unhandled");
    // Without Tail there is no header even when a log was captured.
    auto plain = parsed(make(path_for("f")));
    CHECK(header(invocation_response(with_log(functions::outcome::success, log), plain),
                 "X-Amz-Log-Result") == "<absent>");
}

TEST_CASE("invoke: outcomes the pool refused map to Lambda's service errors", "[unit]") {
    auto req = parsed(make(path_for("f")));

    auto t = result(functions::outcome::throttled);
    t.throttle_reason = "ConcurrentInvocationLimitExceeded";
    auto tr = invocation_response(t, req);
    check_error(
        tr, 429, "TooManyRequestsException",
        R"js({"Type":"User","message":"Rate Exceeded.","Reason":"ConcurrentInvocationLimitExceeded"})js",
        "inv-1");
    CHECK(header(tr, "Retry-After") == "1");
    CHECK(header(tr, "X-Amz-Executed-Version") == "<absent>");

    auto big = result(functions::outcome::too_large);
    big.message = "Request must be smaller than 6291456 bytes for the InvokeFunction operation";
    check_error(
        invocation_response(big, req), 413, "RequestEntityTooLargeException",
        R"js({"Type":"User","message":"Request must be smaller than 6291456 bytes for the InvokeFunction operation"})js",
        "inv-1");

    auto down = result(functions::outcome::unavailable);
    down.message = "coldbrew is shutting down";
    auto dr = invocation_response(down, req);
    check_error(dr, 500, "ServiceException",
                R"js({"Type":"Service","Message":"coldbrew is shutting down"})js", "inv-1");
    CHECK(header(dr, "Retry-After") == "<absent>");

    // service_error_response is the same mapping without the request.
    CHECK(service_error_response(t).body == tr.body);
    CHECK(service_error_response(big).status == 413);
    CHECK(service_error_response(down).body == dr.body);
    // A result that ran is no service error; misuse still answers in Lambda's shape.
    auto ran = service_error_response(result(functions::outcome::success, "{}"));
    CHECK(ran.status == 500);
    CHECK(header(ran, "x-amzn-ErrorType") == "ServiceException");
}

TEST_CASE("invoke: a request the server could not read", "[unit]") {
    check_error(
        malformed_request(true, "m-1"), 413, "RequestEntityTooLargeException",
        R"js({"Type":"User","message":"Request must be smaller than 6291456 bytes for the InvokeFunction operation"})js",
        "m-1");
    check_error(malformed_request(false, "m-2"), 400, "InvalidRequestContentException",
                R"js({"Type":"User","message":"The request could not be parsed."})js", "m-2");
}

TEST_CASE("invoke: Event is 202 and DryRun 204, both with empty bodies", "[unit]") {
    auto e = accepted_event("ev-1");
    CHECK(e.status == 202);
    CHECK(e.body.empty());
    CHECK(header(e, "x-amzn-RequestId") == "ev-1");
    CHECK(header(e, "x-amzn-ErrorType") == "<absent>");
    auto d = dry_run_ok("dr-1");
    CHECK(d.status == 204);
    CHECK(d.body.empty());
    CHECK(header(d, "x-amzn-RequestId") == "dr-1");
}

TEST_CASE("invoke: to_response carries any service error's status, code and body", "[unit]") {
    auto r = to_response(functions::invalid_parameter_value("bad \"thing\""), "x");
    check_error(r, 400, "InvalidParameterValueException",
                R"js({"Type":"User","message":"bad \"thing\""})js", "x");
    CHECK(header(r, "Retry-After") == "<absent>");
    // Text that is not UTF-8 still yields a JSON body.
    auto nf =
        to_response(functions::resource_not_found(std::string("Function not found: \xc3")), "x");
    CHECK(nlohmann::json::parse(nf.body)["Message"].is_string());
}
