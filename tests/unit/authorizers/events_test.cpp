#include "tests/unit/authorizers/authorizer_fixtures.hpp"

#include <nlohmann/json.hpp>

using namespace coldbrew;
using namespace coldbrew::authorizers;
using namespace coldbrew::authorizers::testing;
using nlohmann::json;
using nlohmann::ordered_json;

namespace {

std::vector<std::string> keys_of(const ordered_json& j) {
    std::vector<std::string> out;
    for (const auto& [k, v] : j.items())
        out.push_back(k);
    return out;
}

std::vector<std::string> keys_of(const std::string& text) {
    return keys_of(ordered_json::parse(text));
}

const std::string arn = "arn:aws:execute-api:us-east-1:123456789012:abc/Prod/GET/pets/7";

} // namespace

TEST_CASE("event: REST TOKEN is type, authorizationToken, methodArn only", "[unit]") {
    stack_fixture f;
    auto req = request("GET", "/pets/7", {{"Host", "h"}, {"Authorization", "Bearer x"}});
    auto m = f.match(req);
    auto a = token_authorizer();
    auto text = build_event(a, req, m, info(), read_identity(a, req, m, info()), arn);
    CHECK(keys_of(text) == std::vector<std::string>{"type", "authorizationToken", "methodArn"});
    auto ev = json::parse(text);
    CHECK(ev["type"] == "TOKEN");
    CHECK(ev["authorizationToken"] == "Bearer x");
    CHECK(ev["methodArn"] == arn);
}

TEST_CASE("event: REST REQUEST has the 1.0 fields in order, {} for empty ones", "[unit]") {
    stack_fixture f;
    auto req = request("GET", "/pets/7", {{"Host", "h"}, {"X-User", "alice"}}, "ignored body");
    auto m = f.match(req);
    auto a = request_authorizer({"method.request.header.X-User"});
    gateway::request_info i = info();
    i.authorizer_json = R"({"principalId":"should not appear"})";
    auto text = build_event(a, req, m, i, read_identity(a, req, m, i), arn);
    CHECK(keys_of(text) ==
          std::vector<std::string>{"type", "methodArn", "resource", "path", "httpMethod",
                                   "headers", "multiValueHeaders", "queryStringParameters",
                                   "multiValueQueryStringParameters", "pathParameters",
                                   "stageVariables", "requestContext"});
    auto ev = json::parse(text);
    CHECK(ev["type"] == "REQUEST");
    CHECK(ev["methodArn"] == arn);
    CHECK(ev["resource"] == "/pets/{id}");
    CHECK(ev["path"] == "/pets/7");
    CHECK(ev["httpMethod"] == "GET");
    CHECK(ev["headers"]["X-User"] == "alice"); // REST keeps the client's casing
    CHECK(ev["multiValueHeaders"]["X-User"] == json::array({"alice"}));
    CHECK(ev["queryStringParameters"] == json::object());
    CHECK(ev["multiValueQueryStringParameters"] == json::object());
    CHECK(ev["pathParameters"] == json{{"id", "7"}});
    CHECK(ev["stageVariables"] == json{{"empty", ""}, {"env", "test"}});
    CHECK(ev["requestContext"]["requestId"] == info().request_id);
    CHECK(ev["requestContext"]["resourcePath"] == "/pets/{id}");
    CHECK(ev["requestContext"]["identity"]["sourceIp"] == "192.0.2.7");
    CHECK_FALSE(ev["requestContext"].contains("authorizer"));
    CHECK_FALSE(ev.contains("body"));
    CHECK_FALSE(ev.contains("isBase64Encoded"));
}

TEST_CASE("event: REST REQUEST without path parameters or stage variables", "[unit]") {
    config::stack s;
    s.apis = {rest_api("Api", "dev")};
    s.routes = {route("Api", "GET", "/x", "x")};
    auto req = request("GET", "/x?a=1&a=2", {{"Host", "h"}});
    auto m = gateway::route_table(s).match("GET", "/x");
    REQUIRE(m);
    auto a = request_authorizer({});
    auto ev = json::parse(build_event(a, req, *m, info(), read_identity(a, req, *m, info()), arn));
    CHECK(ev["pathParameters"] == json::object());
    CHECK(ev["stageVariables"] == json::object());
    CHECK(ev["queryStringParameters"] == json{{"a", "2"}});
    CHECK(ev["multiValueQueryStringParameters"] == json{{"a", {"1", "2"}}});
}

TEST_CASE("event: HTTP API 1.0 has version, identitySource string, authorizationToken",
          "[unit]") {
    stack_fixture f;
    auto req = request("POST", "/v1/items?q=z", {{"Host", "h"}, {"X-User", "alice"}}, "{}");
    auto m = f.match(req);
    auto a = request_authorizer({"$request.header.X-User", "$request.querystring.q"}, "1.0");
    auto text = build_event(a, req, m, info(), read_identity(a, req, m, info()), arn);
    CHECK(keys_of(text) ==
          std::vector<std::string>{"version", "type", "methodArn", "identitySource",
                                   "authorizationToken", "resource", "path", "httpMethod",
                                   "headers", "multiValueHeaders", "queryStringParameters",
                                   "multiValueQueryStringParameters", "pathParameters",
                                   "stageVariables", "requestContext"});
    auto ev = json::parse(text);
    CHECK(ev["version"] == "1.0");
    CHECK(ev["type"] == "REQUEST");
    CHECK(ev["methodArn"] == arn);
    CHECK(ev["identitySource"] == "alice,z");
    CHECK(ev["authorizationToken"] == "alice,z");
    CHECK(ev["headers"]["x-user"] == "alice"); // HTTP APIs lower-case header names
    CHECK(ev["pathParameters"] == json::object());
    CHECK(ev["stageVariables"] == json{{"env", "test"}});
    CHECK(ev["requestContext"]["httpMethod"] == "POST");
    CHECK_FALSE(ev.contains("body"));
}

TEST_CASE("event: HTTP API 2.0 has routeArn, identitySource list, 2.0 fields", "[unit]") {
    stack_fixture f;
    auto req = request("GET", "/v2/pets/7?q=1",
                       {{"Host", "h"}, {"Authorization", "tok"}, {"Cookie", "a=1; b=2"}});
    auto m = f.match(req);
    auto a = request_authorizer({"$request.header.Authorization", "$request.querystring.q"},
                                "2.0");
    // The route's own payload format does not matter: the authorizer's does.
    auto text = build_event(a, req, m, info(), read_identity(a, req, m, info()), arn);
    CHECK(keys_of(text) ==
          std::vector<std::string>{"version", "type", "routeArn", "identitySource", "routeKey",
                                   "rawPath", "rawQueryString", "cookies", "headers",
                                   "queryStringParameters", "requestContext", "pathParameters",
                                   "stageVariables"});
    auto ev = json::parse(text);
    CHECK(ev["version"] == "2.0");
    CHECK(ev["type"] == "REQUEST");
    CHECK(ev["routeArn"] == arn);
    CHECK(ev["identitySource"] == json::array({"tok", "1"}));
    CHECK(ev["routeKey"] == "GET /v2/pets/{id}");
    CHECK(ev["rawPath"] == "/v2/pets/7");
    CHECK(ev["rawQueryString"] == "q=1");
    CHECK(ev["cookies"] == json::array({"a=1", "b=2"}));
    CHECK(ev["headers"]["authorization"] == "tok");
    CHECK(ev["pathParameters"] == json{{"id", "7"}});
    CHECK(ev["requestContext"]["routeKey"] == "GET /v2/pets/{id}");
    CHECK_FALSE(ev.contains("isBase64Encoded"));
    CHECK_FALSE(ev.contains("methodArn"));
}

TEST_CASE("event: HTTP API 2.0 omits what the request does not have", "[unit]") {
    config::stack s;
    s.apis = {http_api("Api")};
    s.routes = {route("Api", "GET", "/x", "x", "2.0")};
    auto req = request("GET", "/x", {{"Host", "h"}});
    auto m = gateway::route_table(s).match("GET", "/x");
    REQUIRE(m);
    auto a = request_authorizer({}, "2.0");
    auto text = build_event(a, req, *m, info(), read_identity(a, req, *m, info()), arn);
    CHECK(keys_of(text) ==
          std::vector<std::string>{"version", "type", "routeArn", "identitySource", "routeKey",
                                   "rawPath", "rawQueryString", "headers", "requestContext"});
    CHECK(json::parse(text)["identitySource"] == json::array());
}

TEST_CASE("event_authorizer: REST stringifies context, adds principalId and latency", "[unit]") {
    result r;
    r.principal_id = "user-1";
    r.context = json{{"s", "v"}, {"n", 1}, {"f", 1.5}, {"b", true}, {"no", false}};
    auto out = event_authorizer(token_authorizer(), r, "1.0", 421.6);
    CHECK(out == json{{"s", "v"}, {"n", "1"}, {"f", "1.5"}, {"b", "true"}, {"no", "false"},
                      {"principalId", "user-1"}, {"integrationLatency", 422}});
    CHECK(out["integrationLatency"].is_number_integer());

    result bare;
    bare.principal_id = "p";
    CHECK(event_authorizer(token_authorizer(), bare, "1.0", 0) ==
          json{{"principalId", "p"}, {"integrationLatency", 0}});
}

TEST_CASE("event_authorizer: HTTP API 2.0 is {lambda: context}, null without one", "[unit]") {
    auto a = request_authorizer({"$request.header.Authorization"}, "2.0");
    result r;
    r.simple = true;
    r.is_authorized = true;
    r.context = json{{"list", {1, 2}}, {"n", 3}};
    CHECK(event_authorizer(a, r, "2.0", 12) == json{{"lambda", {{"list", {1, 2}}, {"n", 3}}}});
    result none;
    none.principal_id = "p";
    CHECK(event_authorizer(a, none, "2.0", 12) == json{{"lambda", nullptr}});
}

TEST_CASE("event_authorizer: HTTP API route with payload 1.0 is flat, values kept", "[unit]") {
    auto a = request_authorizer({"$request.header.Authorization"}, "2.0");
    result r;
    r.principal_id = "p";
    r.context = json{{"n", 3}};
    CHECK(event_authorizer(a, r, "1.0", 5) ==
          json{{"n", 3}, {"principalId", "p"}, {"integrationLatency", 5}});
}
