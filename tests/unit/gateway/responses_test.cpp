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

namespace {

// Whether a mapped response is the integration failure of the route's API kind.
bool is_failure(const http::response& res) {
    return (res.status == 502 && res.body == R"({"message": "Internal server error"})") ||
           (res.status == 500 && res.body == R"({"message":"Internal Server Error"})");
}

// A proxy response for `path`'s payload format with one extra field, e.g. headers.
std::string with(std::string_view field) {
    return std::string(R"({"statusCode":200,"body":"ok",)") + std::string(field) + "}";
}

} // namespace

TEST_CASE("response headers: CR, LF or NUL in a value is a malformed response", "[unit]") {
    fixture f;
    for (const char* value :
         {R"(foo\r\nInjected: yes)", R"(foo\nInjected: yes)", R"(foo\r)", R"(a\u0000b)"}) {
        INFO(value);
        std::string headers = std::string(R"("headers":{"x-a":")") + value + R"("})";
        check_rest_502(f.map("/r", with(headers)));
        CHECK(f.map("/h1", with(headers)).status == 500);
        CHECK(f.map("/h2", with(headers)).status == 500);
        std::string multi = std::string(R"("multiValueHeaders":{"x-a":["ok",")") + value + R"("]})";
        check_rest_502(f.map("/r", with(multi)));
        CHECK(f.map("/h1", with(multi)).status == 500);
        std::string cookies = std::string(R"("cookies":["a=1",")") + value + R"("])";
        CHECK(f.map("/h2", with(cookies)).status == 500);
        // An injected line never reaches a response in any form.
        for (const auto* path : {"/r", "/h1", "/h2"})
            for (const auto& [k, v] : f.map(path, with(headers)).headers)
                CHECK(v.find_first_of(std::string("\r\n\0", 3)) == std::string::npos);
    }
}

TEST_CASE("response headers: a name that is not an RFC 9110 token is malformed", "[unit]") {
    fixture f;
    for (const char* name : {"bad name", "", "x:y", R"(x\u0001)", R"(x\r\nInjected: yes)",
                             R"(x\ty)", "caf\xc3\xa9", "(x)"}) {
        INFO(name);
        std::string headers = std::string(R"("headers":{")") + name + R"(":"v"})";
        check_rest_502(f.map("/r", with(headers)));
        CHECK(f.map("/h1", with(headers)).status == 500);
        CHECK(f.map("/h2", with(headers)).status == 500);
        std::string multi = std::string(R"("multiValueHeaders":{")") + name + R"(":["v"]})";
        check_rest_502(f.map("/r", with(multi)));
        CHECK(f.map("/h1", with(multi)).status == 500);
    }
}

TEST_CASE("response headers: values may carry UTF-8, obs-text and tabs; names any tchar",
          "[unit]") {
    fixture f;
    auto res = f.map("/r", with(R"("headers":{"X-Utf8":"café ☕","X-Tab":"a\tb",)"
                                R"("!#$%&'*+-.^_`|~09azAZ":"t"},)"
                                R"("multiValueHeaders":{"X-M":["é"]})"));
    CHECK(res.status == 200);
    CHECK(res.header("X-Utf8") == "café ☕");
    CHECK(res.header("X-Tab") == "a\tb");
    CHECK(res.header("!#$%&'*+-.^_`|~09azAZ") == "t");
    CHECK(res.header("X-M") == "é");
    auto v2 = f.map("/h2", with(R"("headers":{"x-u":"ü"},"cookies":["n=ü; Path=/"])"));
    CHECK(v2.status == 200);
    CHECK(v2.header("x-u") == "ü");
    CHECK(v2.header("Set-Cookie") == "n=ü; Path=/");
    // A header whose value is null is skipped, whatever its name.
    CHECK(f.map("/r", with(R"("headers":{"bad name":null})")).status == 200);
}

TEST_CASE("statusCode: 1xx is not a final response, 200-599 are", "[unit]") {
    fixture f;
    for (const char* code : {"100", "101", "103", "199", R"("101")"}) {
        INFO(code);
        std::string out = std::string(R"({"statusCode":)") + code + "}";
        check_rest_502(f.map("/r", out));
        CHECK(f.map("/h1", out).status == 500);
        CHECK(f.map("/h2", out).status == 500);
    }
    for (int code : {200, 204, 304, 418, 599}) {
        std::string out = R"({"statusCode":)" + std::to_string(code) + "}";
        CHECK(f.map("/r", out).status == code);
        CHECK(f.map("/h1", out).status == code);
        CHECK(f.map("/h2", out).status == code);
    }
}

TEST_CASE("map_response: why names the reason a response is malformed", "[unit]") {
    fixture f;
    auto why_of = [&](std::string_view path, std::string_view output) {
        auto req = request("GET", std::string(path));
        auto m = route_table(f.stack).match("GET", path);
        REQUIRE(m);
        std::string why = "stale";
        auto res = map_response(output, req, *m, rid, &why);
        CHECK(is_failure(res) == !why.empty());
        return why;
    };
    CHECK(why_of("/r", R"({"statusCode":200,"body":{"a":1}})") == "body must be a string");
    CHECK(why_of("/r", R"({"statusCode":200,"foo":1})") ==
          "unknown key 'foo' in a REST proxy response");
    CHECK(why_of("/r", R"({"body":"x"})") == "statusCode missing");
    CHECK(why_of("/h1", R"({"body":"x"})") == "statusCode missing");
    CHECK(why_of("/r", "not json") == "output is not valid JSON");
    CHECK(why_of("/h2", "not json") == "output is not valid JSON");
    CHECK(why_of("/r", "[1]") == "output is not a JSON object");
    CHECK(why_of("/r", R"({"statusCode":"abc"})") == "statusCode is not an integer");
    CHECK(why_of("/r", R"({"statusCode":101})") == "statusCode 101 is informational (1xx)");
    CHECK(why_of("/h2", R"({"statusCode":700})") == "statusCode 700 is not in 200-599");
    CHECK(why_of("/r", with(R"("headers":{"bad name":"v"})")) == "invalid header name 'bad name'");
    // Function-supplied text is escaped, so it cannot forge a log line.
    CHECK(why_of("/r", with(R"("headers":{"x\r\ny":"v"})")) ==
          R"(invalid header name 'x\x0d\x0ay')");
    CHECK(why_of("/h2", with(R"("headers":{"x-a":"foo\r\nInjected: yes"})")) ==
          "invalid value for header 'x-a' (CR, LF or NUL)");
    CHECK(why_of("/h2", with(R"("cookies":["a=1\r\nX: y"])")) ==
          "invalid value for header 'Set-Cookie' (CR, LF or NUL)");
    CHECK(why_of("/r", with(R"("multiValueHeaders":{"X-A":"1"})")) ==
          "multiValueHeaders 'X-A' must be a list");
    CHECK(why_of("/h1", R"({"statusCode":200,"body":"%%%","isBase64Encoded":true})") ==
          "body is not valid base64");
    CHECK(why_of("/r", R"({"statusCode":200,"isBase64Encoded":"yes"})") ==
          "isBase64Encoded must be a boolean");
    // Cleared when the output maps, including 2.0 inference.
    CHECK(why_of("/r", R"({"statusCode":200})").empty());
    CHECK(why_of("/h2", R"("hello")").empty());
    // Optional: without it, nothing changes.
    CHECK(f.map("/r", R"({"statusCode":200,"foo":1})").status == 502);
}

TEST_CASE("Content-Length: only the server's reaches the client", "[unit]") {
    // The HTTP server adds Content-Length itself (http::response), so no mapped or error
    // response may carry one of its own.
    fixture f;
    auto framing_free = [](const http::response& res) {
        for (const auto& [k, v] : res.headers) {
            INFO(k);
            CHECK_FALSE(http::iequals(k, "Content-Length"));
            CHECK_FALSE(http::iequals(k, "Transfer-Encoding"));
        }
    };
    const std::string single =
        with(R"("headers":{"content-length":"999","Transfer-Encoding":"chunked"})");
    const std::string multi = with(R"("multiValueHeaders":{"Content-Length":["1","2"]})");
    for (const auto* path : {"/r", "/h1", "/h2"}) {
        INFO(path);
        auto a = f.map(path, single);
        CHECK(a.status == 200);
        CHECK(a.body == "ok");
        framing_free(a);
        framing_free(f.map(path, multi));
    }
    CHECK(f.map("/r", single).header("x-amzn-Remapped-Content-Length") == "999");
    CHECK(f.map("/r", multi).header("x-amzn-Remapped-Content-Length") == "1");
    framing_free(f.map("/h2", R"({"content-length":"5"})")); // inferred: the output is the body
    for (auto kind : {config::api_kind::rest, config::api_kind::http})
        for (auto error : {gateway_error::missing_route, gateway_error::integration_failure,
                           gateway_error::integration_timeout, gateway_error::lambda_rejected,
                           gateway_error::request_too_large})
            framing_free(error_response(kind, error, rid));
}

TEST_CASE("status_error_response: injected gateway errors carry AWS's bodies", "[unit]") {
    using coldbrew::config::api_kind;
    using coldbrew::gateway::status_error_response;
    auto rest = [](int s) { return status_error_response(api_kind::rest, s, "id-1"); };
    auto http = [](int s) { return status_error_response(api_kind::http, s, "id-1"); };
    CHECK(rest(502).body == R"({"message": "Internal server error"})");
    CHECK(rest(502).header("x-amzn-ErrorType") == std::optional<std::string_view>("InternalServerErrorException"));
    CHECK(rest(504).body == R"({"message": "Endpoint request timed out"})");
    CHECK(rest(504).status == 504);
    CHECK(rest(500).status == 500);
    CHECK(rest(429).body == R"({"message":"Too Many Requests"})");
    CHECK(rest(503).status == 503);
    CHECK(http(503).body == R"({"message":"Service Unavailable"})");
    CHECK(http(500).body == R"({"message":"Internal Server Error"})");
    CHECK(http(502).status == 502);
    CHECK(http(504).status == 504);
    CHECK_FALSE(http(429).header("x-amzn-ErrorType"));
    for (int s : {429, 500, 502, 503, 504}) {
        CHECK(rest(s).status == s);
        CHECK(http(s).status == s);
        CHECK(rest(s).header("x-amzn-RequestId"));
    }
    CHECK_THROWS_AS(rest(418), std::invalid_argument);
}
