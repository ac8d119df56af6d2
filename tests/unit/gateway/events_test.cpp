#include "emulator/codec/base64.hpp"
#include "tests/catch.hpp"
#include "tests/unit/gateway/gateway_fixtures.hpp"

#include <nlohmann/json.hpp>

using namespace coldbrew;
using namespace coldbrew::gateway;
using namespace coldbrew::gateway::testing;
using nlohmann::json;

namespace {

struct fixture {
    config::stack stack;
    fixture() {
        stack.apis = {rest_api("ServerlessRestApi", "Prod", {"image/*", "application/pdf"}),
                      http_api("ServerlessHttpApi"), http_api("StagedHttpApi", "v1"),
                      http_api("V1HttpApi")};
        stack.routes = {
            route("ServerlessRestApi", "GET", "/hello", "hello"),
            route("ServerlessRestApi", "ANY", "/pets/{id}", "pet"),
            route("ServerlessRestApi", "POST", "/upload", "upload"),
            route("ServerlessRestApi", "ANY", "/files/{proxy+}", "files"),
            route("ServerlessHttpApi", "GET", "/v2/pets/{id}", "pet2", "2.0"),
            route("ServerlessHttpApi", "ANY", "/v2/any", "any2", "2.0"),
            route("ServerlessHttpApi", "POST", "/v2/upload", "upload2", "2.0"),
            route("StagedHttpApi", "GET", "/staged", "staged", "2.0"),
            route("V1HttpApi", "GET", "/v1fmt/{id}", "v1fmt", "1.0"),
            route("ServerlessHttpApi", "ANY", "$default", "default", "2.0"),
        };
    }
    route_match match(const http::request& req) const {
        auto m = route_table(stack).match(req.method, req.path());
        REQUIRE(m);
        return *m;
    }
    json v1(const http::request& req) const {
        return json::parse(build_event_v1(req, match(req), info()));
    }
    json v2(const http::request& req) const {
        return json::parse(build_event_v2(req, match(req), info()));
    }
};

std::vector<std::string> ordered_keys(const std::string& text) {
    std::vector<std::string> out;
    auto parsed = nlohmann::ordered_json::parse(text);
    for (const auto& [k, v] : parsed.items())
        out.push_back(k);
    return out;
}

} // namespace

TEST_CASE("1.0 event: absent values are null, not {} or \"\"", "[unit]") {
    fixture f;
    auto ev = f.v1(request("GET", "/hello", {{"Host", "localhost:3000"}}));
    CHECK(ev["queryStringParameters"].is_null());
    CHECK(ev["multiValueQueryStringParameters"].is_null());
    CHECK(ev["pathParameters"].is_null());
    CHECK(ev["stageVariables"].is_null());
    CHECK(ev["body"].is_null());
    CHECK(ev["isBase64Encoded"] == false);
    CHECK(ev["requestContext"]["identity"]["accessKey"].is_null());
    CHECK(ev["requestContext"]["identity"]["clientCert"].is_null());
    // A '?' with nothing after it is still no query.
    auto empty_q = f.v1(request("GET", "/hello?", {{"Host", "localhost"}}));
    CHECK(empty_q["queryStringParameters"].is_null());
}

TEST_CASE("1.0 event: headers/query hold the last value, multiValue* all in order", "[unit]") {
    fixture f;
    auto ev = f.v1(request("GET", "/hello?a=1&b=x&a=2&a=3",
                           {{"Host", "localhost"}, {"X-Dup", "one"}, {"X-Dup", "two"}}));
    CHECK(ev["headers"]["X-Dup"] == "two");
    CHECK(ev["multiValueHeaders"]["X-Dup"] == json::array({"one", "two"}));
    CHECK(ev["queryStringParameters"]["a"] == "3");
    CHECK(ev["queryStringParameters"]["b"] == "x");
    CHECK(ev["multiValueQueryStringParameters"]["a"] == json::array({"1", "2", "3"}));
    CHECK(ev["multiValueQueryStringParameters"]["b"] == json::array({"x"}));
}

TEST_CASE("1.0 event: query values are decoded with '+' as space", "[unit]") {
    fixture f;
    auto ev = f.v1(request("GET", "/hello?q=a+b%21&flag&e=", {{"Host", "localhost"}}));
    CHECK(ev["queryStringParameters"]["q"] == "a b!");
    CHECK(ev["queryStringParameters"]["flag"] == "");
    CHECK(ev["queryStringParameters"]["e"] == "");
}

TEST_CASE("1.0 REST event: header names keep client casing and underscores", "[unit]") {
    fixture f;
    auto ev = f.v1(request("GET", "/hello",
                           {{"Host", "localhost"}, {"x_custom_id", "7"}, {"Content-TYPE", "t"}}));
    CHECK(ev["headers"]["x_custom_id"] == "7");
    CHECK(ev["headers"]["Content-TYPE"] == "t");
    CHECK_FALSE(ev["headers"].contains("x-custom-id"));
}

TEST_CASE("1.0 event: API Gateway adds X-Forwarded-* and X-Amzn-Trace-Id if absent", "[unit]") {
    fixture f;
    auto ev = f.v1(request("GET", "/hello", {{"Host", "localhost:3000"}}));
    CHECK(ev["headers"]["X-Forwarded-For"] == "192.0.2.7");
    CHECK(ev["headers"]["X-Forwarded-Port"] == "3000");
    CHECK(ev["headers"]["X-Forwarded-Proto"] == "http");
    CHECK(ev["headers"]["X-Amzn-Trace-Id"] == info().trace_id);
    CHECK(ev["multiValueHeaders"]["X-Forwarded-Proto"] == json::array({"http"}));

    auto sent = f.v1(request("GET", "/hello",
                             {{"Host", "localhost"},
                              {"X-Forwarded-For", "10.0.0.1"},
                              {"X-Amzn-Trace-Id", "Root=client"}}));
    CHECK(sent["multiValueHeaders"]["X-Forwarded-For"] == json::array({"10.0.0.1"}));
    CHECK(sent["headers"]["X-Amzn-Trace-Id"] == "Root=client");
    CHECK(sent["headers"]["X-Forwarded-Port"] == "80");
}

TEST_CASE("1.0 REST event: keys in AWS's order, resource and requestContext", "[unit]") {
    fixture f;
    auto req = request("GET", "/Prod/pets/a%20b?x=1",
                       {{"Host", "abc.example.com:3000"}, {"User-Agent", "curl/8"}});
    auto text = build_event_v1(req, f.match(req), info());
    CHECK(ordered_keys(text) ==
          std::vector<std::string>{"resource", "path", "httpMethod", "headers", "multiValueHeaders",
                                   "queryStringParameters", "multiValueQueryStringParameters",
                                   "pathParameters", "stageVariables", "requestContext", "body",
                                   "isBase64Encoded"});
    auto ev = json::parse(text);
    CHECK(ev["resource"] == "/pets/{id}");
    CHECK(ev["path"] == "/pets/a%20b"); // no stage, as the client encoded it
    CHECK(ev["httpMethod"] == "GET");
    CHECK(ev["pathParameters"] == json{{"id", "a%20b"}}); // REST: as sent (routing.cpp)
    const auto& ctx = ev["requestContext"];
    CHECK(ordered_keys(nlohmann::ordered_json::parse(text)["requestContext"].dump()) ==
          std::vector<std::string>{"accountId", "apiId", "domainName", "domainPrefix",
                                   "extendedRequestId", "httpMethod", "identity", "path",
                                   "protocol", "requestId", "requestTime", "requestTimeEpoch",
                                   "resourceId", "resourcePath", "stage"});
    CHECK(ctx["accountId"] == "123456789012");
    CHECK(ctx["apiId"] == api_id_for(f.stack.apis[0]));
    CHECK(ctx["domainName"] == "abc.example.com:3000");
    CHECK(ctx["domainPrefix"] == "abc");
    CHECK(ctx["extendedRequestId"] == info().extended_request_id);
    CHECK(ctx["httpMethod"] == "GET");
    CHECK(ctx["identity"]["sourceIp"] == "192.0.2.7");
    CHECK(ctx["identity"]["userAgent"] == "curl/8");
    CHECK(ctx["identity"]["user"].is_null());
    CHECK(ctx["path"] == "/Prod/pets/a%20b"); // stage kept in requestContext.path
    CHECK(ctx["protocol"] == "HTTP/1.1");
    CHECK(ctx["requestId"] == info().request_id);
    CHECK(ctx["requestTime"] == "04/Mar/2020:19:15:17 +0000");
    CHECK(ctx["requestTimeEpoch"] == 1583349317135);
    CHECK(ctx["requestTimeEpoch"].is_number_integer());
    CHECK(ctx["resourceId"].get<std::string>().size() == 6);
    CHECK(ctx["resourcePath"] == "/pets/{id}");
    CHECK(ctx["stage"] == "Prod");
}

TEST_CASE("1.0 REST event: the stage root path is /{stage}/ in requestContext", "[unit]") {
    config::stack s;
    s.apis = {rest_api("Api", "test")};
    s.routes = {route("Api", "GET", "/", "root")};
    auto req = request("GET", "/", {{"Host", "localhost"}});
    auto m = route_table(s).match("GET", "/");
    REQUIRE(m);
    auto ev = json::parse(build_event_v1(req, *m, info()));
    CHECK(ev["path"] == "/");
    CHECK(ev["requestContext"]["path"] == "/test/");
    CHECK(ev["requestContext"]["resourcePath"] == "/");
}

TEST_CASE("1.0 REST event: binary body per binaryMediaTypes and Content-Type", "[unit]") {
    fixture f;
    std::string png("\x89PNG\r\n\x1a\n\x00\x01", 10);
    auto bin =
        f.v1(request("POST", "/upload", {{"Host", "h"}, {"Content-Type", "image/png"}}, png));
    CHECK(bin["isBase64Encoded"] == true);
    CHECK(bin["body"] == codec::base64_encode(png));

    auto pdf = f.v1(request("POST", "/upload",
                            {{"Host", "h"}, {"Content-Type", "Application/PDF; x=y"}}, "%PDF"));
    CHECK(pdf["isBase64Encoded"] == true);

    auto text = f.v1(request("POST", "/upload",
                             {{"Host", "h"}, {"Content-Type", "application/json"}}, "{\"a\":1}"));
    CHECK(text["isBase64Encoded"] == false);
    CHECK(text["body"] == "{\"a\":1}");
}

TEST_CASE("1.0 REST event: */* and SAM's ~1 escape in binaryMediaTypes", "[unit]") {
    config::stack s;
    s.apis = {rest_api("Api", "Prod", {"*/*"})};
    s.routes = {route("Api", "POST", "/x", "x")};
    auto req = request("POST", "/x", {{"Host", "h"}, {"Content-Type", "text/plain"}}, "hi");
    auto ev = json::parse(build_event_v1(req, *route_table(s).match("POST", "/x"), info()));
    CHECK(ev["isBase64Encoded"] == true);
    CHECK(ev["body"] == "aGk=");

    // SAM templates escape '/' as "~1" in BinaryMediaTypes.
    config::stack sam;
    sam.apis = {rest_api("Api", "Prod", {"image~1png"})};
    sam.routes = {route("Api", "POST", "/x", "x")};
    auto png = request("POST", "/x", {{"Host", "h"}, {"Content-Type", "image/png"}}, "p");
    auto m = route_table(sam).match("POST", "/x");
    REQUIRE(m);
    CHECK(json::parse(build_event_v1(png, *m, info()))["isBase64Encoded"] == true);
}

TEST_CASE("1.0 REST event: a form-urlencoded body reaches the function raw", "[unit]") {
    fixture f;
    auto ev = f.v1(request("POST", "/upload",
                           {{"Host", "h"}, {"Content-Type", "application/x-www-form-urlencoded"}},
                           "a=1+2&b=%20"));
    CHECK(ev["isBase64Encoded"] == false);
    CHECK(ev["body"] == "a=1+2&b=%20");
}

TEST_CASE("1.0 REST event: greedy path parameter", "[unit]") {
    fixture f;
    auto ev = f.v1(request("GET", "/files/a/b%20c", {{"Host", "h"}}));
    CHECK(ev["resource"] == "/files/{proxy+}");
    CHECK(ev["pathParameters"]["proxy"] == "a/b%20c"); // REST: as sent
    CHECK(ev["path"] == "/files/a/b%20c");
}

TEST_CASE("1.0 HTTP API event: version first, lower-case headers, text rule", "[unit]") {
    fixture f;
    auto req = request("GET", "/v1fmt/7?a=1&a=2", {{"Host", "h"}, {"X-Dup", "1"}, {"x-dup", "2"}});
    auto text = build_event_v1(req, f.match(req), info());
    auto keys = ordered_keys(text);
    REQUIRE(keys.size() == 13);
    CHECK(keys.front() == "version");
    // HTTP-LAMBDA's 1.0 sample puts requestContext before pathParameters.
    CHECK(keys[8] == "requestContext");
    CHECK(keys[9] == "pathParameters");
    auto ev = json::parse(text);
    CHECK(ev["version"] == "1.0");
    CHECK(ev["headers"]["x-dup"] == "2");
    CHECK(ev["multiValueHeaders"]["x-dup"] == json::array({"1", "2"}));
    CHECK(ev["queryStringParameters"]["a"] == "2");
    CHECK(ev["multiValueQueryStringParameters"]["a"] == json::array({"1", "2"}));
    CHECK(ev["pathParameters"]["id"] == "7");
    CHECK(ev["requestContext"]["stage"] == "$default");
    CHECK(ev["requestContext"]["resourceId"] == "GET /v1fmt/{id}");

    auto bin = f.v1(request("GET", "/v1fmt/7",
                            {{"Host", "h"}, {"Content-Type", "application/octet-stream"}}, "abc"));
    CHECK(bin["isBase64Encoded"] == true);
    CHECK(bin["body"] == "YWJj");
}

TEST_CASE("2.0 event: lower-case names, comma-joined duplicates, cookies[]", "[unit]") {
    fixture f;
    auto ev = f.v2(request("GET", "/v2/pets/9",
                           {{"Host", "localhost"},
                            {"X-Multi", "a"},
                            {"x-multi", "b"},
                            {"Cookie", "s=1; theme=dark"},
                            {"cookie", "late=2"},
                            {"User-Agent", "ua"}}));
    CHECK(ev["headers"]["x-multi"] == "a,b");
    CHECK(ev["headers"]["host"] == "localhost");
    CHECK(ev["headers"]["user-agent"] == "ua");
    CHECK_FALSE(ev["headers"].contains("X-Multi"));
    CHECK_FALSE(ev["headers"].contains("cookie"));
    CHECK(ev["cookies"] == json::array({"s=1", "theme=dark", "late=2"}));
    CHECK(ev["headers"]["x-forwarded-for"] == "192.0.2.7");
    CHECK(ev["headers"]["x-forwarded-proto"] == "http");
    CHECK(ev["headers"]["x-amzn-trace-id"] == info().trace_id);
    CHECK_FALSE(ev.contains("multiValueHeaders"));
    CHECK_FALSE(ev.contains("multiValueQueryStringParameters"));
}

TEST_CASE("2.0 event: absent values are omitted, not null", "[unit]") {
    fixture f;
    auto ev = f.v2(request("GET", "/v2/any", {{"Host", "localhost"}}));
    CHECK_FALSE(ev.contains("cookies"));
    CHECK_FALSE(ev.contains("queryStringParameters"));
    CHECK_FALSE(ev.contains("pathParameters"));
    CHECK_FALSE(ev.contains("body"));
    CHECK_FALSE(ev.contains("stageVariables"));
    CHECK(ev["rawQueryString"] == "");
    CHECK(ev["isBase64Encoded"] == false);
}

TEST_CASE("2.0 event: rawPath/rawQueryString as sent, parameters decoded", "[unit]") {
    fixture f;
    auto req = request("GET", "/v2/pets/a%20b?x=1&x=2&y=a+b%26c&z",
                       {{"Host", "api.example.com"}, {"User-Agent", "ua"}});
    auto text = build_event_v2(req, f.match(req), info());
    CHECK(ordered_keys(text) == std::vector<std::string>{"version", "routeKey", "rawPath",
                                                         "rawQueryString", "headers",
                                                         "queryStringParameters", "requestContext",
                                                         "pathParameters", "isBase64Encoded"});
    auto ev = json::parse(text);
    CHECK(ev["version"] == "2.0");
    CHECK(ev["routeKey"] == "GET /v2/pets/{id}");
    CHECK(ev["rawPath"] == "/v2/pets/a%20b");
    CHECK(ev["rawQueryString"] == "x=1&x=2&y=a+b%26c&z");
    CHECK(ev["queryStringParameters"]["x"] == "1,2");
    CHECK(ev["queryStringParameters"]["y"] == "a b&c");
    CHECK(ev["queryStringParameters"]["z"] == "");
    CHECK(ev["pathParameters"]["id"] == "a b");
    const auto& ctx = ev["requestContext"];
    CHECK(ctx["accountId"] == "123456789012");
    CHECK(ctx["apiId"] == api_id_for(f.stack.apis[1]));
    CHECK(ctx["domainName"] == "api.example.com");
    CHECK(ctx["domainPrefix"] == "api");
    CHECK(ctx["http"] == json{{"method", "GET"},
                              {"path", "/v2/pets/a%20b"},
                              {"protocol", "HTTP/1.1"},
                              {"sourceIp", "192.0.2.7"},
                              {"userAgent", "ua"}});
    CHECK(ctx["requestId"] == info().request_id);
    CHECK(ctx["routeKey"] == "GET /v2/pets/{id}");
    CHECK(ctx["stage"] == "$default");
    CHECK(ctx["time"] == "04/Mar/2020:19:15:17 +0000");
    CHECK(ctx["timeEpoch"] == 1583349317135);
}

TEST_CASE("2.0 event: routeKey for ANY and $default; named stage prefixes rawPath", "[unit]") {
    fixture f;
    CHECK(f.v2(request("DELETE", "/v2/any", {{"Host", "h"}}))["routeKey"] == "ANY /v2/any");
    auto d = f.v2(request("PUT", "/some/where", {{"Host", "h"}}));
    CHECK(d["routeKey"] == "$default");
    CHECK(d["requestContext"]["routeKey"] == "$default");
    CHECK(d["rawPath"] == "/some/where");
    auto staged = f.v2(request("GET", "/staged", {{"Host", "h"}}));
    CHECK(staged["rawPath"] == "/v1/staged");
    CHECK(staged["requestContext"]["http"]["path"] == "/v1/staged");
    CHECK(staged["requestContext"]["stage"] == "v1");
}

TEST_CASE("2.0 event: non-text bodies are base64, form bodies too (HTTP API)", "[unit]") {
    fixture f;
    std::string bytes("\x00\xff\x10", 3);
    auto bin = f.v2(request("POST", "/v2/upload",
                            {{"Host", "h"}, {"Content-Type", "application/octet-stream"}}, bytes));
    CHECK(bin["isBase64Encoded"] == true);
    CHECK(bin["body"] == codec::base64_encode(bytes));

    auto form = f.v2(request("POST", "/v2/upload",
                             {{"Host", "h"}, {"Content-Type", "application/x-www-form-urlencoded"}},
                             "a=1"));
    CHECK(form["isBase64Encoded"] == true);
    CHECK(form["body"] == "YT0x");

    for (const char* ct : {"application/json", "text/plain; charset=utf-8",
                           "application/vnd.api+json", "application/xml", "image/svg+xml"}) {
        auto t = f.v2(request("POST", "/v2/upload", {{"Host", "h"}, {"Content-Type", ct}}, "{}"));
        INFO(ct);
        CHECK(t["isBase64Encoded"] == false);
        CHECK(t["body"] == "{}");
    }

    auto none_text = f.v2(request("POST", "/v2/upload", {{"Host", "h"}}, "héllo"));
    CHECK(none_text["isBase64Encoded"] == false);
    CHECK(none_text["body"] == "héllo");
    auto none_bin = f.v2(request("POST", "/v2/upload", {{"Host", "h"}}, bytes));
    CHECK(none_bin["isBase64Encoded"] == true);
}

TEST_CASE("1.0 event: stageVariables carry the API's stage variables", "[unit]") {
    fixture f;
    f.stack.apis[0].stage_variables = {{"table", "users-prod"}, {"alias", "live"}};
    f.stack.apis[3].stage_variables = {{"mode", "v1"}}; // HTTP API, payload format 1.0
    auto rest = f.v1(request("GET", "/hello", {{"Host", "localhost"}}));
    CHECK(rest["stageVariables"] == json{{"alias", "live"}, {"table", "users-prod"}});
    auto http = f.v1(request("GET", "/v1fmt/7", {{"Host", "localhost"}}));
    CHECK(http["stageVariables"] == json{{"mode", "v1"}});
}

TEST_CASE("2.0 event: stageVariables present, last, when the API has some", "[unit]") {
    fixture f;
    f.stack.apis[1].stage_variables = {{"table", "users-prod"}};
    auto req = request("GET", "/v2/any", {{"Host", "localhost"}});
    auto text = build_event_v2(req, f.match(req), info());
    CHECK(ordered_keys(text).back() == "stageVariables");
    CHECK(json::parse(text)["stageVariables"] == json{{"table", "users-prod"}});
}

TEST_CASE("1.0 REST event: requestContext.authorizer after apiId when the route has one",
          "[unit]") {
    fixture f;
    auto req = request("GET", "/hello", {{"Host", "h"}});
    request_info with = info();
    with.authorizer_json = R"({"integrationLatency":12,"principalId":"user","tier":"gold"})";
    auto text = build_event_v1(req, f.match(req), with);
    auto ctx = nlohmann::ordered_json::parse(text)["requestContext"];
    auto keys = ordered_keys(ctx.dump());
    REQUIRE(keys.size() > 3);
    CHECK(keys[1] == "apiId");
    CHECK(keys[2] == "authorizer");
    CHECK(json::parse(text)["requestContext"]["authorizer"] ==
          json{{"principalId", "user"}, {"tier", "gold"}, {"integrationLatency", 12}});

    // Without an authorizer there is no key at all (not null, not {}).
    CHECK_FALSE(f.v1(req)["requestContext"].contains("authorizer"));
    // Text that is not JSON is left out.
    request_info broken = info();
    broken.authorizer_json = "{not json";
    CHECK_FALSE(json::parse(build_event_v1(req, f.match(req), broken))["requestContext"]
                    .contains("authorizer"));
}

TEST_CASE("1.0 HTTP API event: requestContext.authorizer after apiId", "[unit]") {
    fixture f;
    auto req = request("GET", "/v1fmt/3", {{"Host", "h"}});
    request_info with = info();
    with.authorizer_json = R"({"principalId":"p","integrationLatency":0})";
    auto ctx = nlohmann::ordered_json::parse(build_event_v1(req, f.match(req), with))["requestContext"];
    auto keys = ordered_keys(ctx.dump());
    REQUIRE(keys.size() > 3);
    CHECK(keys[2] == "authorizer");
    CHECK(ctx["authorizer"]["principalId"] == "p");
    CHECK_FALSE(f.v1(req)["requestContext"].contains("authorizer"));
    // HTTP APIs have no API keys: identity carries no apiKey.
    CHECK_FALSE(f.v1(req)["requestContext"]["identity"].contains("apiKey"));
}

TEST_CASE("2.0 event: requestContext.authorizer after apiId, omitted without one", "[unit]") {
    fixture f;
    auto req = request("GET", "/v2/pets/1", {{"Host", "h"}});
    request_info with = info();
    with.authorizer_json = R"({"lambda":{"tier":"gold","n":1}})";
    auto text = build_event_v2(req, f.match(req), with);
    auto keys = ordered_keys(nlohmann::ordered_json::parse(text)["requestContext"].dump());
    REQUIRE(keys.size() > 3);
    CHECK(keys[0] == "accountId");
    CHECK(keys[1] == "apiId");
    CHECK(keys[2] == "authorizer");
    CHECK(json::parse(text)["requestContext"]["authorizer"] ==
          json{{"lambda", {{"tier", "gold"}, {"n", 1}}}});
    CHECK_FALSE(f.v2(req)["requestContext"].contains("authorizer"));
}

TEST_CASE("1.0 REST event: identity.apiKey and apiKeyId, null without a key", "[unit]") {
    fixture f;
    auto req = request("GET", "/hello", {{"Host", "h"}});
    auto none = f.v1(req)["requestContext"]["identity"];
    REQUIRE(none.contains("apiKey"));
    REQUIRE(none.contains("apiKeyId"));
    CHECK(none["apiKey"].is_null());
    CHECK(none["apiKeyId"].is_null());

    request_info keyed = info();
    keyed.api_key = "abcdefghijklmnopqrstuvwxyz0123456789";
    keyed.api_key_id = "k1a2b3c4d5";
    auto text = build_event_v1(req, f.match(req), keyed);
    auto identity = json::parse(text)["requestContext"]["identity"];
    CHECK(identity["apiKey"] == keyed.api_key);
    CHECK(identity["apiKeyId"] == "k1a2b3c4d5");
    auto keys = ordered_keys(nlohmann::ordered_json::parse(text)["requestContext"]["identity"].dump());
    REQUIRE(keys.size() > 4);
    CHECK(keys[2] == "apiKey"); // alphabetical, as the sample's identity keys are
    CHECK(keys[3] == "apiKeyId");
}
