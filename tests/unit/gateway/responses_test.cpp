#include "emulator/codec/base64.hpp"
#include "tests/catch.hpp"
#include "tests/unit/gateway/gateway_fixtures.hpp"

#include <nlohmann/json.hpp>

using namespace coldbrew;
using namespace coldbrew::gateway;
using namespace coldbrew::gateway::testing;

namespace {

const std::string rid = "8476a536-e9f4-11e8-9739-2dfe598c3fcd";

struct fixture {
    config::stack stack;
    fixture() {
        stack.apis = {rest_api("Rest", "Prod", {"image/png"}), http_api("Http")};
        stack.routes = {route("Rest", "ANY", "/r", "r"), route("Http", "ANY", "/h1", "h1", "1.0"),
                        route("Http", "ANY", "/h2", "h2", "2.0")};
    }
    http::response map(std::string_view path, std::string_view output,
                       http::header_list headers = {}) const {
        auto req = request("GET", std::string(path), std::move(headers));
        auto m = route_table(stack).match("GET", path);
        REQUIRE(m);
        return map_response(output, req, *m, rid);
    }
};

std::vector<std::string> all(const http::response& res, std::string_view name) {
    std::vector<std::string> out;
    for (const auto& [k, v] : res.headers)
        if (http::iequals(k, name)) out.push_back(v);
    return out;
}

void check_rest_502(const http::response& res) {
    CHECK(res.status == 502);
    CHECK(res.body == R"({"message": "Internal server error"})");
    CHECK(res.header("x-amzn-ErrorType") == "InternalServerErrorException");
}

} // namespace

TEST_CASE("1.0 response: a well-formed proxy response maps field by field", "[unit]") {
    fixture f;
    auto res = f.map("/r", R"({"statusCode":201,"headers":{"X-A":"1","Content-Type":"text/plain"},
                              "body":"created","isBase64Encoded":false})");
    CHECK(res.status == 201);
    CHECK(res.body == "created");
    CHECK(res.header("X-A") == "1");
    CHECK(all(res, "Content-Type") == std::vector<std::string>{"text/plain"});
}

TEST_CASE("1.0 response: body must be a string (object body -> 502)", "[unit]") {
    fixture f;
    check_rest_502(f.map("/r", R"({"statusCode":200,"body":{"a":1}})"));
    check_rest_502(f.map("/r", R"({"statusCode":200,"body":42})"));
    auto http_v1 = f.map("/h1", R"({"statusCode":200,"body":{"a":1}})");
    CHECK(http_v1.status == 500);
    CHECK(http_v1.body == R"({"message":"Internal Server Error"})");
}

TEST_CASE("1.0 response: a multiValueHeaders value must be a list (string -> 502)", "[unit]") {
    fixture f;
    check_rest_502(f.map("/r", R"({"statusCode":200,"multiValueHeaders":{"X-A":"1"}})"));
    check_rest_502(f.map("/r", R"({"statusCode":200,"multiValueHeaders":{"X-A":[{"o":1}]}})"));
    check_rest_502(f.map("/r", R"({"statusCode":200,"multiValueHeaders":["X-A"]})"));
}

TEST_CASE("1.0 response: header values are scalars; numbers and bools stringified", "[unit]") {
    fixture f;
    auto res = f.map("/r", R"({"statusCode":200,"headers":{"X-N":3,"X-B":true,"X-F":1.5}})");
    CHECK(res.status == 200);
    CHECK(res.header("X-N") == "3");
    CHECK(res.header("X-B") == "true");
    CHECK(res.header("X-F") == "1.5");
    check_rest_502(f.map("/r", R"({"statusCode":200,"headers":{"X-O":{"a":1}}})"));
    check_rest_502(f.map("/r", R"({"statusCode":200,"headers":{"X-L":["a"]}})"));
}

TEST_CASE("1.0 response: REST rejects unknown top-level keys, HTTP API ignores them", "[unit]") {
    fixture f;
    check_rest_502(f.map("/r", R"({"statusCode":200,"body":"x","extra":1})"));
    auto http_v1 = f.map("/h1", R"({"statusCode":200,"body":"x","extra":1})");
    CHECK(http_v1.status == 200);
    CHECK(http_v1.body == "x");
    // The keys SAM CLI allows are accepted on REST.
    auto ok = f.map("/r", R"({"statusCode":200,"body":"x","cookies":[],"multiValueHeaders":{}})");
    CHECK(ok.status == 200);
}

TEST_CASE("1.0 response: {statusCode:200} alone is 200 with an empty body, not 204", "[unit]") {
    fixture f;
    auto res = f.map("/r", R"({"statusCode":200})");
    CHECK(res.status == 200);
    CHECK(res.body.empty());
    CHECK(res.header("Content-Type") == "application/json"); // added when missing
    auto null_body = f.map("/r", R"({"statusCode":200,"body":null})");
    CHECK(null_body.status == 200);
    CHECK(null_body.body.empty());
}

TEST_CASE("1.0 response: statusCode must be a valid integer", "[unit]") {
    fixture f;
    CHECK(f.map("/r", R"({"statusCode":"404","body":"nf"})").status == 404); // numeric string
    check_rest_502(f.map("/r", R"({"body":"no status"})"));
    check_rest_502(f.map("/r", R"({"statusCode":"abc"})"));
    check_rest_502(f.map("/r", R"({"statusCode":99})"));
    check_rest_502(f.map("/r", R"({"statusCode":600})"));
    check_rest_502(f.map("/r", R"({"statusCode":200.5})"));
    CHECK(f.map("/h1", R"({"body":"x"})").status == 500); // HTTP API 1.0 needs it too
}

TEST_CASE("1.0 response: not JSON, or not an object, is malformed", "[unit]") {
    fixture f;
    check_rest_502(f.map("/r", "not json"));
    check_rest_502(f.map("/r", R"([1,2])"));
    check_rest_502(f.map("/r", R"("hello")"));
    check_rest_502(f.map("/r", ""));
    CHECK(f.map("/h1", "not json").status == 500);
}

TEST_CASE("1.0 response: headers and multiValueHeaders merge, multiValue wins", "[unit]") {
    fixture f;
    auto res = f.map("/r", R"({"statusCode":200,
        "headers":{"X-Only":"h","x-both":"from-headers"},
        "multiValueHeaders":{"X-Both":["m1","m2"],"Set-Cookie":["a=1","b=2"]}})");
    CHECK(res.status == 200);
    CHECK(all(res, "X-Only") == std::vector<std::string>{"h"});
    CHECK(all(res, "X-Both") == std::vector<std::string>{"m1", "m2"});
    CHECK(all(res, "Set-Cookie") == std::vector<std::string>{"a=1", "b=2"});
}

TEST_CASE("1.0 response: REST decodes base64 only when Accept matches binaryMediaTypes", "[unit]") {
    fixture f;
    std::string png("\x89PNG\x00\x01", 6);
    std::string out = R"({"statusCode":200,"headers":{"Content-Type":"image/png"},"body":")" +
                      codec::base64_encode(png) + R"(","isBase64Encoded":true})";
    auto decoded = f.map("/r", out, {{"Accept", "image/png, */*"}});
    CHECK(decoded.status == 200);
    CHECK(decoded.body == png);
    // Only the first Accept media type counts.
    auto as_text = f.map("/r", out, {{"Accept", "*/*, image/png"}});
    CHECK(as_text.status == 200);
    CHECK(as_text.body == codec::base64_encode(png));
    // Invalid base64 that must be decoded is malformed.
    check_rest_502(f.map("/r", R"({"statusCode":200,"body":"%%%","isBase64Encoded":true})",
                         {{"Accept", "image/png"}}));
}

TEST_CASE("1.0 response: HTTP API always decodes isBase64Encoded bodies", "[unit]") {
    fixture f;
    auto res = f.map("/h1", R"({"statusCode":200,"body":"aGk=","isBase64Encoded":true})",
                     {{"Accept", "text/html"}});
    CHECK(res.status == 200);
    CHECK(res.body == "hi");
    CHECK(f.map("/h1", R"({"statusCode":200,"body":"%%%","isBase64Encoded":true})").status == 500);
}

TEST_CASE("1.0 response: REST remaps framing headers the function sets", "[unit]") {
    fixture f;
    auto res = f.map("/r", R"({"statusCode":200,"headers":{"Content-Length":"999"},"body":"x"})");
    CHECK_FALSE(res.header("Content-Length"));
    CHECK(res.header("x-amzn-Remapped-Content-Length") == "999");
    auto h = f.map("/h1", R"({"statusCode":200,"headers":{"Content-Length":"999"},"body":"x"})");
    CHECK_FALSE(h.header("Content-Length"));
}

TEST_CASE("2.0 response: inferred from a string, an object, a number", "[unit]") {
    fixture f;
    auto str = f.map("/h2", R"("Hello from Lambda!")");
    CHECK(str.status == 200);
    CHECK(str.body == "Hello from Lambda!");
    CHECK(str.header("Content-Type") == "application/json");

    auto obj = f.map("/h2", R"({ "message": "Hello from Lambda!" })");
    CHECK(obj.status == 200);
    CHECK(obj.body == R"({ "message": "Hello from Lambda!" })");
    CHECK(obj.header("Content-Type") == "application/json");

    auto num = f.map("/h2", "42");
    CHECK(num.status == 200);
    CHECK(num.body == "42");
}

TEST_CASE("2.0 response: invalid JSON is an integration failure (500)", "[unit]") {
    fixture f;
    auto res = f.map("/h2", "Hello, not JSON");
    CHECK(res.status == 500);
    CHECK(res.body == R"({"message":"Internal Server Error"})");
}

TEST_CASE("2.0 response: each cookies[] entry becomes its own Set-Cookie", "[unit]") {
    fixture f;
    auto res = f.map("/h2", R"({"statusCode":200,"cookies":["a=1; Path=/","b=2"],
                                "headers":{"X-A":"1"},"body":"ok"})");
    CHECK(res.status == 200);
    CHECK(all(res, "Set-Cookie") == std::vector<std::string>{"a=1; Path=/", "b=2"});
    CHECK(res.header("X-A") == "1");
    CHECK(res.body == "ok");
    CHECK(f.map("/h2", R"({"statusCode":200,"cookies":"a=1"})").status == 500);
}

TEST_CASE("2.0 response: structured fields; unknown keys and multiValueHeaders ignored", "[unit]") {
    fixture f;
    auto res = f.map("/h2", R"({"statusCode":418,"body":"aGk=","isBase64Encoded":true,
                                "multiValueHeaders":{"X-M":"not-a-list"},"extra":true})");
    CHECK(res.status == 418);
    CHECK(res.body == "hi"); // HTTP APIs always decode
    CHECK_FALSE(res.header("X-M"));
    CHECK(f.map("/h2", R"({"statusCode":200,"body":{"a":1}})").status == 500);
    CHECK(f.map("/h2", R"({"statusCode":700})").status == 500);
}

TEST_CASE("error responses: exact status, body and x-amzn-ErrorType", "[unit]") {
    using config::api_kind;
    struct expected {
        api_kind kind;
        gateway_error error;
        int status;
        std::string body;
        std::optional<std::string> type;
    };
    const std::vector<expected> table = {
        {api_kind::rest, gateway_error::missing_route, 403,
         R"({"message":"Missing Authentication Token"})", "MissingAuthenticationTokenException"},
        {api_kind::http, gateway_error::missing_route, 404, R"({"message":"Not Found"})", {}},
        {api_kind::rest, gateway_error::integration_failure, 502,
         R"({"message": "Internal server error"})", "InternalServerErrorException"},
        {api_kind::http,
         gateway_error::integration_failure,
         500,
         R"({"message":"Internal Server Error"})",
         {}},
        {api_kind::rest, gateway_error::integration_timeout, 504,
         R"({"message": "Endpoint request timed out"})", "InternalServerErrorException"},
        {api_kind::http,
         gateway_error::integration_timeout,
         503,
         R"({"message":"Service Unavailable"})",
         {}},
        {api_kind::rest, gateway_error::lambda_rejected, 500,
         R"({"message": "Internal server error"})", "InternalServerErrorException"},
        {api_kind::http,
         gateway_error::lambda_rejected,
         500,
         R"({"message":"Internal Server Error"})",
         {}},
        {api_kind::rest, gateway_error::request_too_large, 413, R"({"message":"Request Too Long"})",
         "RequestTooLargeException"},
        {api_kind::http,
         gateway_error::request_too_large,
         413,
         R"({"message":"Request Too Long"})",
         {}},
    };
    for (const auto& e : table) {
        auto res = error_response(e.kind, e.error, rid);
        INFO("status " << e.status);
        CHECK(res.status == e.status);
        CHECK(res.body == e.body);
        CHECK(res.header("Content-Type") == "application/json");
        if (e.type)
            CHECK(res.header("x-amzn-ErrorType") == *e.type);
        else
            CHECK_FALSE(res.header("x-amzn-ErrorType"));
        CHECK(res.header("x-amzn-RequestId") == rid);
    }
    // Captured Content-Length values: 42 (403), 36 (502), 41 (504).
    CHECK(error_response(api_kind::rest, gateway_error::missing_route, rid).body.size() == 42);
    CHECK(error_response(api_kind::rest, gateway_error::integration_failure, rid).body.size() ==
          36);
    CHECK(error_response(api_kind::rest, gateway_error::integration_timeout, rid).body.size() ==
          41);
}

TEST_CASE("request id headers: x-amzn-RequestId always, x-amz-apigw-id / Apigw-Requestid",
          "[unit]") {
    http::response rest;
    stamp_request_id(rest, config::api_kind::rest, rid);
    CHECK(rest.header("x-amzn-RequestId") == rid);
    auto apigw = rest.header("x-amz-apigw-id");
    REQUIRE(apigw);
    CHECK(apigw->size() == 16);
    CHECK(apigw->back() == '=');
    CHECK(*apigw == apigw_id_for(rid));
    CHECK(apigw_id_for(rid) != apigw_id_for("another-id"));
    CHECK_FALSE(rest.header("Apigw-Requestid"));

    http::response http_res;
    http_res.set("x-amzn-RequestId", "from-function");
    stamp_request_id(http_res, config::api_kind::http, rid);
    CHECK(http_res.header("x-amzn-RequestId") == rid);
    CHECK(http_res.header("Apigw-Requestid") == rid);
    CHECK_FALSE(http_res.header("x-amz-apigw-id"));

    // map_response stamps successful and failed mappings alike.
    fixture f;
    CHECK(f.map("/r", R"({"statusCode":200})").header("x-amzn-RequestId") == rid);
    CHECK(f.map("/r", "bad").header("x-amz-apigw-id") == apigw_id_for(rid));
    CHECK(f.map("/h2", "1").header("Apigw-Requestid") == rid);
}
