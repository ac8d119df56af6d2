#include "emulator/gateway/cors.hpp"

#include "tests/catch.hpp"
#include "tests/unit/gateway/gateway_fixtures.hpp"

#include <string>

using namespace coldbrew;
using namespace coldbrew::gateway;
using namespace coldbrew::gateway::testing;

namespace {

const std::string rid = "c6af9ac6-7b61-11e6-9a41-93e8deadbeef";

// SAM `Cors: "'*'"` on a path with GET and POST: AllowMethods filled by the loader.
config::cors_config sam_string_form() {
    config::cors_config c;
    c.allow_origins = {"*"};
    c.allow_methods = {"GET", "OPTIONS", "POST"};
    return c;
}

config::cors_config http_config() {
    config::cors_config c;
    c.allow_origins = {"https://app.example.com", "http://*"};
    c.allow_methods = {"GET", "POST"};
    c.allow_headers = {"Authorization", "Content-Type"};
    c.expose_headers = {"x-request-id", "date"};
    c.max_age_s = 300;
    c.allow_credentials = true;
    return c;
}

http::request preflight(std::string origin, std::string method, std::string headers = {}) {
    http::header_list h = {{"Origin", std::move(origin)},
                           {"Access-Control-Request-Method", std::move(method)}};
    if (!headers.empty()) h.emplace_back("Access-Control-Request-Headers", std::move(headers));
    return request("OPTIONS", "/pets", std::move(h));
}

bool has_any_cors_header(const http::response& res) {
    for (const auto& [name, value] : res.headers)
        if (name.rfind("Access-Control-", 0) == 0) return true;
    return false;
}

}  // namespace

TEST_CASE("is_preflight: OPTIONS with Origin and Access-Control-Request-Method", "[unit]") {
    CHECK(is_preflight(preflight("https://a.example", "GET")));
    CHECK_FALSE(is_preflight(request("OPTIONS", "/pets", {{"Origin", "https://a.example"}})));
    CHECK_FALSE(is_preflight(request("OPTIONS", "/pets", {{"Access-Control-Request-Method", "GET"}})));
    auto get = preflight("https://a.example", "GET");
    get.method = "GET";
    CHECK_FALSE(is_preflight(get));
    // Header names are case-insensitive.
    CHECK(is_preflight(request("OPTIONS", "/", {{"origin", "x"}, {"access-control-request-method", "PUT"}})));
}

TEST_CASE("cors_for: a REST path's own settings, else the API's", "[unit]") {
    auto a = rest_api();
    CHECK(cors_for(a, "/pets") == nullptr);
    a.cors = sam_string_form();
    CHECK(cors_for(a, "/pets") == &*a.cors);
    config::cors_config own;
    own.allow_origins = {"https://only.example"};
    a.path_cors["/pets/{id}"] = own;
    CHECK(cors_for(a, "/pets/{id}") == &a.path_cors.at("/pets/{id}"));
    CHECK(cors_for(a, "/pets") == &*a.cors);
    a.cors.reset();
    CHECK(cors_for(a, "/pets") == nullptr);
    CHECK(cors_for(a, "/pets/{id}") != nullptr);

    // HTTP APIs have one CORS configuration; path_cors is REST only.
    auto h = http_api();
    h.path_cors["/pets"] = own;
    CHECK(cors_for(h, "/pets") == nullptr);
    h.cors = http_config();
    CHECK(cors_for(h, "/pets") == &*h.cors);
}

TEST_CASE("REST preflight: SAM's mock answers 200 with its static headers", "[unit]") {
    auto a = rest_api();
    auto c = sam_string_form();
    auto res = preflight_response(a, c, preflight("https://evil.example", "DELETE"), rid);
    CHECK(res.status == 200);
    CHECK(res.header("Access-Control-Allow-Origin") == "*");
    CHECK(res.header("Access-Control-Allow-Methods") == "GET,OPTIONS,POST");
    // Not given: not sent (SAM skips empty values and a false AllowCredentials).
    CHECK_FALSE(res.header("Access-Control-Allow-Headers"));
    CHECK_FALSE(res.header("Access-Control-Max-Age"));
    CHECK_FALSE(res.header("Access-Control-Allow-Credentials"));
    CHECK(res.header("Content-Type") == "application/json");
    CHECK(res.body == "{}");
    CHECK(res.header("x-amzn-RequestId") == rid);
    CHECK(res.header("x-amz-apigw-id"));

    // Not a preflight at all: the mock answers the same.
    auto plain = preflight_response(a, c, request("OPTIONS", "/pets"), rid);
    CHECK(plain.status == 200);
    CHECK(plain.header("Access-Control-Allow-Origin") == "*");
}

TEST_CASE("REST preflight: map form with headers, max age and credentials", "[unit]") {
    auto a = rest_api();
    config::cors_config c;
    c.allow_origins = {"https://app.example.com"};
    c.allow_methods = {"GET", "PUT"};
    c.allow_headers = {"Content-Type", "X-Amz-Date", "Authorization", "X-Api-Key"};
    c.max_age_s = 0;  // 0 is a value SAM sends
    c.allow_credentials = true;
    auto res = preflight_response(a, c, preflight("https://other.example", "GET"), rid);
    CHECK(res.status == 200);
    CHECK(res.header("Access-Control-Allow-Origin") == "https://app.example.com");
    CHECK(res.header("Access-Control-Allow-Headers") == "Content-Type,X-Amz-Date,Authorization,X-Api-Key");
    CHECK(res.header("Access-Control-Allow-Methods") == "GET,PUT");
    CHECK(res.header("Access-Control-Max-Age") == "0");
    CHECK(res.header("Access-Control-Allow-Credentials") == "true");
}

TEST_CASE("REST preflight: serverless origins echo a matching Origin, else the first", "[unit]") {
    auto a = rest_api();
    config::cors_config c;
    c.allow_origins = {"https://app.example.com", "https://*.example.org"};
    c.allow_methods = {"OPTIONS", "GET"};
    c.allow_headers = {"Content-Type"};
    auto echo = [&](std::string origin) {
        auto res = preflight_response(a, c, preflight(std::move(origin), "GET"), rid);
        return std::string(res.header("Access-Control-Allow-Origin").value_or(""));
    };
    CHECK(echo("https://shop.example.org") == "https://shop.example.org");
    CHECK(echo("https://app.example.com") == "https://app.example.com");
    CHECK(echo("https://example.org") == "https://app.example.com");  // '*' needs a character
    CHECK(echo("https://evil.example") == "https://app.example.com");
    CHECK(echo("https://a.b.example.org") == "https://a.b.example.org");
    // A client's very long Origin is matched without recursion.
    const std::string long_origin = "https://" + std::string(200000, 'a') + ".example.org";
    CHECK(echo(long_origin) == long_origin);
    CHECK(echo(long_origin + "x") == "https://app.example.com");
    c.allow_origins = {"https://app.example.com", "https://*-*.example.org"};
    CHECK(echo("https://a-b.example.org") == "https://a-b.example.org");
    CHECK(echo("https://-b.example.org") == "https://app.example.com");
}

TEST_CASE("HTTP API preflight: 204 with the headers for an allowed request", "[unit]") {
    auto a = http_api();
    auto c = http_config();
    auto res = preflight_response(a, c, preflight("https://app.example.com", "POST",
                                                  "content-type, authorization"), rid);
    CHECK(res.status == 204);
    CHECK(res.body.empty());
    CHECK(res.header("Access-Control-Allow-Origin") == "https://app.example.com");
    CHECK(res.header("Access-Control-Allow-Methods") == "GET,POST");
    CHECK(res.header("Access-Control-Allow-Headers") == "Authorization,Content-Type");
    CHECK(res.header("Access-Control-Max-Age") == "300");
    CHECK(res.header("Access-Control-Allow-Credentials") == "true");
    CHECK(res.header("Apigw-Requestid") == rid);
    // Expose-Headers belongs to actual responses.
    CHECK_FALSE(res.header("Access-Control-Expose-Headers"));

    // "http://*" allows any http origin, echoed.
    auto any_http = preflight_response(a, c, preflight("http://localhost:8080", "GET"), rid);
    CHECK(any_http.header("Access-Control-Allow-Origin") == "http://localhost:8080");
}

TEST_CASE("HTTP API preflight: a disallowed origin, method or header gets no CORS headers",
          "[unit]") {
    auto a = http_api();
    auto c = http_config();
    for (const auto& req : {preflight("https://evil.example", "GET"),
                            preflight("https://app.example.com", "DELETE"),
                            preflight("https://app.example.com", "GET", "Content-Type, X-Secret"),
                            preflight("https://app.example.com.evil", "GET")}) {
        auto res = preflight_response(a, c, req, rid);
        CHECK(res.status == 204);
        CHECK_FALSE(has_any_cors_header(res));
    }
    // The same request with everything allowed does get them.
    CHECK(has_any_cors_header(preflight_response(a, c, preflight("https://app.example.com", "GET", "content-type"), rid)));
}

TEST_CASE("HTTP API preflight: '*' origins, methods and headers", "[unit]") {
    auto a = http_api();
    config::cors_config c;
    c.allow_origins = {"*"};
    c.allow_methods = {"*"};
    c.allow_headers = {"*"};
    auto res = preflight_response(a, c, preflight("https://any.example", "PATCH", "X-Whatever"), rid);
    CHECK(res.status == 204);
    CHECK(res.header("Access-Control-Allow-Origin") == "*");
    CHECK(res.header("Access-Control-Allow-Methods") == "*");
    CHECK(res.header("Access-Control-Allow-Headers") == "*");
    CHECK_FALSE(res.header("Access-Control-Max-Age"));
    CHECK_FALSE(res.header("Access-Control-Allow-Credentials"));

    // No subdomain wildcards: "https://*.example.com" is a literal origin.
    config::cors_config sub;
    sub.allow_origins = {"https://*.example.com"};
    sub.allow_methods = {"GET"};
    CHECK_FALSE(has_any_cors_header(preflight_response(a, sub, preflight("https://a.example.com", "GET"), rid)));
}

TEST_CASE("HTTP API: an OPTIONS that is not a preflight is a missing route", "[unit]") {
    auto a = http_api();
    auto c = http_config();
    auto res = preflight_response(a, c, request("OPTIONS", "/pets", {{"Origin", "https://app.example.com"}}), rid);
    CHECK(res.status == 404);
    CHECK(res.body == R"({"message":"Not Found"})");
    CHECK_FALSE(has_any_cors_header(res));
}

TEST_CASE("add_cors_headers: HTTP API replaces the integration's CORS headers", "[unit]") {
    auto a = http_api();
    auto c = http_config();
    http::response res;
    res.add("Content-Type", "text/plain");
    res.add("access-control-allow-origin", "*");
    res.add("Access-Control-Allow-Methods", "DELETE");
    add_cors_headers(a, c, request("GET", "/pets", {{"Origin", "https://app.example.com"}}), res);
    CHECK(res.header("Content-Type") == "text/plain");
    CHECK(res.header("Access-Control-Allow-Origin") == "https://app.example.com");
    CHECK(res.header("Access-Control-Allow-Credentials") == "true");
    CHECK(res.header("Access-Control-Expose-Headers") == "x-request-id,date");
    CHECK_FALSE(res.header("Access-Control-Allow-Methods"));
    int origins = 0;
    for (const auto& h : res.headers)
        if (http::iequals(h.first, "Access-Control-Allow-Origin")) ++origins;
    CHECK(origins == 1);

    // A disallowed or missing Origin: the integration's CORS headers are dropped all the same.
    for (const auto& req : {request("GET", "/pets", {{"Origin", "https://evil.example"}}),
                            request("GET", "/pets")}) {
        http::response r2;
        r2.add("Access-Control-Allow-Origin", "*");
        r2.add("X-Other", "kept");
        add_cors_headers(a, c, req, r2);
        CHECK_FALSE(has_any_cors_header(r2));
        CHECK(r2.header("X-Other") == "kept");
    }
}

TEST_CASE("add_cors_headers: REST responses are left as the function made them", "[unit]") {
    auto a = rest_api();
    auto c = sam_string_form();
    http::response res;
    res.add("Access-Control-Allow-Origin", "https://mine.example");
    add_cors_headers(a, c, request("GET", "/pets", {{"Origin", "https://evil.example"}}), res);
    REQUIRE(res.headers.size() == 1);
    CHECK(res.header("Access-Control-Allow-Origin") == "https://mine.example");
}
