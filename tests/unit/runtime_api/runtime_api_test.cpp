#include "emulator/runtime_api/runtime_api.hpp"

#include <nlohmann/json.hpp>

#include "tests/catch.hpp"

using namespace coldbrew;
using namespace coldbrew::runtime_api;

namespace {
http::request make(std::string method, std::string target, std::string body = "") {
    http::request r;
    r.method = std::move(method);
    r.target = std::move(target);
    r.body = std::move(body);
    return r;
}
nlohmann::json body_of(const http::response& r) { return nlohmann::json::parse(r.body); }
}  // namespace

TEST_CASE("runtime API: the four endpoints are recognised", "[unit]") {
    CHECK(std::holds_alternative<next_call>(parse_call(make("GET", "/2018-06-01/runtime/invocation/next"))));
    auto r = parse_call(make("POST", "/2018-06-01/runtime/invocation/abc-1/response", "{\"a\":1}"));
    REQUIRE(std::holds_alternative<response_call>(r));
    CHECK(std::get<response_call>(r).request_id == "abc-1");
    CHECK(std::get<response_call>(r).body == "{\"a\":1}");
    auto req = make("POST", "/2018-06-01/runtime/invocation/abc-1/error", "{}");
    req.headers.emplace_back("Lambda-Runtime-Function-Error-Type", "Runtime.Foo");
    auto e = parse_call(req);
    REQUIRE(std::holds_alternative<error_call>(e));
    CHECK(std::get<error_call>(e).error_type == "Runtime.Foo");
    CHECK(std::holds_alternative<init_error_call>(parse_call(make("POST", "/2018-06-01/runtime/init/error"))));
}

TEST_CASE("runtime API: unknown paths are 404, wrong methods 405", "[unit]") {
    auto r = parse_call(make("GET", "/2018-06-01/runtime/nope"));
    REQUIRE(std::holds_alternative<rejected_call>(r));
    CHECK(std::get<rejected_call>(r).response.status == 404);
    auto m = parse_call(make("POST", "/2018-06-01/runtime/invocation/next"));
    REQUIRE(std::holds_alternative<rejected_call>(m));
    CHECK(std::get<rejected_call>(m).response.status == 405);
}

TEST_CASE("runtime API: bad response mode is 400 InvalidFunctionResponseMode", "[unit]") {
    auto req = make("POST", "/2018-06-01/runtime/invocation/x/response");
    req.headers.emplace_back("Lambda-Runtime-Function-Response-Mode", "weird");
    auto r = parse_call(req);
    REQUIRE(std::holds_alternative<rejected_call>(r));
    auto& res = std::get<rejected_call>(r).response;
    CHECK(res.status == 400);
    CHECK(body_of(res)["errorType"] == "InvalidFunctionResponseMode");
}

TEST_CASE("runtime API: wrong request id is 400 InvalidRequestID (RIE body)", "[unit]") {
    auto res = check_call(phase::invoking, "current", response_call{"other", "{}"});
    REQUIRE(res);
    CHECK(res->status == 400);
    CHECK(res->body == R"({"errorMessage":"Invalid request ID","errorType":"InvalidRequestID"})");
    CHECK_FALSE(check_call(phase::invoking, "current", response_call{"current", "{}"}));
}

TEST_CASE("runtime API: responding twice is 403 InvalidStateTransition", "[unit]") {
    auto res = check_call(phase::finishing, "current", response_call{"current", "{}"});
    REQUIRE(res);
    CHECK(res->status == 403);
    CHECK(body_of(*res)["errorType"] == "InvalidStateTransition");
    auto err = check_call(phase::finishing, "current", error_call{"current", "", "{}"});
    REQUIRE(err);
    CHECK(err->status == 403);
}

TEST_CASE("runtime API: /init/error is allowed only during init", "[unit]") {
    CHECK_FALSE(check_call(phase::initializing, "", init_error_call{}));
    auto res = check_call(phase::waiting, "", init_error_call{});
    REQUIRE(res);
    CHECK(res->status == 403);
}

TEST_CASE("runtime API: /next while an invocation is open is refused", "[unit]") {
    CHECK_FALSE(check_call(phase::initializing, "", next_call{}));
    CHECK_FALSE(check_call(phase::finishing, "x", next_call{}));
    auto res = check_call(phase::invoking, "x", next_call{});
    REQUIRE(res);
    CHECK(res->status == 403);
}

TEST_CASE("runtime API: a response over 6291556 bytes is 413 RequestEntityTooLarge", "[unit]") {
    std::string big(max_response_bytes + 1, 'x');
    auto res = check_call(phase::invoking, "id", response_call{"id", big});
    REQUIRE(res);
    CHECK(res->status == 413);
    CHECK(body_of(*res)["errorMessage"] == "Exceeded maximum allowed payload size (6291556 bytes).");
    std::string ok(max_response_bytes, 'x');
    CHECK_FALSE(check_call(phase::invoking, "id", response_call{"id", ok}));
}

TEST_CASE("runtime API: /next carries every invoke header, deadline absolute in ms", "[unit]") {
    invocation_headers h;
    h.request_id = "8476a536-e9f4-11e8-9739-2dfe598c3fcd";
    h.deadline_ms = 1542409706888;
    h.invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:f";
    h.trace_id = "Root=1-5bef4de7-ad49b0e87f6ef6c87fc2e700;Parent=9a9197af755a6419;Sampled=1";
    auto res = next_response(h, "{\"k\":1}");
    CHECK(res.status == 200);
    CHECK(res.body == "{\"k\":1}");
    CHECK(res.header("Lambda-Runtime-Aws-Request-Id") == std::optional<std::string_view>(h.request_id));
    CHECK(res.header("Lambda-Runtime-Deadline-Ms") == std::optional<std::string_view>("1542409706888"));
    CHECK(res.header("Lambda-Runtime-Invoked-Function-Arn") == std::optional<std::string_view>(h.invoked_function_arn));
    CHECK(res.header("Lambda-Runtime-Trace-Id") == std::optional<std::string_view>(h.trace_id));
    CHECK_FALSE(res.header("Lambda-Runtime-Client-Context"));
    h.client_context = "{\"custom\":{}}";
    CHECK(next_response(h, "{}").header("Lambda-Runtime-Client-Context"));
}

TEST_CASE("runtime API: 202 {\"status\":\"OK\"} for accepted posts", "[unit]") {
    auto res = accepted();
    CHECK(res.status == 202);
    CHECK(res.body == R"({"status":"OK"})");
}

TEST_CASE("platform error bodies use 'RequestId: <id> Error: <message>'", "[unit]") {
    auto body = nlohmann::json::parse(platform_error_body("Runtime.ExitError", "id-1",
                                                          "Runtime exited with error: exit status 42"));
    CHECK(body["errorType"] == "Runtime.ExitError");
    CHECK(body["errorMessage"] == "RequestId: id-1 Error: Runtime exited with error: exit status 42");
}

TEST_CASE("error normalisation: body passed through, type from header or body", "[unit]") {
    auto e = normalise_error("Runtime.HandlerNotFound", R"({"errorMessage":"m","errorType":"X"})");
    CHECK(e.error_type == "Runtime.HandlerNotFound");
    CHECK(e.body == R"({"errorMessage":"m","errorType":"X"})");
    auto b = normalise_error("", R"({"errorMessage":"m","errorType":"TypeError"})");
    CHECK(b.error_type == "TypeError");
    auto none = normalise_error("", "");
    CHECK(none.error_type == "Runtime.Unknown");
    CHECK(nlohmann::json::parse(none.body)["errorType"] == "Runtime.Unknown");
    auto fn = normalise_error("Function.lowercase", "not json");
    CHECK(fn.error_type == "Function.Unknown");
    CHECK(nlohmann::json::parse(fn.body)["errorMessage"] == "not json");
}

TEST_CASE("runtime API: an error body that is neither JSON nor UTF-8 is wrapped, not thrown", "[unit]") {
    // Found by fuzzing: a runtime posting binary bytes to /error made building the JSON body
    // throw, out of the environment's loop callback.
    auto f = normalise_error("Runtime.ExitError", std::string("\xff\xfe crash \xc3", 10));
    CHECK(f.error_type == "Runtime.ExitError");
    auto j = nlohmann::json::parse(f.body);
    CHECK(j["errorType"] == "Runtime.ExitError");
    CHECK(j["errorMessage"] == "\xEF\xBF\xBD\xEF\xBF\xBD crash \xEF\xBF\xBD");
    // The same bytes in a path or an error type header.
    auto rejected = parse_call(make("GET", "/2018-06-01/runtime/\xff"));
    REQUIRE(std::holds_alternative<rejected_call>(rejected));
    CHECK(body_of(std::get<rejected_call>(rejected).response)["errorType"] == "NotFound");
    CHECK(nlohmann::json::parse(normalise_error("Bad\xff", "oops").body)["errorType"] == "Bad\xEF\xBF\xBD");
}

TEST_CASE("runtime API: an error type header of any length is checked without recursion", "[unit]") {
    CHECK(normalise_error("Function." + std::string(200000, 'A'), "{}").error_type.size() == 200009);
    CHECK(normalise_error("Function.A", "{}").error_type == "Function.Unknown");
    CHECK(normalise_error("Function.aB", "{}").error_type == "Function.Unknown");
    CHECK(normalise_error("Runtime.Ab", "{}").error_type == "Runtime.Ab");
    CHECK(normalise_error("Runtime.A1", "{}").error_type == "Runtime.A1");
}
